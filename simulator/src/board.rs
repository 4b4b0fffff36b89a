//! VirtualBoard: answers host commands like a DGT board (§3 of the protocol notes).

use std::time::Duration;

use boardcast_protocol::{
    Battery, ClockAck, ClockCommand, Command, CommandDecoder, EeRecord, Message, RawBoard,
    SquareIndex,
};

use crate::clock::{Clock, ClockConfig, no_clock_times};
use crate::rng::Rng;

/// The board's reporting mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing is sent unasked.
    Idle,
    /// Field updates plus a clock message at least once a second (0x43).
    Update,
    /// Field updates only (0x44).
    UpdateBoard,
    /// Field updates plus clock messages when they change (0x4B).
    UpdateNice,
}

impl Mode {
    /// Field updates are sent in this mode.
    pub fn sends_updates(self) -> bool {
        self != Mode::Idle
    }

    /// Clock acks are sent in this mode.
    pub fn sends_acks(self) -> bool {
        matches!(self, Mode::Update | Mode::UpdateNice)
    }
}

/// What the board says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// 5-digit serial number (0x91); also gives the bus address.
    pub serial: String,
    /// 10-character long serial number (0xA2).
    pub long_serial: String,
    /// Firmware version (0x93). Never 1.0 for a classic board (1.0 means Pegasus).
    pub version: (u8, u8),
    /// Trademark text (0x92).
    pub trademark: String,
    /// Battery charge in percent (0xA0).
    pub battery_percent: u8,
}

impl Identity {
    /// A classic board, or a Pegasus-like one (version 1.0) when `occupancy_only`.
    pub fn new(occupancy_only: bool) -> Self {
        Self {
            serial: "01025".into(),
            long_serial: "3.10001025".into(),
            version: if occupancy_only { (1, 0) } else { (1, 2) },
            trademark: "Digital Game Technology\r\nCopyright (c) 2024 boardcast virtual board\r\n"
                .into(),
            battery_percent: 87,
        }
    }

    /// The bus address: the serial's digits as a number, in 14 bits ("01025" → `08 01`).
    pub fn bus_address(&self) -> u16 {
        let digits: String = self.serial.chars().filter(char::is_ascii_digit).collect();
        (digits.parse::<u32>().unwrap_or(0) & 0x3FFF) as u16
    }
}

/// The command side of the board: modes, identity, the optional clock and its acks.
#[derive(Debug)]
pub struct VirtualBoard {
    identity: Identity,
    mode: Mode,
    decoder: CommandDecoder,
    clock: Option<Clock>,
    acks: Vec<(Duration, ClockAck)>,
    rng: Rng,
    /// Next once-a-second BWTIME in UPDATE mode.
    next_tick: Option<Duration>,
    /// Last BWTIME payload sent in UPDATE_NICE mode.
    last_nice: Option<[u8; 7]>,
    /// LED commands received (square ranges), for inspection.
    leds: Vec<Command>,
}

impl VirtualBoard {
    /// A board in IDLE mode, with or without a clock.
    pub fn new(identity: Identity, clock: Option<ClockConfig>, rng: Rng) -> Self {
        Self {
            identity,
            mode: Mode::Idle,
            decoder: CommandDecoder::default(),
            clock: clock.map(Clock::new),
            acks: Vec::new(),
            rng,
            next_tick: None,
            last_nice: None,
            leds: Vec::new(),
        }
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The attached clock, if any.
    pub fn clock_mut(&mut self) -> Option<&mut Clock> {
        self.clock.as_mut()
    }

    /// LED commands received so far.
    pub fn leds(&self) -> &[Command] {
        &self.leds
    }

    /// Feed host bytes at `now`; replies are appended to `out`. `dump` is the last scan.
    pub fn receive(&mut self, bytes: &[u8], now: Duration, dump: &[u8; 64], out: &mut Vec<u8>) {
        self.decoder.feed(bytes);
        while let Some(cmd) = self.decoder.poll() {
            self.execute(cmd, now, dump, out);
        }
    }

    fn execute(&mut self, cmd: Command, now: Duration, dump: &[u8; 64], out: &mut Vec<u8>) {
        let reply = match cmd {
            Command::Reset => {
                self.set_mode(Mode::Idle, now);
                None
            }
            Command::SendUpdate => {
                self.set_mode(Mode::Update, now);
                None
            }
            Command::SendUpdateBoard => {
                self.set_mode(Mode::UpdateBoard, now);
                None
            }
            Command::SendUpdateNice => {
                self.set_mode(Mode::UpdateNice, now);
                None
            }
            Command::SendBoard => Some(Message::BoardDump(RawBoard(*dump))),
            Command::SendClock => Some(Message::ClockTime(self.times(now))),
            Command::SerialNumber => Some(Message::SerialNumber(self.identity.serial.clone())),
            Command::LongSerialNumber => {
                Some(Message::LongSerialNumber(self.identity.long_serial.clone()))
            }
            Command::Version => Some(Message::Version {
                major: self.identity.version.0,
                minor: self.identity.version.1,
            }),
            Command::Trademark => Some(Message::Trademark(self.identity.trademark.clone())),
            Command::BusAddress => Some(Message::BusAddress(self.identity.bus_address())),
            Command::BatteryStatus => Some(Message::BatteryStatus(Battery::new(
                self.identity.battery_percent,
                false,
            ))),
            Command::EeMoves => Some(Message::EeMoves(ee_log(dump))),
            Command::SetLeds { .. } => {
                tracing::debug!(?cmd, "LED command");
                if self.leds.len() < 1024 {
                    self.leds.push(cmd);
                }
                None
            }
            Command::Clock(clock_cmd) => {
                self.clock_command(clock_cmd, now);
                None
            }
            _ => None,
        };
        if let Some(msg) = reply {
            msg.encode_into(out);
        }
    }

    /// The board lost power (unplugged): it forgets its mode and any half-received
    /// command, as hardware does; the clock, powered separately, runs on.
    pub fn power_off(&mut self) {
        self.mode = Mode::Idle;
        self.decoder = CommandDecoder::default();
        self.next_tick = None;
        self.last_nice = None;
        self.acks.clear();
    }

    fn set_mode(&mut self, mode: Mode, now: Duration) {
        self.mode = mode;
        self.next_tick = (mode == Mode::Update).then_some(now + Duration::from_secs(1));
        self.last_nice = None;
        if mode == Mode::UpdateNice {
            // Report the current reading once, then only changes.
            self.next_tick = Some(now);
        }
    }

    fn clock_command(&mut self, cmd: ClockCommand, now: Duration) {
        let Some(clock) = self.clock.as_mut() else {
            return;
        };
        if let ClockCommand::SetAndRun { left, right, flags } = cmd {
            clock.set_and_run(now, left, right, flags);
        }
        if !self.mode.sends_acks() {
            return;
        }
        let ack = match cmd {
            ClockCommand::Version => {
                let (major, minor) = clock.config().version;
                ClockAck::version_reply(major, minor)
            }
            other => ClockAck::for_command(other.id()),
        };
        let due = now + self.rng.millis(50, 300);
        let pos = self.acks.partition_point(|(t, _)| *t <= due);
        self.acks.insert(pos, (due, ack));
    }

    /// The clock reading at `now` (the "no clock" reading without a clock).
    pub fn times(&self, now: Duration) -> boardcast_protocol::ClockTimes {
        match &self.clock {
            Some(c) => c.times(now),
            None => no_clock_times(),
        }
    }

    /// The clock state changed (lever press, start): UPDATE_NICE reports it at once.
    pub fn clock_changed(&mut self, now: Duration) {
        if self.mode == Mode::UpdateNice {
            self.next_tick = Some(now);
        }
    }

    /// When the board next sends something by itself (clock messages, acks).
    pub fn next_due(&self, now: Duration) -> Option<Duration> {
        let ack = self.acks.first().map(|(t, _)| *t);
        let tick = match self.mode {
            Mode::Update => self.next_tick,
            Mode::UpdateNice => {
                let change = self.clock.as_ref().and_then(|c| c.next_change(now));
                [self.next_tick, change].into_iter().flatten().min()
            }
            _ => None,
        };
        [ack, tick].into_iter().flatten().min()
    }

    /// Send whatever is due at `now` (call at the times given by [`Self::next_due`]).
    pub fn run_due(&mut self, now: Duration, out: &mut Vec<u8>) {
        while let Some(&(t, ack)) = self.acks.first() {
            if t > now {
                break;
            }
            self.acks.remove(0);
            if self.mode.sends_acks() {
                Message::ClockAck(ack).encode_into(out);
            }
        }
        match self.mode {
            Mode::Update => {
                if let Some(tick) = self.next_tick.filter(|t| *t <= now) {
                    Message::ClockTime(self.times(now)).encode_into(out);
                    let mut next = tick + Duration::from_secs(1);
                    while next <= now {
                        next += Duration::from_secs(1);
                    }
                    self.next_tick = Some(next);
                }
            }
            Mode::UpdateNice => {
                self.next_tick = self.next_tick.filter(|t| *t > now);
                let times = self.times(now);
                let payload = times.to_payload();
                if self.last_nice != Some(payload) {
                    self.last_nice = Some(payload);
                    Message::ClockTime(times).encode_into(out);
                }
            }
            _ => {}
        }
    }

    /// A field update for hardware index `index`, sent only in update modes.
    pub fn field_update(&self, index: u8, code: u8, out: &mut Vec<u8>) {
        if self.mode.sends_updates()
            && let Some(square) = SquareIndex::new(index)
        {
            Message::FieldUpdate { square, code }.encode_into(out);
        }
    }
}

/// A minimal valid EEPROM log: three NOPs, POWERUP, one placement per piece, EOF.
pub fn ee_log(dump: &[u8; 64]) -> Vec<EeRecord> {
    let mut records = vec![
        EeRecord::Nop,
        EeRecord::Nop,
        EeRecord::Nop,
        EeRecord::PowerUp,
    ];
    for (i, &code) in dump.iter().enumerate() {
        if code != 0
            && let Some(square) = SquareIndex::new(i as u8)
        {
            {
                records.push(EeRecord::FieldChange {
                    code,
                    square,
                    quick: false,
                });
            }
        }
    }
    records.push(EeRecord::Eof);
    records
}
