//! A board back on the recorded position while an ambiguity is open: moves made faster
//! than the settle window can come back to the position they started from (Rc5 Qe7 Re5
//! Qd8, after Rc5 Qe7 was reported), which no difference from the recorded position
//! shows. The readings since the board left that position tell whether they were made:
//! the one sequence of moves back to it that they prove (see `search::round_trip`),
//! starting with one of the ambiguity's sequences, is recorded. So it is after lost
//! updates, the ambiguity's moves explaining the fresh read, when the moves back were
//! read after it (Kh3 read in the dump, then Nf3 Kg2 Ne1+). Anything less (a piece
//! lifted and put back, readings several round trips fit) leaves the ambiguity as it is.

use std::time::Duration;

use shakmaty::{Move, Square};

use super::codes::{Codes, EMPTY, diff};
use super::engine::Engine;
use super::search::{Evidence, Since, round_trip};

impl Engine {
    /// Records the round trip the readings since the board left the recorded position
    /// prove, when the board shows that position again with an ambiguity of moves from
    /// it open.
    pub(super) fn round_trip(&mut self) {
        let Some(open) = self.ambiguity.as_ref() else {
            return;
        };
        if open.correction
            || open.takeback.is_some()
            || open.hold
            || self.turn_open
            || self.diff.any()
        {
            return;
        }
        let from = self
            .left_recorded_position()
            .unwrap_or_else(|| self.readings_from());
        // The board shows no difference, so no square has a time it began to differ: each
        // counts from when it was first read left since the position was left, the order
        // the search judges the lifts by.
        let mut since: Since = [None; 64];
        for sq in Square::ALL {
            since[sq.to_usize()] = self.history.left(sq, from);
        }
        let evidence = Evidence {
            since: &since,
            readings: from,
            ..self.evidence()
        };
        // Every change since was read, in turn; or, after updates were lost meanwhile,
        // the last move was read made after the fresh read (which shows changes in no
        // order): the moves back to the position were read.
        let read_back = |moves: &[Move]| {
            evidence.lost.is_none_or(|lost| {
                let square = moves.last().and_then(|mv| mv.from());
                square
                    .and_then(|sq| Some((sq, self.history.filled(sq, lost)?)))
                    .and_then(|(sq, stood)| self.history.left(sq, stood))
                    .is_some_and(|left| left > lost)
            })
        };
        let fits = |moves: &[Move]| {
            open.sequences.iter().any(|s| moves.starts_with(s)) && read_back(moves)
        };
        if let Some(moves) = round_trip(
            self.record.position(),
            evidence,
            self.config.occupancy_only,
            self.config.max_search_plies,
            fits,
        ) {
            self.record_sequence(&moves, false);
        }
    }

    /// When the board, showing the recorded position, last showed it before a piece was
    /// read standing where that position has none (a move made: a piece lifted and put
    /// back is none): the first change after that showing (the round trip's first lift,
    /// or a touch before it). Not when the last move's piece was last read landing: the
    /// round trip may take that piece away and put it back (Ne1+, then Kh3 Nf3 Kg2
    /// Ne1+). None when no such showing was read since the board first showed the last
    /// recorded move (the same position earlier in the game is another one).
    fn left_recorded_position(&self) -> Option<Duration> {
        let start = self.anchor.saturating_sub(self.config.settle);
        let placed =
            |board: &Codes| (0..64).any(|i| self.expected[i] == EMPTY && board[i] != EMPTY);
        let mut away = false;
        let mut left = None;
        for (at, board) in self.history.boards_back(self.observed) {
            if placed(&board) {
                away = true;
            } else if away && !diff(&board, &self.expected).any() {
                return left;
            }
            if at < start {
                return None;
            }
            left = Some(at);
        }
        None
    }
}
