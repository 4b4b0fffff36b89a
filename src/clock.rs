//! The chess clock on a board: which side of the clock is White's, and each mover's
//! remaining time. Sans-IO: readings and moves come in with the time they happened.
//!
//! A DGT clock only knows left and right (reference §1.7). The colours follow from the
//! presses: when the running side switches from X to Y close in time to a recorded move,
//! X belongs to the player who just moved. Each such pairing is a vote, so one stray
//! press does not swap the colours for the rest of the game.

use std::collections::VecDeque;
use std::time::Duration;

use boardcast_protocol::{ClockTimes, SideTime};
use shakmaty::Color;

/// A press and a move this far apart in time are taken to belong together.
const PAIRING_WINDOW: Duration = Duration::from_secs(10);
/// A reading more than this above the previous one on the same side is junk (reference
/// §1.7: "times that jump upward by more than 1 h").
const MAX_JUMP_SECONDS: u32 = 3600;

/// A side of the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSide {
    /// The left display.
    Left,
    /// The right display.
    Right,
}

/// A clock annotation for a recorded move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveTime {
    /// The 1-based ply.
    pub ply: usize,
    /// `[%clk h:mm:ss]`.
    pub text: String,
}

/// A press of the clock: the side that pressed, when, and what its display then showed
/// (the mover's remaining time, increment included).
#[derive(Debug, Clone, Copy)]
struct Press {
    side: ClockSide,
    at: Duration,
    time: SideTime,
}

/// Presses kept waiting for their move; more than this means the record is far behind
/// the board, and the oldest are dropped.
const MAX_WAITING_PRESSES: usize = 8;

/// What the tracker knows of the clock.
#[derive(Debug, Clone, Default)]
pub struct ClockTracker {
    latest: Option<ClockTimes>,
    running: Option<ClockSide>,
    /// Positive: White sits on the left.
    white_left_votes: i32,
    /// Presses not yet matched with a move, oldest first. Both come in the order they
    /// happened, so the n-th waiting press belongs to the n-th move still to come, even
    /// when a fast reply is pressed before the first move is recorded.
    presses: VecDeque<Press>,
    /// The last recorded move, while it has no press yet.
    waiting_move: Option<(usize, Color, Duration)>,
}

impl ClockTracker {
    /// A reading from the clock at `now`. Returns the annotation for a recorded move
    /// whose press this reading shows.
    pub fn on_times(&mut self, times: &ClockTimes, now: Duration) -> Option<MoveTime> {
        if times.is_null() || !times.is_valid() || times.status.no_clock() {
            return None;
        }
        if let Some(previous) = &self.latest
            && (jumped(&previous.left, &times.left) || jumped(&previous.right, &times.right))
        {
            return None;
        }
        let was_running = self.latest.is_some_and(|t| t.status.running());
        self.latest = Some(*times);
        let running = if !times.status.running() {
            None
        } else if times.status.right_to_move() {
            Some(ClockSide::Right)
        } else if times.status.left_to_move() {
            Some(ClockSide::Left)
        } else {
            None
        };
        let mut note = None;
        if let (Some(before), Some(after)) = (self.running, running)
            && before != after
        {
            let press = Press {
                side: before,
                at: now,
                time: side_time(times, before),
            };
            if self.presses.len() == MAX_WAITING_PRESSES {
                self.presses.pop_front();
            }
            self.presses.push_back(press);
            note = self.pair();
        } else if was_running && !times.status.running() {
            // Stopped after the last move (no press): the mover's display is final.
            note = self.stopped();
        }
        if running.is_some() {
            self.running = running;
        }
        note
    }

    /// A move by `mover` was recorded at `ply` at `now`.
    pub fn on_move(&mut self, ply: usize, mover: Color, now: Duration) -> Option<MoveTime> {
        self.waiting_move = Some((ply, mover, now));
        let paired = self.pair();
        if paired.is_none() && self.latest.is_some_and(|t| !t.status.running()) {
            // The clock was stopped before this move was recorded (the game's last move).
            return self.stopped();
        }
        paired
    }

    /// The moves were taken back or replaced down to `ply` plies; forget a later move.
    pub fn on_retract(&mut self, ply: usize) {
        if self.waiting_move.is_some_and(|(p, _, _)| p > ply) {
            self.waiting_move = None;
        }
    }

    /// The side of the clock White sits on, once the presses have shown it.
    pub fn white_side(&self) -> Option<ClockSide> {
        match self.white_left_votes {
            0 => None,
            v if v > 0 => Some(ClockSide::Left),
            _ => Some(ClockSide::Right),
        }
    }

    /// The latest time of `color`, as `h:mm:ss`.
    pub fn time_of(&self, color: Color) -> Option<String> {
        let times = self.latest?;
        Some(format_time(&side_time(&times, self.side_of(color)?)))
    }

    /// The colour whose clock is running, once the sides are known; `None` while the
    /// clock is stopped.
    pub fn running(&self) -> Option<Color> {
        let times = self.latest?;
        if !times.status.running() {
            return None;
        }
        let running = self.running?;
        [Color::White, Color::Black]
            .into_iter()
            .find(|&color| self.side_of(color) == Some(running))
    }

    fn side_of(&self, color: Color) -> Option<ClockSide> {
        let white = self.white_side()?;
        Some(match (color, white) {
            (Color::White, side) => side,
            (Color::Black, ClockSide::Left) => ClockSide::Right,
            (Color::Black, ClockSide::Right) => ClockSide::Left,
        })
    }

    /// Matches the waiting move with the oldest waiting press close to it in time; the
    /// pair is a vote on the colours and gives the move its time.
    fn pair(&mut self) -> Option<MoveTime> {
        let (ply, mover, moved) = self.waiting_move?;
        while let Some(press) = self.presses.pop_front() {
            if press.at.abs_diff(moved) > PAIRING_WINDOW {
                // A press long before this move belongs to no recorded move.
                continue;
            }
            let white_left = (press.side == ClockSide::Left) == (mover == Color::White);
            self.white_left_votes += if white_left { 1 } else { -1 };
            self.waiting_move = None;
            return (self.side_of(mover) == Some(press.side)).then(|| note(ply, &press.time));
        }
        None
    }

    /// The clock stopped while a move waits for its press.
    fn stopped(&mut self) -> Option<MoveTime> {
        let (ply, mover, _) = self.waiting_move?;
        let time = side_time(&self.latest?, self.side_of(mover)?);
        self.waiting_move = None;
        Some(note(ply, &time))
    }
}

fn note(ply: usize, time: &SideTime) -> MoveTime {
    MoveTime {
        ply,
        text: format!("[%clk {}]", format_time(time)),
    }
}

fn side_time(times: &ClockTimes, side: ClockSide) -> SideTime {
    match side {
        ClockSide::Left => times.left,
        ClockSide::Right => times.right,
    }
}

fn jumped(before: &SideTime, after: &SideTime) -> bool {
    after.total_seconds() > before.total_seconds() + MAX_JUMP_SECONDS
}

fn format_time(time: &SideTime) -> String {
    format!("{}:{:02}:{:02}", time.hours, time.minutes, time.seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use boardcast_protocol::ClockStatus;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn t(total: u32) -> SideTime {
        SideTime {
            hours: (total / 3600) as u8,
            minutes: (total / 60 % 60) as u8,
            seconds: (total % 60) as u8,
            ..SideTime::default()
        }
    }

    fn reading(left: u32, right: u32, left_runs: bool) -> ClockTimes {
        let turn = if left_runs {
            ClockStatus::LEFT_TO_MOVE
        } else {
            ClockStatus::RIGHT_TO_MOVE
        };
        ClockTimes {
            left: t(left),
            right: t(right),
            status: ClockStatus(ClockStatus::RUNNING | turn),
        }
    }

    #[test]
    fn colours_follow_the_first_press_and_the_mover_gets_annotated() {
        let mut clock = ClockTracker::default();
        // White sits on the right here: the right clock runs first.
        assert_eq!(clock.on_times(&reading(5400, 5400, false), secs(0)), None);
        assert_eq!(clock.on_times(&reading(5400, 5390, false), secs(10)), None);
        assert_eq!(clock.on_move(1, Color::White, secs(11)), None);
        let note = clock.on_times(&reading(5400, 5420, true), secs(12));
        assert_eq!(clock.white_side(), Some(ClockSide::Right));
        assert_eq!(
            note,
            Some(MoveTime {
                ply: 1,
                text: "[%clk 1:30:20]".into()
            })
        );
        assert_eq!(clock.time_of(Color::Black).as_deref(), Some("1:30:00"));
    }

    #[test]
    fn a_press_before_the_move_is_recorded_pairs_too() {
        let mut clock = ClockTracker::default();
        clock.on_times(&reading(5400, 5400, true), secs(0));
        clock.on_times(&reading(5395, 5400, false), secs(5));
        let note = clock.on_move(1, Color::White, secs(5));
        assert_eq!(clock.white_side(), Some(ClockSide::Left));
        assert_eq!(
            note,
            Some(MoveTime {
                ply: 1,
                text: "[%clk 1:29:55]".into()
            })
        );
    }

    #[test]
    fn a_fast_reply_pressed_before_the_first_move_is_recorded_pairs_in_order() {
        let mut clock = ClockTracker::default();
        clock.on_times(&reading(600, 600, true), secs(0));
        clock.on_times(&reading(595, 600, false), secs(5));
        clock.on_move(1, Color::White, secs(5));
        // Black replies and presses, White replies and presses, before the engine has
        // recorded Black's move.
        clock.on_times(&reading(600, 603, true), secs(8));
        clock.on_times(&reading(604, 603, false), secs(9));
        let black = clock.on_move(2, Color::Black, secs(9));
        let white = clock.on_move(3, Color::White, secs(9));
        assert_eq!(
            black,
            Some(MoveTime {
                ply: 2,
                text: "[%clk 0:10:03]".into()
            })
        );
        assert_eq!(
            white,
            Some(MoveTime {
                ply: 3,
                text: "[%clk 0:10:04]".into()
            })
        );
        assert_eq!(clock.white_side(), Some(ClockSide::Left));
    }

    #[test]
    fn junk_readings_are_ignored() {
        let mut clock = ClockTracker::default();
        clock.on_times(&reading(600, 600, true), secs(0));
        let zero = ClockTimes::default();
        assert_eq!(clock.on_times(&zero, secs(1)), None);
        let mut no_clock = reading(0, 0, true);
        no_clock.status = ClockStatus(ClockStatus::NO_CLOCK);
        clock.on_times(&no_clock, secs(2));
        clock.on_times(&reading(600 + 3601, 600, true), secs(3));
        clock.on_times(&reading(590, 600, false), secs(4));
        clock.on_move(1, Color::White, secs(4));
        assert_eq!(clock.time_of(Color::White).as_deref(), Some("0:09:50"));
    }

    #[test]
    fn a_press_far_from_any_move_casts_no_vote() {
        let mut clock = ClockTracker::default();
        clock.on_times(&reading(600, 600, true), secs(0));
        clock.on_move(1, Color::White, secs(1));
        clock.on_times(&reading(590, 600, false), secs(30));
        assert_eq!(clock.white_side(), None);
    }
}
