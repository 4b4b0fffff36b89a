//! Finding boards that are not tied to a port: scans the candidate serial ports, asks
//! each unknown device for its serial number, and binds a DGT board to its number (the
//! one the config gives its serial, or with `--auto` the next free one). A board that
//! comes back, on the same path or another, is handed to the worker that holds its game.
//!
//! Each probe runs on its own short-lived thread, so a device that never answers delays
//! nothing; a device that is not a DGT board (or a board nobody asked for) is left alone
//! until it is unplugged, or for a long while.

use std::collections::{HashMap, HashSet};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use boardcast_protocol::{Command, Decoded, Decoder, Message};
use serialport::{SerialPort, TTYPort};

use super::open_port;
use super::session::LinkConfig;
use super::worker::{BoardRequest, BoardSpec, BoardUpdate, BoardWorker, UpdateSender};
use crate::inference::EngineConfig;
use crate::output::control::BoardControl;
use crate::output::hub::Hub;
use crate::status::{BoardStatus, Connection};

/// Where DGT boards appear on Linux: USB serial adapters, USB CDC, paired Bluetooth.
pub const DEFAULT_PATTERNS: [&str; 3] = ["/dev/ttyACM*", "/dev/ttyUSB*", "/dev/rfcomm*"];
/// How often the candidate ports are listed.
const SCAN_INTERVAL: Duration = Duration::from_secs(1);
/// How long a device that did not answer like a DGT board (or a board not asked for) is
/// left alone, unless it is unplugged first.
const LEAVE_ALONE: Duration = Duration::from_secs(60);
/// Wait after opening before asking, as the link session does (garbage drains).
const PROBE_SETTLE: Duration = Duration::from_millis(300);
/// How long a probed device has to say who it is.
const PROBE_ANSWER: Duration = Duration::from_secs(3);
/// How often a worker waiting for its board looks at the shutdown flag.
const HANDOVER_POLL: Duration = Duration::from_millis(100);

/// What to look for and where.
#[derive(Debug, Clone, Default)]
pub struct DiscoveryConfig {
    /// Candidate ports: paths whose file name may hold `*` wildcards.
    pub patterns: Vec<String>,
    /// Boards wanted by serial number, and the board number of each.
    pub serials: HashMap<String, usize>,
    /// Take boards whose serial number is not configured, at the next free number.
    pub auto: bool,
}

/// Which ports are open, by their canonical path, and the board number holding each, so
/// that no port is ever opened twice.
#[derive(Debug, Clone, Default)]
pub struct PortClaims(Arc<Mutex<HashMap<PathBuf, usize>>>);

impl PortClaims {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, usize>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims `key` for board `id`.
    pub fn claim(&self, key: PathBuf, id: usize) {
        self.lock().insert(key, id);
    }

    /// Releases whatever board `id` holds.
    pub fn release(&self, id: usize) {
        self.lock().retain(|_, holder| *holder != id);
    }

    fn holder(&self, key: &Path) -> Option<usize> {
        self.lock().get(key).copied()
    }

    fn holds_any(&self, id: usize) -> bool {
        self.lock().values().any(|holder| *holder == id)
    }
}

/// A port found for a board, handed to its worker.
pub struct FoundPort {
    /// The path it was found at.
    pub path: PathBuf,
    /// The open port.
    pub port: TTYPort,
}

/// How a found board's worker gets its port back: it waits for discovery to find the
/// board again, on whatever path, rather than reopening a path another board may now use.
pub struct Handover {
    id: usize,
    ports: Receiver<FoundPort>,
    claims: PortClaims,
}

impl std::fmt::Debug for Handover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handover").field("id", &self.id).finish()
    }
}

impl Handover {
    /// The board lost its port: lets discovery probe that path again.
    pub fn release(&self) {
        self.claims.release(self.id);
    }

    /// Waits for the board to be found again; `None` when the daemon stops.
    pub fn wait(&self, shutdown: &AtomicBool) -> Option<FoundPort> {
        while !shutdown.load(Ordering::Relaxed) {
            match self.ports.recv_timeout(HANDOVER_POLL) {
                Ok(found) => return Some(found),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
        None
    }
}

/// What the discovery thread shares with the daemon.
pub struct DiscoveryContext {
    /// Where workers send their updates.
    pub updates: UpdateSender,
    /// The hub, which grows when a board beyond the known ones is found.
    pub hub: Arc<Hub>,
    /// Operator requests, where found boards' workers are registered.
    pub control: BoardControl,
    /// Set when the daemon stops.
    pub shutdown: Arc<AtomicBool>,
    /// Link protocol timing for found boards.
    pub link: LinkConfig,
    /// Inference settings for found boards.
    pub engine: EngineConfig,
    /// Ports given by path, `--port` boards' and bus ports: never probed.
    pub reserved: Vec<PathBuf>,
}

/// Starts the discovery thread; it ends, after its boards' workers, when the daemon stops.
pub fn spawn(
    config: DiscoveryConfig,
    context: DiscoveryContext,
) -> std::io::Result<JoinHandle<()>> {
    let (probed, results) = mpsc::channel();
    let reserved_paths = context
        .reserved
        .iter()
        .map(|path| path.canonicalize().unwrap_or_else(|_| path.clone()))
        .collect();
    let discovery = Discovery {
        config,
        context,
        reserved_paths,
        claims: PortClaims::default(),
        boards: HashMap::new(),
        auto_serials: HashMap::new(),
        probing: HashSet::new(),
        left_alone: HashMap::new(),
        probed,
        results,
        workers: Vec::new(),
    };
    std::thread::Builder::new()
        .name("discovery".into())
        .spawn(move || discovery.run())
}

struct Discovery {
    config: DiscoveryConfig,
    context: DiscoveryContext,
    reserved_paths: HashSet<PathBuf>,
    claims: PortClaims,
    /// Found boards' workers, by board number.
    boards: HashMap<usize, Sender<FoundPort>>,
    /// Board numbers given with `--auto`, by serial number, so a board keeps its number.
    auto_serials: HashMap<String, usize>,
    /// Ports being probed, by canonical path.
    probing: HashSet<PathBuf>,
    /// Ports left alone until then, by canonical path.
    left_alone: HashMap<PathBuf, Instant>,
    probed: Sender<Probed>,
    results: Receiver<Probed>,
    workers: Vec<JoinHandle<()>>,
}

/// A probe's outcome.
struct Probed {
    path: PathBuf,
    key: PathBuf,
    outcome: Result<(Option<String>, TTYPort), String>,
}

impl Discovery {
    fn run(mut self) {
        self.show_searching();
        let mut next_scan = Instant::now();
        while !self.context.shutdown.load(Ordering::Relaxed) {
            if Instant::now() >= next_scan {
                self.scan();
                next_scan = Instant::now() + SCAN_INTERVAL;
            }
            match self.results.recv_timeout(HANDOVER_POLL) {
                Ok(probed) => self.bind(probed),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
        }
        for worker in self.workers {
            let _ = worker.join();
        }
    }

    /// Shows every board wanted by serial number as searching until it is found.
    fn show_searching(&self) {
        for (serial, &id) in &self.config.serials {
            let mut status = BoardStatus::new(id, PathBuf::new());
            status.connection = Connection::Searching;
            status.serial = Some(serial.clone());
            let _ = self.context.updates.send(BoardUpdate {
                status,
                events: Vec::new(),
                finished_games: Vec::new(),
            });
        }
    }

    /// Lists the candidates and probes each that is free and not left alone.
    fn scan(&mut self) {
        let now = Instant::now();
        let candidates: Vec<(PathBuf, PathBuf)> = self
            .config
            .patterns
            .iter()
            .flat_map(|pattern| expand(pattern))
            .filter_map(|path| Some((path.canonicalize().ok()?, path)))
            .collect();
        // A device that went away is forgotten: whatever comes next is probed afresh.
        let present: HashSet<&PathBuf> = candidates.iter().map(|(key, _)| key).collect();
        self.left_alone.retain(|key, _| present.contains(key));
        for (key, path) in candidates {
            let busy = self.reserved_paths.contains(&key)
                || self.claims.holder(&key).is_some()
                || self.probing.contains(&key)
                || self.left_alone.get(&key).is_some_and(|until| now < *until);
            if busy {
                continue;
            }
            self.probing.insert(key.clone());
            let probed = self.probed.clone();
            let spawned = std::thread::Builder::new()
                .name("probe".into())
                .spawn(move || {
                    let outcome = probe(&path);
                    let _ = probed.send(Probed { path, key, outcome });
                });
            if let Err(e) = spawned {
                tracing::error!("cannot start a probe: {e}");
                return;
            }
        }
    }

    fn leave_alone(&mut self, key: PathBuf) {
        self.left_alone.insert(key, Instant::now() + LEAVE_ALONE);
    }

    /// Binds a probed device to its board number, or leaves it alone.
    fn bind(&mut self, probed: Probed) {
        let Probed { path, key, outcome } = probed;
        self.probing.remove(&key);
        let shown = path.display();
        let (serial, port) = match outcome {
            Ok(found) => found,
            Err(reason) => {
                tracing::info!(port = %shown, "not a DGT board, left alone: {reason}");
                self.leave_alone(key);
                return;
            }
        };
        let serial_text = serial.as_deref().unwrap_or("unknown");
        let known = serial
            .as_ref()
            .and_then(|s| (self.config.serials.get(s)).or_else(|| self.auto_serials.get(s)));
        let id = match (known, self.config.auto) {
            (Some(&id), _) => id,
            (None, true) => self.context.hub.add_next_board(&path),
            (None, false) => {
                tracing::warn!(
                    port = %shown,
                    "DGT board with serial number {serial_text} is not in the config; left alone (list its serial, or run with --auto)"
                );
                self.leave_alone(key);
                return;
            }
        };
        if self.claims.holds_any(id) {
            tracing::warn!(
                port = %shown,
                board = id,
                "a second board with serial number {serial_text}; left alone (board {id} is connected elsewhere)"
            );
            self.leave_alone(key);
            return;
        }
        if self.config.auto
            && let Some(serial) = &serial
            && !self.config.serials.contains_key(serial)
        {
            self.auto_serials.insert(serial.clone(), id);
        }
        self.claims.claim(key, id);
        tracing::info!(board = id, port = %shown, "found the board with serial number {serial_text}");
        let found = FoundPort { path, port };
        match self.boards.get(&id) {
            Some(worker) => {
                if let Err(mpsc::SendError(found)) = worker.send(found) {
                    tracing::error!(board = id, port = %found.path.display(), "the board's worker has stopped");
                    self.claims.release(id);
                }
            }
            None => self.start_worker(id, found),
        }
    }

    fn start_worker(&mut self, id: usize, found: FoundPort) {
        let (handover, ports) = mpsc::channel();
        let (requests, received_requests) = mpsc::channel::<BoardRequest>();
        let spec = BoardSpec {
            id,
            path: found.path.clone(),
            link: self.context.link.clone(),
            engine: self.context.engine.clone(),
            handover: Some(Handover {
                id,
                ports,
                claims: self.claims.clone(),
            }),
        };
        self.context.hub.add_board(id, &found.path);
        let spawned = BoardWorker::spawn(
            spec,
            found.port,
            self.context.updates.clone(),
            received_requests,
            self.context.shutdown.clone(),
        );
        match spawned {
            Ok(worker) => {
                self.workers.push(worker);
                self.boards.insert(id, handover);
                self.context.control.set(id, requests);
                self.context
                    .control
                    .tag_from_round(id, &self.context.hub.round());
            }
            Err(e) => {
                tracing::error!(board = id, "cannot start a thread: {e}");
                self.claims.release(id);
            }
        }
    }
}

/// Opens `path` and asks the device who it is: its serial number (if it says) and the
/// open port, or why it is not taken for a DGT board.
fn probe(path: &Path) -> Result<(Option<String>, TTYPort), String> {
    let mut port = open_port(path).map_err(|e| e.to_string())?;
    std::thread::sleep(PROBE_SETTLE);
    port.clear(serialport::ClearBuffer::Input)
        .map_err(|e| e.to_string())?;
    let mut ask = Command::SerialNumber.encode();
    ask.extend(Command::Version.encode());
    port.write_all(&ask).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + PROBE_ANSWER;
    let mut decoder = Decoder::new();
    let (mut serial, mut version) = (None, false);
    let mut buf = [0u8; 256];
    while Instant::now() < deadline && !(serial.is_some() && version) {
        match port.read(&mut buf) {
            Ok(0) => return Err("port closed".into()),
            Ok(n) => decoder.feed(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(e) => return Err(e.to_string()),
        }
        while let Some(decoded) = decoder.poll() {
            match decoded {
                Decoded::Message(Message::SerialNumber(s)) => serial = Some(s),
                Decoded::Message(Message::Version { .. }) => version = true,
                _ => {}
            }
        }
    }
    if version || serial.is_some() {
        Ok((serial, port))
    } else {
        Err(format!("no DGT answer within {}s", PROBE_ANSWER.as_secs()))
    }
}

/// The existing paths a pattern names; only the file name may hold `*` wildcards.
pub fn expand(pattern: &str) -> Vec<PathBuf> {
    let path = Path::new(pattern);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let name = name.to_string_lossy();
    if !name.contains('*') {
        return if path.exists() {
            vec![path.to_path_buf()]
        } else {
            Vec::new()
        };
    }
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| wildcard_match(&name, &e.file_name().to_string_lossy()))
        .map(|e| dir.join(e.file_name()))
        .collect();
    found.sort();
    found
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| wildcard_match(rest, &tail[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard_match("ttyUSB*", "ttyUSB0"));
        assert!(wildcard_match("ttyUSB*", "ttyUSB"));
        assert!(!wildcard_match("ttyUSB*", "ttyACM0"));
        assert!(wildcard_match("*board*", "my-board-2"));
        assert!(wildcard_match("exact", "exact"));
        assert!(!wildcard_match("exact", "exact1"));
    }

    #[test]
    fn patterns_list_matching_paths_in_order() {
        let dir = std::env::temp_dir().join(format!("discovery-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        for name in ["dgt-b", "dgt-a", "other"] {
            std::fs::write(dir.join(name), "").expect("file");
        }
        let pattern = format!("{}/dgt-*", dir.display());
        assert_eq!(expand(&pattern), [dir.join("dgt-a"), dir.join("dgt-b")]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
