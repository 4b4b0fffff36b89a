//! Occupancy-only boards: a piece read in the hand far longer than anyone holds one is
//! the one capture it can make, swapped within a scan (the last move of a game has no
//! reply to decide it).

use std::time::Duration;

use shakmaty::Role;

use super::candidates::{Candidate, Match, Origin};
use super::codes::EMPTY;
use super::engine::{Ambiguity, Engine, closed};

impl Engine {
    /// When a board showing one piece of the side to move lifted, read unchanged since
    /// (the link up all along) and analysed (reported pending), is judged: a piece held
    /// this long was put down, on a square whose occupancy did not change, so it
    /// captured. Not while the link is down (nothing is read), after lost updates, with
    /// an ambiguity or unconfirmed moves open (the search and the arbiter decide those),
    /// nor once judged.
    pub(super) fn hold_deadline(&self) -> Option<Duration> {
        let lifted = self
            .diff
            .single_square()
            .is_some_and(|sq| self.observed[sq.to_usize()] == EMPTY);
        (self.config.occupancy_only
            && lifted
            && self.analysed
            && !self.hold_judged
            && !self.link_down
            && self.tentative.is_none()
            && !self.turn_open
            && !self.lost_updates
            && self.ambiguity.is_none()
            && self.unconfirmed.is_none()
            && !closed(self.record.status()))
        .then(|| self.held_since + self.config.hold)
    }

    /// Once the board has shown the piece lifted for the hold window: records the
    /// capture it makes when it can make only one; several (a promotion taken as a
    /// queen, as everywhere on such boards) are reported as ambiguous, binding nothing
    /// (the piece may yet land elsewhere), for the moves that follow or the arbiter.
    pub(super) fn judge_hold(&mut self, now: Duration) {
        if self.hold_deadline().is_none_or(|at| now < at) {
            return;
        }
        self.hold_judged = true;
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
                let ambiguity = Ambiguity {
                    sequences,
                    correction: false,
                    binding: false,
                    takeback: None,
                    hold: false,
                    unread_tail: false,
                };
                self.report_ambiguity(Some((1, ambiguity)));
            }
            Match::None => {}
        }
    }
}
