//! What the benchmarks share: a fake DGT board on a bare pseudo-terminal, the corpus
//! games it plays, and the latency report. Each bench uses part of it.
#![allow(dead_code)]

use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use boardcast_protocol::{Command as HostCommand, CommandDecoder, Message, RawBoard};
use boardcast_simulator::{BarePty, Script};
use shakmaty::{Chess, Position};

/// A fake DGT board: answers the daemon's init on a pseudo-terminal and sends field
/// updates for the moves it is given.
pub struct FakeBoard {
    pub path: PathBuf,
    writer: Arc<Mutex<File>>,
    board: Arc<Mutex<RawBoard>>,
    /// Set once the daemon has asked for a dump (its init is done).
    dumped: Arc<AtomicBool>,
    /// Keeps the pseudo-terminal open.
    _pty: BarePty,
}

impl FakeBoard {
    /// Opens a pseudo-terminal and starts answering on it.
    pub fn open() -> FakeBoard {
        let pty = BarePty::open().expect("open a pseudo-terminal");
        let mut reader = pty.master.try_clone().expect("clone");
        let writer = Arc::new(Mutex::new(pty.master.try_clone().expect("clone")));
        let board = Arc::new(Mutex::new(RawBoard::start_position()));
        let (answer, shown) = (writer.clone(), board.clone());
        let dumped = Arc::new(AtomicBool::new(false));
        let asked = dumped.clone();
        std::thread::spawn(move || {
            let mut decoder = CommandDecoder::new();
            let mut buf = [0u8; 256];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                decoder.feed(&buf[..n]);
                while let Some(command) = decoder.poll() {
                    let reply = match command {
                        HostCommand::SerialNumber => Message::SerialNumber("BENCH".into()),
                        HostCommand::Version => Message::Version { major: 3, minor: 1 },
                        HostCommand::SendBoard => {
                            asked.store(true, Ordering::Relaxed);
                            Message::BoardDump(*shown.lock().expect("board"))
                        }
                        _ => continue,
                    };
                    let _ = answer.lock().expect("writer").write_all(&reply.encode());
                }
            }
        });
        FakeBoard {
            path: pty.path.clone(),
            writer,
            board,
            dumped,
            _pty: pty,
        }
    }

    /// Whether the daemon has initialised the board (asked for its dump).
    pub fn is_ready(&self) -> bool {
        self.dumped.load(Ordering::Relaxed)
    }

    /// The position the board shows now.
    pub fn shown(&self) -> RawBoard {
        *self.board.lock().expect("board")
    }

    /// Sends the field updates that turn the board into `target` (emptied squares
    /// first, as hands lift before they place); returns when the last byte was written.
    pub fn show(&self, target: &RawBoard) -> Instant {
        let mut board = self.board.lock().expect("board");
        let squares: Vec<_> = boardcast_protocol::SquareIndex::all()
            .filter(|&sq| board.get(sq) != target.get(sq))
            .collect();
        let (lifts, places): (Vec<_>, Vec<_>) =
            squares.into_iter().partition(|&sq| target.get(sq) == 0);
        let mut bytes = Vec::new();
        for square in lifts.into_iter().chain(places) {
            Message::FieldUpdate {
                square,
                code: target.get(square),
            }
            .encode_into(&mut bytes);
        }
        *board = *target;
        let mut writer = self.writer.lock().expect("writer");
        writer.write_all(&bytes).expect("write field updates");
        Instant::now()
    }
}

/// The daemon binary a bench runs: this build's, or the one `BOARDCAST_BENCH_BIN` names
/// (to compare two builds side by side in the same time window on a shared machine).
pub fn daemon_binary() -> PathBuf {
    std::env::var_os("BOARDCAST_BENCH_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_boardcast")),
        PathBuf::from,
    )
}

/// The DGT codes of a position, in board index order.
pub fn raw_board(position: &Chess) -> RawBoard {
    let text: String = (0..64)
        .map(|i| {
            let square = shakmaty::Square::from_coords(
                shakmaty::File::new(i % 8),
                shakmaty::Rank::new(7 - i / 8),
            );
            position.board().piece_at(square).map_or('.', |p| p.char())
        })
        .collect();
    RawBoard::from_text(&text).expect("board text")
}

/// The corpus games from the standard start with 20 plies or more.
pub fn corpus_games() -> Vec<Script> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/corpus/lichess_db_1000k.pgn"
    );
    let text = std::fs::read_to_string(path).expect("corpus");
    Script::parse_pgn(&text)
        .expect("corpus parses")
        .into_iter()
        .filter(|s| *s.start() == Chess::default() && s.moves().len() >= 20)
        .collect()
}

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Prints p50, p99 and max of `values` (milliseconds).
pub fn report(name: &str, mut values: Vec<f64>) {
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        println!("{name}: no samples");
        return;
    }
    println!(
        "{name}: n={} p50={:.3} ms p99={:.3} ms max={:.3} ms",
        values.len(),
        percentile(&values, 50.0),
        percentile(&values, 99.0),
        values[values.len() - 1]
    );
    // The shape of the tail: a fixed delay (a timer, a TCP acknowledgement) shows as a
    // bump far from p50, queueing as a smooth spread.
    let bounds = [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 35.0, 50.0, f64::INFINITY];
    let mut from = 0.0;
    let mut buckets = Vec::new();
    for to in bounds {
        let n = values.iter().filter(|&&v| v >= from && v < to).count();
        if n > 0 {
            buckets.push(format!("[{from}, {to}): {n}"));
        }
        from = to;
    }
    let below = values.iter().filter(|&&v| v < 0.0).count();
    if below > 0 {
        buckets.insert(0, format!("< 0: {below}"));
    }
    println!("  distribution (ms): {}", buckets.join(", "));
}
