//! End to end: `run --record` keeps the raw traffic, and `boardcast replay` re-runs it to
//! the same game the live daemon recorded; a recording and a journal replay with the
//! engine settings the daemon ran with.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use boardcast_simulator::{Script, SimConfig, Source, spawn_on_pty};

use crate::harness::{Running, boardcast, file_in, played_by_hand, poll, read_status, scratch};

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

/// A daemon on the board at `port` recording its traffic into `dir/rec`, its status in
/// `dir/status.json`, with `flags` besides; and those two paths.
fn recording_daemon(port: &Path, dir: &Path, flags: &[&OsStr]) -> (Running, PathBuf, PathBuf) {
    let status = dir.join("status.json");
    let recordings = dir.join("rec");
    let mut cmd = boardcast();
    cmd.args(["run", "--no-http", "--status-file"])
        .arg(&status)
        .arg("--record")
        .arg(&recordings)
        .args(flags)
        .arg("--port")
        .arg(port);
    (Running::start(cmd), status, recordings)
}

/// `boardcast replay FILE FLAGS`, which must succeed: its output (the PGN) and stderr.
fn replay(file: &Path, flags: &[&str]) -> (String, String) {
    let output = boardcast()
        .arg("replay")
        .arg(file)
        .args(flags)
        .output()
        .expect("replay runs");
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    (String::from_utf8(output.stdout).expect("utf-8"), stderr)
}

/// The board's moves in the status file, once there are `count`.
fn moves_once(status: &Path, count: usize, daemon: &mut Running) -> (Vec<String>, String) {
    poll(Duration::from_secs(30), || {
        let game = read_status(status)?["boards"][0]["game"].clone();
        let moves: Vec<String> = serde_json::from_value(game["moves"].clone()).ok()?;
        let pgn = game["pgn"].as_str()?.to_string();
        (moves.len() == count).then_some((moves, pgn))
    })
    .unwrap_or_else(|| panic!("live game incomplete:\n{}", daemon.stderr_so_far()))
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
    let (mut daemon, status, recordings) = recording_daemon(board.path(), &dir, &[]);
    poll(Duration::from_secs(120), || {
        board.is_finished().then_some(())
    })
    .unwrap_or_else(|| panic!("game did not finish:\n{}", daemon.stderr_so_far()));
    let (live, _) = moves_once(&status, MOVES.len(), &mut daemon);
    assert_eq!(live, MOVES);
    drop(daemon);

    let (pgn, _) = replay(&file_in(&recordings, "rec"), &[]);
    assert_eq!(sans(&pgn), MOVES, "{pgn}");
}

/// `file` as written before files named their engine settings: without the line.
fn without_settings(file: &Path) -> PathBuf {
    let text = std::fs::read_to_string(file).expect("file");
    let old: String = text
        .lines()
        .filter(|l| !l.starts_with("# engine "))
        .map(|l| format!("{l}\n"))
        .collect();
    let name = format!("old-{}", file.file_name().expect("name").to_string_lossy());
    let old_file = file.with_file_name(name);
    std::fs::write(&old_file, old).expect("old file");
    old_file
}

#[test]
fn recordings_and_journals_replay_with_the_engine_settings_they_were_made_with() {
    // A takeback in tournament mode: the record keeps the move (casual would retract it),
    // so a replay with the default settings would give another game.
    let (config, source, mut input) = played_by_hand();
    let board = spawn_on_pty(config, source).expect("board");
    let dir = scratch("record-settings");
    let journals = dir.join("journal");
    let flags = [
        "--tournament".as_ref(),
        "--journal".as_ref(),
        journals.as_os_str(),
    ];
    let (mut daemon, status, recordings) = recording_daemon(board.path(), &dir, &flags);
    let wait = Duration::from_secs(30);
    for san in ["e4", "e5", "Nf3"] {
        writeln!(input, "{san}").expect("to the board");
        let report = board.reports().recv_timeout(wait).expect("move played");
        assert_eq!(report.san, san);
    }
    moves_once(&status, 3, &mut daemon);
    for action in ["lift f3", "place g1 N"] {
        writeln!(input, "{action}").expect("to the board");
        std::thread::sleep(Duration::from_millis(300));
    }
    daemon
        .wait_for_stderr("irregular board", wait)
        .unwrap_or_else(|| panic!("takeback not seen:\n{}", daemon.stderr_so_far()));
    let (_, live_pgn) = moves_once(&status, 3, &mut daemon);
    assert_eq!(sans(&live_pgn), ["e4", "e5", "Nf3"], "{live_pgn}");
    drop(daemon);

    // The recording and the journal each name the settings the daemon ran with.
    for file in [file_in(&recordings, "rec"), file_in(&journals, "journal")] {
        // No flags: the recorded settings, said so.
        let (pgn, stderr) = replay(&file, &[]);
        assert_eq!(sans(&pgn), ["e4", "e5", "Nf3"], "{pgn}\n{stderr}");
        assert!(stderr.contains("as recorded"), "{stderr}");
        assert!(stderr.contains("mode tournament"), "{stderr}");
        // A flag given takes the place of its recorded setting, and is named.
        let (_, stderr) = replay(&file, &["--settle-ms", "200"]);
        assert!(stderr.contains("as recorded but --settle-ms"), "{stderr}");
        assert!(stderr.contains("settle-ms 200 "), "{stderr}");
        // The recorded tournament mode turned off: the takeback retracts the move.
        let (pgn, stderr) = replay(&file, &["--no-tournament"]);
        assert!(
            stderr.contains("as recorded but --no-tournament"),
            "{stderr}"
        );
        assert_eq!(sans(&pgn), ["e4", "e5"], "{pgn}\n{stderr}");
        // Without its settings line the file replays with the defaults: the takeback
        // retracts the move, as in casual mode.
        let (pgn, stderr) = replay(&without_settings(&file), &[]);
        assert!(stderr.contains("the defaults"), "{stderr}");
        assert_eq!(sans(&pgn), ["e4", "e5"], "{pgn}");
    }
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
