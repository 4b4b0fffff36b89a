//! A DGT 3000 clock attached to the board: two running times, a lever, SetAndRun.

use std::time::Duration;

use boardcast_protocol::{ClockStatus, ClockTimes, SideTime};

/// Settings of the attached clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockConfig {
    /// Starting time of each side.
    pub initial: Duration,
    /// Fischer increment added when a player presses the lever.
    pub increment: Duration,
    /// White sits on the left of the clock (DGT's default arrangement).
    pub white_on_left: bool,
    /// Version reported by the clock version ack (major 2 = DGT 3000).
    pub version: (u8, u8),
}

impl Default for ClockConfig {
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(90 * 60),
            increment: Duration::from_secs(30),
            white_on_left: true,
            version: (2, 2),
        }
    }
}

/// A side of the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The left display.
    Left,
    /// The right display.
    Right,
}

/// The clock state in simulated time.
#[derive(Clone, Debug)]
pub struct Clock {
    config: ClockConfig,
    left: Duration,
    right: Duration,
    /// Time at which `left`/`right` were last brought up to date.
    since: Duration,
    /// The side whose time runs (or would run when not paused).
    to_move: Option<Side>,
    running: bool,
}

impl Clock {
    /// A stopped clock showing the initial times.
    pub fn new(config: ClockConfig) -> Self {
        Self {
            config,
            left: config.initial,
            right: config.initial,
            since: Duration::ZERO,
            to_move: None,
            running: false,
        }
    }

    /// The settings.
    pub fn config(&self) -> &ClockConfig {
        &self.config
    }

    /// The side of a colour (`white` true for White).
    pub fn side_of(&self, white: bool) -> Side {
        if white == self.config.white_on_left {
            Side::Left
        } else {
            Side::Right
        }
    }

    fn settle(&mut self, now: Duration) {
        if now <= self.since {
            return;
        }
        let elapsed = now - self.since;
        if self.running {
            match self.to_move {
                Some(Side::Left) => self.left = self.left.saturating_sub(elapsed),
                Some(Side::Right) => self.right = self.right.saturating_sub(elapsed),
                None => {}
            }
        }
        self.since = now;
    }

    /// Start the clock for a side.
    pub fn start(&mut self, now: Duration, side: Side) {
        self.settle(now);
        self.to_move = Some(side);
        self.running = true;
    }

    /// The player on `side` presses the lever: their time stops (plus increment) and the
    /// other side's starts.
    pub fn press(&mut self, now: Duration, side: Side) {
        self.settle(now);
        let flagged = |d: Duration| d.is_zero();
        match side {
            Side::Left if !flagged(self.left) => self.left += self.config.increment,
            Side::Right if !flagged(self.right) => self.right += self.config.increment,
            _ => {}
        }
        self.to_move = Some(match side {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        });
        self.running = true;
    }

    /// Stop the clock (end of the game).
    pub fn stop(&mut self, now: Duration) {
        self.settle(now);
        self.running = false;
    }

    /// SetAndRun: plain binary (h, m, s) for each side; flags 0x01 left running,
    /// 0x02 right running, 0x04 paused.
    pub fn set_and_run(
        &mut self,
        now: Duration,
        left: (u8, u8, u8),
        right: (u8, u8, u8),
        flags: u8,
    ) {
        self.settle(now);
        let secs = |(h, m, s): (u8, u8, u8)| {
            Duration::from_secs(u64::from(h & 0x0F) * 3600 + u64::from(m) * 60 + u64::from(s))
        };
        self.left = secs(left);
        self.right = secs(right);
        self.to_move = if flags & 0x01 != 0 {
            Some(Side::Left)
        } else if flags & 0x02 != 0 {
            Some(Side::Right)
        } else {
            None
        };
        self.running = self.to_move.is_some() && flags & 0x04 == 0;
    }

    fn remaining(&self, now: Duration, side: Side) -> Duration {
        let base = match side {
            Side::Left => self.left,
            Side::Right => self.right,
        };
        if self.running && self.to_move == Some(side) && now > self.since {
            base.saturating_sub(now - self.since)
        } else {
            base
        }
    }

    /// The BWTIME reading at `now` (times shown rounded down to whole seconds).
    pub fn times(&self, now: Duration) -> ClockTimes {
        let side_time = |d: Duration| {
            let s = d.as_secs().min(9 * 3600 + 59 * 60 + 59);
            SideTime {
                hours: (s / 3600) as u8,
                minutes: (s / 60 % 60) as u8,
                seconds: (s % 60) as u8,
                flag_fallen: d.is_zero(),
                time_per_move: !self.config.increment.is_zero(),
                flag_shown: d.is_zero(),
            }
        };
        let left = self.remaining(now, Side::Left);
        let right = self.remaining(now, Side::Right);
        let mut status = 0;
        let ticking = self.running
            && !self
                .remaining(now, self.to_move.unwrap_or(Side::Left))
                .is_zero();
        if ticking {
            status |= ClockStatus::RUNNING;
        }
        match self.to_move {
            Some(Side::Right) => {
                status |= ClockStatus::RIGHT_TO_MOVE | ClockStatus::RIGHT_LEVER_HIGH
            }
            Some(Side::Left) => status |= ClockStatus::LEFT_TO_MOVE,
            None => {}
        }
        ClockTimes {
            right: side_time(right),
            left: side_time(left),
            status: ClockStatus(status),
        }
    }

    /// When the reading next changes by itself (the running side's seconds tick down).
    pub fn next_change(&self, now: Duration) -> Option<Duration> {
        if !self.running {
            return None;
        }
        let rem = self.remaining(now, self.to_move?);
        if rem.is_zero() {
            return None;
        }
        // The shown value floor(rem) changes when rem drops below its current whole second.
        let frac = rem - Duration::from_secs(rem.as_secs());
        Some(now + frac + Duration::from_nanos(if frac.is_zero() { 1 } else { 0 }))
    }
}

/// The BWTIME reading sent when no clock is connected: times 0, p6 bit 5.
pub fn no_clock_times() -> ClockTimes {
    ClockTimes {
        status: ClockStatus(ClockStatus::NO_CLOCK),
        ..ClockTimes::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_presses_and_ticks() {
        let cfg = ClockConfig {
            initial: Duration::from_secs(65),
            increment: Duration::ZERO,
            ..Default::default()
        };
        let mut c = Clock::new(cfg);
        c.start(Duration::ZERO, Side::Left);
        let t = c.times(Duration::from_millis(1500));
        assert_eq!((t.left.minutes, t.left.seconds), (1, 3));
        assert_eq!((t.right.minutes, t.right.seconds), (1, 5));
        assert!(t.status.running() && t.status.left_to_move());
        assert_eq!(
            c.next_change(Duration::from_millis(1500)),
            Some(Duration::from_millis(2000))
        );
        c.press(Duration::from_secs(5), Side::Left);
        let t = c.times(Duration::from_secs(10));
        assert_eq!(t.left.seconds, 0);
        assert_eq!(t.right.seconds, 0);
        assert_eq!(t.right.minutes, 1);
        assert!(t.status.right_to_move());
    }

    #[test]
    fn set_and_run_is_honoured() {
        let mut c = Clock::new(ClockConfig::default());
        c.set_and_run(Duration::ZERO, (0, 5, 0), (1, 2, 3), 0x02);
        let t = c.times(Duration::from_secs(3));
        assert_eq!((t.left.hours, t.left.minutes, t.left.seconds), (0, 5, 0));
        assert_eq!((t.right.hours, t.right.minutes, t.right.seconds), (1, 2, 0));
        c.set_and_run(Duration::from_secs(3), (0, 5, 0), (1, 2, 3), 0x04);
        assert!(!c.times(Duration::from_secs(4)).status.running());
        assert_eq!(c.next_change(Duration::from_secs(4)), None);
    }
}
