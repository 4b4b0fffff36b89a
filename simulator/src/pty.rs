//! The pty runner: a Simulation on a pseudo-terminal, driven in real time on its own thread.
//! The only module of the crate that does I/O or reads a clock.

use std::fs::File;
use std::io::BufRead;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use boardcast_protocol::RawBoard;
use nix::errno::Errno;
use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::pty::openpty;
use nix::sys::termios::{SetArg, cfmakeraw, tcgetattr, tcsetattr};

use crate::config::SimConfig;
use crate::error::SimError;
use crate::script::Script;
use crate::sim::{MoveReport, Simulation};

/// Where the moves come from.
pub enum Source {
    /// Replay a script.
    Script(Script),
    /// Replay a script, one move per line read (the line's content is ignored).
    Stepped(Script, Box<dyn BufRead + Send>),
    /// Play the script's moves, then moves (SAN or UCI) and raw `lift e2` / `place e4 P`
    /// actions read line by line; the simulation finishes at end of input.
    Interactive(Script, Box<dyn BufRead + Send>),
}

/// Longest sleep of the runner loop, so stop requests and input lines are seen quickly.
const MAX_SLEEP: Duration = Duration::from_millis(20);
/// Output kept while nobody reads the port; older bytes are dropped beyond this.
const MAX_BACKLOG: usize = 1 << 20;

/// A virtual board on a pseudo-terminal, running on its own thread.
pub struct PtyBoard {
    path: PathBuf,
    reports: Receiver<MoveReport>,
    plug_events: Receiver<PlugEvent>,
    sim: Arc<Mutex<Simulation>>,
    runner: RunnerThread,
}

impl std::fmt::Debug for PtyBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtyBoard")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Unplugging and replugging the board while the game goes on, as a test of the host's
/// recovery. A new pseudo-terminal gets a new `/dev/pts/N`, so a stable path for the
/// host is a symbolic link the runner keeps pointing at the current one.
#[derive(Clone, Debug, Default)]
pub struct Plug {
    /// Keep a symbolic link here to the current pseudo-terminal (absent while unplugged).
    pub link: Option<PathBuf>,
    /// After a replug, put the link here instead (the board comes back on another path).
    pub relink: Option<PathBuf>,
    /// Unplug right after the move with each of these plies is reported.
    pub unplug_after: Vec<u32>,
    /// How long the board stays unplugged.
    pub unplugged_for: Duration,
}

/// A change of the board's connection, as the runner carries it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlugEvent {
    /// The pseudo-terminal was closed.
    Unplugged,
    /// A new pseudo-terminal is open; the path the host should open (the link if any).
    Replugged(PathBuf),
}

/// Open a pseudo-terminal, put it in raw mode and run the simulation on it in real time.
pub fn spawn_on_pty(config: SimConfig, source: Source) -> Result<PtyBoard, SimError> {
    spawn_on_pty_with(config, source, Plug::default())
}

/// [`spawn_on_pty`], unplugging and replugging the board as `plug` says.
pub fn spawn_on_pty_with(
    config: SimConfig,
    source: Source,
    plug: Plug,
) -> Result<PtyBoard, SimError> {
    let pty = BarePty::open()?.non_blocking()?;
    let path = pty.path.clone();
    if let Some(link) = &plug.link {
        point_link(link, &path)?;
    }
    let (sim, lines) = match source {
        Source::Script(s) => (Simulation::new(config, s), None),
        Source::Stepped(s, r) => {
            let cfg = SimConfig {
                stepped: true,
                ..config
            };
            (Simulation::new(cfg, s), Some((false, r)))
        }
        Source::Interactive(s, r) => (Simulation::interactive(config, s), Some((true, r))),
    };
    let sim = Arc::new(Mutex::new(sim));
    let (report_tx, reports) = mpsc::channel();
    let (plug_tx, plug_events) = mpsc::channel();
    let line_rx = lines.map(|(interactive, reader)| (interactive, spawn_line_reader(reader)));
    let runner = Runner {
        pty: Some(pty),
        plug,
        replug_at: None,
        plug_events: plug_tx,
        sim: Arc::clone(&sim),
        stop: Arc::new(AtomicBool::new(false)),
        reports: report_tx,
        lines: line_rx,
        epoch: Instant::now(),
        backlog: Vec::new(),
    };
    Ok(PtyBoard {
        path,
        reports,
        plug_events,
        sim,
        runner: RunnerThread::spawn("virtual-dgt-board", runner)?,
    })
}

/// A raw-mode pseudo-terminal with nobody on it yet: whoever plays the device reads and
/// writes `master`; the host opens `path`. The slave stays open so the master never sees
/// a hang-up while the host has the port closed. Tests and benchmarks that play a device
/// byte by byte use it bare; the runner uses it non-blocking.
pub struct BarePty {
    /// The master side, where the device reads and writes (blocking).
    pub master: File,
    /// The path the host opens.
    pub path: PathBuf,
    _slave: OwnedFd,
}

impl BarePty {
    /// Opens a raw pseudo-terminal.
    pub fn open() -> Result<BarePty, SimError> {
        let pty = openpty(None, None)?;
        let mut termios = tcgetattr(pty.slave.as_fd())?;
        cfmakeraw(&mut termios);
        tcsetattr(pty.slave.as_fd(), SetArg::TCSANOW, &termios)?;
        let path = nix::unistd::ttyname(pty.slave.as_fd())?;
        // A child process (the daemon under test) must not inherit the master: it would
        // keep the terminal alive after an unplug.
        for fd in [&pty.master, &pty.slave] {
            fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
        }
        Ok(BarePty {
            master: File::from(pty.master),
            path,
            _slave: pty.slave,
        })
    }

    /// The same pseudo-terminal with reads and writes on the master that never block.
    pub(crate) fn non_blocking(self) -> Result<BarePty, SimError> {
        let flags = OFlag::from_bits_truncate(fcntl(&self.master, FcntlArg::F_GETFL)?);
        fcntl(&self.master, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
        Ok(self)
    }
}

/// What the runner drives on the pty: one simulated board, or a chain of them on a bus.
pub(crate) trait Device: Send + 'static {
    /// What the device reports as moves are completed.
    type Report: Send + 'static;
    /// Host bytes arrived at `now`.
    fn receive(&mut self, bytes: &[u8], now: Duration);
    /// Runs up to `now`; returns the bytes to send.
    fn advance(&mut self, now: Duration) -> Vec<u8>;
    /// When something next happens.
    fn next_wakeup(&self) -> Option<Duration>;
    /// The next completed move.
    fn poll_report(&mut self) -> Option<Self::Report>;
    /// The ply a report is of (for unplugging after a given ply).
    fn ply(report: &Self::Report) -> u32;
    /// The pseudo-terminal was closed at `now` (the board lost power).
    fn unplug(&mut self, _now: Duration) {}
    /// A line of standard input (interactive or stepped play).
    fn input_line(&mut self, _interactive: bool, _line: &str, _now: Duration) {}
    /// Standard input ended.
    fn input_closed(&mut self, _interactive: bool) {}
}

impl Device for Simulation {
    type Report = MoveReport;

    fn receive(&mut self, bytes: &[u8], now: Duration) {
        Simulation::receive(self, bytes, now);
    }

    fn advance(&mut self, now: Duration) -> Vec<u8> {
        Simulation::advance(self, now)
    }

    fn next_wakeup(&self) -> Option<Duration> {
        Simulation::next_wakeup(self)
    }

    fn poll_report(&mut self) -> Option<MoveReport> {
        Simulation::poll_report(self)
    }

    fn ply(report: &MoveReport) -> u32 {
        report.ply
    }

    fn unplug(&mut self, now: Duration) {
        Simulation::unplug(self, now);
    }

    fn input_line(&mut self, interactive: bool, line: &str, now: Duration) {
        if interactive {
            if let Err(e) = self.submit_line(line, now) {
                eprintln!("virtual board: {e}");
            }
        } else {
            self.step(now);
        }
    }

    fn input_closed(&mut self, interactive: bool) {
        if interactive {
            self.close_input();
        }
    }
}

/// Runs `device` on `pty`, never unplugged, on a new thread until the returned handle is
/// dropped.
pub(crate) fn spawn_runner<D: Device>(
    pty: BarePty,
    device: Arc<Mutex<D>>,
    reports: Sender<D::Report>,
) -> std::io::Result<RunnerThread> {
    let runner = Runner {
        pty: Some(pty),
        plug: Plug::default(),
        replug_at: None,
        // Nobody listens: without a plug plan there are no plug events.
        plug_events: mpsc::channel().0,
        sim: device,
        stop: Arc::new(AtomicBool::new(false)),
        reports,
        lines: None,
        epoch: Instant::now(),
        backlog: Vec::new(),
    };
    RunnerThread::spawn("virtual-dgt-bus", runner)
}

/// A runner on its own thread, told to stop and joined when dropped, which closes its
/// pseudo-terminal.
pub(crate) struct RunnerThread {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl RunnerThread {
    fn spawn<D: Device>(name: &str, runner: Runner<D>) -> std::io::Result<Self> {
        let stop = Arc::clone(&runner.stop);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || runner.run())?;
        Ok(RunnerThread {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for RunnerThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Points the symbolic link `link` at `target`, replacing it in one step.
fn point_link(link: &Path, target: &Path) -> std::io::Result<()> {
    let mut tmp = link.as_os_str().to_owned();
    tmp.push(".new");
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)?;
    std::fs::rename(&tmp, link)
}

impl PtyBoard {
    /// Unplug and replug events, as they happen.
    pub fn plug_events(&self) -> &Receiver<PlugEvent> {
        &self.plug_events
    }

    /// The slave device for the daemon to open, e.g. `/dev/pts/3` (the first one, when
    /// the board is replugged: see [`Plug::link`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Completed moves, as they happen.
    pub fn reports(&self) -> &Receiver<MoveReport> {
        &self.reports
    }

    /// What a fresh full scan would report now (board numbering).
    pub fn physical(&self) -> RawBoard {
        lock(&self.sim).physical()
    }

    /// The script (and input) is done and the board stands still.
    pub fn is_finished(&self) -> bool {
        lock(&self.sim).is_finished()
    }

    /// Stop the runner thread and close the pseudo-terminal (as dropping the board does).
    pub fn stop(self) {
        drop(self.runner);
    }
}

pub(crate) fn lock<T>(sim: &Mutex<T>) -> MutexGuard<'_, T> {
    sim.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn spawn_line_reader(reader: Box<dyn BufRead + Send>) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    // Detached: a blocking read on stdin cannot be interrupted; it ends with the process.
    let _ = std::thread::Builder::new()
        .name("virtual-board-input".into())
        .spawn(move || {
            for line in reader.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    rx
}

struct Runner<D: Device> {
    /// The pseudo-terminal; none while unplugged.
    pty: Option<BarePty>,
    plug: Plug,
    /// When to plug back in, while unplugged.
    replug_at: Option<Duration>,
    plug_events: Sender<PlugEvent>,
    sim: Arc<Mutex<D>>,
    stop: Arc<AtomicBool>,
    reports: Sender<D::Report>,
    lines: Option<(bool, Receiver<String>)>,
    epoch: Instant,
    backlog: Vec<u8>,
}

impl<D: Device> Runner<D> {
    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    fn run(mut self) {
        let mut buf = [0u8; 1024];
        while !self.stop.load(Ordering::SeqCst) {
            let sleep = self.step();
            let Some(pty) = &self.pty else {
                std::thread::sleep(sleep.min(MAX_SLEEP));
                continue;
            };
            let mut events = PollFlags::POLLIN;
            if !self.backlog.is_empty() {
                events |= PollFlags::POLLOUT;
            }
            let timeout = PollTimeout::try_from(sleep.min(MAX_SLEEP)).unwrap_or(PollTimeout::ZERO);
            let mut fds = [PollFd::new(pty.master.as_fd(), events)];
            match poll(&mut fds, timeout) {
                Ok(0) | Err(Errno::EINTR) => continue,
                Ok(_) => {}
                Err(_) => {
                    std::thread::sleep(MAX_SLEEP);
                    continue;
                }
            }
            let revents = fds[0].revents().unwrap_or(PollFlags::empty());
            if revents.contains(PollFlags::POLLIN) {
                match nix::unistd::read(&pty.master, &mut buf) {
                    Ok(n) if n > 0 => {
                        let now = self.now();
                        lock(&self.sim).receive(&buf[..n], now);
                    }
                    // EIO: nobody has the slave open (the daemon closed the port); wait.
                    Ok(_) | Err(_) => std::thread::sleep(MAX_SLEEP),
                }
            } else if revents.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
                std::thread::sleep(MAX_SLEEP);
            }
        }
        if let Some(link) = &self.plug.link {
            let _ = std::fs::remove_file(self.plug.relink.as_ref().unwrap_or(link));
            let _ = std::fs::remove_file(link);
        }
    }

    /// Closes the pseudo-terminal (the host's reads fail) and removes the link.
    fn unplug(&mut self, now: Duration) {
        self.pty = None;
        self.backlog.clear();
        lock(&self.sim).unplug(now);
        if let Some(link) = &self.plug.link {
            let _ = std::fs::remove_file(link);
        }
        self.replug_at = Some(now + self.plug.unplugged_for);
        let _ = self.plug_events.send(PlugEvent::Unplugged);
    }

    /// Opens a new pseudo-terminal and points the link (or the other link) at it.
    fn replug(&mut self) {
        let pty = match BarePty::open().and_then(BarePty::non_blocking) {
            Ok(pty) => pty,
            Err(e) => {
                eprintln!("virtual board: cannot open a new pseudo-terminal: {e}");
                return;
            }
        };
        let link = self.plug.relink.as_ref().or(self.plug.link.as_ref());
        let path = match link {
            Some(link) => match point_link(link, &pty.path) {
                Ok(()) => link.clone(),
                Err(e) => {
                    eprintln!("virtual board: cannot link {}: {e}", link.display());
                    pty.path.clone()
                }
            },
            None => pty.path.clone(),
        };
        self.pty = Some(pty);
        self.replug_at = None;
        let _ = self.plug_events.send(PlugEvent::Replugged(path));
    }

    /// Feed input lines, advance the simulation, forward reports and write output.
    /// Returns how long the simulation can sleep.
    fn step(&mut self) -> Duration {
        let now = self.now();
        let mut sim = lock(&self.sim);
        if let Some((interactive, rx)) = &self.lines {
            loop {
                match rx.try_recv() {
                    Ok(line) => sim.input_line(*interactive, &line, now),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        sim.input_closed(*interactive);
                        self.lines = None;
                        break;
                    }
                }
            }
        }
        self.backlog.extend(sim.advance(now));
        let mut unplug = false;
        while let Some(r) = sim.poll_report() {
            unplug |= self.pty.is_some() && self.plug.unplug_after.contains(&D::ply(&r));
            let _ = self.reports.send(r);
        }
        let sleep = sim
            .next_wakeup()
            .map_or(MAX_SLEEP, |t| t.saturating_sub(now));
        drop(sim);
        if unplug {
            self.unplug(now);
        } else if self.replug_at.is_some_and(|at| now >= at) {
            self.replug();
        }
        self.flush();
        sleep
    }

    fn flush(&mut self) {
        let Some(pty) = &self.pty else {
            // Unplugged: the board is off, and what it would have said is lost.
            self.backlog.clear();
            return;
        };
        while !self.backlog.is_empty() {
            match nix::unistd::write(&pty.master, &self.backlog) {
                Ok(n) if n > 0 => {
                    self.backlog.drain(..n);
                }
                _ => break,
            }
        }
        if self.backlog.len() > MAX_BACKLOG {
            let excess = self.backlog.len() - MAX_BACKLOG;
            self.backlog.drain(..excess);
        }
    }
}
