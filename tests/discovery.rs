//! End to end: boards found rather than given by path. The config lists boards by serial
//! number; the daemon scans a directory of links to simulated boards, binds each to its
//! number, finds a replugged board again on another path, and leaves alone a board it
//! was not asked for and a device that does not answer. With `--auto`, boards plugged in
//! after the start get the next free numbers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use boardcast_simulator::{
    Plug, PlugEvent, PtyBoard, Script, SimConfig, Source, spawn_on_pty_with,
};

use crate::harness::{BarePty, Running, bare_pty, boardcast, moves, poll, read_status, scratch};
use crate::replug::{OPENING, sans};

/// A board with serial number `serial` playing the first `plies` of `OPENING`, reached
/// through the link `link`.
fn board(serial: &str, plies: usize, plug: Plug) -> (PtyBoard, Script) {
    let script = Script::from_fen_and_san(None, &OPENING[..plies]).expect("opening");
    let mut config = SimConfig {
        seed: 11,
        speed: 2.0,
        ..SimConfig::default()
    };
    config.identity = Some(boardcast_simulator::Identity {
        serial: serial.into(),
        ..boardcast_simulator::Identity::new(false)
    });
    let board = spawn_on_pty_with(config, Source::Script(script.clone()), plug).expect("board");
    (board, script)
}

fn linked(link: PathBuf) -> Plug {
    Plug {
        link: Some(link),
        ..Plug::default()
    }
}

fn boards(status: &Path) -> Vec<serde_json::Value> {
    read_status(status)
        .and_then(|s| s["boards"].as_array().cloned())
        .unwrap_or_default()
}

/// A device that never answers, linked into the scanned directory.
fn silent_device(dir: &Path) -> BarePty {
    let pty = bare_pty();
    std::os::unix::fs::symlink(&pty.path, dir.join("dgt-silent")).expect("link");
    pty
}

fn daemon(dir: &Path, status: &Path, args: &[&str]) -> Running {
    let mut cmd = boardcast();
    cmd.args(["run", "--no-http", "--status-file"])
        .arg(status)
        .arg("--scan")
        .arg(dir.join("dgt-*"))
        .args(args);
    Running::start(cmd)
}

fn count(daemon: &mut Running, needle: &str) -> usize {
    daemon
        .stderr_so_far()
        .lines()
        .filter(|l| l.contains(needle))
        .count()
}

#[test]
fn boards_by_serial_number_keep_their_numbers_across_a_replug_elsewhere() {
    let dir = scratch("discovery-serial");
    let status = dir.join("status.json");
    let config = dir.join("round.toml");
    std::fs::write(
        &config,
        "[[board]]\nserial = \"22222\"\nwhite = \"One\"\n\
         [[board]]\nserial = \"11111\"\nwhite = \"Two\"\n",
    )
    .expect("config");
    let replugged = Plug {
        link: Some(dir.join("dgt-a")),
        relink: Some(dir.join("dgt-b")),
        unplug_after: vec![6],
        unplugged_for: Duration::from_millis(1000),
    };
    let (moving, script) = board("11111", 14, replugged);
    let (_steady, _) = board("22222", 4, linked(dir.join("dgt-c")));
    let (_stranger, _) = board("33333", 4, linked(dir.join("dgt-d")));
    let _silent = silent_device(&dir);
    let mut daemon = daemon(
        &dir,
        &status,
        &["--config", config.to_str().expect("utf-8")],
    );

    let bound = poll(Duration::from_secs(20), || {
        let b = boards(&status);
        (b.len() == 2 && b.iter().all(|b| b["connection"] == "responding")).then_some(b)
    });
    let bound =
        bound.unwrap_or_else(|| panic!("{:?}\n{}", boards(&status), daemon.stderr_so_far()));
    assert_eq!(bound[0]["serial"], "22222");
    assert!(
        bound[0]["port"]
            .as_str()
            .is_some_and(|p| p.ends_with("dgt-c"))
    );
    assert_eq!(bound[1]["serial"], "11111");
    assert!(
        bound[1]["port"]
            .as_str()
            .is_some_and(|p| p.ends_with("dgt-a"))
    );

    let unplugged = moving.plug_events().recv_timeout(Duration::from_secs(60));
    assert_eq!(unplugged, Ok(PlugEvent::Unplugged));
    let disconnected = poll(Duration::from_secs(5), || {
        (boards(&status)[1]["connection"] == "disconnected").then_some(())
    });
    assert!(disconnected.is_some(), "{}", daemon.stderr_so_far());
    let found_again = poll(Duration::from_secs(15), || {
        let board = boards(&status)[1].clone();
        let elsewhere = board["port"].as_str().is_some_and(|p| p.ends_with("dgt-b"));
        (elsewhere && board["connection"] == "responding").then_some(())
    });
    assert!(found_again.is_some(), "{}", daemon.stderr_so_far());

    let want = sans(&script);
    let done = poll(Duration::from_secs(90), || {
        (moving.is_finished() && moves(&boards(&status)[1]) == want).then_some(())
    });
    assert!(
        done.is_some(),
        "want {want:?}, got {:?}\n{}",
        moves(&boards(&status)[1]),
        daemon.stderr_so_far()
    );
    assert!(
        boards(&status)[1]["game"]["pgn"]
            .as_str()
            .is_some_and(|pgn| pgn.contains("[White \"Two\"]"))
    );
    assert_eq!(boards(&status).len(), 2, "the stranger gets no number");
    assert_eq!(
        count(&mut daemon, "serial number 33333 is not in the config"),
        1
    );
    assert_eq!(count(&mut daemon, "not a DGT board, left alone"), 1);
}

#[test]
fn auto_numbers_boards_as_they_are_plugged_in() {
    let dir = scratch("discovery-auto");
    let status = dir.join("status.json");
    let _silent = silent_device(&dir);
    let (first, first_script) = board("40001", 6, linked(dir.join("dgt-1")));
    let mut daemon = daemon(&dir, &status, &["--auto"]);
    let one = poll(Duration::from_secs(20), || {
        let b = boards(&status);
        (b.len() == 1 && b[0]["connection"] == "responding").then_some(b)
    });
    assert!(
        one.is_some(),
        "{:?}\n{}",
        boards(&status),
        daemon.stderr_so_far()
    );
    // A second board plugged in later: board 2.
    let (second, second_script) = board("40002", 6, linked(dir.join("dgt-0")));
    let both = poll(Duration::from_secs(20), || {
        let b = boards(&status);
        (b.len() == 2 && b[1]["connection"] == "responding").then_some(b)
    });
    let both = both.unwrap_or_else(|| panic!("{:?}\n{}", boards(&status), daemon.stderr_so_far()));
    assert_eq!(both[0]["serial"], "40001");
    assert_eq!(both[1]["serial"], "40002");
    let done = poll(Duration::from_secs(60), || {
        let b = boards(&status);
        let ok = first.is_finished()
            && second.is_finished()
            && moves(&b[0]) == sans(&first_script)
            && moves(&b[1]) == sans(&second_script);
        ok.then_some(())
    });
    assert!(
        done.is_some(),
        "{:?}\n{}",
        boards(&status),
        daemon.stderr_so_far()
    );
    // The silent device was probed once, not in a loop.
    assert_eq!(
        count(&mut daemon, "not a DGT board, left alone"),
        1,
        "{}",
        daemon.stderr_so_far()
    );
}
