//! After the arbiter picks an explanation, the board's readings since it first showed the
//! picked position (after the one the picked moves start from) are replayed from that
//! position, as if the pick had come then: moves read one by one meanwhile are recorded
//! in turn, not explained afresh as one stretch of missed moves (which the search's
//! bounded depth may not reach, or may fit with a piece in the hand). A board read
//! with the next move under way (the dump after lost updates taken with a piece in the
//! hand) shows the picked position too, that piece lifted.

use std::time::Duration;

use shakmaty::{Position, Square};

use super::codes::{Codes, EMPTY, diff, from_board, to_hardware};
use super::engine::{Engine, FirstLift};

impl Engine {
    /// Replays the readings since the board first showed the recorded position, when it
    /// did since it was last read whole (a dump after lost updates), since the oldest
    /// change kept and since `after`: when the board showed the position the arbiter's
    /// moves were played from (a showing before it is a coincidence of an earlier move
    /// under way, such as a pawn in the hand leaving the board as a capture of it would,
    /// and replaying from there would undo the pick). Not when the position repeats an
    /// earlier one of the game shown since then: its first showing may then be the
    /// earlier one, and the moves since it would be recorded twice.
    pub(super) fn replay_since_shown(&mut self, after: Duration) {
        let Some((from, shown)) = self.first_shown(after) else {
            return;
        };
        let raw = self.raw;
        let replayed = self.history.split_off_after(from);
        self.restart_at(from);
        if shown != self.observed {
            // The pieces in the hand then: lifted as the board was read.
            self.raw = to_hardware(&shown, self.rotated);
            self.observe_codes(shown, from);
        }
        let mut changes = replayed.iter().peekable();
        while let Some(first) = changes.next() {
            let at = first.at;
            let mut board = self.observed;
            board[first.square.to_usize()] = first.code;
            while let Some(c) = changes.next_if(|c| c.at == at) {
                board[c.square.to_usize()] = c.code;
            }
            self.tick(at);
            self.raw = to_hardware(&board, self.rotated);
            self.observe_codes(board, at);
        }
        self.raw = raw;
    }

    /// Moves the anchor to when the board first showed the recorded position since the
    /// anchor (see `first_shown`), after moves an ambiguity carried far were recorded at
    /// once: the next move's lifts are read from there. (Read from the anchor the
    /// ambiguity began at, a square any of those moves left or filled is taken for the
    /// next move's: Rh7-d7 taken as read landing where a rook stood forty moves before.)
    pub(super) fn anchor_where_shown(&mut self) {
        if let Some((at, _)) = self.first_shown(self.anchor) {
            self.previous_anchor = self.anchor;
            self.anchor = at;
        }
    }

    /// When the board first showed the recorded position, if it is shown since then and
    /// the time is known (see `replay_since_shown`), and the board then. The positions
    /// the game passed through before updates were last lost were shown before then, so
    /// the board showing one of them since is a repetition the moves since made (a round
    /// trip made while nothing was read): that showing counts. A position never shown
    /// whole may have been shown with the next move under way: pieces of the side to
    /// move lifted and nothing else changed (a dump read with a piece in the hand).
    fn first_shown(&self, after: Duration) -> Option<(Duration, Codes)> {
        let occupancy = self.config.occupancy_only;
        if self.record.ply_count() == 0 {
            return None;
        }
        let expected = self.expected;
        let lost = self.lost_moves.len();
        let shown_before = match self.lost_at {
            Some(_) if self.record.ply_count() > lost && self.kept_lost_moves() => lost,
            _ => 0,
        };
        let repeated = (shown_before..self.record.ply_count()).any(|ply| {
            self.record
                .position_at(ply)
                .is_some_and(|p| from_board(p.board(), occupancy) == expected)
        });
        if repeated {
            return None;
        }
        let floor = self.lost_at.unwrap_or(Duration::ZERO).max(after);
        let since: Vec<(Duration, Codes)> = self
            .history
            .boards_back(self.observed)
            .take_while(|(at, _)| *at >= floor)
            .collect();
        let movers = self.record.position().us();
        let under_way = |board: &Codes| {
            let differing = diff(board, &expected);
            differing.any()
                && differing.is_subset(movers)
                && differing
                    .into_iter()
                    .all(|sq| board[sq.to_usize()] == EMPTY)
        };
        let first = |shows: &dyn Fn(&Codes) -> bool| {
            since.iter().rev().find(|(_, board)| shows(board)).copied()
        };
        first(&|board| *board == expected).or_else(|| first(&under_way))
    }

    /// Sets what the engine knows of the board as it stood at `at`, when it showed the
    /// recorded position: the changes after it are taken out of the history.
    fn restart_at(&mut self, at: Duration) {
        let lost = self.lost_at.filter(|t| *t <= at);
        for sq in Square::ALL {
            let i = sq.to_usize();
            self.changed_at[i] = self.history.last_change(sq, at).max(lost);
        }
        self.observed = self.expected;
        self.raw = to_hardware(&self.observed, self.rotated);
        self.diff = diff(&self.observed, &self.expected);
        self.since = [None; 64];
        self.previous_anchor = self.anchor.min(at);
        self.anchor = at;
        self.last_change = at;
        self.analysed = true;
        self.tentative = None;
        self.first_lift = FirstLift::NotYet;
        self.irregular_since = None;
        self.unexplained = None;
    }
}
