//! A board back on the recorded position: moves made faster than the settle window can
//! come back to the position they started from (Rc5 Qe7 Re5 Qd8, after Rc5 Qe7 was
//! reported; Rde3 Raa1 Rd3 Ra5, none of them resting a settle window), which no
//! difference from the recorded position shows. The readings since the board left that
//! position tell whether they were made: the one sequence of moves back to it that they
//! prove (see `search::round_trip`), starting with one of the sequences of an ambiguity
//! open, is recorded. So it is after lost updates, the ambiguity's moves explaining the
//! fresh read, when the moves back were read after it (Kh3 read in the dump, then Nf3
//! Kg2 Ne1+). Anything less (a piece lifted and put back, readings several round trips
//! fit) leaves the record and any ambiguity as they are.

use std::time::Duration;

use shakmaty::{Move, Position, Square};

use super::codes::{Codes, EMPTY, diff};
use super::engine::{Engine, closed};
use super::search::{Evidence, Since, round_trip};

impl Engine {
    /// Records the round trip the readings since the board left the recorded position
    /// prove, when the board shows that position again (with an ambiguity of moves from
    /// it open, one that starts with one of its sequences).
    pub(super) fn round_trip(&mut self) {
        let open = self.ambiguity.as_ref();
        if open.is_some_and(|open| open.correction || open.takeback.is_some() || open.hold)
            || self.turn_open
            || self.diff.any()
            || closed(self.record.status())
            || !self.may_have_come_back()
        {
            return;
        }
        let floor = self.round_trip_floor();
        let left = self.left_recorded_position(floor);
        // With no ambiguity open, a piece read elsewhere since the floor (see
        // `may_have_come_back`) must also have been read since the board left the
        // position.
        if open.is_none() && left.is_some_and(|left| !self.placed_elsewhere(left)) {
            return;
        }
        let from = left.unwrap_or_else(|| match open {
            Some(_) => self.readings_from(),
            None => floor,
        });
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
            open.is_none_or(|open| open.sequences.iter().any(|s| moves.starts_with(s)))
                && read_back(moves)
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

    /// Whether the board, showing the recorded position, may have come back to it: with
    /// an ambiguity open, or when a piece was read since `round_trip_floor` where that
    /// position has none (a piece lifted and put back, or a flicker, is no move, and
    /// most boards that come back are those).
    fn may_have_come_back(&self) -> bool {
        self.ambiguity.is_some() || self.placed_elsewhere(self.round_trip_floor())
    }

    /// From when the readings may tell of a round trip: when the board first showed the
    /// last move, or, with no ambiguity open, the last reading the search recorded moves
    /// from if later. What was read before is of moves recorded (the same position shown
    /// before them is another one: Kg1 Kb8 Kh1 Kc8 Kg1 recorded, the kings' shuffle is no
    /// round trip since), what was read since of moves after them (the round trip may
    /// end with the last move's piece put back where it landed: Ra5 read as the rook on
    /// d3 was lifted, then Rde3 Raa1 Rd3 Ra5).
    fn round_trip_floor(&self) -> Duration {
        let shown = self.anchor.saturating_sub(self.config.settle);
        match self.ambiguity {
            Some(_) => shown,
            None => shown.max(self.searched_through),
        }
    }

    /// When the board, showing the recorded position, last showed it before a piece was
    /// read standing where that position has none (a move made: a piece lifted and put
    /// back is none): the first change after that showing (the round trip's first lift,
    /// or a touch before it). Not when the last move's piece was last read landing: the
    /// round trip may take that piece away and put it back (Ne1+, then Kh3 Nf3 Kg2
    /// Ne1+). None when no such showing was read since `start` (when the board first
    /// showed the last recorded move, or later: the same position earlier is another).
    fn left_recorded_position(&self, start: Duration) -> Option<Duration> {
        let mut away = false;
        let mut left = None;
        for (at, board) in self.history.boards_back(self.observed) {
            if self.placed(&board) {
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

    /// Whether a piece was read at or after `from` where the recorded position has none.
    fn placed_elsewhere(&self, from: Duration) -> bool {
        let empty = !self.record.position().board().occupied();
        (self.history.filled_since(from) & empty).any()
    }

    /// Whether `board` has a piece where the recorded position has none.
    fn placed(&self, board: &Codes) -> bool {
        (0..64).any(|i| self.expected[i] == EMPTY && board[i] != EMPTY)
    }
}
