//! A piece read in the hand far longer than anyone holds one was put down. On an
//! occupancy-only board it is the one capture it can make, swapped within a scan (the
//! last move of a game has no reply to decide it), also past the sequences of an open
//! ambiguity; on a board read after lost updates, the moves made while nothing was
//! read took it off.

use std::time::Duration;

use shakmaty::{Bitboard, Color, Move, Role};

use super::analysis::MAX_RECORDED_ROUNDS;
use super::candidates::{Candidate, Match, Origin};
use super::codes::EMPTY;
use super::engine::{Ambiguity, Engine, closed};
use super::search::{Evidence, explain_to_move};

impl Engine {
    /// When a board showing one piece lifted, read unchanged since (the link up all
    /// along) and analysed (reported pending), is judged: a piece held this long was put
    /// down. On an occupancy-only board (a piece of the side to move; not after lost
    /// updates, which the search decides), on a square whose occupancy did not change,
    /// so it captured; so too with a binding ambiguity open, past its sequences (any
    /// board then: they may leave a piece in the hand). On a board that reads pieces,
    /// only after lost updates (see `judge_lost`). Not while the link is down (nothing
    /// is read), with another ambiguity or unconfirmed moves open (the search and the
    /// arbiter decide those), nor once judged.
    pub(super) fn hold_deadline(&self) -> Option<Duration> {
        let occupancy = self.config.occupancy_only;
        let judged = match &self.ambiguity {
            Some(open) => occupancy && !self.lost_updates && open.binding,
            None => {
                occupancy != self.lost_updates
                    && self
                        .diff
                        .single_square()
                        .is_some_and(|sq| self.observed[sq.to_usize()] == EMPTY)
            }
        };
        (judged
            && self.analysed
            && !self.hold_judged
            && !self.link_down
            && self.tentative.is_none()
            && !self.turn_open
            && self.unconfirmed.is_none()
            && !closed(self.record.status()))
        .then(|| self.held_since + self.config.hold)
    }

    /// Once the board has shown the piece lifted for the hold window: records the
    /// capture it makes when it can make only one; several (a promotion taken as a
    /// queen, as everywhere on such boards) are reported as ambiguous, binding nothing
    /// (the piece may yet land elsewhere), for the moves that follow or the arbiter.
    /// With an ambiguity open, its sequences are carried on with the piece put down
    /// (see `Engine::carried`).
    pub(super) fn judge_hold(&mut self, now: Duration) {
        if self.hold_deadline().is_none_or(|at| now < at) {
            return;
        }
        self.hold_judged = true;
        if self.lost_updates {
            self.judge_lost();
            return;
        }
        if self.ambiguity.is_some() {
            self.carried(MAX_RECORDED_ROUNDS, false, true);
            return;
        }
        let capture = |c: &Candidate| c.origin == Origin::Current && c.mv.is_capture();
        match self.candidates.find(&self.observed, self.diff, capture) {
            Match::One(index) => {
                self.previous_anchor = self.anchor;
                self.anchor = self.last_change;
                self.commit(index);
            }
            Match::Several => {
                let partial = self.candidates.partial(&self.observed, self.diff, true);
                let sequences = partial
                    .into_iter()
                    .filter_map(|i| self.candidates.get(i))
                    .filter(|c| capture(c) && c.changed == self.diff)
                    .filter(|c| c.mv.promotion().is_none_or(|r| r == Role::Queen))
                    .map(|c| vec![c.mv])
                    .collect();
                self.report_unbound(1, sequences);
            }
            Match::None => {}
        }
    }

    /// A board read after lost updates with one piece off its square, reported pending
    /// (a capture with its victim taken off first, or a piece in the hand) and unchanged
    /// for the hold window: the move never came, so moves made while nothing was read
    /// may have taken that piece off (Bf3 h1=N+ Bxh1 leave only the pawn gone from h2,
    /// shown as Kxh2 under way until the game was over). The fewest whole sequences that
    /// explain the board, of either parity, are reported for the arbiter, binding
    /// nothing: the move in progress may still come.
    fn judge_lost(&mut self) {
        let evidence = Evidence {
            seen: Bitboard::FULL,
            ..self.evidence()
        };
        let depth = self.config.max_search_plies;
        let pos = self.record.position();
        let (sequences, _) = [Color::White, Color::Black]
            .map(|turn| explain_to_move(pos, &self.observed, evidence, false, depth, turn))
            .into_iter()
            .filter(|(found, _)| !found.is_empty())
            .min_by_key(|(found, _)| found[0].len())
            .unwrap_or_default();
        if let Some(plies) = sequences.first().map(Vec::len) {
            self.report_unbound(plies, sequences);
        }
    }

    /// Reports `sequences`, of `plies` moves from the recorded position, as an ambiguity
    /// that binds nothing: the piece may yet land elsewhere.
    fn report_unbound(&mut self, plies: usize, sequences: Vec<Vec<Move>>) {
        let ambiguity = Ambiguity {
            sequences,
            correction: false,
            binding: false,
            takeback: None,
            hold: false,
            unread_tail: false,
        };
        self.report_ambiguity(Some((plies, ambiguity)));
    }
}
