//! Scale: one daemon (the real binary) with hundreds of boards, each making a move every
//! 2 s with sensor noise. The boards are fake DGT boards on bare pseudo-terminals, all in
//! this process; one SSE client timestamps every move event.
//!
//! Each move is a lift (the piece's square empties), then 150-450 ms later the placement
//! (the rest of the move in one write); before three moves in ten, another piece flickers
//! off and on again for 60 ms. Reported: the daemon's CPU over the moving phase (in
//! cores), its memory (VmRSS, VmHWM), and the time from the last byte of each move on its
//! pty to the move's SSE event, minus the settle window.
//!
//! ```sh
//! cargo bench -p boardcast --bench scale -- 500 60   # boards, seconds of play
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Sender};
use std::time::{Duration, Instant};

use boardcast_protocol::SquareIndex;
use shakmaty::{Chess, Move, Position};

mod common;
use common::{FakeBoard, corpus_games, daemon_binary, raw_board, report};

/// The daemon's default settle window; subtracted from every latency.
const SETTLE_MS: u64 = 250;
/// Every board makes a move this often.
const MOVE_EVERY: Duration = Duration::from_secs(2);
/// Share of moves preceded by a flickering square, in percent.
const NOISE_PERCENT: u64 = 30;

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let boards = args.first().map_or(500, |&n| n as usize);
    let seconds = args.get(1).copied().unwrap_or(60);
    run(boards, Duration::from_secs(seconds));
}

/// What the driver does next on one board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// A square not in the next move reads empty.
    FlickerOff,
    /// It reads right again.
    FlickerOn,
    /// The moving piece leaves its square.
    Lift,
    /// The move is complete on the board.
    Place,
}

/// One board's game as the driver plays it.
struct Player {
    board: FakeBoard,
    position: Chess,
    moves: Vec<Move>,
    ply: usize,
    /// The square that flickers before the next move.
    flicker: Option<SquareIndex>,
}

/// A small deterministic generator, so runs are comparable.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below.max(1)
    }
}

fn run(count: usize, play_for: Duration) {
    let plies_needed = (play_for.as_secs() / MOVE_EVERY.as_secs()) as usize + 2;
    let games: Vec<_> = corpus_games()
        .into_iter()
        .filter(|g| g.moves().len() >= plies_needed)
        .collect();
    assert!(!games.is_empty(), "no corpus game has {plies_needed} plies");
    let mut players: Vec<Player> = (0..count)
        .map(|i| Player {
            board: FakeBoard::open(),
            position: Chess::default(),
            moves: games[i % games.len()].moves().to_vec(),
            ply: 0,
            flicker: None,
        })
        .collect();
    let started = Instant::now();
    let (mut daemon, base) = daemon(&players);
    let ready = wait_ready(&players, Duration::from_secs(120));
    println!(
        "{ready} of {count} boards initialised in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let (arrived, arrivals) = mpsc::channel();
    sse_client(&base, arrived);
    std::thread::sleep(Duration::from_secs(1));

    let cpu_before = cpu_seconds(&daemon);
    let play_started = Instant::now();
    let written = drive(&mut players, play_for);
    let cpu = cpu_seconds(&daemon) - cpu_before;
    let wall = play_started.elapsed().as_secs_f64();

    // Moves still in flight get a few seconds to arrive.
    let mut latencies = Vec::new();
    let mut seen: HashMap<(usize, u64), Instant> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match arrivals.recv_timeout(left) {
            Ok((board, ply, at)) => {
                seen.entry((board, ply)).or_insert(at);
            }
            Err(_) => break,
        }
    }
    let mut missing = 0;
    for (key, at_written) in &written {
        match seen.get(key) {
            Some(at) => latencies
                .push(at.duration_since(*at_written).as_secs_f64() * 1000.0 - SETTLE_MS as f64),
            None => missing += 1,
        }
    }
    println!(
        "{} moves played in {wall:.1} s ({:.0} moves/s); {missing} did not arrive",
        written.len(),
        written.len() as f64 / wall
    );
    report("pty byte -> SSE move event, minus settle", latencies);
    println!("daemon CPU while playing: {:.3} cores", cpu / wall);
    memory(&daemon);
    let _ = daemon.kill();
}

/// The daemon on every board, HTTP on a free port; returns it and its base address.
fn daemon(players: &[Player]) -> (Child, String) {
    let mut cmd = Command::new(daemon_binary());
    cmd.args(["run", "--http", "127.0.0.1:0", "--token", "bench"])
        .env("RUST_LOG", "warn,boardcast::http=info")
        .stderr(Stdio::piped());
    for player in players {
        cmd.arg("--port").arg(&player.board.path);
    }
    let mut child = cmd.spawn().expect("start the daemon");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        let line = lines.next().expect("daemon stderr").expect("line");
        if let Some(at) = line.find("http://") {
            break line[at..].trim().to_string();
        }
    };
    // Keep reading, so the daemon never blocks on a full pipe; show what goes wrong.
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if line.contains("ERROR") || line.contains("panicked") {
                eprintln!("daemon: {line}");
            }
        }
    });
    (child, base)
}

fn wait_ready(players: &[Player], timeout: Duration) -> usize {
    let deadline = Instant::now() + timeout;
    loop {
        let ready = players.iter().filter(|p| p.board.is_ready()).count();
        if ready == players.len() || Instant::now() >= deadline {
            return ready;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One SSE client; sends `(board, ply, arrival)` for every move event. The parsing is
/// cheap on purpose: the client shares the two cores with the daemon.
fn sse_client(base: &str, arrived: Sender<(usize, u64, Instant)>) {
    let mut stream = TcpStream::connect(base.trim_start_matches("http://")).expect("connect");
    stream
        .write_all(b"GET /api/events HTTP/1.0\r\n\r\n")
        .expect("request");
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            let at = Instant::now();
            if !line.starts_with("data: {") || !line.contains(r#""type":"move""#) {
                continue;
            }
            // The event's own fields come before the board's view, so the first
            // occurrences are the event's.
            let number = |key: &str| -> Option<u64> {
                let (_, rest) = line.split_once(key)?;
                rest.split([',', '}']).next()?.parse().ok()
            };
            if let (Some(board), Some(ply)) = (number(r#""board":"#), number(r#""ply":"#))
                && arrived.send((board as usize, ply, at)).is_err()
            {
                break;
            }
        }
    });
}

/// Plays every board for `play_for`; returns when the last byte of each move was
/// written, by (board number, ply).
fn drive(players: &mut [Player], play_for: Duration) -> HashMap<(usize, u64), Instant> {
    let start = Instant::now();
    let end = start + play_for;
    let mut rng = Lcg(0x5CA1E);
    let mut queue = BinaryHeap::new();
    let spread = MOVE_EVERY.as_secs_f64() / players.len() as f64;
    for index in 0..players.len() {
        let at = start + Duration::from_secs_f64(spread * index as f64 + 0.6);
        queue.push(Reverse((at, index, Step::Lift)));
    }
    let mut written = HashMap::new();
    while let Some(Reverse((at, index, step))) = queue.pop() {
        if at >= end && step == Step::Lift {
            continue;
        }
        if let Some(wait) = at.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let player = &mut players[index];
        let Some(&next) = player.moves.get(player.ply) else {
            continue;
        };
        let mut shown = player.board.shown();
        match step {
            Step::FlickerOff | Step::FlickerOn => {
                let Some(square) = player.flicker else {
                    continue;
                };
                let target = raw_board(&player.position);
                let code = if step == Step::FlickerOff {
                    0
                } else {
                    target.get(square)
                };
                shown.set(square, code);
                player.board.show(&shown);
                if step == Step::FlickerOn {
                    player.flicker = None;
                }
            }
            Step::Lift => {
                shown.set(index_of(next.from().unwrap_or(next.to())), 0);
                player.board.show(&shown);
                let place = at + Duration::from_millis(150 + rng.next(300));
                queue.push(Reverse((place, index, Step::Place)));
            }
            Step::Place => {
                player.position.play_unchecked(next);
                player.ply += 1;
                let done = player.board.show(&raw_board(&player.position));
                written.insert((index + 1, player.ply as u64), done);
                let lift = at + MOVE_EVERY - Duration::from_millis(300);
                queue.push(Reverse((lift, index, Step::Lift)));
                if rng.next(100) < NOISE_PERCENT {
                    player.flicker = quiet_square(&player.position, &mut rng);
                    let off = at + Duration::from_millis(700);
                    queue.push(Reverse((off, index, Step::FlickerOff)));
                    let on = off + Duration::from_millis(60);
                    queue.push(Reverse((on, index, Step::FlickerOn)));
                }
            }
        }
    }
    written
}

/// The board index of a chess square (index 0 = a8).
fn index_of(square: shakmaty::Square) -> SquareIndex {
    let index = (7 - u8::from(square.rank())) * 8 + u8::from(square.file());
    SquareIndex::new(index).expect("0..64")
}

/// An occupied square, for a piece that flickers.
fn quiet_square(position: &Chess, rng: &mut Lcg) -> Option<SquareIndex> {
    let occupied: Vec<_> = position.board().occupied().into_iter().collect();
    let square = *occupied.get(rng.next(occupied.len() as u64) as usize)?;
    Some(index_of(square))
}

/// The daemon's user plus system CPU time so far, in seconds.
fn cpu_seconds(child: &Child) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime is the 12th, stime
    // the 13th, in clock ticks (USER_HZ, 100 on Linux).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn memory(child: &Child) {
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    for line in status
        .lines()
        .filter(|l| l.starts_with("VmRSS") || l.starts_with("VmHWM") || l.starts_with("Threads"))
    {
        println!("daemon {line}");
    }
}
