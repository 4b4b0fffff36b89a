//! End to end: the daemon's link watch against a hand-driven fake board on a bare
//! pseudo-terminal: a board that goes silent is reported as not responding, and is asked
//! for a fresh dump when it answers again.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use boardcast_protocol::{Command, CommandDecoder, Message, RawBoard};

use crate::harness::{BarePty, Running, boardcast, poll, read_status, scratch};

/// A minimal DGT board played by the test: answers identification and dumps while
/// `answering` is set, and reports every command it receives.
fn fake_board(pty: &BarePty, answering: Arc<AtomicBool>) -> Receiver<Command> {
    let mut master = pty.master.try_clone().expect("clone master");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut decoder = CommandDecoder::new();
        let mut buf = [0u8; 256];
        // The slave is held open by the test, so reads only end when the test does.
        while let Ok(n) = master.read(&mut buf) {
            decoder.feed(&buf[..n]);
            while let Some(command) = decoder.poll() {
                if answering.load(Ordering::SeqCst) {
                    let reply = match command {
                        Command::Version => Some(Message::Version { major: 1, minor: 2 }),
                        Command::SerialNumber => Some(Message::SerialNumber("04711".into())),
                        Command::SendBoard => Some(Message::BoardDump(RawBoard::start_position())),
                        _ => None,
                    };
                    if let Some(reply) = reply {
                        let _ = master.write_all(&reply.encode());
                    }
                }
                if tx.send(command).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

fn connection(status: &std::path::Path) -> Option<String> {
    read_status(status).and_then(|s| s["boards"][0]["connection"].as_str().map(String::from))
}

#[test]
fn silent_board_is_not_responding_then_gets_a_fresh_dump() {
    let pty = BarePty::open();
    assert!(pty.master.as_raw_fd() >= 0);
    let answering = Arc::new(AtomicBool::new(true));
    let commands = fake_board(&pty, answering.clone());
    let status = scratch("link-watch").join("status.json");
    let mut cmd = boardcast();
    cmd.args([
        "run",
        "--no-http",
        "--silence-timeout",
        "2",
        "--status-file",
    ])
    .arg(&status)
    .arg("--port")
    .arg(&pty.path);
    let mut daemon = Running::start(cmd);
    let responding = |want: &str| {
        poll(Duration::from_secs(10), || {
            connection(&status).filter(|c| c == want)
        })
    };
    responding("responding").unwrap_or_else(|| panic!("{}", daemon.stderr_so_far()));
    let json = read_status(&status).expect("status");
    assert_eq!(json["boards"][0]["serial"], "04711");
    assert_eq!(json["boards"][0]["version"], "1.2");

    answering.store(false, Ordering::SeqCst);
    responding("not_responding").unwrap_or_else(|| panic!("{}", daemon.stderr_so_far()));
    while commands.try_recv().is_ok() {}

    answering.store(true, Ordering::SeqCst);
    responding("responding").unwrap_or_else(|| panic!("{}", daemon.stderr_so_far()));
    let fresh_dump = poll(Duration::from_secs(5), || {
        commands.try_iter().find(|c| *c == Command::SendBoard)
    });
    assert!(
        fresh_dump.is_some(),
        "a fresh dump is requested after the board answers again"
    );
}
