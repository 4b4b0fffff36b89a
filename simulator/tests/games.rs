//! Whole-game replays: the board ends in the final position, with and without noise.

mod common;

use std::time::Duration;

use boardcast_protocol::RawBoard;
use boardcast_simulator::codes::Physical;
use boardcast_simulator::{DEMO_PGN, Noise, Script, SimConfig, Simulation};

fn final_text(script: &Script, rotated: bool, occupancy: bool) -> String {
    let pos = script.final_position();
    RawBoard(Physical::from_board(shakmaty::Position::board(&pos)).to_hardware(rotated, occupancy))
        .to_text()
}

#[test]
fn demo_game_replays_to_its_final_position() {
    let script = Script::parse_pgn(DEMO_PGN).unwrap().remove(0);
    assert_eq!(script.result(), Some("0-1"));
    let n = script.moves().len();
    let expected = final_text(&script, false, false);
    let cfg = SimConfig {
        seed: 7,
        speed: 4.0,
        ..SimConfig::default()
    };
    let run = common::drive(
        Simulation::new(cfg, script),
        0x44,
        Duration::from_secs(3600),
    );
    assert_eq!(run.reports.len(), n);
    assert_eq!(run.reports[0].san, "e4");
    assert_eq!(run.reports[0].uci, "e2e4");
    assert_eq!(run.reports.last().unwrap().board, expected);
    assert_eq!(
        run.mirror.to_text(),
        expected,
        "mirror of the field updates"
    );
}
