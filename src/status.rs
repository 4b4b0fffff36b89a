//! The daemon's status snapshot: what each board is doing, as JSON.
//!
//! The same structure feeds the status file now and the HTTP API later, so that every
//! consumer sees one shape.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::board::GameStatus;

/// The connection to one board, as a consumer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Connection {
    /// Opening the port.
    Opening,
    /// Port open, waiting for the board to identify itself.
    Initialising,
    /// The board answers.
    Responding,
    /// The board answered before and has gone silent.
    NotResponding,
    /// The port went away; retrying.
    Disconnected,
    /// Not found yet: looking for the board by its serial number.
    Searching,
}

/// One board's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardStatus {
    /// Board number, from 1 in the order the ports were given.
    pub id: usize,
    /// The serial port path.
    pub port: PathBuf,
    /// The connection state.
    pub connection: Connection,
    /// The board's serial number, once known.
    pub serial: Option<String>,
    /// The board's firmware version ("major.minor"), once known.
    pub version: Option<String>,
    /// The mirrored squares in `RawBoard` text form (index 0 = a8 in the board's own
    /// numbering), once a dump has arrived.
    pub board: Option<String>,
    /// Valid frames received since the daemon started.
    pub frames: u64,
    /// Bytes received that were not part of a valid frame.
    pub garbage_bytes: u64,
    /// The last problem seen on this board, for the operator.
    pub last_error: Option<String>,
    /// The game on the board, as inferred so far.
    pub game: Option<GameStatus>,
}

impl BoardStatus {
    /// A board that is about to be opened.
    pub fn new(id: usize, port: PathBuf) -> Self {
        BoardStatus {
            id,
            port,
            connection: Connection::Opening,
            serial: None,
            version: None,
            board: None,
            frames: 0,
            garbage_bytes: 0,
            last_error: None,
            game: None,
        }
    }
}

/// The whole daemon's status.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DaemonStatus {
    /// Every board, in board order.
    pub boards: Vec<BoardStatus>,
}

impl DaemonStatus {
    /// Replaces the status of the board with the same id (or adds it).
    pub fn update(&mut self, board: BoardStatus) {
        match self.boards.iter_mut().find(|b| b.id == board.id) {
            Some(slot) => *slot = board,
            None => {
                self.boards.push(board);
                self.boards.sort_by_key(|b| b.id);
            }
        }
    }
}

/// Writes `status` to `path` atomically: a reader sees the old file or the new one,
/// never half of one.
pub fn write_status_file(path: &Path, status: &DaemonStatus) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut file = std::fs::File::create(&tmp)?;
    serde_json::to_writer_pretty(&mut file, status)?;
    file.write_all(b"\n")?;
    std::fs::rename(&tmp, path)
}
