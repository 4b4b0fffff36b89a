//! Bus mode (§1.9): several boards daisy-chained on one serial line. Host → board command
//! frames, the board-side decoder for them, the bus reply frames and the host-side
//! incremental decoder for those, and bus addresses.
//!
//! Every frame starts with a byte with bit 7 set and all its other bytes have bit 7 clear,
//! so both decoders resynchronise on bit 7 like the single-board [`crate::Decoder`]. Both
//! frame kinds end in a checksum: the sum of the earlier bytes, low 7 bits.

use std::collections::VecDeque;
use std::fmt;

use crate::board::RawBoard;
use crate::clock::{ClockAck, ClockTimes};
use crate::ee::EeRecord;
use crate::frame::{Framed, Framer};

/// Sum of `bytes`, low 7 bits: the checksum of command and reply frames.
pub fn checksum(bytes: &[u8]) -> u8 {
    (bytes.iter().fold(0u32, |sum, &b| sum + u32::from(b)) & 0x7F) as u8
}

/// A board's 14-bit bus address; 0 is the broadcast address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BusAddress(u16);

impl BusAddress {
    /// Every board on the bus (used with ping).
    pub const BROADCAST: BusAddress = BusAddress(0);

    /// The address with this 14-bit value (higher bits are dropped).
    pub const fn new(value: u16) -> Self {
        Self(value & 0x3FFF)
    }

    /// The address of the board with serial number `serial`: its digits read as a number
    /// ("01025" → 1025, on the wire `08 01`, as in the reference). `None` for a serial
    /// without digits or above 16383.
    pub fn from_serial(serial: &str) -> Option<Self> {
        let digits: String = serial.chars().filter(char::is_ascii_digit).collect();
        let value: u16 = digits.parse().ok()?;
        (value <= 0x3FFF).then_some(Self(value))
    }

    /// The serial number this address stands for, as 5 digits ("01025").
    pub fn serial(self) -> String {
        format!("{:05}", self.0)
    }

    /// The 14-bit value.
    pub const fn value(self) -> u16 {
        self.0
    }

    /// The two 7-bit wire bytes, high first.
    pub const fn bytes(self) -> [u8; 2] {
        [((self.0 >> 7) & 0x7F) as u8, (self.0 & 0x7F) as u8]
    }

    /// The address in two 7-bit wire bytes (bit 7 of each is ignored).
    pub const fn from_bytes(hi: u8, lo: u8) -> Self {
        Self(((hi as u16 & 0x7F) << 7) | (lo as u16 & 0x7F))
    }

    /// True for the broadcast address.
    pub const fn is_broadcast(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for BusAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.serial())
    }
}

/// A bus command (the first byte of a command frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BusCommandKind {
    /// 0x81: reply BUS_BWTIME (0x84).
    SendClock,
    /// 0x82: reply BUS_BRD_DUMP (0x83).
    SendBoard,
    /// 0x83: reply BUS_UPDATE (0x85) with every change since the last request.
    SendChanges,
    /// 0x84: reply BUS_UPDATE (0x85) again: the last packet, resent.
    RepeatChanges,
    /// 0x85: write the start tag and the piece positions; reply START_GAME_WRITTEN (0x88).
    SetStartGame,
    /// 0x86: reply BUS_FROM_START (0x86).
    SendFromStart,
    /// 0x87: reply BUS_PING (0x87); with the broadcast address every board answers after
    /// a random delay within 1.1 s.
    Ping,
    /// 0x88: leave bus mode for single-board mode.
    EndBusMode,
    /// 0x89: power-up reset (takes seconds).
    Reset,
    /// 0x8A: answer with a ping, then ignore the next broadcast ping.
    IgnoreNextPing,
    /// 0x8B: reply BUS_VERSION (0x89).
    SendVersion,
    /// 0x8C: draughts dump (0x8A).
    SendBoard50B,
    /// 0x8D: changes, clock and board, one after another.
    SendAllD,
}

impl BusCommandKind {
    /// Every bus command, in byte order.
    pub const ALL: [BusCommandKind; 13] = [
        Self::SendClock,
        Self::SendBoard,
        Self::SendChanges,
        Self::RepeatChanges,
        Self::SetStartGame,
        Self::SendFromStart,
        Self::Ping,
        Self::EndBusMode,
        Self::Reset,
        Self::IgnoreNextPing,
        Self::SendVersion,
        Self::SendBoard50B,
        Self::SendAllD,
    ];

    /// The command byte (bit 7 set).
    pub const fn byte(self) -> u8 {
        match self {
            Self::SendClock => 0x81,
            Self::SendBoard => 0x82,
            Self::SendChanges => 0x83,
            Self::RepeatChanges => 0x84,
            Self::SetStartGame => 0x85,
            Self::SendFromStart => 0x86,
            Self::Ping => 0x87,
            Self::EndBusMode => 0x88,
            Self::Reset => 0x89,
            Self::IgnoreNextPing => 0x8A,
            Self::SendVersion => 0x8B,
            Self::SendBoard50B => 0x8C,
            Self::SendAllD => 0x8D,
        }
    }

    /// The command for `byte`, if it is one.
    pub const fn from_byte(byte: u8) -> Option<Self> {
        Some(match byte {
            0x81 => Self::SendClock,
            0x82 => Self::SendBoard,
            0x83 => Self::SendChanges,
            0x84 => Self::RepeatChanges,
            0x85 => Self::SetStartGame,
            0x86 => Self::SendFromStart,
            0x87 => Self::Ping,
            0x88 => Self::EndBusMode,
            0x89 => Self::Reset,
            0x8A => Self::IgnoreNextPing,
            0x8B => Self::SendVersion,
            0x8C => Self::SendBoard50B,
            0x8D => Self::SendAllD,
            _ => return None,
        })
    }
}

/// A host → board bus command frame: `cmd, addr_hi, addr_lo, checksum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BusCommand {
    /// What to do.
    pub kind: BusCommandKind,
    /// Which board (broadcast only makes sense with ping).
    pub address: BusAddress,
}

impl BusCommand {
    /// `kind` for the board at `address`.
    pub const fn new(kind: BusCommandKind, address: BusAddress) -> Self {
        Self { kind, address }
    }

    /// The 4-byte frame, e.g. `81 10 06 17`.
    pub fn encode(&self) -> [u8; 4] {
        let [hi, lo] = self.address.bytes();
        let head = [self.kind.byte(), hi, lo];
        [head[0], hi, lo, checksum(&head)]
    }
}

/// What the board-side decoder makes of the host's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BusInput {
    /// A complete, valid bus command.
    Command(BusCommand),
    /// A byte with bit 7 clear outside any bus frame: a single-board command byte (§1.9:
    /// the first one switches a board in bus mode to single-board mode).
    Single(u8),
    /// A complete frame whose checksum is wrong; the board ignores it.
    BadChecksum {
        /// The frame as received.
        frame: [u8; 4],
    },
    /// A frame cut short by another byte with bit 7 set, or an unknown command byte with
    /// its three bytes; ignored.
    Dropped {
        /// How many bytes.
        bytes: usize,
    },
}

/// Board-side incremental decoder for the host → board stream in bus mode.
#[derive(Debug, Clone, Default)]
pub struct BusCommandDecoder {
    input: VecDeque<u8>,
    frame: Vec<u8>,
}

impl BusCommandDecoder {
    /// A decoder between frames.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues bytes from the host.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.input.extend(bytes);
    }

    /// The next result, or `None` when more bytes are needed.
    pub fn poll(&mut self) -> Option<BusInput> {
        while let Some(byte) = self.input.pop_front() {
            let starts_frame = byte & 0x80 != 0;
            if self.frame.is_empty() {
                if !starts_frame {
                    return Some(BusInput::Single(byte));
                }
            } else if starts_frame {
                let bytes = self.frame.len();
                self.frame.clear();
                self.input.push_front(byte);
                return Some(BusInput::Dropped { bytes });
            }
            self.frame.push(byte);
            if let &[cmd, hi, lo, sum] = self.frame.as_slice() {
                self.frame.clear();
                let frame = [cmd, hi, lo, sum];
                if checksum(&frame[..3]) != sum {
                    return Some(BusInput::BadChecksum { frame });
                }
                return Some(match BusCommandKind::from_byte(cmd) {
                    Some(kind) => {
                        BusInput::Command(BusCommand::new(kind, BusAddress::from_bytes(hi, lo)))
                    }
                    None => BusInput::Dropped { bytes: 4 },
                });
            }
        }
        None
    }
}

/// Reply ids (bit 7 set).
mod id {
    pub const BRD_DUMP: u8 = 0x83;
    pub const BWTIME: u8 = 0x84;
    pub const UPDATE: u8 = 0x85;
    pub const FROM_START: u8 = 0x86;
    pub const PING: u8 = 0x87;
    pub const START_GAME_WRITTEN: u8 = 0x88;
    pub const VERSION: u8 = 0x89;
}

/// Frame bytes around the data: id, two length bytes, two address bytes, checksum.
const OVERHEAD: usize = 6;
/// Largest data length the decoder accepts for ids with variable data: the EEPROM size.
const MAX_DATA: usize = 0x1F00;

/// The body of a bus reply.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BusMessage {
    /// 0x83: the whole board (64 piece codes).
    BoardDump(RawBoard),
    /// 0x84 holding clock times.
    ClockTime(ClockTimes),
    /// 0x84 holding a clock ack.
    ClockAck(ClockAck),
    /// 0x85: the changes since the last request, as EEPROM records (§1.10).
    Update(Vec<EeRecord>),
    /// 0x86: the EEPROM log since the start tag.
    FromStart(Vec<EeRecord>),
    /// 0x87: ping answer.
    Ping,
    /// 0x88: the start tag and piece positions were written.
    StartGameWritten,
    /// 0x89: firmware version; `None` for the 6-byte form of firmware before 1.2.
    Version(Option<(u8, u8)>),
    /// Any other id, kept raw.
    Unknown {
        /// The id byte (bit 7 set).
        id: u8,
        /// The data bytes.
        data: Vec<u8>,
    },
}

impl BusMessage {
    /// The id byte on the wire.
    pub fn id(&self) -> u8 {
        match self {
            Self::BoardDump(_) => id::BRD_DUMP,
            Self::ClockTime(_) | Self::ClockAck(_) => id::BWTIME,
            Self::Update(_) => id::UPDATE,
            Self::FromStart(_) => id::FROM_START,
            Self::Ping => id::PING,
            Self::StartGameWritten => id::START_GAME_WRITTEN,
            Self::Version(_) => id::VERSION,
            Self::Unknown { id, .. } => id | 0x80,
        }
    }

    fn data(&self) -> Vec<u8> {
        match self {
            Self::BoardDump(board) => board.0.to_vec(),
            Self::ClockTime(times) => times.to_payload().to_vec(),
            Self::ClockAck(ack) => ack.to_payload().to_vec(),
            Self::Update(records) | Self::FromStart(records) => {
                let mut out = Vec::new();
                records.iter().for_each(|r| r.encode_into(&mut out));
                out
            }
            Self::Ping | Self::StartGameWritten | Self::Version(None) => Vec::new(),
            Self::Version(Some((major, minor))) => vec![*major, *minor],
            Self::Unknown { data, .. } => data.clone(),
        }
    }

    /// Data lengths the decoder accepts for reply `id`.
    fn data_limits(id: u8) -> (usize, usize) {
        match id {
            id::BRD_DUMP => (64, 64),
            id::BWTIME => (7, 7),
            id::PING | id::START_GAME_WRITTEN => (0, 0),
            id::VERSION => (0, 2),
            _ => (0, MAX_DATA),
        }
    }

    fn from_frame(id: u8, data: &[u8]) -> Result<Self, BusGarbage> {
        Ok(match (id, data) {
            (id::BRD_DUMP, data) => {
                let mut board = RawBoard::default();
                board.0.iter_mut().zip(data).for_each(|(s, &b)| *s = b);
                Self::BoardDump(board)
            }
            (id::BWTIME, &[p0, p1, p2, p3, p4, p5, p6]) => {
                let p = [p0, p1, p2, p3, p4, p5, p6];
                if ClockAck::is_ack_payload(&p) {
                    Self::ClockAck(ClockAck::from_payload(p))
                } else {
                    Self::ClockTime(ClockTimes::from_payload(p))
                }
            }
            (id::UPDATE, data) => Self::Update(EeRecord::parse_all(data)),
            (id::FROM_START, data) => Self::FromStart(EeRecord::parse_all(data)),
            (id::PING, []) => Self::Ping,
            (id::START_GAME_WRITTEN, []) => Self::StartGameWritten,
            (id::VERSION, []) => Self::Version(None),
            (id::VERSION, &[major, minor]) => Self::Version(Some((major, minor))),
            (id, data) if matches!(id, id::BWTIME | id::VERSION) => {
                return Err(BusGarbage::BadLength {
                    id,
                    total: (data.len() + OVERHEAD) as u16,
                });
            }
            (id, data) => Self::Unknown {
                id,
                data: data.to_vec(),
            },
        })
    }
}

/// A reply frame from one board.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BusReply {
    /// The board that sent it.
    pub address: BusAddress,
    /// What it says.
    pub message: BusMessage,
}

impl BusReply {
    /// The frame: `id, len_hi, len_lo, addr_hi, addr_lo, data…, checksum`, with the
    /// length counting every byte and data masked to 7 bits.
    pub fn encode(&self) -> Vec<u8> {
        let id = self.message.id();
        let mut data = self.message.data();
        data.truncate(Self::max_data(id));
        let total = data.len() + OVERHEAD;
        let [hi, lo] = self.address.bytes();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(&[
            id,
            ((total >> 7) & 0x7F) as u8,
            (total & 0x7F) as u8,
            hi,
            lo,
        ]);
        out.extend(data.iter().map(|b| b & 0x7F));
        out.push(checksum(&out));
        out
    }

    fn max_data(id: u8) -> usize {
        BusMessage::data_limits(id).1
    }
}

/// Why bytes from the bus were dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum BusGarbage {
    /// Bytes with bit 7 clear where a frame should start.
    #[error("bytes outside any frame")]
    NoHeader,
    /// A partial frame cut short by a byte with bit 7 set.
    #[error("frame cut short by a new header byte")]
    Interrupted,
    /// A header claiming a length impossible for its id.
    #[error("invalid length {total} for bus reply id {id:#04x}")]
    BadLength {
        /// The id byte.
        id: u8,
        /// The claimed total length.
        total: u16,
    },
}

/// What [`BusDecoder::poll`] produces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BusDecoded {
    /// A complete frame with a good checksum.
    Reply(BusReply),
    /// A complete frame whose checksum is wrong: its content cannot be trusted, but the
    /// id and address say which request it probably answered (§1.9: resend the command,
    /// REPEAT_CHANGES in place of SEND_CHANGES).
    ChecksumError {
        /// The id byte as received.
        id: u8,
        /// The address as received.
        address: BusAddress,
        /// The frame's length.
        bytes: usize,
    },
    /// Bytes skipped, with the reason.
    Garbage {
        /// How many.
        bytes: usize,
        /// Why.
        reason: BusGarbage,
    },
}

/// Host-side incremental decoder for bus replies. Feed bytes in chunks of any size, then
/// poll until `None`; results do not depend on the chunking, and no input panics.
#[derive(Debug, Clone, Default)]
pub struct BusDecoder {
    framer: Framer,
}

impl BusDecoder {
    /// A decoder waiting for a frame.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues bytes from the bus.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.framer.feed(bytes);
    }

    /// True while a frame has started but is not complete (the host is still receiving
    /// a reply).
    pub fn in_frame(&self) -> bool {
        self.framer.in_frame()
    }

    /// The next result, or `None` when more bytes are needed.
    pub fn poll(&mut self) -> Option<BusDecoded> {
        let limits = |id| {
            let (min, max) = BusMessage::data_limits(id);
            (min + OVERHEAD, max + OVERHEAD)
        };
        let garbage = |bytes, reason| BusDecoded::Garbage { bytes, reason };
        Some(match self.framer.poll(limits)? {
            Framed::Skipped(bytes) => garbage(bytes, BusGarbage::NoHeader),
            Framed::Interrupted(bytes) => garbage(bytes, BusGarbage::Interrupted),
            Framed::BadLength { id, total } => garbage(3, BusGarbage::BadLength { id, total }),
            Framed::Frame(frame) => finish(frame),
        })
    }
}

/// A complete frame checked and decoded.
fn finish(frame: &[u8]) -> BusDecoded {
    let bytes = frame.len();
    let [id, _, _, hi, lo, rest @ ..] = frame else {
        // Unreachable: a frame is at least OVERHEAD bytes.
        return BusDecoded::Garbage {
            bytes,
            reason: BusGarbage::Interrupted,
        };
    };
    let address = BusAddress::from_bytes(*hi, *lo);
    let Some((&sum, data)) = rest.split_last() else {
        return BusDecoded::Garbage {
            bytes,
            reason: BusGarbage::Interrupted,
        };
    };
    if checksum(&frame[..bytes - 1]) != sum {
        return BusDecoded::ChecksumError {
            id: *id,
            address,
            bytes,
        };
    }
    match BusMessage::from_frame(*id, data) {
        Ok(message) => BusDecoded::Reply(BusReply { address, message }),
        Err(reason) => BusDecoded::Garbage { bytes, reason },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::square::SquareIndex;

    fn decode(bytes: &[u8]) -> Vec<BusDecoded> {
        let mut d = BusDecoder::new();
        d.feed(bytes);
        std::iter::from_fn(|| d.poll()).collect()
    }

    fn commands(bytes: &[u8]) -> Vec<BusInput> {
        let mut d = BusCommandDecoder::new();
        d.feed(bytes);
        std::iter::from_fn(|| d.poll()).collect()
    }

    #[test]
    fn reference_example_frame_and_addresses() {
        let addr = BusAddress::from_bytes(0x10, 0x06);
        assert_eq!(
            BusCommand::new(BusCommandKind::SendClock, addr).encode(),
            [0x81, 0x10, 0x06, 0x17]
        );
        let a = BusAddress::from_serial("01025").expect("digits");
        assert_eq!(a.bytes(), [0x08, 0x01]);
        assert_eq!(a.serial(), "01025");
        assert_eq!(BusAddress::from_serial("16384"), None);
        assert_eq!(BusAddress::from_serial("abc"), None);
        assert!(BusAddress::BROADCAST.is_broadcast());
        for kind in BusCommandKind::ALL {
            assert_eq!(BusCommandKind::from_byte(kind.byte()), Some(kind));
            let cmd = BusCommand::new(kind, a);
            assert_eq!(commands(&cmd.encode()), [BusInput::Command(cmd)]);
        }
        assert_eq!(BusCommandKind::from_byte(0x8E), None);
    }

    #[test]
    fn command_decoder_sees_single_bytes_bad_checksums_and_cut_frames() {
        let ping = BusCommand::new(BusCommandKind::Ping, BusAddress::BROADCAST).encode();
        let mut stream = vec![0x42, 0x83, 0x08];
        stream.extend_from_slice(&ping);
        stream.extend_from_slice(&[0x83, 0x08, 0x01, 0x00, 0x8E, 0, 0, 0x0E]);
        assert_eq!(
            commands(&stream),
            [
                BusInput::Single(0x42),
                BusInput::Dropped { bytes: 2 },
                BusInput::Command(BusCommand::new(BusCommandKind::Ping, BusAddress::BROADCAST)),
                BusInput::BadChecksum {
                    frame: [0x83, 0x08, 0x01, 0x00]
                },
                BusInput::Dropped { bytes: 4 },
            ]
        );
    }

    #[test]
    fn replies_round_trip_and_ping_is_six_bytes() {
        let a = BusAddress::new(1025);
        let ping = BusReply {
            address: a,
            message: BusMessage::Ping,
        };
        let bytes = ping.encode();
        assert_eq!(bytes.len(), 6);
        assert_eq!(&bytes[..5], &[0x87, 0x00, 0x06, 0x08, 0x01]);
        assert_eq!(decode(&bytes), [BusDecoded::Reply(ping)]);
        let version = BusReply {
            address: a,
            message: BusMessage::Version(Some((1, 2))),
        };
        assert_eq!(version.encode().len(), 8);
        let update = BusReply {
            address: a,
            message: BusMessage::Update(vec![EeRecord::FieldChange {
                code: 1,
                square: SquareIndex::new(52).expect("square"),
                quick: false,
            }]),
        };
        let dump = BusReply {
            address: a,
            message: BusMessage::BoardDump(RawBoard::start_position()),
        };
        assert_eq!(dump.encode().len(), 70);
        let mut stream = update.encode();
        stream.extend(dump.encode());
        assert_eq!(
            decode(&stream),
            [BusDecoded::Reply(update), BusDecoded::Reply(dump)]
        );
    }

    #[test]
    fn checksum_errors_are_typed_and_garbage_resyncs() {
        let a = BusAddress::new(77);
        let mut bad = BusReply {
            address: a,
            message: BusMessage::Update(vec![]),
        }
        .encode();
        *bad.last_mut().expect("checksum") ^= 0x01;
        let good = BusReply {
            address: a,
            message: BusMessage::Ping,
        }
        .encode();
        let mut stream = vec![0x01, 0x02];
        stream.extend(&bad);
        stream.extend_from_slice(&[0x89, 0x00, 0x05]); // version claiming 5 bytes: too short
        stream.extend_from_slice(&good[..3]);
        stream.extend(&good);
        assert_eq!(
            decode(&stream),
            [
                BusDecoded::Garbage {
                    bytes: 2,
                    reason: BusGarbage::NoHeader
                },
                BusDecoded::ChecksumError {
                    id: 0x85,
                    address: a,
                    bytes: 6
                },
                BusDecoded::Garbage {
                    bytes: 3,
                    reason: BusGarbage::BadLength { id: 0x89, total: 5 }
                },
                BusDecoded::Garbage {
                    bytes: 3,
                    reason: BusGarbage::Interrupted
                },
                BusDecoded::Reply(BusReply {
                    address: a,
                    message: BusMessage::Ping
                }),
            ]
        );
    }
}
