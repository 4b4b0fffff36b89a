//! End to end, bus mode: the real daemon reads a chain of simulated boards on ONE
//! pseudo-terminal (`run --bus`), each board playing a different real game, with
//! corrupted checksums injected; one more board on the chain goes silent mid-game.

use std::path::Path;
use std::time::Duration;

use crate::games::{decided_result, expected_sans};
use crate::harness::{Running, boardcast, poll, read_status, scratch};
use boardcast_simulator::{BusBoardConfig, Identity, Script, SimConfig, spawn_bus_on_pty};

/// Share of replies sent with a corrupted checksum.
const FAULTS: f64 = 0.1;

/// Short real games (24 to 40 plies), in corpus order.
fn short_games(count: usize) -> Vec<Script> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/twic1599_1000k.pgn");
    let text = std::fs::read_to_string(path).expect("corpus");
    Script::parse_pgn(&text)
        .expect("corpus parses")
        .into_iter()
        .filter(|g| (24..=40).contains(&g.moves().len()))
        .take(count)
        .collect()
}

fn serial(i: usize) -> String {
    format!("{:05}", 1025 + i)
}

/// The status of the board with this serial number.
fn board<'a>(status: &'a serde_json::Value, serial: &str) -> Option<&'a serde_json::Value> {
    status["boards"]
        .as_array()?
        .iter()
        .find(|b| b["serial"] == serial)
}

fn moves(board: &serde_json::Value) -> Vec<String> {
    board["game"]["moves"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_chain_of_boards_on_one_port_is_recorded_exactly_and_a_silent_board_stops_no_other() {
    let games = short_games(4);
    assert_eq!(games.len(), 4);
    let silent = 3;
    let configs = games
        .iter()
        .enumerate()
        .map(|(i, script)| BusBoardConfig {
            sim: SimConfig {
                seed: 500 + i as u64,
                speed: 2.0,
                identity: Some(Identity {
                    serial: serial(i),
                    ..Identity::new(false)
                }),
                ..SimConfig::default()
            },
            script: script.clone(),
            checksum_faults: FAULTS,
            silent_after: (i == silent).then_some(Duration::from_secs(8)),
        })
        .collect();
    let chain = spawn_bus_on_pty(configs).expect("simulated chain");
    let dir = scratch("bus");
    let status = dir.join("status.json");
    let mut cmd = boardcast();
    cmd.env("RUST_LOG", "debug")
        .arg("run")
        .arg("--no-http")
        .arg("--bus")
        .arg(chain.path())
        .arg("--status-file")
        .arg(&status);
    let mut daemon = Running::start(cmd);

    // Every board is found and numbered 1 to 4 (in serial order: they all answer the
    // first ping).
    let found = poll(Duration::from_secs(20), || {
        let s = read_status(&status)?;
        let serials: Vec<String> = s["boards"]
            .as_array()?
            .iter()
            .filter_map(|b| b["serial"].as_str().map(String::from))
            .collect();
        (serials.len() == 4).then_some(serials)
    });
    assert_eq!(
        found,
        Some((0..4).map(serial).collect::<Vec<_>>()),
        "{}",
        daemon.stderr_so_far()
    );

    // The silent board is reported not responding while the others are still playing.
    let reported = poll(Duration::from_secs(30), || {
        let s = read_status(&status)?;
        let gone = board(&s, &serial(silent))?["connection"] == "not_responding";
        let others_playing = (0..3)
            .all(|i| board(&s, &serial(i)).is_some_and(|b| b["connection"] == "responding"))
            && !(0..3).all(|i| chain.board_finished(i));
        (gone && others_playing).then_some(())
    });
    assert!(
        reported.is_some(),
        "silent board not reported while the others play:\n{}",
        daemon.stderr_so_far()
    );

    let finished = poll(Duration::from_secs(300), || {
        (0..3).all(|i| chain.board_finished(i)).then_some(())
    });
    assert!(finished.is_some(), "games did not finish");
    let mut failures = Vec::new();
    for (i, script) in games.iter().enumerate().take(3) {
        let want = expected_sans(script);
        let result = decided_result(script);
        let exact = poll(Duration::from_secs(10), || {
            let s = read_status(&status)?;
            let b = board(&s, &serial(i))?;
            (moves(b) == want && b["game"]["result"] == result).then_some(())
        });
        if exact.is_none() {
            let s = read_status(&status).unwrap_or_default();
            let got = board(&s, &serial(i)).map(moves).unwrap_or_default();
            failures.push(format!(
                "board {}: want {want:?} ({result}), got {got:?}",
                serial(i)
            ));
        }
    }
    let s = read_status(&status).expect("status");
    let quiet = board(&s, &serial(silent)).expect("silent board");
    assert_eq!(quiet["connection"], "not_responding");
    // What it recorded before it went silent is the start of its game.
    let want = expected_sans(&games[silent]);
    let got = moves(quiet);
    assert!(got.len() < want.len() && want.starts_with(&got), "{got:?}");
    assert!(
        (0..3)
            .all(|i| board(&s, &serial(i)).is_some_and(|b| b["garbage_bytes"].as_u64() > Some(0))),
        "no checksum error was injected"
    );
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.join("\n"),
        daemon.stderr_so_far()
    );
    assert!(!daemon.stderr_so_far().contains("panicked"));
    chain.stop();
}
