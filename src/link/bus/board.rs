//! One board of a bus on its own thread: its `BoardCore` (journalled with `--journal`),
//! its status and its operator requests. The port thread only forwards what the session
//! decoded, so a board whose inference is busy never holds up the line or another board.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use boardcast_protocol::{BusAddress, Message};

use crate::inference::{EngineConfig, Event};
use crate::journal::JournaledCore;
use crate::link::READ_TIMEOUT;
use crate::link::worker::{BoardRequest, UpdateSender, send_update, serve_requests};
use crate::status::{BoardStatus, Connection};

/// What the port thread tells a board's thread.
#[derive(Debug)]
pub enum BoardInput {
    /// The board answered at the given time, before the messages its answer carries.
    Heard(Duration),
    /// A dump, field change or clock reading, received at the given time.
    Message(Message, Duration),
    /// The connection changed; with the operator's explanation when it is a problem.
    Connection(Connection, Option<String>),
    /// The firmware version (`None`: the short reply of firmware before 1.2).
    Version(Option<(u8, u8)>),
    /// Bytes from this board that failed their checksum.
    Garbage(u64),
    /// The link to it went down (the port failed or it fell silent); it last answered
    /// at the given time (see `BoardCore::link_lost`).
    LinkLost(Duration),
}

/// What a board's thread starts from.
pub struct BoardStart {
    /// Its status so far (number, port, serial).
    pub status: BoardStatus,
    /// Its bus address (its serial number).
    pub address: BusAddress,
    /// Inference settings.
    pub engine: EngineConfig,
    /// Where to journal it (`--journal`), if anywhere.
    pub journal: Option<PathBuf>,
    /// The time origin shared with the port thread, which stamps the messages.
    pub epoch: Instant,
}

/// The journal file of the bus board at `address`. It is named by serial number, not by
/// board number and port like a single board's: the serial is known before the core
/// starts (it is the address), it stays the board's whatever number the board gets when
/// the daemon is started again, and a USB serial adapter may come back under another
/// name after a reboot.
pub fn journal_name(address: BusAddress) -> String {
    format!("bus-board-{}.journal", address.serial())
}

/// Starts the thread of board `start.status.id`, restoring its core from its journal
/// first; it ends when `inputs` closes or on shutdown.
pub fn spawn(
    start: BoardStart,
    inputs: Receiver<BoardInput>,
    requests: Receiver<BoardRequest>,
    updates: UpdateSender,
    shutdown: Arc<AtomicBool>,
) -> std::io::Result<JoinHandle<()>> {
    let id = start.status.id;
    // The core's clock starts at zero when its journal is opened (a restored core goes
    // on from the time the daemon was away until now), not when the line was opened:
    // the time it took to find the board would count twice in the time it went unread.
    let opened = start.epoch.elapsed();
    let core = JournaledCore::open_named(
        start.engine,
        start.journal.as_deref(),
        id,
        &journal_name(start.address),
    );
    let board = BusBoard {
        status: start.status,
        core,
        epoch: start.epoch,
        opened,
        updates,
        events: Vec::new(),
    };
    std::thread::Builder::new()
        .name(format!("board-{id}"))
        .spawn(move || board.run(&inputs, &requests, &shutdown))
}

struct BusBoard {
    status: BoardStatus,
    core: JournaledCore,
    epoch: Instant,
    /// The port thread's time (since `epoch`) when the core was opened: the core's zero.
    opened: Duration,
    updates: UpdateSender,
    events: Vec<Event>,
}

impl BusBoard {
    fn run(
        mut self,
        inputs: &Receiver<BoardInput>,
        requests: &Receiver<BoardRequest>,
        shutdown: &AtomicBool,
    ) {
        // The restored game and finished games go out before anything is read.
        self.status.game = Some(self.core.game_status());
        self.publish();
        while !shutdown.load(Ordering::Relaxed) {
            let wait = self
                .core
                .next_deadline()
                .map_or(READ_TIMEOUT, |at| at.saturating_sub(self.now()))
                .min(READ_TIMEOUT);
            let mut changed = match inputs.recv_timeout(wait) {
                Ok(input) => {
                    let mut changed = self.handle(input);
                    while let Ok(more) = inputs.try_recv() {
                        changed |= self.handle(more);
                    }
                    changed
                }
                Err(RecvTimeoutError::Timeout) => false,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            self.core.tick(self.now());
            let now = self.now();
            changed |= serve_requests(requests, &mut self.core, now);
            while let Some(event) = self.core.poll_event() {
                self.events.push(event);
                changed = true;
            }
            if changed {
                self.status.game = Some(self.core.game_status());
                self.publish();
            }
        }
    }

    /// Takes in one input; returns whether the status changed.
    fn handle(&mut self, input: BoardInput) -> bool {
        match input {
            BoardInput::Heard(at) => {
                // Before the answer's changes: hearing it proves the rest before.
                self.core.heard(self.core_time(at), self.now());
                false
            }
            BoardInput::Message(message, at) => {
                self.status.frames += 1;
                let changed = self.core.on_message(&message, self.core_time(at));
                if changed || matches!(message, Message::BoardDump(_)) {
                    let mirror = self.core.mirror();
                    self.status.board = mirror.is_complete().then(|| mirror.board().to_text());
                }
                changed
            }
            BoardInput::Connection(connection, error) => {
                self.status.connection = connection;
                if error.is_some() {
                    self.status.last_error = error;
                }
                true
            }
            BoardInput::Version(version) => {
                self.status.version = Some(match version {
                    Some((major, minor)) => {
                        // A board reporting 1.0 is occupancy-only (Pegasus-like).
                        self.core
                            .on_message(&Message::Version { major, minor }, self.now());
                        format!("{major}.{minor}")
                    }
                    None => "before 1.2".to_string(),
                });
                true
            }
            BoardInput::Garbage(bytes) => {
                self.status.garbage_bytes += bytes;
                true
            }
            BoardInput::LinkLost(heard) => {
                self.core.link_lost(self.core_time(heard), self.now());
                false
            }
        }
    }

    fn publish(&mut self) {
        send_update(
            &self.updates,
            &self.status,
            &mut self.events,
            &mut self.core,
        );
    }

    fn now(&self) -> Duration {
        self.core_time(self.epoch.elapsed())
    }

    /// The core's time for a time the port thread stamped.
    fn core_time(&self, at: Duration) -> Duration {
        at.saturating_sub(self.opened)
    }
}
