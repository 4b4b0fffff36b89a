//! boardcast: turns electronic chessboards into live, correct PGN.
//!
//! The library holds everything the binary does, so that tests can drive it directly.
//! See ARCHITECTURE.md for the layers.

pub mod game;
pub mod inference;
