//! One board of a bus on its own thread: its `BoardCore`, its status and its operator
//! requests. The port thread only forwards what the session decoded, so a board whose
//! inference is busy never holds up the line or another board.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use boardcast_protocol::Message;

use crate::board::{BoardCommand, BoardCore};
use crate::inference::{EngineConfig, Event};
use crate::link::READ_TIMEOUT;
use crate::link::worker::{BoardRequest, BoardUpdate, UpdateSender};
use crate::status::{BoardStatus, Connection};

/// What the port thread tells a board's thread.
#[derive(Debug)]
pub enum BoardInput {
    /// A dump or field change, received at the given time.
    Message(Message, Duration),
    /// The connection changed; with the operator's explanation when it is a problem.
    Connection(Connection, Option<String>),
    /// The firmware version, as "major.minor".
    Version(String),
    /// Bytes from this board that failed their checksum.
    Garbage(u64),
}

/// What a board's thread starts from.
pub struct BoardStart {
    /// Its status so far (number, port, serial).
    pub status: BoardStatus,
    /// Inference settings.
    pub engine: EngineConfig,
    /// PGN tags from the round.
    pub tags: Vec<(String, String)>,
    /// The time origin shared with the port thread, which stamps the messages.
    pub epoch: Instant,
}

/// Starts the thread of board `start.status.id`; it ends when `inputs` closes or on
/// shutdown.
pub fn spawn(
    start: BoardStart,
    inputs: Receiver<BoardInput>,
    requests: Receiver<BoardRequest>,
    updates: UpdateSender,
    shutdown: Arc<AtomicBool>,
) -> std::io::Result<JoinHandle<()>> {
    let mut core = BoardCore::new(start.engine);
    if let Err(e) = core.apply(BoardCommand::SetTags(start.tags)) {
        tracing::warn!(board = start.status.id, "tags not applied: {e}");
    }
    let board = BusBoard {
        status: start.status,
        core,
        epoch: start.epoch,
        updates,
        events: Vec::new(),
    };
    std::thread::Builder::new()
        .name(format!("board-{}", board.status.id))
        .spawn(move || board.run(&inputs, &requests, &shutdown))
}

struct BusBoard {
    status: BoardStatus,
    core: BoardCore,
    epoch: Instant,
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
            while let Ok(request) = requests.try_recv() {
                let outcome = self.core.apply(request.command);
                (request.reply)(outcome);
                changed = true;
            }
            while let Some(event) = self.core.poll_event() {
                if let Event::MoveMade { ply, san, .. } = &event {
                    tracing::info!(board = self.status.id, "move {ply}: {san}");
                } else {
                    tracing::debug!(board = self.status.id, "{event:?}");
                }
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
            BoardInput::Message(message, at) => {
                self.status.frames += 1;
                let changed = self.core.on_message(&message, at);
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
                if let Some((major, minor)) = version.split_once('.')
                    && let (Ok(major), Ok(minor)) = (major.parse(), minor.parse())
                {
                    // A board reporting 1.0 is occupancy-only (Pegasus-like).
                    self.core
                        .on_message(&Message::Version { major, minor }, self.epoch.elapsed());
                }
                self.status.version = Some(version);
                true
            }
            BoardInput::Garbage(bytes) => {
                self.status.garbage_bytes += bytes;
                true
            }
        }
    }

    fn publish(&mut self) {
        let update = BoardUpdate {
            status: self.status.clone(),
            events: std::mem::take(&mut self.events),
            finished_games: self.core.take_finished_games(),
        };
        // The receiver only goes away when the daemon is shutting down.
        let _ = self.updates.send(update);
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }
}
