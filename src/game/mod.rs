//! The rules core: game record, outcomes and PGN, on shakmaty.
//!
//! shakmaty generates the moves and decides legality; this module adds what a
//! broadcast needs on top: the record of a whole game (start position, moves with SAN,
//! comments), the Laws' end-of-game conditions, and a PGN writer.

mod outcome;
mod pgn;
mod record;

pub use outcome::{DrawClaims, Status, Termination};
pub use pgn::{movetext, write_pgn};
pub use record::{GameRecord, RecordError, RecordedMove, san_plus, san_plus_and_play};
