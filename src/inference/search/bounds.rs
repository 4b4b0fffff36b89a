//! Cheap bounds that cut the search: boards too far from a position for the moves left,
//! and a proof that no sequence of moves on squares seen to change reaches a board.

use shakmaty::{Bitboard, Board, Chess, Color, EnPassantMode, Move, Piece, Position, Role};

use super::dfs::Search;
use super::{IN_PROGRESS_SQUARES, MAX_LIFTED, MOVE_SQUARES};
use crate::inference::codes::{
    Codes, EMPTY, code_piece, diff, move_effect, move_squares, piece_code,
};

impl Search<'_> {
    /// Whether the squares still differing can be changed in `remaining` moves plus a
    /// move in progress: a move changes at most three squares (en passant), castling one
    /// more per side that may still castle, and a move in progress at most four. Cheap,
    /// and it cuts the last levels of the search, where most nodes are, when the board
    /// is far from every sequence (an unexplainable board).
    pub(super) fn within_reach(&self, pos: &Chess, changed: Bitboard, remaining: usize) -> bool {
        let most = 3 * remaining + castling_sides(pos) + IN_PROGRESS_SQUARES;
        changed.count() <= most
    }

    /// A lower bound on the moves still needed: each move puts one piece on its final
    /// square (castling two), so a side with more target squares left to fill than it
    /// has moves (plus one for a possible castling) cannot reach the target. A move in
    /// progress may add one placed piece and two in the hands.
    /// On an occupancy-only board, squares to fill and squares to empty are counted: a
    /// move fills one and empties one, castling one more of each per side that may
    /// still castle, and en passant empties two (its pawn's square and the square of the
    /// pawn it takes). That capture answers a two-step push made just before (or the
    /// one the position was reached by), so at most every other move is one.
    pub(super) fn reachable(
        &self,
        pos: &Chess,
        codes: &Codes,
        changed: Bitboard,
        remaining: usize,
        count: &Counts,
    ) -> bool {
        let moves_of = |color: Color| {
            let mine = if color == pos.turn() {
                (remaining + 1).div_ceil(2)
            } else {
                remaining.div_ceil(2)
            };
            mine + usize::from(pos.castles().has_color(color))
        };
        let slack = MAX_LIFTED;
        if self.occupancy_only {
            let (mut fill, mut empty) = (0, 0);
            for (have, want) in codes.iter().zip(self.target.iter()) {
                fill += usize::from(*have == EMPTY && *want != EMPTY);
                empty += usize::from(*have != EMPTY && *want == EMPTY);
            }
            let castles = castling_sides(pos);
            let en_passant_now = pos.ep_square(EnPassantMode::PseudoLegal).is_some();
            let en_passant = (remaining + usize::from(en_passant_now)) / 2;
            return fill <= remaining + 1 + castles
                && empty <= remaining + castles + en_passant + slack;
        }
        // Pieces only disappear by capture, one per move of the other side, or into a hand.
        // A piece only appears by promotion, for a pawn that disappears: a board with a
        // piece more than that (a misread code) is no sequence of moves, whatever its depth.
        let pawn = usize::from(piece_code(Role::Pawn.of(Color::White)) - 1);
        let mut lost = 0;
        for (color, side) in [(Color::White, 0), (Color::Black, 1)] {
            let (have, want) = (&count[side], &self.target_pieces[side]);
            let Some(promoted) = have[pawn].checked_sub(want[pawn]) else {
                return false;
            };
            let appeared: usize = (0..6)
                .filter(|&r| r != pawn)
                .map(|r| want[r].saturating_sub(have[r]))
                .sum();
            if appeared > promoted {
                return false;
            }
            let total = |c: &[usize; 6]| c.iter().sum::<usize>();
            let Some(gone) = total(have).checked_sub(total(want)) else {
                return false;
            };
            lost += gone.saturating_sub(moves_of(!color));
        }
        if lost > slack {
            return false;
        }
        let mut need = [0usize; 2];
        for sq in changed {
            if let Some(piece) = code_piece(self.target[sq.to_usize()]) {
                need[usize::from(piece.color.is_black())] += 1;
            }
        }
        need[0] <= moves_of(Color::White) && need[1] <= moves_of(Color::Black)
    }
}

/// How many sides may still castle in `pos`: each castling changes one square more than
/// any other move (and empties one more, and fills one more).
fn castling_sides(pos: &Chess) -> usize {
    Color::ALL
        .into_iter()
        .filter(|&c| pos.castles().has_color(c))
        .count()
}

/// Whether a sequence of `remaining` legal moves from `pos` (showing `codes`), none
/// starting with `skip_first` and each changing only squares in `seen`, ends on `target`
/// exactly: a necessary condition for an explanation that is complete and was seen
/// whole. Each position whose moves it generates spends one of `budget`; once it is
/// spent, the answer is yes (nothing was ruled out).
pub(super) fn seen_moves_reach(
    pos: &Chess,
    codes: &Codes,
    target: &Codes,
    seen: Bitboard,
    remaining: usize,
    skip_first: Option<Move>,
    budget: &mut usize,
) -> bool {
    // Every square still differing is changed by a move to come (at most four each).
    let changed = diff(codes, target);
    if (changed & !seen).any() || changed.count() > MOVE_SQUARES * remaining {
        return false;
    }
    let Some(left) = budget.checked_sub(1) else {
        return true;
    };
    *budget = left;
    let turn = pos.turn();
    pos.legal_moves().iter().any(|&mv| {
        let squares = move_squares(mv, turn);
        if (squares & !seen).any()
            || Some(mv) == skip_first
            || remaining == 1 && (changed & !squares).any()
        {
            return false;
        }
        let mut next_codes = *codes;
        move_effect(mv, turn, false).apply(&mut next_codes);
        if remaining == 1 {
            return next_codes == *target;
        }
        let mut next = pos.clone();
        next.play_unchecked(mv);
        seen_moves_reach(
            &next,
            &next_codes,
            target,
            seen,
            remaining - 1,
            None,
            budget,
        )
    })
}

/// How many pieces of each kind a board holds, as `piece_counts` has them.
pub(super) type Counts = [[usize; 6]; 2];

/// `piece_counts` of the codes of `board`, from its piece bitboards.
pub(super) fn board_counts(board: &Board) -> Counts {
    let mut count = [[0; 6]; 2];
    for color in Color::ALL {
        for role in Role::ALL {
            let k = usize::from(piece_code(role.of(color)) - 1);
            count[k / 6][k % 6] = board.by_piece(role.of(color)).count();
        }
    }
    count
}

/// `count` (a position's `board_counts`) after `mv` by `turn`: a capture takes a piece
/// of the other side, a promotion turns a pawn into another piece. (Kept along the
/// search's path: counting the twelve bitboards again at every position was a visible
/// share of the search.)
pub(super) fn counts_after(mut count: Counts, mv: Move, turn: Color) -> Counts {
    let mut add = |piece: Piece, n: isize| {
        let k = usize::from(piece_code(piece) - 1);
        count[k / 6][k % 6] = count[k / 6][k % 6].saturating_add_signed(n);
    };
    if let Some(role) = mv.capture() {
        add(role.of(!turn), -1);
    }
    if let Some(role) = mv.promotion() {
        add(Role::Pawn.of(turn), -1);
        add(role.of(turn), 1);
    }
    count
}

/// How many pieces of each kind `codes` show, by colour (White, Black) and code (the
/// six codes of a colour in order, its pawn first).
pub(super) fn piece_counts(codes: &Codes) -> [[usize; 6]; 2] {
    let mut count = [[0; 6]; 2];
    for &code in codes {
        if let 1..=12 = code {
            let k = usize::from(code - 1);
            count[k / 6][k % 6] += 1;
        }
    }
    count
}
