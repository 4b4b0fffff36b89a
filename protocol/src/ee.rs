//! Records of the EEPROM event log sent in an EE_MOVES (0x8F) message (§1.10).

use crate::clock::{from_bcd, to_bcd};
use crate::square::SquareIndex;

/// One record of the EEPROM event log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EeRecord {
    /// First byte 0x40–0x5F: a piece code appeared on (or, with code 0, left) a square.
    FieldChange {
        /// Piece code (low nibble of the first byte).
        code: u8,
        /// The square (second byte).
        square: SquareIndex,
        /// Less than about 250 ms since the previous change record (bit 4).
        quick: bool,
    },
    /// First byte 0x60–0x69 / 0x70–0x79: a clock reading, written when the lever moves.
    ClockTime {
        /// The left display (bit 4); otherwise the right one.
        left: bool,
        /// Hours (low nibble).
        h: u8,
        /// Minutes, decoded from BCD.
        m: u8,
        /// Seconds, decoded from BCD.
        s: u8,
    },
    /// 0x6A: the board was powered up.
    PowerUp,
    /// 0x6B: end of the log.
    Eof,
    /// 0x6C: 16 pieces on files a, b, g, h but not the start position (Chess960).
    FourRows,
    /// 0x6D: the board became empty.
    EmptyBoard,
    /// 0x6E: the log was downloaded.
    Downloaded,
    /// 0x6F: start position, white at the connector's left.
    BeginPos,
    /// 0x7A: start position, rotated board.
    BeginPosRotated,
    /// 0x7B: bus-mode "start game" tag.
    StartTag,
    /// 0x7C: the watchdog fired.
    Watchdog,
    /// 0x7F: no operation.
    Nop,
    /// 0x00: no operation (second form).
    Nop2,
    /// Any other byte, including a multi-byte record cut short at the end of the log or
    /// a field change whose square byte is above 63 (the first byte only; parsing resumes
    /// at the next byte).
    Unknown(u8),
}

impl EeRecord {
    /// Parses a whole log. Never fails: bytes that fit no record become
    /// [`EeRecord::Unknown`].
    pub fn parse_all(bytes: &[u8]) -> Vec<EeRecord> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while let Some((&first, tail)) = rest.split_first() {
            let (record, used) = Self::parse_one(first, tail);
            out.push(record);
            rest = tail.get(used..).unwrap_or(&[]);
        }
        out
    }

    /// Parses the record starting with `first`; returns it and how many bytes of `tail` it used.
    fn parse_one(first: u8, tail: &[u8]) -> (EeRecord, usize) {
        // The reference writes the field-change byte as `0 1 r 0 nnnn` but gives its range
        // as 0x40–0x5F. Only "r = bit 4" fits that range without overlapping the clock
        // records (0x60–0x79), so that is the reading used here.
        match first {
            0x40..=0x5F => match tail.first().and_then(|&s| SquareIndex::new(s)) {
                Some(square) => (
                    EeRecord::FieldChange {
                        code: first & 0x0F,
                        square,
                        quick: first & 0x10 != 0,
                    },
                    1,
                ),
                None => (EeRecord::Unknown(first), 0),
            },
            0x60..=0x69 | 0x70..=0x79 => match tail {
                [m, s, ..] => (
                    EeRecord::ClockTime {
                        left: first & 0x10 != 0,
                        h: first & 0x0F,
                        m: from_bcd(*m),
                        s: from_bcd(*s),
                    },
                    2,
                ),
                _ => (EeRecord::Unknown(first), 0),
            },
            0x6A => (EeRecord::PowerUp, 0),
            0x6B => (EeRecord::Eof, 0),
            0x6C => (EeRecord::FourRows, 0),
            0x6D => (EeRecord::EmptyBoard, 0),
            0x6E => (EeRecord::Downloaded, 0),
            0x6F => (EeRecord::BeginPos, 0),
            0x7A => (EeRecord::BeginPosRotated, 0),
            0x7B => (EeRecord::StartTag, 0),
            0x7C => (EeRecord::Watchdog, 0),
            0x7F => (EeRecord::Nop, 0),
            0x00 => (EeRecord::Nop2, 0),
            other => (EeRecord::Unknown(other), 0),
        }
    }

    /// Appends the record's bytes (all with bit 7 clear). Out-of-range values are clamped
    /// or masked so the bytes parse back as the same kind of record: the piece code to
    /// its nibble, hours to 9, minutes and seconds to 59.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match *self {
            EeRecord::FieldChange {
                code,
                square,
                quick,
            } => out
                .extend_from_slice(&[0x40 | u8::from(quick) << 4 | (code & 0x0F), square.index()]),
            EeRecord::ClockTime { left, h, m, s } => out.extend_from_slice(&[
                0x60 | u8::from(left) << 4 | h.min(9),
                to_bcd(m),
                to_bcd(s),
            ]),
            EeRecord::PowerUp => out.push(0x6A),
            EeRecord::Eof => out.push(0x6B),
            EeRecord::FourRows => out.push(0x6C),
            EeRecord::EmptyBoard => out.push(0x6D),
            EeRecord::Downloaded => out.push(0x6E),
            EeRecord::BeginPos => out.push(0x6F),
            EeRecord::BeginPosRotated => out.push(0x7A),
            EeRecord::StartTag => out.push(0x7B),
            EeRecord::Watchdog => out.push(0x7C),
            EeRecord::Nop => out.push(0x7F),
            EeRecord::Nop2 => out.push(0x00),
            EeRecord::Unknown(b) => out.push(b & 0x7F),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(i: u8) -> SquareIndex {
        SquareIndex::new(i).expect("valid square")
    }

    #[test]
    fn power_up_log() {
        let bytes = [
            0x7F, 0x7F, 0x7F, 0x6A, 0x45, 60, 0x5B, 4, 0x71, 0x05, 0x30, 0x6B,
        ];
        let records = EeRecord::parse_all(&bytes);
        assert_eq!(
            records,
            [
                EeRecord::Nop,
                EeRecord::Nop,
                EeRecord::Nop,
                EeRecord::PowerUp,
                EeRecord::FieldChange {
                    code: 5,
                    square: sq(60),
                    quick: false
                },
                EeRecord::FieldChange {
                    code: 0x0B,
                    square: sq(4),
                    quick: true
                },
                EeRecord::ClockTime {
                    left: true,
                    h: 1,
                    m: 5,
                    s: 30
                },
                EeRecord::Eof,
            ]
        );
        let mut again = Vec::new();
        records.iter().for_each(|r| r.encode_into(&mut again));
        assert_eq!(again, bytes);
    }

    #[test]
    fn truncated_and_invalid_records() {
        assert_eq!(EeRecord::parse_all(&[0x45]), [EeRecord::Unknown(0x45)]);
        assert_eq!(
            EeRecord::parse_all(&[0x61, 0x10]),
            [EeRecord::Unknown(0x61), EeRecord::Unknown(0x10)]
        );
        assert_eq!(
            EeRecord::parse_all(&[0x45, 0x6B]),
            [EeRecord::Unknown(0x45), EeRecord::Eof]
        );
        assert_eq!(
            EeRecord::parse_all(&[0x00, 0x7A, 0x7B, 0x7C, 0x6C, 0x6D, 0x6E, 0x6F, 0x7D]),
            [
                EeRecord::Nop2,
                EeRecord::BeginPosRotated,
                EeRecord::StartTag,
                EeRecord::Watchdog,
                EeRecord::FourRows,
                EeRecord::EmptyBoard,
                EeRecord::Downloaded,
                EeRecord::BeginPos,
                EeRecord::Unknown(0x7D),
            ]
        );
    }
}
