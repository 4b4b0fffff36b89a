//! Mapping between chess squares/pieces and the board's hardware numbering and piece codes.

use shakmaty::{Board, Color, File, Piece, Rank, Role, Square};

/// The DGT piece code of a chess piece (white P,R,N,B,K,Q = 1..6, black = 7..12).
pub fn piece_code(piece: Piece) -> u8 {
    let base = match piece.role {
        Role::Pawn => 1,
        Role::Rook => 2,
        Role::Knight => 3,
        Role::Bishop => 4,
        Role::King => 5,
        Role::Queen => 6,
    };
    match piece.color {
        Color::White => base,
        Color::Black => base + 6,
    }
}

/// The chess piece of a DGT code 1..=12.
pub fn code_piece(code: u8) -> Option<Piece> {
    let (color, base) = match code {
        1..=6 => (Color::White, code),
        7..=12 => (Color::Black, code - 6),
        _ => return None,
    };
    let role = match base {
        1 => Role::Pawn,
        2 => Role::Rook,
        3 => Role::Knight,
        4 => Role::Bishop,
        5 => Role::King,
        _ => Role::Queen,
    };
    Some(Piece { color, role })
}

/// The chess square read by hardware index `index` (0..64); `rotated` mirrors it (63 − i).
pub fn square_at(index: usize, rotated: bool) -> Square {
    let i = if rotated { 63 - index } else { index };
    Square::from_coords(File::new((i % 8) as u32), Rank::new(7 - (i / 8) as u32))
}

/// The hardware index of a chess square.
pub fn index_of(sq: Square, rotated: bool) -> usize {
    let i = (7 - u32::from(sq.rank())) as usize * 8 + u32::from(sq.file()) as usize;
    if rotated { 63 - i } else { i }
}

/// What stands on each chess square, as DGT codes, indexed by `Square` (a1 = 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Physical(pub [u8; 64]);

impl Physical {
    /// The pieces of a chess board.
    pub fn from_board(board: &Board) -> Self {
        let mut codes = [0u8; 64];
        for (sq, piece) in board.iter() {
            codes[usize::from(sq)] = piece_code(piece);
        }
        Physical(codes)
    }

    /// The code on a chess square.
    pub fn get(&self, sq: Square) -> u8 {
        self.0[usize::from(sq)]
    }

    /// Set the code on a chess square.
    pub fn set(&mut self, sq: Square, code: u8) {
        self.0[usize::from(sq)] = code;
    }

    /// In hardware order (index 0 = a8 unless rotated); occupancy-only maps codes to 0/1.
    pub fn to_hardware(&self, rotated: bool, occupancy_only: bool) -> [u8; 64] {
        let mut out = [0u8; 64];
        for (i, o) in out.iter_mut().enumerate() {
            *o = reading(self.get(square_at(i, rotated)), occupancy_only);
        }
        out
    }
}

/// A code as the sensor reports it: occupancy-only boards report 0/1.
pub fn reading(code: u8, occupancy_only: bool) -> u8 {
    if occupancy_only {
        u8::from(code != 0)
    } else {
        code
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_matches_the_dgt_layout() {
        assert_eq!(square_at(0, false), Square::A8);
        assert_eq!(square_at(63, false), Square::H1);
        assert_eq!(square_at(57, false), Square::B1);
        assert_eq!(square_at(0, true), Square::H1);
        for i in 0..64 {
            assert_eq!(index_of(square_at(i, false), false), i);
            assert_eq!(index_of(square_at(i, true), true), i);
        }
    }

    #[test]
    fn codes_round_trip() {
        for c in 1..=12 {
            assert_eq!(piece_code(code_piece(c).unwrap()), c);
        }
        assert_eq!(
            piece_code(Piece {
                color: Color::White,
                role: Role::King
            }),
            5
        );
        assert_eq!(
            piece_code(Piece {
                color: Color::Black,
                role: Role::Queen
            }),
            12
        );
    }
}
