//! Sans-IO codec for the DGT e-board serial protocol.
//!
//! Bytes in, typed values out: no I/O, no clock, no chess rules. The host side uses
//! [`Decoder`] to turn the board's byte stream into [`Message`]s and [`Command::encode`]
//! to talk back; the board side (the simulator) uses [`CommandDecoder`] and
//! [`Message::encode`]. Section numbers in the docs refer to the project's protocol notes
//! (`eboard-protocols.md` §1).

#![warn(missing_docs)]

pub mod board;
pub mod bus;
pub mod clock;
pub mod command;
pub mod decoder;
pub mod ee;
mod frame;
pub mod message;
pub mod piece;
pub mod square;

pub use board::{ParseBoardError, RawBoard};
pub use bus::{
    BusAddress, BusCommand, BusCommandDecoder, BusCommandKind, BusDecoded, BusDecoder, BusGarbage,
    BusInput, BusMessage, BusReply,
};
pub use clock::{ClockAck, ClockButton, ClockCommand, ClockStatus, ClockTimes, SideTime};
pub use command::{Command, CommandDecoder};
pub use decoder::{Decoded, Decoder, GarbageReason};
pub use ee::EeRecord;
pub use message::{Battery, Message};
pub use piece::PieceCode;
pub use square::{ParseSquareError, SquareIndex};
