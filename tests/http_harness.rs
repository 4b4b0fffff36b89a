//! What the HTTP tests share: a simulated board driven from the test (stepped through a
//! corpus game, or fed moves and raw sensor actions), the daemon with its HTTP API on a
//! free port, and small HTTP, SSE and WebSocket clients.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use tungstenite::stream::MaybeTlsStream;

use crate::harness::{Running, boardcast};

/// The token the tests give the daemon.
pub const TOKEN: &str = "test-token-0123";

/// The corpus the simulated boards play from.
pub fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/twic1599_1000k.pgn")
}

/// A simulated board whose moves the test triggers.
pub struct Sim {
    pub running: Running,
    stdin: ChildStdin,
    reports: Receiver<serde_json::Value>,
    pub path: String,
}

impl Sim {
    /// Game `game` of the corpus, one move per `step`.
    pub fn stepped(game: usize) -> Sim {
        Sim::start(&[
            "--step",
            "--game",
            &game.to_string(),
            "--pgn",
            &corpus().display().to_string(),
        ])
    }

    /// A board that plays what `send` types: moves (`e4`) or `lift e2` / `place e4 P`.
    pub fn interactive() -> Sim {
        Sim::start(&["--interactive"])
    }

    /// A board started with the simulator options `extra`.
    pub fn start(extra: &[&str]) -> Sim {
        let mut cmd = boardcast();
        cmd.args(["simulate", "--json", "--seed", "7", "--speed", "4"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut running = Running::start(cmd);
        let stdin = running.child.stdin.take().expect("stdin");
        let stdout = running.child.stdout.take().expect("stdout");
        let (tx, reports) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str(&line)
                    && tx.send(value).is_err()
                {
                    break;
                }
            }
        });
        let ready: serde_json::Value = reports
            .recv_timeout(Duration::from_secs(20))
            .expect("ready line");
        let path = ready["path"].as_str().expect("path").to_string();
        Sim {
            running,
            stdin,
            reports,
            path,
        }
    }

    /// Plays the next move of a stepped game; returns its SAN.
    pub fn step(&mut self) -> String {
        self.send("");
        let report = self
            .reports
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no move report:\n{}", self.running.stderr_so_far()));
        report["san"].as_str().expect("san").to_string()
    }

    /// Sends one line to the simulator.
    pub fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to the simulator");
        self.stdin.flush().expect("flush");
    }
}

/// The daemon with its HTTP API on a free port.
pub struct Daemon {
    pub running: Running,
    /// `http://127.0.0.1:PORT`
    pub base: String,
}

impl Daemon {
    /// Starts `boardcast run` on `ports` with `extra` options, HTTP on a free port.
    pub fn start(ports: &[&str], extra: &[&str]) -> Daemon {
        Daemon::start_logging(ports, extra, "info")
    }

    /// Like `start`, with `RUST_LOG` set to `log`.
    pub fn start_logging(ports: &[&str], extra: &[&str], log: &str) -> Daemon {
        let mut cmd = boardcast();
        cmd.env("RUST_LOG", log)
            .args(["run", "--http", "127.0.0.1:0", "--token", TOKEN])
            .args(extra);
        for port in ports {
            cmd.args(["--port", port]);
        }
        Daemon::attach(Running::start(cmd))
    }

    /// A started process that serves the HTTP API (a daemon or a relay), once it has
    /// logged its address.
    pub fn attach(mut running: Running) -> Daemon {
        let line = running
            .wait_for_stderr("listening on http://", Duration::from_secs(20))
            .unwrap_or_else(|| panic!("no HTTP address:\n{}", running.stderr_so_far()));
        let at = line.find("http://").expect("address");
        let base = line[at..]
            .split_whitespace()
            .next()
            .expect("url")
            .to_string();
        Daemon { running, base }
    }

    /// GET `path`; returns status, content type and body.
    pub fn get(&self, path: &str) -> (u16, String, String) {
        outcome(ureq::get(format!("{}{path}", self.base)).call())
    }

    /// GET `path` as JSON (must be 200).
    pub fn json(&self, path: &str) -> serde_json::Value {
        let (status, _, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
    }

    /// Polls `path` until `check` accepts its JSON; panics with the last answer.
    pub fn wait_json(
        &mut self,
        path: &str,
        timeout: Duration,
        check: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let deadline = Instant::now() + timeout;
        loop {
            let json = self.json(path);
            if check(&json) {
                return json;
            }
            if Instant::now() > deadline {
                panic!(
                    "GET {path} never matched; last: {json}\n{}",
                    self.running.stderr_so_far()
                );
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// Opens the SSE stream at `path`, resuming after `last_event_id` if given.
    pub fn sse(&self, path: &str, last_event_id: Option<u64>) -> Sse {
        let mut request = ureq::get(format!("{}{path}", self.base));
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = request.call().expect("SSE request");
        assert_eq!(
            response.headers()["content-type"].to_str().ok(),
            Some("text/event-stream")
        );
        let reader = BufReader::new(response.into_body().into_reader());
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            let mut id = None;
            for line in reader.lines().map_while(Result::ok) {
                if let Some(value) = line.strip_prefix("id: ") {
                    id = value.parse().ok();
                } else if let Some(data) = line.strip_prefix("data: ") {
                    let json = serde_json::from_str(data).expect("event JSON");
                    if tx
                        .send((id.take().expect("an id per event"), json))
                        .is_err()
                    {
                        break;
                    }
                }
            }
        });
        Sse { events }
    }

    /// Opens a WebSocket at `path`.
    pub fn websocket(&self, path: &str) -> WebSocket {
        let url = format!("{}{path}", self.base.replacen("http", "ws", 1));
        let (socket, _) = tungstenite::connect(url).expect("WebSocket");
        if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream
                .set_read_timeout(Some(Duration::from_secs(20)))
                .expect("timeout");
        }
        WebSocket { socket }
    }
}

fn outcome(result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> (u16, String, String) {
    match result {
        Ok(mut response) => {
            let kind = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            let body = response.body_mut().read_to_string().expect("body");
            (response.status().as_u16(), kind, body)
        }
        Err(ureq::Error::StatusCode(code)) => (code, String::new(), String::new()),
        Err(e) => panic!("request failed: {e}"),
    }
}

/// A request with a body and optional bearer token; returns status and body.
pub fn send_json(
    method: &str,
    url: &str,
    token: Option<&str>,
    body: &serde_json::Value,
) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = ureq::http::Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let request = request.body(body.to_string()).expect("request");
    let (status, _, body) = outcome(agent.run(request));
    (status, body)
}

/// An SSE stream: `(id, event)` pairs as they arrive.
pub struct Sse {
    events: Receiver<(u64, serde_json::Value)>,
}

impl Sse {
    /// The next event, or None after `timeout`.
    pub fn next(&self, timeout: Duration) -> Option<(u64, serde_json::Value)> {
        self.events.recv_timeout(timeout).ok()
    }

    /// Events until one satisfies `check` (returned last), or panics after `timeout`.
    pub fn until(
        &self,
        timeout: Duration,
        check: impl Fn(&serde_json::Value) -> bool,
    ) -> Vec<(u64, serde_json::Value)> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Some(event) = self.next(left) else { break };
            let done = check(&event.1);
            seen.push(event);
            if done {
                return seen;
            }
        }
        let types: Vec<String> = seen.iter().map(|(_, e)| e["type"].to_string()).collect();
        panic!("no matching event; saw {types:?}");
    }
}

/// A WebSocket client.
pub struct WebSocket {
    socket: tungstenite::WebSocket<MaybeTlsStream<TcpStream>>,
}

impl WebSocket {
    /// Sends a JSON text message.
    pub fn send(&mut self, value: &serde_json::Value) {
        self.socket
            .send(tungstenite::Message::text(value.to_string()))
            .expect("send");
    }

    /// The next JSON text message (panics after the read timeout).
    pub fn next(&mut self) -> serde_json::Value {
        loop {
            match self.socket.read().expect("WebSocket message") {
                tungstenite::Message::Text(text) => {
                    return serde_json::from_str(&text).expect("JSON message");
                }
                _ => continue,
            }
        }
    }

    /// Messages until one satisfies `check`, which is returned.
    pub fn until(&mut self, check: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        for _ in 0..500 {
            let message = self.next();
            if check(&message) {
                return message;
            }
        }
        panic!("no matching message in 500");
    }
}

/// The moves recorded on `board`, a board of the HTTP API.
pub fn sans(board: &serde_json::Value) -> Vec<String> {
    crate::harness::strings(&board["moves"])
}

/// Whether an event is the move at `ply`.
pub fn is_move(event: &serde_json::Value, ply: u64) -> bool {
    event["type"] == "move" && event["ply"] == ply
}
