//! `boardcast run`: opens every board, starts a worker per board, and gathers their
//! updates in the hub, from which every output reads: the status file, the HTTP API,
//! the PGN directory and the push to a broadcast.
//!
//! The workers are plain threads (each owns a serial port); the hub and the outputs run
//! on a small tokio runtime, which receives the workers' updates on a channel.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use crate::board::BoardCommand;
use crate::error::{DaemonError, EXIT_FAILURE};
use crate::http;
use crate::inference::EngineConfig;
use crate::link::bus::{BusShared, BusSpec, spawn_bus};
use crate::link::discovery::{self, DiscoveryConfig, DiscoveryContext};
use crate::link::open_port;
use crate::link::session::LinkConfig;
use crate::link::worker::{BoardSpec, BoardUpdate, BoardWorker, UpdateSender};
use crate::output::control::BoardControl;
use crate::output::files::keep_pgn_dir;
use crate::output::hub::Hub;
use crate::output::nats::{NatsTarget, publish_to_nats};
use crate::output::push::{PushTarget, push_round};
use crate::output::round::Round;
use crate::status::{DaemonStatus, write_status_file};

/// Where the HTTP API listens unless told otherwise.
pub const DEFAULT_HTTP: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 8080);

/// How often the hub looks at the shutdown flag.
const SHUTDOWN_POLL: Duration = Duration::from_millis(100);

/// Whether and where to serve HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpListen {
    /// No HTTP server.
    Off,
    /// The default address: if it is taken, the daemon logs it and goes on without.
    Default(SocketAddr),
    /// An address the operator asked for: if it cannot be bound, the daemon stops.
    Required(SocketAddr),
}

impl HttpListen {
    /// The setting the `--http ADDR` and `--no-http` options describe.
    pub fn from_options(addr: Option<SocketAddr>, off: bool) -> HttpListen {
        match (off, addr) {
            (true, _) => HttpListen::Off,
            (false, Some(addr)) => HttpListen::Required(addr),
            (false, None) => HttpListen::Default(DEFAULT_HTTP),
        }
    }
}

/// What the daemon runs.
#[derive(Debug, Clone)]
pub struct DaemonConfig {
    /// Serial ports, one board each, numbered from 1 in this order; an empty path is a
    /// board that discovery finds (by serial number, or with `--auto`).
    pub ports: Vec<PathBuf>,
    /// Serial ports with a chain of boards in bus mode each; their boards take the next
    /// free numbers (after those of `ports`) as they are found.
    pub bus_ports: Vec<PathBuf>,
    /// Finding boards as they are plugged in, if any are to be found.
    pub discovery: Option<DiscoveryConfig>,
    /// Where to keep the JSON status snapshot, if anywhere.
    pub status_file: Option<PathBuf>,
    /// Link protocol timing.
    pub link: LinkConfig,
    /// Inference settings, the same for every board.
    pub engine: EngineConfig,
    /// The HTTP API and viewer.
    pub http: HttpListen,
    /// The token for state-changing API calls; generated and printed once if absent.
    pub token: Option<String>,
    /// Where to keep `games.pgn` and `game-N.pgn`, if anywhere.
    pub pgn_dir: Option<PathBuf>,
    /// The round's game data: event, site, date, round, players.
    pub round: Round,
    /// A lichess broadcast round to push the games to.
    pub push: Option<PushTarget>,
    /// A NATS server to publish every board to (`--nats`).
    pub nats: Option<NatsTarget>,
    /// The HTTP server's limits on connections.
    pub http_limits: http::Limits,
}

/// Why `run` stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A board or the status file failed.
    #[error(transparent)]
    Daemon(#[from] DaemonError),
    /// The async runtime or a thread could not start.
    #[error("cannot start: {0}")]
    Start(std::io::Error),
    /// The HTTP address asked for cannot be bound.
    #[error("HTTP address {addr}: {source}")]
    Http {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

impl RunError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Daemon(e) => e.exit_code(),
            RunError::Start(_) | RunError::Http { .. } => EXIT_FAILURE,
        }
    }
}

/// Runs the daemon until `shutdown` is set. `on_change` sees the status after every
/// change (the demo renders it; `run` has nothing more to do).
///
/// Boards whose port cannot be opened at start are reported; the daemon only gives up
/// when no board at all can be opened, since a hall with one bad cable must go on.
pub fn run(
    config: &DaemonConfig,
    shutdown: Arc<AtomicBool>,
    mut on_change: impl FnMut(&DaemonStatus),
) -> Result<(), RunError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("boardcast-io")
        .enable_all()
        .build()
        .map_err(RunError::Start)?;
    // Unbounded on purpose: the task that takes the updates applies each to the hub in
    // memory and waits on no consumer (each client, file, push and bus output has its own
    // bounded queue or keeps only the latest state), so this queue drains as fast as the
    // boards fill it; a bound would make a board wait, or drop a move.
    let (updates, received) = tokio::sync::mpsc::unbounded_channel();
    let mut workers = Vec::new();
    // Operator requests for each board, by board number − 1 (None: the port did not
    // open, so no worker serves it).
    let mut boards = Vec::new();
    let mut first_error = None;
    for (index, path) in config.ports.iter().enumerate() {
        let id = index + 1;
        if path.as_os_str().is_empty() {
            boards.push(None);
            continue;
        }
        match open_port(path) {
            Ok(port) => {
                tracing::info!(board = id, port = %path.display(), "opened");
                let spec = BoardSpec {
                    id,
                    path: path.clone(),
                    link: config.link.clone(),
                    engine: config.engine.clone(),
                    handover: None,
                };
                let (requests, received_requests) = mpsc::channel();
                let worker = BoardWorker::spawn(
                    spec,
                    port,
                    updates.clone(),
                    received_requests,
                    shutdown.clone(),
                );
                match worker {
                    Ok(handle) => {
                        workers.push(handle);
                        boards.push(Some(requests));
                    }
                    Err(e) => {
                        tracing::error!(board = id, "cannot start a thread: {e}");
                        boards.push(None);
                    }
                }
            }
            Err(source) => {
                tracing::error!("port {}: {source}", path.display());
                boards.push(None);
                first_error.get_or_insert(DaemonError::Open {
                    port: path.clone(),
                    source,
                });
            }
        }
    }
    let control = BoardControl::new(boards);
    // The hub hands out the numbers of boards found later, on a bus or by discovery.
    let hub = Arc::new(Hub::new(&config.ports, config.round.clone()));
    workers.extend(start_buses(
        config,
        &hub,
        &control,
        &updates,
        &shutdown,
        &mut first_error,
    ));
    if workers.is_empty()
        && config.discovery.is_none()
        && let Some(error) = first_error
    {
        return Err(error.into());
    }
    tag_boards(&control, &config.round, config.ports.len());
    if let Some(discovery) = &config.discovery {
        let context = DiscoveryContext {
            updates: updates.clone(),
            hub: hub.clone(),
            control: control.clone(),
            shutdown: shutdown.clone(),
            link: config.link.clone(),
            engine: config.engine.clone(),
            reserved: reserved_ports(config),
        };
        workers.push(discovery::spawn(discovery.clone(), context).map_err(RunError::Start)?);
    }
    drop(updates);
    let result = runtime.block_on(serve(
        config,
        hub,
        control,
        received,
        &shutdown,
        &mut on_change,
    ));
    shutdown.store(true, Ordering::Relaxed);
    for worker in workers {
        let _ = worker.join();
    }
    // Open HTTP connections and a push in flight are cut short.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

/// Opens every bus port and starts its thread; returns the threads started.
fn start_buses(
    config: &DaemonConfig,
    hub: &Arc<Hub>,
    control: &BoardControl,
    updates: &UpdateSender,
    shutdown: &Arc<AtomicBool>,
    first_error: &mut Option<DaemonError>,
) -> Vec<std::thread::JoinHandle<()>> {
    let shared = BusShared {
        hub: hub.clone(),
        control: control.clone(),
        updates: updates.clone(),
        shutdown: shutdown.clone(),
    };
    let mut threads = Vec::new();
    // Bus boards listed by serial number in the config take their numbers from it.
    let numbers = (config.discovery.as_ref()).map_or_else(Default::default, |d| d.serials.clone());
    for path in &config.bus_ports {
        let spec = BusSpec {
            path: path.clone(),
            link: config.link.clone(),
            engine: config.engine.clone(),
            numbers: numbers.clone(),
        };
        match open_port(path).map(|port| spawn_bus(spec, port, shared.clone())) {
            Ok(Ok(thread)) => {
                tracing::info!(port = %path.display(), "bus opened");
                threads.push(thread);
            }
            Ok(Err(e)) => tracing::error!(port = %path.display(), "cannot start a thread: {e}"),
            Err(source) => {
                tracing::error!("bus port {}: {source}", path.display());
                first_error.get_or_insert(DaemonError::Open {
                    port: path.clone(),
                    source,
                });
            }
        }
    }
    threads
}

/// The ports opened by path, which discovery must never probe: the `--port` boards' and
/// the bus ports.
fn reserved_ports(config: &DaemonConfig) -> Vec<PathBuf> {
    (config.ports.iter())
        .chain(&config.bus_ports)
        .filter(|path| !path.as_os_str().is_empty())
        .cloned()
        .collect()
}

/// Gives every board its PGN tags from the round.
fn tag_boards(control: &BoardControl, round: &Round, count: usize) {
    for id in 1..=count {
        let sent = control.send(id, BoardCommand::SetTags(round.tags(id)), move |outcome| {
            if let Err(e) = outcome {
                tracing::warn!(board = id, "tags not applied: {e}");
            }
        });
        if let Err(e) = sent {
            tracing::debug!(board = id, "tags not sent: {e}");
        }
    }
}

/// Starts the outputs, then feeds the hub until shutdown.
async fn serve(
    config: &DaemonConfig,
    hub: Arc<Hub>,
    control: BoardControl,
    mut received: tokio::sync::mpsc::UnboundedReceiver<BoardUpdate>,
    shutdown: &AtomicBool,
    on_change: &mut impl FnMut(&DaemonStatus),
) -> Result<(), RunError> {
    start_http(config, &hub, control).await?;
    if let Some(dir) = &config.pgn_dir {
        tokio::spawn(keep_pgn_dir(hub.clone(), dir.clone()));
    }
    if let Some(target) = &config.push {
        tokio::spawn(push_round(hub.clone(), target.clone()));
    }
    if let Some(target) = &config.nats {
        tokio::spawn(publish_to_nats(hub.clone(), target.clone()));
    }
    // The hub takes the updates in a task on the runtime's threads: the live events it
    // publishes then wake the clients' tasks on the same thread (tokio runs a task woken
    // by the running one next), not through another thread. The task ends when the
    // workers have gone and dropped their senders.
    let (applied, mut changes) = tokio::sync::watch::channel(());
    let applier = hub.clone();
    tokio::spawn(async move {
        while let Some(update) = received.recv().await {
            applier.apply(update);
            while let Ok(update) = received.try_recv() {
                applier.apply(update);
            }
            applied.send_replace(());
        }
    });
    let mut poll = tokio::time::interval(SHUTDOWN_POLL);
    while !shutdown.load(Ordering::Relaxed) {
        tokio::select! {
            // A burst of updates makes one status write.
            seen = changes.changed() => {
                if seen.is_err() {
                    break;
                }
                if let Some(path) = &config.status_file {
                    hub.with_status(|status| write_status_file(path, status))
                        .map_err(|source| DaemonError::StatusFile {
                            path: path.clone(),
                            source,
                        })?;
                }
                hub.with_status(|status| on_change(status));
            }
            _ = poll.tick() => {}
        }
    }
    Ok(())
}

/// Binds and starts the HTTP server as `config.http` says.
async fn start_http(
    config: &DaemonConfig,
    hub: &Arc<Hub>,
    control: BoardControl,
) -> Result<(), RunError> {
    let (addr, required) = match config.http {
        HttpListen::Off => return Ok(()),
        HttpListen::Default(addr) => (addr, false),
        HttpListen::Required(addr) => (addr, true),
    };
    let listener = match http::bind(addr).await {
        Ok(listener) => listener,
        Err(source) if required => return Err(RunError::Http { addr, source }),
        Err(e) => {
            tracing::warn!("HTTP API not started: {addr}: {e} (choose another with --http ADDR)");
            return Ok(());
        }
    };
    let token = match &config.token {
        Some(token) => token.clone(),
        None => {
            let token = http::generate_token().map_err(RunError::Start)?;
            // Printed once, on the terminal only, never logged again.
            eprintln!("boardcast: API token for state-changing calls: {token}");
            token
        }
    };
    tokio::spawn(http::serve(
        listener,
        hub.clone(),
        control,
        token,
        config.http_limits,
    ));
    Ok(())
}
