//! End to end: a DGT 3000 on the simulated board; the daemon works out which side of the
//! clock is White's and writes each mover's remaining time into the PGN.

use std::time::Duration;

use boardcast_simulator::{ClockConfig, Script, SimConfig, Source, spawn_on_pty};

use crate::harness::{Running, boardcast, poll, read_status, scratch};

const MOVES: [&str; 12] = [
    "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5",
];

fn clk_seconds(text: &str) -> u32 {
    let parts: Vec<u32> = text
        .split(':')
        .map(|p| p.parse().expect("number"))
        .collect();
    parts[0] * 3600 + parts[1] * 60 + parts[2]
}

fn play_with_clock(white_on_left: bool) {
    let script = Script::from_fen_and_san(None, &MOVES).expect("script");
    let config = SimConfig {
        seed: 5,
        speed: 2.0,
        clock: Some(ClockConfig {
            initial: Duration::from_secs(600),
            increment: Duration::from_secs(5),
            white_on_left,
            ..ClockConfig::default()
        }),
        ..SimConfig::default()
    };
    let board = spawn_on_pty(config, Source::Script(script)).expect("board");
    let status = scratch(&format!("clock-{white_on_left}")).join("status.json");
    let mut cmd = boardcast();
    cmd.args(["run", "--status-file"])
        .arg(&status)
        .arg("--port")
        .arg(board.path());
    let mut daemon = Running::start(cmd);
    poll(Duration::from_secs(120), || {
        board.is_finished().then_some(())
    })
    .unwrap_or_else(|| panic!("game did not finish:\n{}", daemon.stderr_so_far()));
    let game = poll(Duration::from_secs(10), || {
        read_status(&status)
            .map(|s| s["boards"][0]["game"].clone())
            .filter(|g| {
                g["moves"]
                    .as_array()
                    .is_some_and(|m| m.len() == MOVES.len())
            })
    })
    .unwrap_or_else(|| panic!("moves not recorded:\n{}", daemon.stderr_so_far()));
    let pgn = game["pgn"].as_str().expect("pgn");
    let clocks: Vec<u32> = pgn
        .split("[%clk ")
        .skip(1)
        .map(|rest| clk_seconds(rest.split(']').next().expect("closing bracket")))
        .collect();
    assert_eq!(
        clocks.len(),
        MOVES.len(),
        "one clock comment per move:\n{pgn}"
    );
    for (ply, &seconds) in clocks.iter().enumerate() {
        // Each side starts with 10 minutes and gains 5 s a move; at this speed a move
        // takes well under a minute of thinking.
        let moves_by_mover = (ply / 2 + 1) as u32;
        assert!(
            seconds <= 600 + 5 * moves_by_mover,
            "ply {}: {seconds}s\n{pgn}",
            ply + 1
        );
        assert!(seconds >= 540, "ply {}: {seconds}s\n{pgn}", ply + 1);
    }
    assert!(
        game["clock_white"].is_string() && game["clock_black"].is_string(),
        "{game}"
    );
    drop(board);
}

#[test]
fn clock_times_are_recorded_with_white_on_the_left() {
    play_with_clock(true);
}

#[test]
fn clock_times_are_recorded_with_white_on_the_right() {
    play_with_clock(false);
}
