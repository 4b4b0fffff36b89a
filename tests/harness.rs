//! A small harness for running the real binary: child processes that die with the test,
//! scratch directories, polling with a deadline, and bare pseudo-terminals.

use std::io::{BufRead, BufReader, PipeWriter};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

pub use boardcast_simulator::BarePty;
use boardcast_simulator::{Script, SimConfig, Source};

/// A command for the binary under test.
pub fn boardcast() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_boardcast"));
    cmd.env("RUST_LOG", "info");
    cmd
}

/// The settings and source of a simulated board played by the lines written to the
/// returned pipe (moves, or `lift e2` / `place e4 P`) from the start position, at twice
/// a human pace.
pub fn played_by_hand() -> (SimConfig, Source, PipeWriter) {
    let (reader, input) = std::io::pipe().expect("pipe");
    let script = Script::from_fen_and_san(None, &[]).expect("start position");
    let config = SimConfig {
        seed: 9,
        speed: 2.0,
        ..SimConfig::default()
    };
    let source = Source::Interactive(script, Box::new(BufReader::new(reader)));
    (config, source, input)
}

/// A child process that is killed when the test ends, pass or fail.
pub struct Running {
    /// The process.
    pub child: Child,
    /// Lines the process wrote to stderr, as they arrive.
    pub stderr: Receiver<String>,
    /// Every stderr line seen so far by `wait_for_stderr`.
    pub seen: Vec<String>,
}

impl Running {
    /// Starts `cmd` with stderr captured line by line.
    pub fn start(mut cmd: Command) -> Running {
        cmd.stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start the binary");
        let stderr = lines_of(child.stderr.take().expect("stderr is piped"));
        Running {
            child,
            stderr,
            seen: Vec::new(),
        }
    }

    /// Waits until a stderr line contains `needle`; returns that line.
    pub fn wait_for_stderr(&mut self, needle: &str, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        if let Some(line) = self.seen.iter().find(|l| l.contains(needle)) {
            return Some(line.clone());
        }
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.stderr.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return Some(line);
                    }
                }
                Err(_) => return None,
            }
        }
        None
    }

    /// Waits for the process to exit on its own, and for everything it wrote to stderr.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let status = poll(timeout, || self.child.try_wait().ok().flatten())?;
        // The reader thread ends at end of file; until then lines may still be in flight.
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        Some(status.code().unwrap_or(-1))
    }

    /// Everything on stderr so far, for failure messages.
    pub fn stderr_so_far(&mut self) -> String {
        while let Ok(line) = self.stderr.try_recv() {
            self.seen.push(line);
        }
        self.seen.join("\n")
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lines_of(stderr: ChildStderr) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Calls `f` until it returns something or `timeout` passes.
pub fn poll<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = f() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// The file a daemon run wrote in `dir` with this extension (one connection, one board:
/// one file).
pub fn file_in(dir: &Path, extension: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == extension))
        .unwrap_or_else(|| panic!("no .{extension} file in {}", dir.display()))
}

/// The strings of a JSON array (e.g. a board's SAN moves); empty when it is none.
pub fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The moves recorded on `board`, a board of the status file.
pub fn moves(board: &serde_json::Value) -> Vec<String> {
    strings(&board["game"]["moves"])
}

/// Reads the daemon's status file, if it exists and parses.
pub fn read_status(path: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// A bare pseudo-terminal: the test plays the device on `master`; the daemon opens `path`.
pub fn bare_pty() -> BarePty {
    BarePty::open().expect("open a pseudo-terminal")
}
