//! Square numbering of the DGT board: the hardware index 0..=63 (0 = a8, 63 = h1).

use std::fmt;
use std::str::FromStr;

/// A square in the board's own hardware numbering (§1.6 of the protocol notes).
///
/// Index 0 is a8, 7 is h8, 56 is a1 and 63 is h1, rank by rank from rank 8 down. The
/// board never renumbers itself when it is turned round, so these names describe the
/// board's view, not necessarily the game's; [`SquareIndex::rotated`] gives the other view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SquareIndex(u8);

/// Why a square name such as `"e4"` could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid square name {0:?}: expected a file a-h followed by a rank 1-8")]
pub struct ParseSquareError(pub String);

impl SquareIndex {
    /// The number of squares on the board.
    pub const COUNT: usize = 64;

    /// The square with hardware index `index`, or `None` when `index > 63`.
    pub const fn new(index: u8) -> Option<Self> {
        if index < 64 { Some(Self(index)) } else { None }
    }

    /// The hardware index, always in 0..=63.
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The same physical square seen from the other side of the board (`63 - index`).
    pub const fn rotated(self) -> Self {
        Self(63 - self.0)
    }

    /// The file counted from 0 (a = 0 … h = 7).
    pub const fn file(self) -> u8 {
        self.0 % 8
    }

    /// The rank counted from 0 (rank 1 = 0 … rank 8 = 7).
    pub const fn rank(self) -> u8 {
        7 - self.0 / 8
    }

    /// The square on `file` and `rank` (both 0-based), or `None` when either is above 7.
    pub const fn from_file_rank(file: u8, rank: u8) -> Option<Self> {
        if file < 8 && rank < 8 {
            Some(Self((7 - rank) * 8 + file))
        } else {
            None
        }
    }

    /// All 64 squares in index order (a8, b8, …, h1).
    pub fn all() -> impl Iterator<Item = Self> {
        (0..64).map(Self)
    }
}

impl fmt::Display for SquareIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = char::from(b'a' + self.file());
        let rank = char::from(b'1' + self.rank());
        write!(f, "{file}{rank}")
    }
}

impl FromStr for SquareIndex {
    type Err = ParseSquareError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseSquareError(s.to_owned());
        match s.as_bytes() {
            [file @ b'a'..=b'h', rank @ b'1'..=b'8'] => {
                Self::from_file_rank(file - b'a', rank - b'1').ok_or_else(err)
            }
            _ => Err(err()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_follow_the_hardware_numbering() {
        let name = |i| SquareIndex::new(i).map(|s| s.to_string());
        assert_eq!(name(0).as_deref(), Some("a8"));
        assert_eq!(name(7).as_deref(), Some("h8"));
        assert_eq!(name(56).as_deref(), Some("a1"));
        assert_eq!(name(63).as_deref(), Some("h1"));
        assert_eq!(SquareIndex::new(64), None);
    }

    #[test]
    fn file_rank_round_trip_and_formula() {
        for sq in SquareIndex::all() {
            assert_eq!(sq.index(), (7 - sq.rank()) * 8 + sq.file());
            assert_eq!(SquareIndex::from_file_rank(sq.file(), sq.rank()), Some(sq));
            assert_eq!(sq.to_string().parse::<SquareIndex>(), Ok(sq));
            assert_eq!(sq.rotated().rotated(), sq);
            assert_eq!(sq.rotated().index(), 63 - sq.index());
        }
        assert_eq!(SquareIndex::all().count(), SquareIndex::COUNT);
        assert_eq!(SquareIndex::from_file_rank(8, 0), None);
        assert_eq!(SquareIndex::from_file_rank(0, 8), None);
    }

    #[test]
    fn parsing_rejects_bad_names() {
        for bad in ["", "a", "a9", "i1", "a0", "A1", "e44", "é4"] {
            assert!(bad.parse::<SquareIndex>().is_err(), "{bad}");
        }
        assert_eq!("e4".parse::<SquareIndex>().map(SquareIndex::index), Ok(36));
    }
}
