//! The token on the real daemon: every call that changes anything is refused (401)
//! without it and leaves the boards and the round as they were; reading needs none.

use std::time::Duration;

use serde_json::json;

use crate::http_harness::{Daemon, Sim, TOKEN, sans, send_json};

const WAIT: Duration = Duration::from_secs(30);

/// Everything the API shows that a call could change.
fn shown(daemon: &Daemon) -> (serde_json::Value, serde_json::Value, String, String) {
    (
        daemon.json("/api/boards"),
        daemon.json("/api/round"),
        daemon.get("/games.pgn").2,
        daemon.get("/api/boards/1/games").2,
    )
}

#[test]
fn every_state_changing_call_is_refused_without_the_token() {
    let mut sim = Sim::stepped(3);
    let mut daemon = Daemon::start(&[&sim.path], &[]);
    let played = [sim.step(), sim.step()];
    daemon.wait_json("/api/boards/1", WAIT, |b| sans(b) == played);
    let before = shown(&daemon);
    // The state-changing routes of `routes()` in src/http/mod.rs (its unit test checks
    // that these are the only ones), each with a body it would act on.
    let calls = [
        ("PUT", "/api/round", json!({"round": "9"})),
        (
            "PUT",
            "/api/boards/1/players",
            json!({"white": "Intruder", "black": "Intruder"}),
        ),
        ("POST", "/api/boards/1/result", json!({"result": "1-0"})),
        ("POST", "/api/boards/1/accept", json!({})),
        ("POST", "/api/boards/1/setup", json!({})),
        (
            "POST",
            "/api/boards/1/resolve",
            json!({"from": 1, "moves": played.join(" ")}),
        ),
    ];
    // The last wrong token has the right length.
    let wrong = TOKEN.replace('0', "1");
    for (method, path, body) in &calls {
        let url = format!("{}{path}", daemon.base);
        for token in [None, Some("wrong"), Some(wrong.as_str())] {
            let (status, answer) = send_json(method, &url, token, body);
            assert_eq!(status, 401, "{method} {path} with {token:?}: {answer}");
        }
    }
    assert_eq!(shown(&daemon), before, "a refused call changed something");

    // Reading needs no token.
    for path in [
        "/",
        "/viewer.js",
        "/viewer.css",
        "/games.pgn",
        "/api/boards",
        "/api/boards/1",
        "/api/boards/1/pgn",
        "/api/boards/1/games",
        "/api/boards/1/games/1.pgn",
        "/api/round",
        "/api/v1.0/eboards",
    ] {
        let (status, _, body) = daemon.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
    }
    for path in ["/api/events", "/api/boards/1/events"] {
        let events = daemon.sse(path, None);
        assert!(events.next(WAIT).is_some(), "no event from {path}");
    }
    assert_eq!(daemon.websocket("/api/ws").next()["type"], "snapshot");
    let mut livechess = daemon.websocket("/api/v1.0");
    livechess.send(&json!({"id": 1, "call": "eboards"}));
    let answer = livechess.until(|m| m["response"] == "call");
    assert_eq!(
        answer["param"].as_array().map(Vec::len),
        Some(1),
        "{answer}"
    );
}
