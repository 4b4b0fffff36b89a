//! On an occupancy-only board, a move read landing in the reading that shows the reply
//! begun may be the reply's piece landing after a capture swapped within a scan.

use std::time::Duration;

use shakmaty::{Bitboard, Move, Position};

use super::candidates::Origin;
use super::codes::{Codes, EMPTY, diff};
use super::engine::{Engine, Tentative};

impl Engine {
    /// Whether tentative move `t`, a quiet move, was read landing in the same reading
    /// (`now`) as a piece of the other side was read lifted, that piece able to move to
    /// the same square after a capture by the mover's piece: a capture swapped within a
    /// scan changes no square's occupancy, so the board shows that capture with the
    /// whole reply as well as the move with the reply's piece in the hand (Rxb2 swapped
    /// then Rd7-d2, read as Re2-d2 with the rook on d7 lifted). A landing and a lift read
    /// together tell nothing of which came first (as the search's `lifted_later` has
    /// it), so the move is not kept past the lift: the search weighs both.
    pub(super) fn reply_may_have_landed(
        &self,
        t: &Tentative,
        board: &Codes,
        now: Duration,
    ) -> bool {
        if !self.config.occupancy_only || now > t.since {
            return false;
        }
        let Some(c) = self
            .candidates
            .get(t.index)
            .filter(|c| c.origin == Origin::Current)
        else {
            return false;
        };
        let Move::Normal {
            from,
            to,
            capture: None,
            ..
        } = c.mv
        else {
            return false;
        };
        let pos = self.record.position();
        let lifted: Bitboard =
            (diff(board, &self.expected) & !c.changed & pos.board().by_color(!c.mover))
                .into_iter()
                .filter(|sq| board[sq.to_usize()] == EMPTY)
                .collect();
        if lifted.is_empty() {
            return false;
        }
        pos.legal_moves().iter().any(|&alt| {
            let Move::Normal {
                from: f,
                capture: Some(_),
                ..
            } = alt
            else {
                return false;
            };
            if f != from {
                return false;
            }
            let mut after = pos.clone();
            after.play_unchecked(alt);
            after
                .legal_moves()
                .iter()
                .any(|r| r.to() == to && r.from().is_some_and(|s| lifted.contains(s)))
        })
    }
}
