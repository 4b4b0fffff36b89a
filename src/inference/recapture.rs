//! On an occupancy-only board, a recorded capture replaced by another capture of the same
//! piece once the moves that follow fit only that one.
//!
//! A capture swapped within a scan (its square never read changing) leaves the same
//! occupancy as a capture of another piece by the same mover from the same square, and a
//! square read emptied and filled again beside it (a flicker, a piece adjusted) reads as
//! that other capture's landing: the board cannot tell them apart then. Every later move
//! was read as squares emptied and filled, so under the other capture the same moves (by
//! their squares) leave the same boards. When a board the record cannot explain at all is
//! explained after exactly one such replacement, the later moves have decided it.

use shakmaty::{Chess, Move, Position};

use super::engine::Engine;
use super::search::{Explanation, explain};

/// How many recorded plies back a capture may be replaced: a piece taken on the wrong
/// square shows when that piece or the one taken moves next, which can be many moves
/// later (round 2 lichess #405: Qxh6 read as Qxc3, the queen moved again 14 plies on).
const REACH: usize = 24;

impl Engine {
    /// On an occupancy-only board the record cannot explain (the search from it and the
    /// correction of its last move found nothing): replaces a recorded capture by another
    /// capture of the same piece from the same square, when exactly one such replacement
    /// (with the later moves by the same squares) leaves a position the search explains.
    /// The moves from the replaced capture are retracted and recorded again, and the
    /// board is explained from there. Not after lost updates, nor beside an open
    /// ambiguity or unconfirmed moves (their own rules settle those boards).
    pub(super) fn recaptured(&mut self, rounds: usize) -> bool {
        if !self.config.occupancy_only
            || self.lost_updates
            || self.unconfirmed.is_some()
            || self.ambiguity.is_some()
            || rounds == 0
        {
            return false;
        }
        let Some((ply, moves)) = self.replacement() else {
            return false;
        };
        self.retract_to(ply);
        self.record_sequence(&moves, false);
        // The board after it is explained as after any recorded move: recorded, or
        // reported as ambiguous.
        if self.tentative.is_none()
            && self.diff.any()
            && !self.pending()
            && !self.explained(rounds - 1)
        {
            self.irregular(super::event::IrregularKind::NoLegalContinuation);
        }
        true
    }

    /// The one replacement after which the search explains the board (whole, in part or
    /// ambiguously), if exactly one does: the ply of the replaced capture and the moves
    /// from there to the recorded position.
    fn replacement(&self) -> Option<(usize, Vec<Move>)> {
        let n = self.record.ply_count();
        let depth = self.config.max_search_plies + 2;
        let mut fits = None;
        for ply in n.saturating_sub(REACH)..n {
            let Move::Normal {
                from,
                to,
                capture: Some(_),
                promotion,
                ..
            } = self.record.moves()[ply].mv
            else {
                continue;
            };
            let Some(before) = self.record.position_at(ply) else {
                continue;
            };
            let others = before.legal_moves().into_iter().filter(|m| {
                m.is_capture()
                    && matches!(m, Move::Normal { .. })
                    && m.from() == Some(from)
                    && m.to() != to
                    && m.promotion() == promotion
            });
            for other in others {
                let Some((pos, moves)) = self.replayed(before, other, ply + 1) else {
                    continue;
                };
                let found = explain(&pos, &self.observed, self.evidence(), true, depth, None);
                if found == Explanation::Nothing {
                    continue;
                }
                if fits.is_some() {
                    return None;
                }
                fits = Some((ply, moves));
            }
        }
        fits
    }

    /// `first` played from `before`, then the recorded moves from `ply` on by their
    /// squares (the same occupancy changes): the position reached and the moves, or
    /// None when one of them is not legal there.
    fn replayed(&self, before: &Chess, first: Move, ply: usize) -> Option<(Chess, Vec<Move>)> {
        let mut pos = before.clone();
        pos.play_unchecked(first);
        let mut moves = vec![first];
        for recorded in &self.record.moves()[ply..] {
            let mv = recorded.mv;
            let same = pos.legal_moves().into_iter().find(|m| {
                m.from() == mv.from()
                    && m.to() == mv.to()
                    && m.promotion() == mv.promotion()
                    && m.is_castle() == mv.is_castle()
            })?;
            pos.play_unchecked(same);
            moves.push(same);
        }
        Some((pos, moves))
    }
}
