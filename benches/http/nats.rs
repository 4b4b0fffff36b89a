//! `nats`: bridges (`run --nats`), each with many fake boards on pseudo-terminals, publish
//! into a real nats-server with JetStream; one relay (`boardcast relay`) serves thousands
//! of SSE clients (all on `/api/events`). Moves are played one at a time, round robin
//! over every board, at about `MOVES_PER_SECOND`; reported: for every move and client,
//! the time from the move's last pty byte to the client's SSE event, minus the settle
//! window, and the slowest client per move.
//!
//! ```sh
//! bash -c 'ulimit -n 20000 && cargo bench -p boardcast --bench http -- nats 5000 3 100 600'
//! ```
//! (clients, bridges, boards per bridge, moves)

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use shakmaty::{Chess, Position};

use super::{
    FakeBoard, SETTLE_MS, corpus_games, fanout_clients, ms_after_settle, raw_board, report,
};

/// The pace of moves over all boards (a 300-board hall plays a few per second).
const MOVES_PER_SECOND: f64 = 10.0;

/// Kills the child processes when the benchmark ends.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// Waits for a line containing `needle` on `child`'s stderr; returns it, and keeps
/// draining stderr afterwards so the child never blocks on a full pipe.
fn wait_for_line(child: &mut Child, needle: &str) -> String {
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let found = loop {
        let line = lines.next().expect("stderr open").expect("line");
        if line.contains(needle) {
            break line;
        }
    };
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    found
}

pub fn nats(clients: usize, bridges: usize, boards_per_bridge: usize, moves: usize) {
    let mut children = Children(Vec::new());
    let store = std::env::temp_dir().join(format!("boardcast-bench-nats-{}", std::process::id()));
    let port = free_port();
    let mut server = Command::new("nats-server")
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
        .arg(&store)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nats-server (Debian package nats-server)");
    wait_for_line(&mut server, "Server is ready");
    children.0.push(server);
    let url = format!("nats://127.0.0.1:{port}");

    let boards: Vec<FakeBoard> = (0..bridges * boards_per_bridge)
        .map(|_| FakeBoard::open())
        .collect();
    for (b, group) in boards.chunks(boards_per_bridge).enumerate() {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_boardcast"));
        cmd.args(["run", "--no-http", "--nats", &url])
            .args([
                "--nats-first-board",
                &(b * boards_per_bridge + 1).to_string(),
            ])
            .args(["--settle-ms", &SETTLE_MS.to_string()])
            .env("RUST_LOG", "warn,boardcast::output::nats=info")
            .stderr(Stdio::piped());
        for board in group {
            cmd.arg("--port").arg(&board.path);
        }
        let mut bridge = cmd.spawn().expect("start a bridge");
        wait_for_line(&mut bridge, "NATS: connected");
        children.0.push(bridge);
    }
    // Let every board open and publish its first state.
    std::thread::sleep(Duration::from_secs(5));

    let mut relay = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["relay", "--nats", &url, "--http", "127.0.0.1:0"])
        .env(
            "RUST_LOG",
            "warn,boardcast::http=info,boardcast::relay=warn",
        )
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the relay");
    let line = wait_for_line(&mut relay, "listening on http://");
    let base = line[line.find("http://").expect("address")..]
        .trim()
        .to_string();
    let relay_pid = relay.id();
    children.0.push(relay);

    let arrivals = fanout_clients(&base, clients);
    let connected = (0..clients)
        .take_while(|_| arrivals.recv_timeout(Duration::from_secs(60)).is_ok())
        .count();
    println!(
        "{} bridges x {boards_per_bridge} boards -> NATS -> relay; {connected} SSE clients connected",
        bridges
    );

    let games = corpus_games();
    let mut positions: Vec<Chess> = vec![Chess::default(); boards.len()];
    let mut deliveries = Vec::new();
    let mut slowest = Vec::new();
    let mut missing = 0usize;
    let pace = Duration::from_secs_f64(1.0 / MOVES_PER_SECOND);
    let start = Instant::now();
    for n in 0..moves {
        let index = n % boards.len();
        let ply = n / boards.len();
        let script = &games[index % games.len()];
        let Some(m) = script.moves().get(ply) else {
            break;
        };
        positions[index].play_unchecked(*m);
        let board_number = index + 1;
        let written = boards[index].show(&raw_board(&positions[index]));
        let mut seen = vec![false; clients];
        let mut count = 0;
        let mut last = 0.0f64;
        let deadline = Instant::now() + Duration::from_secs(5);
        while count < clients {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            let Ok((client, board, arrived_ply, at)) = arrivals.recv_timeout(left) else {
                break;
            };
            if board == board_number && arrived_ply == ply as u64 + 1 && !seen[client] {
                seen[client] = true;
                count += 1;
                let ms = ms_after_settle(at, written);
                deliveries.push(ms);
                last = last.max(ms);
            }
        }
        missing += clients - count;
        slowest.push(last);
        // Keep the pace: the next move starts on schedule unless this one was late.
        let due = start + pace * (n as u32 + 1);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    report(
        "move -> bridge -> NATS -> relay -> each SSE client, minus settle",
        deliveries,
    );
    report("slowest client per move, minus settle", slowest);
    println!("missed deliveries: {missing}");
    let status = std::fs::read_to_string(format!("/proc/{relay_pid}/status")).unwrap_or_default();
    for line in status
        .lines()
        .filter(|l| l.starts_with("VmRSS") || l.starts_with("VmHWM"))
    {
        println!("relay {line}");
    }
    drop(children);
    let _ = std::fs::remove_dir_all(&store);
}
