//! boardcast: turns electronic chessboards into live, correct PGN.
//!
//! The library holds everything the binary does, so that tests can drive it directly.
//! See ARCHITECTURE.md for the layers.

pub mod board;
pub mod cli;
pub mod clock;
pub mod daemon;
pub mod demo;
pub mod error;
pub mod game;
pub mod http;
pub mod inference;
pub mod journal;
pub mod link;
pub mod mirror;
pub mod output;
pub mod ports;
pub mod recording;
pub mod relay;
pub mod replay;
pub mod signals;
pub mod status;
