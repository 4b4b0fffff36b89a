//! What the engine reports.

use std::fmt;

use shakmaty::{Color, KnownOutcome, Piece, Square};

use crate::game::{DrawClaims, Termination};

/// One step towards restoring a position: put `put` on `square`, or clear it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fix {
    pub square: Square,
    pub put: Option<Piece>,
}

impl fmt::Display for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.put {
            Some(p) => write!(f, "{}{}", p.char(), self.square),
            None => write!(f, "-{}", self.square),
        }
    }
}

/// Why a board was reported irregular.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrregularKind {
    /// No legal continuation explains the board.
    NoLegalContinuation,
    /// The board shows an earlier position of the game, and the mode forbids takebacks.
    Takeback,
}

/// Why a position cannot occur in a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PositionProblem {
    /// A side has more than one king.
    TwoKings(Color),
    /// A pawn stands on the first or last rank.
    PawnOnBackRank(Square),
    /// The side that just moved left its own king attacked.
    KingLeftInCheck(Color),
}

/// Engine output, in the order things happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A move entered the record at `ply` (1-based).
    MoveMade {
        ply: usize,
        san: String,
        uci: String,
    },
    /// The move at `ply` was replaced by what the board showed later.
    MoveCorrected {
        ply: usize,
        old_san: String,
        new_san: String,
    },
    /// Moves were taken back; `ply` moves remain.
    MovesRetracted { ply: usize, retracted: Vec<String> },
    /// A move is in progress; `candidates` are the legal moves the board is part-way to.
    Pending { candidates: Vec<String> },
    /// The board matches no legal continuation; `restore` lists what to put where to get
    /// the last legal position back.
    Irregular {
        kind: IrregularKind,
        restore: Vec<Fix>,
    },
    /// Several move sequences of `plies` plies explain the board; waiting for more.
    Ambiguous { plies: usize, explanations: usize },
    /// The board's position is illegal in itself.
    IllegalPosition { problems: Vec<PositionProblem> },
    /// A new game started (start position seen, or a set-up declared by the operator).
    NewGame { setup: bool },
    /// The move at `ply` broke the touch-move rule (Art. 7.2, or 5.1(3) for castling).
    TouchMove {
        ply: usize,
        touched: Square,
        detail: String,
    },
    /// The game is over.
    GameEnded {
        outcome: KnownOutcome,
        termination: Termination,
    },
    /// A draw may now be claimed.
    DrawClaimable(DrawClaims),
    /// The board was found turned 180° (or turned back).
    OrientationChanged { rotated: bool },
    /// The operator (or the auto re-anchor timer) accepted the board as the position.
    Reanchored { fen: String },
}

impl Event {
    /// A short kebab-case name, as used in logs and scenario files.
    pub fn name(&self) -> &'static str {
        match self {
            Event::MoveMade { .. } => "move",
            Event::MoveCorrected { .. } => "correction",
            Event::MovesRetracted { .. } => "retraction",
            Event::Pending { .. } => "pending",
            Event::Irregular { .. } => "irregular",
            Event::Ambiguous { .. } => "ambiguous",
            Event::IllegalPosition { .. } => "illegal-position",
            Event::NewGame { .. } => "new-game",
            Event::TouchMove { .. } => "touch-move",
            Event::GameEnded { .. } => "game-ended",
            Event::DrawClaimable(_) => "draw-claimable",
            Event::OrientationChanged { .. } => "orientation",
            Event::Reanchored { .. } => "reanchored",
        }
    }
}
