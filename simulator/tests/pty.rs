//! The board on a real pseudo-terminal: open it like a serial port and talk DGT.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use boardcast_protocol::RawBoard;
use boardcast_simulator::{Script, SimConfig, Source, spawn_on_pty};
use nix::sys::termios::{SetArg, cfmakeraw, tcgetattr, tcsetattr};

fn open_raw(path: &std::path::Path) -> std::fs::File {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut t = tcgetattr(f.as_fd()).unwrap();
    cfmakeraw(&mut t);
    tcsetattr(f.as_fd(), SetArg::TCSANOW, &t).unwrap();
    f
}

fn read_exact_timeout(f: &mut std::fs::File, n: usize, timeout: Duration) -> Vec<u8> {
    // The fd is blocking; the board answers promptly, so a plain read loop is fine, but a
    // watchdog thread makes a hang fail the test instead of blocking forever.
    let deadline = Instant::now() + timeout;
    let mut out = vec![0u8; n];
    let mut got = 0;
    while got < n {
        assert!(
            Instant::now() < deadline,
            "timed out after {got} of {n} bytes"
        );
        got += f.read(&mut out[got..]).unwrap();
    }
    out
}

#[test]
fn dump_over_the_pty_and_reopen() {
    let script = Script::from_fen_and_san(None, &["e4", "e5"]).unwrap();
    let board = spawn_on_pty(SimConfig::default(), Source::Script(script)).unwrap();
    assert!(board.path().starts_with("/dev/"));
    for _ in 0..2 {
        let mut port = open_raw(board.path());
        port.write_all(&[0x42]).unwrap();
        let dump = read_exact_timeout(&mut port, 67, Duration::from_secs(5));
        assert_eq!(&dump[..3], &[0x86, 0x00, 0x43]);
        assert_eq!(
            RawBoard(dump[3..].try_into().unwrap()),
            RawBoard::start_position()
        );
        // Version: never 1.0 for a classic board.
        port.write_all(&[0x4D]).unwrap();
        assert_eq!(
            read_exact_timeout(&mut port, 5, Duration::from_secs(5)),
            vec![0x93, 0, 5, 1, 2]
        );
        drop(port); // the daemon closes the port; the board must survive and answer again
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(board.physical(), RawBoard::start_position());
    board.stop();
}

#[test]
fn game_plays_over_the_pty_in_real_time() {
    let script = Script::from_fen_and_san(None, &["e4", "e5", "Nf3"]).unwrap();
    let cfg = SimConfig {
        speed: 20.0,
        start_delay: Duration::from_millis(50),
        ..SimConfig::default()
    };
    let board = spawn_on_pty(cfg, Source::Script(script.clone())).unwrap();
    let mut port = open_raw(board.path());
    port.write_all(&[0x44]).unwrap();
    let mut sans = Vec::new();
    while sans.len() < 3 {
        let r = board
            .reports()
            .recv_timeout(Duration::from_secs(20))
            .expect("a move report");
        sans.push(r.san);
    }
    assert_eq!(sans, ["e4", "e5", "Nf3"]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !board.is_finished() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    let pos = script.final_position();
    let expected =
        boardcast_simulator::codes::Physical::from_board(shakmaty::Position::board(&pos));
    assert_eq!(
        board.physical(),
        RawBoard(expected.to_hardware(false, false))
    );
    board.stop();
}
