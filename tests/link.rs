//! End to end: the daemon's link watch against a hand-driven fake board on a bare
//! pseudo-terminal: a board that goes silent is reported as not responding, and is asked
//! for a fresh dump when it answers again.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use boardcast_protocol::square::SquareIndex;
use boardcast_protocol::{Command, CommandDecoder, Message, RawBoard};

use crate::harness::{BarePty, Running, bare_pty, boardcast, poll, read_status, scratch};
use crate::http_harness::{Daemon, Sim};

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
    let pty = bare_pty();
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

#[test]
fn a_flooding_board_holds_up_no_other() {
    // Board 1 answers the init, then floods: a pawn flickering on a2 and garbage bytes, as
    // fast as the daemon reads them, for the whole test.
    let flood = bare_pty();
    let _commands = fake_board(&flood, Arc::new(AtomicBool::new(true)));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let mut master = flood.master.try_clone().expect("clone master");
        let stop = stop.clone();
        std::thread::spawn(move || {
            let a2 = SquareIndex::new(48).expect("a2");
            let mut rounds = 0u64;
            while !stop.load(Ordering::SeqCst) {
                for code in [0, 1] {
                    let _ = master.write_all(&Message::FieldUpdate { square: a2, code }.encode());
                }
                let _ = master.write_all(&[0xff, 0x00, 0x13]);
                rounds += 1;
            }
            rounds
        })
    };
    let mut sim = Sim::stepped(7);
    let flood_path = flood.path.display().to_string();
    let mut daemon = Daemon::start(&[&flood_path, &sim.path], &[]);
    let played: Vec<String> = (0..8).map(|_| sim.step()).collect();
    daemon.wait_json("/api/boards/2", Duration::from_secs(30), |b| {
        b["moves"] == serde_json::json!(played)
    });
    let flooded = daemon.json("/api/boards/1");
    stop.store(true, Ordering::SeqCst);
    let rounds = writer.join().expect("flood writer");
    assert!(rounds > 1000, "the flood was real: {rounds} rounds");
    assert_eq!(flooded["connection"], "responding", "{flooded}");
    assert_eq!(
        flooded["moves"],
        serde_json::json!([]),
        "flicker made no move"
    );
    assert!(!daemon.running.stderr_so_far().contains("panicked"));
}
