//! The moves a board is part-way to (`Event::Pending`), written in SAN when first asked.

use std::fmt;
use std::sync::OnceLock;

use shakmaty::{Chess, Move, Position};

use super::candidates::Origin;
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
    /// Each move with the origin of the position it is played from.
    moves: Vec<(Move, Origin)>,
    /// The position of each origin that occurs, by origin.
    from: [Option<Chess>; 3],
    sans: OnceLock<Vec<String>>,
}

impl PendingMoves {
    /// No moves yet, room for `capacity`.
    pub(super) fn with_capacity(capacity: usize) -> Self {
        PendingMoves(Box::new(Moves {
            moves: Vec::with_capacity(capacity),
            from: [None, None, None],
            sans: OnceLock::new(),
        }))
    }

    /// Adds `mv`, legal in `pos`, the position of `origin` (cloned with its first move).
    pub(super) fn push(&mut self, mv: Move, origin: Origin, pos: &Chess) {
        let moves = &mut self.0;
        moves.from[origin as usize].get_or_insert_with(|| pos.clone());
        moves.moves.push((mv, origin));
    }

    /// The moves in SAN, sorted, each once.
    pub fn sans(&self) -> &[String] {
        let Moves { moves, from, sans } = &*self.0;
        sans.get_or_init(|| {
            // Each position's legal moves (for telling rival pieces apart) once.
            let legal = from
                .each_ref()
                .map(|p| p.as_ref().map(Position::legal_moves));
            let mut list: Vec<String> = moves
                .iter()
                .filter_map(|&(mv, origin)| {
                    let i = origin as usize;
                    let (pos, legal) = (from[i].as_ref()?, legal[i].as_ref()?);
                    let mut text = String::with_capacity(8);
                    san_plus(pos, mv, legal).append_to_string(&mut text);
                    Some(text)
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

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::san::San;

    fn mv(pos: &Chess, san: &str) -> Move {
        san.parse::<San>().unwrap().to_move(pos).unwrap()
    }

    #[test]
    fn san_is_written_sorted_once_each_with_each_move_s_own_position() {
        let start = Chess::default();
        let mut after = start.clone();
        after.play_unchecked(mv(&start, "e4"));
        let mut pending = PendingMoves::with_capacity(4);
        for san in ["Nf3", "e3", "Nf3"] {
            pending.push(mv(&start, san), Origin::Correction, &start);
        }
        // Black's reply after e4, played from its own position.
        pending.push(mv(&after, "Nc6"), Origin::Current, &after);
        assert_eq!(pending.sans(), ["Nc6", "Nf3", "e3"]);
        assert_eq!(format!("{pending:?}"), r#"["Nc6", "Nf3", "e3"]"#);
        let mut other = PendingMoves::with_capacity(1);
        other.push(mv(&after, "Nc6"), Origin::Current, &after);
        assert_ne!(pending, other);
        assert_eq!(other.clone(), other);
    }
}
