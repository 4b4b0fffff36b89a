//! The board's recent changes, oldest first: on a board that only senses occupancy, the
//! order in which squares emptied and filled is the only evidence of which piece went
//! where (a capture leaves the same occupancy as the piece still in the hand, or as
//! another capture by the same piece). The search only moves pieces seen leaving their
//! squares, in the order they left them.

use std::collections::VecDeque;
use std::time::Duration;

use shakmaty::Square;

/// Changes kept: several moves' worth (a move is a handful of changes, noise a few more),
/// so the deepest explanation the search looks for is covered.
const KEPT: usize = 192;

/// One square's reading changing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    pub at: Duration,
    pub square: Square,
    pub occupied: bool,
}

/// The last [`KEPT`] changes.
#[derive(Clone, Debug, Default)]
pub(crate) struct History {
    changes: VecDeque<Change>,
}

impl History {
    pub fn push(&mut self, change: Change) {
        if self.changes.len() == KEPT {
            self.changes.pop_front();
        }
        self.changes.push_back(change);
    }

    /// The same changes read with the board turned 180° (a1 is h8).
    pub fn turn(&mut self) {
        for c in &mut self.changes {
            c.square = c.square.flip_vertical().flip_horizontal();
        }
    }

    fn on(&self, square: Square) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(move |c| c.square == square)
    }

    /// When `square` was first left (read empty) at or after `from`.
    pub fn left(&self, square: Square, from: Duration) -> Option<Duration> {
        self.on(square)
            .find(|c| !c.occupied && c.at >= from)
            .map(|c| c.at)
    }

    /// When `square` was first filled (read occupied) at or after `from`.
    pub fn filled(&self, square: Square, from: Duration) -> Option<Duration> {
        self.on(square)
            .find(|c| c.occupied && c.at >= from)
            .map(|c| c.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn finds_the_first_lift_after_a_time() {
        let mut h = History::default();
        for (t, sq, occupied) in [
            (10, Square::E2, false),
            (20, Square::E4, true),
            (30, Square::E2, true),
            (40, Square::E2, false),
        ] {
            h.push(Change {
                at: ms(t),
                square: sq,
                occupied,
            });
        }
        assert_eq!(h.left(Square::E2, ms(0)), Some(ms(10)));
        assert_eq!(h.left(Square::E2, ms(11)), Some(ms(40)));
        assert_eq!(h.left(Square::E4, ms(0)), None);
        assert_eq!(h.filled(Square::E2, ms(0)), Some(ms(30)));
        assert_eq!(h.filled(Square::E4, ms(21)), None);
        for i in 0..KEPT {
            h.push(Change {
                at: ms(100 + i as u64),
                square: Square::A1,
                occupied: true,
            });
        }
        assert_eq!(h.left(Square::E2, ms(0)), None);
    }
}
