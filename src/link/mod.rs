//! The serial link to one DGT board: opening the port, and the link protocol on top.
//!
//! `session` is the sans-IO part (init sequence, keep-alive, liveness); `worker` is the
//! thread that owns the port and does the reading and writing.

pub mod bus;
pub mod discovery;
pub mod plan;
pub mod session;
pub mod worker;

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Duration;

use serialport::{DataBits, FlowControl, Parity, SerialPort, StopBits, TTYPort};

/// Longest a blocking read waits. The worker wakes for its timers anyway; this bounds how
/// late it sees an operator's request or the daemon stopping. Idle wake-ups cost: with
/// 500 boards, 20 ms here took 0.82 cores against 0.34 at 100 ms (BENCHMARKS.md, Scale).
pub const READ_TIMEOUT: Duration = Duration::from_millis(100);
/// Shortest read timeout, so a timer due now still waits for nothing.
const MIN_READ_TIMEOUT: Duration = Duration::from_millis(1);

/// Reads what `port` has, waiting at most `wait` (kept between 1 ms and [`READ_TIMEOUT`]):
/// `Ok(0)` when nothing came in time, `Err` with the reason when the link is gone.
fn read_within(port: &mut TTYPort, buf: &mut [u8], wait: Duration) -> Result<usize, String> {
    port.set_timeout(wait.clamp(MIN_READ_TIMEOUT, READ_TIMEOUT))
        .map_err(|e| format!("cannot set the read timeout: {e}"))?;
    match port.read(buf) {
        Ok(0) => Err("port closed".to_string()),
        Ok(n) => Ok(n),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
            ) =>
        {
            Ok(0)
        }
        Err(e) => Err(format!("read failed: {e}")),
    }
}

/// Why a port could not be opened. Each case says what the user can do about it.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Nothing exists at the path.
    #[error("no such device; check the path (`boardcast ports` lists serial ports) and the cable")]
    NotFound,
    /// The device exists but this user may not open it.
    #[error(
        "permission denied; add your user to the group that owns the device (often `dialout`) or run with access to it"
    )]
    PermissionDenied,
    /// The path exists but is not a terminal device.
    #[error("not a serial device (not a tty); give the path of the board's serial port")]
    NotATty,
    /// The device could not be opened or configured for another reason.
    #[error("cannot open as a serial port: {0}; is another program using the board?")]
    Unusable(String),
}

/// Opens `path` as a DGT serial port: 9600 baud, 8N1, no flow control.
///
/// The checks before the real open exist to give each failure its own clear error: the
/// serial library reports most of them as one generic "no device".
pub fn open_port(path: &Path) -> Result<TTYPort, OpenError> {
    let probe = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => OpenError::NotFound,
            io::ErrorKind::PermissionDenied => OpenError::PermissionDenied,
            _ => OpenError::Unusable(e.to_string()),
        })?;
    if !nix::unistd::isatty(probe.as_fd()).unwrap_or(false) {
        return Err(OpenError::NotATty);
    }
    drop(probe);
    serialport::new(path.to_string_lossy(), 9600)
        .data_bits(DataBits::Eight)
        .parity(Parity::None)
        .stop_bits(StopBits::One)
        .flow_control(FlowControl::None)
        .timeout(READ_TIMEOUT)
        .open_native()
        .map_err(|e| OpenError::Unusable(e.description))
        .and_then(|port| {
            // Bytes that arrived before our settings took effect may be garbled.
            port.clear(serialport::ClearBuffer::Input)
                .map_err(|e| OpenError::Unusable(e.description))?;
            Ok(port)
        })
}
