//! The push to a lichess broadcast round, against a local server that keeps that
//! endpoint's contract: `POST /api/broadcast/round/{id}/push` with
//! `Authorization: Bearer <token>` and the round's PGN as the body, answered with
//! `{"games": [{"tags": {...}, "moves": N}]}`. The server fails the first push to make
//! the daemon retry, and checks that pushes never overlap and come at least a second
//! apart.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::harness::{BarePty, bare_pty, poll, scratch};
use crate::http_harness::{Daemon, Sim};

const ROUND_PATH: &str = "/api/broadcast/round/AbCd1234/push";
const PUSH_TOKEN: &str = "lip_pushsecret42";
/// How long the server takes to answer, so that overlapping pushes would show.
const ANSWER_DELAY: Duration = Duration::from_millis(150);

/// One request the server received.
#[derive(Debug, Clone)]
struct Pushed {
    at: Instant,
    method: String,
    path: String,
    authorization: String,
    content_type: String,
    body: String,
    status: u16,
}

#[derive(Default)]
struct Server {
    requests: Mutex<Vec<Pushed>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl Server {
    fn start() -> (Arc<Server>, u16) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let server = Arc::new(Server::default());
        let shared = server.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let server = shared.clone();
                std::thread::spawn(move || server.serve(stream));
            }
        });
        (server, port)
    }

    fn serve(&self, stream: TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut writer = stream;
        loop {
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                return;
            }
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_in_flight.fetch_max(now, Ordering::SeqCst);
            let at = Instant::now();
            let mut parts = request_line.split_whitespace();
            let method = parts.next().unwrap_or_default().to_string();
            let path = parts.next().unwrap_or_default().to_string();
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).expect("header");
                let line = line.trim_end().to_string();
                if line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
                }
            }
            let header = |name: &str| {
                headers
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            let body = if header("transfer-encoding") == "chunked" {
                read_chunked(&mut reader)
            } else {
                let mut body = vec![0; header("content-length").parse().unwrap_or(0)];
                reader.read_exact(&mut body).expect("body");
                String::from_utf8(body).expect("UTF-8 body")
            };
            std::thread::sleep(ANSWER_DELAY);
            let first_valid = {
                let requests = self.requests.lock().expect("lock");
                !requests.iter().any(|r| r.status != 401)
            };
            let (status, answer) = if method != "POST" || path != ROUND_PATH {
                (404, r#"{"error":"Not found"}"#.to_string())
            } else if header("authorization") != format!("Bearer {PUSH_TOKEN}") {
                (401, r#"{"error":"No such token"}"#.to_string())
            } else if first_valid {
                (500, r#"{"error":"try again"}"#.to_string())
            } else {
                let games: Vec<String> = body
                    .split("\n\n[")
                    .map(|_| r#"{"tags":{},"moves":0}"#.to_string())
                    .collect();
                (200, format!(r#"{{"games":[{}]}}"#, games.join(",")))
            };
            self.requests.lock().expect("lock").push(Pushed {
                at,
                method,
                path,
                authorization: header("authorization"),
                content_type: header("content-type"),
                body,
                status,
            });
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            let response = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                answer.len()
            );
            if writer.write_all(response.as_bytes()).is_err() {
                return;
            }
        }
    }

    fn requests(&self) -> Vec<Pushed> {
        self.requests.lock().expect("lock").clone()
    }
}

fn read_chunked(reader: &mut impl BufRead) -> String {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).expect("chunk size");
        let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).expect("chunk");
        if size == 0 {
            return String::from_utf8(body).expect("UTF-8 body");
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

#[test]
fn the_round_is_pushed_coalesced_retried_and_never_logs_the_token() {
    let (server, port) = Server::start();
    let dir = scratch("push");
    let config = dir.join("round.toml");
    std::fs::write(
        &config,
        format!(
            "event = \"Push Open\"\n[[board]]\nwhite = \"Alpha, Ann\"\n\n[push]\n\
             url = \"http://127.0.0.1:{port}{ROUND_PATH}\"\ntoken = \"{PUSH_TOKEN}\"\n"
        ),
    )
    .expect("config");
    let mut sim = Sim::stepped(12);
    let mut daemon = Daemon::start(&[&sim.path], &["--config", &config.display().to_string()]);
    let played: Vec<String> = (0..4).map(|_| sim.step()).collect();
    let movetext = format!(
        "1. {} {} 2. {} {} *",
        played[0], played[1], played[2], played[3]
    );
    let pushed = poll(Duration::from_secs(30), || {
        server
            .requests()
            .into_iter()
            .find(|r| r.status == 200 && r.body.contains(&movetext))
    })
    .unwrap_or_else(|| {
        panic!(
            "no push with {movetext}; got {:#?}\n{}",
            server.requests(),
            daemon.running.stderr_so_far()
        )
    });
    assert!(
        pushed.body.contains("[Event \"Push Open\"]"),
        "{}",
        pushed.body
    );
    assert!(pushed.body.contains("[Round \"1.1\"]"), "{}", pushed.body);
    assert!(
        pushed.body.contains("[White \"Alpha, Ann\"]"),
        "{}",
        pushed.body
    );
    let requests = server.requests();
    for r in &requests {
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", ROUND_PATH));
        assert_eq!(r.authorization, format!("Bearer {PUSH_TOKEN}"));
        assert!(
            r.content_type.starts_with("text/plain"),
            "{}",
            r.content_type
        );
    }
    assert_eq!(requests[0].status, 500, "the first push fails");
    assert!(requests.len() >= 2, "and is retried");
    for pair in requests.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(gap >= Duration::from_millis(950), "pushes {gap:?} apart");
    }
    assert_eq!(
        server.max_in_flight.load(Ordering::SeqCst),
        1,
        "one in flight"
    );
    // Four moves with their pending states, clocks and field updates are many changes;
    // coalescing sends far fewer requests.
    assert!(requests.len() <= 12, "{} pushes", requests.len());
    let stderr = daemon.running.stderr_so_far();
    assert!(
        stderr.contains("push failed"),
        "the failure is logged:\n{stderr}"
    );
    assert!(
        !stderr.contains(PUSH_TOKEN),
        "the token leaked into the log"
    );
}

/// A round of more than 100 boards goes out in requests of at most 100 games, which
/// together carry every board once.
#[test]
fn a_round_of_more_than_100_games_is_split_into_requests_of_at_most_100() {
    const BOARDS: usize = 101;
    let (server, port) = Server::start();
    let dir = scratch("push-split");
    let config = dir.join("round.toml");
    std::fs::write(
        &config,
        format!(
            "event = \"Big Open\"\n[push]\n\
             url = \"http://127.0.0.1:{port}{ROUND_PATH}\"\ntoken = \"{PUSH_TOKEN}\"\n"
        ),
    )
    .expect("config");
    let ptys: Vec<BarePty> = (0..BOARDS).map(|_| bare_pty()).collect();
    let paths: Vec<String> = ptys.iter().map(|p| p.path.display().to_string()).collect();
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut daemon = Daemon::start(&paths, &["--config", &config.display().to_string()]);
    let accepted = poll(Duration::from_secs(30), || {
        let accepted: Vec<Pushed> = server
            .requests()
            .into_iter()
            .filter(|r| r.status == 200)
            .collect();
        (accepted.len() >= 2).then_some(accepted)
    })
    .unwrap_or_else(|| {
        panic!(
            "no split push; got {:#?}\n{}",
            server.requests(),
            daemon.running.stderr_so_far()
        )
    });
    let rounds_of = |body: &str| -> Vec<String> {
        body.lines()
            .filter_map(|l| l.strip_prefix("[Round \""))
            .map(|r| r.trim_end_matches("\"]").to_string())
            .collect()
    };
    let (first, second) = (rounds_of(&accepted[0].body), rounds_of(&accepted[1].body));
    assert_eq!(first.len(), 100, "first request: {first:?}");
    let mut all: Vec<String> = first.into_iter().chain(second).collect();
    let expected: Vec<String> = (1..=BOARDS).map(|b| format!("1.{b}")).collect();
    assert_eq!(all, expected, "every board once, in board order");
    all.dedup();
    assert_eq!(all.len(), BOARDS);
}
