//! End to end: `run --record` keeps the raw traffic, and `boardcast replay` re-runs it to
//! the same game the live daemon recorded.

use std::io::{BufReader, Write};
use std::time::Duration;

use boardcast_simulator::{Script, SimConfig, Source, spawn_on_pty};

use crate::harness::{Running, boardcast, poll, read_status, scratch};

const MOVES: [&str; 14] = [
    "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Bxc6", "dxc6", "O-O", "f6", "d4", "exd4", "Nxd4", "c5",
];

/// The SAN moves of a PGN's movetext (comments, numbers and the result left out).
pub(crate) fn sans(pgn: &str) -> Vec<String> {
    let movetext = pgn.split("\n\n").nth(1).unwrap_or_default();
    let mut out = Vec::new();
    let mut in_comment = false;
    for token in movetext.split_whitespace() {
        if token.starts_with('{') {
            in_comment = true;
        }
        if !in_comment && !token.ends_with('.') && !["*", "1-0", "0-1", "1/2-1/2"].contains(&token)
        {
            out.push(token.to_string());
        }
        if token.ends_with('}') {
            in_comment = false;
        }
    }
    out
}

#[test]
fn a_recording_replays_to_the_same_game() {
    let script = Script::from_fen_and_san(None, &MOVES).expect("script");
    // Noise-free and at a human pace: this test is about the recording, not about how
    // inference copes with noise (the corpus and games tests are).
    let config = SimConfig {
        seed: 21,
        ..SimConfig::default()
    };
    let board = spawn_on_pty(config, Source::Script(script)).expect("board");
    let dir = scratch("record");
    let status = dir.join("status.json");
    let recordings = dir.join("rec");
    let mut cmd = boardcast();
    cmd.args(["run", "--no-http", "--status-file"])
        .arg(&status)
        .arg("--record")
        .arg(&recordings)
        .arg("--port")
        .arg(board.path());
    let mut daemon = Running::start(cmd);
    poll(Duration::from_secs(120), || {
        board.is_finished().then_some(())
    })
    .unwrap_or_else(|| panic!("game did not finish:\n{}", daemon.stderr_so_far()));
    let live = poll(Duration::from_secs(10), || {
        let game = read_status(&status)?["boards"][0]["game"].clone();
        let moves: Vec<String> = serde_json::from_value(game["moves"].clone()).ok()?;
        (moves.len() == MOVES.len()).then_some(moves)
    })
    .unwrap_or_else(|| panic!("live game incomplete:\n{}", daemon.stderr_so_far()));
    assert_eq!(live, MOVES);
    drop(daemon);

    let file = std::fs::read_dir(&recordings)
        .expect("recording dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "rec"))
        .expect("a recording");
    let output = boardcast()
        .arg("replay")
        .arg(&file)
        .output()
        .expect("replay runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let pgn = String::from_utf8(output.stdout).expect("utf-8");
    assert_eq!(sans(&pgn), MOVES, "{pgn}");
}

/// The recording a daemon run wrote in `dir` (one connection: one file).
fn recording_in(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .expect("recording dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "rec"))
        .expect("a recording")
}

#[test]
fn a_recording_replays_with_the_engine_settings_it_was_made_with() {
    // A takeback in tournament mode: the record keeps the move (casual would retract it),
    // so a replay with the default settings would give another game.
    let (reader, mut input) = std::io::pipe().expect("pipe");
    let script = Script::from_fen_and_san(None, &[]).expect("start position");
    let config = SimConfig {
        seed: 9,
        speed: 2.0,
        ..SimConfig::default()
    };
    let source = Source::Interactive(script, Box::new(BufReader::new(reader)));
    let board = spawn_on_pty(config, source).expect("board");
    let dir = scratch("record-settings");
    let status = dir.join("status.json");
    let recordings = dir.join("rec");
    let mut cmd = boardcast();
    cmd.args(["run", "--no-http", "--tournament", "--status-file"])
        .arg(&status)
        .arg("--record")
        .arg(&recordings)
        .arg("--port")
        .arg(board.path());
    let mut daemon = Running::start(cmd);
    let wait = Duration::from_secs(30);
    for san in ["e4", "e5", "Nf3"] {
        writeln!(input, "{san}").expect("to the board");
        let report = board.reports().recv_timeout(wait).expect("move played");
        assert_eq!(report.san, san);
    }
    let game = |daemon: &mut Running| {
        poll(wait, || {
            let game = read_status(&status)?["boards"][0]["game"].clone();
            let moves: Vec<String> = serde_json::from_value(game["moves"].clone()).ok()?;
            (moves.len() == 3).then_some(game)
        })
        .unwrap_or_else(|| panic!("live game incomplete:\n{}", daemon.stderr_so_far()))
    };
    game(&mut daemon);
    for action in ["lift f3", "place g1 N"] {
        writeln!(input, "{action}").expect("to the board");
        std::thread::sleep(Duration::from_millis(300));
    }
    daemon
        .wait_for_stderr("irregular board", wait)
        .unwrap_or_else(|| panic!("takeback not seen:\n{}", daemon.stderr_so_far()));
    let live = game(&mut daemon);
    let live_pgn = live["pgn"].as_str().expect("pgn").to_string();
    assert_eq!(sans(&live_pgn), ["e4", "e5", "Nf3"], "{live_pgn}");
    drop(daemon);

    let file = recording_in(&recordings);
    let replay = |flags: &[&str]| {
        let output = boardcast()
            .arg("replay")
            .arg(&file)
            .args(flags)
            .output()
            .expect("replay runs");
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(output.status.success(), "{stderr}");
        (String::from_utf8(output.stdout).expect("utf-8"), stderr)
    };
    // No flags: the recorded settings, said so.
    let (pgn, stderr) = replay(&[]);
    assert_eq!(sans(&pgn), ["e4", "e5", "Nf3"], "{pgn}\n{stderr}");
    assert!(stderr.contains("as recorded"), "{stderr}");
    assert!(stderr.contains("mode tournament"), "{stderr}");
    // A flag given takes the place of its recorded setting, and is named.
    let (_, stderr) = replay(&["--settle-ms", "200"]);
    assert!(stderr.contains("as recorded but --settle-ms"), "{stderr}");
    assert!(stderr.contains("settle-ms 200 "), "{stderr}");
    // Without its settings line the recording replays with the defaults: the takeback
    // retracts the move, as in casual mode.
    let text = std::fs::read_to_string(&file).expect("recording");
    let old: String = text
        .lines()
        .filter(|l| !l.starts_with("# engine "))
        .map(|l| format!("{l}\n"))
        .collect();
    let old_file = dir.join("old.rec");
    std::fs::write(&old_file, old).expect("old recording");
    let output = boardcast()
        .arg("replay")
        .arg(&old_file)
        .output()
        .expect("replay runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the defaults"), "{stderr}");
    let pgn = String::from_utf8(output.stdout).expect("utf-8");
    assert_eq!(sans(&pgn), ["e4", "e5"], "{pgn}");
}

#[test]
fn a_broken_recording_names_the_line() {
    let file = scratch("record-bad").join("bad.rec");
    std::fs::write(&file, "# boardcast recording v1\n10 < 8e0005\n20 < zz\n").unwrap();
    let output = boardcast()
        .arg("replay")
        .arg(&file)
        .output()
        .expect("replay runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 3"), "{stderr}");
    assert!(stderr.contains("bad.rec"), "{stderr}");
}

#[test]
fn recordings_out_of_order_are_refused_by_name() {
    let dir = scratch("record-order");
    let (first, second) = (dir.join("first.rec"), dir.join("second.rec"));
    std::fs::write(&first, "# boardcast recording v1\n10 > 42\n500 ! 20\n").unwrap();
    std::fs::write(&second, "# boardcast recording v1\n900 > 42\n").unwrap();
    let replay = |files: [&std::path::Path; 2]| {
        boardcast()
            .arg("replay")
            .args(files)
            .output()
            .expect("replay runs")
    };
    let in_order = replay([&first, &second]);
    assert!(in_order.status.success(), "{in_order:?}");
    let swapped = replay([&second, &first]);
    assert_eq!(swapped.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&swapped.stderr);
    assert!(stderr.contains("first.rec"), "{stderr}");
    assert!(
        stderr.contains("in the order they were written"),
        "{stderr}"
    );
    let bus = dir.join("bus.rec");
    std::fs::write(&bus, "# boardcast bus recording v1\n10 > 42\n").unwrap();
    let mixed = replay([&first, &bus]);
    assert_eq!(mixed.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&mixed.stderr);
    assert!(
        stderr.contains("bus.rec") && stderr.contains("alone"),
        "{stderr}"
    );
}
