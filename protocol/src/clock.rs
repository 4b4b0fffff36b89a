//! The clock: 0x2B clock commands (host → board) and the BWTIME payload (board → host),
//! which carries either clock times or a clock ack (§1.7).

/// First byte of every host → board clock command frame.
pub const CLOCK_MESSAGE: u8 = 0x2B;
/// Start marker that follows the length byte of a clock command frame.
const START_MARKER: u8 = 0x03;
/// End marker that closes every clock command frame (since 2012).
const END_MARKER: u8 = 0x00;

/// A clock command, sent inside a `2B <len> 03 <cmd> <data…> 00` frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockCommand {
    /// 0x01: drive the DGT XL seven-segment display directly.
    Display {
        /// Segment bytes in wire order C, B, A, F, E, D (display layout `1A:BC 1D:EF`).
        digits: [u8; 6],
        /// Dot, colon and "1" icons of both sides.
        icons: u8,
        /// Beep byte (header: 0x03 beep, 0x01 no beep; picochess sends 0x00).
        beep: u8,
    },
    /// 0x02: set the icon bytes i0..i4.
    Icons {
        /// i0/i1: left/right mode icons, i2/i3: periods and flags, i4: misc.
        icons: [u8; 5],
    },
    /// 0x03: end a display command; the clock shows its times again.
    End,
    /// 0x08: query the buttons (the ack carries no button data).
    Button,
    /// 0x09: ask for the clock version (answered by an ack with ack1 = 0x09).
    Version,
    /// 0x0A: set both times and start, only honoured in clock mode 23. Plain binary times.
    SetAndRun {
        /// Left (hours, minutes, seconds).
        left: (u8, u8, u8),
        /// Right (hours, minutes, seconds).
        right: (u8, u8, u8),
        /// 0x01 left running, 0x02 right running, 0x04 paused, 0x08 toggle on lever.
        flags: u8,
    },
    /// 0x0B: beep for `units` × 64 ms.
    Beep {
        /// Length in 64 ms units.
        units: u8,
    },
    /// 0x0C: show 8 ASCII characters (DGT 3000 only).
    Ascii {
        /// The characters.
        text: [u8; 8],
        /// 0 = none, otherwise a beep of about 62.5 ms + value/16 s.
        beep: u8,
    },
    /// 0x0D: show 11 ASCII characters (Revelation II in Pi mode only).
    Rev2Ascii {
        /// The characters.
        text: [u8; 11],
        /// Beep byte, as for [`ClockCommand::Ascii`].
        beep: u8,
    },
}

impl ClockCommand {
    /// The command id (the byte after the start marker).
    pub const fn id(&self) -> u8 {
        match self {
            Self::Display { .. } => 0x01,
            Self::Icons { .. } => 0x02,
            Self::End => 0x03,
            Self::Button => 0x08,
            Self::Version => 0x09,
            Self::SetAndRun { .. } => 0x0A,
            Self::Beep { .. } => 0x0B,
            Self::Ascii { .. } => 0x0C,
            Self::Rev2Ascii { .. } => 0x0D,
        }
    }

    /// Appends the whole frame `2B <len> 03 <cmd> <data…> 00` to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut data: Vec<u8> = Vec::with_capacity(12);
        match *self {
            Self::Display {
                digits,
                icons,
                beep,
            } => {
                data.extend_from_slice(&digits);
                data.extend_from_slice(&[icons, beep]);
            }
            // ICONS is padded to the same length as DISPLAY with three zero bytes.
            Self::Icons { icons } => {
                data.extend_from_slice(&icons);
                data.extend_from_slice(&[0, 0, 0]);
            }
            Self::End | Self::Button | Self::Version => {}
            Self::SetAndRun { left, right, flags } => {
                data.extend_from_slice(&[left.0, left.1, left.2, right.0, right.1, right.2, flags]);
            }
            Self::Beep { units } => data.push(units),
            Self::Ascii { text, beep } => {
                data.extend_from_slice(&text);
                data.push(beep);
            }
            Self::Rev2Ascii { text, beep } => {
                data.extend_from_slice(&text);
                data.push(beep);
            }
        }
        // len counts the start marker, the id, the data and the end marker; at most 15.
        let len = u8::try_from(data.len() + 3).unwrap_or(u8::MAX);
        out.extend_from_slice(&[CLOCK_MESSAGE, len, START_MARKER, self.id()]);
        out.extend_from_slice(&data);
        out.push(END_MARKER);
    }

    /// The whole frame as a new vector.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(17);
        self.encode_into(&mut out);
        out
    }

    /// Parses the `len` bytes that follow the length byte (`03 <cmd> <data…> 00`).
    ///
    /// Returns `None` for anything that is not exactly one of the documented frames:
    /// a wrong marker, an unknown id or a length that does not fit the id.
    pub fn from_body(body: &[u8]) -> Option<Self> {
        let [START_MARKER, id, data @ .., END_MARKER] = body else {
            return None;
        };
        let cmd = match (*id, data) {
            (0x01, &[c, b, a, f, e, d, icons, beep]) => Self::Display {
                digits: [c, b, a, f, e, d],
                icons,
                beep,
            },
            (0x02, &[i0, i1, i2, i3, i4, _, _, _]) => Self::Icons {
                icons: [i0, i1, i2, i3, i4],
            },
            (0x03, []) => Self::End,
            (0x08, []) => Self::Button,
            (0x09, []) => Self::Version,
            (0x0A, &[lh, lm, ls, rh, rm, rs, flags]) => Self::SetAndRun {
                left: (lh, lm, ls),
                right: (rh, rm, rs),
                flags,
            },
            (0x0B, &[units]) => Self::Beep { units },
            (0x0C, data) => {
                let (text, beep) = split_text::<8>(data)?;
                Self::Ascii { text, beep }
            }
            (0x0D, data) => {
                let (text, beep) = split_text::<11>(data)?;
                Self::Rev2Ascii { text, beep }
            }
            _ => return None,
        };
        Some(cmd)
    }
}

/// Splits `N` text bytes followed by exactly one beep byte.
fn split_text<const N: usize>(data: &[u8]) -> Option<([u8; N], u8)> {
    let (beep, text) = data.split_last()?;
    Some((<[u8; N]>::try_from(text).ok()?, *beep))
}

/// Decodes one BCD byte with the drivers' formula `(b >> 4) * 10 + (b & 0x0F)`.
///
/// Nothing is rejected here: a 7-bit byte gives at most 85, and range checks are left to
/// [`SideTime::is_valid`] so junk stays visible to the consumer instead of vanishing.
pub(crate) const fn from_bcd(b: u8) -> u8 {
    (b >> 4) * 10 + (b & 0x0F)
}

/// Encodes `v` (clamped to 0..=59) as BCD; the result always has bit 7 clear.
pub(crate) const fn to_bcd(v: u8) -> u8 {
    let v = if v > 59 { 59 } else { v };
    ((v / 10) << 4) | (v % 10)
}

/// One side of a BWTIME clock reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SideTime {
    /// Hours (the low nibble; 0..=9 when valid).
    pub hours: u8,
    /// Minutes decoded from BCD (0..=59 when valid).
    pub minutes: u8,
    /// Seconds decoded from BCD (0..=59 when valid).
    pub seconds: u8,
    /// The flag has fallen and the clock is blocked at zero.
    pub flag_fallen: bool,
    /// A time-per-move (Bronstein/Fischer) indicator is on.
    pub time_per_move: bool,
    /// The flag is shown on the display (the clock may still run).
    pub flag_shown: bool,
}

impl SideTime {
    /// True when every field is in range (hours ≤ 9, minutes and seconds ≤ 59).
    pub const fn is_valid(&self) -> bool {
        self.hours <= 9 && self.minutes <= 59 && self.seconds <= 59
    }

    /// The time in seconds.
    pub const fn total_seconds(&self) -> u32 {
        self.hours as u32 * 3600 + self.minutes as u32 * 60 + self.seconds as u32
    }

    fn decode(h: u8, m: u8, s: u8) -> Self {
        Self {
            hours: h & 0x0F,
            minutes: from_bcd(m),
            seconds: from_bcd(s),
            flag_fallen: h & 0x10 != 0,
            time_per_move: h & 0x20 != 0,
            flag_shown: h & 0x40 != 0,
        }
    }

    /// The three wire bytes. Out-of-range fields are clamped (hours to 9, the others to
    /// 59) because an hours nibble of 0x0A would turn the message into an ack.
    fn encode(&self) -> [u8; 3] {
        let hours = if self.hours > 9 { 9 } else { self.hours };
        let h = hours
            | u8::from(self.flag_fallen) << 4
            | u8::from(self.time_per_move) << 5
            | u8::from(self.flag_shown) << 6;
        [h, to_bcd(self.minutes), to_bcd(self.seconds)]
    }
}

/// The BWTIME status byte p6 with the 2015 meaning of its bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ClockStatus(pub u8);

impl ClockStatus {
    /// Bit 0: the clock is running (0 = stopped with start/stop).
    pub const RUNNING: u8 = 0x01;
    /// Bit 1: the lever is high on the right side (0 = left side high).
    pub const RIGHT_LEVER_HIGH: u8 = 0x02;
    /// Bit 2: the battery-low indicator is shown.
    pub const BATTERY_LOW: u8 = 0x04;
    /// Bit 3: the right player is to move.
    pub const RIGHT_TO_MOVE: u8 = 0x08;
    /// Bit 4: the left player is to move.
    pub const LEFT_TO_MOVE: u8 = 0x10;
    /// Bit 5: no clock is connected; the times are invalid.
    pub const NO_CLOCK: u8 = 0x20;

    /// True when every bit of `mask` is set.
    pub const fn contains(self, mask: u8) -> bool {
        self.0 & mask == mask
    }
    /// See [`ClockStatus::RUNNING`].
    pub const fn running(self) -> bool {
        self.contains(Self::RUNNING)
    }
    /// See [`ClockStatus::RIGHT_LEVER_HIGH`].
    pub const fn right_lever_high(self) -> bool {
        self.contains(Self::RIGHT_LEVER_HIGH)
    }
    /// See [`ClockStatus::BATTERY_LOW`].
    pub const fn battery_low(self) -> bool {
        self.contains(Self::BATTERY_LOW)
    }
    /// See [`ClockStatus::RIGHT_TO_MOVE`].
    pub const fn right_to_move(self) -> bool {
        self.contains(Self::RIGHT_TO_MOVE)
    }
    /// See [`ClockStatus::LEFT_TO_MOVE`].
    pub const fn left_to_move(self) -> bool {
        self.contains(Self::LEFT_TO_MOVE)
    }
    /// See [`ClockStatus::NO_CLOCK`].
    pub const fn no_clock(self) -> bool {
        self.contains(Self::NO_CLOCK)
    }
}

/// A BWTIME clock reading (2011+/2015 layout: right side first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ClockTimes {
    /// The right player's time (payload bytes p0..p2).
    pub right: SideTime,
    /// The left player's time (payload bytes p3..p5).
    pub left: SideTime,
    /// The status byte p6.
    pub status: ClockStatus,
}

impl ClockTimes {
    /// Decodes the 7 BWTIME payload bytes as times (the caller has ruled out an ack).
    pub fn from_payload(p: [u8; 7]) -> Self {
        let [p0, p1, p2, p3, p4, p5, p6] = p;
        Self {
            right: SideTime::decode(p0, p1, p2),
            left: SideTime::decode(p3, p4, p5),
            status: ClockStatus(p6),
        }
    }

    /// The 7 payload bytes (all with bit 7 clear; see [`SideTime`] for clamping).
    pub fn to_payload(&self) -> [u8; 7] {
        let [p0, p1, p2] = self.right.encode();
        let [p3, p4, p5] = self.left.encode();
        [p0, p1, p2, p3, p4, p5, self.status.0 & 0x7F]
    }

    /// True for the all-zero "null message" that some firmware sends; drivers ignore it.
    pub fn is_null(&self) -> bool {
        *self == Self::default()
    }

    /// True when both sides are in range (see [`SideTime::is_valid`]).
    pub const fn is_valid(&self) -> bool {
        self.right.is_valid() && self.left.is_valid()
    }
}

/// A clock button reported by an unsolicited ack (ack1 = 0x88).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockButton {
    /// ack3 = 0x31.
    Back,
    /// ack3 = 0x32.
    Plus,
    /// ack3 = 0x33.
    Run,
    /// ack3 = 0x34.
    Minus,
    /// ack3 = 0x35.
    Ok,
    /// Any other ack3 value (e.g. a combined press).
    Other(u8),
}

/// A 4-byte clock ack carried in a BWTIME message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ClockAck {
    /// 0x10 = normal ack, 0x40 = error.
    pub ack0: u8,
    /// Command id (bit 7 clear) or unsolicited event (bit 7 set).
    pub ack1: u8,
    /// Command-specific data (the version for ack1 = 0x09).
    pub ack2: u8,
    /// Command-specific data (the button for ack1 = 0x88).
    pub ack3: u8,
}

impl ClockAck {
    /// ack0 value of a normal ack.
    pub const OK: u8 = 0x10;
    /// ack0 value of an error ack.
    pub const ERROR: u8 = 0x40;

    /// The normal ack a clock sends for command `cmd` (ack0 = 0x10, ack1 = `cmd`).
    pub const fn for_command(cmd: u8) -> Self {
        Self {
            ack0: Self::OK,
            ack1: cmd,
            ack2: 0,
            ack3: 0,
        }
    }

    /// The ack to a version request: major in the high nibble of ack2, minor in the low.
    pub const fn version_reply(major: u8, minor: u8) -> Self {
        Self {
            ack2: (major << 4) | (minor & 0x0F),
            ..Self::for_command(0x09)
        }
    }

    /// True when the 7 BWTIME payload bytes hold an ack rather than times.
    pub const fn is_ack_payload(p: &[u8; 7]) -> bool {
        p[0] & 0x0F == 0x0A || p[3] & 0x0F == 0x0A
    }

    /// Decodes an ack from the 7 BWTIME payload bytes with the §1.7 formula.
    pub const fn from_payload(p: [u8; 7]) -> Self {
        let [p0, p1, p2, p3, p4, p5, _] = p;
        Self {
            ack0: (p1 & 0x7F) | ((p3 << 3) & 0x80),
            ack1: (p2 & 0x7F) | ((p3 << 2) & 0x80),
            ack2: (p4 & 0x7F) | ((p0 << 3) & 0x80),
            ack3: (p5 & 0x7F) | ((p0 << 2) & 0x80),
        }
    }

    /// The 7 BWTIME payload bytes, the inverse of [`ClockAck::from_payload`].
    pub const fn to_payload(&self) -> [u8; 7] {
        [
            0x0A | ((self.ack2 >> 7) << 4) | ((self.ack3 >> 7) << 5),
            self.ack0 & 0x7F,
            self.ack1 & 0x7F,
            0x0A | ((self.ack0 >> 7) << 4) | ((self.ack1 >> 7) << 5),
            self.ack2 & 0x7F,
            self.ack3 & 0x7F,
            0,
        ]
    }

    /// True unless ack0 is the normal-ack value 0x10 (0x40 is the documented error;
    /// picochess treats any other value as a failure too).
    pub const fn is_error(&self) -> bool {
        self.ack0 != Self::OK
    }

    /// The command this ack answers, when it is a reply (ack1 bit 7 clear).
    pub const fn command(&self) -> Option<u8> {
        if self.ack1 & 0x80 == 0 {
            Some(self.ack1)
        } else {
            None
        }
    }

    /// The unsolicited event code (ack1 with bit 7 set: 0x81 ready, 0x88 button,
    /// 0x8A mode info, 0x90 not in mode 23).
    pub const fn event(&self) -> Option<u8> {
        if self.ack1 & 0x80 != 0 {
            Some(self.ack1)
        } else {
            None
        }
    }

    /// The clock version `(major, minor)` from a version ack (ack1 = 0x09).
    /// Major 2 means DGT 3000, otherwise a DGT XL.
    pub const fn version(&self) -> Option<(u8, u8)> {
        if self.ack1 == 0x09 {
            Some((self.ack2 >> 4, self.ack2 & 0x0F))
        } else {
            None
        }
    }

    /// The button from a "button pressed" event (ack1 = 0x88).
    pub const fn button(&self) -> Option<ClockButton> {
        if self.ack1 != 0x88 {
            return None;
        }
        Some(match self.ack3 {
            0x31 => ClockButton::Back,
            0x32 => ClockButton::Plus,
            0x33 => ClockButton::Run,
            0x34 => ClockButton::Minus,
            0x35 => ClockButton::Ok,
            other => ClockButton::Other(other),
        })
    }

    /// True for the "clock ready" event (ack1 = 0x81).
    pub const fn is_ready(&self) -> bool {
        self.ack1 == 0x81
    }

    /// True for the "not in mode 23" event (ack1 = 0x90).
    pub const fn is_not_in_mode_23(&self) -> bool {
        self.ack1 == 0x90
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_frames_match_the_reference_table() {
        assert_eq!(
            ClockCommand::Version.encode(),
            [0x2B, 0x03, 0x03, 0x09, 0x00]
        );
        assert_eq!(ClockCommand::End.encode(), [0x2B, 0x03, 0x03, 0x03, 0x00]);
        assert_eq!(
            ClockCommand::Button.encode(),
            [0x2B, 0x03, 0x03, 0x08, 0x00]
        );
        assert_eq!(
            ClockCommand::Beep { units: 5 }.encode(),
            [0x2B, 0x04, 0x03, 0x0B, 0x05, 0x00]
        );
        let display = ClockCommand::Display {
            digits: [1, 2, 3, 4, 5, 6],
            icons: 0x12,
            beep: 0x03,
        };
        assert_eq!(
            display.encode(),
            [0x2B, 0x0B, 0x03, 0x01, 1, 2, 3, 4, 5, 6, 0x12, 0x03, 0x00]
        );
        let icons = ClockCommand::Icons {
            icons: [1, 2, 3, 4, 5],
        };
        assert_eq!(
            icons.encode(),
            [0x2B, 0x0B, 0x03, 0x02, 1, 2, 3, 4, 5, 0, 0, 0, 0]
        );
        let set = ClockCommand::SetAndRun {
            left: (1, 30, 0),
            right: (0, 5, 59),
            flags: 0x01,
        };
        assert_eq!(
            set.encode(),
            [0x2B, 0x0A, 0x03, 0x0A, 1, 30, 0, 0, 5, 59, 0x01, 0x00]
        );
        let ascii = ClockCommand::Ascii {
            text: *b"boardcst",
            beep: 0,
        };
        let mut expected = vec![0x2B, 0x0C, 0x03, 0x0C];
        expected.extend_from_slice(b"boardcst");
        expected.extend_from_slice(&[0, 0]);
        assert_eq!(ascii.encode(), expected);
        let rev2 = ClockCommand::Rev2Ascii {
            text: *b"hello world",
            beep: 1,
        };
        let frame = rev2.encode();
        assert_eq!(frame.get(..4), Some(&[0x2B, 0x0F, 0x03, 0x0D][..]));
        assert_eq!(frame.len(), 17);
    }

    #[test]
    fn bodies_parse_back_and_reject_junk() {
        for cmd in [
            ClockCommand::Version,
            ClockCommand::Beep { units: 9 },
            ClockCommand::Icons { icons: [9; 5] },
        ] {
            let frame = cmd.encode();
            assert_eq!(
                ClockCommand::from_body(frame.get(2..).unwrap_or(&[])),
                Some(cmd)
            );
        }
        assert_eq!(ClockCommand::from_body(&[]), None);
        assert_eq!(ClockCommand::from_body(&[0x03]), None);
        assert_eq!(ClockCommand::from_body(&[0x03, 0x09, 0x01]), None);
        assert_eq!(ClockCommand::from_body(&[0x04, 0x09, 0x00]), None);
        assert_eq!(ClockCommand::from_body(&[0x03, 0x0B, 0x00]), None);
        assert_eq!(ClockCommand::from_body(&[0x03, 0x77, 0x00]), None);
        assert_eq!(ClockCommand::from_body(&[0x03, 0x0C, 1, 0x00]), None);
    }

    #[test]
    fn times_decode_bcd_and_flags() {
        // Right 1:23:45 with the flag shown, left 0:59:07 fallen, clock running, left to move.
        let p = [0x41, 0x23, 0x45, 0x10, 0x59, 0x07, 0x11];
        assert!(!ClockAck::is_ack_payload(&p));
        let t = ClockTimes::from_payload(p);
        assert_eq!(
            (t.right.hours, t.right.minutes, t.right.seconds),
            (1, 23, 45)
        );
        assert!(t.right.flag_shown && !t.right.flag_fallen && !t.right.time_per_move);
        assert_eq!((t.left.hours, t.left.minutes, t.left.seconds), (0, 59, 7));
        assert!(t.left.flag_fallen);
        assert!(t.status.running() && t.status.left_to_move() && !t.status.right_to_move());
        assert!(t.is_valid() && !t.is_null());
        assert_eq!(t.right.total_seconds(), 3600 + 23 * 60 + 45);
        assert_eq!(t.to_payload(), p);
    }

    #[test]
    fn null_and_out_of_range_times_do_not_panic() {
        let t = ClockTimes::from_payload([0; 7]);
        assert!(t.is_null());
        let junk = ClockTimes::from_payload([0x7F, 0x7F, 0x7F, 0x0F, 0x6A, 0x7F, 0x7F]);
        assert!(!junk.is_valid());
        assert_eq!(junk.right.minutes, 85);
        assert!(junk.to_payload().iter().all(|b| b & 0x80 == 0));
        let no_clock = ClockTimes::from_payload([0, 0, 0, 0, 0, 0, 0x20]);
        assert!(no_clock.status.no_clock() && !no_clock.is_null());
    }

    #[test]
    fn ack_formula_both_ways() {
        // Version ack of a DGT 3000 (2.2): ack0 0x10, ack1 0x09, ack2 0x22.
        let ack = ClockAck::version_reply(2, 2);
        let p = ack.to_payload();
        assert_eq!(p, [0x0A, 0x10, 0x09, 0x0A, 0x22, 0x00, 0x00]);
        assert!(ClockAck::is_ack_payload(&p));
        assert_eq!(ClockAck::from_payload(p), ack);
        assert_eq!(ack.version(), Some((2, 2)));
        assert_eq!(ack.command(), Some(0x09));
        assert!(!ack.is_error());

        // Button event with high bits: ack1 0x88 travels as p2 = 0x08 plus bit 5 of p3.
        let button = ClockAck {
            ack0: 0x10,
            ack1: 0x88,
            ack2: 0x80,
            ack3: 0x33,
        };
        let p = button.to_payload();
        assert_eq!(p, [0x1A, 0x10, 0x08, 0x2A, 0x00, 0x33, 0x00]);
        assert_eq!(ClockAck::from_payload(p), button);
        assert_eq!(button.button(), Some(ClockButton::Run));
        assert_eq!(button.command(), None);
        assert_eq!(button.event(), Some(0x88));

        // Every byte value round-trips through the formula.
        for v in 0..=255u8 {
            let a = ClockAck {
                ack0: v,
                ack1: v.rotate_left(1),
                ack2: v.rotate_left(2),
                ack3: v.rotate_left(3),
            };
            assert_eq!(ClockAck::from_payload(a.to_payload()), a);
        }
    }

    #[test]
    fn ack_detected_from_either_side() {
        assert!(ClockAck::is_ack_payload(&[0x0A, 0, 0, 0, 0, 0, 0]));
        assert!(ClockAck::is_ack_payload(&[0, 0, 0, 0x3A, 0, 0, 0]));
        let err = ClockAck::from_payload([0x0A, 0x40, 0x0A, 0x0A, 0, 0, 0]);
        assert!(err.is_error());
        assert_eq!(err.command(), Some(0x0A));
        assert!(ClockAck::from_payload([0x0A, 0x10, 0x01, 0x2A, 0, 0, 0]).is_ready());
        assert!(ClockAck::from_payload([0x0A, 0x10, 0x10, 0x2A, 0, 0, 0]).is_not_in_mode_23());
    }
}
