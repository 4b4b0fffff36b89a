//! Host-side incremental decoder: bytes from the board in, [`Message`]s out.

use crate::frame::{Framed, Framer};
use crate::message::{Message, payload_limits};

/// Why some bytes were dropped instead of decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum GarbageReason {
    /// Bytes with bit 7 clear where a message header was expected (before the first
    /// header, or after a rejected header).
    #[error("bytes outside any message")]
    NoHeader,
    /// A partial frame (header or payload) cut short by a byte with bit 7 set, which
    /// always starts a new message. This also covers length bytes with bit 7 set.
    #[error("frame cut short by a new header byte")]
    Interrupted,
    /// The header's total length is impossible for its id: below 3, or outside the
    /// payload sizes this decoder accepts for the id.
    #[error("invalid length {total} for message id {id:#04x}")]
    BadLength {
        /// The id byte (bit 7 set).
        id: u8,
        /// The total length the header claimed.
        total: u16,
    },
    /// A complete field update naming a square above 63.
    #[error("field update for square {0}, which does not exist")]
    InvalidSquare(u8),
}

/// What [`Decoder::poll`] produces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Decoded {
    /// A complete, valid message.
    Message(Message),
    /// Bytes that were skipped, with the reason; useful for logging line noise.
    Garbage {
        /// How many bytes were dropped.
        bytes: usize,
        /// Why they were dropped.
        reason: GarbageReason,
    },
}

/// Incremental decoder for the board → host byte stream (§1.4).
///
/// Feed bytes as they arrive, in chunks of any size, then call [`Decoder::poll`] until it
/// returns `None`. Framing follows the bit-7 rule: a byte with bit 7 set always starts a
/// message, so the decoder resynchronises on it after noise or a cut frame. Each byte is
/// handled once (O(n) overall). Apart from bytes fed but not yet polled, only the frame
/// being assembled is buffered, and the per-id length limits bound its size. Results do
/// not depend on how the stream was split into chunks; a run of garbage is reported when
/// the next header byte ends it.
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    framer: Framer,
}

impl Decoder {
    /// A decoder waiting for its first header byte.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues `bytes` for decoding. Nothing is decoded until [`Decoder::poll`].
    pub fn feed(&mut self, bytes: &[u8]) {
        self.framer.feed(bytes);
    }

    /// Decodes as far as the queued bytes allow and returns the next result, or `None`
    /// when more bytes are needed.
    pub fn poll(&mut self) -> Option<Decoded> {
        // The header's 3 bytes count in the total length.
        let limits = |id| {
            let (min, max) = payload_limits(id);
            (min + 3, max + 3)
        };
        Some(match self.framer.poll(limits)? {
            Framed::Skipped(bytes) => garbage(bytes, GarbageReason::NoHeader),
            // Payload and length bytes never have bit 7 set: that byte starts the next
            // message, and the partial frame is dropped (picochess, dgtdriver).
            Framed::Interrupted(bytes) => garbage(bytes, GarbageReason::Interrupted),
            Framed::BadLength { id, total } => garbage(3, GarbageReason::BadLength { id, total }),
            Framed::Frame(frame) => match frame {
                [id, _, _, payload @ ..] => match Message::from_frame(*id, payload) {
                    Ok(message) => Decoded::Message(message),
                    Err(reason) => garbage(frame.len(), reason),
                },
                // Unreachable: a frame's total length is at least 3.
                _ => garbage(frame.len(), GarbageReason::Interrupted),
            },
        })
    }
}

fn garbage(bytes: usize, reason: GarbageReason) -> Decoded {
    Decoded::Garbage { bytes, reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::RawBoard;
    use crate::clock::{ClockAck, ClockTimes};
    use crate::ee::EeRecord;
    use crate::message::Battery;
    use crate::square::SquareIndex;

    fn decode(bytes: &[u8]) -> Vec<Decoded> {
        let mut d = Decoder::new();
        d.feed(bytes);
        std::iter::from_fn(|| d.poll()).collect()
    }

    fn msg(bytes: &[u8]) -> Message {
        match decode(bytes).as_slice() {
            [Decoded::Message(m)] => m.clone(),
            other => panic!("expected one message from {bytes:02X?}, got {other:?}"),
        }
    }

    fn sq(i: u8) -> SquareIndex {
        SquareIndex::new(i).expect("valid square")
    }

    #[test]
    fn board_dump() {
        let mut bytes = vec![0x86, 0x00, 0x43];
        bytes.extend_from_slice(&RawBoard::start_position().0);
        assert_eq!(msg(&bytes), Message::BoardDump(RawBoard::start_position()));
    }

    #[test]
    fn field_updates() {
        let placed = msg(&[0x8E, 0x00, 0x05, 36, 0x01]);
        assert_eq!(
            placed,
            Message::FieldUpdate {
                square: sq(36),
                code: 1
            }
        );
        assert_eq!(placed.piece(), Some(crate::PieceCode::WhitePawn));
        assert_eq!(
            msg(&[0x8E, 0x00, 0x05, 63, 0x00]),
            Message::FieldUpdate {
                square: sq(63),
                code: 0
            }
        );
        assert_eq!(
            decode(&[0x8E, 0x00, 0x05, 64, 0x01]),
            [Decoded::Garbage {
                bytes: 5,
                reason: GarbageReason::InvalidSquare(64)
            }]
        );
    }

    #[test]
    fn bwtime_times_and_acks() {
        // Right 0:05:00, left 1:30:59, running, right to move.
        let times = msg(&[0x8D, 0x00, 0x0A, 0x00, 0x05, 0x00, 0x01, 0x30, 0x59, 0x09]);
        let Message::ClockTime(t) = times else {
            panic!("not a time: {times:?}");
        };
        assert_eq!((t.right.hours, t.right.minutes, t.right.seconds), (0, 5, 0));
        assert_eq!((t.left.hours, t.left.minutes, t.left.seconds), (1, 30, 59));
        assert!(t.status.running() && t.status.right_to_move());

        // Ack to a version request, clock version 1.4 (DGT XL): ack0 0x10, ack1 0x09, ack2 0x14.
        let ack = msg(&[0x8D, 0x00, 0x0A, 0x0A, 0x10, 0x09, 0x0A, 0x14, 0x00, 0x00]);
        assert_eq!(ack, Message::ClockAck(ClockAck::version_reply(1, 4)));
        // Ack marker only in p3 (the left hours).
        assert!(matches!(
            msg(&[0x8D, 0x00, 0x0A, 0x00, 0x10, 0x0B, 0x0A, 0, 0, 0]),
            Message::ClockAck(a) if a.command() == Some(0x0B)
        ));
        // The all-zero null message still decodes; the consumer filters it.
        assert!(matches!(
            msg(&[0x8D, 0x00, 0x0A, 0, 0, 0, 0, 0, 0, 0]),
            Message::ClockTime(t) if t.is_null()
        ));
        // Out-of-range BCD decodes without panicking and is flagged invalid.
        assert!(matches!(
            msg(&[0x8D, 0x00, 0x0A, 0x0F, 0x7F, 0x7F, 0x0C, 0x6A, 0x7F, 0x7F]),
            Message::ClockTime(t) if !t.is_valid()
        ));
        assert_eq!(
            msg(&Message::ClockTime(ClockTimes::default()).encode()),
            Message::ClockTime(ClockTimes::default())
        );
    }

    #[test]
    fn serial_numbers_new_and_old_form() {
        assert_eq!(
            msg(&[0x91, 0x00, 0x08, b'0', b'1', b'0', b'2', b'5']),
            Message::SerialNumber("01025".into())
        );
        let mut old = vec![0x91, 0x00, 0x0C];
        old.extend_from_slice(b"01025 1.0");
        assert_eq!(msg(&old), Message::SerialNumber("01025".into()));
        assert_eq!(
            msg(&[0x91, 0x00, 0x05, b'4', b'2']),
            Message::SerialNumber("42".into())
        );
        let mut long = vec![0xA2, 0x00, 0x0D];
        long.extend_from_slice(b"3.25001000");
        assert_eq!(msg(&long), Message::LongSerialNumber("3.25001000".into()));
    }

    #[test]
    fn version_bus_address_trademark_battery() {
        assert_eq!(
            msg(&[0x93, 0x00, 0x05, 0x01, 0x02]),
            Message::Version { major: 1, minor: 2 }
        );
        assert_eq!(
            msg(&[0x90, 0x00, 0x05, 0x08, 0x01]),
            Message::BusAddress(0x0401)
        );
        assert_eq!(
            msg(&[0x90, 0x00, 0x05, 0x7F, 0x7F]),
            Message::BusAddress(0x3FFF)
        );
        let mut tm = vec![0x92, 0x00, 0x03 + 14];
        tm.extend_from_slice(b"DGT Projects\r\n");
        assert_eq!(msg(&tm), Message::Trademark("DGT Projects\r\n".into()));
        assert_eq!(msg(&[0x92, 0x00, 0x03]), Message::Trademark(String::new()));
        let battery = msg(&[0xA0, 0x00, 0x0C, 0x58, 0x7F, 0x7F, 0, 0, 0, 0, 0, 0x02]);
        let Message::BatteryStatus(b) = battery else {
            panic!("not a battery: {battery:?}");
        };
        assert_eq!(b.percent(), Some(88));
        assert_eq!(b.discharging(), Some(true));
        // Other lengths are tolerated (the header's size constant says 7 in total).
        assert_eq!(
            msg(&[0xA0, 0x00, 0x07, 50, 1, 2, 3]),
            Message::BatteryStatus(Battery {
                bytes: vec![50, 1, 2, 3]
            })
        );
    }

    #[test]
    fn ee_moves_power_up_and_full_size() {
        let bytes = [0x8F, 0x00, 0x0A, 0x7F, 0x7F, 0x7F, 0x6A, 0x41, 48, 0x6B];
        assert_eq!(
            msg(&bytes),
            Message::EeMoves(vec![
                EeRecord::Nop,
                EeRecord::Nop,
                EeRecord::Nop,
                EeRecord::PowerUp,
                EeRecord::FieldChange {
                    code: 1,
                    square: sq(48),
                    quick: false
                },
                EeRecord::Eof,
            ])
        );
        // The 7,936-byte payload picochess has seen (total length 0x1F03 = `3E 03`).
        let mut big = vec![0x8F, 0x3E, 0x03];
        big.extend(std::iter::repeat_n(0x7F, 0x1F00 - 1));
        big.push(0x6B);
        let Message::EeMoves(records) = msg(&big) else {
            panic!("not an EE dump");
        };
        assert_eq!(records.len(), 0x1F00);
        assert_eq!(records.last(), Some(&EeRecord::Eof));
    }

    #[test]
    fn draughts_dump_is_unknown_but_framed() {
        let mut bytes = vec![0x94, 0x00, 53];
        bytes.extend(std::iter::repeat_n(0x01, 50));
        assert_eq!(
            msg(&bytes),
            Message::Unknown {
                id: 0x94,
                payload: vec![0x01; 50]
            }
        );
    }

    #[test]
    fn garbage_before_a_header_is_reported_then_the_frame_decodes() {
        let out = decode(&[0x01, 0x02, 0x03, 0x93, 0x00, 0x05, 0x01, 0x02]);
        assert_eq!(
            out,
            [
                Decoded::Garbage {
                    bytes: 3,
                    reason: GarbageReason::NoHeader
                },
                Decoded::Message(Message::Version { major: 1, minor: 2 }),
            ]
        );
    }

    #[test]
    fn a_new_header_cuts_a_partial_frame() {
        // A dump cut after 10 squares, then a field update.
        let mut bytes = vec![0x86, 0x00, 0x43];
        bytes.extend_from_slice(&[0; 10]);
        bytes.extend_from_slice(&[0x8E, 0x00, 0x05, 12, 0x07]);
        assert_eq!(
            decode(&bytes),
            [
                Decoded::Garbage {
                    bytes: 13,
                    reason: GarbageReason::Interrupted
                },
                Decoded::Message(Message::FieldUpdate {
                    square: sq(12),
                    code: 7
                }),
            ]
        );
        // A length byte with bit 7 set is a new header byte, so the header is cut.
        assert_eq!(
            decode(&[0x86, 0x93, 0x00, 0x05, 0x01, 0x02]),
            [
                Decoded::Garbage {
                    bytes: 1,
                    reason: GarbageReason::Interrupted
                },
                Decoded::Message(Message::Version { major: 1, minor: 2 }),
            ]
        );
    }

    #[test]
    fn bad_length_claims_are_rejected_at_the_header() {
        let fu = [0x8E, 0x00, 0x05, 10, 0x02];
        for header in [
            [0x86, 0x03, 0x74], // dump claiming 500 bytes
            [0x8E, 0x00, 100],  // field update claiming 100
            [0x8E, 0x00, 0x04], // field update one byte short
            [0x93, 0x00, 0x02], // total below 3
            [0x91, 0x7F, 0x7F], // serial claiming 16383
            [0xC4, 0x01, 0x00], // unknown id claiming 128
        ] {
            let mut bytes = header.to_vec();
            bytes.extend_from_slice(&[0x01, 0x02]);
            bytes.extend_from_slice(&fu);
            let total = u16::from(header[1]) << 7 | u16::from(header[2]);
            assert_eq!(
                decode(&bytes),
                [
                    Decoded::Garbage {
                        bytes: 3,
                        reason: GarbageReason::BadLength {
                            id: header[0],
                            total
                        }
                    },
                    Decoded::Garbage {
                        bytes: 2,
                        reason: GarbageReason::NoHeader
                    },
                    Decoded::Message(Message::FieldUpdate {
                        square: sq(10),
                        code: 2
                    }),
                ],
                "header {header:02X?}"
            );
        }
    }

    #[test]
    fn frames_split_byte_by_byte() {
        let mut stream = vec![0x55];
        stream.extend(Message::BoardDump(RawBoard::start_position()).encode());
        stream.extend(Message::Version { major: 3, minor: 1 }.encode());
        let mut d = Decoder::new();
        let mut out = Vec::new();
        for b in &stream {
            d.feed(std::slice::from_ref(b));
            out.extend(std::iter::from_fn(|| d.poll()));
        }
        assert_eq!(out, decode(&stream));
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn trailing_garbage_and_partial_frames_wait_for_more_bytes() {
        let mut d = Decoder::new();
        d.feed(&[0x01, 0x02, 0x93, 0x00]);
        assert_eq!(
            d.poll(),
            Some(Decoded::Garbage {
                bytes: 2,
                reason: GarbageReason::NoHeader
            })
        );
        assert_eq!(d.poll(), None);
        d.feed(&[0x05, 0x01]);
        assert_eq!(d.poll(), None);
        d.feed(&[0x02]);
        assert_eq!(
            d.poll(),
            Some(Decoded::Message(Message::Version { major: 1, minor: 2 }))
        );
        assert_eq!(d.poll(), None);
    }
}
