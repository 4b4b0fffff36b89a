//! The link protocol with one board, sans-IO: what to send when, and whether the board
//! is alive. Time is passed in; nothing here touches a port or a clock.
//!
//! The init sequence follows what real drivers do (reference §1.12): give the board a
//! moment after the port opens (garbage from the connect drains meanwhile), ask for its
//! serial number and version, switch it to update mode, then ask for a full dump. Update
//! mode goes before the dump so that no change can fall between the two: a change after
//! the mode switch arrives as a field update, and the dump that follows includes it.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;

use boardcast_protocol::{Command, Message};

/// Timing of the link protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Wait after opening before the first command.
    pub startup_delay: Duration,
    /// Resend the init commands this often until the board answers.
    pub init_retry: Duration,
    /// Report a board that has not answered after this long.
    pub answer_timeout: Duration,
    /// Ask for the serial number this often as a liveness probe.
    pub keepalive: Duration,
    /// A board silent for this long is not responding.
    pub silence_timeout: Duration,
    /// Keep the raw traffic of each board in a file in this directory.
    pub record_dir: Option<PathBuf>,
    /// Journal each board's inputs in this directory and restore from it at start.
    pub journal_dir: Option<PathBuf>,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            startup_delay: Duration::from_millis(300),
            init_retry: Duration::from_secs(2),
            answer_timeout: Duration::from_secs(10),
            keepalive: Duration::from_secs(1),
            silence_timeout: Duration::from_secs(3),
            record_dir: None,
            journal_dir: None,
        }
    }
}

/// Whether the board is talking to us.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkState {
    /// Port open, board not yet identified.
    Initialising,
    /// The board answers.
    Responding,
    /// The board answered before but has gone silent.
    NotResponding,
}

/// What the session tells its owner.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkEvent {
    /// The link state changed.
    State(LinkState),
    /// No valid frame arrived within the answer timeout since the port opened.
    NeverAnswered {
        /// Bytes received that were not part of a valid frame.
        garbage_bytes: usize,
    },
}

/// The link protocol state for one open port.
#[derive(Debug)]
pub struct LinkSession {
    config: LinkConfig,
    opened_at: Duration,
    state: LinkState,
    /// When the last valid frame arrived.
    last_frame: Option<Duration>,
    /// When the init commands or the keep-alive were last sent.
    last_probe: Option<Duration>,
    identified: bool,
    reported_never_answered: bool,
    garbage_bytes: usize,
    transmit: VecDeque<Command>,
    events: VecDeque<LinkEvent>,
}

impl LinkSession {
    /// A session for a port opened at `now`.
    pub fn new(config: LinkConfig, now: Duration) -> Self {
        LinkSession {
            config,
            opened_at: now,
            state: LinkState::Initialising,
            last_frame: None,
            last_probe: None,
            identified: false,
            reported_never_answered: false,
            garbage_bytes: 0,
            transmit: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// The current link state.
    pub fn state(&self) -> LinkState {
        self.state
    }

    /// When the last valid frame arrived: every update the board sent before it was
    /// received, so the board stood as read until then.
    pub fn last_frame(&self) -> Option<Duration> {
        self.last_frame
    }

    /// A valid frame arrived.
    pub fn on_message(&mut self, message: &Message, now: Duration) {
        self.last_frame = Some(now);
        match self.state {
            LinkState::Initialising => {
                if matches!(message, Message::Version { .. }) {
                    self.identified = true;
                    self.transmit.push_back(Command::SendBoard);
                    self.set_state(LinkState::Responding);
                }
            }
            LinkState::NotResponding => {
                // The board may have been power-cycled (and so left update mode) or may
                // have changed while we could not hear it: re-enter update mode and take
                // a fresh dump.
                self.transmit.push_back(Command::SendUpdateNice);
                self.transmit.push_back(Command::SendBoard);
                self.set_state(LinkState::Responding);
            }
            LinkState::Responding => {}
        }
    }

    /// Bytes arrived that were not part of a valid frame.
    pub fn on_garbage(&mut self, bytes: usize) {
        self.garbage_bytes = self.garbage_bytes.saturating_add(bytes);
    }

    /// Advance timers to `now`.
    pub fn tick(&mut self, now: Duration) {
        match self.state {
            LinkState::Initialising => {
                if now < self.opened_at + self.config.startup_delay {
                    return;
                }
                if self.due(self.last_probe, self.config.init_retry, now) {
                    self.last_probe = Some(now);
                    self.transmit.extend([
                        Command::SerialNumber,
                        Command::SendUpdateNice,
                        Command::Version,
                    ]);
                }
                if !self.reported_never_answered
                    && now >= self.opened_at + self.config.answer_timeout
                {
                    self.reported_never_answered = true;
                    self.events.push_back(LinkEvent::NeverAnswered {
                        garbage_bytes: self.garbage_bytes,
                    });
                }
            }
            LinkState::Responding | LinkState::NotResponding => {
                if self.due(self.last_probe, self.config.keepalive, now) {
                    self.last_probe = Some(now);
                    self.transmit.push_back(Command::SerialNumber);
                }
                let silent_since = self.last_frame.unwrap_or(self.opened_at);
                if self.state == LinkState::Responding
                    && now >= silent_since + self.config.silence_timeout
                {
                    self.set_state(LinkState::NotResponding);
                }
            }
        }
    }

    /// When `tick` next has something to do.
    pub fn next_deadline(&self) -> Duration {
        let probe_every = match self.state {
            LinkState::Initialising => self.config.init_retry,
            _ => self.config.keepalive,
        };
        let mut next = match self.last_probe {
            Some(at) => at + probe_every,
            None => self.opened_at + self.config.startup_delay,
        };
        if self.state == LinkState::Initialising && !self.reported_never_answered {
            next = next.min(self.opened_at + self.config.answer_timeout);
        }
        if self.state == LinkState::Responding {
            let silent_since = self.last_frame.unwrap_or(self.opened_at);
            next = next.min(silent_since + self.config.silence_timeout);
        }
        next
    }

    /// The next command to send to the board.
    pub fn poll_transmit(&mut self) -> Option<Command> {
        self.transmit.pop_front()
    }

    /// The next event for the owner.
    pub fn poll_event(&mut self) -> Option<LinkEvent> {
        self.events.pop_front()
    }

    fn due(&self, last: Option<Duration>, every: Duration, now: Duration) -> bool {
        last.is_none_or(|at| now >= at + every)
    }

    fn set_state(&mut self, state: LinkState) {
        if self.state != state {
            self.state = state;
            self.events.push_back(LinkEvent::State(state));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn drain(session: &mut LinkSession) -> Vec<Command> {
        std::iter::from_fn(|| session.poll_transmit()).collect()
    }

    #[test]
    fn waits_before_init_then_sends_identify_and_update_mode() {
        let mut s = LinkSession::new(LinkConfig::default(), ms(0));
        s.tick(ms(100));
        assert!(drain(&mut s).is_empty());
        s.tick(ms(300));
        assert_eq!(
            drain(&mut s),
            vec![
                Command::SerialNumber,
                Command::SendUpdateNice,
                Command::Version
            ]
        );
    }

    #[test]
    fn version_answer_makes_the_board_responding_and_requests_a_dump() {
        let mut s = LinkSession::new(LinkConfig::default(), ms(0));
        s.tick(ms(300));
        drain(&mut s);
        s.on_message(&Message::Version { major: 1, minor: 2 }, ms(350));
        assert_eq!(drain(&mut s), vec![Command::SendBoard]);
        assert_eq!(
            s.poll_event(),
            Some(LinkEvent::State(LinkState::Responding))
        );
    }

    #[test]
    fn init_is_retried_and_silence_is_reported_once() {
        let mut s = LinkSession::new(LinkConfig::default(), ms(0));
        s.on_garbage(7);
        let mut sent = 0;
        let mut now = ms(0);
        while now <= ms(12_000) {
            s.tick(now);
            sent += drain(&mut s).len();
            now = s.next_deadline().max(now + ms(1));
        }
        assert!(sent >= 3 * 5, "init resent every 2 s, sent {sent} commands");
        assert_eq!(
            s.poll_event(),
            Some(LinkEvent::NeverAnswered { garbage_bytes: 7 })
        );
        assert_eq!(s.poll_event(), None);
    }

    #[test]
    fn silent_board_is_not_responding_and_recovers_with_a_fresh_dump() {
        let mut s = LinkSession::new(LinkConfig::default(), ms(0));
        s.tick(ms(300));
        s.on_message(&Message::Version { major: 1, minor: 2 }, ms(310));
        drain(&mut s);
        s.poll_event();
        s.tick(ms(3_309));
        assert_eq!(s.state(), LinkState::Responding);
        s.tick(ms(3_310));
        assert_eq!(s.state(), LinkState::NotResponding);
        drain(&mut s);
        s.on_message(&Message::SerialNumber("12345".into()), ms(5_000));
        assert_eq!(s.state(), LinkState::Responding);
        assert_eq!(
            drain(&mut s),
            vec![Command::SendUpdateNice, Command::SendBoard]
        );
    }

    #[test]
    fn keepalive_probes_every_second_while_responding() {
        let mut s = LinkSession::new(LinkConfig::default(), ms(0));
        s.tick(ms(300));
        s.on_message(&Message::Version { major: 1, minor: 2 }, ms(310));
        drain(&mut s);
        let mut probes = 0;
        for t in (400..=4_400).step_by(50) {
            s.on_message(&Message::SerialNumber("1".into()), ms(t));
            s.tick(ms(t));
            probes += drain(&mut s)
                .iter()
                .filter(|c| **c == Command::SerialNumber)
                .count();
        }
        assert_eq!(probes, 4);
    }
}
