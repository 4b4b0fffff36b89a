//! A virtual DGT e-board for tests and demos.
//!
//! The core ([`Simulation`], [`VirtualBoard`], the [`handling`] model, the [`scan`] model
//! and [`Script`]s) is sans-IO and runs in simulated time: every call takes `now`, nothing
//! reads a clock, and the same seed gives byte-identical output. The [`pty`] module puts a
//! simulation on a pseudo-terminal so the daemon can open it like hardware, and [`cli`]
//! is the `boardcast simulate` command.

pub mod board;
pub mod bus;
pub mod cli;
pub mod clock;
pub mod codes;
pub mod config;
pub mod error;
pub mod handling;
pub mod noise;
pub mod pty;
pub mod rng;
pub mod scan;
pub mod script;
pub mod sim;
pub mod timeline;

pub use board::{Identity, Mode, VirtualBoard};
pub use bus::{BusBoard, BusBoardConfig, BusChain, BusPty, spawn_bus_on_pty};
pub use cli::{SimulateArgs, run};
pub use clock::ClockConfig;
pub use config::{SimConfig, StartTrigger};
pub use error::{ScriptError, SimError};
pub use handling::{Action, Style, StyleMix};
pub use noise::Noise;
pub use pty::{BarePty, Plug, PlugEvent, PtyBoard, Source, spawn_on_pty, spawn_on_pty_with};
pub use script::Script;
pub use sim::{MoveReport, Simulation};

/// A real decisive TWIC game (with castling and a capture-rich middlegame) for demos.
pub const DEMO_PGN: &str = include_str!("../data/demo.pgn");
