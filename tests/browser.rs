//! The viewer page in a real headless browser (Chromium, driven over the DevTools
//! protocol): it loads, shows the boards, and redraws after a move on a stepped
//! simulated board. CI installs Chromium (`.ci/run`); elsewhere set
//! `BOARDCAST_SKIP_BROWSER=1` to skip, or `BOARDCAST_CHROMIUM` to name the binary.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{Running, scratch};
use crate::http_harness::{Daemon, Sim, corpus};

const WAIT: Duration = Duration::from_secs(30);

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("BOARDCAST_CHROMIUM") {
        return Some(path.into());
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// A headless browser showing one page, queried through the DevTools protocol.
struct Browser {
    _process: Running,
    page: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>,
    next_id: u64,
}

impl Browser {
    fn open(binary: &PathBuf, url: &str) -> Browser {
        let profile = scratch("browser-profile");
        let mut cmd = Command::new(binary);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url);
        let mut process = Running::start(cmd);
        let line = process
            .wait_for_stderr("DevTools listening on ws://", WAIT)
            .unwrap_or_else(|| panic!("Chromium did not start:\n{}", process.stderr_so_far()));
        let endpoint = &line[line.find("ws://").expect("ws url") + 5..];
        let host = endpoint.split('/').next().expect("host:port");
        let pages: serde_json::Value = crate::harness::poll(WAIT, || {
            let mut response = ureq::get(format!("http://{host}/json/list")).call().ok()?;
            let list: serde_json::Value =
                serde_json::from_str(&response.body_mut().read_to_string().ok()?).ok()?;
            list.as_array()?
                .iter()
                .any(|p| p["type"] == "page")
                .then_some(list)
        })
        .expect("a page target");
        let target = pages
            .as_array()
            .and_then(|list| list.iter().find(|p| p["type"] == "page"))
            .and_then(|p| p["webSocketDebuggerUrl"].as_str())
            .expect("page debugger URL")
            .to_string();
        let (page, _) = tungstenite::connect(target).expect("DevTools connection");
        Browser {
            _process: process,
            page,
            next_id: 1,
        }
    }

    /// Evaluates `expression` in the page; returns its (JSON-serialisable) value.
    fn eval(&mut self, expression: &str) -> serde_json::Value {
        let id = self.next_id;
        self.next_id += 1;
        let call = json!({"id": id, "method": "Runtime.evaluate",
            "params": {"expression": expression, "returnByValue": true}});
        self.page
            .send(tungstenite::Message::text(call.to_string()))
            .expect("send to DevTools");
        loop {
            let message = self.page.read().expect("DevTools answer");
            let Ok(text) = message.to_text() else {
                continue;
            };
            let Ok(answer) = serde_json::from_str::<serde_json::Value>(text) else {
                continue;
            };
            if answer["id"] == id {
                return answer["result"]["result"]["value"].clone();
            }
        }
    }

    /// Evaluates `expression` until `check` accepts the value; panics with the last.
    fn wait_for(
        &mut self,
        expression: &str,
        check: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let value = self.eval(expression);
            if check(&value) || Instant::now() > deadline {
                assert!(check(&value), "page never matched; last: {value}");
                return value;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// What the page shows of board `id`: plies, last-move squares, the status line, a few
/// squares' pieces and the players.
fn board_expression(id: usize) -> String {
    format!(
        r#"(() => {{
            const card = document.getElementById("board-{id}");
            if (!card) return null;
            const piece = (sq) => card.querySelector(`[data-square="${{sq}}"]`).textContent;
            return {{
                plies: Number(card.dataset.plies),
                squares: card.querySelectorAll(".sq").length,
                last: [...card.querySelectorAll(".sq.last")].map((e) => e.dataset.square).sort(),
                status: card.querySelector(".status").textContent,
                moves: card.querySelector(".moves").textContent,
                e1: piece("e1"), e8: piece("e8"),
                white: card.querySelector(".white").textContent,
                live: document.getElementById("connection").textContent,
                running: [...card.querySelectorAll(".clock.running")]
                    .map((e) => e.classList.contains("white-clock") ? "white" : "black"),
                clocks: [...card.querySelectorAll(".clock")].map((e) => e.textContent),
            }};
        }})()"#
    )
}

#[test]
fn the_viewer_shows_the_boards_and_follows_a_move() {
    let Some(binary) = chromium() else {
        if std::env::var_os("BOARDCAST_SKIP_BROWSER").is_some() {
            return;
        }
        panic!("no Chromium found: install it (.ci/run does) or set BOARDCAST_SKIP_BROWSER=1");
    };
    let pgn = corpus().display().to_string();
    let with_clock = ["--step", "--game", "9", "--pgn", &pgn, "--clock"];
    let mut sims = [Sim::start(&with_clock), Sim::stepped(10)];
    let dir = scratch("browser");
    let config = dir.join("round.toml");
    std::fs::write(&config, "[[board]]\nwhite = \"Alpha, Ann\"\n").expect("config");
    let mut daemon = Daemon::start(
        &[&sims[0].path, &sims[1].path],
        &["--config", &config.display().to_string()],
    );
    daemon.wait_json("/api/boards", WAIT, |boards| {
        boards
            .as_array()
            .is_some_and(|b| b.iter().all(|board| board["connection"] == "responding"))
    });
    let mut browser = Browser::open(&binary, &format!("{}/", daemon.base));

    let before = browser.wait_for(&board_expression(2), |v| v["plies"] == 0);
    assert_eq!(before["squares"], 64);
    assert_eq!(before["last"], json!([]));
    assert_eq!(before["status"], "in play");
    assert_eq!((&before["e1"], &before["e8"]), (&json!("♔"), &json!("♚")));
    let one = browser.wait_for(&board_expression(1), |v| v["plies"] == 0);
    assert_eq!(one["white"], "♔ Alpha, Ann");
    assert_eq!(one["live"], "live");

    let first = sims[1].step();
    let expected = daemon.wait_json("/api/boards/2", WAIT, |b| b["moves"] == json!([first]));
    let uci = expected["last_move"]
        .as_str()
        .expect("last move")
        .to_string();
    let after = browser.wait_for(&board_expression(2), |v| v["plies"] == 1);
    let mut squares = vec![uci[..2].to_string(), uci[2..4].to_string()];
    squares.sort();
    assert_eq!(after["last"], json!(squares), "{after}");
    assert_eq!(after["moves"], format!("1. {first}"));
    let untouched = browser.eval(&board_expression(1));
    assert_eq!(untouched["plies"], 0, "board 1 did not move");

    // Board 1 has a clock: once a move of each side has shown which side is White's,
    // the page marks the clock that runs.
    let moves = [sims[0].step(), sims[0].step()];
    daemon.wait_json("/api/boards/1", WAIT, |b| {
        b["moves"] == json!(moves) && b["clock_running"] == "white"
    });
    let clocked = browser.wait_for(&board_expression(1), |v| v["running"] == json!(["white"]));
    assert!(
        clocked["clocks"][0]
            .as_str()
            .is_some_and(|c| c.contains(':')),
        "{clocked}"
    );
}
