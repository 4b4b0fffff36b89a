//! Host → board commands (§1.3) and the board-side command decoder (§3.2).

use std::collections::VecDeque;

use crate::clock::{CLOCK_MESSAGE, ClockCommand};

/// First byte of the Revelation II LED frame.
const SET_LEDS: u8 = 0x60;
/// Second byte of the Revelation II LED frame (the number of bytes that follow it,
/// without the closing zero).
const SET_LEDS_LEN: u8 = 0x04;

/// A host → board command in single-board mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// 0x40: go to IDLE mode; no reply.
    Reset,
    /// 0x41: reply with one BWTIME message.
    SendClock,
    /// 0x42: reply with a board dump.
    SendBoard,
    /// 0x43: UPDATE mode (field updates plus regular clock messages).
    SendUpdate,
    /// 0x44: UPDATE_BOARD mode (field updates only).
    SendUpdateBoard,
    /// 0x45: reply with the serial number.
    SerialNumber,
    /// 0x46: reply with the bus address.
    BusAddress,
    /// 0x47: reply with the trademark text.
    Trademark,
    /// 0x49: reply with the EEPROM log (large).
    EeMoves,
    /// 0x4A: switch to bus mode; no reply.
    ToBusMode,
    /// 0x4B: UPDATE_NICE mode (field updates plus clock messages on change).
    SendUpdateNice,
    /// 0x4C: reply with the battery status (Bluetooth boards).
    BatteryStatus,
    /// 0x4D: reply with the firmware version.
    Version,
    /// 0x4E: jump to the boot loader. Never send this to a real board.
    StartBootloader,
    /// 0x50: draughts, 50-square dump of the black squares.
    SendBoard50B,
    /// 0x51: draughts, scan black squares only.
    Scan50B,
    /// 0x52: draughts, 50-square dump of the white squares.
    SendBoard50W,
    /// 0x53: draughts, scan white squares only.
    Scan50W,
    /// 0x54: draughts, scan all squares.
    Scan100,
    /// 0x55: reply with the long serial number.
    LongSerialNumber,
    /// 0x60: Revelation II LEDs, frame `60 04 pattern start end 00` (§1.8).
    SetLeds {
        /// 0 off, 1 on, 2 settings.
        pattern: u8,
        /// First square index (0..63; 0x40 with pattern 0 = all off).
        start: u8,
        /// Last square index.
        end: u8,
    },
    /// 0x2B: a clock command for an attached clock.
    Clock(ClockCommand),
}

impl Command {
    /// The single-byte command for `byte`, or `None` for other bytes (including 0x2B and
    /// 0x60, which start longer frames).
    pub const fn from_byte(byte: u8) -> Option<Command> {
        Some(match byte {
            0x40 => Self::Reset,
            0x41 => Self::SendClock,
            0x42 => Self::SendBoard,
            0x43 => Self::SendUpdate,
            0x44 => Self::SendUpdateBoard,
            0x45 => Self::SerialNumber,
            0x46 => Self::BusAddress,
            0x47 => Self::Trademark,
            0x49 => Self::EeMoves,
            0x4A => Self::ToBusMode,
            0x4B => Self::SendUpdateNice,
            0x4C => Self::BatteryStatus,
            0x4D => Self::Version,
            0x4E => Self::StartBootloader,
            0x50 => Self::SendBoard50B,
            0x51 => Self::Scan50B,
            0x52 => Self::SendBoard50W,
            0x53 => Self::Scan50W,
            0x54 => Self::Scan100,
            0x55 => Self::LongSerialNumber,
            _ => return None,
        })
    }

    /// The command's first byte on the wire.
    pub const fn byte(&self) -> u8 {
        match self {
            Self::Reset => 0x40,
            Self::SendClock => 0x41,
            Self::SendBoard => 0x42,
            Self::SendUpdate => 0x43,
            Self::SendUpdateBoard => 0x44,
            Self::SerialNumber => 0x45,
            Self::BusAddress => 0x46,
            Self::Trademark => 0x47,
            Self::EeMoves => 0x49,
            Self::ToBusMode => 0x4A,
            Self::SendUpdateNice => 0x4B,
            Self::BatteryStatus => 0x4C,
            Self::Version => 0x4D,
            Self::StartBootloader => 0x4E,
            Self::SendBoard50B => 0x50,
            Self::Scan50B => 0x51,
            Self::SendBoard50W => 0x52,
            Self::Scan50W => 0x53,
            Self::Scan100 => 0x54,
            Self::LongSerialNumber => 0x55,
            Self::SetLeds { .. } => SET_LEDS,
            Self::Clock(_) => CLOCK_MESSAGE,
        }
    }

    /// Appends the command's bytes to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            Self::SetLeds {
                pattern,
                start,
                end,
            } => out.extend_from_slice(&[SET_LEDS, SET_LEDS_LEN, *pattern, *start, *end, 0x00]),
            Self::Clock(clock) => clock.encode_into(out),
            single => out.push(single.byte()),
        }
    }

    /// The command's bytes as a new vector.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(6);
        self.encode_into(&mut out);
        out
    }
}

/// Where the command decoder is inside a multi-byte command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// Between commands.
    #[default]
    Idle,
    /// After 0x2B, waiting for the length byte.
    ClockLength,
    /// Reading `len` bytes of a clock frame into the body buffer.
    ClockBody { len: usize },
    /// After 0x60, reading 5 bytes into the body buffer.
    Leds,
    /// After a bus command byte, skipping `remaining` bytes (address and checksum).
    Bus { remaining: u8 },
}

/// Board-side decoder for the host → board byte stream (used by the simulator).
///
/// Follows §3.2: unknown single bytes are ignored, 0x2B reads a length byte and then that
/// many bytes, 0x60 reads 5 more bytes, and bus commands (bit 7 set) read 3 more bytes
/// and are skipped, since bus mode is not supported. A clock or LED frame that does not
/// match a documented form is dropped silently, as a real board would ignore it.
#[derive(Debug, Clone, Default)]
pub struct CommandDecoder {
    input: VecDeque<u8>,
    state: State,
    body: Vec<u8>,
}

impl CommandDecoder {
    /// A decoder between commands.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues bytes received from the host.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.input.extend(bytes);
    }

    /// The next complete command, or `None` when more bytes are needed.
    pub fn poll(&mut self) -> Option<Command> {
        while let Some(byte) = self.input.pop_front() {
            if let Some(cmd) = self.step(byte) {
                return Some(cmd);
            }
        }
        None
    }

    /// Advances the state machine by one byte.
    fn step(&mut self, byte: u8) -> Option<Command> {
        match self.state {
            State::Idle => match byte {
                CLOCK_MESSAGE => self.state = State::ClockLength,
                SET_LEDS => {
                    self.body.clear();
                    self.state = State::Leds;
                }
                b if b & 0x80 != 0 => self.state = State::Bus { remaining: 3 },
                b => return Command::from_byte(b),
            },
            State::ClockLength => {
                self.body.clear();
                self.state = match byte {
                    0 => State::Idle,
                    len => State::ClockBody {
                        len: usize::from(len),
                    },
                };
            }
            State::ClockBody { len } => {
                self.body.push(byte);
                if self.body.len() >= len {
                    self.state = State::Idle;
                    return ClockCommand::from_body(&self.body).map(Command::Clock);
                }
            }
            State::Leds => {
                self.body.push(byte);
                if let &[SET_LEDS_LEN, pattern, start, end, 0x00] = self.body.as_slice() {
                    self.state = State::Idle;
                    return Some(Command::SetLeds {
                        pattern,
                        start,
                        end,
                    });
                }
                if self.body.len() >= 5 {
                    self.state = State::Idle;
                }
            }
            State::Bus { remaining } => {
                self.state = match remaining {
                    0 | 1 => State::Idle,
                    n => State::Bus { remaining: n - 1 },
                };
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(bytes: &[u8]) -> Vec<Command> {
        let mut d = CommandDecoder::new();
        d.feed(bytes);
        std::iter::from_fn(|| d.poll()).collect()
    }

    #[test]
    fn single_bytes_round_trip() {
        let mut count = 0;
        for byte in 0..=255u8 {
            if let Some(cmd) = Command::from_byte(byte) {
                count += 1;
                assert_eq!(cmd.encode(), [byte]);
                assert_eq!(cmd.byte(), byte);
                assert_eq!(decode_all(&[byte]), [cmd]);
            }
        }
        // 0x40-0x4E without 0x48, 0x50-0x55.
        assert_eq!(count, 20);
        assert_eq!(Command::from_byte(0x2B), None);
        assert_eq!(Command::from_byte(0x60), None);
        assert_eq!(Command::from_byte(0x48), None);
        assert_eq!(Command::SendUpdateNice.byte(), 0x4B);
        assert_eq!(Command::Reset.byte(), 0x40);
    }

    #[test]
    fn led_frames() {
        let leds = Command::SetLeds {
            pattern: 1,
            start: 12,
            end: 28,
        };
        assert_eq!(leds.encode(), [0x60, 0x04, 0x01, 12, 28, 0x00]);
        assert_eq!(decode_all(&leds.encode()), [leds]);
        // All off on firmware > 3.21.
        assert_eq!(
            decode_all(&[0x60, 0x04, 0x00, 0x40, 0x40, 0x00, 0x42]),
            [
                Command::SetLeds {
                    pattern: 0,
                    start: 0x40,
                    end: 0x40
                },
                Command::SendBoard
            ]
        );
        // A malformed LED frame still consumes 5 bytes and is dropped.
        assert_eq!(
            decode_all(&[0x60, 0x05, 0x42, 0x42, 0x42, 0x42, 0x4D]),
            [Command::Version]
        );
    }

    #[test]
    fn clock_frames_and_noise() {
        let stream = [
            0x13, // unknown byte: ignored
            0x2B, 0x03, 0x03, 0x09, 0x00, // clock version
            0x81, 0x10, 0x06, 0x17, // bus command: skipped
            0x2B, 0x04, 0x03, 0x0B, 0x05, 0x00, // beep
            0x2B, 0x02, 0x42, 0x42, // bad clock frame (len 2): dropped whole
            0x2B, 0x00, // empty clock frame: dropped
            0x4B, 0x4D,
        ];
        assert_eq!(
            decode_all(&stream),
            [
                Command::Clock(ClockCommand::Version),
                Command::Clock(ClockCommand::Beep { units: 5 }),
                Command::SendUpdateNice,
                Command::Version,
            ]
        );
    }

    #[test]
    fn split_frames_and_picochess_init() {
        let mut d = CommandDecoder::new();
        let frame = Command::Clock(ClockCommand::Version).encode();
        let mut out = Vec::new();
        for b in [0x4B, 0x4D, 0x42].iter().chain(&frame) {
            d.feed(&[*b]);
            out.extend(std::iter::from_fn(|| d.poll()));
        }
        assert_eq!(
            out,
            [
                Command::SendUpdateNice,
                Command::Version,
                Command::SendBoard,
                Command::Clock(ClockCommand::Version)
            ]
        );
    }
}
