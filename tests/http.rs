//! The HTTP API of the real daemon against simulated boards on pseudo-terminals: JSON
//! and PGN endpoints, the PGN directory, game data from the config file and the API,
//! SSE with resume, WebSocket, the LiveChess-compatible API, and corrections reaching
//! every consumer.

use std::time::Duration;

use serde_json::json;

use crate::harness::{boardcast, scratch};
use crate::http_harness::{Daemon, Sim, TOKEN, is_move, sans, send_json};

const WAIT: Duration = Duration::from_secs(30);

#[test]
fn boards_pgn_files_and_game_data_follow_the_game() {
    let dir = scratch("http-api");
    let config = dir.join("round.toml");
    std::fs::write(
        &config,
        "event = \"Test Open\"\nsite = \"Utrecht\"\nround = \"5\"\n\n\
         [[board]]\nwhite = \"Alpha, Ann\"\nblack = \"Beta, Bob\"\n",
    )
    .expect("config");
    let pgn_dir = dir.join("pgn");
    let mut sims = [Sim::stepped(3), Sim::stepped(4)];
    let paths: Vec<String> = sims.iter().map(|s| s.path.clone()).collect();
    let mut daemon = Daemon::start(
        &[&paths[0], &paths[1]],
        &[
            "--config",
            &config.display().to_string(),
            "--pgn-dir",
            &pgn_dir.display().to_string(),
        ],
    );
    let mut played = vec![Vec::new(), Vec::new()];
    for _ in 0..4 {
        for (sim, moves) in sims.iter_mut().zip(&mut played) {
            moves.push(sim.step());
        }
    }
    for (i, moves) in played.iter().enumerate() {
        let path = format!("/api/boards/{}", i + 1);
        daemon.wait_json(&path, WAIT, |b| sans(b) == *moves);
    }

    let boards = daemon.json("/api/boards");
    assert_eq!(boards.as_array().map(Vec::len), Some(2), "{boards}");
    let one = &boards[0];
    assert_eq!(one["id"], 1);
    assert_eq!(one["port"], paths[0].as_str());
    assert_eq!(one["connection"], "responding");
    assert!(one["serial"].is_string(), "{one}");
    assert_eq!(one["orientation"], "normal");
    assert_eq!(one["status"]["kind"], "in_play");
    assert_eq!(one["result"], "*");
    assert_eq!(one["round"], "5.1");
    assert_eq!(one["white"], "Alpha, Ann");
    assert_eq!(boards[1]["white"], "?");
    assert!(
        one["fen"]
            .as_str()
            .is_some_and(|f| f.ends_with(" w KQkq - 0 3") || f.contains(" w ")),
        "{one}"
    );
    assert_eq!(one["last_move"].as_str().map(str::len), Some(4), "{one}");

    let (status, kind, pgn) = daemon.get("/api/boards/1/pgn");
    assert_eq!((status, kind.as_str()), (200, "application/x-chess-pgn"));
    for tag in [
        "[Event \"Test Open\"]",
        "[Site \"Utrecht\"]",
        "[Round \"5.1\"]",
        "[White \"Alpha, Ann\"]",
        "[Black \"Beta, Bob\"]",
        "[Result \"*\"]",
    ] {
        assert!(pgn.contains(tag), "{tag} missing:\n{pgn}");
    }
    let movetext = format!(
        "1. {} {} 2. {} {} *",
        played[0][0], played[0][1], played[0][2], played[0][3]
    );
    assert!(pgn.contains(&movetext), "{movetext} missing:\n{pgn}");

    let (status, _, round) = daemon.get("/games.pgn");
    assert_eq!(status, 200);
    let second = daemon.get("/api/boards/2/pgn").2;
    assert_eq!(round, format!("{pgn}{second}"), "board order");
    assert!(second.contains("[Round \"5.2\"]"), "{second}");

    let games = daemon.json("/api/boards/1/games");
    assert_eq!(games[0]["number"], 1, "{games}");
    assert_eq!(games[0]["plies"], 4, "{games}");
    let (status, _, first) = daemon.get("/api/boards/1/games/1.pgn");
    assert_eq!((status, first.as_str()), (200, pgn.as_str()));
    assert_eq!(daemon.get("/api/boards/1/games/2.pgn").0, 404);
    assert_eq!(daemon.get("/api/boards/3").0, 404);

    let file = |name: &str| std::fs::read_to_string(pgn_dir.join(name)).unwrap_or_default();
    crate::harness::poll(WAIT, || (file("games.pgn") == round).then_some(()))
        .unwrap_or_else(|| panic!("games.pgn:\n{}", file("games.pgn")));
    assert_eq!(file("game-1.pgn"), pgn);
    assert_eq!(file("game-2.pgn"), second);

    // Players through the API: the token is required.
    let url = format!("{}/api/boards/2/players", daemon.base);
    let players = json!({"white": "Gamma, Gil", "black": "Delta, Dee"});
    assert_eq!(send_json("PUT", &url, None, &players).0, 401);
    assert_eq!(send_json("PUT", &url, Some("wrong"), &players).0, 401);
    // Refused before its body is judged: a caller without the token learns nothing more.
    let malformed = json!({"colour": "white"});
    assert_eq!(send_json("PUT", &url, None, &malformed).0, 401);
    let (status, body) = send_json("PUT", &url, Some(TOKEN), &players);
    assert_eq!(status, 200, "{body}");
    daemon.wait_json("/api/boards/2", WAIT, |b| b["black"] == "Delta, Dee");
    crate::harness::poll(WAIT, || {
        file("game-2.pgn")
            .contains("[White \"Gamma, Gil\"]")
            .then_some(())
    })
    .unwrap_or_else(|| panic!("game-2.pgn:\n{}", file("game-2.pgn")));
    assert!(
        daemon
            .get("/games.pgn")
            .2
            .contains("[Black \"Delta, Dee\"]")
    );
    let round_url = format!("{}/api/round", daemon.base);
    let (status, _) = send_json("PUT", &round_url, Some(TOKEN), &json!({"round": "6"}));
    assert_eq!(status, 200);
    crate::harness::poll(WAIT, || {
        daemon
            .get("/games.pgn")
            .2
            .contains("[Round \"6.2\"]")
            .then_some(())
    })
    .expect("round 6 in games.pgn");
    assert!(!daemon.running.stderr_so_far().contains("panicked"));
}

#[test]
fn sse_streams_every_move_and_resumes_without_gaps() {
    let mut sim = Sim::stepped(5);
    let mut daemon = Daemon::start(&[&sim.path], &[]);
    daemon.wait_json("/api/boards/1", WAIT, |b| b["connection"] == "responding");
    let stream = daemon.sse("/api/events", None);
    let (_, snapshot) = stream.next(WAIT).expect("a snapshot first");
    assert_eq!(snapshot["type"], "snapshot", "{snapshot}");
    assert_eq!(snapshot["boards"][0]["id"], 1);

    let first = sim.step();
    let events = stream.until(WAIT, |e| is_move(e, 1));
    let (move_id, event) = events.last().expect("the move").clone();
    assert_eq!(event["san"], first.as_str());
    assert_eq!(event["board"], 1);
    assert_eq!(event["state"]["moves"], json!([first]));
    let board_stream = daemon.sse("/api/boards/1/events", Some(move_id));
    drop(stream);

    // Two moves while the client is away; it comes back with Last-Event-ID.
    let second = sim.step();
    let third = sim.step();
    let live = board_stream.until(WAIT, |e| is_move(e, 3));
    daemon.wait_json("/api/boards/1", WAIT, |b| sans(b).len() == 3);
    let resumed = daemon.sse("/api/events", Some(move_id));
    let caught_up = resumed.until(WAIT, |e| is_move(e, 3));
    let ids: Vec<u64> = caught_up.iter().map(|(id, _)| *id).collect();
    let expected: Vec<u64> = (move_id + 1..=move_id + ids.len() as u64).collect();
    assert_eq!(ids, expected, "no gaps, nothing twice");
    let sans_seen: Vec<&str> = caught_up
        .iter()
        .filter(|(_, e)| e["type"] == "move")
        .filter_map(|(_, e)| e["san"].as_str())
        .collect();
    assert_eq!(sans_seen, [second.as_str(), third.as_str()]);
    assert_eq!(
        live.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        ids,
        "the board's stream carries the same events"
    );

    // An id the daemon no longer (or never) had: a snapshot, not a silent gap.
    let stale = daemon.sse("/api/events", Some(1_000_000));
    let (_, event) = stale.next(WAIT).expect("snapshot");
    assert_eq!(event["type"], "snapshot");
    assert_eq!(sans(&event["boards"][0]).len(), 3);
}

#[test]
fn websocket_and_livechess_clients_follow_the_board() {
    let mut sim = Sim::stepped(6);
    let mut daemon = Daemon::start(&[&sim.path], &[]);
    let board = daemon.wait_json("/api/boards/1", WAIT, |b| b["serial"].is_string());
    let serial = board["serial"].as_str().expect("serial").to_string();

    let mut ws = daemon.websocket("/api/ws");
    assert_eq!(ws.next()["type"], "snapshot");
    let mut livechess = daemon.websocket("/api/v1.0");
    livechess.send(&json!({"id": 1, "call": "eboards"}));
    let boards = livechess.next();
    assert_eq!(boards["response"], "call", "{boards}");
    assert_eq!(boards["id"], 1);
    assert_eq!(boards["param"][0]["serialnr"], serial.as_str());
    assert_eq!(boards["param"][0]["source"], sim.path.as_str());
    assert_eq!(boards["param"][0]["state"], "ACTIVE");
    assert_eq!(
        boards["param"][0]["board"],
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    );
    livechess.send(&json!({"id": 2, "call": "subscribe",
        "param": {"feed": "eboardevent", "id": 7, "param": {"serialnr": serial}}}));
    let ack = livechess.next();
    assert_eq!(
        (&ack["response"], &ack["id"]),
        (&json!("call"), &json!(2)),
        "{ack}"
    );
    let feed = livechess.next();
    assert_eq!(feed["response"], "feed");
    assert_eq!(feed["id"], 7);
    assert_eq!(feed["param"]["san"], json!([]));

    let first = sim.step();
    let second = sim.step();
    let event = ws.until(|e| is_move(e, 2));
    assert_eq!(event["san"], second.as_str());
    assert_eq!(event["state"]["moves"], json!([first, second]));
    let feed = livechess.until(|m| m["param"]["san"].as_array().is_some_and(|a| a.len() == 2));
    assert_eq!(feed["param"]["serialnr"], serial.as_str());
    assert_eq!(feed["param"]["san"], json!([first, second]));
    assert_eq!(feed["param"]["match"], true);
    assert!(
        feed["param"]["board"]
            .as_str()
            .is_some_and(|b| b != "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"),
        "{feed}"
    );
    livechess.send(&json!({"id": 3, "call": "nosuchcall"}));
    assert_eq!(livechess.until(|m| m["id"] == 3)["response"], "error");
}

#[test]
fn a_correction_reaches_every_consumer_and_rewrites_the_mainline() {
    let dir = scratch("http-correction");
    let pgn_dir = dir.join("pgn");
    let mut sim = Sim::interactive();
    let mut daemon = Daemon::start(&[&sim.path], &["--pgn-dir", &pgn_dir.display().to_string()]);
    daemon.wait_json("/api/boards/1", WAIT, |b| b["connection"] == "responding");
    let stream = daemon.sse("/api/events", None);
    let mut ws = daemon.websocket("/api/ws");
    sim.send("e4");
    sim.send("e5");
    daemon.wait_json("/api/boards/1", WAIT, |b| sans(b) == ["e4", "e5"]);
    // Black's pawn goes on to e6 instead: the record is corrected, not extended.
    sim.send("lift e5");
    sim.send("place e6 p");
    let events = stream.until(WAIT, |e| {
        e["type"] == "correction" || e["type"] == "retraction"
    });
    let (_, correction) = events.last().expect("correction");
    assert_eq!(correction["type"], "correction", "{correction}");
    assert_eq!(correction["ply"], 2);
    assert_eq!(correction["old_san"], "e5");
    assert_eq!(correction["new_san"], "e6");
    assert_eq!(ws.until(|e| e["type"] == "correction")["new_san"], "e6");
    let board = daemon.wait_json("/api/boards/1", WAIT, |b| sans(b) == ["e4", "e6"]);
    assert_eq!(board["last_move"], "e7e6");
    let pgn = daemon.get("/api/boards/1/pgn").2;
    assert!(pgn.contains("1. e4 e6 *"), "{pgn}");
    assert!(
        !pgn.contains('(') && !pgn.contains("e5"),
        "no variation:\n{pgn}"
    );
    let file = || std::fs::read_to_string(pgn_dir.join("game-1.pgn")).unwrap_or_default();
    crate::harness::poll(WAIT, || (file() == pgn).then_some(()))
        .unwrap_or_else(|| panic!("game-1.pgn:\n{}", file()));

    // A takeback (casual mode) retracts the move everywhere.
    sim.send("lift e6");
    sim.send("place e7 p");
    let events = stream.until(WAIT, |e| e["type"] == "retraction");
    assert_eq!(
        events.last().expect("retraction").1["retracted"],
        json!(["e6"])
    );
    daemon.wait_json("/api/boards/1", WAIT, |b| sans(b) == ["e4"]);
    crate::harness::poll(WAIT, || {
        daemon.get("/games.pgn").2.contains("1. e4 *").then_some(())
    })
    .expect("games.pgn shows the retraction");
}

#[test]
fn a_bad_config_file_is_reported_with_file_line_and_field() {
    let dir = scratch("http-config");
    let config = dir.join("round.toml");
    // (file, whether --port is given too, the line and field the error names, what it says)
    let cases = [
        (
            "event = \"Open\"\nround = 3\n",
            true,
            "line 2, field \"round\"",
            "string",
        ),
        (
            "[push]\nurl = \"lichess.org/push\"\ntoken = \"t\"\n",
            true,
            "line 2, field \"url\"",
            "http:// or https://",
        ),
        (
            "[[board]]\nport = \"/dev/a\"\nserial = \"1\"\n",
            false,
            "line 3, field \"serial\"",
            "not both",
        ),
        (
            "[[board]]\nserial = \"1\"\n[[board]]\nserial = \"1\"\n",
            false,
            "line 4, field \"serial\"",
            "boards 1 and 2 name the same board",
        ),
        (
            "[[board]]\nserial = \"1\"\n\n[[board]]\nwhite = \"A\"\n",
            false,
            "line 4:",
            "board 2 has neither port nor serial number",
        ),
        (
            "[[board]]\nwhite = \"A\"\nport = \"/dev/a\"\n",
            true,
            "line 3, field \"port\"",
            "do not also give --port",
        ),
    ];
    for (text, port, place, what) in cases {
        std::fs::write(&config, text).expect("config");
        let mut cmd = boardcast();
        cmd.args(["run", "--no-http", "--config"]).arg(&config);
        if port {
            cmd.args(["--port", "/dev/null"]);
        }
        let output = cmd.output().expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{text:?}: {stderr}");
        let named = format!("config file {}, {place}", config.display());
        assert!(
            stderr.contains(&named) && stderr.contains(what),
            "{text:?}: wanted {named:?} and {what:?}: {stderr}"
        );
    }
}

#[test]
fn the_arbiter_resolves_an_ambiguous_board_through_the_api() {
    // Nf3, Nf6 and Nc3 are made before the daemon reads the board: its first dump shows
    // them all, and White's two moves commute, so the order is the arbiter's to give.
    let mut sim = Sim::interactive();
    for mv in ["Nf3", "Nf6", "Nc3"] {
        sim.send(mv);
    }
    for _ in 0..3 {
        sim.step();
    }
    let mut daemon = Daemon::start(&[&sim.path], &[]);
    let board = daemon.wait_json("/api/boards/1", WAIT, |b| {
        b["status"]["kind"] == "ambiguous"
    });
    let mut candidates: Vec<&str> = board["status"]["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    candidates.sort_unstable();
    assert_eq!(candidates, ["Nc3 Nf6 Nf3", "Nf3 Nf6 Nc3"], "{board}");
    assert!(sans(&board).is_empty(), "nothing recorded: {board}");
    let url = format!("{}/api/boards/1/resolve", daemon.base);
    let pick = json!({"moves": "Nc3 Nf6 Nf3"});
    assert_eq!(send_json("POST", &url, None, &pick).0, 401);
    let (status, body) = send_json("POST", &url, Some(TOKEN), &json!({"moves": "Nf3 Nc6 Nc3"}));
    assert_eq!(status, 409, "not a candidate: {body}");
    assert!(
        body.contains("Nc3 Nf6 Nf3"),
        "the candidates are named: {body}"
    );
    let (status, body) = send_json(
        "POST",
        &url,
        Some(TOKEN),
        &json!({"candidate": 1, "moves": "Nf3"}),
    );
    assert_eq!(status, 400, "{body}");
    let (status, body) = send_json("POST", &url, Some(TOKEN), &pick);
    assert_eq!(status, 200, "{body}");
    daemon.wait_json("/api/boards/1", WAIT, |b| sans(b) == ["Nc3", "Nf6", "Nf3"]);
    let pgn = daemon.get("/api/boards/1/pgn").2;
    assert!(pgn.contains("picked by the arbiter"), "{pgn}");
    // The game goes on from the arbiter's order.
    sim.send("e5");
    daemon.wait_json("/api/boards/1", WAIT, |b| {
        sans(b) == ["Nc3", "Nf6", "Nf3", "e5"]
    });
    // Nothing is open any more.
    let (status, body) = send_json("POST", &url, Some(TOKEN), &json!({"candidate": 0}));
    assert_eq!(status, 409, "{body}");
}

#[test]
fn the_arbiter_enters_moves_lost_beyond_the_search_through_the_api() {
    // Five plies are made before the daemon reads the board, one more than it searches:
    // the board is irregular until the arbiter enters moves from the scoresheets.
    let mut sim = Sim::interactive();
    for mv in ["e4", "e5", "Nf3", "Nc6", "Bb5"] {
        sim.send(mv);
    }
    for _ in 0..5 {
        sim.step();
    }
    let mut daemon = Daemon::start(&[&sim.path], &[]);
    daemon.wait_json("/api/boards/1", WAIT, |b| {
        b["status"]["kind"] == "irregular"
    });
    let url = format!("{}/api/boards/1/resolve", daemon.base);
    let entry = json!({"moves": "e4 e5 Nf3 Nc6"});
    assert_eq!(send_json("POST", &url, None, &entry).0, 401);
    for (wrong, why) in [
        (
            json!({"moves": "e4 e5 Nf3 Nf6"}),
            "the board does not follow",
        ),
        (json!({"moves": "e4 e4"}), "illegal"),
        (json!({"candidate": 0}), "no ambiguity"),
    ] {
        let (status, body) = send_json("POST", &url, Some(TOKEN), &wrong);
        assert_eq!(status, 409, "{why}: {body}");
    }
    let board = daemon.json("/api/boards/1");
    assert!(sans(&board).is_empty(), "nothing recorded: {board}");
    // Four plies entered: the engine explains the fifth (Bb5) itself.
    let (status, body) = send_json("POST", &url, Some(TOKEN), &entry);
    assert_eq!(status, 200, "{body}");
    daemon.wait_json("/api/boards/1", WAIT, |b| {
        sans(b) == ["e4", "e5", "Nf3", "Nc6", "Bb5"]
    });
    let pgn = daemon.get("/api/boards/1/pgn").2;
    assert!(
        pgn.contains("e4 e5 Nf3 Nc6 entered by the arbiter"),
        "{pgn}"
    );
    sim.send("a6");
    daemon.wait_json("/api/boards/1", WAIT, |b| sans(b).len() == 6);
    // The scoresheet has the knights first: the arbiter amends the record from ply 1
    // (the board shows the same position either way).
    let amendment = json!({"from": 1, "moves": "Nf3 Nc6 e4 e5 Bb5 a6"});
    assert_eq!(send_json("POST", &url, None, &amendment).0, 401);
    let (status, body) = send_json(
        "POST",
        &url,
        Some(TOKEN),
        &json!({"from": 1, "candidate": 0}),
    );
    assert_eq!(status, 400, "from goes with moves only: {body}");
    assert!(body.contains("candidate"), "{body}");
    for (wrong, why) in [
        (json!({"from": 8, "moves": "Bb5"}), "ply 8 is not recorded"),
        (
            json!({"from": 5, "moves": "Bc4 Nf6"}),
            "the board does not follow",
        ),
    ] {
        let (status, body) = send_json("POST", &url, Some(TOKEN), &wrong);
        assert_eq!(status, 409, "{why}: {body}");
    }
    let (status, body) = send_json("POST", &url, Some(TOKEN), &amendment);
    assert_eq!(status, 200, "{body}");
    daemon.wait_json("/api/boards/1", WAIT, |b| {
        sans(b) == ["Nf3", "Nc6", "e4", "e5", "Bb5", "a6"]
    });
    let pgn = daemon.get("/api/boards/1/pgn").2;
    assert!(
        pgn.contains("replacing e4 e5 Nf3 Nc6 Bb5 a6 (from ply 1)"),
        "{pgn}"
    );
}
