//! Positions read off a board: whether they can occur at all, and turning them into a
//! shakmaty position when the operator accepts one.

use shakmaty::{Bitboard, CastlingMode, Chess, Color, Position, Rank, Role, Setup, Square};

use super::codes::{Codes, to_board};
use super::event::PositionProblem;

/// What makes the board's position impossible, assuming `just_moved` made the last
/// move: two kings of a colour, pawns on the first or last rank, the side that just
/// moved in check.
pub(crate) fn problems(codes: &Codes, just_moved: Color) -> Vec<PositionProblem> {
    let board = to_board(codes);
    let mut out = Vec::new();
    for color in Color::ALL {
        if board.by_piece(Role::King.of(color)).count() > 1 {
            out.push(PositionProblem::TwoKings(color));
        }
    }
    let back_ranks = Bitboard::from_rank(Rank::First) | Bitboard::from_rank(Rank::Eighth);
    for sq in board.pawns() & back_ranks {
        out.push(PositionProblem::PawnOnBackRank(sq));
    }
    if let Some(king) = board.king_of(just_moved)
        && board.attacks_to(king, !just_moved, board.occupied()).any()
    {
        out.push(PositionProblem::KingLeftInCheck(just_moved));
    }
    out
}

/// The position on the board with `turn` to move. Castling rights are kept where king
/// and rook still stand on their original squares and `rights_from` (the last legal
/// position, if any) still had them; a set-up position without one gets them all.
pub(crate) fn position_from_codes(
    codes: &Codes,
    turn: Color,
    rights_from: Option<&Chess>,
    fullmoves: std::num::NonZeroU32,
) -> Option<Chess> {
    let board = to_board(codes);
    let mut rights = Bitboard::EMPTY;
    for (king, rooks) in [
        (Square::E1, [Square::A1, Square::H1]),
        (Square::E8, [Square::A8, Square::H8]),
    ] {
        let Some(color) = board.color_at(king) else {
            continue;
        };
        if board.role_at(king) != Some(Role::King) || color.backrank() != king.rank() {
            continue;
        }
        for rook in rooks {
            if board.piece_at(rook) == Some(Role::Rook.of(color)) {
                rights.add(rook);
            }
        }
    }
    if let Some(pos) = rights_from {
        rights &= pos.castles().castling_rights();
    }
    let setup = Setup {
        board,
        turn,
        castling_rights: rights,
        fullmoves,
        ..Setup::empty()
    };
    match setup.position::<Chess>(CastlingMode::Standard) {
        Ok(pos) => Some(pos),
        Err(e) => e.ignore_invalid_castling_rights().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::codes::from_board;
    use shakmaty::Board;

    #[test]
    fn reports_each_problem() {
        let mut codes = from_board(&Board::default(), false);
        assert!(problems(&codes, Color::White).is_empty());
        codes[Square::E4.to_usize()] = 5; // a second white king
        codes[Square::A8.to_usize()] = 7; // a black pawn on the last rank
        let found = problems(&codes, Color::White);
        assert!(found.contains(&PositionProblem::TwoKings(Color::White)));
        assert!(found.contains(&PositionProblem::PawnOnBackRank(Square::A8)));
        let mut check = [0u8; 64];
        check[Square::E1.to_usize()] = 5;
        check[Square::E8.to_usize()] = 11;
        check[Square::E5.to_usize()] = 8; // black rook on the e-file
        assert_eq!(
            problems(&check, Color::White),
            [PositionProblem::KingLeftInCheck(Color::White)]
        );
        assert!(problems(&check, Color::Black).is_empty());
    }

    #[test]
    fn builds_positions_with_castling_rights() {
        let one = std::num::NonZeroU32::MIN;
        let codes = from_board(&Board::default(), false);
        let pos = position_from_codes(&codes, Color::White, None, one).unwrap();
        assert_eq!(pos, Chess::default());
        let mut check = [0u8; 64];
        check[Square::E1.to_usize()] = 5;
        check[Square::E8.to_usize()] = 11;
        check[Square::E5.to_usize()] = 8;
        assert!(position_from_codes(&check, Color::Black, None, one).is_none());
        assert!(position_from_codes(&check, Color::White, None, one).is_some());
    }
}
