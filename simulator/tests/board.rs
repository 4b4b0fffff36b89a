//! The VirtualBoard's answers to host commands, byte for byte (§3.3 of the protocol notes).

mod common;

use std::time::Duration;

use boardcast_protocol::{ClockAck, ClockCommand, Command, Message, RawBoard};
use boardcast_simulator::sim::GARBAGE;
use boardcast_simulator::{ClockConfig, Script, SimConfig, Simulation, StartTrigger};

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn idle_sim(cfg: SimConfig) -> Simulation {
    Simulation::new(cfg, Script::from_fen_and_san(None, &["e4", "e5"]).unwrap())
}

/// Send `cmd` at `at` and collect everything the board says up to `at + wait`.
fn ask(sim: &mut Simulation, cmd: &[u8], at: Duration, wait: Duration) -> Vec<u8> {
    sim.advance(at);
    sim.receive(cmd, at);
    sim.advance(at + wait)
}

#[test]
fn single_byte_commands_answer_exactly() {
    let mut sim = idle_sim(SimConfig::default());
    let t = ms(10);
    let dump = ask(&mut sim, &[0x42], t, ms(0));
    let mut expected = vec![0x86, 0x00, 0x43];
    expected.extend_from_slice(&RawBoard::start_position().0);
    assert_eq!(dump, expected);
    assert_eq!(
        &dump[3..11],
        &[0x08, 0x09, 0x0A, 0x0C, 0x0B, 0x0A, 0x09, 0x08],
        "a8..h8"
    );
    assert_eq!(
        ask(&mut sim, &[0x45], t, ms(0)),
        b"\x91\x00\x0801025".to_vec()
    );
    assert_eq!(
        ask(&mut sim, &[0x55], t, ms(0)),
        b"\xA2\x00\x0D3.10001025".to_vec()
    );
    assert_eq!(
        ask(&mut sim, &[0x4D], t, ms(0)),
        vec![0x93, 0x00, 0x05, 0x01, 0x02]
    );
    assert_eq!(
        ask(&mut sim, &[0x46], t, ms(0)),
        vec![0x90, 0x00, 0x05, 0x08, 0x01]
    );
    let battery = ask(&mut sim, &[0x4C], t, ms(0));
    assert_eq!(&battery[..3], &[0xA0, 0x00, 0x0C]);
    assert_eq!(battery.len(), 12);
    assert_eq!(battery[3], 87);
    let tm = ask(&mut sim, &[0x47], t, ms(0));
    assert_eq!(tm[0], 0x92);
    assert_eq!(((tm[1] as usize) << 7) | tm[2] as usize, tm.len());
    assert!(tm[3..].iter().all(|b| b & 0x80 == 0));
    // No clock: times 0 and p6 bit 5.
    assert_eq!(
        ask(&mut sim, &[0x41], t, ms(0)),
        vec![0x8D, 0, 0x0A, 0, 0, 0, 0, 0, 0, 0x20]
    );
    // Commands without reply, several in one read.
    assert!(
        ask(
            &mut sim,
            &[
                0x40, 0x4A, 0x4E, 0x50, 0x54, 0x60, 0x04, 0x01, 0x0C, 0x1C, 0x00
            ],
            t,
            ms(0)
        )
        .is_empty()
    );
}

#[test]
fn ee_moves_is_a_minimal_valid_log() {
    let mut sim = idle_sim(SimConfig::default());
    let ee = ask(&mut sim, &[0x49], ms(5), ms(0));
    assert_eq!(ee[0], 0x8F);
    assert_eq!(((ee[1] as usize) << 7) | ee[2] as usize, ee.len());
    assert_eq!(&ee[3..7], &[0x7F, 0x7F, 0x7F, 0x6A]);
    assert_eq!(*ee.last().unwrap(), 0x6B);
    assert_eq!(
        ee.len(),
        3 + 4 + 32 * 2 + 1,
        "one placement record per piece"
    );
    assert_eq!(&ee[7..9], &[0x48, 0x00], "black rook on a8");
}

#[test]
fn occupancy_only_board_reports_version_1_0_and_0_1_codes() {
    let mut sim = idle_sim(SimConfig {
        occupancy_only: true,
        ..SimConfig::default()
    });
    assert_eq!(
        ask(&mut sim, &[0x4D], ms(1), ms(0)),
        vec![0x93, 0x00, 0x05, 0x01, 0x00]
    );
    let dump = ask(&mut sim, &[0x42], ms(1), ms(0));
    assert!(dump[3..19].iter().all(|&c| c == 1));
    assert!(dump[19..51].iter().all(|&c| c == 0));
    assert!(dump[51..].iter().all(|&c| c == 1));
}

#[test]
fn rotated_board_mirrors_every_index() {
    let mut sim = idle_sim(SimConfig {
        rotated: true,
        ..SimConfig::default()
    });
    let dump = ask(&mut sim, &[0x42], ms(1), ms(0));
    assert_eq!(
        RawBoard(dump[3..].try_into().unwrap()),
        RawBoard::start_position().rotated()
    );
    assert_eq!(sim.physical(), RawBoard::start_position().rotated());
}

#[test]
fn garbage_and_a_truncated_frame_before_the_first_reply() {
    let mut sim = idle_sim(SimConfig {
        garbage_on_connect: true,
        ..SimConfig::default()
    });
    let out = ask(&mut sim, &[0x4D], ms(1), ms(0));
    assert_eq!(&out[..GARBAGE.len()], &GARBAGE);
    assert_eq!(&out[GARBAGE.len()..], &[0x93, 0x00, 0x05, 0x01, 0x02]);
    assert_eq!(
        ask(&mut sim, &[0x4D], ms(2), ms(0)),
        vec![0x93, 0x00, 0x05, 0x01, 0x02]
    );
}

#[test]
fn field_updates_only_in_update_modes() {
    let cfg = SimConfig {
        start: StartTrigger::Immediately,
        start_delay: ms(0),
        ..SimConfig::default()
    };
    // IDLE: the game is played but nothing is sent.
    let mut sim = idle_sim(cfg.clone());
    assert!(sim.advance(Duration::from_secs(60)).is_empty());
    assert_eq!(sim.remaining_moves(), 0);
    // UPDATE_BOARD: field updates only.
    for mode in [0x44u8, 0x43, 0x4B] {
        let mut sim = idle_sim(cfg.clone());
        sim.receive(&[mode], Duration::ZERO);
        let out = sim.advance(Duration::from_secs(60));
        let (mirror, msgs) = common::mirror_of(&out);
        assert!(
            msgs.iter()
                .any(|m| matches!(m, Message::FieldUpdate { .. }))
        );
        if mode == 0x44 {
            assert!(
                msgs.iter()
                    .all(|m| matches!(m, Message::FieldUpdate { .. }))
            );
        }
        let _ = mirror;
    }
}

#[test]
fn game_waits_for_the_host_to_enter_an_update_mode() {
    let mut sim = idle_sim(SimConfig::default());
    sim.advance(Duration::from_secs(100));
    assert_eq!(sim.remaining_moves(), 2);
    sim.receive(&[0x44], Duration::from_secs(100));
    assert_eq!(sim.remaining_moves(), 0);
    let out = sim.advance(Duration::from_secs(200));
    assert!(!out.is_empty());
    assert!(sim.is_finished());
    assert_eq!(sim.next_wakeup(), None);
}

fn clock_cfg() -> SimConfig {
    SimConfig {
        clock: Some(ClockConfig::default()),
        ..SimConfig::default()
    }
}

#[test]
fn clock_acks_only_in_update_modes_after_a_short_delay() {
    let version = ClockCommand::Version.encode();
    assert_eq!(version, vec![0x2B, 0x03, 0x03, 0x09, 0x00]);
    // IDLE and UPDATE_BOARD: no ack.
    let mut sim = idle_sim(clock_cfg());
    assert!(ask(&mut sim, &version, ms(1), Duration::from_secs(2)).is_empty());
    sim.receive(&[0x44], Duration::from_secs(3));
    sim.advance(Duration::from_secs(3));
    let out = ask(
        &mut sim,
        &version,
        Duration::from_secs(3),
        Duration::from_secs(2),
    );
    let (_, msgs) = common::mirror_of(&out);
    assert!(!msgs.iter().any(|m| matches!(m, Message::ClockAck(_))));

    // UPDATE_NICE: a version ack with major 2 (DGT 3000), 50–300 ms later.
    let mut sim = idle_sim(clock_cfg());
    sim.receive(&[0x4B], ms(0));
    sim.advance(ms(10));
    sim.receive(&version, ms(10));
    assert!(sim.advance(ms(59)).is_empty(), "not before 50 ms");
    let out = sim.advance(ms(311));
    let expected = Message::ClockAck(ClockAck::version_reply(2, 2)).encode();
    assert_eq!(
        expected,
        vec![0x8D, 0x00, 0x0A, 0x0A, 0x10, 0x09, 0x0A, 0x22, 0x00, 0x00]
    );
    assert_eq!(out, expected);
    // Other commands are acked with their id.
    let beep = ClockCommand::Beep { units: 2 }.encode();
    sim.receive(&beep, ms(400));
    let out = sim.advance(ms(800));
    assert_eq!(out, Message::ClockAck(ClockAck::for_command(0x0B)).encode());

    // No clock attached: no ack even in UPDATE mode.
    let mut sim = idle_sim(SimConfig::default());
    sim.receive(&[0x43], ms(0));
    sim.receive(&version, ms(1));
    let (_, msgs) = common::mirror_of(&sim.advance(ms(900)));
    assert!(!msgs.iter().any(|m| matches!(m, Message::ClockAck(_))));
}

#[test]
fn clock_messages_once_a_second_in_update_and_on_change_in_update_nice() {
    let count = |bytes: &[u8]| {
        let (_, msgs) = common::mirror_of(bytes);
        msgs.iter()
            .filter(|m| matches!(m, Message::ClockTime(_)))
            .count()
    };
    // UPDATE: at least once a second, even with the clock stopped (the game has not
    // started moving yet: start delay 1 s, so use a script without moves).
    let mut sim = Simulation::new(clock_cfg(), Script::from_fen_and_san(None, &[]).unwrap());
    sim.receive(&[0x43], ms(0));
    assert!(count(&sim.advance(Duration::from_secs(10))) >= 10);
    // UPDATE_NICE with a stopped clock: the current reading once, then nothing.
    let mut sim = Simulation::new(clock_cfg(), Script::from_fen_and_san(None, &[]).unwrap());
    sim.receive(&[0x4B], ms(0));
    assert_eq!(count(&sim.advance(Duration::from_secs(10))), 1);
    // UPDATE_NICE with a running clock (SetAndRun): one message per shown second.
    let set = ClockCommand::SetAndRun {
        left: (0, 5, 0),
        right: (0, 3, 0),
        flags: 0x01,
    }
    .encode();
    sim.receive(&set, Duration::from_secs(10));
    let out = sim.advance(Duration::from_millis(15_500));
    let n = count(&out);
    assert!((5..=7).contains(&n), "{n} clock messages in 5.5 s");
    // 0x41 reads the running time: 5:00 minus about 5.5 s.
    let out = ask(&mut sim, &[0x41], Duration::from_millis(15_500), ms(0));
    let (_, msgs) = common::mirror_of(&out);
    let Some(Message::ClockTime(t)) = msgs.last() else {
        panic!("{msgs:?}")
    };
    assert_eq!((t.left.minutes, t.left.seconds), (4, 54));
    assert_eq!((t.right.minutes, t.right.seconds), (3, 0));
    assert!(t.status.running() && t.status.left_to_move());
}

#[test]
fn clock_runs_with_the_game() {
    let cfg = SimConfig {
        start: StartTrigger::Immediately,
        speed: 5.0,
        ..clock_cfg()
    };
    let mut sim = Simulation::new(
        cfg,
        Script::from_fen_and_san(None, &["e4", "e5", "Nf3"]).unwrap(),
    );
    sim.advance(Duration::from_secs(120));
    assert!(sim.is_finished());
    let out = ask(&mut sim, &[0x41], Duration::from_secs(120), ms(0));
    let (_, msgs) = common::mirror_of(&out);
    let Some(Message::ClockTime(t)) = msgs.last() else {
        panic!()
    };
    assert!(!t.status.running(), "stopped at the end of the game");
    // White pressed twice, Black once, each with a 30 s increment.
    assert!(t.left.total_seconds() > 90 * 60 && t.right.total_seconds() > 90 * 60);
    let _ = Command::SendClock;
}
