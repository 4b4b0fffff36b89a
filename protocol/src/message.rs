//! Board → host messages (§1.5) and their exact wire frames.

use crate::board::RawBoard;
use crate::clock::{ClockAck, ClockTimes};
use crate::decoder::GarbageReason;
use crate::ee::EeRecord;
use crate::piece::PieceCode;
use crate::square::SquareIndex;

/// Message id bytes as they appear on the wire (`0x80 | id`).
pub mod id {
    /// BOARD_DUMP: 64 piece codes.
    pub const BOARD_DUMP: u8 = 0x86;
    /// BWTIME: clock times or a clock ack.
    pub const BWTIME: u8 = 0x8D;
    /// FIELD_UPDATE: square and piece code.
    pub const FIELD_UPDATE: u8 = 0x8E;
    /// EE_MOVES: the EEPROM event log.
    pub const EE_MOVES: u8 = 0x8F;
    /// BUSADRES: 14-bit bus address.
    pub const BUS_ADDRESS: u8 = 0x90;
    /// SERIALNR: 5 ASCII digits (older boards add " 1.0").
    pub const SERIAL_NUMBER: u8 = 0x91;
    /// TRADEMARK: ASCII text.
    pub const TRADEMARK: u8 = 0x92;
    /// VERSION: major, minor.
    pub const VERSION: u8 = 0x93;
    /// BOARD_DUMP_50B: draughts, 50 squares.
    pub const BOARD_DUMP_50B: u8 = 0x94;
    /// BOARD_DUMP_50W: draughts, 50 squares.
    pub const BOARD_DUMP_50W: u8 = 0x95;
    /// BATTERY_STATUS: 9 bytes of battery data.
    pub const BATTERY_STATUS: u8 = 0xA0;
    /// LONG_SERIALNR: 10 ASCII characters.
    pub const LONG_SERIAL_NUMBER: u8 = 0xA2;
}

/// Payload size limits for the capped text and unknown messages. picochess caps normal
/// messages at 64 payload bytes (§1.10), and every fixed-size message fits in that.
const SMALL_CAP: usize = 64;

/// The range of payload lengths accepted for a message id (the byte with bit 7 set).
///
/// Why per-id limits: a corrupt length byte should cost as little as possible. Exact
/// sizes for the fixed-size messages of §1.5 reject a bad header at once, so its 3 bytes
/// are reported as garbage and the bytes after it are scanned for the next header instead
/// of being read into a frame of the wrong size; caps on the variable messages bound the
/// frame buffer. (A too-large claim can never swallow a following frame anyway: its header
/// byte has bit 7 set and interrupts the partial frame.)
pub(crate) const fn payload_limits(id: u8) -> (usize, usize) {
    match id {
        id::BOARD_DUMP => (64, 64),
        id::BWTIME => (7, 7),
        id::FIELD_UPDATE => (2, 2),
        // The log is a 0x1F00-byte ring (picochess has seen exactly that payload size);
        // the cap rounds up to 8 KiB to leave room for the EOF marker and firmware variants.
        id::EE_MOVES => (0, 0x2000),
        id::BUS_ADDRESS | id::VERSION => (2, 2),
        id::BOARD_DUMP_50B | id::BOARD_DUMP_50W => (50, 50),
        // Free text with no documented size; a real one is a few lines.
        id::TRADEMARK => (0, 1024),
        // Serial numbers and battery data have conflicting sizes in the sources, so any
        // length up to the cap is accepted (§1.5, §1.11).
        _ => (0, SMALL_CAP),
    }
}

/// Battery data from a BATTERY_STATUS message, kept as the raw payload because the
/// sources disagree on its size (§1.11); the accessors read the documented 9-byte layout
/// and return `None` for bytes that are missing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Battery {
    /// The payload bytes as received.
    pub bytes: Vec<u8>,
}

/// Marker for "not available" in the time-left bytes.
const NOT_AVAILABLE: u8 = 0x7F;

impl Battery {
    /// A 9-byte report with the given percentage and charging state, times unknown.
    pub fn new(percent: u8, charging: bool) -> Self {
        let status = if charging { 0x01 } else { 0x02 };
        Self {
            bytes: vec![percent, NOT_AVAILABLE, NOT_AVAILABLE, 0, 0, 0, 0, 0, status],
        }
    }

    fn byte(&self, i: usize) -> Option<u8> {
        self.bytes.get(i).copied()
    }

    /// Byte 0: capacity left in percent.
    pub fn percent(&self) -> Option<u8> {
        self.byte(0)
    }

    /// Bytes 1–2: running or charging time left as (hours, minutes); `None` if 0x7F (n/a).
    pub fn time_left(&self) -> Option<(u8, u8)> {
        let (h, m) = (self.byte(1)?, self.byte(2)?);
        (h != NOT_AVAILABLE && m != NOT_AVAILABLE).then_some((h, m))
    }

    /// Bytes 3–4: on-time as (hours, minutes).
    pub fn on_time(&self) -> Option<(u8, u8)> {
        Some((self.byte(3)?, self.byte(4)?))
    }

    /// Bytes 5–7: standby time as (days, hours, minutes).
    pub fn standby(&self) -> Option<(u8, u8, u8)> {
        Some((self.byte(5)?, self.byte(6)?, self.byte(7)?))
    }

    /// Byte 8 bit 0: charging.
    pub fn charging(&self) -> Option<bool> {
        self.byte(8).map(|b| b & 0x01 != 0)
    }

    /// Byte 8 bit 1: discharging.
    pub fn discharging(&self) -> Option<bool> {
        self.byte(8).map(|b| b & 0x02 != 0)
    }
}

/// A board → host message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Message {
    /// 0x86: the whole board.
    BoardDump(RawBoard),
    /// 0x8E: one square changed; code 0 means it became empty.
    FieldUpdate {
        /// The square, in board numbering.
        square: SquareIndex,
        /// The raw piece code.
        code: u8,
    },
    /// 0x8D holding clock times.
    ClockTime(ClockTimes),
    /// 0x8D holding a clock ack.
    ClockAck(ClockAck),
    /// 0x91: the serial number, first 5 characters of the payload.
    SerialNumber(String),
    /// 0xA2: the long serial number.
    LongSerialNumber(String),
    /// 0x93: the firmware version.
    Version {
        /// Major version.
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// 0x92: the trademark text.
    Trademark(String),
    /// 0x90: the 14-bit bus address.
    BusAddress(u16),
    /// 0xA0: battery data.
    BatteryStatus(Battery),
    /// 0x8F: the EEPROM event log.
    EeMoves(Vec<EeRecord>),
    /// Any other id (for example the draughts dumps), kept raw.
    Unknown {
        /// The id byte as on the wire (bit 7 set; encoding sets it if missing).
        id: u8,
        /// The payload bytes.
        payload: Vec<u8>,
    },
}

/// Keeps only 7-bit ASCII: payload bytes must have bit 7 clear, so other characters are
/// sent as `?`.
fn ascii_bytes(s: &str) -> impl Iterator<Item = u8> + '_ {
    s.chars().map(|c| if c.is_ascii() { c as u8 } else { b'?' })
}

/// Payload bytes have bit 7 clear, so each one is an ASCII character.
fn ascii_string(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b & 0x7F)).collect()
}

impl Message {
    /// The id byte of this message on the wire (bit 7 set).
    pub fn id(&self) -> u8 {
        match self {
            Self::BoardDump(_) => id::BOARD_DUMP,
            Self::FieldUpdate { .. } => id::FIELD_UPDATE,
            Self::ClockTime(_) | Self::ClockAck(_) => id::BWTIME,
            Self::SerialNumber(_) => id::SERIAL_NUMBER,
            Self::LongSerialNumber(_) => id::LONG_SERIAL_NUMBER,
            Self::Version { .. } => id::VERSION,
            Self::Trademark(_) => id::TRADEMARK,
            Self::BusAddress(_) => id::BUS_ADDRESS,
            Self::BatteryStatus(_) => id::BATTERY_STATUS,
            Self::EeMoves(_) => id::EE_MOVES,
            Self::Unknown { id, .. } => id | 0x80,
        }
    }

    /// For a field update, the piece placed (`Empty` when the square was emptied);
    /// `None` for other messages or an unknown code.
    pub fn piece(&self) -> Option<PieceCode> {
        match self {
            Self::FieldUpdate { code, .. } => PieceCode::from_byte(*code),
            _ => None,
        }
    }

    /// The payload bytes, before masking and truncation.
    fn payload(&self) -> Vec<u8> {
        match self {
            Self::BoardDump(board) => board.0.to_vec(),
            Self::FieldUpdate { square, code } => vec![square.index(), *code],
            Self::ClockTime(times) => times.to_payload().to_vec(),
            Self::ClockAck(ack) => ack.to_payload().to_vec(),
            Self::SerialNumber(s) | Self::LongSerialNumber(s) | Self::Trademark(s) => {
                ascii_bytes(s).collect()
            }
            Self::Version { major, minor } => vec![*major, *minor],
            Self::BusAddress(addr) => vec![((addr >> 7) & 0x7F) as u8, (addr & 0x7F) as u8],
            Self::BatteryStatus(battery) => battery.bytes.clone(),
            Self::EeMoves(records) => {
                let mut out = Vec::new();
                records.iter().for_each(|r| r.encode_into(&mut out));
                out
            }
            Self::Unknown { payload, .. } => payload.clone(),
        }
    }

    /// Appends the message's frame: `id`, two 7-bit length bytes counting the whole
    /// frame, then the payload.
    ///
    /// Payload bytes are masked to 7 bits and cut to the decoder's maximum for the id, so
    /// the frame is always well formed. Strings are sent whole (a serial number of
    /// `"01234 1.0"` gives the old 12-byte form). `Unknown` frames are sent verbatim
    /// otherwise, so they can also carry deliberately malformed known ids for tests.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let id = self.id();
        let mut payload = self.payload();
        payload.truncate(payload_limits(id).1);
        let total = payload.len() + 3;
        out.reserve(total);
        out.extend_from_slice(&[id, ((total >> 7) & 0x7F) as u8, (total & 0x7F) as u8]);
        out.extend(payload.iter().map(|b| b & 0x7F));
    }

    /// The message's frame as a new vector (see [`Message::encode_into`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Builds the message for a complete frame whose length the decoder has checked
    /// against [`payload_limits`]. Fails only for a field update naming a square above 63
    /// (or, defensively, a fixed-size payload of the wrong length).
    pub(crate) fn from_frame(id: u8, payload: &[u8]) -> Result<Message, GarbageReason> {
        let msg = match (id, payload) {
            (id::BOARD_DUMP, payload) => {
                let mut board = RawBoard::default();
                for (slot, &b) in board.0.iter_mut().zip(payload) {
                    *slot = b;
                }
                Self::BoardDump(board)
            }
            (id::FIELD_UPDATE, &[square, code]) => Self::FieldUpdate {
                square: SquareIndex::new(square).ok_or(GarbageReason::InvalidSquare(square))?,
                code,
            },
            (id::BWTIME, &[p0, p1, p2, p3, p4, p5, p6]) => {
                let p = [p0, p1, p2, p3, p4, p5, p6];
                if ClockAck::is_ack_payload(&p) {
                    Self::ClockAck(ClockAck::from_payload(p))
                } else {
                    Self::ClockTime(ClockTimes::from_payload(p))
                }
            }
            // §1.5 CONFLICT: 5 digits in newer firmware, "12345 1.0" in the 1998 header.
            (id::SERIAL_NUMBER, payload) => {
                Self::SerialNumber(ascii_string(payload.get(..5).unwrap_or(payload)))
            }
            (id::LONG_SERIAL_NUMBER, payload) => Self::LongSerialNumber(ascii_string(payload)),
            (id::TRADEMARK, payload) => Self::Trademark(ascii_string(payload)),
            (id::VERSION, &[major, minor]) => Self::Version { major, minor },
            (id::BUS_ADDRESS, &[hi, lo]) => Self::BusAddress(u16::from(hi) << 7 | u16::from(lo)),
            (id::BATTERY_STATUS, payload) => Self::BatteryStatus(Battery {
                bytes: payload.to_vec(),
            }),
            (id::EE_MOVES, payload) => Self::EeMoves(EeRecord::parse_all(payload)),
            (id::FIELD_UPDATE | id::BWTIME | id::VERSION | id::BUS_ADDRESS, payload) => {
                return Err(GarbageReason::BadLength {
                    id,
                    total: u16::try_from(payload.len() + 3).unwrap_or(u16::MAX),
                });
            }
            (id, payload) => Self::Unknown {
                id,
                payload: payload.to_vec(),
            },
        };
        Ok(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_match_section_3_3() {
        let dump = Message::BoardDump(RawBoard::start_position()).encode();
        assert_eq!(dump.get(..3), Some(&[0x86, 0x00, 0x43][..]));
        assert_eq!(dump.len(), 67);
        assert_eq!(dump.get(3), Some(&0x08));

        let sq = SquareIndex::new(28).expect("square");
        let fu = Message::FieldUpdate {
            square: sq,
            code: 1,
        };
        assert_eq!(fu.encode(), [0x8E, 0x00, 0x05, 28, 1]);
        assert_eq!(fu.piece(), Some(PieceCode::WhitePawn));

        assert_eq!(
            Message::SerialNumber("01025".into()).encode(),
            [0x91, 0x00, 0x08, b'0', b'1', b'0', b'2', b'5']
        );
        assert_eq!(
            Message::Version { major: 1, minor: 2 }.encode(),
            [0x93, 0x00, 0x05, 0x01, 0x02]
        );
        assert_eq!(
            Message::BusAddress(0x0401).encode(),
            [0x90, 0x00, 0x05, 0x08, 0x01]
        );
        let long = Message::LongSerialNumber("3.25001000".into());
        assert_eq!(long.encode().get(..3), Some(&[0xA2, 0x00, 0x0D][..]));
        let tm = Message::Trademark("DGT".into()).encode();
        assert_eq!(tm, [0x92, 0x00, 0x06, b'D', b'G', b'T']);
        let battery = Message::BatteryStatus(Battery::new(88, true)).encode();
        assert_eq!(battery.get(..4), Some(&[0xA0, 0x00, 0x0C, 88][..]));
        assert_eq!(
            Message::ClockTime(ClockTimes::default()).encode(),
            [0x8D, 0x00, 0x0A, 0, 0, 0, 0, 0, 0, 0]
        );
    }

    #[test]
    fn long_payloads_use_both_length_bytes_and_are_capped() {
        let ee = Message::EeMoves(vec![EeRecord::Nop; 0x1F00]).encode();
        assert_eq!(ee.get(..3), Some(&[0x8F, 0x3E, 0x03][..]));
        assert_eq!(ee.len(), 0x1F03);
        let tm = Message::Trademark("x".repeat(5000)).encode();
        assert_eq!(tm.len(), 1024 + 3);
        let odd = Message::Trademark("é".into()).encode();
        assert_eq!(odd, [0x92, 0x00, 0x04, b'?']);
    }

    #[test]
    fn battery_accessors() {
        let b = Battery {
            bytes: vec![88, 0x7F, 0x7F, 1, 2, 3, 4, 5, 0x02],
        };
        assert_eq!(b.percent(), Some(88));
        assert_eq!(b.time_left(), None);
        assert_eq!(b.on_time(), Some((1, 2)));
        assert_eq!(b.standby(), Some((3, 4, 5)));
        assert_eq!(b.charging(), Some(false));
        assert_eq!(b.discharging(), Some(true));
        let short = Battery {
            bytes: vec![50, 1, 30],
        };
        assert_eq!(short.time_left(), Some((1, 30)));
        assert_eq!(short.charging(), None);
        assert_eq!(Battery::default().percent(), None);
    }
}
