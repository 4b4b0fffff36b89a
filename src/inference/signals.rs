//! Results signalled on the board, which are never moves.
//!
//! Two conventions are recognised:
//! * DGT result pieces anywhere on the board: code 0x0D draw, 0x0E white wins,
//!   0x0F black wins.
//! * Both kings on the four centre squares (d4, e4, d5, e5), as DGT's broadcast
//!   software reads them: both on light squares (d5, e4) = 1-0, both on dark squares
//!   (d4, e5) = 0-1, one on each colour = ½-½. Two kings on the centre always stand
//!   next to each other, which no legal position allows, so the signal can never be
//!   mistaken for a move.

use shakmaty::{Color, KnownOutcome, Square};

use super::codes::{BLACK_WINS_PIECE, Codes, DRAW_PIECE, WHITE_WINS_PIECE, piece_code};

const CENTRE: [Square; 4] = [Square::D4, Square::E4, Square::D5, Square::E5];

/// The result a board signals, if any.
pub(crate) fn signalled_result(codes: &Codes) -> Option<KnownOutcome> {
    // Asked of every stable board, and almost none shows a result piece or both kings
    // on the centre: one pass over the codes without branches and eight compares
    // rule both out before the squares are looked through.
    let result_piece = codes.iter().fold(false, |any, &c| {
        any | (DRAW_PIECE..=BLACK_WINS_PIECE).contains(&c)
    });
    let on_centre = |color: Color| {
        let code = piece_code(shakmaty::Role::King.of(color));
        CENTRE.iter().any(|sq| codes[sq.to_usize()] == code)
    };
    let kings_on_centre = on_centre(Color::White) && on_centre(Color::Black);
    if !result_piece && !kings_on_centre {
        return None;
    }
    for &code in codes {
        match code {
            DRAW_PIECE => return Some(KnownOutcome::Draw),
            WHITE_WINS_PIECE => {
                return Some(KnownOutcome::Decisive {
                    winner: Color::White,
                });
            }
            BLACK_WINS_PIECE => {
                return Some(KnownOutcome::Decisive {
                    winner: Color::Black,
                });
            }
            _ => {}
        }
    }
    let king_square = |color: Color| {
        let code = piece_code(shakmaty::Role::King.of(color));
        let mut squares = Square::ALL.iter().filter(|sq| codes[sq.to_usize()] == code);
        match (squares.next(), squares.next()) {
            (Some(sq), None) if CENTRE.contains(sq) => Some(*sq),
            _ => None,
        }
    };
    let white = king_square(Color::White)?;
    let black = king_square(Color::Black)?;
    Some(match (white.is_light(), black.is_light()) {
        (true, true) => KnownOutcome::Decisive {
            winner: Color::White,
        },
        (false, false) => KnownOutcome::Decisive {
            winner: Color::Black,
        },
        _ => KnownOutcome::Draw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::codes::from_board;
    use shakmaty::Board;

    fn with_kings(white: Square, black: Square) -> Codes {
        let mut codes = [0u8; 64];
        codes[white.to_usize()] = 5;
        codes[black.to_usize()] = 11;
        codes[Square::A2.to_usize()] = 1;
        codes
    }

    #[test]
    fn kings_on_the_centre() {
        let white = KnownOutcome::Decisive {
            winner: Color::White,
        };
        let black = KnownOutcome::Decisive {
            winner: Color::Black,
        };
        assert_eq!(
            signalled_result(&with_kings(Square::E4, Square::D5)),
            Some(white)
        );
        assert_eq!(
            signalled_result(&with_kings(Square::E5, Square::D4)),
            Some(black)
        );
        assert_eq!(
            signalled_result(&with_kings(Square::D4, Square::E4)),
            Some(KnownOutcome::Draw)
        );
        assert_eq!(signalled_result(&with_kings(Square::E4, Square::D6)), None);
        assert_eq!(
            signalled_result(&from_board(&Board::default(), false)),
            None
        );
    }

    #[test]
    fn result_pieces() {
        let mut codes = from_board(&Board::default(), false);
        codes[Square::E4.to_usize()] = WHITE_WINS_PIECE;
        assert_eq!(
            signalled_result(&codes),
            Some(KnownOutcome::Decisive {
                winner: Color::White
            })
        );
        codes[Square::E4.to_usize()] = DRAW_PIECE;
        assert_eq!(signalled_result(&codes), Some(KnownOutcome::Draw));
    }
}
