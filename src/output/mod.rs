//! The daemon's live outputs and what feeds them: the hub of board states and events,
//! the round's game data, PGN files, the push to a lichess broadcast, and NATS.

pub mod config;
pub mod control;
pub mod event;
pub mod files;
pub mod hub;
pub mod nats;
pub mod nats_connect;
pub mod push;
pub mod round;
pub mod view;
