//! Moves recorded from a board read after lost updates stay unconfirmed until a move read
//! since agrees with the side to move they leave; a board that contradicts it withdraws
//! them and is reported for the arbiter.
//!
//! A board read whole after lost updates (a link gap, a restart) is explained by the
//! fewest moves that reach it, but pieces may have gone away and back meanwhile: a king
//! that went a6-a5-b6-a5 while the queen went d3-a3-b3 is also Ka5 Qb3, two plies for
//! five, which leaves the other side to move. No search can tell them apart; the next
//! move read can, when it is made by the side the record says is not to move. Fitting
//! that move from the record's position instead takes moves never seen while the link
//! was up (a bishop never lifted), or leaves out a piece of the other side read away
//! and back around it (a rook read on b1 for a second), and the game goes on wrong.

use std::time::Duration;

use shakmaty::{Bitboard, Chess, Move, Position, Square};

use super::analysis::sequences_of;
use super::codes::{from_board, move_squares};
use super::engine::{Ambiguity, Engine};
use super::event::IrregularKind;
use super::search::{
    Evidence, Explanation, codes_along, explain, explain_to_move, stood_shown_in_order,
};

/// Moves recorded from a board read after lost updates, not yet confirmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Unconfirmed {
    /// The record's length before them.
    pub ply: usize,
    /// When the board was read (updates were last lost): later changes were read live.
    pub at: Duration,
}

/// Lines of the side the record says is not to move that explain the board (see
/// `Engine::other_parity`).
struct OtherParity {
    /// The recorded position with that side to move.
    start: Chess,
    lines: Vec<Vec<Move>>,
    /// The search found one line only, complete: the board is explained that way.
    found: bool,
}

impl Engine {
    /// Keeps track of what a move recorded after `ply` moves means for the unconfirmed
    /// moves: one explaining the board read after lost updates is unconfirmed; any other
    /// (a move read live, the arbiter's) confirms those before it.
    pub(super) fn note_recorded(&mut self, ply: usize) {
        self.unconfirmed = match (self.lost_updates, self.lost_at) {
            (true, Some(at)) => Some(self.unconfirmed.unwrap_or(Unconfirmed { ply, at })),
            _ => None,
        };
    }

    /// Whether every square `moves` (legal one after the other from `start`) change was
    /// read changing after `at`, while the link was up.
    fn read_since(&self, at: Duration, start: &Chess, moves: &[Move]) -> bool {
        let mut turn = start.turn();
        let squares = moves.iter().fold(Bitboard::EMPTY, |all, &mv| {
            let squares = move_squares(mv, turn);
            turn = !turn;
            all | squares
        });
        squares
            .into_iter()
            .all(|sq: Square| self.changed_at[sq.to_usize()].is_some_and(|changed| changed > at))
    }

    /// Whether the moves read since unconfirmed moves were recorded are explained only by
    /// the side the record says is not to move, every square they change read changing
    /// since: the unconfirmed moves are then withdrawn (see `withdraw`). A line of the
    /// record's side that leaves out a piece read standing that one of the other side's
    /// lines shows (see `shows_less`) does not explain them; when every line of the
    /// record's side read since does so, one of several equally short lines of the
    /// other side is enough. A board that reads occupancy only cannot show whose piece
    /// moved.
    pub(super) fn contradicted(&mut self) -> bool {
        let Some(unconfirmed) = self.unconfirmed else {
            return false;
        };
        if self.config.occupancy_only || self.turn_open || self.lost_updates {
            return false;
        }
        let at = unconfirmed.at;
        let Some(other) = self.other_parity(at) else {
            return false;
        };
        let pos = self.record.position().clone();
        let depth = self.config.max_search_plies;
        let found = explain(&pos, &self.observed, self.evidence(), false, depth, None);
        let own = sequences_of(found);
        let read: Vec<_> = own
            .iter()
            .filter(|s| self.read_since(at, &pos, s))
            .collect();
        let fits = read
            .iter()
            .any(|s| !self.shows_less(unconfirmed, s, &other));
        if fits || !other.found && read.is_empty() {
            return false;
        }
        self.withdraw();
        true
    }

    /// Whether `mv`, a move of the side to move that the board shows made, shows less of
    /// what was read since unconfirmed moves were recorded than a line of the other side
    /// does (see `shows_less`): it is then left to the analysis (see `contradicted`).
    pub(super) fn contradicts_unconfirmed(&self, mv: Move) -> bool {
        let Some(unconfirmed) = self.unconfirmed else {
            return false;
        };
        if self.config.occupancy_only || self.turn_open || self.lost_updates {
            return false;
        }
        // Most moves show all that was read: no search for those.
        !self.stood_shown(unconfirmed, self.record.position(), &[mv])
            && self
                .other_parity(unconfirmed.at)
                .is_some_and(|other| self.shown_by_other(unconfirmed, &other))
    }

    /// Whether `moves`, from the recorded position, leave out a piece read standing
    /// since the unconfirmed moves' board was read (longer than a scan, and moved on)
    /// that one of `other`'s lines shows where it stood: a rook read on b1 for a second
    /// and back on b2 is the other side's Rb1 and R1b2, not the record's side's Ra2 with
    /// the rook never moved.
    fn shows_less(&self, unconfirmed: Unconfirmed, moves: &[Move], other: &OtherParity) -> bool {
        !self.stood_shown(unconfirmed, self.record.position(), moves)
            && self.shown_by_other(unconfirmed, other)
    }

    /// Whether one of `other`'s lines shows each piece read standing where it stood
    /// (see `stood_shown`).
    fn shown_by_other(&self, unconfirmed: Unconfirmed, other: &OtherParity) -> bool {
        other
            .lines
            .iter()
            .any(|line| self.stood_shown(unconfirmed, &other.start, line))
    }

    /// Whether the unconfirmed moves and then `moves`, from `start` (the recorded
    /// position, or it with the other side to move), show each piece read standing since
    /// the board was read after lost updates where it stood, in the order read (see
    /// `stood_shown_in_order`).
    fn stood_shown(&self, unconfirmed: Unconfirmed, start: &Chess, moves: &[Move]) -> bool {
        let Some(before) = self.record.position_at(unconfirmed.ply) else {
            return true;
        };
        let recorded: Vec<Move> = self.record.moves()[unconfirmed.ply..]
            .iter()
            .map(|m| m.mv)
            .collect();
        let codes = from_board(before.board(), false);
        let mut positions = codes_along(before, &codes, &recorded);
        positions.extend(
            codes_along(start, &self.expected, moves)
                .into_iter()
                .skip(1),
        );
        let window = (unconfirmed.at, self.config.settle);
        stood_shown_in_order(&positions, &self.history, window)
    }

    /// The lines of the side the record says is not to move that explain the board
    /// completely, every square they change read changing after `at`: the search's
    /// only one, or those of its equally short ones.
    fn other_parity(&self, at: Duration) -> Option<OtherParity> {
        let start = self.record.position().clone().swap_turn().ok()?;
        let depth = self.config.max_search_plies;
        let (lines, found) =
            match explain(&start, &self.observed, self.evidence(), false, depth, None) {
                Explanation::Found {
                    moves,
                    complete: true,
                    ..
                } => (vec![moves], true),
                Explanation::Ambiguous { sequences, .. } => (sequences, false),
                _ => return None,
            };
        let lines: Vec<_> = lines
            .into_iter()
            .filter(|s| self.ends_on_board(&start, s) && self.read_since(at, &start, s))
            .collect();
        (!lines.is_empty()).then_some(OtherParity {
            start,
            lines,
            found,
        })
    }

    /// Whether a correction of the last move, read live since it was recorded from a board
    /// read after lost updates, would replace a move still unconfirmed while the side the
    /// record says is not to move explains the board as well. Such a correction is as
    /// likely the other parity's move read live (Bc4 Ba4 recorded for Bd3 Ba4 Bc4, then
    /// the bishop on a4 read going to d7: not Bd7 in place of Ba4, which leaves the
    /// bishop read standing on a4 out); it is left to the analysis, which withdraws the
    /// unconfirmed moves (see `contradicted`). A correction the other parity cannot
    /// explain (e5 read going on to e6, Black's pawn unable to go back) is the same
    /// side's and taken. Occupancy-only boards cannot show whose piece moved.
    pub(super) fn corrects_unconfirmed(&self) -> bool {
        self.unconfirmed.is_some_and(|u| {
            self.record.ply_count() > u.ply
                && !self.lost_updates
                && !self.config.occupancy_only
                && self.other_parity(u.at).is_some_and(|other| other.found)
        })
    }

    /// Whether the board shows a position of the game from before the last move while
    /// moves recorded from a board read after lost updates are unconfirmed: the moves
    /// read since brought back an earlier position, which their other parity explains
    /// as well as a takeback (pieces went away and back while nothing was read, and the
    /// side to move is the other one). Taking back to that position would retract moves
    /// read live before the link went down; the unconfirmed moves are withdrawn instead
    /// and the board read then reported (see `withdraw`). Occupancy-only boards cannot
    /// show whose piece moved.
    pub(super) fn repeated_unconfirmed(&mut self) -> bool {
        if self.unconfirmed.is_none()
            || self.config.occupancy_only
            || self.turn_open
            || self.lost_updates
        {
            return false;
        }
        self.withdraw();
        true
    }

    /// Whether each of `sequences` (from the recorded position, or from the one before
    /// the last move when `correction`) fits the moves read since unconfirmed moves were
    /// recorded with a move never read while the link was up: the board read after lost
    /// updates was then explained wrongly (see `withdraw`).
    pub(super) fn unseen_fit(&self, sequences: &[Vec<Move>], correction: bool) -> bool {
        let Some(unconfirmed) = self.unconfirmed else {
            return false;
        };
        if self.config.occupancy_only || self.lost_updates || sequences.is_empty() {
            return false;
        }
        let n = self.record.ply_count();
        let start = match correction {
            true => n.checked_sub(1).and_then(|i| self.record.position_at(i)),
            false => Some(self.record.position()),
        };
        let Some(start) = start.cloned() else {
            return false;
        };
        sequences
            .iter()
            .all(|s| !self.read_since(unconfirmed.at, &start, s))
    }

    /// Takes back the unconfirmed moves and reports the position they reached for the
    /// arbiter: as ambiguous between the sequences of the other parity that reach it
    /// (the fewest moves, within the search depth, after which the side that moved since
    /// is to move), or irregular when there are none. Nothing is recorded until the
    /// arbiter picks or enters the moves; the readings since are then replayed.
    pub(super) fn withdraw(&mut self) {
        let Some(unconfirmed) = self.unconfirmed.take() else {
            return;
        };
        let reached = self.expected;
        let mover = !self.record.position().turn();
        self.retract_to(unconfirmed.ply);
        self.lost_updates = true;
        let evidence = Evidence {
            seen: Bitboard::FULL,
            ..self.evidence()
        };
        let (sequences, exhaustive) = explain_to_move(
            self.record.position(),
            &reached,
            evidence,
            false,
            self.config.max_search_plies,
            mover,
        );
        let plies = sequences.first().map_or(0, Vec::len);
        let ambiguity = Ambiguity {
            sequences,
            correction: false,
            binding: exhaustive,
            takeback: None,
            hold: true,
            unread_tail: false,
        };
        if plies == 0 {
            self.ambiguity = Some(ambiguity);
            self.irregular(IrregularKind::NoLegalContinuation);
        } else {
            self.report_ambiguity(Some((plies, ambiguity)));
        }
    }
}
