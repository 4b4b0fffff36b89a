//! Interactive and stepped play, and the signature of each kind of noise.

mod common;

use std::time::Duration;

use boardcast_protocol::{Message, RawBoard, SquareIndex};
use boardcast_simulator::{Noise, Script, SimConfig, SimError, Simulation, StartTrigger};

fn run_until_quiet(sim: &mut Simulation, from: Duration) -> (Vec<u8>, Duration) {
    let mut out = Vec::new();
    let mut now = from;
    out.extend(sim.advance(now));
    while let Some(t) = sim.next_wakeup() {
        if sim.is_finished() || t > from + Duration::from_secs(600) {
            break;
        }
        now = t;
        out.extend(sim.advance(now));
    }
    (out, now)
}

#[test]
fn interactive_moves_and_raw_actions() {
    let mut sim = Simulation::interactive(
        SimConfig::default(),
        Script::from_fen_and_san(None, &[]).unwrap(),
    );
    sim.receive(&[0x42, 0x44], Duration::ZERO);
    sim.submit_line("e4", Duration::from_secs(1)).unwrap();
    sim.submit_line("e7e5", Duration::from_secs(1)).unwrap();
    assert!(matches!(
        sim.submit_line("Ke3", Duration::from_secs(1)),
        Err(SimError::IllegalMove(_))
    ));
    assert!(matches!(
        sim.submit_line("jump e2", Duration::from_secs(1)),
        Err(SimError::BadLine(_))
    ));
    let (out, now) = run_until_quiet(&mut sim, Duration::from_secs(1));
    let first = sim.poll_report().unwrap();
    assert_eq!(
        (first.ply, first.san.as_str(), first.uci.as_str()),
        (1, "e4", "e2e4")
    );
    assert_eq!(sim.poll_report().unwrap().san, "e5");
    assert!(!sim.is_finished(), "input still open");
    // Raw actions: take the d1 queen off and put a white-wins piece on d4.
    sim.submit_line("lift d1", now).unwrap();
    sim.submit_line("place d4 +", now).unwrap();
    sim.close_input();
    let (out2, _) = run_until_quiet(&mut sim, now);
    assert!(sim.is_finished());
    let (mirror, _) = common::mirror_of(&[out, out2].concat());
    let expected = "rnbqkbnrpppp.ppp............p......+P...........PPPP.PPPRNB.KBNR";
    assert_eq!(mirror.to_text(), expected);
    assert_eq!(sim.physical().to_text(), expected);
}

#[test]
fn stepped_mode_plays_one_move_per_step() {
    let cfg = SimConfig {
        stepped: true,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(
        cfg,
        Script::from_fen_and_san(None, &["d4", "d5", "c4"]).unwrap(),
    );
    sim.receive(&[0x44], Duration::ZERO);
    let (_, now) = run_until_quiet(&mut sim, Duration::ZERO);
    assert_eq!(sim.remaining_moves(), 3, "nothing without a step");
    assert_eq!(sim.physical(), RawBoard::start_position());
    assert!(sim.step(now + Duration::from_secs(1)));
    let (_, now) = run_until_quiet(&mut sim, now + Duration::from_secs(1));
    assert_eq!(sim.poll_report().unwrap().san, "d4");
    assert!(sim.poll_report().is_none());
    assert!(sim.step(now));
    assert!(sim.step(now));
    assert!(!sim.step(now), "no move left");
    run_until_quiet(&mut sim, now);
    assert_eq!(sim.poll_report().unwrap().san, "d5");
    assert_eq!(sim.poll_report().unwrap().san, "c4");
    assert!(sim.is_finished());
}

/// Field updates of a short game played with one kind of noise on every move.
fn updates_with(noise: Noise, seed: u64) -> Vec<(u8, u8)> {
    let cfg = SimConfig {
        seed,
        noise,
        start: StartTrigger::Immediately,
        ..SimConfig::default()
    };
    let script = Script::from_fen_and_san(None, &["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]).unwrap();
    let mut sim = Simulation::new(cfg, script.clone());
    sim.receive(&[0x44], Duration::ZERO);
    let (out, _) = run_until_quiet(&mut sim, Duration::ZERO);
    assert!(sim.is_finished());
    let (_, msgs) = common::mirror_of(&out);
    msgs.iter()
        .filter_map(|m| match m {
            Message::FieldUpdate { square, code } => Some((square.index(), *code)),
            _ => None,
        })
        .collect()
}

fn idx(name: &str) -> u8 {
    name.parse::<SquareIndex>().unwrap().index()
}

#[test]
fn wrong_code_is_corrected_a_scan_later() {
    let ups = updates_with(
        Noise {
            wrong_code: 1.0,
            ..Noise::default()
        },
        5,
    );
    // e4 gets a white pawn eventually, but first some other white code.
    let e4: Vec<u8> = ups
        .iter()
        .filter(|(s, _)| *s == idx("e4"))
        .map(|u| u.1)
        .collect();
    assert_eq!(*e4.last().unwrap(), 1);
    assert!(e4.iter().any(|&c| c != 1 && c != 0 && c <= 6), "{e4:?}");
    let clean = updates_with(Noise::default(), 5);
    assert!(
        ups.len() >= clean.len() + 6,
        "{} vs {}",
        ups.len(),
        clean.len()
    );
}

#[test]
fn flicker_and_jadoube_touch_squares_outside_the_moves() {
    let moved = [
        "e2", "e4", "e7", "e5", "g1", "f3", "b8", "c6", "f1", "b5", "a7", "a6",
    ]
    .map(idx);
    for noise in [
        Noise {
            flicker: 1.0,
            ..Noise::default()
        },
        Noise {
            jadoube: 1.0,
            ..Noise::default()
        },
    ] {
        let ups = updates_with(noise, 9);
        let outside: Vec<&(u8, u8)> = ups.iter().filter(|(s, _)| !moved.contains(s)).collect();
        assert!(outside.len() >= 4, "{noise:?}: {outside:?}");
        // Each such square is emptied, then gets its piece back.
        assert!(outside.iter().any(|(_, c)| *c == 0));
        assert!(outside.iter().any(|(_, c)| *c != 0));
    }
}
