//! `boardcast run`: opens every board, starts a worker per board, and gathers their
//! status in one place for the outputs (the status file now; HTTP later).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use crate::error::DaemonError;
use crate::link::open_port;
use crate::link::session::LinkConfig;
use crate::link::worker::BoardWorker;
use crate::status::{DaemonStatus, write_status_file};

/// What the daemon runs.
#[derive(Debug, Clone)]
pub struct DaemonConfig {
    /// Serial ports, one board each, numbered from 1 in this order.
    pub ports: Vec<PathBuf>,
    /// Where to keep the JSON status snapshot, if anywhere.
    pub status_file: Option<PathBuf>,
    /// Link protocol timing.
    pub link: LinkConfig,
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
) -> Result<(), DaemonError> {
    let (updates, received) = mpsc::channel();
    let mut status = DaemonStatus::default();
    let mut workers = Vec::new();
    let mut first_error = None;
    for (index, path) in config.ports.iter().enumerate() {
        let id = index + 1;
        match open_port(path) {
            Ok(port) => {
                tracing::info!(board = id, port = %path.display(), "opened");
                let worker = BoardWorker::spawn(
                    id,
                    path.clone(),
                    port,
                    config.link.clone(),
                    updates.clone(),
                    shutdown.clone(),
                );
                match worker {
                    Ok(handle) => workers.push(handle),
                    Err(e) => tracing::error!(board = id, "cannot start a thread: {e}"),
                }
            }
            Err(source) => {
                tracing::error!("port {}: {source}", path.display());
                first_error.get_or_insert(DaemonError::Open {
                    port: path.clone(),
                    source,
                });
            }
        }
    }
    if workers.is_empty()
        && let Some(error) = first_error
    {
        return Err(error);
    }
    drop(updates);
    while !shutdown.load(Ordering::Relaxed) {
        match received.recv_timeout(Duration::from_millis(100)) {
            Ok(board) => {
                status.update(board);
                // Coalesce a burst of updates into one write.
                while let Ok(board) = received.try_recv() {
                    status.update(board);
                }
                if let Some(path) = &config.status_file {
                    write_status_file(path, &status).map_err(|source| DaemonError::StatusFile {
                        path: path.clone(),
                        source,
                    })?;
                }
                on_change(&status);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    shutdown.store(true, Ordering::Relaxed);
    for worker in workers {
        let _ = worker.join();
    }
    Ok(())
}
