//! The `boardcast simulate` command: a virtual DGT board on a pseudo-terminal.

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use crate::board::Identity;
use crate::bus::{BusBoardConfig, spawn_bus_on_pty};
use crate::clock::ClockConfig;
use crate::config::{SimConfig, StartTrigger};
use crate::error::SimError;
use crate::handling::{Style, StyleMix};
use crate::noise::Noise;
use crate::pty::{Plug, PlugEvent, Source, spawn_on_pty_with};
use crate::script::Script;
use crate::sim::MoveReport;

/// Run a virtual DGT electronic chessboard on a pseudo-terminal.
///
/// The board replays a game (the bundled demo game unless --pgn or --fen is given) the way
/// a person would play it on a real DGT board: pieces are lifted and placed at human
/// speed, the sensor scans the board every ~220 ms and reports changes out of order, and
/// the board answers the DGT serial protocol like hardware. Point the daemon at the
/// printed device path. The game starts about a second after the host puts the board in
/// an update mode, so no move is missed.
#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  boardcast simulate                          # the demo game\n  boardcast simulate --pgn games.pgn --game 3 --speed 4\n  boardcast simulate --style castle-rook-first --style capture-swap --flicker\n  boardcast simulate --interactive --json     # type moves (e4, g1f3) or `lift e2`, `place e4 P`"
)]
pub struct SimulateArgs {
    /// PGN file to replay ("-" reads standard input). Only the mainline is played.
    #[arg(long, value_name = "FILE")]
    pub pgn: Option<PathBuf>,

    /// Start position as FEN (for games without a FEN tag, or the position to start from
    /// with --interactive or without --pgn).
    #[arg(long, value_name = "FEN")]
    pub fen: Option<String>,

    /// Which game of the PGN to play (1-based).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub game: usize,

    /// Seed for every random choice; the same seed replays identically.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Speed factor for all human delays (think time, hand movements); 2 = twice as fast.
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0)]
    pub speed: f64,

    /// Duration of one sensor scan of the 64 squares, in milliseconds (real boards:
    /// 200–250).
    #[arg(long, value_name = "MS", default_value_t = 220)]
    pub scan_ms: u64,

    /// Handling style to use (repeat to mix several; default: a realistic mix of all).
    /// A move that no chosen style fits is handled the plain way for its kind.
    #[arg(long = "style", value_enum, value_name = "STYLE")]
    pub styles: Vec<Style>,

    /// Noise: a square misread as empty for one scan now and then.
    #[arg(long)]
    pub flicker: bool,

    /// Noise: a player adjusts a piece (lifts it and puts it back), briefly or for seconds.
    #[arg(long)]
    pub jadoube: bool,

    /// Noise: a placed piece is read with a wrong piece code for one scan.
    #[arg(long)]
    pub wrong_code: bool,

    /// Probability per move of each enabled noise kind.
    #[arg(long, value_name = "P", default_value_t = 0.2)]
    pub noise_rate: f64,

    /// Send garbage bytes and a truncated frame before the first reply.
    #[arg(long)]
    pub garbage_on_connect: bool,

    /// The board is turned 180° (black at the connector side): indices mirrored, 63 − i.
    #[arg(long)]
    pub rotated: bool,

    /// Emulate an occupancy-only board (Pegasus-like): piece codes 0/1, version 1.0.
    #[arg(long)]
    pub occupancy_only: bool,

    /// Attach a DGT 3000 clock (times, lever presses, acks to clock commands).
    #[arg(long)]
    pub clock: bool,

    /// Clock base time in minutes (with --clock).
    #[arg(long, value_name = "MIN", default_value_t = 90)]
    pub clock_minutes: u64,

    /// Clock increment in seconds (with --clock).
    #[arg(long, value_name = "SEC", default_value_t = 30)]
    pub increment: u64,

    /// Put the DGT result piece on the board after the last move of a decided game.
    #[arg(long)]
    pub result_piece: bool,

    /// Start playing right away instead of waiting for the host to enter an update mode.
    #[arg(long)]
    pub start_now: bool,

    /// Pause before the first move, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub start_delay_ms: u64,

    /// Read moves from standard input instead of a script: SAN or UCI (`Nf3`, `g1f3`), or
    /// raw sensor actions `lift e2` / `place e4 P` (FEN letter, or = + - for the result
    /// pieces). Ends at end of input.
    #[arg(long, conflicts_with = "step")]
    pub interactive: bool,

    /// Play the next move of the script only when a line arrives on standard input.
    #[arg(long)]
    pub step: bool,

    /// Machine-readable output: one JSON object per line (`ready`, `move`, `finished`).
    #[arg(long)]
    pub json: bool,

    /// The board's serial number (what it answers to 0x45; default 01025).
    #[arg(long, value_name = "DIGITS")]
    pub serial: Option<String>,

    /// Keep a symbolic link at PATH to the board's pseudo-terminal, a stable path across
    /// replugs (each replug opens a new /dev/pts/N).
    #[arg(long, value_name = "PATH")]
    pub link: Option<PathBuf>,

    /// After a replug, put the link at PATH instead (the board comes back elsewhere).
    #[arg(long, value_name = "PATH", requires = "link")]
    pub relink: Option<PathBuf>,

    /// Unplug the board right after ply N is played (repeat for several); the players go
    /// on moving while it is unplugged.
    #[arg(long, value_name = "N")]
    pub unplug_after_ply: Vec<u32>,

    /// How long the board stays unplugged, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 3000)]
    pub unplug_ms: u64,

    /// Exit this many seconds after the game is finished (default: stay on line until
    /// interrupted, so the daemon can keep reading the final position).
    #[arg(long, value_name = "SEC")]
    pub linger: Option<u64>,

    /// Bus mode: a chain of N boards on the one pseudo-terminal (`run --bus PATH`). Board
    /// i plays game --game + i of the PGN (wrapping around), with seed --seed + i and
    /// serial number 01025 + i (its bus address).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64), conflicts_with_all = ["interactive", "step"])]
    pub bus: Option<u16>,

    /// Bus mode: probability that a reply goes out with a corrupted checksum.
    #[arg(long, value_name = "P", default_value_t = 0.0, requires = "bus")]
    pub bus_faults: f64,

    /// Bus mode: board number (from 1) that goes silent --bus-silent-after seconds after
    /// it was first polled, while its game goes on.
    #[arg(long, value_name = "BOARD", requires = "bus")]
    pub bus_silent: Option<u16>,

    /// Bus mode: seconds until the --bus-silent board stops answering.
    #[arg(long, value_name = "SEC", default_value_t = 30)]
    pub bus_silent_after: u64,
}

impl SimulateArgs {
    /// The simulation settings these options describe.
    pub fn config(&self) -> SimConfig {
        let styles = if self.styles.is_empty() {
            StyleMix::realistic()
        } else {
            StyleMix::only(&self.styles)
        };
        let rate = self.noise_rate.clamp(0.0, 1.0);
        let p = |on: bool| if on { rate } else { 0.0 };
        SimConfig {
            seed: self.seed,
            styles,
            noise: Noise {
                flicker: p(self.flicker),
                jadoube: p(self.jadoube),
                wrong_code: p(self.wrong_code),
            },
            scan_period: Duration::from_millis(self.scan_ms.max(1)),
            speed: self.speed,
            rotated: self.rotated,
            occupancy_only: self.occupancy_only,
            clock: self.clock.then(|| ClockConfig {
                initial: Duration::from_secs(self.clock_minutes * 60),
                increment: Duration::from_secs(self.increment),
                ..ClockConfig::default()
            }),
            garbage_on_connect: self.garbage_on_connect,
            start: if self.start_now {
                StartTrigger::Immediately
            } else {
                StartTrigger::OnUpdateMode
            },
            start_delay: Duration::from_millis(self.start_delay_ms),
            stepped: self.step,
            result_piece: self.result_piece,
            identity: self.serial.as_ref().map(|serial| Identity {
                serial: serial.clone(),
                long_serial: format!("3.1000{serial}"),
                ..Identity::new(self.occupancy_only)
            }),
        }
    }

    /// The unplugging these options describe.
    pub fn plug(&self) -> Plug {
        Plug {
            link: self.link.clone(),
            relink: self.relink.clone(),
            unplug_after: self.unplug_after_ply.clone(),
            unplugged_for: Duration::from_millis(self.unplug_ms),
        }
    }

    /// The chain of boards `--bus N` describes (empty without `--bus`).
    pub fn bus_boards(&self) -> Result<Vec<BusBoardConfig>, SimError> {
        let Some(count) = self.bus else {
            return Ok(Vec::new());
        };
        let games = self.games()?;
        let first = self.game.max(1) - 1;
        (0..usize::from(count))
            .map(|i| {
                let script = games.get((first + i) % games.len().max(1)).cloned().ok_or(
                    SimError::NoSuchGame {
                        requested: self.game,
                        available: 0,
                    },
                )?;
                let base = self.config();
                let sim = SimConfig {
                    seed: base.seed.wrapping_add(i as u64),
                    ..base
                };
                let silent = self.bus_silent.is_some_and(|b| usize::from(b) == i + 1);
                Ok(BusBoardConfig {
                    checksum_faults: self.bus_faults,
                    silent_after: silent.then(|| Duration::from_secs(self.bus_silent_after)),
                    ..BusBoardConfig::new(sim, format!("{:05}", 1025 + i), script)
                })
            })
            .collect()
    }

    /// Every game of the PGN (or the one game --fen / the demo describes).
    fn games(&self) -> Result<Vec<Script>, SimError> {
        let text = match &self.pgn {
            Some(p) if p.as_os_str() == "-" => {
                let mut s = String::new();
                std::io::stdin().read_to_string(&mut s)?;
                Some(s)
            }
            Some(p) => Some(std::fs::read_to_string(p)?),
            None if self.fen.is_some() || self.interactive => None,
            None => Some(crate::DEMO_PGN.to_string()),
        };
        match text {
            Some(text) => Ok(Script::parse_pgn_from(&text, self.fen.as_deref())?),
            None => Ok(vec![Script::from_fen_and_san(self.fen.as_deref(), &[])?]),
        }
    }

    /// The script these options select.
    pub fn script(&self) -> Result<Script, SimError> {
        let mut games = self.games()?;
        let available = games.len();
        if self.game == 0 || self.game > available {
            return Err(SimError::NoSuchGame {
                requested: self.game,
                available,
            });
        }
        Ok(games.swap_remove(self.game - 1))
    }
}

/// Run the virtual board until the game is finished (and `--linger` has passed).
pub fn run(args: SimulateArgs) -> Result<(), SimError> {
    if args.pgn.as_deref().is_some_and(|p| p.as_os_str() == "-") && (args.interactive || args.step)
    {
        return Err(SimError::BadLine(
            "--pgn - cannot be combined with --interactive or --step".into(),
        ));
    }
    if args.bus.is_some() {
        return run_bus(&args);
    }
    let script = args.script()?;
    let stdin =
        || -> Box<dyn BufRead + Send> { Box::new(std::io::BufReader::new(std::io::stdin())) };
    let source = if args.interactive {
        Source::Interactive(script, stdin())
    } else if args.step {
        Source::Stepped(script, stdin())
    } else {
        Source::Script(script)
    };
    let board = spawn_on_pty_with(args.config(), source, args.plug())?;
    let mut out = std::io::stdout().lock();
    let path = match &args.link {
        Some(link) => link.display().to_string(),
        None => board.path().display().to_string(),
    };
    if args.json {
        writeln!(
            out,
            "{{\"event\":\"ready\",\"path\":\"{}\"}}",
            json_escape(&path)
        )?;
    } else {
        writeln!(out, "Virtual DGT board ready on {path}")?;
        writeln!(
            out,
            "Open that port with the daemon; the game starts once it enters update mode."
        )?;
        if args.interactive {
            writeln!(
                out,
                "Type moves (e4, Nf3, e7e8q) or raw actions (lift e2 / place e4 P), one per line."
            )?;
        } else if args.step {
            writeln!(out, "Press Enter to play each move.")?;
        }
    }
    out.flush()?;
    let mut finish = Finish::new(&args);
    loop {
        match board.reports().recv_timeout(Duration::from_millis(100)) {
            Ok(r) => print_report(&mut out, &r, args.json)?,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        while let Ok(event) = board.plug_events().try_recv() {
            print_plug_event(&mut out, &event, args.json)?;
        }
        if finish.is_due(board.is_finished()) {
            while let Ok(r) = board.reports().try_recv() {
                print_report(&mut out, &r, args.json)?;
            }
            finish.announce(
                &mut out,
                "Game finished; the board stays on line (Ctrl-C to quit).",
            )?;
        } else if finish.is_over() {
            break;
        }
    }
    board.stop();
    Ok(())
}

/// `--bus N`: the chain on one pseudo-terminal until every game is finished (and
/// `--linger` has passed).
fn run_bus(args: &SimulateArgs) -> Result<(), SimError> {
    let boards = args.bus_boards()?;
    let count = boards.len();
    let chain = spawn_bus_on_pty(boards)?;
    let mut out = std::io::stdout().lock();
    let path = chain.path().display().to_string();
    let addresses: Vec<String> = chain.addresses().iter().map(|a| a.serial()).collect();
    if args.json {
        let quoted: Vec<String> = addresses.iter().map(|a| format!("\"{a}\"")).collect();
        writeln!(
            out,
            "{{\"event\":\"ready\",\"path\":\"{}\",\"bus\":[{}]}}",
            json_escape(&path),
            quoted.join(",")
        )?;
    } else {
        writeln!(out, "Virtual DGT bus with {count} boards ready on {path}")?;
        writeln!(out, "Serial numbers: {}", addresses.join(" "))?;
        writeln!(out, "Open it with `boardcast run --bus {path}`.")?;
    }
    out.flush()?;
    let mut finish = Finish::new(args);
    loop {
        match chain.reports().recv_timeout(Duration::from_millis(100)) {
            Ok((i, r)) => {
                if args.json {
                    writeln!(
                        out,
                        "{{\"event\":\"move\",\"board\":{},\"ply\":{},\"san\":\"{}\",\"uci\":\"{}\",\"board_text\":\"{}\"}}",
                        i + 1,
                        r.ply,
                        json_escape(&r.san),
                        json_escape(&r.uci),
                        json_escape(&r.board)
                    )?;
                } else {
                    write!(out, "board {}: ", i + 1)?;
                    print_report(&mut out, &r, false)?;
                }
                out.flush()?;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if finish.is_due(chain.is_finished()) {
            finish.announce(
                &mut out,
                "All games finished; the boards stay on line (Ctrl-C to quit).",
            )?;
        } else if finish.is_over() {
            break;
        }
    }
    chain.stop();
    Ok(())
}

/// The end of a run: the games finished once (announced), then `--linger` seconds on
/// line, or on line until stopped without it.
struct Finish {
    json: bool,
    linger: Option<Duration>,
    finished_at: Option<Instant>,
}

impl Finish {
    fn new(args: &SimulateArgs) -> Self {
        Finish {
            json: args.json,
            linger: args.linger.map(Duration::from_secs),
            finished_at: None,
        }
    }

    /// Whether the games have just finished (true once).
    fn is_due(&self, finished: bool) -> bool {
        finished && self.finished_at.is_none()
    }

    /// Says the games finished (`text` for people, an event for JSON) and starts lingering.
    fn announce(&mut self, out: &mut impl Write, text: &str) -> std::io::Result<()> {
        if self.json {
            writeln!(out, "{{\"event\":\"finished\"}}")?;
        } else {
            writeln!(out, "{text}")?;
        }
        out.flush()?;
        self.finished_at = Some(Instant::now());
        Ok(())
    }

    /// Whether the run should end: finished, and lingered long enough.
    fn is_over(&self) -> bool {
        self.finished_at
            .zip(self.linger)
            .is_some_and(|(t, linger)| t.elapsed() >= linger)
    }
}

fn print_plug_event(out: &mut impl Write, event: &PlugEvent, json: bool) -> std::io::Result<()> {
    match (event, json) {
        (PlugEvent::Unplugged, true) => writeln!(out, "{{\"event\":\"unplugged\"}}")?,
        (PlugEvent::Unplugged, false) => writeln!(out, "Board unplugged.")?,
        (PlugEvent::Replugged(path), true) => writeln!(
            out,
            "{{\"event\":\"replugged\",\"path\":\"{}\"}}",
            json_escape(&path.display().to_string())
        )?,
        (PlugEvent::Replugged(path), false) => {
            writeln!(out, "Board plugged in again on {}", path.display())?
        }
    }
    out.flush()
}

fn print_report(out: &mut impl Write, r: &MoveReport, json: bool) -> std::io::Result<()> {
    if json {
        writeln!(
            out,
            "{{\"event\":\"move\",\"ply\":{},\"san\":\"{}\",\"uci\":\"{}\",\"board\":\"{}\"}}",
            r.ply,
            json_escape(&r.san),
            json_escape(&r.uci),
            json_escape(&r.board)
        )?;
    } else {
        let dots = if r.ply % 2 == 1 { "." } else { "..." };
        writeln!(out, "{}{dots} {} ({})", r.ply.div_ceil(2), r.san, r.uci)?;
    }
    out.flush()
}

/// Escape a string for a JSON string literal.
pub fn json_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: SimulateArgs,
    }

    #[test]
    fn options_parse_into_a_config() {
        let cli = Cli::try_parse_from([
            "simulate",
            "--seed",
            "9",
            "--speed",
            "3",
            "--scan-ms",
            "200",
            "--style",
            "castle-rook-first",
            "--style",
            "capture-swap",
            "--flicker",
            "--rotated",
            "--clock",
            "--occupancy-only",
        ])
        .unwrap();
        let cfg = cli.args.config();
        assert_eq!(cfg.seed, 9);
        assert_eq!(cfg.scan_period, Duration::from_millis(200));
        assert_eq!(
            cfg.styles,
            StyleMix::only(&[Style::CastleRookFirst, Style::CaptureSwap])
        );
        assert!(cfg.noise.flicker > 0.0 && cfg.noise.jadoube == 0.0);
        assert!(cfg.rotated && cfg.occupancy_only && cfg.clock.is_some());
        assert!(Cli::try_parse_from(["simulate", "--interactive", "--step"]).is_err());
    }

    #[test]
    fn default_script_is_the_demo_game_and_game_numbers_are_checked() {
        let cli = Cli::try_parse_from(["simulate"]).unwrap();
        assert!(cli.args.script().unwrap().moves().len() > 80);
        let cli = Cli::try_parse_from(["simulate", "--game", "2"]).unwrap();
        assert!(matches!(
            cli.args.script(),
            Err(SimError::NoSuchGame {
                requested: 2,
                available: 1
            })
        ));
        let cli =
            Cli::try_parse_from(["simulate", "--fen", "4k3/8/8/8/8/8/8/4K2R w K - 0 1"]).unwrap();
        assert_eq!(cli.args.script().unwrap().moves().len(), 0);
    }

    #[test]
    fn bus_options_describe_a_chain() {
        let cli = Cli::try_parse_from([
            "simulate",
            "--bus",
            "3",
            "--seed",
            "5",
            "--bus-faults",
            "0.1",
            "--bus-silent",
            "2",
            "--bus-silent-after",
            "9",
        ])
        .unwrap();
        let boards = cli.args.bus_boards().unwrap();
        assert_eq!(boards.len(), 3);
        let serials: Vec<&str> = boards
            .iter()
            .map(|b| b.sim.identity.as_ref().unwrap().serial.as_str())
            .collect();
        assert_eq!(serials, ["01025", "01026", "01027"]);
        assert_eq!(boards[2].sim.seed, 7);
        assert_eq!(boards[1].silent_after, Some(Duration::from_secs(9)));
        assert_eq!(boards[0].silent_after, None);
        assert!((boards[0].checksum_faults - 0.1).abs() < 1e-9);
        assert!(Cli::try_parse_from(["simulate", "--bus", "0"]).is_err());
        assert!(Cli::try_parse_from(["simulate", "--bus-faults", "0.1"]).is_err());
        assert!(Cli::try_parse_from(["simulate", "--bus", "2", "--interactive"]).is_err());
    }

    #[test]
    fn json_escaping() {
        assert_eq!(json_escape("a\"b\\c\n"), "a\\\"b\\\\c\\u000a");
    }
}
