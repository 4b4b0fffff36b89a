//! Turns SIGINT and SIGTERM into a shutdown flag, so the daemon stops cleanly.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: nix::libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Installs the handlers and returns a flag that becomes true on the first signal.
///
/// A watcher thread copies the static flag into the shared one, because a signal handler
/// may only touch async-signal-safe state.
pub fn shutdown_flag() -> Arc<AtomicBool> {
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        if let Err(e) = unsafe { sigaction(signal, &action) } {
            tracing::warn!("cannot install a handler for {signal}: {e}");
        }
    }
    let flag = Arc::new(AtomicBool::new(false));
    let shared = flag.clone();
    std::thread::spawn(move || {
        while !STOP.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        shared.store(true, Ordering::Relaxed);
    });
    flag
}
