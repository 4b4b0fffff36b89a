//! The thread that owns one board's serial port: reads bytes, decodes them, keeps the
//! mirror, runs the link session's timers, and reopens the port when it goes away.
//!
//! A worker never blocks another board: each has its own thread and its own port, and it
//! only talks to the rest of the daemon through a channel.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use boardcast_protocol::{Decoded, Decoder, Message};
use serialport::TTYPort;

use super::discovery::Handover;
use super::session::{LinkConfig, LinkEvent, LinkSession, LinkState};
use super::{OpenError, READ_TIMEOUT, open_port, read_within};
use crate::board::BoardCommand;
use crate::inference::{EngineConfig, EngineError, Event};
use crate::journal::JournaledCore;
use crate::recording::{Direction, Recorder};
use crate::status::{BoardStatus, Connection};

/// Longest wait between attempts to reopen a port that went away.
const MAX_REOPEN_BACKOFF: Duration = Duration::from_secs(5);
/// First wait before reopening a port that went away.
const MIN_REOPEN_BACKOFF: Duration = Duration::from_millis(250);

/// What the daemon knows about one board before opening it.
#[derive(Debug)]
pub struct BoardSpec {
    /// Board number, from 1.
    pub id: usize,
    /// The serial port path.
    pub path: PathBuf,
    /// Link protocol timing.
    pub link: LinkConfig,
    /// Inference settings.
    pub engine: EngineConfig,
    /// For a board found by discovery: where its port comes back (instead of reopening
    /// the same path).
    pub handover: Option<Handover>,
}

/// An operator's command for one board, with where to send the outcome.
pub struct BoardRequest {
    /// What to do.
    pub command: BoardCommand,
    /// Called with the outcome once the worker has carried it out.
    pub reply: Box<dyn FnOnce(Result<(), EngineError>) + Send>,
}

/// Everything a worker needs to run one board.
pub struct BoardWorker {
    /// The board's status, kept current and sent on every change.
    status: BoardStatus,
    config: LinkConfig,
    updates: UpdateSender,
    requests: Receiver<BoardRequest>,
    shutdown: Arc<AtomicBool>,
    epoch: Instant,
    /// The board core, journalled with `--journal`.
    core: JournaledCore,
    /// Engine events not yet sent with an update.
    events: Vec<Event>,
    /// Where the raw traffic goes, while recording works.
    recorder: Option<Recorder>,
    /// The engine settings the daemon gave the board, which its recordings keep.
    engine: EngineConfig,
    handover: Option<Handover>,
}

/// Where workers send their updates: the daemon's runtime receives them directly (a send
/// never blocks, and no thread sits between a board and the hub).
pub type UpdateSender = tokio::sync::mpsc::UnboundedSender<BoardUpdate>;

/// What a worker tells the rest of the daemon after a change: the board's whole status,
/// and the game events that happened since the last update, oldest first.
#[derive(Debug, Clone)]
pub struct BoardUpdate {
    /// The board's status after the change.
    pub status: BoardStatus,
    /// Game events since the previous update.
    pub events: Vec<Event>,
    /// PGN of games that ended since the previous update (the board was set up for a
    /// new game), oldest first.
    pub finished_games: Vec<String>,
}

impl BoardWorker {
    /// Starts a worker on a port that is already open.
    pub fn spawn(
        board: BoardSpec,
        port: TTYPort,
        updates: UpdateSender,
        requests: Receiver<BoardRequest>,
        shutdown: Arc<AtomicBool>,
    ) -> std::io::Result<JoinHandle<()>> {
        let id = board.id;
        // Restored from the journal before the port is read, and published first.
        let core = JournaledCore::open(
            board.engine.clone(),
            board.link.journal_dir.as_deref(),
            id,
            &board.path,
        );
        let mut status = BoardStatus::new(board.id, board.path);
        status.game = Some(core.game_status());
        let worker = BoardWorker {
            status,
            config: board.link,
            updates,
            requests,
            shutdown,
            epoch: Instant::now(),
            core,
            events: Vec::new(),
            recorder: None,
            engine: board.engine,
            handover: board.handover,
        };
        std::thread::Builder::new()
            .name(format!("board-{id}"))
            .spawn(move || worker.run(port))
    }

    fn run(mut self, mut port: TTYPort) {
        let mut backoff = MIN_REOPEN_BACKOFF;
        loop {
            let gone = self.serve(&mut port);
            if self.stopping() {
                return;
            }
            self.status.connection = Connection::Disconnected;
            self.status.last_error = Some(gone.clone());
            tracing::warn!(port = %self.status.port.display(), "board link lost: {gone}; reopening");
            self.publish();
            if let Some(handover) = &self.handover {
                handover.release();
                let Some(found) = handover.wait(&self.shutdown) else {
                    return;
                };
                tracing::info!(port = %found.path.display(), "board found again");
                self.status.port = found.path;
                port = found.port;
                continue;
            }
            port = loop {
                std::thread::sleep(backoff);
                if self.stopping() {
                    return;
                }
                match open_port(&self.status.port) {
                    Ok(port) => break port,
                    Err(e) => {
                        backoff = (backoff * 2).min(MAX_REOPEN_BACKOFF);
                        self.note_open_error(&e);
                    }
                }
            };
            backoff = MIN_REOPEN_BACKOFF;
            tracing::info!(port = %self.status.port.display(), "port reopened");
        }
    }

    /// Serves an open port until it fails or the daemon stops; returns why it ended.
    fn serve(&mut self, port: &mut TTYPort) -> String {
        let mut session = LinkSession::new(self.config.clone(), self.now());
        self.start_recording();
        let mut decoder = Decoder::new();
        let mut buf = [0u8; 4096];
        self.status.connection = Connection::Initialising;
        self.publish();
        // Whether the status changed since it was last sent.
        let mut changed = false;
        while !self.stopping() {
            session.tick(self.now());
            self.core.tick(self.now());
            while let Some(command) = session.poll_transmit() {
                let bytes = command.encode();
                self.record(self.now(), Direction::ToBoard, &bytes);
                if let Err(e) = port.write_all(&bytes) {
                    self.link_lost(&session);
                    return format!("write failed: {e}");
                }
            }
            changed |= self.take_link_events(&mut session);
            changed |= self.serve_requests();
            changed |= self.take_game_events();
            // Publish before blocking on the port, so a move recorded by a timer goes out
            // at once rather than after the next read.
            if std::mem::take(&mut changed) {
                self.publish();
            }
            // Wake for the next timer, not a fixed poll: a move is recorded the moment its
            // settle window ends, not up to a whole read timeout later.
            let wait = [Some(session.next_deadline()), self.core.next_deadline()]
                .into_iter()
                .flatten()
                .min()
                .map_or(READ_TIMEOUT, |at| at.saturating_sub(self.now()));
            match read_within(port, &mut buf, wait) {
                Err(gone) => {
                    self.link_lost(&session);
                    return gone;
                }
                Ok(0) => {}
                Ok(n) => {
                    // The bytes' time, for every message in them: a settle window runs
                    // from the byte that completed the board, not from when its message
                    // was decoded.
                    let now = self.now();
                    self.record(now, Direction::FromBoard, &buf[..n]);
                    decoder.feed(&buf[..n]);
                    while let Some(decoded) = decoder.poll() {
                        changed |= self.handle(decoded, &mut session, now);
                    }
                }
            }
        }
        "daemon stopping".to_string()
    }

    fn handle(&mut self, decoded: Decoded, session: &mut LinkSession, now: Duration) -> bool {
        match decoded {
            Decoded::Garbage { bytes, reason } => {
                tracing::debug!(port = %self.status.port.display(), bytes, ?reason, "skipped bytes");
                session.on_garbage(bytes);
                self.status.garbage_bytes += bytes as u64;
                true
            }
            Decoded::Message(message) => {
                self.status.frames += 1;
                session.on_message(&message, now);
                // Before the message changes the board: hearing it proves the rest before.
                self.core.heard(now, now);
                match &message {
                    Message::SerialNumber(serial) => {
                        let known = self.status.serial.as_deref() == Some(serial.as_str());
                        self.status.serial = Some(serial.clone());
                        // A keep-alive answer changes nothing worth publishing.
                        return !known;
                    }
                    Message::Version { major, minor } => {
                        self.status.version = Some(format!("{major}.{minor}"));
                        // The core learns from the version too: a Pegasus (1.0) reports
                        // occupancy only.
                        self.core.on_message(&message, now);
                        self.status.game = Some(self.core.game_status());
                        return true;
                    }
                    _ => {}
                }
                if self.core.on_message(&message, now) || matches!(message, Message::BoardDump(_)) {
                    let mirror = self.core.mirror();
                    self.status.board = mirror.is_complete().then(|| mirror.board().to_text());
                    self.status.game = Some(self.core.game_status());
                    return true;
                }
                false
            }
        }
    }

    /// Tells the core the link went down, when the session heard the board at all: what
    /// it read until the last frame stood (a rest read until then is no slide cut off).
    /// The recording says so too, so a replay tells its core the same.
    fn link_lost(&mut self, session: &LinkSession) {
        if let Some(heard) = session.last_frame() {
            let now = self.now();
            self.core.link_lost(heard, now);
            self.recording(|recorder| recorder.link_lost(now, heard));
        }
    }

    /// Moves the session's events into the status; returns whether anything changed.
    fn take_link_events(&mut self, session: &mut LinkSession) -> bool {
        let mut changed = false;
        while let Some(event) = session.poll_event() {
            changed = true;
            let port = self.status.port.display().to_string();
            match event {
                LinkEvent::State(state) => {
                    self.status.connection = match state {
                        LinkState::Initialising => Connection::Initialising,
                        LinkState::Responding => Connection::Responding,
                        LinkState::NotResponding => Connection::NotResponding,
                    };
                    match state {
                        LinkState::NotResponding => {
                            self.link_lost(session);
                            tracing::warn!(%port, "board not responding");
                            self.status.last_error = Some("board not responding".into());
                        }
                        LinkState::Responding => tracing::info!(%port, "board responding"),
                        LinkState::Initialising => {}
                    }
                }
                LinkEvent::NeverAnswered { garbage_bytes } => {
                    let message = never_answered_message(garbage_bytes, self.config.answer_timeout);
                    tracing::error!("port {port}: {message}");
                    self.status.last_error = Some(message);
                }
            }
        }
        changed
    }

    /// Takes the engine's events and refreshes the game status; returns whether there
    /// were any.
    fn take_game_events(&mut self) -> bool {
        let mut any = false;
        while let Some(event) = self.core.poll_event() {
            any = true;
            self.events.push(event);
        }
        if any {
            self.status.game = Some(self.core.game_status());
        }
        any
    }

    /// Carries out pending operator requests; returns whether any arrived.
    fn serve_requests(&mut self) -> bool {
        let now = self.now();
        let any = serve_requests(&self.requests, &mut self.core, now);
        if any {
            self.status.game = Some(self.core.game_status());
        }
        any
    }

    /// Starts a new recording file for this connection, if recording is on.
    fn start_recording(&mut self) {
        let Some(dir) = &self.config.record_dir else {
            return;
        };
        match Recorder::create(dir, self.status.id, &self.engine) {
            Ok(recorder) => {
                tracing::info!(board = self.status.id, file = %recorder.path().display(), "recording");
                self.recorder = Some(recorder);
            }
            Err(e) => tracing::error!(
                board = self.status.id,
                "cannot record in {}: {e}",
                dir.display()
            ),
        }
    }

    /// Appends a chunk of traffic to the recording.
    fn record(&mut self, at: Duration, direction: Direction, bytes: &[u8]) {
        self.recording(|recorder| recorder.write(at, direction, bytes));
    }

    /// Writes to the recording, if one is on; a failing one is stopped, never the board.
    fn recording(&mut self, write: impl FnOnce(&mut Recorder) -> std::io::Result<()>) {
        if let Some(recorder) = &mut self.recorder
            && let Err(e) = write(recorder)
        {
            tracing::error!(board = self.status.id, "recording stopped: {e}");
            self.recorder = None;
        }
    }

    fn note_open_error(&mut self, error: &OpenError) {
        let message = error.to_string();
        if self.status.last_error.as_deref() != Some(message.as_str()) {
            tracing::warn!(port = %self.status.port.display(), "reopen failed: {message}");
            self.status.last_error = Some(message);
            self.publish();
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
        self.epoch.elapsed()
    }

    fn stopping(&self) -> bool {
        self.shutdown.load(Ordering::Relaxed)
    }
}

/// Sends a board's whole status with the game events not yet sent and the games its
/// core finished since the last update (a worker's and a bus board's thread alike).
pub(crate) fn send_update(
    updates: &UpdateSender,
    status: &BoardStatus,
    events: &mut Vec<Event>,
    core: &mut JournaledCore,
) {
    let events = std::mem::take(events);
    let update = BoardUpdate {
        status: status.clone(),
        events: events.clone(),
        finished_games: core.take_finished_games(),
    };
    // The receiver only goes away when the daemon is shutting down.
    let _ = updates.send(update);
    // Logged once published: a log write is not on a move's way to its viewers.
    for event in &events {
        log_event(status.id, event);
    }
}

/// Logs a board's engine event at the level an operator needs it.
pub(crate) fn log_event(board: usize, event: &Event) {
    match event {
        Event::MoveMade { ply, san, .. } => tracing::info!(board, "move {ply}: {san}"),
        Event::Irregular { restore, .. } => {
            let fixes: Vec<String> = restore.iter().map(ToString::to_string).collect();
            tracing::warn!(board, "irregular board; to restore: {}", fixes.join(" "));
        }
        Event::Pending { .. } => tracing::debug!(board, "{event:?}"),
        _ => tracing::info!(board, "{event:?}"),
    }
}

/// Carries out the operator requests waiting in `requests` at `now`; returns whether
/// there were any.
pub(crate) fn serve_requests(
    requests: &Receiver<BoardRequest>,
    core: &mut JournaledCore,
    now: Duration,
) -> bool {
    let mut any = false;
    while let Ok(request) = requests.try_recv() {
        any = true;
        let outcome = core.apply(request.command, now);
        (request.reply)(outcome);
    }
    any
}

/// The operator's one-line explanation of a device that never answered.
fn never_answered_message(garbage_bytes: usize, waited: Duration) -> String {
    if garbage_bytes > 0 {
        format!(
            "the device sends data that is not the DGT protocol ({garbage_bytes} bytes in {}s); is this the board's port, and is it a DGT board? Still trying.",
            waited.as_secs()
        )
    } else {
        format!(
            "no answer from a DGT board within {}s; check that the board is switched on and connected to this port. Still trying.",
            waited.as_secs()
        )
    }
}
