//! The moves a board is part-way to (`Event::Pending`), written in SAN when first asked.

use std::fmt;
use std::sync::OnceLock;

use shakmaty::{Chess, Move, Position};

use crate::game::san_plus;

/// The legal moves a board is part-way to. A piece in the hand is pending on most
/// readings, and writing the SAN of every move it could make (a check test per move)
/// was a large share of the engine's work per board, while most such events are
/// dropped unread (the bench, a replay) or superseded by the next reading. So the moves
/// are kept with the positions they are played from, and their SAN (sorted, each once)
/// is written the first time anyone asks, then kept for the other consumers (the
/// status and the live event both show it). Equal when their SAN is.
#[derive(Clone)]
pub struct PendingMoves(Box<Moves>);

#[derive(Clone)]
struct Moves {
    /// Each move with the index in `from` of the position it is played from.
    moves: Vec<(Move, usize)>,
    /// The positions the moves are played from, each with the caller's key for it.
    from: Vec<(usize, Chess)>,
    sans: OnceLock<Vec<String>>,
}

impl PendingMoves {
    /// No moves yet.
    pub(super) fn new() -> Self {
        PendingMoves(Box::new(Moves {
            moves: Vec::new(),
            from: Vec::new(),
            sans: OnceLock::new(),
        }))
    }

    /// Adds `mv`, legal in `pos`, which the caller tells apart from its other positions
    /// by `key`: a position is cloned only with its first move.
    pub(super) fn push(&mut self, mv: Move, key: usize, pos: &Chess) {
        let moves = &mut self.0;
        let at = match moves.from.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                moves.from.push((key, pos.clone()));
                moves.from.len() - 1
            }
        };
        moves.moves.push((mv, at));
    }

    /// The moves in SAN, sorted, each once.
    pub fn sans(&self) -> &[String] {
        let Moves { moves, from, sans } = &*self.0;
        sans.get_or_init(|| {
            // Each position's legal moves (for telling rival pieces apart) once.
            let legal: Vec<_> = from.iter().map(|(_, p)| p.legal_moves()).collect();
            let mut list: Vec<String> = moves
                .iter()
                .map(|&(mv, at)| {
                    let mut text = String::with_capacity(8);
                    san_plus(&from[at].1, mv, &legal[at]).append_to_string(&mut text);
                    text
                })
                .collect();
            list.sort();
            list.dedup();
            list
        })
    }
}

impl PartialEq for PendingMoves {
    fn eq(&self, other: &Self) -> bool {
        self.sans() == other.sans()
    }
}

impl Eq for PendingMoves {}

/// As the list of SAN strings it stands for.
impl fmt::Debug for PendingMoves {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.sans()).finish()
    }
}
