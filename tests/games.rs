//! End to end: real games played on simulated boards over pseudo-terminals, read by the
//! real daemon binary (one daemon, many boards), recorded move for move.

use std::path::Path;
use std::time::Duration;

use boardcast_simulator::{Noise, PtyBoard, Script, SimConfig, Source, spawn_on_pty};
use shakmaty::san::San;
use shakmaty::{Chess, Color, Position};

use crate::harness::{Running, boardcast, poll, read_status, scratch};

/// Every how many games of the TWIC sample one is taken.
const STRIDE: usize = 55;

fn sample_games() -> Vec<Script> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/twic1599_1000k.pgn");
    let text = std::fs::read_to_string(path).expect("corpus");
    let games = Script::parse_pgn(&text).expect("corpus parses");
    games.into_iter().step_by(STRIDE).collect()
}

fn expected_sans(script: &Script) -> Vec<String> {
    let mut pos: Chess = script.start().clone();
    let mut sans = Vec::new();
    for m in script.moves() {
        sans.push(San::from_move(&pos, *m).to_string());
        pos.play_unchecked(*m);
    }
    sans
}

/// The result the final position decides, or "*" where it decides nothing.
fn decided_result(script: &Script) -> &'static str {
    let pos = script.final_position();
    if pos.is_checkmate() {
        match pos.turn() {
            Color::White => "0-1",
            Color::Black => "1-0",
        }
    } else if pos.is_stalemate() || pos.is_insufficient_material() {
        "1/2-1/2"
    } else {
        "*"
    }
}

#[test]
fn twenty_real_games_on_twenty_boards_are_recorded_exactly() {
    let games = sample_games();
    assert!(games.len() >= 20, "{} games", games.len());
    let boards: Vec<PtyBoard> = games
        .iter()
        .enumerate()
        .map(|(i, script)| {
            let config = SimConfig {
                seed: 1000 + i as u64,
                speed: 2.0,
                noise: Noise {
                    flicker: 0.1,
                    jadoube: 0.1,
                    wrong_code: 0.1,
                },
                rotated: i % 4 == 3,
                ..SimConfig::default()
            };
            spawn_on_pty(config, Source::Script(script.clone())).expect("simulated board")
        })
        .collect();
    let dir = scratch("games");
    let status = dir.join("status.json");
    let recordings = dir.join("recordings");
    let mut cmd = boardcast();
    cmd.env("RUST_LOG", "debug")
        .arg("run")
        .arg("--no-http")
        .arg("--record")
        .arg(&recordings)
        .arg("--status-file")
        .arg(&status);
    for board in &boards {
        cmd.arg("--port").arg(board.path());
    }
    let mut daemon = Running::start(cmd);
    let all_finished = poll(Duration::from_secs(600), || {
        boards.iter().all(PtyBoard::is_finished).then_some(())
    });
    assert!(
        all_finished.is_some(),
        "games did not finish:\n{}",
        daemon.stderr_so_far()
    );
    for (i, script) in games.iter().enumerate() {
        let want = expected_sans(script);
        let recorded = |json: &serde_json::Value| -> Vec<String> {
            json["boards"][i]["game"]["moves"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|m| m.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let json = poll(Duration::from_secs(5), || {
            read_status(&status).filter(|j| recorded(j) == want)
        });
        let json = json.unwrap_or_else(|| {
            let last = read_status(&status).unwrap_or_default();
            let got = recorded(&last);
            let tag = format!("board={}", i + 1);
            let log: Vec<String> = daemon
                .stderr_so_far()
                .lines()
                .filter(|l| (l.contains(&format!("{tag} ")) || l.ends_with(&tag)) && !l.contains("move "))
                .map(String::from)
                .collect();
            eprintln!("board {}: {:#}\nits log:\n{}", i + 1, last["boards"][i], log.join("\n"));
            eprintln!("recordings (replay with `boardcast replay FILE --events`): {}", recordings.display());
            let first = want.iter().zip(&got).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
            panic!(
                "board {} ({} vs {}): first difference at ply {}: want {:?}, got {:?}\nwant {} plies, got {}",
                i + 1,
                script.tag("White").unwrap_or("?"),
                script.tag("Black").unwrap_or("?"),
                first + 1,
                want.get(first),
                got.get(first),
                want.len(),
                got.len()
            )
        });
        assert_eq!(
            json["boards"][i]["game"]["result"],
            decided_result(script),
            "board {}",
            i + 1
        );
    }
    assert!(!daemon.stderr_so_far().contains("panicked"));
    for board in boards {
        board.stop();
    }
}
