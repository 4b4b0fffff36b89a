//! Fuzz target: arbitrary event streams (field updates, dumps, legal moves, time steps,
//! operator commands, clock readings, raw bytes) into one board's core. No panic, the
//! mirror always equals the bytes received, and the recorded game is always a legal
//! game from its start position. The program format and the checks live in
//! `tests/event_stream.rs`, which the test suite also runs as a proptest.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/event_stream.rs"]
mod event_stream;

fuzz_target!(|data: &[u8]| {
    let _ = event_stream::run(data);
});
