//! The daemon against bad and hostile clients, end to end: ids that name no board,
//! oversized bodies, a flood of connections, names that look like paths, secrets in
//! the log, and clients that stop reading.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{Running, boardcast, poll, read_status, scratch};
use crate::http_harness::{Daemon, Sim, TOKEN, is_move, send_json};

const WAIT: Duration = Duration::from_secs(30);

fn address(base: &str) -> String {
    base.trim_start_matches("http://").to_string()
}

/// Sends a raw request on a new connection; returns the whole answer (the server
/// closes after it).
fn raw(base: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(address(base)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn ids_that_name_no_board_get_404() {
    let sim = Sim::interactive();
    let mut daemon = Daemon::start(&[&sim.path], &[]);
    daemon.wait_json("/api/boards/1", WAIT, |b| b["connection"] == "responding");
    for path in [
        "/api/boards/0",
        "/api/boards/2",
        "/api/boards/-1",
        "/api/boards/abc",
        "/api/boards/1e3",
        "/api/boards/99999999999999999999999999",
        "/api/boards/18446744073709551615",
        "/api/boards/0/pgn",
        "/api/boards/abc/games",
        "/api/boards/abc/events",
        "/api/boards/2/events",
        "/api/boards/1/games/0.pgn",
        "/api/boards/1/games/2.pgn",
        "/api/boards/1/games/99999999999999999999999.pgn",
        "/api/boards/1/games/x.pgn",
        "/api/boards/1/games/1",
        "/api/boards/abc/games/1.pgn",
    ] {
        let (status, _, body) = daemon.get(path);
        assert_eq!(status, 404, "GET {path}: {body}");
    }
    for (method, path, body) in [
        ("PUT", "/api/boards/0/players", json!({"white": "A"})),
        ("PUT", "/api/boards/x/players", json!({"white": "A"})),
        ("POST", "/api/boards/7/result", json!({"result": "1-0"})),
        ("POST", "/api/boards/99999999999999999999/accept", json!({})),
        ("POST", "/api/boards/-3/setup", json!({})),
    ] {
        let url = format!("{}{path}", daemon.base);
        let (status, answer) = send_json(method, &url, Some(TOKEN), &body);
        assert_eq!(status, 404, "{method} {path}: {answer}");
    }
    assert_eq!(daemon.get("/api/boards/1").0, 200);
    assert!(daemon.running.is_running());
}

#[test]
fn oversized_bodies_get_413() {
    let sim = Sim::interactive();
    let daemon = Daemon::start(&[&sim.path], &[]);
    let url = format!("{}/api/round", daemon.base);
    let huge = json!({ "event": "x".repeat(100 * 1024) });
    let (status, body) = send_json("PUT", &url, Some(TOKEN), &huge);
    assert_eq!(status, 413, "{body}");
    let (status, body) = send_json("PUT", &url, Some(TOKEN), &json!({"event": "Open"}));
    assert_eq!(status, 200, "{body}");
    // A declared length over the limit is refused without reading the body.
    let answer = raw(
        &daemon.base,
        &format!(
            "PUT /api/round HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {TOKEN}\r\n\
             content-type: application/json\r\ncontent-length: 100000000\r\n\
             connection: close\r\n\r\n{{"
        ),
    );
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

/// A connection reading the event stream, once its first event has arrived.
fn viewer(base: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address(base)).expect("connect");
    stream
        .write_all(b"GET /api/events HTTP/1.1\r\nhost: x\r\n\r\n")
        .expect("request");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("data: ") {
        let n = stream.read(&mut buffer).expect("the viewer is served");
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buffer[..n]);
    }
    stream
}

#[test]
fn connections_over_the_limit_are_refused_and_the_rest_served() {
    let sim = Sim::interactive();
    let daemon = Daemon::start(&[&sim.path], &["--max-connections", "4"]);
    // Four viewers hold their event streams open.
    let held: Vec<TcpStream> = (0..4).map(|_| viewer(&daemon.base)).collect();
    let answer = raw(&daemon.base, "GET /api/boards HTTP/1.1\r\nhost: x\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    // A flood of connections is turned away without harm.
    let flood: Vec<TcpStream> = (0..200)
        .filter_map(|_| TcpStream::connect(address(&daemon.base)).ok())
        .collect();
    drop(flood);
    drop(held);
    // The slots free as the viewers go.
    let served = poll(WAIT, || {
        let answer = raw(
            &daemon.base,
            "GET /api/boards HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        );
        answer.starts_with("HTTP/1.1 200").then_some(answer)
    });
    assert!(served.is_some(), "the API serves again once viewers leave");
}

/// A client that stops taking what it is sent (its socket buffers full: here pipelined
/// requests for the viewer script, never read) holds its connection slot only for the
/// stall timeout; then its connection is closed and the slot serves the next client.
#[test]
fn a_client_that_takes_nothing_is_closed_after_the_stall_timeout() {
    const STALL: Duration = Duration::from_secs(2);
    let sim = Sim::interactive();
    let daemon = Daemon::start(
        &[&sim.path],
        &["--max-connections", "1", "--stall-timeout", "2"],
    );
    // Only connections closed after one answer, so that the one slot is free between
    // them.
    let close = "GET /api/boards HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
    let served = || raw(&daemon.base, close).starts_with("HTTP/1.1 200");
    poll(WAIT, || served().then_some(())).expect("the daemon serves");
    // Some 20 MB of answers, more than the loopback's socket buffers hold; sent again
    // until served, not turned away (a slot frees a moment after its last answer).
    let requests = "GET /viewer.js HTTP/1.1\r\nhost: x\r\n\r\n".repeat(5000);
    let mut stuck = poll(WAIT, || {
        let mut stuck = TcpStream::connect(address(&daemon.base)).ok()?;
        stuck.write_all(requests.as_bytes()).ok()?;
        let mut first = [0u8; 12];
        stuck.read_exact(&mut first).ok()?;
        (&first == b"HTTP/1.1 200").then_some(stuck)
    })
    .expect("the stuck client is served");
    let stalled = Instant::now();
    let busy = raw(&daemon.base, close);
    assert!(
        busy.starts_with("HTTP/1.1 503"),
        "the stuck client holds the slot: {busy}"
    );
    let freed = poll(WAIT, || served().then(|| stalled.elapsed()))
        .expect("the stuck client's slot is freed");
    assert!(
        freed >= STALL - Duration::from_millis(500) && freed < STALL + Duration::from_secs(10),
        "freed after {freed:?}, stall timeout {STALL:?}"
    );
    // Its connection is closed: what was sent before the stall, then the end (a reset,
    // as requests it never read were left behind).
    stuck
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut received = Vec::new();
    match stuck.read_to_end(&mut received) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the stuck connection is still open: {e}"),
    }
}

/// Event, round and player names that look like paths never become paths: the PGN
/// directory and the recordings hold only the files the daemon names itself.
#[test]
fn names_from_user_data_never_become_paths() {
    let dir = scratch("hardening-paths");
    let config = dir.join("round.toml");
    std::fs::write(
        &config,
        "event = \"../../escape\"\nsite = \"/tmp\"\nround = \"../1\"\n\n\
         [[board]]\nwhite = \"../../../etc/passwd\"\nblack = \"a/b\\\\c\"\n",
    )
    .expect("config");
    let pgn_dir = dir.join("out/pgn");
    let record_dir = dir.join("out/record");
    let mut sim = Sim::interactive();
    let mut daemon = Daemon::start(
        &[&sim.path],
        &[
            "--config",
            &config.display().to_string(),
            "--pgn-dir",
            &pgn_dir.display().to_string(),
            "--record",
            &record_dir.display().to_string(),
        ],
    );
    let url = format!("{}/api/boards/1/players", daemon.base);
    let (status, body) = send_json(
        "PUT",
        &url,
        Some(TOKEN),
        &json!({"white": "../../../../tmp/owned", "black": "/dev/null"}),
    );
    assert_eq!(status, 200, "{body}");
    sim.send("e4");
    daemon.wait_json("/api/boards/1", WAIT, |b| b["moves"] == json!(["e4"]));
    let pgn = poll(WAIT, || {
        std::fs::read_to_string(pgn_dir.join("game-1.pgn"))
            .ok()
            .filter(|t| t.contains("1. e4") && t.contains("tmp/owned"))
    })
    .expect("game-1.pgn with the names");
    assert!(pgn.contains("[Event \"../../escape\"]"), "{pgn}");
    // Stopped before the files are listed: while the daemon rewrites a file, its temporary
    // twin exists beside it; a clean stop leaves none.
    let pid = nix::unistd::Pid::from_raw(daemon.running.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("signal the daemon");
    assert_eq!(
        daemon.running.wait_exit(WAIT),
        Some(0),
        "{}",
        daemon.running.stderr_so_far()
    );
    let mut names: Vec<String> = walk(&dir)
        .into_iter()
        .map(|p| p.strip_prefix(&dir).expect("inside").display().to_string())
        .collect();
    names.sort();
    let recordings: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("out/record/"))
        .collect();
    assert_eq!(recordings.len(), 1, "{names:?}");
    assert!(
        recordings[0].starts_with("out/record/board-1-") && recordings[0].ends_with(".rec"),
        "{names:?}"
    );
    let others: Vec<&String> = names
        .iter()
        .filter(|n| !n.starts_with("out/record/"))
        .collect();
    assert_eq!(
        others,
        ["out/pgn/game-1.pgn", "out/pgn/games.pgn", "round.toml"],
        "only the daemon's own file names"
    );
}

/// Every file under `dir`, recursively.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// With everything logged (`RUST_LOG=trace`), neither the push token nor the API token
/// reaches the log, though both are used.
#[test]
fn secrets_never_reach_the_log() {
    const PUSH_TOKEN: &str = "lip_pushsecret0123456789";
    let dir = scratch("hardening-secrets");
    // A push target that refuses connections, so pushes fail and are retried (and
    // logged) while the test runs.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let config = dir.join("round.toml");
    std::fs::write(
        &config,
        format!(
            "event = \"Open\"\n[push]\nurl = \"http://127.0.0.1:{port}/api/broadcast/round/x/push\"\n\
             token = \"{PUSH_TOKEN}\"\n"
        ),
    )
    .expect("config");
    let mut sim = Sim::interactive();
    let mut daemon = Daemon::start_logging(
        &[&sim.path],
        &["--config", &config.display().to_string()],
        "trace",
    );
    let url = format!("{}/api/boards/1/players", daemon.base);
    let (status, body) = send_json("PUT", &url, Some(TOKEN), &json!({"white": "A"}));
    assert_eq!(status, 200, "{body}");
    let (status, _) = send_json("PUT", &url, Some("wrong-token"), &json!({"white": "B"}));
    assert_eq!(status, 401);
    sim.send("e4");
    daemon.wait_json("/api/boards/1", WAIT, |b| b["moves"] == json!(["e4"]));
    daemon
        .running
        .wait_for_stderr("push failed", WAIT)
        .expect("a failed push is logged");
    std::thread::sleep(Duration::from_secs(2));
    let log = daemon.running.stderr_so_far();
    assert!(log.contains("TRACE"), "the log runs at trace level");
    assert!(!log.contains(PUSH_TOKEN), "push token in the log");
    assert!(!log.contains(TOKEN), "API token in the log");
}

/// A generated API token is printed once, at start, and never again.
#[test]
fn a_generated_token_is_printed_once() {
    let sim = Sim::interactive();
    let mut cmd = boardcast();
    cmd.env("RUST_LOG", "trace")
        .args(["run", "--http", "127.0.0.1:0", "--port", &sim.path]);
    let mut running = Running::start(cmd);
    let line = running
        .wait_for_stderr("API token for state-changing calls: ", WAIT)
        .expect("token printed");
    let token = line.rsplit(' ').next().expect("token").trim().to_string();
    assert_eq!(token.len(), 32, "{line}");
    let listening = running
        .wait_for_stderr("listening on http://", WAIT)
        .expect("address");
    let base = listening[listening.find("http://").expect("url")..]
        .split_whitespace()
        .next()
        .expect("url")
        .to_string();
    let url = format!("{base}/api/boards/1/players");
    let (status, body) = send_json("PUT", &url, Some(&token), &json!({"white": "A"}));
    assert_eq!(status, 200, "{body}");
    std::thread::sleep(Duration::from_secs(1));
    let log = running.stderr_so_far();
    assert_eq!(log.matches(&token).count(), 1, "{log}");
}

/// A stuck SSE client and a stuck WebSocket client (connected, never reading) hold up
/// nothing: moves reach another client and the status file at once, the daemon's
/// memory stays bounded while thousands of events go out, and a stuck client that
/// reads again is brought up to date with a snapshot rather than the whole backlog.
#[test]
fn stuck_clients_hold_up_nothing() {
    let dir = scratch("hardening-stuck");
    let status_file = dir.join("status.json");
    let mut sim = Sim::interactive();
    let mut daemon = Daemon::start(
        &[&sim.path],
        &["--status-file", &status_file.display().to_string()],
    );
    daemon.wait_json("/api/boards/1", WAIT, |b| b["connection"] == "responding");
    let mut stuck_sse = stuck_client(&daemon.base);
    stuck_sse
        .write_all(b"GET /api/events HTTP/1.1\r\nhost: x\r\n\r\n")
        .expect("request");
    let mut stuck_ws = stuck_client(&daemon.base);
    stuck_ws
        .write_all(
            b"GET /api/ws HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\n\
              sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n",
        )
        .expect("request");
    let viewer = daemon.sse("/api/events", None);
    let rss = || rss_kib(daemon.running.child.id());
    // Thousands of events (each carries the board's whole view) while the stuck clients
    // read nothing: round changes are the quickest way to make them.
    let url = format!("{}/api/round", daemon.base);
    let flood = |from: usize, to: usize| {
        for i in from..to {
            let round = format!("{i} {}", "x".repeat(2000));
            let (status, body) = send_json("PUT", &url, Some(TOKEN), &json!({ "round": round }));
            assert_eq!(status, 200, "{body}");
        }
    };
    // The first flood fills the ring of recent events (4096) and the live queue; after
    // that, memory must stay flat however many more go out.
    flood(0, 5000);
    let after_first = rss();
    flood(5000, 10000);
    let after_second = rss();
    assert!(
        after_second < after_first + 4 * 1024,
        "memory grows with the stuck clients' backlog: {after_first} KiB -> {after_second} KiB"
    );
    // A move still reaches the viewer and the status file at once.
    let started = Instant::now();
    sim.send("e4");
    let seen = viewer.until(WAIT, |e| is_move(e, 1));
    let to_viewer = started.elapsed();
    assert!(!seen.is_empty());
    poll(WAIT, || {
        read_status(&status_file).filter(|s| s["boards"][0]["game"]["moves"] == json!(["e4"]))
    })
    .expect("the status file shows the move");
    let to_file = started.elapsed();
    assert!(
        to_viewer < Duration::from_secs(5) && to_file < Duration::from_secs(5),
        "held up: viewer {to_viewer:?}, status file {to_file:?}"
    );
    // The stuck SSE client reads again: it is sent a snapshot, not 10000 events.
    stuck_sse
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    nix::sys::socket::setsockopt(&stuck_sse, nix::sys::socket::sockopt::RcvBuf, &(8 << 20))
        .expect("SO_RCVBUF");
    let mut buffer = vec![0u8; 1 << 16];
    let mut text = String::new();
    let deadline = Instant::now() + WAIT;
    let mut ended = String::new();
    let caught_up = "\"moves\":[\"e4\"]";
    while !text.contains(caught_up) && Instant::now() < deadline {
        match stuck_sse.read(&mut buffer) {
            Ok(0) => {
                ended = "closed".into();
                break;
            }
            Err(e) => {
                ended = e.to_string();
                break;
            }
            Ok(n) => text.push_str(&String::from_utf8_lossy(&buffer[..n])),
        }
    }
    let types: Vec<&str> = text
        .match_indices("\"type\":\"")
        .map(|(at, _)| &text[at + 8..(at + 30).min(text.len())])
        .filter(|t| !t.starts_with("tags"))
        .collect();
    let summary = format!(
        "{ended}: {} bytes, {types:?}, {} snapshots, {} round changes",
        text.len(),
        text.matches("\"type\":\"snapshot\"").count(),
        text.matches("\"type\":\"tags\"").count()
    );
    assert!(
        text.matches("\"type\":\"snapshot\"").count() >= 2,
        "a lagging client gets a snapshot: {summary}"
    );
    assert!(
        text.matches("\"type\":\"tags\"").count() < 10000,
        "a lagging client skips what it missed"
    );
    let last_snapshot = text.rfind("\"type\":\"snapshot\"").expect("snapshot");
    assert!(
        text[last_snapshot..].contains(caught_up),
        "the snapshot carries the move made meanwhile"
    );
    drop(stuck_ws);
}

/// A connection with a small receive buffer, so that a client that stops reading is
/// soon felt by the server (loopback buffers otherwise absorb megabytes).
/// The buffer is set before connecting, so the window is small from the first packet.
fn stuck_client(base: &str) -> TcpStream {
    use nix::sys::socket::{
        AddressFamily, SockFlag, SockType, SockaddrIn, connect, setsockopt, socket, sockopt,
    };
    use std::os::fd::AsRawFd;
    let addr: std::net::SocketAddrV4 = address(base).parse().expect("IPv4 address");
    let fd = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::empty(),
        None,
    )
    .expect("socket");
    setsockopt(&fd, sockopt::RcvBuf, &4096).expect("SO_RCVBUF");
    connect(fd.as_raw_fd(), &SockaddrIn::from(addr)).expect("connect");
    TcpStream::from(fd)
}

/// Resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Slowloris: connections that send nothing, or dribble their request head a byte at a
/// time, are closed once `--header-timeout` has passed, while a normal request is
/// served meanwhile and a viewer's event stream stays open.
#[test]
fn slow_request_heads_are_cut_off() {
    const TIMEOUT: Duration = Duration::from_secs(2);
    let sim = Sim::interactive();
    let mut daemon = Daemon::start(
        &[&sim.path],
        &["--header-timeout", "2", "--max-connections", "8"],
    );
    daemon.wait_json("/api/boards/1", WAIT, |b| b["connection"] == "responding");
    let mut viewer = viewer(&daemon.base);
    let head =
        b"GET /api/boards HTTP/1.1\r\nhost: x\r\nx-padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let opened = Instant::now();
    // One silent connection and five dribbling ones: with the viewer, 7 of 8 slots.
    let mut slow: Vec<(TcpStream, usize, Option<Duration>)> = (0..6)
        .map(|i| {
            let stream = TcpStream::connect(address(&daemon.base)).expect("connect");
            stream
                .set_read_timeout(Some(Duration::from_millis(20)))
                .expect("timeout");
            (stream, if i == 0 { head.len() } else { 0 }, None)
        })
        .collect();
    let mut served_meanwhile = false;
    while opened.elapsed() < TIMEOUT * 4 && slow.iter().any(|(_, _, closed)| closed.is_none()) {
        for (stream, sent, closed) in slow.iter_mut().filter(|(_, _, c)| c.is_none()) {
            if *sent < head.len() && stream.write_all(&head[*sent..*sent + 1]).is_ok() {
                *sent += 1;
            }
            let mut buffer = [0u8; 512];
            match stream.read(&mut buffer) {
                // Closed (an error answer before the close is fine).
                Ok(0) => *closed = Some(opened.elapsed()),
                Err(e)
                    if !matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    *closed = Some(opened.elapsed());
                }
                _ => {}
            }
        }
        if !served_meanwhile && opened.elapsed() > TIMEOUT / 2 {
            let answer = raw(
                &daemon.base,
                "GET /api/boards HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
            );
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
            served_meanwhile = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(served_meanwhile);
    for (i, (_, sent, closed)) in slow.iter().enumerate() {
        let closed = closed.unwrap_or_else(|| {
            panic!(
                "slow connection {i} ({sent} bytes sent) still open after {:?}",
                opened.elapsed()
            )
        });
        assert!(
            closed >= TIMEOUT - Duration::from_millis(100)
                && closed < TIMEOUT + Duration::from_secs(3),
            "slow connection {i} closed after {closed:?}, header timeout {TIMEOUT:?}"
        );
    }
    // The viewer's stream outlives the header timeout.
    viewer
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let mut buffer = [0u8; 4096];
    match viewer.read(&mut buffer) {
        Ok(0) => panic!("the event stream was closed"),
        Ok(_) => {}
        Err(e) => assert!(
            matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "event stream: {e}"
        ),
    }
    let answer = raw(
        &daemon.base,
        "GET /api/boards HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
