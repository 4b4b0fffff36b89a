//! Operator commands to the boards: sends them to each board's worker and waits for the
//! outcome without ever blocking the worker.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::board::BoardCommand;
use crate::inference::EngineError;
use crate::link::worker::BoardRequest;
use crate::output::round::Round;

/// How long to wait for a worker to carry out a command; a board whose port is being
/// reopened only serves commands once it is back.
const REPLY_TIMEOUT: Duration = Duration::from_secs(3);

/// Why a command did not take effect.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// There is no board with that number.
    #[error("no board {0}")]
    NoSuchBoard(usize),
    /// The board's port never opened, so nothing runs it.
    #[error("board {0} is not running (its port did not open)")]
    NotRunning(usize),
    /// The worker did not answer in time; the command stays queued.
    #[error("board {0} did not answer in time (disconnected?); the command is queued")]
    Timeout(usize),
    /// The game refused the command.
    #[error(transparent)]
    Refused(#[from] EngineError),
}

/// The request channels of all boards, by board number − 1 (`None` where the port did
/// not open); shared, as boards found later join.
#[derive(Clone, Default)]
pub struct BoardControl {
    boards: Arc<Mutex<Vec<Option<Sender<BoardRequest>>>>>,
}

impl BoardControl {
    /// Control over these boards.
    pub fn new(boards: Vec<Option<Sender<BoardRequest>>>) -> BoardControl {
        BoardControl {
            boards: Arc::new(Mutex::new(boards)),
        }
    }

    /// Board `id`'s worker takes requests on `sender` (a board found after the start).
    pub fn set(&self, id: usize, sender: Sender<BoardRequest>) {
        let Some(index) = id.checked_sub(1) else {
            return;
        };
        let mut boards = self.boards.lock().unwrap_or_else(PoisonError::into_inner);
        if boards.len() <= index {
            boards.resize(index + 1, None);
        }
        boards[index] = Some(sender);
    }

    /// Sends `command` to board `id` without waiting for the outcome (failures are
    /// logged by the caller's choice of `on_outcome`).
    pub fn send(
        &self,
        id: usize,
        command: BoardCommand,
        on_outcome: impl FnOnce(Result<(), EngineError>) + Send + 'static,
    ) -> Result<(), ControlError> {
        let boards = self.boards.lock().unwrap_or_else(PoisonError::into_inner);
        let sender = id
            .checked_sub(1)
            .and_then(|i| boards.get(i))
            .ok_or(ControlError::NoSuchBoard(id))?
            .as_ref()
            .ok_or(ControlError::NotRunning(id))?;
        let request = BoardRequest {
            command,
            reply: Box::new(on_outcome),
        };
        sender
            .send(request)
            .map_err(|_| ControlError::NotRunning(id))
    }

    /// Tags board `id`'s games from `round` (a board found after the start: the round
    /// as it stands now), logging what fails.
    pub fn tag_from_round(&self, id: usize, round: &Round) {
        let sent = self.send(id, BoardCommand::SetTags(round.tags(id)), move |outcome| {
            if let Err(e) = outcome {
                tracing::warn!(board = id, "tags not applied: {e}");
            }
        });
        if let Err(e) = sent {
            tracing::warn!(board = id, "tags not sent: {e}");
        }
    }

    /// Carries out `command` on board `id` and waits for the outcome.
    pub async fn command(&self, id: usize, command: BoardCommand) -> Result<(), ControlError> {
        let (reply, outcome) = oneshot::channel();
        self.send(id, command, move |result| {
            let _ = reply.send(result);
        })?;
        match tokio::time::timeout(REPLY_TIMEOUT, outcome).await {
            Ok(Ok(result)) => Ok(result?),
            Ok(Err(_)) => Err(ControlError::NotRunning(id)),
            Err(_) => Err(ControlError::Timeout(id)),
        }
    }
}
