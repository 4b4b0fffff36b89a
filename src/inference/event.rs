//! What the engine reports.

use std::fmt;

use shakmaty::{Color, KnownOutcome, Piece, Square};

use super::pending::PendingMoves;
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
    /// A move is in progress; `candidates` are the legal moves the board is part-way to
    /// (their SAN written when first asked for).
    Pending { candidates: PendingMoves },
    /// The board matches no legal continuation; `restore` lists what to put where to get
    /// the last legal position back.
    Irregular {
        kind: IrregularKind,
        restore: Vec<Fix>,
    },
    /// Several move sequences of `plies` plies explain the board; waiting for more, or
    /// for the arbiter to pick one of the `candidates` (each the sequence's moves in
    /// SAN, separated by spaces) with [`Engine::resolve`](super::Engine::resolve).
    /// When they replace the last recorded move (they start from the position before
    /// it: a move read just before updates were lost may have gone on), `replaces` is
    /// that move's SAN.
    Ambiguous {
        plies: usize,
        explanations: usize,
        candidates: Vec<String>,
        replaces: Option<String>,
    },
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

impl fmt::Display for PositionProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionProblem::TwoKings(c) => write!(f, "two {c} kings"),
            PositionProblem::PawnOnBackRank(sq) => write!(f, "pawn on {sq}"),
            PositionProblem::KingLeftInCheck(c) => write!(f, "{c} king left in check"),
        }
    }
}

fn join<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// One line for logs and operators; fixes read `Ng1` (put a white knight on g1) and
/// `-g4` (clear g4).
impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::MoveMade { ply, san, .. } => write!(f, "ply {ply}: {san}"),
            Event::MoveCorrected {
                ply,
                old_san,
                new_san,
            } => write!(f, "ply {ply} corrected: {old_san} -> {new_san}"),
            Event::MovesRetracted { ply, retracted } => {
                write!(f, "retracted {}; {ply} plies remain", retracted.join(" "))
            }
            Event::Pending { candidates } => {
                write!(f, "move in progress: {}", candidates.sans().join(" "))
            }
            Event::Irregular { kind, restore } => {
                let kind = match kind {
                    IrregularKind::NoLegalContinuation => "no legal continuation",
                    IrregularKind::Takeback => "takeback",
                };
                write!(f, "irregular ({kind}); restore: {}", join(restore))
            }
            Event::Ambiguous {
                plies,
                explanations,
                candidates,
                replaces,
            } => {
                write!(f, "ambiguous: {explanations} sequences of {plies} plies")?;
                if let Some(san) = replaces {
                    write!(f, " in place of {san}")?;
                }
                write!(f, ": {}", candidates.join(" | "))
            }
            Event::IllegalPosition { problems } => {
                let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
                write!(f, "illegal position: {}", problems.join(", "))
            }
            Event::NewGame { setup: false } => f.write_str("new game"),
            Event::NewGame { setup: true } => f.write_str("new game from a set-up position"),
            Event::TouchMove { ply, detail, .. } => write!(f, "touch-move at ply {ply}: {detail}"),
            Event::GameEnded {
                outcome,
                termination,
            } => write!(f, "game over: {outcome} ({termination:?})"),
            Event::DrawClaimable(claims) => {
                let mut reasons = Vec::new();
                if claims.threefold_repetition {
                    reasons.push("threefold repetition");
                }
                if claims.fifty_moves {
                    reasons.push("fifty moves");
                }
                write!(f, "draw claimable: {}", reasons.join(", "))
            }
            Event::OrientationChanged { rotated: true } => f.write_str("board turned 180°"),
            Event::OrientationChanged { rotated: false } => {
                f.write_str("board in normal orientation")
            }
            Event::Reanchored { fen } => write!(f, "re-anchored at {fen}"),
        }
    }
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
