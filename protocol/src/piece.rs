//! DGT piece codes (§1.6) and their one-character text form.

/// A piece code as sent in board dumps and field updates.
///
/// The numbering is DGT's: note that white and black both list the king before the
/// queen. Codes 0x0D–0x0F are the "magic" result pieces of newer boards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum PieceCode {
    /// No piece on the square.
    Empty = 0x00,
    /// White pawn.
    WhitePawn = 0x01,
    /// White rook.
    WhiteRook = 0x02,
    /// White knight.
    WhiteKnight = 0x03,
    /// White bishop.
    WhiteBishop = 0x04,
    /// White king (before the queen in DGT's order).
    WhiteKing = 0x05,
    /// White queen.
    WhiteQueen = 0x06,
    /// Black pawn.
    BlackPawn = 0x07,
    /// Black rook.
    BlackRook = 0x08,
    /// Black knight.
    BlackKnight = 0x09,
    /// Black bishop.
    BlackBishop = 0x0A,
    /// Black king.
    BlackKing = 0x0B,
    /// Black queen.
    BlackQueen = 0x0C,
    /// Magic piece meaning "draw".
    Draw = 0x0D,
    /// Magic piece meaning "white wins".
    WhiteWins = 0x0E,
    /// Magic piece meaning "black wins".
    BlackWins = 0x0F,
}

/// Every code in byte order; the position in this table is the byte value.
const ALL: [PieceCode; 16] = [
    PieceCode::Empty,
    PieceCode::WhitePawn,
    PieceCode::WhiteRook,
    PieceCode::WhiteKnight,
    PieceCode::WhiteBishop,
    PieceCode::WhiteKing,
    PieceCode::WhiteQueen,
    PieceCode::BlackPawn,
    PieceCode::BlackRook,
    PieceCode::BlackKnight,
    PieceCode::BlackBishop,
    PieceCode::BlackKing,
    PieceCode::BlackQueen,
    PieceCode::Draw,
    PieceCode::WhiteWins,
    PieceCode::BlackWins,
];

/// Text form, indexed like [`ALL`]: `.` empty, FEN letters, `=` `+` `-` for the result pieces.
const CHARS: [char; 16] = [
    '.', 'P', 'R', 'N', 'B', 'K', 'Q', 'p', 'r', 'n', 'b', 'k', 'q', '=', '+', '-',
];

impl PieceCode {
    /// The code for `byte`, or `None` for bytes above 0x0F.
    pub fn from_byte(byte: u8) -> Option<Self> {
        ALL.get(usize::from(byte)).copied()
    }

    /// The wire byte of this code.
    pub const fn byte(self) -> u8 {
        self as u8
    }

    /// True for the three magic result pieces (draw, white wins, black wins).
    pub const fn is_result_piece(self) -> bool {
        matches!(self, Self::Draw | Self::WhiteWins | Self::BlackWins)
    }

    /// The one-character text form (`.`, `PNBRQK`, `pnbrqk`, `=`, `+`, `-`).
    pub fn to_char(self) -> char {
        CHARS.get(usize::from(self.byte())).copied().unwrap_or('?')
    }

    /// The code written as `c` in the text form, or `None` for any other character.
    pub fn from_char(c: char) -> Option<Self> {
        let pos = CHARS.iter().position(|&x| x == c)?;
        ALL.get(pos).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_match_the_dgt_table() {
        assert_eq!(PieceCode::WhiteKing.byte(), 0x05);
        assert_eq!(PieceCode::WhiteQueen.byte(), 0x06);
        assert_eq!(PieceCode::BlackQueen.byte(), 0x0C);
        assert_eq!(PieceCode::BlackWins.byte(), 0x0F);
        for b in 0..=255u8 {
            match PieceCode::from_byte(b) {
                Some(p) => assert_eq!(p.byte(), b),
                None => assert!(b > 0x0F),
            }
        }
    }

    #[test]
    fn text_form_round_trips() {
        for p in ALL {
            assert_eq!(PieceCode::from_char(p.to_char()), Some(p));
        }
        assert_eq!(PieceCode::WhiteKing.to_char(), 'K');
        assert_eq!(PieceCode::BlackQueen.to_char(), 'q');
        assert_eq!(PieceCode::Draw.to_char(), '=');
        assert_eq!(PieceCode::from_char('?'), None);
        assert_eq!(PieceCode::from_char('x'), None);
    }

    #[test]
    fn result_pieces() {
        let results: Vec<_> = ALL.iter().filter(|p| p.is_result_piece()).collect();
        assert_eq!(
            results,
            [
                &PieceCode::Draw,
                &PieceCode::WhiteWins,
                &PieceCode::BlackWins
            ]
        );
    }
}
