//! Whole-game replays: the board ends in the final position, with and without noise,
//! and the same seed gives the same bytes.

mod common;

use std::time::Duration;

use boardcast_protocol::RawBoard;
use boardcast_simulator::codes::Physical;
use boardcast_simulator::handling::MoveKind;
use boardcast_simulator::{DEMO_PGN, Noise, Script, SimConfig, Simulation, Style, StyleMix};

fn final_text(script: &Script, rotated: bool, occupancy: bool) -> String {
    let pos = script.final_position();
    RawBoard(Physical::from_board(shakmaty::Position::board(&pos)).to_hardware(rotated, occupancy))
        .to_text()
}

fn corpus(name: &str) -> Vec<Script> {
    let path = format!("{}/../tests/data/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    // Games that fail to parse (none expected) are skipped by taking the first 400 only
    // through a lenient split: the whole file must parse.
    Script::parse_pgn(&text).unwrap()
}

fn replay(script: Script, cfg: SimConfig) -> common::Run {
    let n = script.moves().len();
    let expected = final_text(&script, cfg.rotated, cfg.occupancy_only);
    let run = common::drive(
        Simulation::new(cfg, script),
        0x44,
        Duration::from_secs(24 * 3600),
    );
    assert_eq!(run.reports.len(), n, "one report per move");
    if n > 0 {
        assert_eq!(run.reports.last().unwrap().board, expected);
    }
    assert_eq!(
        run.mirror.to_text(),
        expected,
        "field updates end in the final position"
    );
    run
}

#[test]
fn demo_game_replays_to_its_final_position() {
    let script = Script::parse_pgn(DEMO_PGN).unwrap().remove(0);
    assert_eq!(script.result(), Some("0-1"));
    assert_eq!(script.tag("White"), Some("Abdusattorov,Nodirbek"));
    let n = script.moves().len();
    assert!((80..=160).contains(&n), "40–80 moves");
    let run = replay(
        script,
        SimConfig {
            seed: 7,
            ..SimConfig::default()
        },
    );
    assert_eq!(run.reports[0].san, "e4");
    assert_eq!(run.reports[0].uci, "e2e4");
    assert_eq!(run.reports[0].ply, 1);
    let castles: Vec<_> = run
        .reports
        .iter()
        .filter(|r| r.san.starts_with("O-O"))
        .collect();
    assert_eq!(castles.len(), 2);
}

#[test]
fn corpus_games_with_noise_end_in_their_final_positions() {
    let mut kinds = [0usize; 5];
    let mut played = 0;
    for (file, step) in [("twic1599_1000k.pgn", 97), ("lichess_db_1000k.pgn", 61)] {
        let games = corpus(file);
        for (i, script) in games
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % step == 3)
            .take(8)
        {
            for m in script.moves() {
                kinds[MoveKind::of(m) as usize] += 1;
            }
            let cfg = SimConfig {
                seed: i as u64,
                noise: Noise::all(0.3),
                speed: 3.0,
                rotated: i % 2 == 0,
                occupancy_only: i % 5 == 0,
                ..SimConfig::default()
            };
            replay(script, cfg);
            played += 1;
        }
    }
    assert!(played >= 12, "{played} games");
    assert!(
        kinds.iter().take(4).all(|&k| k > 0),
        "quiet, capture, castle, en passant: {kinds:?}"
    );
}

#[test]
fn every_style_forced_replays_special_moves_correctly() {
    // A game with castling on both sides, en passant and promotions (one under-promotion,
    // one with capture).
    let scripts = [
        Script::from_fen_and_san(
            None,
            &[
                "e4", "d5", "exd5", "c5", "dxc6", "Nf6", "cxb7", "Bd7", "bxa8=N", "e5", "Nf3",
                "Bd6", "Be2", "O-O", "O-O", "Qc7",
            ],
        )
        .unwrap(),
        Script::from_fen_and_san(
            Some("r3k3/7P/8/8/8/8/1p6/4K2R w Kq - 0 1"),
            &["O-O", "O-O-O", "h8=Q", "b1=N", "Qxd8+", "Kxd8"],
        )
        .unwrap(),
    ];
    for style in Style::ALL {
        let mut used = false;
        for script in &scripts {
            let cfg = SimConfig {
                styles: StyleMix::only(&[style]),
                seed: 3,
                speed: 2.0,
                ..SimConfig::default()
            };
            let run = replay(script.clone(), cfg);
            used |= run.reports.iter().any(|r| r.style == style);
        }
        assert!(used, "{style:?} used");
    }
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    let script = Script::parse_pgn(DEMO_PGN).unwrap().remove(0);
    let cfg = |seed| SimConfig {
        seed,
        noise: Noise::all(0.2),
        clock: Some(Default::default()),
        garbage_on_connect: true,
        ..SimConfig::default()
    };
    let a = common::drive(
        Simulation::new(cfg(11), script.clone()),
        0x43,
        Duration::from_secs(36_000),
    );
    let b = common::drive(
        Simulation::new(cfg(11), script.clone()),
        0x43,
        Duration::from_secs(36_000),
    );
    let c = common::drive(
        Simulation::new(cfg(12), script.clone()),
        0x43,
        Duration::from_secs(36_000),
    );
    assert!(a.bytes.len() > 1000);
    assert_eq!(a.bytes, b.bytes);
    assert_eq!(a.reports, b.reports);
    assert_ne!(a.bytes, c.bytes);

    // Output does not depend on how finely the host advances time.
    let mut sim = Simulation::new(cfg(11), script);
    sim.receive(&[0x42, 0x43], Duration::ZERO);
    let mut bytes = Vec::new();
    let mut t = Duration::ZERO;
    while t < a.end {
        t += Duration::from_millis(37);
        bytes.extend(sim.advance(t.min(a.end)));
    }
    assert_eq!(bytes, a.bytes);
}

#[test]
fn reports_come_after_the_move_is_complete_and_scanned() {
    let script = Script::from_fen_and_san(None, &["e4", "e5", "Nf3", "Nc6"]).unwrap();
    let mut sim = Simulation::new(SimConfig::default(), script);
    sim.receive(&[0x44], Duration::ZERO);
    let mut mirror_bytes = Vec::new();
    let mut seen = 0;
    while let Some(t) = sim.next_wakeup() {
        let now = t;
        mirror_bytes.extend(sim.advance(now));
        while let Some(r) = sim.poll_report() {
            seen += 1;
            // The board shown in the report is on the physical board and was scanned.
            assert!(now >= r.completed_at + Duration::from_millis(220));
            assert_eq!(r.ply, seen);
        }
    }
    assert_eq!(seen, 4);
    assert!(sim.is_finished());
}
