//! The live mirror of one board: the 64 squares exactly as the board reported them.
//!
//! It changes only through a dump or a field update, so it always equals the bytes
//! received; interpreting it (rotation, moves) is the inference engine's job.

use boardcast_protocol::{Message, RawBoard};

/// The board's squares as last reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mirror {
    board: RawBoard,
    dumped: bool,
}

impl Mirror {
    /// Applies a message from the board; returns whether the squares changed.
    pub fn apply(&mut self, message: &Message) -> bool {
        let before = self.board;
        match message {
            Message::BoardDump(board) => {
                self.board = *board;
                self.dumped = true;
            }
            Message::FieldUpdate { square, code } => self.board.set(*square, *code),
            _ => return false,
        }
        self.board != before
    }

    /// The squares as last reported.
    pub fn board(&self) -> &RawBoard {
        &self.board
    }

    /// Whether a full dump has arrived, so that every square is known.
    pub fn is_complete(&self) -> bool {
        self.dumped
    }
}
