//! Bad input gets a clear one-line error naming the port, a distinct exit code where the
//! daemon cannot go on, and never a panic.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::time::Duration;

use crate::harness::{Running, bare_pty, boardcast, poll, read_status, scratch};

const EXIT_PORT_NOT_FOUND: i32 = 3;
const EXIT_PERMISSION_DENIED: i32 = 4;
const EXIT_NOT_A_TTY: i32 = 5;

fn run_to_exit(args: &[&str]) -> (i32, String) {
    let mut cmd = boardcast();
    cmd.args(args);
    let mut running = Running::start(cmd);
    let code = running
        .wait_exit(Duration::from_secs(10))
        .expect("the daemon exits");
    (code, running.stderr_so_far())
}

fn assert_one_clear_line(stderr: &str, port: &str, hint: &str) {
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("boardcast: port "),
        "last line: {last}\nall:\n{stderr}"
    );
    assert!(last.contains(port), "names the port: {last}");
    assert!(last.contains(hint), "says what to do ({hint}): {last}");
    assert!(!stderr.contains("panicked"), "no panic:\n{stderr}");
}

#[test]
fn missing_port_exits_with_its_own_code() {
    let port = scratch("missing").join("ttyACM9");
    let port = port.to_str().unwrap();
    let (code, stderr) = run_to_exit(&["run", "--port", port]);
    assert_eq!(code, EXIT_PORT_NOT_FOUND, "{stderr}");
    assert_one_clear_line(&stderr, port, "boardcast ports");
}

#[test]
fn regular_file_is_not_a_serial_port() {
    let port = scratch("notatty").join("board.txt");
    std::fs::write(&port, b"not a board").unwrap();
    let port = port.to_str().unwrap();
    let (code, stderr) = run_to_exit(&["run", "--port", port]);
    assert_eq!(code, EXIT_NOT_A_TTY, "{stderr}");
    assert_one_clear_line(&stderr, port, "not a serial device");
}

#[test]
fn permission_denied_names_the_fix() {
    let dir = scratch("perm");
    let port = dir.join("locked");
    std::fs::write(&port, b"").unwrap();
    std::fs::set_permissions(&port, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut cmd = boardcast();
    cmd.args(["run", "--port", port.to_str().unwrap()]);
    if nix::unistd::geteuid().is_root() {
        // Root opens anything; run the daemon as an ordinary user to see the refusal.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        cmd.uid(65534).gid(65534);
    }
    let mut running = Running::start(cmd);
    let code = running.wait_exit(Duration::from_secs(10)).expect("exits");
    let stderr = running.stderr_so_far();
    assert_eq!(code, EXIT_PERMISSION_DENIED, "{stderr}");
    assert_one_clear_line(&stderr, port.to_str().unwrap(), "dialout");
}

#[test]
fn silent_device_is_reported_and_the_daemon_keeps_trying() {
    let pty = bare_pty();
    let status = scratch("silent").join("status.json");
    let mut cmd = boardcast();
    cmd.args(["run", "--answer-timeout", "1", "--status-file"])
        .arg(&status)
        .arg("--port")
        .arg(&pty.path);
    let mut daemon = Running::start(cmd);
    let line = daemon.wait_for_stderr("no answer from a DGT board", Duration::from_secs(10));
    let line = line.unwrap_or_else(|| panic!("reported:\n{}", daemon.stderr_so_far()));
    assert!(
        line.contains(pty.path.to_str().unwrap()),
        "names the port: {line}"
    );
    assert!(daemon.is_running(), "keeps trying");
    let json = poll(Duration::from_secs(5), || {
        read_status(&status).filter(|s| s["boards"][0]["last_error"].is_string())
    })
    .expect("status file shows the problem");
    assert_eq!(json["boards"][0]["connection"], "initialising");
}

#[test]
fn device_sending_garbage_is_reported_without_a_panic() {
    let mut pty = bare_pty();
    let mut cmd = boardcast();
    cmd.args(["run", "--answer-timeout", "1", "--port"])
        .arg(&pty.path);
    let mut daemon = Running::start(cmd);
    // Deterministic noise of every byte value, as a wrong device at the wrong baud rate
    // would send.
    let mut state: u32 = 0x2545_f491;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 24) as u8
        })
        .collect();
    let line = poll(Duration::from_secs(10), || {
        let _ = pty.master.write_all(&noise[..512]);
        daemon.wait_for_stderr("not the DGT protocol", Duration::from_millis(200))
    });
    let line = line.unwrap_or_else(|| panic!("reported:\n{}", daemon.stderr_so_far()));
    assert!(
        line.contains(pty.path.to_str().unwrap()),
        "names the port: {line}"
    );
    let _ = pty.master.write_all(&noise);
    std::thread::sleep(Duration::from_millis(300));
    assert!(daemon.is_running(), "{}", daemon.stderr_so_far());
    assert!(!daemon.stderr_so_far().contains("panicked"));
}
