//! HTTP benchmarks against the real daemon binary, loopback only.
//!
//! * `latency`: a fake DGT board on a bare pseudo-terminal plays corpus games as raw
//!   field updates; one SSE client timestamps each move event. Reported: time from the
//!   last byte of a move to its SSE event, minus the settle window, p50/p99/max.
//! * `fanout`: the same board with thousands of SSE clients; reported: for every move and
//!   client, the delivery time (same measure), p50/p99, the slowest client per move, and
//!   the daemon's resident memory.
//!
//! * `nats`: bridges with many boards into NATS, one relay, thousands of SSE clients
//!   (see `http/nats.rs`).
//!
//! ```sh
//! cargo bench -p boardcast --bench http -- latency 1000
//! bash -c 'ulimit -n 65536 && cargo bench -p boardcast --bench http -- fanout 5000'
//! bash -c 'ulimit -n 20000 && cargo bench -p boardcast --bench http -- nats 5000 3 100 600'
//! ```

#[path = "http/nats.rs"]
mod nats;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use shakmaty::{Chess, Position};

mod common;
use common::{FakeBoard, corpus_games, daemon_binary, raw_board, report};

/// The settle window the daemon runs with; subtracted from every figure.
const SETTLE_MS: u64 = 40;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mode = args.first().map_or("latency", String::as_str);
    let count: usize = args
        .get(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(match mode {
            "fanout" => 5000,
            _ => 1000,
        });
    let arg =
        |i: usize, default: usize| args.get(i).and_then(|n| n.parse().ok()).unwrap_or(default);
    match mode {
        "latency" => latency(count),
        "fanout" => fanout(count),
        "nats" => nats::nats(count, arg(2, 3), arg(3, 100), arg(4, 600)),
        other => eprintln!(
            "unknown benchmark {other:?}: latency [MOVES] | fanout [CLIENTS] | nats [CLIENTS BRIDGES BOARDS MOVES]"
        ),
    }
}

/// The daemon on `board`, HTTP on a free port; returns it, its base address, and the
/// times (seconds of the UTC day) at which its worker logged each move, by ply.
fn daemon(board: &FakeBoard) -> (Child, String, Receiver<(u64, f64)>) {
    let mut child = Command::new(daemon_binary())
        .args(["run", "--http", "127.0.0.1:0", "--token", "bench"])
        .args(["--settle-ms", &SETTLE_MS.to_string()])
        .arg("--port")
        .arg(&board.path)
        .env(
            "RUST_LOG",
            "warn,boardcast::http=info,boardcast::link::worker=info",
        )
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the daemon");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        let line = lines.next().expect("daemon stderr").expect("line");
        if let Some(at) = line.find("http://") {
            break line[at..].trim().to_string();
        }
    };
    let (tx, logged) = mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if let Some(logged_move) = logged_move(&line) {
                let _ = tx.send(logged_move);
            }
        }
    });
    (child, base, logged)
}

/// `(ply, seconds of the UTC day)` from a worker's `move N: SAN` log line.
fn logged_move(line: &str) -> Option<(u64, f64)> {
    let (_, rest) = line.split_once(" move ")?;
    let ply = rest.split(':').next()?.parse().ok()?;
    let time = line.split_whitespace().next()?.split_once('T')?.1;
    let mut parts = time.trim_end_matches('Z').split(':');
    let hours: f64 = parts.next()?.parse().ok()?;
    let minutes: f64 = parts.next()?.parse().ok()?;
    let seconds: f64 = parts.next()?.parse().ok()?;
    Some((ply, hours * 3600.0 + minutes * 60.0 + seconds))
}

/// Now, in seconds of the UTC day, to compare with the daemon's log times.
fn day_seconds() -> f64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    since_epoch.as_secs_f64() % 86_400.0
}

/// A move event as a client saw it.
struct Arrival {
    at: Instant,
    /// The same moment in seconds of the UTC day.
    day: f64,
    ply: u64,
    kind: String,
}

/// One SSE client on a thread; its events arrive on the channel.
fn sse_client(base: &str) -> Receiver<Arrival> {
    let mut stream = TcpStream::connect(base.trim_start_matches("http://")).expect("connect");
    stream
        .write_all(b"GET /api/events HTTP/1.0\r\n\r\n")
        .expect("request");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            let (at, day) = (Instant::now(), day_seconds());
            let event: serde_json::Value = serde_json::from_str(data).expect("JSON");
            let arrival = Arrival {
                at,
                day,
                ply: event["ply"].as_u64().unwrap_or(0),
                kind: event["type"].as_str().unwrap_or_default().to_string(),
            };
            if tx.send(arrival).is_err() {
                break;
            }
        }
    });
    rx
}

/// Plays corpus moves on `board` until `moves` have been made; `wait` is called after
/// each move with the time its last byte was written and its ply, and must return once
/// the move has arrived.
fn play(board: &FakeBoard, moves: usize, mut wait: impl FnMut(Instant, u64) -> bool) {
    let mut played = 0;
    for script in corpus_games() {
        let mut position = Chess::default();
        for (i, m) in script.moves().iter().enumerate() {
            position.play_unchecked(*m);
            let written = board.show(&raw_board(&position));
            if !wait(written, i as u64 + 1) {
                eprintln!("move {} of a game did not arrive; next game", i + 1);
                break;
            }
            played += 1;
            if played == moves {
                return;
            }
            // A human pace is far slower; this only keeps moves from merging.
            std::thread::sleep(Duration::from_millis(5));
        }
        // Set up the start position again: a new game.
        board.show(&raw_board(&Chess::default()));
        std::thread::sleep(Duration::from_millis(SETTLE_MS * 4));
    }
}

fn wait_for_move(client: &Receiver<Arrival>, ply: u64) -> Option<Arrival> {
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let arrival = client.recv_timeout(left).ok()?;
        if arrival.kind == "move" && arrival.ply == ply {
            return Some(arrival);
        }
    }
    None
}

fn ms_after_settle(at: Instant, written: Instant) -> f64 {
    at.duration_since(written).as_secs_f64() * 1000.0 - SETTLE_MS as f64
}

fn latency(moves: usize) {
    let board = FakeBoard::open();
    let (mut child, base, logged) = daemon(&board);
    let client = sse_client(&base);
    std::thread::sleep(Duration::from_secs(1));
    let mut samples = Vec::new();
    let mut after_log = Vec::new();
    play(&board, moves, |written, ply| {
        match wait_for_move(&client, ply) {
            Some(arrival) => {
                samples.push(ms_after_settle(arrival.at, written));
                let mut log_lines =
                    std::iter::from_fn(|| logged.recv_timeout(Duration::from_secs(1)).ok());
                let log = log_lines.find(|(logged_ply, _)| *logged_ply == ply);
                if let Some((_, at)) = log {
                    after_log.push((arrival.day - at) * 1000.0);
                }
                true
            }
            None => false,
        }
    });
    report("pty byte -> SSE event, minus settle", samples);
    report("worker's move log line -> SSE event", after_log);
    let _ = child.kill();
}

/// `clients` SSE clients as tasks on one thread (so that thousands of them leave the
/// daemon its CPU); each sends `(client, board, ply, arrival)` for every move event.
fn fanout_clients(base: &str, clients: usize) -> Receiver<(usize, usize, u64, Instant)> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://").to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("client runtime");
        runtime.block_on(async move {
            let mut tasks = Vec::new();
            for client in 0..clients {
                let mut stream = tokio::net::TcpStream::connect(&addr)
                    .await
                    .expect("connect");
                stream
                    .write_all(b"GET /api/events HTTP/1.0\r\n\r\n")
                    .await
                    .expect("request");
                let tx = tx.clone();
                tasks.push(tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stream).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        let at = Instant::now();
                        // Cheap parsing: the clients share one core with the daemon.
                        if line.starts_with("data: {") && line.contains(r#""type":"snapshot""#) {
                            // Ply 0: this client is connected.
                            let _ = tx.send((client, 0, 0, at));
                            continue;
                        }
                        if !line.starts_with("data: {") || !line.contains(r#""type":"move""#) {
                            continue;
                        }
                        let number = |key: &str| {
                            line.split_once(key)
                                .and_then(|(_, rest)| rest.split(',').next()?.parse::<u64>().ok())
                        };
                        let (board, ply) = (number(r#""board":"#), number(r#""ply":"#));
                        if let (Some(board), Some(ply)) = (board, ply)
                            && tx.send((client, board as usize, ply, at)).is_err()
                        {
                            break;
                        }
                    }
                }));
            }
            for task in tasks {
                let _ = task.await;
            }
        });
    });
    rx
}

fn fanout(clients: usize) {
    let board = FakeBoard::open();
    let (mut child, base, _) = daemon(&board);
    let arrivals = fanout_clients(&base, clients);
    let connected = (0..clients)
        .take_while(|_| arrivals.recv_timeout(Duration::from_secs(30)).is_ok())
        .count();
    println!("{connected} clients connected");
    let mut deliveries = Vec::new();
    let mut slowest = Vec::new();
    let mut missing = 0usize;
    play(&board, 50, |written, ply| {
        let mut seen = vec![false; clients];
        let mut count = 0;
        let mut last = 0.0f64;
        let deadline = Instant::now() + Duration::from_secs(5);
        while count < clients {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            let Ok((client, _, arrived_ply, at)) = arrivals.recv_timeout(left) else {
                break;
            };
            if arrived_ply == ply && !seen[client] {
                seen[client] = true;
                count += 1;
                let ms = ms_after_settle(at, written);
                deliveries.push(ms);
                last = last.max(ms);
            }
        }
        missing += clients - count;
        slowest.push(last);
        true
    });
    report("delivery to each client, minus settle", deliveries);
    report("slowest client per move, minus settle", slowest);
    println!("missed deliveries: {missing}");
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    for line in status
        .lines()
        .filter(|l| l.starts_with("VmRSS") || l.starts_with("VmHWM"))
    {
        println!("daemon {line}");
    }
    let _ = child.kill();
}
