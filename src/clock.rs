//! The chess clock on a board: which side of the clock is White's, and each mover's
//! remaining time. Sans-IO: readings and moves come in with the time they happened.
//!
//! A DGT clock only knows left and right (reference §1.7). The colours follow from the
//! presses: when the running side switches from X to Y close in time to a recorded move,
//! X belongs to the player who just moved. Each such pairing is a vote, so one stray
//! press does not swap the colours for the rest of the game.
//!
//! Presses can mislead (a clock started on the wrong side and switched before the first
//! move, a press read with the wrong move), and once the colours are known they alone
//! would never be corrected: a press of the other side is not paired. So the clock is
//! also watched while nothing happens: the side that has run on its own for a while, after
//! a move that got its press, is the side to move's. These steady readings, one a move,
//! decide the colours once there are any.
//!
//! Presses can go unseen: a bus board's clock is read once a second, so a move and its
//! reply pressed between two readings show no switch, and nothing is read while the
//! link is down or the daemon restarts. Once the colours are known, a press is therefore
//! only paired with a move of the player on the pressed side (a move whose own press
//! went unseen would otherwise take the other player's, and every move after it the
//! press of the move before), and a reading that shows the clock running on the other
//! side of a move still waiting for its press shows that press was made.

use std::collections::VecDeque;
use std::time::Duration;

use boardcast_protocol::{ClockTimes, SideTime};
use shakmaty::Color;

/// A press and a move this far apart in time are taken to belong together.
const PAIRING_WINDOW: Duration = Duration::from_secs(10);
/// A side that has run this long, with no move recorded meanwhile, is the side to
/// move's: longer than a press takes after its move, or a move's recording after its
/// press.
const STEADY: Duration = Duration::from_secs(5);
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
    /// Positive: White sits on the left (pairings of presses with moves).
    white_left_votes: i32,
    /// Positive: White sits on the left (steady readings: see `steady`). They decide
    /// when there are any.
    steady_white_left_votes: i32,
    /// Since when the running side has been read running, with no switch and no gap.
    running_since: Option<Duration>,
    /// The last recorded move: its ply, its mover, when.
    last_move: Option<(usize, Color, Duration)>,
    /// The ply of the move after which a steady reading was last counted.
    steady_ply: Option<usize>,
    /// Presses not yet matched with a move, oldest first. Both come in the order they
    /// happened, so the n-th waiting press belongs to the n-th move still to come, even
    /// when a fast reply is pressed before the first move is recorded.
    presses: VecDeque<Press>,
    /// The last recorded move has no press yet (see `waiting_move`).
    waiting: bool,
    /// The clock was read stopped (this game, or when the last one gave way to it).
    read_stopped: bool,
    /// The clock was read starting this game: running after being read stopped.
    started: bool,
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
        if times.status.running() {
            self.started |= self.read_stopped;
        } else {
            self.read_stopped = true;
        }
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
        } else if let Some(after) = running {
            note = self.pressed_unseen(after, times);
        }
        match running {
            Some(_) if running == self.running && self.running_since.is_some() => {}
            _ => self.running_since = running.map(|_| now),
        }
        if running.is_some() {
            self.running = running;
        }
        self.steady(now);
        note
    }

    /// A reading at `now` with the clock running on the same side since `running_since`:
    /// if that has lasted [`STEADY`] since the last recorded move too, and that move's
    /// press was seen, the running side is the side to move's. Counted once a move.
    ///
    /// Not while the last move waits for its press: its mover may have forgotten to
    /// press (or the game ended on it), and the clock then runs on the mover's side.
    fn steady(&mut self, now: Duration) {
        let (Some(side), Some(since), Some((ply, mover, at))) =
            (self.running, self.running_since, self.last_move)
        else {
            return;
        };
        if self.waiting
            || self.steady_ply == Some(ply)
            || now.saturating_sub(since) < STEADY
            || now.saturating_sub(at) < STEADY
        {
            return;
        }
        self.steady_ply = Some(ply);
        self.steady_white_left_votes += white_left_vote(side, mover.other());
    }

    /// A new game: the colours and presses start afresh. Whether the clock was stopped
    /// when it began carries over, so that its start for this game is told from a clock
    /// still running from the last one.
    pub fn new_game(&mut self) {
        let stopped = self.latest.is_some_and(|t| !t.status.running());
        *self = ClockTracker {
            read_stopped: stopped,
            ..ClockTracker::default()
        };
    }

    /// A move by `mover` was recorded at `ply` at `now`.
    pub fn on_move(&mut self, ply: usize, mover: Color, now: Duration) -> Option<MoveTime> {
        if ply == 1 {
            self.first_mover_ran(mover);
        }
        self.last_move = Some((ply, mover, now));
        self.waiting = true;
        let paired = self.pair();
        if paired.is_none() && self.latest.is_some_and(|t| !t.status.running()) {
            // The clock was stopped before this move was recorded (the game's last move).
            return self.stopped();
        }
        paired
    }

    /// The game's first move was recorded: until it was pressed, the clock ran on its
    /// mover's side (the Laws, Art. 6.5: White's clock is started when the game starts;
    /// a set-up position's first mover's likewise). That is a vote on the colours, cast
    /// before the first presses, which a clock read once a second may miss (a move and
    /// its reply pressed between two readings): the presses after them then pair only
    /// with moves of their own side (see `pair`), not one move late for the whole game.
    ///
    /// Only when the clock was read starting this game: one running since before (never
    /// read stopped, or left running from the last game) may run on either side.
    fn first_mover_ran(&mut self, mover: Color) {
        if !self.started || !self.latest.is_some_and(|t| t.status.running()) {
            return;
        }
        // A switch read before the move was recorded is the mover's press: the side it
        // left is the one that ran.
        let ran = self
            .presses
            .front()
            .map(|press| press.side)
            .or(self.running);
        if let Some(side) = ran {
            self.vote(side, mover);
        }
    }

    /// Nothing was read for a while (the link went down, the daemon restarted): the
    /// next reading tells which side runs, not that a side pressed when it did, and a
    /// switch it shows may span several moves. Presses unseen meanwhile show in the
    /// readings that follow (see `pressed_unseen`).
    pub fn unread(&mut self) {
        self.running = None;
        self.running_since = None;
    }

    /// The moves were taken back or replaced down to `ply` plies; forget a later move.
    pub fn on_retract(&mut self, ply: usize) {
        // The move now last was recorded earlier: until the next one, none waits for its
        // press and no steady reading counts.
        if self.last_move.is_some_and(|(p, _, _)| p > ply) {
            self.last_move = None;
        }
    }

    /// The side of the clock White sits on, once the readings have shown it: the steady
    /// readings', if any, else the presses'.
    pub fn white_side(&self) -> Option<ClockSide> {
        let votes = match self.steady_white_left_votes {
            0 => self.white_left_votes,
            steady => steady,
        };
        match votes {
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
    ///
    /// Once the colours are known, a press of the other player's side is never the
    /// move's. Read before the move was recorded, it is an earlier move's (or a stray
    /// press) and is dropped. Read after, the other player pressed after the mover did:
    /// the mover's press went unseen, and this one waits for the other player's move
    /// still to be recorded.
    fn pair(&mut self) -> Option<MoveTime> {
        let (ply, mover, moved) = self.waiting_move()?;
        while let Some(press) = self.presses.pop_front() {
            if press.at.abs_diff(moved) > PAIRING_WINDOW {
                // A press long before this move belongs to no recorded move.
                continue;
            }
            if self.side_of(mover).is_some_and(|side| side != press.side) {
                if press.at > moved {
                    self.waiting = false;
                    self.presses.push_front(press);
                    return None;
                }
                continue;
            }
            self.vote(press.side, mover);
            self.waiting = false;
            return (self.side_of(mover) == Some(press.side)).then(|| note(ply, &press.time));
        }
        None
    }

    /// The last recorded move, while it has no press yet.
    fn waiting_move(&self) -> Option<(usize, Color, Duration)> {
        self.last_move.filter(|_| self.waiting)
    }

    /// A vote that `side` is `mover`'s.
    fn vote(&mut self, side: ClockSide, mover: Color) {
        self.white_left_votes += white_left_vote(side, mover);
    }

    /// A reading at which the clock runs on side `running`, with no switch since the
    /// last one: if a move waits for its press and its mover's side is not `running`
    /// (the colours known), the mover pressed unseen, after the move (before it, the
    /// mover's side ran), and its display has stood since: that is the move's time.
    fn pressed_unseen(&mut self, running: ClockSide, times: &ClockTimes) -> Option<MoveTime> {
        let (ply, mover, _) = self.waiting_move()?;
        let side = self.side_of(mover)?;
        if side == running {
            return None;
        }
        self.waiting = false;
        Some(note(ply, &side_time(times, side)))
    }

    /// The clock stopped while a move waits for its press.
    fn stopped(&mut self) -> Option<MoveTime> {
        let (ply, mover, _) = self.waiting_move()?;
        let time = side_time(&self.latest?, self.side_of(mover)?);
        self.waiting = false;
        Some(note(ply, &time))
    }
}

/// A vote that `side` is `color`'s: +1 for White on the left, -1 for White on the right.
fn white_left_vote(side: ClockSide, color: Color) -> i32 {
    if (side == ClockSide::Left) == (color == Color::White) {
        1
    } else {
        -1
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

    fn stopped(left: u32, right: u32) -> ClockTimes {
        let mut times = reading(left, right, true);
        times.status = ClockStatus(0);
        times
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

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn clk(ply: usize, text: &str) -> Option<MoveTime> {
        Some(MoveTime {
            ply,
            text: format!("[%clk {text}]"),
        })
    }

    /// A tracker that paired both players' first moves with their presses (White on
    /// the left, 10 min + 5 s), White's clock running after Black's first press.
    fn colours_known() -> ClockTracker {
        let mut clock = ClockTracker::default();
        clock.on_times(&reading(600, 600, true), ms(0));
        clock.on_move(1, Color::White, ms(1000));
        assert_eq!(
            clock.on_times(&reading(605, 600, false), ms(1500)),
            clk(1, "0:10:05")
        );
        clock.on_move(2, Color::Black, ms(2500));
        assert_eq!(
            clock.on_times(&reading(605, 603, true), ms(3000)),
            clk(2, "0:10:03")
        );
        assert_eq!(clock.white_side(), Some(ClockSide::Left));
        clock
    }

    #[test]
    fn a_move_whose_press_went_unseen_does_not_take_the_other_players_press() {
        let mut clock = colours_known();
        // White's 3rd and Black's 4th are both pressed between two readings (a bus
        // clock is read once a second): no switch is seen.
        assert_eq!(clock.on_move(3, Color::White, ms(4000)), None);
        assert_eq!(clock.on_times(&reading(607, 606, true), ms(5000)), None);
        assert_eq!(clock.on_move(4, Color::Black, ms(5200)), None);
        // White's 5th is pressed before the engine records it: the press is White's,
        // not the last recorded move's (Black's).
        assert_eq!(clock.on_times(&reading(611, 606, false), ms(6000)), None);
        assert_eq!(clock.on_move(5, Color::White, ms(6200)), clk(5, "0:10:11"));
        assert_eq!(clock.on_times(&reading(611, 610, true), ms(7000)), None);
        assert_eq!(clock.on_move(6, Color::Black, ms(7200)), clk(6, "0:10:10"));
        assert_eq!(clock.white_side(), Some(ClockSide::Left));
    }

    #[test]
    fn the_first_moves_pressed_unseen_leave_the_colours_known_from_the_side_that_ran() {
        let mut clock = ClockTracker::default();
        // The clock is set, then started: White's clock runs (on the left).
        clock.on_times(&stopped(600, 600), ms(0));
        clock.on_times(&reading(600, 600, true), ms(500));
        // White's 1st and Black's 2nd are both pressed between two readings.
        assert_eq!(clock.on_move(1, Color::White, ms(1000)), None);
        assert_eq!(clock.on_move(2, Color::Black, ms(1500)), None);
        // The left runs again: Black pressed, its display stands at Black's time.
        assert_eq!(
            clock.on_times(&reading(605, 603, true), ms(2000)),
            clk(2, "0:10:03")
        );
        // White's 3rd is pressed and read before the engine records it: White's press.
        assert_eq!(clock.on_times(&reading(608, 603, false), ms(3300)), None);
        assert_eq!(clock.on_move(3, Color::White, ms(3500)), clk(3, "0:10:08"));
        assert_eq!(clock.white_side(), Some(ClockSide::Left));
    }

    #[test]
    fn a_clock_not_read_starting_the_game_casts_no_vote_at_its_first_move() {
        // Stopped when the first move is made.
        let mut clock = ClockTracker::default();
        clock.on_times(&stopped(600, 600), ms(0));
        clock.on_times(&reading(600, 600, false), ms(500));
        clock.on_times(&stopped(600, 598), ms(2500));
        clock.on_move(1, Color::White, ms(3000));
        assert_eq!(clock.white_side(), None);
        // Running since before it was first read.
        let mut clock = ClockTracker::default();
        clock.on_times(&reading(600, 590, false), ms(0));
        clock.on_move(1, Color::White, ms(1000));
        assert_eq!(clock.white_side(), None);
        // Left running from the last game (on the side that was to move there).
        let mut clock = ClockTracker::default();
        clock.on_times(&stopped(600, 600), ms(0));
        clock.on_times(&reading(600, 600, true), ms(500));
        clock.on_times(&reading(540, 600, false), ms(60_000));
        clock.new_game();
        clock.on_times(&reading(540, 580, false), ms(80_000));
        clock.on_move(1, Color::White, ms(81_000));
        assert_eq!(clock.white_side(), None);
        // Stopped at the end of the last game and started for this one: it votes.
        clock.on_times(&stopped(540, 570), ms(90_000));
        clock.new_game();
        clock.on_times(&reading(600, 600, false), ms(100_000));
        clock.on_move(1, Color::White, ms(101_000));
        assert_eq!(clock.white_side(), Some(ClockSide::Right));
    }

    #[test]
    fn a_press_made_while_nothing_was_read_shows_in_the_next_reading() {
        let mut clock = colours_known();
        // White's 3rd is recorded; the daemon goes away before its press is read.
        clock.on_move(3, Color::White, ms(4000));
        clock.unread();
        // Meanwhile White pressed, and Black played and pressed: White's side runs
        // again, as it did before, and Black's display stands at Black's time.
        assert_eq!(clock.on_move(4, Color::Black, ms(9000)), None);
        assert_eq!(
            clock.on_times(&reading(607, 606, true), ms(9500)),
            clk(4, "0:10:06")
        );
        // The next press is White's 5th's.
        assert_eq!(clock.on_times(&reading(611, 606, false), ms(10500)), None);
        assert_eq!(clock.on_move(5, Color::White, ms(10700)), clk(5, "0:10:11"));
    }

    #[test]
    fn a_switch_read_across_a_gap_is_no_press_of_the_last_move() {
        let mut clock = colours_known();
        clock.unread();
        // While nothing was read White played and pressed, and Black played but has
        // not pressed yet: the switch from before the gap is White's press, not Black's.
        clock.on_move(3, Color::White, ms(9000));
        clock.on_move(4, Color::Black, ms(9000));
        assert_eq!(clock.on_times(&reading(608, 603, false), ms(9500)), None);
        assert_eq!(
            clock.on_times(&reading(608, 606, true), ms(10000)),
            clk(4, "0:10:06")
        );
        assert_eq!(clock.white_side(), Some(ClockSide::Left));
    }

    #[test]
    fn a_press_far_from_any_move_casts_no_vote() {
        let mut clock = ClockTracker::default();
        clock.on_times(&reading(600, 600, true), secs(0));
        // Mid-game (the game's first move would vote for the side that ran before it).
        clock.on_move(7, Color::White, secs(1));
        clock.on_times(&reading(590, 600, false), secs(30));
        assert_eq!(clock.white_side(), None);
    }

    #[test]
    fn a_clock_started_on_the_wrong_side_is_put_right_by_the_side_that_runs_steadily() {
        let mut clock = ClockTracker::default();
        // White sits on the left. The clock is started on the right by mistake and
        // switched at once: read as a press of the right before White's first move.
        clock.on_times(&stopped(600, 600), ms(0));
        clock.on_times(&reading(600, 600, false), ms(500));
        clock.on_times(&reading(600, 599, true), ms(1500));
        clock.on_move(1, Color::White, ms(3000));
        assert_eq!(clock.white_side(), Some(ClockSide::Right));
        // White presses; Black thinks: the right runs on its own, after a move whose
        // press was read.
        clock.on_times(&reading(603, 599, false), ms(4000));
        for second in 5u32..=12 {
            clock.on_times(&reading(603, 599 + 4 - second, false), secs(second.into()));
        }
        assert_eq!(clock.white_side(), Some(ClockSide::Left));
        // Black's move gets Black's time (the right display), not White's.
        clock.on_move(2, Color::Black, secs(24));
        assert_eq!(
            clock.on_times(&reading(603, 580, true), secs(25)),
            clk(2, "0:09:40")
        );
    }

    #[test]
    fn a_move_not_pressed_casts_no_steady_vote() {
        let mut clock = colours_known();
        // White moves and forgets to press: White's side (the left) runs on.
        clock.on_move(3, Color::White, ms(4000));
        for second in 5u32..=30 {
            clock.on_times(&reading(605 + 3 - second, 603, true), secs(second.into()));
        }
        assert_eq!(clock.white_side(), Some(ClockSide::Left));
    }
}
