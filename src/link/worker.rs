//! The thread that owns one board's serial port: reads bytes, decodes them, keeps the
//! mirror, runs the link session's timers, and reopens the port when it goes away.
//!
//! A worker never blocks another board: each has its own thread and its own port, and it
//! only talks to the rest of the daemon through a channel.

use std::io::{ErrorKind, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use boardcast_protocol::{Decoded, Decoder, Message};
use serialport::TTYPort;

use super::session::{LinkConfig, LinkEvent, LinkSession, LinkState};
use super::{OpenError, open_port};
use crate::mirror::Mirror;
use crate::status::{BoardStatus, Connection};

/// Longest wait between attempts to reopen a port that went away.
const MAX_REOPEN_BACKOFF: Duration = Duration::from_secs(5);
/// First wait before reopening a port that went away.
const MIN_REOPEN_BACKOFF: Duration = Duration::from_millis(250);

/// Everything a worker needs to run one board.
pub struct BoardWorker {
    /// The board's status, kept current and sent on every change.
    status: BoardStatus,
    config: LinkConfig,
    updates: Sender<BoardStatus>,
    shutdown: Arc<AtomicBool>,
    epoch: Instant,
    mirror: Mirror,
}

impl BoardWorker {
    /// Starts a worker on a port that is already open.
    pub fn spawn(
        id: usize,
        path: PathBuf,
        port: TTYPort,
        config: LinkConfig,
        updates: Sender<BoardStatus>,
        shutdown: Arc<AtomicBool>,
    ) -> std::io::Result<JoinHandle<()>> {
        let worker = BoardWorker {
            status: BoardStatus::new(id, path),
            config,
            updates,
            shutdown,
            epoch: Instant::now(),
            mirror: Mirror::default(),
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
        let mut decoder = Decoder::new();
        let mut buf = [0u8; 4096];
        self.status.connection = Connection::Initialising;
        self.publish();
        while !self.stopping() {
            session.tick(self.now());
            while let Some(command) = session.poll_transmit() {
                if let Err(e) = port.write_all(&command.encode()) {
                    return format!("write failed: {e}");
                }
            }
            let mut changed = self.take_link_events(&mut session);
            match port.read(&mut buf) {
                Ok(0) => return "port closed".to_string(),
                Ok(n) => {
                    decoder.feed(&buf[..n]);
                    while let Some(decoded) = decoder.poll() {
                        changed |= self.handle(decoded, &mut session);
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
                Err(e) => return format!("read failed: {e}"),
            }
            changed |= self.take_link_events(&mut session);
            if changed {
                self.publish();
            }
        }
        "daemon stopping".to_string()
    }

    fn handle(&mut self, decoded: Decoded, session: &mut LinkSession) -> bool {
        let now = self.now();
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
                match &message {
                    Message::SerialNumber(serial) => {
                        let known = self.status.serial.as_deref() == Some(serial.as_str());
                        self.status.serial = Some(serial.clone());
                        // A keep-alive answer changes nothing worth publishing.
                        return !known;
                    }
                    Message::Version { major, minor } => {
                        self.status.version = Some(format!("{major}.{minor}"));
                        return true;
                    }
                    _ => {}
                }
                if self.mirror.apply(&message) || matches!(message, Message::BoardDump(_)) {
                    self.status.board = self
                        .mirror
                        .is_complete()
                        .then(|| self.mirror.board().to_text());
                    return true;
                }
                false
            }
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

    fn note_open_error(&mut self, error: &OpenError) {
        let message = error.to_string();
        if self.status.last_error.as_deref() != Some(message.as_str()) {
            tracing::warn!(port = %self.status.port.display(), "reopen failed: {message}");
            self.status.last_error = Some(message);
            self.publish();
        }
    }

    fn publish(&self) {
        // The receiver only goes away when the daemon is shutting down.
        let _ = self.updates.send(self.status.clone());
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    fn stopping(&self) -> bool {
        self.shutdown.load(Ordering::Relaxed)
    }
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
