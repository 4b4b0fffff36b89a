//! The daemon's top-level errors and the exit codes they map to.
//!
//! Each way the daemon can fail to start has its own exit code, so that scripts and
//! service managers can tell "wrong path" from "no permission" without parsing text.

use std::path::PathBuf;

use crate::link::OpenError;

/// Exit code for an internal failure not covered below.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code when the port does not exist.
pub const EXIT_PORT_NOT_FOUND: i32 = 3;
/// Exit code when the port exists but may not be opened by this user.
pub const EXIT_PERMISSION_DENIED: i32 = 4;
/// Exit code when the path is not a terminal device (so cannot be a serial port).
pub const EXIT_NOT_A_TTY: i32 = 5;
/// Exit code for any other failure to open or configure a port.
pub const EXIT_PORT_UNUSABLE: i32 = 6;

/// Why the daemon could not go on.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// No board could be opened at all.
    #[error("port {port}: {source}")]
    Open {
        /// The path given on the command line.
        port: PathBuf,
        /// What went wrong.
        source: OpenError,
    },
    /// Writing the status file failed.
    #[error("status file {path}: {source}")]
    StatusFile {
        /// The status file path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl DaemonError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            DaemonError::Open { source, .. } => match source {
                OpenError::NotFound => EXIT_PORT_NOT_FOUND,
                OpenError::PermissionDenied => EXIT_PERMISSION_DENIED,
                OpenError::NotATty => EXIT_NOT_A_TTY,
                OpenError::Unusable(_) => EXIT_PORT_UNUSABLE,
            },
            DaemonError::StatusFile { .. } => EXIT_FAILURE,
        }
    }
}
