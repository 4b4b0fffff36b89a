//! Move inference: from board snapshots to moves and events.
//!
//! The [`Engine`] is sans-IO and deterministic: it gets the live board after every
//! change with the time (`now`, a `Duration` since any epoch) and answers with
//! [`Event`]s; `tick` runs its timers. See `engine` for the recognition policy and
//! `analysis` for how boards that match no single move are explained.

mod analysis;
mod candidates;
mod codes;
mod config;
mod engine;
mod event;
mod held;
mod history;
mod legality;
mod operator;
mod pending;
mod recapture;
mod replay;
mod resets;
mod round_trip;
mod search;
mod signals;
mod swapped;
mod unconfirmed;

pub use analysis::READ_ONCE_REMARK;
pub use config::{EngineConfig, Mode};
pub use engine::Engine;
pub use event::{Event, Fix, IrregularKind, PositionProblem};
pub use operator::{Choice, EngineError};
pub use pending::PendingMoves;

#[cfg(test)]
mod tests;
