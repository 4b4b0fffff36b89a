//! The integration tests: one binary, so the real `boardcast` executable is built once
//! and every test shares the small harness.

mod harness;

mod auth;
mod bad_input;
mod browser;
mod bus;
mod clock;
mod corpus;
mod demo;
mod discovery;
mod event_stream;
mod games;
mod hardening;
mod http;
mod http_harness;
mod inference_streams;
mod journal;
mod link;
mod livechess;
mod mirror;
mod nats;
mod push;
mod record;
mod recording_cases;
mod recordings;
mod replug;
mod scenarios;
/// The soak's alignment of a record with its source: a bench runs without the test
/// harness, so its unit tests run here.
#[path = "../benches/alignment/mod.rs"]
mod soak_alignment;
