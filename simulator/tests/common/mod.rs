//! Helpers shared by the integration tests: drive a simulation and mirror its output.

#![allow(dead_code)]

use std::time::Duration;

use boardcast_protocol::{Decoded, Decoder, Message, RawBoard};
use boardcast_simulator::{MoveReport, Simulation};

/// What a host saw while driving a simulation to its end.
pub struct Run {
    pub bytes: Vec<u8>,
    pub mirror: RawBoard,
    pub reports: Vec<MoveReport>,
    pub messages: Vec<Message>,
    pub end: Duration,
}

/// Put the board in `mode_cmd` mode at t = 0, take a dump, then run until finished
/// (or `limit`), applying every dump and field update to a mirror.
pub fn drive(mut sim: Simulation, mode_cmd: u8, limit: Duration) -> Run {
    let mut bytes = Vec::new();
    sim.receive(&[0x42, mode_cmd], Duration::ZERO);
    let mut now = Duration::ZERO;
    let mut reports = Vec::new();
    loop {
        bytes.extend(sim.advance(now));
        while let Some(r) = sim.poll_report() {
            reports.push(r);
        }
        if sim.is_finished() || now > limit {
            break;
        }
        match sim.next_wakeup() {
            Some(t) => now = t.max(now),
            None => break,
        }
    }
    let (mirror, messages) = mirror_of(&bytes);
    Run {
        bytes,
        mirror,
        reports,
        messages,
        end: now,
    }
}

/// Decode board → host bytes and apply them to a mirror.
pub fn mirror_of(bytes: &[u8]) -> (RawBoard, Vec<Message>) {
    let mut dec = Decoder::new();
    dec.feed(bytes);
    let mut mirror = RawBoard([0; 64]);
    let mut messages = Vec::new();
    while let Some(d) = dec.poll() {
        if let Decoded::Message(m) = d {
            match &m {
                Message::BoardDump(b) => mirror = *b,
                Message::FieldUpdate { square, code } => mirror.set(*square, *code),
                _ => {}
            }
            messages.push(m);
        }
    }
    (mirror, messages)
}
