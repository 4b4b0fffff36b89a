//! Recordings of a board's raw serial traffic, with timestamps, for replaying a session
//! exactly (`--record DIR`, `boardcast replay FILE`).
//!
//! The format is text, one chunk a line, so a recording can be read, diffed and cut by
//! hand when it becomes a regression test:
//!
//! ```text
//! # boardcast recording v1
//! 1234 < 8e0005 1c00
//! 1250 > 42
//! ```
//!
//! The number is milliseconds since the daemon started watching the board; `<` is from the board, `>` to
//! the board; the bytes are hex, spaces allowed. A line `MILLIS ! HEARD` says the link went
//! down at `MILLIS` (the port failed or the board fell silent) and the board was last
//! heard at `HEARD`: the live engine was told so, and a replay tells it the same.
//!
//! Each connection to a board starts a new file; the times of one daemon run share one
//! clock, so a board's files, in the order they were written (their names sort that
//! way), replay as one session (`boardcast replay FILE FILE...`).
//!
//! A bus line (`run --bus`) is recorded as a whole, in one file per line for the daemon's
//! run (`bus-<port>-<start>.rec`, first line [`BUS_HEADER`]): the line's bytes cannot be
//! told apart by board before they are decoded, and a checksum error or a board
//! answering out of turn is only understood with the requests around it. `boardcast
//! replay` runs such a file through the bus session and gives each board's games. Its
//! second line, `# link silence-timeout-ms N startup-delay-ms M` ([`BusTiming`]), keeps
//! the session timing the line ran with: when a board counts as fallen silent decides
//! what its core is told, so the replay's session must use the same.
//!
//! Both kinds keep the engine settings the daemon ran with ([`EngineSettings`]) on a line
//! `# engine settle-ms 250 search-plies 4 mode casual occupancy-only no auto-reanchor-ms
//! off hold-ms 30000`: a takeback in tournament mode or a shorter settle gives another
//! game, so a replay runs with these unless its command line says otherwise. A board's
//! journal (`--journal`) keeps the same line, once for each daemon run on it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::inference::{EngineConfig, Mode};

/// The first line of every recording.
pub const HEADER: &str = "# boardcast recording v1";
/// The first line of a bus line's recording (same format, bus framing).
pub const BUS_HEADER: &str = "# boardcast bus recording v1";

/// The bus session's timing a bus line's recording was made with (`run --silence-timeout`;
/// the first ping's delay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusTiming {
    /// Silence after which a board is reported as not responding.
    pub silence_timeout: Duration,
    /// Delay from opening the port to the first ping.
    pub startup_delay: Duration,
}

impl BusTiming {
    const PREFIX: &str = "# link ";

    fn line(&self) -> String {
        format!(
            "{}silence-timeout-ms {} startup-delay-ms {}",
            Self::PREFIX,
            self.silence_timeout.as_millis(),
            self.startup_delay.as_millis()
        )
    }

    /// The timing a bus recording names, if it names one (recordings made before it was
    /// kept do not: they ran with the defaults).
    pub fn read(text: &str) -> Option<BusTiming> {
        let line = text.lines().find_map(|l| l.strip_prefix(Self::PREFIX))?;
        let fields: Vec<&str> = line.split_whitespace().collect();
        let millis = |name: &str| {
            let at = fields.iter().position(|f| *f == name)?;
            let ms = fields.get(at + 1)?.parse::<u64>().ok()?;
            Some(Duration::from_millis(ms))
        };
        Some(BusTiming {
            silence_timeout: millis("silence-timeout-ms")?,
            startup_delay: millis("startup-delay-ms")?,
        })
    }
}

/// The engine settings line of a recording, written and read back.
pub struct EngineSettings;

impl EngineSettings {
    const PREFIX: &str = "# engine ";

    /// The line naming `config`.
    pub fn line(config: &EngineConfig) -> String {
        let mode = match config.mode {
            Mode::Casual => "casual",
            Mode::Tournament => "tournament",
        };
        let reanchor = config
            .auto_reanchor
            .map_or_else(|| "off".to_string(), |d| d.as_millis().to_string());
        format!(
            "{}settle-ms {} search-plies {} mode {mode} occupancy-only {} auto-reanchor-ms \
             {reanchor} hold-ms {}",
            Self::PREFIX,
            config.settle.as_millis(),
            config.max_search_plies,
            if config.occupancy_only { "yes" } else { "no" },
            config.hold.as_millis(),
        )
    }

    /// The settings a recording or a journal names: `Ok(None)` if it names none (files
    /// made before they were kept ran with whatever the command line said); a setting
    /// missing from the line keeps its default. A journal names them each time a daemon
    /// opened it; the last line counts, as that daemon restored the whole journal with
    /// its settings (see `journal::JournaledCore::restore`).
    pub fn read(text: &str) -> Result<Option<EngineConfig>, ParseError> {
        let Some((index, line)) = text
            .lines()
            .enumerate()
            .filter_map(|(i, l)| Some((i, l.strip_prefix(Self::PREFIX)?)))
            .last()
        else {
            return Ok(None);
        };
        let error = |reason: String| ParseError {
            line: index + 1,
            reason,
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        if !fields.len().is_multiple_of(2) {
            return Err(error("expected engine settings as name-value pairs".into()));
        }
        let mut config = EngineConfig::default();
        for pair in fields.chunks(2) {
            let (name, value) = (pair[0], pair[1]);
            let bad = || error(format!("bad value `{value}` for {name}"));
            let millis = || {
                value
                    .parse::<u64>()
                    .map(Duration::from_millis)
                    .map_err(|_| bad())
            };
            match name {
                "settle-ms" => config.settle = millis()?,
                "search-plies" => config.max_search_plies = value.parse().map_err(|_| bad())?,
                "mode" => {
                    config.mode = match value {
                        "casual" => Mode::Casual,
                        "tournament" => Mode::Tournament,
                        _ => return Err(bad()),
                    }
                }
                "occupancy-only" => {
                    config.occupancy_only = match value {
                        "yes" => true,
                        "no" => false,
                        _ => return Err(bad()),
                    }
                }
                "auto-reanchor-ms" => {
                    config.auto_reanchor = match value {
                        "off" => None,
                        _ => Some(millis()?),
                    }
                }
                "hold-ms" => config.hold = millis()?,
                // A setting of a later version: this one cannot use it.
                _ => {}
            }
        }
        Ok(Some(config))
    }
}

/// Which way a chunk of bytes went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the board to the host.
    FromBoard,
    /// From the host to the board.
    ToBoard,
}

/// One recorded chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// When it was read or written, since the daemon started watching the board.
    pub at: Duration,
    /// Which way it went.
    pub direction: Direction,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// One line of a recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// Bytes read or written.
    Traffic(Chunk),
    /// The link went down at `at`; the board was last heard at `heard`.
    LinkLost {
        /// When the daemon learnt it.
        at: Duration,
        /// When the last frame from the board was read.
        heard: Duration,
    },
}

impl Entry {
    /// When it happened, since the daemon started watching the board.
    pub fn at(&self) -> Duration {
        match self {
            Entry::Traffic(chunk) => chunk.at,
            Entry::LinkLost { at, .. } => *at,
        }
    }
}

/// A line of a recording that cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("line {line}: {reason}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// Reads a whole recording; comment and blank lines are skipped.
pub fn parse(text: &str) -> Result<Vec<Entry>, ParseError> {
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let error = |reason: &str| ParseError {
            line: index + 1,
            reason: reason.to_string(),
        };
        let millis = |field: Option<&str>| {
            field
                .and_then(|ms| ms.trim().parse::<u64>().ok())
                .map(Duration::from_millis)
        };
        let mut fields = line.splitn(3, ' ');
        let at = millis(fields.next()).ok_or_else(|| error("expected a time in milliseconds"))?;
        let direction = match fields.next() {
            Some("<") => Direction::FromBoard,
            Some(">") => Direction::ToBoard,
            Some("!") => {
                let heard = millis(fields.next())
                    .ok_or_else(|| error("expected the time the board was last heard"))?;
                entries.push(Entry::LinkLost { at, heard });
                continue;
            }
            _ => return Err(error("expected `<`, `>` or `!` after the time")),
        };
        let hex: String = fields.next().unwrap_or("").split_whitespace().collect();
        let bytes = decode_hex(&hex).ok_or_else(|| error("expected hex bytes"))?;
        entries.push(Entry::Traffic(Chunk {
            at,
            direction,
            bytes,
        }));
    }
    Ok(entries)
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Writes one board's traffic to a file. I/O errors are returned so the caller can stop
/// recording without ever stopping the board.
#[derive(Debug)]
pub struct Recorder {
    out: BufWriter<File>,
    path: PathBuf,
}

impl Recorder {
    /// Starts a new recording for board `id` in `dir`, run with `engine`; the file name
    /// carries the board number and the wall-clock start, so restarts never overwrite an
    /// earlier one.
    pub fn create(dir: &Path, id: usize, engine: &EngineConfig) -> std::io::Result<Recorder> {
        let header = format!("{HEADER}\n{}", EngineSettings::line(engine));
        Self::create_named(dir, &format!("board-{id}"), &header)
    }

    /// Starts a new recording of the bus line on `port` in `dir`, named after the port
    /// (letters and digits kept) and the wall-clock start, run with `timing` and `engine`.
    pub fn create_bus(
        dir: &Path,
        port: &Path,
        timing: BusTiming,
        engine: &EngineConfig,
    ) -> std::io::Result<Recorder> {
        let mut name = String::from("bus");
        for c in port.to_string_lossy().chars() {
            let c = if c.is_ascii_alphanumeric() { c } else { '-' };
            if c != '-' || !name.ends_with('-') {
                name.push(c);
            }
        }
        let header = format!(
            "{BUS_HEADER}\n{}\n{}",
            timing.line(),
            EngineSettings::line(engine)
        );
        Self::create_named(dir, name.trim_end_matches('-'), &header)
    }

    fn create_named(dir: &Path, name: &str, header: &str) -> std::io::Result<Recorder> {
        std::fs::create_dir_all(dir)?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let path = dir.join(format!("{name}-{stamp}.rec"));
        let mut out = BufWriter::new(File::create_new(&path)?);
        writeln!(out, "{header}")?;
        out.flush()?;
        Ok(Recorder { out, path })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one chunk and flushes it, so a crash loses nothing already received.
    pub fn write(
        &mut self,
        at: Duration,
        direction: Direction,
        bytes: &[u8],
    ) -> std::io::Result<()> {
        let arrow = match direction {
            Direction::FromBoard => '<',
            Direction::ToBoard => '>',
        };
        write!(self.out, "{} {arrow} ", at.as_millis())?;
        for byte in bytes {
            write!(self.out, "{byte:02x}")?;
        }
        writeln!(self.out)?;
        self.out.flush()
    }

    /// Appends that the link went down at `at`, the board last heard at `heard`.
    pub fn link_lost(&mut self, at: Duration, heard: Duration) -> std::io::Result<()> {
        writeln!(self.out, "{} ! {}", at.as_millis(), heard.as_millis())?;
        self.out.flush()
    }

    /// Appends a comment line (`# MILLIS text`) for the reader, e.g. where the port was
    /// lost and reopened; a replay skips it.
    pub fn note(&mut self, at: Duration, text: &str) -> std::io::Result<()> {
        writeln!(self.out, "# {} {text}", at.as_millis())?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_chunks_read_back() {
        let dir = std::env::temp_dir().join(format!("boardcast-rec-{}", std::process::id()));
        let mut recorder = Recorder::create(&dir, 3, &EngineConfig::default()).unwrap();
        recorder
            .write(Duration::from_millis(12), Direction::ToBoard, &[0x42])
            .unwrap();
        recorder
            .write(
                Duration::from_millis(40),
                Direction::FromBoard,
                &[0x8e, 0x00, 0x05, 0x1c, 0x00],
            )
            .unwrap();
        recorder
            .link_lost(Duration::from_millis(3100), Duration::from_millis(40))
            .unwrap();
        let text = std::fs::read_to_string(recorder.path()).unwrap();
        assert!(text.starts_with(HEADER));
        let entries = parse(&text).unwrap();
        assert_eq!(
            entries,
            [
                Entry::Traffic(Chunk {
                    at: Duration::from_millis(12),
                    direction: Direction::ToBoard,
                    bytes: vec![0x42]
                }),
                Entry::Traffic(Chunk {
                    at: Duration::from_millis(40),
                    direction: Direction::FromBoard,
                    bytes: vec![0x8e, 0x00, 0x05, 0x1c, 0x00]
                }),
                Entry::LinkLost {
                    at: Duration::from_millis(3100),
                    heard: Duration::from_millis(40)
                }
            ]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_bus_recording_names_its_timing() {
        let dir = std::env::temp_dir().join(format!("boardcast-bus-rec-{}", std::process::id()));
        let timing = BusTiming {
            silence_timeout: Duration::from_secs(5),
            startup_delay: Duration::from_millis(250),
        };
        let engine = EngineConfig {
            mode: Mode::Tournament,
            ..EngineConfig::default()
        };
        let mut recorder =
            Recorder::create_bus(&dir, Path::new("/dev/ttyUSB0"), timing, &engine).unwrap();
        recorder
            .write(Duration::from_millis(7), Direction::ToBoard, &[0x42])
            .unwrap();
        let text = std::fs::read_to_string(recorder.path()).unwrap();
        assert!(text.starts_with(BUS_HEADER));
        assert_eq!(BusTiming::read(&text), Some(timing));
        assert_eq!(EngineSettings::read(&text), Ok(Some(engine)));
        assert_eq!(parse(&text).unwrap().len(), 1);
        // A recording from before the timing was kept names none.
        assert_eq!(BusTiming::read(&format!("{BUS_HEADER}\n7 > 42\n")), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn engine_settings_read_back() {
        let config = EngineConfig {
            settle: Duration::from_millis(120),
            max_search_plies: 6,
            mode: Mode::Tournament,
            occupancy_only: true,
            auto_reanchor: Some(Duration::from_secs(3)),
            hold: Duration::from_secs(20),
        };
        let text = format!("{HEADER}\n{}\n10 < 42\n", EngineSettings::line(&config));
        assert_eq!(EngineSettings::read(&text), Ok(Some(config)));
        assert_eq!(
            EngineSettings::read(&format!(
                "{HEADER}\n{}\n",
                EngineSettings::line(&EngineConfig::default())
            )),
            Ok(Some(EngineConfig::default()))
        );
        // Recordings from before the settings were kept name none.
        assert_eq!(
            EngineSettings::read(&format!("{HEADER}\n10 < 42\n")),
            Ok(None)
        );
        // A setting left out keeps its default; an unknown one is skipped.
        assert_eq!(
            EngineSettings::read("# engine mode tournament later-setting 7\n"),
            Ok(Some(EngineConfig {
                mode: Mode::Tournament,
                ..EngineConfig::default()
            }))
        );
        assert_eq!(
            EngineSettings::read("#\n# engine mode blitz\n")
                .unwrap_err()
                .line,
            2
        );
        assert_eq!(
            EngineSettings::read("# engine settle-ms\n")
                .unwrap_err()
                .line,
            1
        );
        assert_eq!(
            EngineSettings::read("# engine settle-ms x\n")
                .unwrap_err()
                .line,
            1
        );
    }

    #[test]
    fn bad_lines_name_their_number() {
        assert_eq!(parse("# x\n10 < zz\n").unwrap_err().line, 2);
        assert_eq!(parse("10 ? 42\n").unwrap_err().line, 1);
        assert_eq!(parse("ten < 42\n").unwrap_err().line, 1);
        assert_eq!(parse("10 < 4\n").unwrap_err().line, 1);
        assert_eq!(parse("10 ! \n").unwrap_err().line, 1);
        assert_eq!(parse("10 ! x\n").unwrap_err().line, 1);
        let Entry::Traffic(chunk) = &parse("10 < 8e 00 05\n").unwrap()[0] else {
            panic!("a chunk")
        };
        assert_eq!(chunk.bytes, vec![0x8e, 0, 5]);
    }
}
