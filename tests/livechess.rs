//! A real third-party LiveChess client against the daemon: the `livechess` command-line
//! tool from PyPI, which reads LiveChess's `GET /api/v1.0/eboards` into strict records
//! (an unknown or missing field makes it fail). CI installs it (`.ci/run`); elsewhere
//! set `BOARDCAST_LIVECHESS_CLI` to the tool, or `BOARDCAST_SKIP_LIVECHESS_CLI=1` to skip.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::harness::{Running, boardcast};
use crate::http_harness::{Daemon, Sim, TOKEN, corpus};

const WAIT: Duration = Duration::from_secs(30);

fn livechess_cli() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("BOARDCAST_LIVECHESS_CLI") {
        return Some(path.into());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("livechess"))
        .find(|candidate| candidate.is_file())
}

/// A loopback address of this test run's own: the tool always talks to port 1982, as
/// LiveChess listens there, so the daemon takes port 1982 on an address nobody else uses.
fn own_loopback_address() -> String {
    let pid = std::process::id();
    format!(
        "127.{}.{}.{}",
        100 + (pid >> 16) % 100,
        (pid >> 8) & 0xff,
        (pid & 0xff).max(2)
    )
}

#[test]
fn the_livechess_cli_lists_the_boards_with_position_and_clock() {
    let Some(cli) = livechess_cli() else {
        if std::env::var_os("BOARDCAST_SKIP_LIVECHESS_CLI").is_some() {
            return;
        }
        panic!(
            "no `livechess` tool found: install it (.ci/run does) or set \
             BOARDCAST_SKIP_LIVECHESS_CLI=1"
        );
    };
    let mut sim = Sim::start(&[
        "--step",
        "--game",
        "6",
        "--pgn",
        &corpus().display().to_string(),
        "--clock",
        "--clock-minutes",
        "90",
    ]);
    let host = own_loopback_address();
    let mut cmd = boardcast();
    cmd.env("RUST_LOG", "info").args([
        "run",
        "--http",
        &format!("{host}:1982"),
        "--token",
        TOKEN,
        "--port",
        &sim.path,
    ]);
    let mut daemon = Daemon::attach(Running::start(cmd));
    daemon.wait_json("/api/boards/1", WAIT, |b| b["serial"].is_string());
    let moves: Vec<String> = (0..3).map(|_| sim.step()).collect();
    // The clock's sides are known once presses have been paired with moves.
    let board = daemon.wait_json("/api/boards/1", WAIT, |b| {
        b["moves"]
            .as_array()
            .is_some_and(|m| m.len() == moves.len())
            && b["clock_white"].is_string()
            && b["clock_running"] == "black"
    });
    let eboards = daemon.json("/api/v1.0/eboards");
    let entry = &eboards[0];
    assert_eq!(entry["serialnr"], board["serial"], "{eboards}");
    assert_eq!(
        entry["clock"]["run"], false,
        "Black's clock runs: {eboards}"
    );
    let placement = entry["board"].as_str().expect("board").to_string();
    assert_eq!(
        placement,
        board["fen"]
            .as_str()
            .expect("fen")
            .split(' ')
            .next()
            .unwrap()
    );

    let output = Command::new(&cli)
        .args(["eboards", "--host", &host])
        .env("COLUMNS", "300")
        .output()
        .expect("run the livechess tool");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "livechess eboards failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let row = stdout
        .lines()
        .find(|line| line.contains(board["serial"].as_str().unwrap()))
        .unwrap_or_else(|| panic!("no row for the board:\n{stdout}"));
    for expected in [sim.path.as_str(), "ACTIVE", placement.as_str()] {
        assert!(row.contains(expected), "{expected:?} missing from {row:?}");
    }
    // The tool draws the running side's mark after Black's time.
    assert!(
        row.trim_end()
            .trim_end_matches('│')
            .trim_end()
            .ends_with('○'),
        "{row:?}"
    );
}
