//! `RawBoard`: the 64 raw piece codes exactly as the board reported them.

use std::fmt;

use crate::piece::PieceCode;
use crate::square::SquareIndex;

/// 64 raw piece codes indexed by [`SquareIndex`] (board numbering, 0 = a8).
///
/// The bytes are kept raw, not as [`PieceCode`], so that a board sending an unexpected
/// code is mirrored faithfully; [`RawBoard::piece`] interprets a square on demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RawBoard(pub [u8; 64]);

/// Why a text board could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseBoardError {
    /// The text did not hold exactly 64 square characters.
    #[error("a board needs 64 square characters, found {0}")]
    WrongLength(usize),
    /// A character is not a piece character (`?` included: it stands for an unknown byte
    /// and cannot be turned back into one).
    #[error("invalid square character {0:?}")]
    InvalidChar(char),
}

impl Default for RawBoard {
    fn default() -> Self {
        Self([PieceCode::Empty.byte(); 64])
    }
}

impl RawBoard {
    /// The raw code on `square`.
    pub fn get(&self, square: SquareIndex) -> u8 {
        // SquareIndex is always < 64, so the fallback is unreachable; it keeps this total.
        self.0
            .get(usize::from(square.index()))
            .copied()
            .unwrap_or(0)
    }

    /// Stores the raw `code` on `square`.
    pub fn set(&mut self, square: SquareIndex, code: u8) {
        if let Some(slot) = self.0.get_mut(usize::from(square.index())) {
            *slot = code;
        }
    }

    /// The piece on `square`, or `None` when its byte is not a known code.
    pub fn piece(&self, square: SquareIndex) -> Option<PieceCode> {
        PieceCode::from_byte(self.get(square))
    }

    /// The board seen from the other side: square `i` takes the code of square `63 - i`.
    pub fn rotated(&self) -> RawBoard {
        let mut out = self.0;
        out.reverse();
        RawBoard(out)
    }

    /// The standard chess start position in the board's own numbering: black's back rank
    /// on indices 0..=7 (a8..h8) and white's on 56..=63 (a1..h1).
    pub fn start_position() -> RawBoard {
        // Fixed text, so parsing cannot fail; the fallback only keeps the function total.
        Self::from_text(START_TEXT).unwrap_or_default()
    }

    /// The 64-character text form in index order: `.` empty, FEN letters, `=` `+` `-`
    /// for the result pieces and `?` for any byte that is not a known code.
    pub fn to_text(&self) -> String {
        self.0
            .iter()
            .map(|&b| PieceCode::from_byte(b).map_or('?', PieceCode::to_char))
            .collect()
    }

    /// Parses the text form written by [`RawBoard::to_text`].
    ///
    /// Whitespace is skipped so a board may be written as eight lines of eight.
    pub fn from_text(text: &str) -> Result<RawBoard, ParseBoardError> {
        let mut board = RawBoard::default();
        let mut count = 0usize;
        for c in text.chars().filter(|c| !c.is_whitespace()) {
            let piece = PieceCode::from_char(c).ok_or(ParseBoardError::InvalidChar(c))?;
            if let Some(slot) = board.0.get_mut(count) {
                *slot = piece.byte();
            }
            count += 1;
        }
        if count == 64 {
            Ok(board)
        } else {
            Err(ParseBoardError::WrongLength(count))
        }
    }
}

const START_TEXT: &str = "rnbqkbnr pppppppp ........ ........ ........ ........ PPPPPPPP RNBQKBNR";

impl fmt::Display for RawBoard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(name: &str) -> SquareIndex {
        name.parse().expect("valid square")
    }

    #[test]
    fn start_position_uses_board_numbering() {
        let b = RawBoard::start_position();
        assert_eq!(b.0[0], PieceCode::BlackRook.byte());
        assert_eq!(b.0[3], PieceCode::BlackQueen.byte());
        assert_eq!(b.0[4], PieceCode::BlackKing.byte());
        assert_eq!(b.0[60], PieceCode::WhiteKing.byte());
        assert_eq!(b.piece(sq("e1")), Some(PieceCode::WhiteKing));
        assert_eq!(b.piece(sq("d8")), Some(PieceCode::BlackQueen));
        assert_eq!(b.piece(sq("e4")), Some(PieceCode::Empty));
        assert_eq!(
            b.to_text(),
            "rnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR"
        );
    }

    #[test]
    fn text_round_trip_and_unknown_bytes() {
        let mut b = RawBoard::start_position();
        b.set(sq("e4"), PieceCode::Draw.byte());
        assert_eq!(RawBoard::from_text(&b.to_string()), Ok(b));
        b.set(sq("a8"), 0x42);
        assert_eq!(b.get(sq("a8")), 0x42);
        assert_eq!(b.piece(sq("a8")), None);
        assert!(b.to_text().starts_with('?'));
        assert_eq!(
            RawBoard::from_text(&b.to_text()),
            Err(ParseBoardError::InvalidChar('?'))
        );
        assert_eq!(
            RawBoard::from_text("..."),
            Err(ParseBoardError::WrongLength(3))
        );
        assert_eq!(
            RawBoard::from_text(&".".repeat(65)),
            Err(ParseBoardError::WrongLength(65))
        );
    }

    #[test]
    fn rotation_mirrors_indices() {
        let b = RawBoard::start_position();
        let r = b.rotated();
        assert_eq!(r.get(sq("a8")), b.get(sq("h1")));
        assert_eq!(r.rotated(), b);
        assert_eq!(RawBoard::default().to_text(), ".".repeat(64));
    }
}
