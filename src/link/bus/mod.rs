//! Bus mode: several boards daisy-chained on one serial port (§1.9).
//!
//! `session` is the sans-IO protocol (discovery, polling, recovery).

pub mod session;
