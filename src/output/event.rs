//! The live events consumers receive (SSE, WebSocket): one JSON object per change on a
//! board, each with an id and the board's whole view after the change.

use serde::{Deserialize, Serialize};

use crate::inference::{Event, IrregularKind};
use crate::status::{BoardStatus, Connection};

use super::view::BoardView;

/// What changed on a board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Change {
    /// A move entered the record at `ply` (1-based).
    Move {
        ply: usize,
        san: String,
        uci: String,
    },
    /// The move at `ply` was replaced; the mainline is rewritten, never a variation.
    Correction {
        ply: usize,
        old_san: String,
        new_san: String,
    },
    /// Moves were taken back; `ply` moves remain.
    Retraction { ply: usize, retracted: Vec<String> },
    /// A move is under way; the legal moves the board is part-way to.
    Pending { candidates: Vec<String> },
    /// The board matches no legal continuation; what to put where to restore it.
    Irregular {
        restore: Vec<String>,
        takeback: bool,
    },
    /// Several move sequences explain the board; each candidate is one in SAN (what
    /// `POST /api/boards/{id}/resolve` takes); `replaces`: the last recorded move they
    /// would replace (they start from the position before it), if any.
    Ambiguous {
        plies: usize,
        explanations: usize,
        #[serde(default)]
        candidates: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replaces: Option<String>,
    },
    /// The position on the board cannot occur in a game.
    IllegalPosition { problems: Vec<String> },
    /// A new game started.
    NewGame { setup: bool },
    /// The move at `ply` broke the touch-move rule.
    TouchMove {
        ply: usize,
        square: String,
        detail: String,
    },
    /// The game is over.
    GameEnd { result: String, termination: String },
    /// A draw may now be claimed.
    DrawClaimable {
        threefold_repetition: bool,
        fifty_moves: bool,
    },
    /// The board was found turned 180° (or back).
    Orientation { rotated: bool },
    /// The board's position was accepted as the game's.
    Reanchored { fen: String },
    /// The clock times changed.
    Clock {
        white: Option<String>,
        black: Option<String>,
    },
    /// The connection to the board changed.
    Connection {
        connection: Connection,
        serial: Option<String>,
    },
    /// The game data (players, event, round) changed.
    Tags,
}

fn strings<T: ToString>(items: &[T]) -> Vec<String> {
    items.iter().map(ToString::to_string).collect()
}

impl From<&Event> for Change {
    fn from(event: &Event) -> Change {
        match event {
            Event::MoveMade { ply, san, uci } => Change::Move {
                ply: *ply,
                san: san.clone(),
                uci: uci.clone(),
            },
            Event::MoveCorrected {
                ply,
                old_san,
                new_san,
            } => Change::Correction {
                ply: *ply,
                old_san: old_san.clone(),
                new_san: new_san.clone(),
            },
            Event::MovesRetracted { ply, retracted } => Change::Retraction {
                ply: *ply,
                retracted: retracted.clone(),
            },
            Event::Pending { candidates } => Change::Pending {
                candidates: candidates.sans().to_vec(),
            },
            Event::Irregular { kind, restore } => Change::Irregular {
                restore: strings(restore),
                takeback: *kind == IrregularKind::Takeback,
            },
            Event::Ambiguous {
                plies,
                explanations,
                candidates,
                replaces,
            } => Change::Ambiguous {
                plies: *plies,
                explanations: *explanations,
                candidates: candidates.clone(),
                replaces: replaces.clone(),
            },
            Event::IllegalPosition { problems } => Change::IllegalPosition {
                problems: strings(problems),
            },
            Event::NewGame { setup } => Change::NewGame { setup: *setup },
            Event::TouchMove {
                ply,
                touched,
                detail,
            } => Change::TouchMove {
                ply: *ply,
                square: touched.to_string(),
                detail: detail.clone(),
            },
            Event::GameEnded {
                outcome,
                termination,
            } => Change::GameEnd {
                result: outcome.to_string(),
                termination: format!("{termination:?}"),
            },
            Event::DrawClaimable(claims) => Change::DrawClaimable {
                threefold_repetition: claims.threefold_repetition,
                fifty_moves: claims.fifty_moves,
            },
            Event::OrientationChanged { rotated } => Change::Orientation { rotated: *rotated },
            Event::Reanchored { fen } => Change::Reanchored { fen: fen.clone() },
        }
    }
}

/// The changes between two statuses of a board that the engine does not report itself:
/// connection and clock.
pub fn status_changes(before: &BoardStatus, after: &BoardStatus) -> Vec<Change> {
    let mut changes = Vec::new();
    if before.connection != after.connection || before.serial != after.serial {
        changes.push(Change::Connection {
            connection: after.connection,
            serial: after.serial.clone(),
        });
    }
    let clocks = |s: &BoardStatus| {
        s.game
            .as_ref()
            .map(|g| (g.clock_white.clone(), g.clock_black.clone()))
    };
    if let Some((white, black)) = clocks(after)
        && clocks(before) != Some((white.clone(), black.clone()))
        && (white.is_some() || black.is_some())
    {
        changes.push(Change::Clock { white, black });
    }
    changes
}

/// One event as sent: `{"id", "board", "type", ...details, "state": {view}}`.
#[derive(Serialize)]
pub struct EventJson<'a> {
    /// Increases by one per event across all boards; SSE resumes from it.
    pub id: u64,
    /// The board number.
    pub board: usize,
    /// What changed.
    #[serde(flatten)]
    pub change: &'a Change,
    /// The board after the change.
    pub state: &'a BoardView,
}

/// The full state, sent first to a new client and to one that fell too far behind.
#[derive(Serialize)]
pub struct SnapshotJson<'a> {
    /// The id of the last event the snapshot includes.
    pub id: u64,
    /// Always "snapshot".
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Every board (or the one board a per-board stream follows).
    pub boards: &'a [BoardView],
}
