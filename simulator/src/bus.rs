//! Bus mode (§1.9): a chain of virtual boards sharing one serial line. Each board has its
//! own serial number (and so bus address), its own scripted game and handling, and
//! answers the bus commands addressed to it; a broadcast ping is answered after a random
//! delay within 1.1 s. Changes are kept as EEPROM records until the host asks for them
//! (SEND_CHANGES), and the last packet is kept for REPEAT_CHANGES. Like a real board, a
//! board starts in bus mode and switches to single-board mode on the first single-board
//! command, and back on any bus command (which is then not executed).
//!
//! Faults for testing the host: a reply's checksum corrupted now and then, and a board
//! that goes silent (stops answering anything) some time after it was first polled.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use boardcast_protocol::{
    BusAddress, BusCommand, BusCommandDecoder, BusCommandKind, BusInput, BusMessage, BusReply,
    EeRecord, SquareIndex,
};

use crate::board::{Identity, ee_log};
use crate::config::SimConfig;
use crate::error::SimError;
use crate::pty::{BarePty, Device, RunnerThread, lock, spawn_runner};
use crate::rng::Rng;
use crate::script::Script;
use crate::sim::{MoveReport, Simulation};

/// A broadcast ping is answered within this long (§1.9).
const PING_WINDOW_MS: u64 = 1100;
/// Usual reply latency of a board, in milliseconds (§1.9: "a few ms").
const REPLY_MS: (u64, u64) = (2, 6);
/// START_GAME_WRITTEN comes about this long after SET_START_GAME.
const START_GAME_WRITE: Duration = Duration::from_millis(70);
/// A BUS_RESET keeps the board busy this long.
const RESET_TIME: Duration = Duration::from_secs(2);
/// Two change records closer than this are marked "quick" (§1.10).
const QUICK: Duration = Duration::from_millis(250);
/// Change records kept unasked (the EEPROM is a cyclic buffer of 0x1F00 bytes, two bytes
/// a record); older ones are overwritten.
const MAX_PENDING: usize = 0x1F00 / 2;

/// One board of a chain.
#[derive(Clone, Debug)]
pub struct BusBoardConfig {
    /// The simulation settings; the identity's serial number gives the bus address.
    pub sim: SimConfig,
    /// The game it plays.
    pub script: Script,
    /// Probability that a reply goes out with a corrupted checksum.
    pub checksum_faults: f64,
    /// Stop answering anything this long after the first poll (the game goes on).
    pub silent_after: Option<Duration>,
    /// Switched on this long after the chain started: before that it hears and
    /// answers nothing, like a board still off (then a later broadcast ping finds it).
    pub switched_on_at: Option<Duration>,
}

impl BusBoardConfig {
    /// A board with serial number `serial` (and so its bus address) playing `script`
    /// under `sim`, without faults: every reply sound, never silent, on from the start.
    pub fn new(sim: SimConfig, serial: impl Into<String>, script: Script) -> Self {
        let identity = Identity {
            serial: serial.into(),
            ..Identity::new(sim.occupancy_only)
        };
        BusBoardConfig {
            sim: SimConfig {
                identity: Some(identity),
                ..sim
            },
            script,
            checksum_faults: 0.0,
            silent_after: None,
            switched_on_at: None,
        }
    }
}

/// One virtual board in bus mode.
#[derive(Debug)]
pub struct BusBoard {
    sim: Simulation,
    identity: Identity,
    address: BusAddress,
    bus_mode: bool,
    decoder: BusCommandDecoder,
    /// Changes since the last SEND_CHANGES, as EEPROM records.
    pending: VecDeque<EeRecord>,
    last_change: Option<Duration>,
    /// The last BUS_UPDATE packet, for REPEAT_CHANGES.
    last_packet: Vec<EeRecord>,
    ignore_next_ping: bool,
    /// Replies waiting for their send time, in time order.
    replies: VecDeque<(Duration, Vec<u8>)>,
    rng: Rng,
    checksum_faults: f64,
    silent_after: Option<Duration>,
    switched_on_at: Duration,
    first_poll: Option<Duration>,
    busy_until: Duration,
}

impl BusBoard {
    /// A board in bus mode (its power-up state) that starts its game when first polled.
    pub fn new(config: BusBoardConfig) -> Self {
        let identity = config
            .sim
            .identity
            .clone()
            .unwrap_or_else(|| Identity::new(config.sim.occupancy_only));
        let address = BusAddress::new(identity.bus_address());
        let rng = Rng::stream(config.sim.seed, 7);
        let mut sim = Simulation::new(config.sim, config.script);
        sim.log_scan_changes();
        let mut pending = VecDeque::new();
        power_up_records(&sim.scanned().0, &mut pending);
        BusBoard {
            sim,
            identity,
            address,
            bus_mode: true,
            decoder: BusCommandDecoder::new(),
            pending,
            last_change: None,
            last_packet: Vec::new(),
            ignore_next_ping: false,
            replies: VecDeque::new(),
            rng,
            checksum_faults: config.checksum_faults.clamp(0.0, 1.0),
            silent_after: config.silent_after,
            switched_on_at: config.switched_on_at.unwrap_or_default(),
            first_poll: None,
            busy_until: Duration::ZERO,
        }
    }

    /// The board's bus address.
    pub fn address(&self) -> BusAddress {
        self.address
    }

    /// Whether the board is in bus mode (else single-board mode).
    pub fn in_bus_mode(&self) -> bool {
        self.bus_mode
    }

    /// The simulation (game, scanner, clock).
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// Whether the board has gone silent by `now`.
    pub fn is_silent(&self, now: Duration) -> bool {
        matches!((self.first_poll, self.silent_after), (Some(t), Some(after)) if now >= t + after)
    }

    /// Host bytes (the whole line's traffic) arrived at `now`.
    pub fn receive(&mut self, bytes: &[u8], now: Duration) {
        self.collect(now);
        if self.is_silent(now) || now < self.switched_on_at {
            return;
        }
        self.decoder.feed(bytes);
        while let Some(input) = self.decoder.poll() {
            match input {
                BusInput::Single(byte) => {
                    if self.bus_mode {
                        tracing::debug!(address = %self.address, "single-board command: leaving bus mode");
                        self.bus_mode = false;
                    }
                    self.sim.receive(&[byte], now);
                }
                BusInput::Command(cmd) if !self.bus_mode => {
                    // §1.9: a bus command switches back to bus mode and is not executed.
                    tracing::debug!(address = %self.address, ?cmd, "bus command: back to bus mode");
                    self.bus_mode = true;
                }
                BusInput::Command(cmd) => self.execute(cmd, now),
                BusInput::BadChecksum { .. } | BusInput::Dropped { .. } => {}
            }
        }
    }

    /// Runs the board up to `now`; returns what it sends, with send times.
    pub fn advance(&mut self, now: Duration) -> Vec<(Duration, Vec<u8>)> {
        let mut out = Vec::new();
        let single = self.collect(now);
        let silent = self.is_silent(now);
        if !single.is_empty() && !silent {
            out.push((now, single));
        }
        while self.replies.front().is_some_and(|(t, _)| *t <= now) {
            if let Some((t, bytes)) = self.replies.pop_front()
                && !silent
            {
                out.push((t, bytes));
            }
        }
        out
    }

    /// When the board next has something to do.
    pub fn next_wakeup(&self) -> Option<Duration> {
        [
            self.sim.next_wakeup(),
            self.replies.front().map(|(t, _)| *t),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The next completed move.
    pub fn poll_report(&mut self) -> Option<MoveReport> {
        self.sim.poll_report()
    }

    /// Runs the simulation to `now`, turning scan changes into change records; returns
    /// the single-board-mode output.
    fn collect(&mut self, now: Duration) -> Vec<u8> {
        let single = self.sim.advance(now);
        for (at, index, code) in self.sim.take_scan_changes() {
            let Some(square) = SquareIndex::new(index) else {
                continue;
            };
            let quick = self.last_change.is_some_and(|t| at < t + QUICK);
            self.last_change = Some(at);
            self.push_pending(EeRecord::FieldChange {
                code,
                square,
                quick,
            });
        }
        single
    }

    fn push_pending(&mut self, record: EeRecord) {
        if self.pending.len() >= MAX_PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back(record);
    }

    fn execute(&mut self, cmd: BusCommand, now: Duration) {
        let broadcast_ping = cmd.address.is_broadcast() && cmd.kind == BusCommandKind::Ping;
        if (cmd.address != self.address && !broadcast_ping) || now < self.busy_until {
            return;
        }
        if matches!(
            cmd.kind,
            BusCommandKind::SendBoard | BusCommandKind::SendChanges | BusCommandKind::RepeatChanges
        ) && self.first_poll.is_none()
        {
            self.first_poll = Some(now);
            self.sim.host_started(now);
        }
        let delay = self.rng.millis(REPLY_MS.0, REPLY_MS.1);
        let messages = match cmd.kind {
            BusCommandKind::Ping if broadcast_ping => {
                if std::mem::take(&mut self.ignore_next_ping) {
                    return;
                }
                let delay = self.rng.millis(0, PING_WINDOW_MS);
                return self.reply_at(now + delay, BusMessage::Ping);
            }
            BusCommandKind::Ping => vec![BusMessage::Ping],
            BusCommandKind::IgnoreNextPing => {
                self.ignore_next_ping = true;
                vec![BusMessage::Ping]
            }
            BusCommandKind::SendClock => vec![BusMessage::ClockTime(self.sim.clock_times())],
            BusCommandKind::SendBoard => vec![BusMessage::BoardDump(self.sim.scanned())],
            BusCommandKind::SendChanges => vec![self.take_changes()],
            BusCommandKind::RepeatChanges => vec![BusMessage::Update(self.last_packet.clone())],
            BusCommandKind::SendFromStart => {
                vec![BusMessage::FromStart(ee_log(&self.sim.scanned().0))]
            }
            BusCommandKind::SetStartGame => {
                self.push_pending(EeRecord::StartTag);
                for record in placements(&self.sim.scanned().0) {
                    self.push_pending(record);
                }
                return self.reply_at(now + START_GAME_WRITE, BusMessage::StartGameWritten);
            }
            BusCommandKind::SendVersion => {
                vec![BusMessage::Version(Some(self.identity.version))]
            }
            BusCommandKind::SendAllD => vec![
                self.take_changes(),
                BusMessage::ClockTime(self.sim.clock_times()),
                BusMessage::BoardDump(self.sim.scanned()),
            ],
            BusCommandKind::EndBusMode => {
                self.bus_mode = false;
                vec![]
            }
            BusCommandKind::Reset => {
                self.busy_until = now + RESET_TIME;
                self.ignore_next_ping = false;
                self.pending.clear();
                power_up_records(&self.sim.scanned().0, &mut self.pending);
                vec![]
            }
            BusCommandKind::SendBoard50B => vec![],
        };
        for message in messages {
            self.reply_at(now + delay, message);
        }
    }

    fn take_changes(&mut self) -> BusMessage {
        self.last_packet = self.pending.drain(..).collect();
        BusMessage::Update(self.last_packet.clone())
    }

    fn reply_at(&mut self, at: Duration, message: BusMessage) {
        let mut bytes = BusReply {
            address: self.address,
            message,
        }
        .encode();
        if self.rng.chance(self.checksum_faults)
            && let Some(sum) = bytes.last_mut()
        {
            let flip = self.rng.range(1, 0x7F) as u8;
            *sum ^= flip;
        }
        let pos = self.replies.partition_point(|(t, _)| *t <= at);
        self.replies.insert(pos, (at, bytes));
    }
}

/// Placement records for every piece on `dump`.
fn placements(dump: &[u8; 64]) -> impl Iterator<Item = EeRecord> + '_ {
    dump.iter().enumerate().filter_map(|(i, &code)| {
        let square = SquareIndex::new(u8::try_from(i).ok()?)?;
        (code != 0).then_some(EeRecord::FieldChange {
            code,
            square,
            quick: false,
        })
    })
}

/// What a board writes at power-up (§1.10): three NOPs, POWERUP, a placement per piece.
fn power_up_records(dump: &[u8; 64], out: &mut VecDeque<EeRecord>) {
    out.extend([
        EeRecord::Nop,
        EeRecord::Nop,
        EeRecord::Nop,
        EeRecord::PowerUp,
    ]);
    out.extend(placements(dump));
}

/// Several bus boards on one line: every board hears every byte, and their replies share
/// the line in time order.
#[derive(Debug)]
pub struct BusChain {
    boards: Vec<BusBoard>,
}

impl BusChain {
    /// A chain of these boards.
    pub fn new(configs: Vec<BusBoardConfig>) -> Self {
        BusChain {
            boards: configs.into_iter().map(BusBoard::new).collect(),
        }
    }

    /// The boards, in chain order.
    pub fn boards(&self) -> &[BusBoard] {
        &self.boards
    }
}

impl BusChain {
    /// Host bytes arrived at `now`: every board hears them.
    pub fn receive(&mut self, bytes: &[u8], now: Duration) {
        for board in &mut self.boards {
            board.receive(bytes, now);
        }
    }

    /// Runs every board up to `now`; returns what they send, in time order.
    pub fn advance(&mut self, now: Duration) -> Vec<u8> {
        let mut sends: Vec<(Duration, Vec<u8>)> = self
            .boards
            .iter_mut()
            .flat_map(|b| b.advance(now))
            .collect();
        sends.sort_by_key(|(t, _)| *t);
        sends.into_iter().flat_map(|(_, bytes)| bytes).collect()
    }

    /// When some board next has something to do.
    pub fn next_wakeup(&self) -> Option<Duration> {
        self.boards.iter().filter_map(BusBoard::next_wakeup).min()
    }

    /// The next completed move, with the board's index.
    pub fn poll_report(&mut self) -> Option<(usize, MoveReport)> {
        self.boards
            .iter_mut()
            .enumerate()
            .find_map(|(i, b)| b.poll_report().map(|r| (i, r)))
    }
}

impl Device for BusChain {
    type Report = (usize, MoveReport);

    fn receive(&mut self, bytes: &[u8], now: Duration) {
        BusChain::receive(self, bytes, now);
    }

    fn advance(&mut self, now: Duration) -> Vec<u8> {
        BusChain::advance(self, now)
    }

    fn next_wakeup(&self) -> Option<Duration> {
        BusChain::next_wakeup(self)
    }

    fn poll_report(&mut self) -> Option<(usize, MoveReport)> {
        BusChain::poll_report(self)
    }

    fn ply((_, report): &(usize, MoveReport)) -> u32 {
        report.ply
    }
}

/// A chain of virtual bus boards on one pseudo-terminal, running on its own thread.
pub struct BusPty {
    path: PathBuf,
    reports: Receiver<(usize, MoveReport)>,
    chain: Arc<Mutex<BusChain>>,
    runner: RunnerThread,
}

/// Opens a pseudo-terminal and runs a chain of these boards on it in real time.
pub fn spawn_bus_on_pty(boards: Vec<BusBoardConfig>) -> Result<BusPty, SimError> {
    let pty = BarePty::open()?.non_blocking()?;
    let chain = Arc::new(Mutex::new(BusChain::new(boards)));
    let (tx, reports) = mpsc::channel();
    let path = pty.path.clone();
    let runner = spawn_runner(pty, Arc::clone(&chain), tx)?;
    Ok(BusPty {
        path,
        reports,
        chain,
        runner,
    })
}

impl BusPty {
    /// The slave device for the daemon to open.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Completed moves, with the board's index in the chain.
    pub fn reports(&self) -> &Receiver<(usize, MoveReport)> {
        &self.reports
    }

    /// The boards' bus addresses, in chain order.
    pub fn addresses(&self) -> Vec<BusAddress> {
        lock(&self.chain)
            .boards
            .iter()
            .map(BusBoard::address)
            .collect()
    }

    /// Whether board `index`'s game is over and the board stands still.
    pub fn board_finished(&self, index: usize) -> bool {
        lock(&self.chain)
            .boards
            .get(index)
            .is_some_and(|b| b.simulation().is_finished())
    }

    /// Whether every board's game is over.
    pub fn is_finished(&self) -> bool {
        lock(&self.chain)
            .boards
            .iter()
            .all(|b| b.simulation().is_finished())
    }

    /// Stops the runner and closes the pseudo-terminal (as dropping the chain does).
    pub fn stop(self) {
        drop(self.runner);
    }
}

impl std::fmt::Debug for BusPty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusPty")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use boardcast_protocol::{BusDecoded, BusDecoder};

    use super::*;

    fn board(serial: &str, faults: f64) -> BusBoard {
        let sim = SimConfig {
            speed: 2.0,
            ..SimConfig::default()
        };
        let script = Script::from_fen_and_san(None, &["e4", "e5"]).expect("script");
        BusBoard::new(BusBoardConfig {
            checksum_faults: faults,
            ..BusBoardConfig::new(sim, serial, script)
        })
    }

    fn ask(chain: &mut BusChain, kind: BusCommandKind, address: u16, now: Duration) {
        chain.receive(
            &BusCommand::new(kind, BusAddress::new(address)).encode(),
            now,
        );
    }

    fn replies(chain: &mut BusChain, now: Duration) -> Vec<BusDecoded> {
        let mut d = BusDecoder::new();
        d.feed(&chain.advance(now));
        std::iter::from_fn(|| d.poll()).collect()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn addressed_boards_answer_and_broadcast_pings_come_within_the_window() {
        let mut chain = BusChain {
            boards: vec![board("01025", 0.0), board("01026", 0.0)],
        };
        ask(&mut chain, BusCommandKind::Ping, 0, ms(0));
        let pings = replies(&mut chain, ms(PING_WINDOW_MS + 10));
        let mut from: Vec<u16> = pings
            .iter()
            .map(|d| match d {
                BusDecoded::Reply(BusReply {
                    address,
                    message: BusMessage::Ping,
                }) => address.value(),
                other => panic!("{other:?}"),
            })
            .collect();
        from.sort_unstable();
        assert_eq!(from, [1025, 1026]);
        ask(&mut chain, BusCommandKind::SendVersion, 1026, ms(1200));
        assert_eq!(
            replies(&mut chain, ms(1210)),
            [BusDecoded::Reply(BusReply {
                address: BusAddress::new(1026),
                message: BusMessage::Version(Some((1, 2)))
            })]
        );
        // Told to ignore the next broadcast ping, board 1025 answers with a ping now and
        // stays quiet at the next broadcast.
        ask(&mut chain, BusCommandKind::IgnoreNextPing, 1025, ms(1300));
        assert_eq!(replies(&mut chain, ms(1310)).len(), 1);
        ask(&mut chain, BusCommandKind::Ping, 0, ms(1400));
        assert!(matches!(
            replies(&mut chain, ms(2600)).as_slice(),
            [BusDecoded::Reply(BusReply { address, .. })] if address.value() == 1026
        ));
    }

    #[test]
    fn changes_are_reported_once_and_repeated_on_request() {
        let mut chain = BusChain {
            boards: vec![board("01025", 0.0)],
        };
        // The first request returns the power-up log, and starts the game.
        ask(&mut chain, BusCommandKind::SendChanges, 1025, ms(0));
        let Some(BusDecoded::Reply(first)) = replies(&mut chain, ms(10)).pop() else {
            panic!("no reply");
        };
        assert!(matches!(&first.message, BusMessage::Update(r) if r.contains(&EeRecord::PowerUp)));
        // Let both moves be played, then collect every change.
        let mut changes = Vec::new();
        let mut now = ms(20);
        while now < Duration::from_secs(30) {
            ask(&mut chain, BusCommandKind::SendChanges, 1025, now);
            if let Some(BusDecoded::Reply(BusReply {
                message: BusMessage::Update(records),
                ..
            })) = replies(&mut chain, now + ms(10)).pop()
            {
                changes.extend(records);
            }
            now += ms(100);
        }
        let mut board = chain.boards[0].simulation().scanned();
        let mut replayed = boardcast_protocol::RawBoard::start_position();
        for r in &changes {
            if let EeRecord::FieldChange { code, square, .. } = r {
                replayed.set(*square, *code);
            }
        }
        assert_eq!(replayed, board);
        assert_ne!(board, boardcast_protocol::RawBoard::start_position());
        // REPEAT_CHANGES resends the last packet; SEND_CHANGES now has nothing new.
        ask(&mut chain, BusCommandKind::RepeatChanges, 1025, now);
        let repeated = replies(&mut chain, now + ms(10));
        ask(
            &mut chain,
            BusCommandKind::RepeatChanges,
            1025,
            now + ms(20),
        );
        assert_eq!(replies(&mut chain, now + ms(30)), repeated);
        ask(&mut chain, BusCommandKind::SendBoard, 1025, now + ms(40));
        board = chain.boards[0].simulation().scanned();
        assert_eq!(
            replies(&mut chain, now + ms(50)),
            [BusDecoded::Reply(BusReply {
                address: BusAddress::new(1025),
                message: BusMessage::BoardDump(board)
            })]
        );
    }

    #[test]
    fn single_board_command_leaves_bus_mode_and_a_bus_command_returns_unexecuted() {
        let mut chain = BusChain {
            boards: vec![board("01025", 0.0)],
        };
        chain.receive(&[0x4D], ms(0));
        assert!(!chain.boards[0].in_bus_mode());
        assert_eq!(chain.advance(ms(1)), [0x93, 0x00, 0x05, 1, 2]);
        ask(&mut chain, BusCommandKind::SendVersion, 1025, ms(2));
        assert!(chain.boards[0].in_bus_mode());
        assert!(chain.advance(ms(20)).is_empty());
        ask(&mut chain, BusCommandKind::SendVersion, 1025, ms(30));
        assert_eq!(replies(&mut chain, ms(40)).len(), 1);
    }

    #[test]
    fn faults_corrupt_checksums_and_silent_boards_say_nothing() {
        let mut chain = BusChain {
            boards: vec![board("01025", 1.0)],
        };
        ask(&mut chain, BusCommandKind::SendVersion, 1025, ms(0));
        assert!(matches!(
            replies(&mut chain, ms(10)).as_slice(),
            [BusDecoded::ChecksumError { .. }]
        ));
        let mut quiet = board("01026", 0.0);
        quiet.silent_after = Some(ms(100));
        let mut chain = BusChain {
            boards: vec![quiet],
        };
        ask(&mut chain, BusCommandKind::SendChanges, 1026, ms(0));
        assert_eq!(replies(&mut chain, ms(10)).len(), 1);
        ask(&mut chain, BusCommandKind::SendChanges, 1026, ms(200));
        assert!(replies(&mut chain, ms(300)).is_empty());
        // A board switched on late answers nothing before, like one still off.
        let mut late = board("01027", 0.0);
        late.switched_on_at = ms(500);
        let mut chain = BusChain { boards: vec![late] };
        ask(&mut chain, BusCommandKind::SendVersion, 1027, ms(0));
        assert!(replies(&mut chain, ms(100)).is_empty());
        ask(&mut chain, BusCommandKind::SendVersion, 1027, ms(600));
        assert_eq!(replies(&mut chain, ms(700)).len(), 1);
    }
}
