//! A board back on the recorded position while an ambiguity is open: moves made faster
//! than the settle window can come back to the position they started from (Rc5 Qe7 Re5
//! Qd8, after Rc5 Qe7 was reported), which no difference from the recorded position
//! shows. The readings since that position stood tell whether they were made: the one
//! sequence of moves back to it that they prove (see `search::round_trip`), starting
//! with one of the ambiguity's sequences, is recorded. Anything less (a piece lifted
//! and put back, readings several round trips fit) leaves the ambiguity as it is.

use shakmaty::Square;

use super::engine::Engine;
use super::search::{Evidence, Since, round_trip};

impl Engine {
    /// Records the round trip the readings since the recorded position stood prove, when
    /// the board shows that position again with an ambiguity of moves from it open.
    pub(super) fn round_trip(&mut self) {
        let Some(open) = self.ambiguity.as_ref() else {
            return;
        };
        if open.correction
            || open.takeback.is_some()
            || open.hold
            || self.turn_open
            || self.lost_updates
            || self.diff.any()
        {
            return;
        }
        // The board shows no difference, so no square has a time it began to differ: each
        // counts from when it was first read left since the position stood (its last
        // move's piece landed), the order the search judges the lifts by.
        let from = self.readings_from();
        let mut since: Since = [None; 64];
        for sq in Square::ALL {
            since[sq.to_usize()] = self.history.left(sq, from);
        }
        let evidence = Evidence {
            since: &since,
            ..self.evidence()
        };
        // Every change since was read, in turn (a fresh read shows changes in no order).
        if !evidence.continuous() {
            return;
        }
        let Some(moves) = round_trip(
            self.record.position(),
            evidence,
            self.config.occupancy_only,
            self.config.max_search_plies,
        ) else {
            return;
        };
        if open.sequences.iter().any(|s| moves.starts_with(s)) {
            self.record_sequence(&moves, false);
        }
    }
}
