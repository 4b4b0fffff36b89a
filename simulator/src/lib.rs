//! A virtual DGT e-board for tests and demos.

pub mod codes;
pub mod error;
pub mod handling;
pub mod rng;
pub mod scan;
pub mod script;
pub mod timeline;

pub use error::{ScriptError, SimError};
pub use handling::{Action, Style, StyleMix};
pub use script::Script;
