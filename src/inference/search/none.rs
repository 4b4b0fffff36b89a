//! A cheaper proof that no sequence of moves explains a board, tried before the search
//! goes past two moves with nothing found: the same legal moves, cut wherever a king the
//! board shows cannot reach its square with the moves its side has left.
//!
//! Every sequence the search accepts (`leaf`) leaves each king the board shows on its
//! square, but for the side whose move is in progress, whose king that move may be
//! placing: a move in progress only changes squares to empty or to its own side's pieces
//! (`mover_code`, `in_progress`). A king walks one square a move, or castles once.

use shakmaty::{Bitboard, CastlingSide, Chess, Color, Position, Role, Square};

use super::IN_PROGRESS_SQUARES;
use super::bounds::{Counts, board_counts, counts_after};
use super::dfs::Search;
use crate::inference::codes::{Codes, diff, move_effect, piece_code};

/// The squares the target shows each side's king on (White, Black).
type Kings = [Bitboard; 2];

impl Search<'_> {
    /// Whether no sequence of `first..=deepest` legal moves from `pos` (showing `codes`),
    /// with or without a move in progress after it, can be accepted by `leaf`: false when
    /// not proven (also when the target shows every king where it stands, which cuts
    /// next to nothing, and once the proof has generated the moves of `budget` positions).
    pub(super) fn none_explain(
        &self,
        pos: &Chess,
        codes: &Codes,
        first: usize,
        deepest: usize,
        budget: &mut usize,
    ) -> bool {
        let mut kings = [Bitboard::EMPTY; 2];
        for (sq, &code) in self.target.iter().enumerate() {
            for (side, color) in Color::ALL.into_iter().enumerate() {
                if code == piece_code(Role::King.of(color)) {
                    kings[side].add(Square::new(sq as u32));
                }
            }
        }
        let moved = Color::ALL.into_iter().zip(kings).any(|(color, shown)| {
            pos.board()
                .king_of(color)
                .is_some_and(|k| (shown & !Bitboard::from(k)).any())
        });
        if self.occupancy_only || !moved {
            return false;
        }
        let counts = board_counts(pos.board());
        let changed = diff(codes, self.target);
        let proof = Proof {
            first,
            deepest,
            kings,
        };
        self.none_from(&proof, pos, codes, changed, &counts, 0, budget)
    }

    /// `none_explain` from a position `level` moves into the sequence, differing from
    /// the target on `changed`.
    #[allow(clippy::too_many_arguments)]
    fn none_from(
        &self,
        proof: &Proof,
        pos: &Chess,
        codes: &Codes,
        changed: Bitboard,
        counts: &Counts,
        level: usize,
        budget: &mut usize,
    ) -> bool {
        // A sequence ending here (at a depth searched) that `leaf` may accept.
        if level >= proof.first && self.may_end(pos, changed, &proof.kings) {
            return false;
        }
        // Past this position, the bounds of `dfs_from` for the deepest search (the
        // loosest: each holds for fewer moves left too) and the kings' walks.
        let remaining = proof.deepest - level;
        if remaining == 0
            || !kings_within(pos, &proof.kings, remaining)
            || !self.within_reach(pos, changed, remaining)
            || !self.reachable(pos, codes, changed, remaining, counts)
        {
            return true;
        }
        let Some(left) = budget.checked_sub(1) else {
            return false;
        };
        *budget = left;
        let turn = pos.turn();
        pos.legal_moves().iter().all(|&mv| {
            let effect = move_effect(mv, turn, false);
            let squares = effect.squares();
            let moved: Bitboard = squares
                .into_iter()
                .filter(|&sq| effect.code_on(sq) != Some(self.target[sq.to_usize()]))
                .collect();
            let mut next_codes = *codes;
            effect.apply(&mut next_codes);
            let mut next = pos.clone();
            next.play_unchecked(mv);
            self.none_from(
                proof,
                &next,
                &next_codes,
                (changed & !squares) | moved,
                &counts_after(*counts, mv, turn),
                level + 1,
                budget,
            )
        })
    }

    /// What `leaf` requires of a sequence ending at `pos` (differing from the target on
    /// `changed`) before it looks closer: complete, or a move in progress of the side
    /// to move changing at most four squares, each to empty or to one of its pieces,
    /// any king the target shows placed by it. (Not `in_progress` itself: it generates
    /// moves, and cost more where the proof fails than it saved where it holds.)
    fn may_end(&self, pos: &Chess, changed: Bitboard, kings: &Kings) -> bool {
        changed.is_empty()
            || changed.count() <= IN_PROGRESS_SQUARES
                && changed
                    .into_iter()
                    .all(|sq| self.mover_code(self.target[sq.to_usize()], pos.turn()))
                && kings_within(pos, kings, 0)
    }
}

/// The depths a proof covers and the kings' squares it holds the moves to.
struct Proof {
    first: usize,
    deepest: usize,
    kings: Kings,
}

/// Whether each king can stand on every square the target shows it on after at most
/// `remaining` more moves from `pos` and a move in progress after them (one more move
/// of the side to move then): a side moves every other ply.
fn kings_within(pos: &Chess, kings: &Kings, remaining: usize) -> bool {
    Color::ALL.into_iter().zip(kings).all(|(color, &shown)| {
        let Some(king) = pos.board().king_of(color) else {
            return true;
        };
        let moves = if color == pos.turn() {
            (remaining + 1).div_ceil(2)
        } else {
            remaining.div_ceil(2)
        };
        shown.into_iter().all(|sq| {
            let castled = [CastlingSide::KingSide, CastlingSide::QueenSide]
                .into_iter()
                .filter(|&side| pos.castles().has(color, side))
                .map(|side| 1 + side.king_to(color).distance(sq) as usize);
            castled.fold(king.distance(sq) as usize, usize::min) <= moves
        })
    })
}
