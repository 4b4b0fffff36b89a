//! End to end: the real daemon reads the simulated board over a pseudo-terminal, and its
//! mirror equals the simulator's board after every move, noise and all.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use crate::harness::{Running, boardcast, poll, read_status, scratch};

/// A simulated board driven one move at a time through `--step`.
struct SteppedBoard {
    running: Running,
    stdin: ChildStdin,
    events: Receiver<serde_json::Value>,
    path: String,
}

impl SteppedBoard {
    fn start(extra: &[&str]) -> SteppedBoard {
        let corpus =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/twic1599_1000k.pgn");
        let mut cmd = boardcast();
        cmd.args([
            "simulate", "--json", "--step", "--seed", "11", "--speed", "4",
        ])
        .arg("--pgn")
        .arg(corpus)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
        let mut running = Running::start(cmd);
        let stdin = running.child.stdin.take().expect("stdin");
        let stdout = running.child.stdout.take().expect("stdout");
        let (tx, events) = mpsc::channel::<serde_json::Value>();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str(&line)
                    && tx.send(value).is_err()
                {
                    break;
                }
            }
        });
        let ready = events
            .recv_timeout(Duration::from_secs(20))
            .expect("ready line");
        assert_eq!(ready["event"], "ready", "{ready}");
        let path = ready["path"].as_str().expect("path").to_string();
        SteppedBoard {
            running,
            stdin,
            events,
            path,
        }
    }

    /// Plays the next move; returns the simulator's report of it.
    fn step(&mut self) -> serde_json::Value {
        self.stdin.write_all(b"\n").expect("step");
        self.stdin.flush().expect("flush");
        let report = self.events.recv_timeout(Duration::from_secs(30));
        report.unwrap_or_else(|_| panic!("no move report:\n{}", self.running.stderr_so_far()))
    }
}

/// Plays `plies` moves; after each the daemon's mirror must equal the simulator's board.
/// Returns the daemon's recorded SAN moves at the end and the simulator's.
fn mirror_follows_every_move(
    name: &str,
    sim_flags: &[&str],
    plies: usize,
) -> (Vec<String>, Vec<String>) {
    let mut board = SteppedBoard::start(sim_flags);
    let status = scratch(name).join("status.json");
    let mut cmd = boardcast();
    cmd.args(["run", "--status-file"])
        .arg(&status)
        .args(["--port", &board.path]);
    let mut daemon = Running::start(cmd);
    let mirror =
        || read_status(&status).and_then(|s| s["boards"][0]["board"].as_str().map(String::from));
    poll(Duration::from_secs(20), mirror)
        .unwrap_or_else(|| panic!("no mirror:\n{}", daemon.stderr_so_far()));
    let mut played = Vec::new();
    for _ in 0..plies {
        let report = board.step();
        assert_eq!(report["event"], "move", "{report}");
        played.push(report["san"].as_str().expect("san").to_string());
        let expected = report["board"].as_str().expect("board text").to_string();
        let seen = poll(Duration::from_secs(10), || {
            mirror().filter(|m| *m == expected)
        });
        assert!(
            seen.is_some(),
            "after ply {} ({}), the mirror is\n{:?}\nbut the board is\n{:?}\ndaemon log:\n{}",
            report["ply"],
            report["san"],
            mirror(),
            expected,
            daemon.stderr_so_far()
        );
    }
    let json = read_status(&status).expect("status");
    assert_eq!(json["boards"][0]["connection"], "responding");
    assert!(daemon.is_running());
    let moves = || -> Option<Vec<String>> {
        let json = read_status(&status)?;
        let moves = json["boards"][0]["game"]["moves"].as_array()?;
        let moves: Vec<String> = moves
            .iter()
            .filter_map(|m| m.as_str().map(String::from))
            .collect();
        (moves.len() >= played.len()).then_some(moves)
    };
    let recorded = poll(Duration::from_secs(10), moves).unwrap_or_else(|| {
        let json = read_status(&status).expect("status");
        eprintln!("{}", json["boards"][0]["game"]);
        Vec::new()
    });
    (recorded, played)
}

#[test]
fn mirror_equals_the_board_after_every_move_with_noise() {
    let (recorded, played) = mirror_follows_every_move(
        "mirror-noise",
        &[
            "--game",
            "2",
            "--flicker",
            "--jadoube",
            "--wrong-code",
            "--garbage-on-connect",
        ],
        40,
    );
    assert_eq!(recorded, played);
}

#[test]
fn mirror_follows_a_rotated_occupancy_only_board() {
    // The daemon is not told the board is occupancy-only: the board's version (1.0, as a
    // Pegasus reports) must be enough for the moves to come out right.
    let (recorded, played) = mirror_follows_every_move(
        "mirror-rotated",
        &["--game", "5", "--rotated", "--occupancy-only"],
        20,
    );
    assert_eq!(recorded, played);
}
