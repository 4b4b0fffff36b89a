//! A virtual board (the simulator) wired to the daemon's decoder and board core in
//! simulated time: the in-process equivalent of `boardcast simulate` on a pty plus
//! `boardcast run`, for soak runs and anything else that plays many games fast.
//!
//! Time is an event loop: each step runs to the earlier of the simulator's next wakeup
//! and the engine's next deadline. The link can be cut: bytes sent while it is down are
//! lost, and when it comes back the host asks for a fresh dump, as the link session
//! does on recovery. The daemon can be restarted: its core is dropped as by a crash,
//! nothing is read while it is down, and the new one (e.g. restored from the journal)
//! opens the board afresh with its own clock starting at zero.

use std::time::Duration;

use boardcast_protocol::{Command, Decoded, Decoder, Message, RawBoard};
use boardcast_simulator::{MoveReport, Simulation};

use crate::board::BoardCommand;
use crate::inference::{EngineConfig, EngineError, Event};
use crate::journal::JournaledCore;

/// Steps without time moving on after which a run is declared stuck.
const IDLE_LIMIT: u32 = 16;

/// Something a step produced, with its simulated time.
#[derive(Debug)]
pub enum Seen<'a> {
    /// The engine was shown the mirror after a change (or a dump).
    Observed(&'a RawBoard),
    /// The engine's timers ran.
    Ticked,
    /// The board core emitted an event.
    Event(Event),
    /// The simulator finished a move (its last physical action).
    Report(MoveReport),
}

/// Where a run stands after a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// More to come.
    Running,
    /// The simulator has played its script, the engine has no timer left and the link is
    /// up (a game ended while it was down is read from the dump when it is back).
    Finished,
    /// Time no longer moves on; why.
    Stuck(String),
}

/// One virtual board feeding one (journalled) board core.
#[derive(Debug)]
pub struct SimulatedBoard {
    sim: Simulation,
    decoder: Decoder,
    core: JournaledCore,
    now: Duration,
    /// When the running daemon started: its clock reads `now - started`.
    started: Duration,
    /// Whether the running daemon has opened the board (false while it is down).
    opened: bool,
    link_up: bool,
    /// When the daemon last heard the board (a message, or the answer to its keep-alive
    /// probe, see [`KEEPALIVE`]), in simulated time.
    heard: Duration,
    /// Since when the link has been up for the running daemon, in simulated time: its
    /// keep-alive probes are answered from then on.
    up_since: Duration,
    idle: u32,
}

/// How often the daemon's link session probes the board (`LinkConfig::keepalive`): a
/// board at rest is heard at each probe, taken as answered at once.
const KEEPALIVE: Duration = Duration::from_secs(1);

impl SimulatedBoard {
    /// Connects `sim` to `core` at `now`: update mode, then a dump, as the daemon opens.
    pub fn new(sim: Simulation, core: JournaledCore, now: Duration) -> Self {
        let mut board = SimulatedBoard {
            sim,
            decoder: Decoder::new(),
            core,
            now,
            started: now,
            opened: true,
            link_up: true,
            heard: now,
            up_since: now,
            idle: 0,
        };
        board.open();
        board
    }

    /// Puts a new virtual board (the next game) on the same core, as when a board is
    /// swapped or reconnected: the host opens it afresh.
    pub fn replace_sim(&mut self, sim: Simulation) {
        self.sim = sim;
        self.decoder = Decoder::new();
        if !self.link_up {
            self.up_since = self.now;
        }
        self.link_up = true;
        self.idle = 0;
        self.open();
    }

    fn open(&mut self) {
        let mut init = Vec::new();
        Command::SendUpdateNice.encode_into(&mut init);
        Command::SendBoard.encode_into(&mut init);
        self.sim.receive(&init, self.now);
    }

    /// The simulated time.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// The board core.
    pub fn core(&self) -> &JournaledCore {
        &self.core
    }

    /// The board core, to take finished games or give operator commands.
    pub fn core_mut(&mut self) -> &mut JournaledCore {
        &mut self.core
    }

    /// Gives the running daemon's core an operator command now; its events come with
    /// the next step.
    pub fn command(&mut self, command: BoardCommand) -> Result<(), EngineError> {
        let now = self.daemon_now();
        self.core.apply(command, now)
    }

    /// Restarts the daemon now, as after a crash: the core is dropped first (its journal
    /// closed, as when a process dies), nothing is read for `downtime`, and then the core
    /// `reopen(downtime)` gives (e.g. [`JournaledCore::restore`] from the journal, with
    /// `downtime` as the time the journal was idle) opens the board afresh, its clock
    /// starting at zero.
    pub fn restart(&mut self, downtime: Duration, reopen: impl FnOnce(Duration) -> JournaledCore) {
        // The answer to the last probe before the crash came in while the daemon ran.
        self.hear_probe();
        drop(std::mem::replace(
            &mut self.core,
            JournaledCore::unjournaled(EngineConfig::default(), 0),
        ));
        self.core = reopen(downtime);
        self.started = self.now + downtime;
        self.up_since = self.up_since.max(self.started);
        self.opened = false;
        self.decoder = Decoder::new();
    }

    /// When the daemon next has work, in simulated time: the core's next deadline, or
    /// its start while it is down (nothing runs meanwhile).
    fn next_deadline(&self) -> Option<Duration> {
        match self.opened {
            true => self.core.next_deadline().map(|at| at + self.started),
            false => Some(self.started),
        }
    }

    /// The running daemon's clock.
    fn daemon_now(&self) -> Duration {
        self.now.saturating_sub(self.started)
    }

    /// The daemon's last keep-alive probe, if the board answered it (the link up since
    /// before it), as the daemon hears it: so it hears a board at rest.
    fn hear_probe(&mut self) {
        if !self.link_up || !self.opened {
            return;
        }
        let daemon_now = self.daemon_now();
        let probe = KEEPALIVE.as_micros();
        let probed = Duration::from_micros(
            u64::try_from(daemon_now.as_micros() / probe * probe).unwrap_or(u64::MAX),
        );
        if probed + self.started >= self.up_since {
            self.core.heard(probed, daemon_now);
        }
    }

    /// When the daemon last heard the board before the link was last cut, in simulated
    /// time.
    pub fn last_heard(&self) -> Duration {
        self.heard
    }

    /// Cuts or restores the link. While it is down, what the board sends is lost, and
    /// the core is told when the board was last heard (its last message, or the last
    /// keep-alive probe, answered while the link was up); when it comes back, the host
    /// asks for a fresh dump.
    pub fn set_link(&mut self, up: bool) {
        if !up && self.link_up && self.opened {
            let daemon_now = self.daemon_now();
            let probe = KEEPALIVE.as_micros();
            let probed = Duration::from_micros(
                u64::try_from(daemon_now.as_micros() / probe * probe).unwrap_or(u64::MAX),
            );
            let heard = probed.max(self.heard.saturating_sub(self.started));
            self.heard = heard + self.started;
            self.core.link_lost(heard, daemon_now);
        }
        if up && !self.link_up {
            self.up_since = self.now;
        }
        if up && !self.link_up && self.opened {
            self.decoder = Decoder::new();
            self.sim.receive(&Command::SendBoard.encode(), self.now);
        }
        self.link_up = up;
    }

    /// One round of the event loop: what is due now, then time moves to the next
    /// wakeup or deadline, but not past `until`.
    pub fn step(&mut self, until: Duration, seen: &mut impl FnMut(Duration, Seen)) -> Progress {
        let now = self.now;
        if !self.opened && now >= self.started {
            // The restarted daemon opens the port; over a cut link its commands are
            // lost and the dump comes when the link does.
            self.opened = true;
            if self.link_up {
                self.open();
            }
        }
        self.hear_probe();
        let bytes = self.sim.advance(now);
        if self.link_up && self.opened {
            self.decoder.feed(&bytes);
        }
        let daemon_now = self.daemon_now();
        while let Some(decoded) = self.decoder.poll() {
            let Decoded::Message(message) = decoded else {
                continue;
            };
            self.heard = now;
            // Before the message changes the board: hearing it proves the rest before.
            self.core.heard(daemon_now, daemon_now);
            let changed = self.core.on_message(&message, daemon_now);
            if self.core.mirror().is_complete()
                && (changed || matches!(message, Message::BoardDump(_)))
            {
                seen(now, Seen::Observed(self.core.mirror().board()));
            }
            while let Some(event) = self.core.poll_event() {
                seen(now, Seen::Event(event));
            }
        }
        if self.opened && self.next_deadline().is_some_and(|at| at <= now) {
            self.core.tick(daemon_now);
            seen(now, Seen::Ticked);
        }
        while let Some(event) = self.core.poll_event() {
            seen(now, Seen::Event(event));
        }
        while let Some(report) = self.sim.poll_report() {
            seen(report.completed_at, Seen::Report(report));
        }
        let deadline = self.next_deadline();
        if self.sim.is_finished() && deadline.is_none() {
            // A game whose end the daemon has not read (the link down) is not over for
            // it: the board stands on its final position until the link is back and the
            // fresh dump is read, as a board does between games.
            if self.link_up {
                return Progress::Finished;
            }
            self.now = until.max(now);
            return Progress::Running;
        }
        let Some(next) = [self.sim.next_wakeup(), deadline]
            .into_iter()
            .flatten()
            .min()
        else {
            return Progress::Finished;
        };
        if next <= now {
            self.idle += 1;
            if self.idle > IDLE_LIMIT {
                return Progress::Stuck(format!(
                    "no progress at {now:?}: sim wakeup {:?}, engine deadline {deadline:?}",
                    self.sim.next_wakeup()
                ));
            }
        } else {
            self.idle = 0;
        }
        self.now = next.clamp(now, until.max(now));
        Progress::Running
    }
}

#[cfg(test)]
mod tests {
    use boardcast_simulator::{Script, SimConfig};

    use super::*;

    /// A game whose last move is made while the link is down is over for the daemon only
    /// once the link is back and the fresh dump is read: the run goes on meanwhile.
    #[test]
    fn a_game_ending_while_the_link_is_down_finishes_after_the_dump() {
        let script = Script::parse_pgn("1. e4 e5 2. Nf3 *")
            .expect("a valid PGN")
            .remove(0);
        let sim = Simulation::new(SimConfig::default(), script);
        let core = JournaledCore::unjournaled(EngineConfig::default(), 0);
        let mut board = SimulatedBoard::new(sim, core, Duration::ZERO);
        let far = Duration::from_secs(3600);
        let mut reported = 0;
        for _ in 0..10_000 {
            if reported == 2 {
                break;
            }
            board.step(far, &mut |_, seen| {
                if let Seen::Report(_) = seen {
                    reported += 1;
                }
            });
        }
        assert_eq!(reported, 2, "the first two moves are made");
        board.set_link(false);
        let back = board.now() + Duration::from_secs(60);
        while board.now() < back {
            let progress = board.step(back, &mut |_, _| {});
            assert_eq!(progress, Progress::Running, "at {:?}", board.now());
        }
        board.set_link(true);
        let mut progress = Progress::Running;
        for _ in 0..10_000 {
            progress = board.step(far, &mut |_, _| {});
            if progress != Progress::Running {
                break;
            }
        }
        assert_eq!(progress, Progress::Finished);
        assert_eq!(board.core().game_status().moves, ["e4", "e5", "Nf3"]);
    }
}
