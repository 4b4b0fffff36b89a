//! Bus mode: several boards daisy-chained on one serial port (§1.9).
//!
//! `session` is the sans-IO protocol (discovery, polling, recovery); this module is the
//! thread that owns the port: it writes the session's requests, feeds it the bytes that
//! come back, and hands each board's messages to that board's own thread (`board`), which
//! runs its `BoardCore` and publishes its status like a single board's worker. A board
//! found on the bus gets the number the config file gives its serial number, else the
//! next free board number; it keeps it for the daemon's life (also across a lost and
//! reopened port), is tagged from the round like any other board, and can be addressed
//! by operators like any other board.
//!
//! With `--record DIR` the line's whole traffic goes to one file per bus port for the
//! daemon's run (see `recording`); with `--journal DIR` each board has its own journal,
//! found again by its serial number (see `board::journal_name`).

pub mod board;
pub mod session;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use boardcast_protocol::BusAddress;
use serialport::TTYPort;

use self::board::{BoardInput, BoardStart};
use self::session::{BusConfig, BusEvent, BusSession};
use super::session::{LinkConfig, LinkState};
use super::{open_port, read_within};
use crate::inference::EngineConfig;
use crate::link::worker::UpdateSender;
use crate::output::control::BoardControl;
use crate::output::hub::Hub;
use crate::recording::{BusTiming, Direction, Recorder};
use crate::status::{BoardStatus, Connection};

/// Waits between attempts to reopen a port that went away.
const REOPEN_BACKOFF: (Duration, Duration) = (Duration::from_millis(250), Duration::from_secs(5));

/// One bus port and what its boards share.
#[derive(Debug, Clone)]
pub struct BusSpec {
    /// The serial port path.
    pub path: PathBuf,
    /// Link timing (the silence and answer timeouts apply to each board).
    pub link: LinkConfig,
    /// Inference settings for every board.
    pub engine: EngineConfig,
    /// Board numbers the config file gives by serial number.
    pub numbers: HashMap<String, usize>,
}

/// What the bus threads share with the rest of the daemon.
#[derive(Clone)]
pub struct BusShared {
    /// Hands out board numbers (the daemon's one allocator, shared with discovery).
    pub hub: Arc<Hub>,
    /// Where each new board's request channel is registered.
    pub control: BoardControl,
    /// Where the boards' updates go.
    pub updates: UpdateSender,
    /// Set when the daemon stops.
    pub shutdown: Arc<AtomicBool>,
}

/// A board found on the bus.
struct Member {
    id: usize,
    inputs: Sender<BoardInput>,
    thread: JoinHandle<()>,
}

/// Starts the thread that runs the bus on `port`.
pub fn spawn_bus(
    spec: BusSpec,
    port: TTYPort,
    shared: BusShared,
) -> std::io::Result<JoinHandle<()>> {
    let name = format!("bus-{}", spec.path.display());
    let mut worker = BusWorker {
        spec,
        shared,
        epoch: Instant::now(),
        members: HashMap::new(),
        recorder: None,
    };
    worker.start_recording();
    std::thread::Builder::new()
        .name(name)
        .spawn(move || worker.run(port))
}

struct BusWorker {
    spec: BusSpec,
    shared: BusShared,
    epoch: Instant,
    members: HashMap<BusAddress, Member>,
    /// Where the line's traffic goes, while recording works.
    recorder: Option<Recorder>,
}

impl BusWorker {
    fn run(mut self, mut port: TTYPort) {
        loop {
            let gone = self.serve(&mut port);
            if self.stopping() {
                break;
            }
            tracing::warn!(port = %self.spec.path.display(), "bus link lost: {gone}; reopening");
            self.note(&format!("bus link lost: {gone}"));
            self.tell_all(|| BoardInput::Connection(Connection::Disconnected, Some(gone.clone())));
            let mut backoff = REOPEN_BACKOFF.0;
            port = loop {
                std::thread::sleep(backoff);
                if self.stopping() {
                    return self.finish();
                }
                match open_port(&self.spec.path) {
                    Ok(port) => break port,
                    Err(e) => {
                        tracing::debug!(port = %self.spec.path.display(), "reopen failed: {e}");
                        backoff = (backoff * 2).min(REOPEN_BACKOFF.1);
                    }
                }
            };
            tracing::info!(port = %self.spec.path.display(), "bus port reopened");
            self.note("bus port reopened");
        }
        self.finish();
    }

    /// Serves an open port until it fails or the daemon stops; returns why it ended.
    fn serve(&mut self, port: &mut TTYPort) -> String {
        let config = BusConfig::from(self.timing());
        let opened = self.now();
        let mut session = BusSession::new(config, opened);
        for address in self.members.keys() {
            session.know(*address, opened);
        }
        let mut warned_empty = false;
        let mut buf = [0u8; 4096];
        while !self.stopping() {
            let now = self.now();
            session.tick(now);
            while let Some(command) = session.poll_transmit() {
                let bytes = command.encode();
                self.record(now, Direction::ToBoard, &bytes);
                if let Err(e) = port.write_all(&bytes) {
                    self.link_lost(&session);
                    return format!("write failed: {e}");
                }
            }
            while let Some(event) = session.poll_event() {
                self.dispatch(event, &session);
            }
            if !warned_empty
                && self.members.is_empty()
                && now >= opened + self.spec.link.answer_timeout
            {
                warned_empty = true;
                tracing::error!(
                    "port {}: no board answered the bus ping within {}s; check that the boards are switched on and chained to this port. Still trying.",
                    self.spec.path.display(),
                    self.spec.link.answer_timeout.as_secs()
                );
            }
            let wait = session.next_deadline().saturating_sub(self.now());
            match read_within(port, &mut buf, wait) {
                Err(gone) => {
                    self.link_lost(&session);
                    return gone;
                }
                Ok(0) => {}
                Ok(n) => {
                    let now = self.now();
                    self.record(now, Direction::FromBoard, &buf[..n]);
                    session.on_bytes(&buf[..n], now);
                }
            }
        }
        "daemon stopping".to_string()
    }

    fn dispatch(&mut self, event: BusEvent, session: &BusSession) {
        let now = self.now();
        match event {
            BusEvent::Discovered(address) => self.join(address),
            BusEvent::Heard(address) => self.tell(address, BoardInput::Heard(now)),
            BusEvent::Version(address, version) => {
                self.tell(address, BoardInput::Version(version));
            }
            BusEvent::Message(address, message) => {
                self.tell(address, BoardInput::Message(message, now));
            }
            BusEvent::State(address, state) => {
                if state == LinkState::NotResponding
                    && let Some(heard) = session.heard(address)
                {
                    self.tell(address, BoardInput::LinkLost(heard));
                }
                let input = match state {
                    LinkState::Responding => {
                        tracing::info!(port = %self.spec.path.display(), %address, "bus board responding");
                        BoardInput::Connection(Connection::Responding, None)
                    }
                    LinkState::NotResponding => {
                        tracing::warn!(port = %self.spec.path.display(), %address, "bus board not responding");
                        BoardInput::Connection(
                            Connection::NotResponding,
                            Some(format!(
                                "board {address} on the bus not responding; check its cable to the next board"
                            )),
                        )
                    }
                    LinkState::Initialising => {
                        BoardInput::Connection(Connection::Initialising, None)
                    }
                };
                self.tell(address, input);
            }
            BusEvent::ChecksumError(address, bytes) => {
                tracing::debug!(%address, "bus: checksum error");
                self.tell(address, BoardInput::Garbage(bytes as u64));
            }
            BusEvent::Garbage(bytes) => {
                tracing::debug!(port = %self.spec.path.display(), bytes, "bus: bytes outside any frame");
            }
        }
    }

    /// A new board answered a ping: give it a number and a thread. (Boards known from
    /// before a reopened port are handed to the new session, which does not announce
    /// them again.)
    fn join(&mut self, address: BusAddress) {
        if self.members.contains_key(&address) {
            return;
        }
        let id = match self.configured_number(address) {
            Some(id) => id,
            None => self.shared.hub.add_next_board(&self.spec.path),
        };
        let mut status = BoardStatus::new(id, self.spec.path.clone());
        status.serial = Some(address.serial());
        status.connection = Connection::Initialising;
        let start = BoardStart {
            status,
            address,
            engine: self.spec.engine.clone(),
            journal: self.spec.link.journal_dir.clone(),
            epoch: self.epoch,
        };
        let (inputs, received_inputs) = mpsc::channel();
        let (requests, received_requests) = mpsc::channel();
        match board::spawn(
            start,
            received_inputs,
            received_requests,
            self.shared.updates.clone(),
            self.shared.shutdown.clone(),
        ) {
            Ok(thread) => {
                tracing::info!(board = id, port = %self.spec.path.display(), serial = %address, "bus board found");
                self.shared.control.set(id, requests);
                self.members.insert(address, Member { id, inputs, thread });
                self.tag(id);
            }
            Err(e) => tracing::error!(board = id, "cannot start a thread: {e}"),
        }
    }

    /// The board number the config file gives the board at `address`, if it lists its
    /// serial number ("01025", or the same number without the leading zeros). The hub
    /// has had that board since the start.
    fn configured_number(&self, address: BusAddress) -> Option<usize> {
        let listed = self.spec.numbers.iter().find(|(serial, _)| {
            serial.chars().all(|c| c.is_ascii_digit())
                && BusAddress::from_serial(serial) == Some(address)
        });
        listed.map(|(_, &id)| id)
    }

    /// Sends board `id` its PGN tags from the round as it stands now (an operator may
    /// have changed it since the start), the way every other board gets them.
    fn tag(&self, id: usize) {
        self.shared
            .control
            .tag_from_round(id, &self.shared.hub.round());
    }

    /// Starts the line's recording, if recording is on: one file for the daemon's run,
    /// across lost and reopened ports, so a replay sees the whole story of the line.
    fn start_recording(&mut self) {
        let Some(dir) = &self.spec.link.record_dir else {
            return;
        };
        match Recorder::create_bus(dir, &self.spec.path, self.timing(), &self.spec.engine) {
            Ok(recorder) => {
                tracing::info!(port = %self.spec.path.display(), file = %recorder.path().display(), "recording the bus");
                self.recorder = Some(recorder);
            }
            Err(e) => tracing::error!(
                port = %self.spec.path.display(),
                "cannot record in {}: {e}",
                dir.display()
            ),
        }
    }

    /// The bus session's timing from the link settings (`run --silence-timeout`), which
    /// the line's recording keeps for its replay.
    fn timing(&self) -> BusTiming {
        BusTiming {
            silence_timeout: self.spec.link.silence_timeout,
            startup_delay: self.spec.link.startup_delay,
        }
    }

    /// Appends a chunk of traffic to the recording.
    fn record(&mut self, at: Duration, direction: Direction, bytes: &[u8]) {
        self.recording(|recorder| recorder.write(at, direction, bytes));
    }

    /// The port failed: every board that answered in this session is told when it was
    /// last heard, and the recording marks it so a replay tells them the same.
    fn link_lost(&mut self, session: &BusSession) {
        let heard: Vec<(BusAddress, Duration)> = session
            .addresses()
            .filter_map(|address| Some((address, session.heard(address)?)))
            .collect();
        for &(address, at) in &heard {
            self.tell(address, BoardInput::LinkLost(at));
        }
        let now = self.now();
        let line_heard = heard.iter().map(|(_, at)| *at).max().unwrap_or(now);
        self.recording(|recorder| recorder.link_lost(now, line_heard));
    }

    /// A comment in the recording, for whoever reads it.
    fn note(&mut self, text: &str) {
        let at = self.now();
        self.recording(|recorder| recorder.note(at, text));
    }

    /// Writes to the recording, if one is on; a failing one is stopped, never the line.
    fn recording(&mut self, write: impl FnOnce(&mut Recorder) -> std::io::Result<()>) {
        if let Some(recorder) = &mut self.recorder
            && let Err(e) = write(recorder)
        {
            tracing::error!(port = %self.spec.path.display(), "recording stopped: {e}");
            self.recorder = None;
        }
    }

    fn tell(&self, address: BusAddress, input: BoardInput) {
        if let Some(member) = self.members.get(&address)
            && member.inputs.send(input).is_err()
        {
            tracing::debug!(board = member.id, "board thread gone");
        }
    }

    fn tell_all(&self, input: impl Fn() -> BoardInput) {
        for member in self.members.values() {
            let _ = member.inputs.send(input());
        }
    }

    /// Closes every board's input (its thread then ends) and waits for the threads.
    fn finish(self) {
        for (_, member) in self.members {
            drop(member.inputs);
            let _ = member.thread.join();
        }
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    fn stopping(&self) -> bool {
        self.shared.shutdown.load(Ordering::Relaxed)
    }
}
