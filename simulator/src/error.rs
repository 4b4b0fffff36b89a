//! Typed errors of the simulator.

use std::io;

/// Errors while building a script from PGN, FEN or move text.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The FEN could not be parsed or is not a legal position.
    #[error("invalid FEN {fen:?}: {reason}")]
    Fen {
        /// The FEN text.
        fen: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A move is neither valid SAN nor UCI, or is illegal in its position.
    #[error("game {game}, ply {ply}: illegal or unreadable move {text:?}")]
    Move {
        /// 1-based game number.
        game: usize,
        /// 1-based ply.
        ply: usize,
        /// The move text.
        text: String,
    },
    /// The PGN text holds no game.
    #[error("no game found in the PGN text")]
    NoGame,
    /// Reading the PGN failed.
    #[error("reading PGN: {0}")]
    Io(#[from] io::Error),
}

/// Errors of the simulation and its pty runner.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A script could not be built.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// A submitted move was illegal or unreadable.
    #[error("illegal or unreadable move {0:?}")]
    IllegalMove(String),
    /// An interactive line could not be understood.
    #[error("cannot understand {0:?} (expected a move in SAN or UCI, `lift e2` or `place e4 P`)")]
    BadLine(String),
    /// The requested game number does not exist.
    #[error("game {requested} requested, but the PGN holds {available} game(s)")]
    NoSuchGame {
        /// 1-based game number asked for.
        requested: usize,
        /// Number of games available.
        available: usize,
    },
    /// A pseudo-terminal call failed.
    #[error("pseudo-terminal: {0}")]
    Pty(#[from] nix::Error),
    /// Other I/O failed.
    #[error("I/O: {0}")]
    Io(#[from] io::Error),
}
