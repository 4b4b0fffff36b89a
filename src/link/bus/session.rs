//! The bus link protocol, sans-IO (§1.9): discovery by broadcast ping, one request at a
//! time on the shared line, round-robin polling of every board with SEND_CHANGES, and
//! the recovery rules. Time is passed in; nothing here touches a port or a clock.
//!
//! Nothing is lost: after a checksum error or a timeout on a SEND_CHANGES the next
//! request to that board is REPEAT_CHANGES (the board keeps its last packet), until one
//! arrives whole. A repeated packet that was in fact already applied only sets squares to
//! the values they have, so a duplicate is harmless while a loss would not be.
//!
//! No board waits for another beyond one reply timeout: a board that times out twice in a
//! row is polled only once per `trouble_poll`, so a silent board costs the line at most
//! one timeout per that period, and the others go on being polled in between. A board
//! whose replies arrive garbled is asked again at once (round-robin with the others).
//!
//! Clocks: a bus board does not send clock readings by itself, so every board is asked
//! for one (SEND_CLK) once per `clock_poll`, in place of one SEND_CHANGES; a board that
//! answers that no clock is attached (or does not answer) is asked once per
//! `no_clock_poll`, so a clock plugged in later is found without costing the line.
//!
//! The same session replays a recording of the line (`boardcast replay`): the recorded
//! requests are given to it with `observe` instead of it choosing its own, and `expire`
//! runs its timers, so the boards get exactly the messages the live daemon gave them.

use std::collections::VecDeque;
use std::time::Duration;

use boardcast_protocol::{
    BusAddress, BusCommand, BusCommandKind, BusDecoded, BusDecoder, BusMessage, EeRecord, Message,
};

use crate::link::session::LinkState;
use crate::recording::BusTiming;

/// Every board answers a broadcast ping within this long (§1.9).
const PING_WINDOW: Duration = Duration::from_millis(1100);

/// Timing of the bus protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct BusConfig {
    /// Wait after opening before the first command.
    pub startup_delay: Duration,
    /// A reply that has not started, or has stopped arriving, for this long is lost
    /// (the reference suggests 80 ms).
    pub reply_timeout: Duration,
    /// Shortest time between two polls of one board.
    pub poll_interval: Duration,
    /// Broadcast ping this often to find boards that joined late (or came back after a
    /// reset), and this often while no board has been found at all.
    pub ping_interval: Duration,
    /// The first broadcast ping is repeated after this long while no board has answered.
    pub search_interval: Duration,
    /// How often a board that keeps failing is tried.
    pub trouble_poll: Duration,
    /// A board with no valid answer for this long is not responding.
    pub silence_timeout: Duration,
    /// How often a board with a clock is asked for a reading (a single board in update
    /// mode sends one about once a second).
    pub clock_poll: Duration,
    /// How often a board without a clock is asked whether one is attached now.
    pub no_clock_poll: Duration,
}

impl Default for BusConfig {
    fn default() -> Self {
        BusConfig {
            startup_delay: Duration::from_millis(300),
            reply_timeout: Duration::from_millis(80),
            poll_interval: Duration::from_millis(40),
            ping_interval: Duration::from_secs(10),
            search_interval: Duration::from_secs(2),
            trouble_poll: Duration::from_secs(1),
            silence_timeout: Duration::from_secs(3),
            clock_poll: Duration::from_secs(1),
            no_clock_poll: Duration::from_secs(5),
        }
    }
}

/// A recorded line's session runs with the timing it was recorded with.
impl From<BusTiming> for BusConfig {
    fn from(timing: BusTiming) -> Self {
        BusConfig {
            silence_timeout: timing.silence_timeout,
            startup_delay: timing.startup_delay,
            ..BusConfig::default()
        }
    }
}

/// What the session tells its owner.
#[derive(Debug, Clone, PartialEq)]
pub enum BusEvent {
    /// A board answered a broadcast ping for the first time.
    Discovered(BusAddress),
    /// A board's firmware version (`None`: the short reply of firmware before 1.2).
    Version(BusAddress, Option<(u8, u8)>),
    /// A board's dump, field change or clock reading, as the single-board message a
    /// board core takes.
    Message(BusAddress, Message),
    /// A board answered (any frame), before the events its answer carries: hearing it
    /// proves the board at rest until then (see `JournaledCore::heard`).
    Heard(BusAddress),
    /// A board's link state changed.
    State(BusAddress, LinkState),
    /// A frame of this many bytes from this board (as far as its address can be trusted)
    /// failed its checksum.
    ChecksumError(BusAddress, usize),
    /// Bytes that were no frame at all (whose board is unknown).
    Garbage(usize),
}

/// One board on the bus.
#[derive(Debug)]
struct Peer {
    address: BusAddress,
    state: LinkState,
    last_answer: Duration,
    /// When it last answered in this session (`last_answer` starts at the open).
    heard: Option<Duration>,
    next_poll: Duration,
    failures: u32,
    /// The last SEND_CHANGES (or REPEAT) got no whole answer: ask for a repeat.
    unconfirmed: bool,
    /// The first changes packet holds history from before we were here: drop it.
    needs_flush: bool,
    needs_dump: bool,
    needs_version: bool,
    /// Tell it to ignore the coming broadcast ping.
    needs_ignore: bool,
    /// Its `Discovered` event has been sent (or was not needed).
    announced: bool,
    /// When to ask for a clock reading next.
    next_clock: Duration,
}

/// The request waiting for its reply.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    command: BusCommand,
    /// When it was sent, or the last byte arrived.
    progress: Duration,
}

/// The bus protocol state for one open port.
#[derive(Debug)]
pub struct BusSession {
    config: BusConfig,
    decoder: BusDecoder,
    peers: Vec<Peer>,
    in_flight: Option<InFlight>,
    next_ping: Duration,
    /// The boards have been told to ignore the coming broadcast ping.
    ping_prepared: bool,
    /// When the answers to the first broadcast ping are all in. The boards found by then
    /// are announced together in address order, so their board numbers follow their
    /// serial numbers; later boards are announced as they answer.
    first_window: Option<Duration>,
    /// The boards of the first window have been announced.
    released: bool,
    /// Round-robin position in `peers`.
    cursor: usize,
    transmit: VecDeque<BusCommand>,
    events: VecDeque<BusEvent>,
}

impl BusSession {
    /// A session for a port opened at `now`.
    pub fn new(config: BusConfig, now: Duration) -> Self {
        BusSession {
            next_ping: now + config.startup_delay,
            config,
            decoder: BusDecoder::new(),
            peers: Vec::new(),
            in_flight: None,
            ping_prepared: false,
            first_window: None,
            released: false,
            cursor: 0,
            transmit: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// A board known from before the port was lost and reopened: it is polled at once,
    /// and the changes it kept meanwhile are taken (a repeat first, in case the last
    /// packet was lost with the port), not dropped as history like a new board's.
    pub fn know(&mut self, address: BusAddress, now: Duration) {
        if self.peer_mut(address).is_some() {
            return;
        }
        self.peers.push(Peer {
            address,
            state: LinkState::Initialising,
            last_answer: now,
            heard: None,
            next_poll: now,
            failures: 0,
            unconfirmed: true,
            needs_flush: false,
            needs_dump: true,
            needs_version: false,
            needs_ignore: false,
            announced: true,
            next_clock: now,
        });
    }

    /// When the board at `address` last answered in this session, if it did: a board
    /// core told its link was lost takes what it read until then as standing.
    pub fn heard(&self, address: BusAddress) -> Option<Duration> {
        self.peers
            .iter()
            .find(|p| p.address == address)
            .and_then(|p| p.heard)
    }

    /// The boards found so far, in discovery order.
    pub fn addresses(&self) -> impl Iterator<Item = BusAddress> + '_ {
        self.peers.iter().map(|p| p.address)
    }

    /// Bytes from the line arrived at `now`.
    pub fn on_bytes(&mut self, bytes: &[u8], now: Duration) {
        if let Some(flight) = &mut self.in_flight
            && !bytes.is_empty()
        {
            flight.progress = now;
        }
        self.decoder.feed(bytes);
        while let Some(decoded) = self.decoder.poll() {
            match decoded {
                BusDecoded::Reply(reply) => self.on_reply(reply.address, reply.message, now),
                BusDecoded::ChecksumError { id, address, bytes } => {
                    let ours = self.in_flight.filter(|f| {
                        f.command.address == address || expected_id(f.command.kind) == Some(id)
                    });
                    if let Some(flight) = ours {
                        self.fail(flight.command, true, now);
                    }
                    let known = ours.map(|f| f.command.address).or_else(|| {
                        self.peers
                            .iter()
                            .any(|p| p.address == address)
                            .then_some(address)
                    });
                    match known {
                        Some(address) => self
                            .events
                            .push_back(BusEvent::ChecksumError(address, bytes)),
                        None => self.events.push_back(BusEvent::Garbage(bytes)),
                    }
                }
                BusDecoded::Garbage { bytes, reason } => {
                    tracing::debug!(bytes, ?reason, "bus: skipped bytes");
                    self.events.push_back(BusEvent::Garbage(bytes));
                }
            }
        }
    }

    /// Runs the timers at `now` and queues the next request if the line is free.
    pub fn tick(&mut self, now: Duration) {
        self.expire(now);
        if self.in_flight.is_none() && self.transmit.is_empty() {
            self.schedule(now);
        }
    }

    /// Runs the timers at `now` (reply timeouts, silence, the end of the first ping
    /// window) without choosing a request: for a replay, whose requests come from the
    /// recording.
    pub fn expire(&mut self, now: Duration) {
        if let Some(flight) = self.in_flight
            && now >= flight.progress + self.config.reply_timeout
        {
            tracing::debug!(address = %flight.command.address, kind = ?flight.command.kind, "bus: reply timeout");
            self.fail(flight.command, false, now);
        }
        for peer in &mut self.peers {
            if peer.state == LinkState::Responding
                && now >= peer.last_answer + self.config.silence_timeout
            {
                peer.state = LinkState::NotResponding;
                self.events
                    .push_back(BusEvent::State(peer.address, LinkState::NotResponding));
            }
        }
        if !self.released && self.first_window.is_some_and(|end| now >= end) {
            self.released = true;
            self.peers.sort_by_key(|p| p.address);
            for peer in self.peers.iter_mut().filter(|p| !p.announced) {
                peer.announced = true;
                peer.next_poll = now;
                self.events.push_back(BusEvent::Discovered(peer.address));
            }
        }
    }

    /// A request sent at `now` by someone else: a recording's, in a replay. The session
    /// takes it as its own. A request still waiting for its reply is taken as failed
    /// (the live session never sends while one is in flight, so it had given up on it),
    /// and a board addressed that the session has not seen answer a ping is known from
    /// now on (a recording cut out of a longer one).
    pub fn observe(&mut self, command: BusCommand, now: Duration) {
        if let Some(flight) = self.in_flight {
            self.fail(flight.command, false, now);
        }
        if !command.address.is_broadcast() {
            self.know(command.address, now);
        }
        self.track(command, now);
    }

    /// The next command to send; the caller sends it at once.
    pub fn poll_transmit(&mut self) -> Option<BusCommand> {
        self.transmit.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<BusEvent> {
        self.events.pop_front()
    }

    /// When `tick` next has work (a timeout, a poll or a ping falling due).
    pub fn next_deadline(&self) -> Duration {
        if let Some(flight) = &self.in_flight {
            return flight.progress + self.config.reply_timeout;
        }
        let polls = self.peers.iter().map(|p| p.next_poll);
        let silences = self
            .peers
            .iter()
            .filter(|p| p.state == LinkState::Responding)
            .map(|p| p.last_answer + self.config.silence_timeout);
        let window = self.first_window.filter(|_| !self.released);
        polls
            .chain(silences)
            .chain(window)
            .chain([self.next_ping])
            .min()
            .unwrap_or(self.next_ping)
    }

    /// Picks the next request: the broadcast ping when due (after telling every board
    /// that answers to ignore it, so only new ones reply), else the next board due.
    fn schedule(&mut self, now: Duration) {
        if now >= self.next_ping {
            let ignoring = self.peers.iter().any(|p| p.needs_ignore);
            if !ignoring && !self.ping_prepared {
                self.ping_prepared = true;
                for peer in &mut self.peers {
                    peer.needs_ignore = peer.state == LinkState::Responding;
                }
            }
            if !self.peers.iter().any(|p| p.needs_ignore) {
                self.ping_prepared = false;
                self.next_ping = now
                    + if self.peers.is_empty() {
                        self.config.search_interval
                    } else {
                        self.config.ping_interval
                    };
                self.send(
                    BusCommand::new(BusCommandKind::Ping, BusAddress::BROADCAST),
                    now,
                );
                return;
            }
        }
        let count = self.peers.len();
        for step in 0..count {
            let index = (self.cursor + step) % count;
            let peer = &self.peers[index];
            let due = peer.next_poll <= now || (peer.needs_ignore && now >= self.next_ping);
            if !due {
                continue;
            }
            let kind = if peer.needs_ignore && now >= self.next_ping {
                BusCommandKind::IgnoreNextPing
            } else if peer.needs_version {
                BusCommandKind::SendVersion
            } else if peer.unconfirmed {
                BusCommandKind::RepeatChanges
            } else if peer.needs_flush {
                BusCommandKind::SendChanges
            } else if peer.needs_dump {
                BusCommandKind::SendBoard
            } else if now >= peer.next_clock {
                BusCommandKind::SendClock
            } else {
                BusCommandKind::SendChanges
            };
            self.cursor = (index + 1) % count;
            self.send(BusCommand::new(kind, peer.address), now);
            return;
        }
    }

    fn send(&mut self, command: BusCommand, now: Duration) {
        self.track(command, now);
        self.transmit.push_back(command);
    }

    /// Waits for the reply to `command`, sent at `now`.
    fn track(&mut self, command: BusCommand, now: Duration) {
        // A broadcast ping has no single reply to wait for: the answers come within
        // 1.1 s, in between the polls, and are taken as they come.
        if command.address.is_broadcast() {
            self.first_window
                .get_or_insert(now + PING_WINDOW + self.config.reply_timeout);
        } else {
            self.in_flight = Some(InFlight {
                command,
                progress: now,
            });
        }
    }

    /// The request to `command.address` failed: a bad checksum (`answered`) or a timeout.
    fn fail(&mut self, command: BusCommand, answered: bool, now: Duration) {
        self.in_flight = None;
        let trouble = self.config.trouble_poll;
        let no_clock_poll = self.config.no_clock_poll;
        let Some(peer) = self.peer_mut(command.address) else {
            return;
        };
        peer.failures += 1;
        match command.kind {
            BusCommandKind::SendChanges | BusCommandKind::RepeatChanges => {
                // The board may have moved its changes into the lost packet; only a
                // repeat gets them back. A lost flush is history we drop anyway.
                peer.unconfirmed = !peer.needs_flush;
            }
            BusCommandKind::IgnoreNextPing => peer.needs_ignore = false,
            // Firmware without SEND_CLK must not cost the line a timeout every poll. A
            // garbled answer shows the board has it: it is asked again at its next poll,
            // as a reading missed for long hides the clock presses made meanwhile.
            BusCommandKind::SendClock if !answered => peer.next_clock = now + no_clock_poll,
            _ => {}
        }
        if peer.failures >= 2 {
            peer.needs_dump = true;
        }
        // Only a board that does not answer waits: one that answers garbled is asked
        // again at once, as the changes it holds are the game's history, and while it
        // waited they would pile up into a dump that shows several moves at once.
        peer.next_poll = if peer.failures >= 2 && !answered {
            now + trouble
        } else {
            now
        };
    }

    fn on_reply(&mut self, address: BusAddress, message: BusMessage, now: Duration) {
        if self.peer_mut(address).is_none() {
            if message != BusMessage::Ping {
                // Only a ping introduces a board; anything else from an unknown address
                // is a garbled frame that happened to pass its checksum.
                self.events.push_back(BusEvent::Garbage(0));
                return;
            }
            let hold = self.first_window.filter(|_| !self.released);
            self.peers.push(Peer {
                address,
                state: LinkState::Initialising,
                last_answer: now,
                heard: None,
                next_poll: hold.unwrap_or(now),
                failures: 0,
                unconfirmed: false,
                needs_flush: true,
                needs_dump: true,
                needs_version: true,
                needs_ignore: false,
                announced: hold.is_none(),
                next_clock: now,
            });
            if hold.is_some() {
                // Announced, and first polled, when the first window closes.
                return;
            }
            self.events.push_back(BusEvent::Discovered(address));
        }
        let answered = self
            .in_flight
            .filter(|f| f.command.address == address && expected(f.command.kind, &message));
        if answered.is_some() {
            self.in_flight = None;
        }
        let poll_interval = self.config.poll_interval;
        let (clock_poll, no_clock_poll) = (self.config.clock_poll, self.config.no_clock_poll);
        let peer = self
            .peers
            .iter_mut()
            .find(|p| p.address == address)
            .expect("peer added above");
        peer.last_answer = now;
        peer.heard = Some(now);
        peer.failures = 0;
        if peer.announced {
            self.events.push_back(BusEvent::Heard(address));
        }
        if answered.is_some() {
            peer.next_poll = now + poll_interval;
        }
        if peer.state != LinkState::Responding {
            if peer.state == LinkState::NotResponding {
                // What happened while it was gone: the repeat (if one is owed) and then
                // a fresh dump.
                peer.needs_dump = true;
            }
            peer.state = LinkState::Responding;
            self.events
                .push_back(BusEvent::State(address, LinkState::Responding));
        }
        let Some(kind) = answered.map(|f| f.command.kind) else {
            return;
        };
        match (kind, message) {
            (BusCommandKind::IgnoreNextPing, _) => peer.needs_ignore = false,
            (_, BusMessage::Version(version)) => {
                peer.needs_version = false;
                self.events.push_back(BusEvent::Version(address, version));
            }
            (_, BusMessage::BoardDump(board)) => {
                peer.needs_dump = false;
                self.events
                    .push_back(BusEvent::Message(address, Message::BoardDump(board)));
            }
            (_, BusMessage::ClockTime(times)) => {
                let attached = !times.status.no_clock();
                peer.next_clock = now + if attached { clock_poll } else { no_clock_poll };
                self.events
                    .push_back(BusEvent::Message(address, Message::ClockTime(times)));
            }
            (_, BusMessage::ClockAck(ack)) => {
                peer.next_clock = now + clock_poll;
                self.events
                    .push_back(BusEvent::Message(address, Message::ClockAck(ack)));
            }
            (_, BusMessage::Update(records)) => {
                peer.unconfirmed = false;
                if std::mem::take(&mut peer.needs_flush) {
                    return;
                }
                for record in records {
                    match record {
                        EeRecord::FieldChange { code, square, .. } => self.events.push_back(
                            BusEvent::Message(address, Message::FieldUpdate { square, code }),
                        ),
                        // The board was switched off and on: its changes start afresh,
                        // so take a whole dump as well.
                        EeRecord::PowerUp => peer.needs_dump = true,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    fn peer_mut(&mut self, address: BusAddress) -> Option<&mut Peer> {
        self.peers.iter_mut().find(|p| p.address == address)
    }
}

/// Whether `message` is the reply `kind` asks for.
fn expected(kind: BusCommandKind, message: &BusMessage) -> bool {
    matches!(
        (kind, message),
        (
            BusCommandKind::SendChanges | BusCommandKind::RepeatChanges,
            BusMessage::Update(_)
        ) | (BusCommandKind::SendBoard, BusMessage::BoardDump(_))
            | (
                BusCommandKind::SendClock,
                BusMessage::ClockTime(_) | BusMessage::ClockAck(_)
            )
            | (BusCommandKind::SendVersion, BusMessage::Version(_))
            | (
                BusCommandKind::Ping | BusCommandKind::IgnoreNextPing,
                BusMessage::Ping
            )
    )
}

/// The reply id `kind` asks for, if the session sends it.
fn expected_id(kind: BusCommandKind) -> Option<u8> {
    match kind {
        BusCommandKind::SendChanges | BusCommandKind::RepeatChanges => Some(0x85),
        BusCommandKind::SendBoard => Some(0x83),
        BusCommandKind::SendClock => Some(0x84),
        BusCommandKind::SendVersion => Some(0x89),
        BusCommandKind::Ping | BusCommandKind::IgnoreNextPing => Some(0x87),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use boardcast_protocol::RawBoard;
    use boardcast_simulator::{BusBoardConfig, BusChain, ClockConfig, Script, SimConfig};

    use super::*;

    fn chain(faults: f64, silent: Option<(usize, Duration)>) -> BusChain {
        let games: [&[&str]; 3] = [
            &["e4", "e5", "Nf3", "Nc6", "Bb5"],
            &["d4", "d5", "c4", "e6"],
            &["c4", "e5", "Nc3", "Nf6", "g3", "d5"],
        ];
        BusChain::new(
            games
                .iter()
                .enumerate()
                .map(|(i, moves)| {
                    let sim = SimConfig {
                        seed: 10 + i as u64,
                        speed: 2.0,
                        // The second board has a clock.
                        clock: (i == 1).then(|| ClockConfig {
                            initial: Duration::from_secs(300),
                            ..ClockConfig::default()
                        }),
                        ..SimConfig::default()
                    };
                    let script = Script::from_fen_and_san(None, moves).expect("script");
                    BusBoardConfig {
                        checksum_faults: faults,
                        silent_after: silent.filter(|(b, _)| *b == i).map(|(_, t)| t),
                        ..BusBoardConfig::new(sim, format!("{:05}", 1025 + i), script)
                    }
                })
                .collect(),
        )
    }

    /// What the host side saw, per board.
    #[derive(Default)]
    struct Seen {
        boards: HashMap<u16, RawBoard>,
        states: Vec<(Duration, u16, LinkState)>,
        checksum_errors: usize,
        discovered: Vec<u16>,
        /// When each board was last heard.
        heard: HashMap<u16, Duration>,
        /// Messages not preceded by a hearing of their board in the same answer.
        unheard_messages: usize,
    }

    /// Runs the session against the chain in simulated time, 1 ms steps.
    fn run(chain: &mut BusChain, until: Duration) -> Seen {
        let mut session = BusSession::new(BusConfig::default(), Duration::ZERO);
        let mut seen = Seen::default();
        run_from(chain, &mut session, &mut seen, Duration::ZERO, until);
        seen
    }

    fn run_from(
        chain: &mut BusChain,
        session: &mut BusSession,
        seen: &mut Seen,
        from: Duration,
        until: Duration,
    ) {
        let mut now = from;
        while now < until {
            session.tick(now);
            while let Some(cmd) = session.poll_transmit() {
                chain.receive(&cmd.encode(), now);
            }
            let bytes = chain.advance(now);
            session.on_bytes(&bytes, now);
            while let Some(event) = session.poll_event() {
                if let BusEvent::Message(address, _) = &event
                    && seen.heard.get(&address.value()) != Some(&now)
                {
                    seen.unheard_messages += 1;
                }
                match event {
                    BusEvent::Heard(address) => {
                        seen.heard.insert(address.value(), now);
                    }
                    // Only the first dump is taken: the changes alone must then keep
                    // the mirror exact (later dumps after trouble would hide a loss).
                    BusEvent::Message(address, Message::BoardDump(board)) => {
                        seen.boards.entry(address.value()).or_insert(board);
                    }
                    BusEvent::Message(address, Message::FieldUpdate { square, code }) => {
                        if let Some(board) = seen.boards.get_mut(&address.value()) {
                            board.set(square, code);
                        }
                    }
                    BusEvent::State(address, state) => {
                        seen.states.push((now, address.value(), state));
                    }
                    BusEvent::Discovered(address) => seen.discovered.push(address.value()),
                    BusEvent::ChecksumError(..) => seen.checksum_errors += 1,
                    _ => {}
                }
            }
            now += Duration::from_millis(1);
        }
    }

    /// Clock readings by board (each with its time), and how often each board was
    /// asked for one, in 21 s of a chain answering `faults` of its replies garbled.
    type Readings = HashMap<u16, Vec<(Duration, boardcast_protocol::ClockTimes)>>;

    fn clock_readings(faults: f64) -> (HashMap<u16, usize>, Readings) {
        let mut chain = chain(faults, None);
        let mut session = BusSession::new(BusConfig::default(), Duration::ZERO);
        let mut asked: HashMap<u16, usize> = HashMap::new();
        let mut readings = Readings::new();
        let mut now = Duration::ZERO;
        while now < Duration::from_secs(21) {
            session.tick(now);
            while let Some(cmd) = session.poll_transmit() {
                if cmd.kind == BusCommandKind::SendClock {
                    *asked.entry(cmd.address.value()).or_default() += 1;
                }
                chain.receive(&cmd.encode(), now);
            }
            session.on_bytes(&chain.advance(now), now);
            while let Some(event) = session.poll_event() {
                if let BusEvent::Message(address, Message::ClockTime(times)) = event {
                    readings
                        .entry(address.value())
                        .or_default()
                        .push((now, times));
                }
            }
            now += Duration::from_millis(1);
        }
        (asked, readings)
    }

    #[test]
    fn clocks_are_read_once_a_second_and_boards_without_one_rarely() {
        let (asked, readings) = clock_readings(0.0);
        // Board 1026 has a clock: about one reading a second once found (at ~1.4 s).
        let clocked: Vec<_> = readings[&1026].iter().map(|(_, t)| *t).collect();
        assert!((17..=21).contains(&clocked.len()), "{}", clocked.len());
        assert!(clocked.iter().all(|t| !t.status.no_clock()));
        assert!(clocked.iter().any(|t| t.status.running()));
        // The others say they have none, and are asked every 5 s.
        for address in [1025, 1027] {
            assert!(readings[&address].iter().all(|(_, t)| t.status.no_clock()));
            assert!((3..=5).contains(&asked[&address]), "{address}: {asked:?}");
        }
    }

    #[test]
    fn a_clock_reading_garbled_on_the_line_is_asked_again_at_once() {
        // A board answering garbled is a board with a clock: its next reading is not
        // put off like one without (presses made meanwhile would go unseen).
        let (_, readings) = clock_readings(0.3);
        let times: Vec<Duration> = readings[&1026].iter().map(|(at, _)| *at).collect();
        let longest = times.windows(2).map(|w| w[1] - w[0]).max();
        assert!(
            longest.is_some_and(|gap| gap < Duration::from_secs(2)),
            "{longest:?} between readings: {times:?}"
        );
    }

    #[test]
    fn after_a_lost_port_the_changes_kept_meanwhile_are_taken() {
        let mut chain = chain(0.0, None);
        let mut session = BusSession::new(BusConfig::default(), Duration::ZERO);
        let mut seen = Seen::default();
        let secs = Duration::from_secs;
        run_from(&mut chain, &mut session, &mut seen, secs(0), secs(4));
        // The port is gone for 3 s while the games go on, then a fresh session starts
        // with the boards it knew.
        chain.advance(secs(7));
        let mut session = BusSession::new(BusConfig::default(), secs(7));
        for address in [1025, 1026, 1027] {
            session.know(BusAddress::new(address), secs(7));
        }
        run_from(&mut chain, &mut session, &mut seen, secs(7), secs(40));
        for board in chain.boards() {
            assert!(board.simulation().is_finished());
            assert_eq!(
                seen.boards
                    .get(&board.address().value())
                    .map(RawBoard::to_text),
                Some(board.simulation().scanned().to_text())
            );
        }
        assert_eq!(seen.discovered, [1025, 1026, 1027]);
    }

    #[test]
    fn three_boards_are_found_and_mirrored_exactly_despite_checksum_errors() {
        let mut chain = chain(0.15, None);
        let seen = run(&mut chain, Duration::from_secs(40));
        assert!(chain.boards().iter().all(|b| b.simulation().is_finished()));
        assert!(seen.checksum_errors > 10, "{} errors", seen.checksum_errors);
        // All three answer the first ping, so they are announced in address order.
        assert_eq!(seen.discovered, [1025, 1026, 1027]);
        for board in chain.boards() {
            let address = board.address().value();
            assert_eq!(
                seen.boards.get(&address).map(RawBoard::to_text),
                Some(board.simulation().scanned().to_text()),
                "board {address}"
            );
        }
        assert!(
            seen.states
                .iter()
                .all(|(_, _, s)| *s == LinkState::Responding)
        );
    }

    #[test]
    fn a_silent_board_is_not_responding_and_the_others_carry_on() {
        let mut chain = chain(0.0, Some((1, Duration::from_secs(3))));
        let seen = run(&mut chain, Duration::from_secs(40));
        let gone = seen
            .states
            .iter()
            .find(|(_, a, s)| *a == 1026 && *s == LinkState::NotResponding);
        let (gone_at, ..) = gone.expect("board 1026 never reported not responding");
        // It was last heard when it last answered, the silence timeout before; every
        // message came with a hearing of its board (the rest a restart relies on).
        assert_eq!(
            *gone_at - seen.heard[&1026],
            BusConfig::default().silence_timeout
        );
        assert_eq!(seen.unheard_messages, 0);
        for board in [&chain.boards()[0], &chain.boards()[2]] {
            assert!(board.simulation().is_finished());
            let address = board.address().value();
            assert_eq!(
                seen.boards.get(&address).map(RawBoard::to_text),
                Some(board.simulation().scanned().to_text())
            );
        }
        assert!(
            !seen
                .states
                .iter()
                .any(|(_, a, s)| *a != 1026 && *s == LinkState::NotResponding)
        );
    }
}
