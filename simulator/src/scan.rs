//! Scan model: the board's sensor reads squares in index order over one scan period and
//! reports the squares whose reading changed since the previous scan, in a random order.

use std::time::Duration;

use crate::codes::{reading, square_at};
use crate::rng::Rng;
use crate::timeline::Timeline;

/// Scanner settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanConfig {
    /// Duration of one full scan of the 64 squares.
    pub period: Duration,
    /// The board is turned 180°: hardware index i reads chess square 63 − i.
    pub rotated: bool,
    /// Occupancy-only sensor (Pegasus-like): codes 0/1 only.
    pub occupancy_only: bool,
}

impl Default for ScanConfig {
    fn default() -> Self {
        Self {
            period: Duration::from_millis(220),
            rotated: false,
            occupancy_only: false,
        }
    }
}

/// The scanner: back-to-back scans from time zero.
#[derive(Clone, Debug)]
pub struct Scanner {
    config: ScanConfig,
    start: Duration,
    last: [u8; 64],
    rng: Rng,
}

impl Scanner {
    /// A scanner whose first scan starts at `start`; `initial` is the reading it begins with.
    pub fn new(config: ScanConfig, initial: [u8; 64], start: Duration, rng: Rng) -> Self {
        let period = config.period.max(Duration::from_millis(1));
        Self {
            config: ScanConfig { period, ..config },
            start,
            last: initial,
            rng,
        }
    }

    /// The settings.
    pub fn config(&self) -> &ScanConfig {
        &self.config
    }

    /// Readings of the last completed scan, in hardware order.
    pub fn last(&self) -> &[u8; 64] {
        &self.last
    }

    /// Start of the scan in progress.
    pub fn scan_start(&self) -> Duration {
        self.start
    }

    /// End of the scan in progress.
    pub fn scan_end(&self) -> Duration {
        self.start + self.config.period
    }

    /// The instant at which hardware index `i` is read in the current scan.
    pub fn read_instant(&self, i: usize) -> Duration {
        self.start + self.config.period * i as u32 / 64
    }

    /// Run the scan in progress against the timeline. Returns the changed squares
    /// (hardware index, new code) in a seeded random order; the scan after it begins.
    pub fn scan(&mut self, timeline: &mut Timeline) -> Vec<(u8, u8)> {
        let mut now = [0u8; 64];
        for (i, r) in now.iter_mut().enumerate() {
            let t = self.read_instant(i);
            let code = timeline.read_at(t, square_at(i, self.config.rotated));
            *r = reading(code, self.config.occupancy_only);
        }
        let mut changes: Vec<(u8, u8)> = (0..64)
            .filter(|&i| now[i] != self.last[i])
            .map(|i| (i as u8, now[i]))
            .collect();
        if changes.len() > 1 {
            self.rng.shuffle(&mut changes);
        }
        self.last = now;
        self.start += self.config.period;
        changes
    }

    /// Skip whole scans that cannot change anything, so the scan in progress contains `t`.
    pub fn skip_idle_until(&mut self, t: Duration) {
        if t >= self.scan_end() {
            let n = (t - self.start).as_nanos() / self.config.period.as_nanos();
            self.start += self.config.period * n as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::{Physical, index_of};
    use crate::handling::Action;
    use shakmaty::{Board, Square};

    fn start_timeline() -> Timeline {
        Timeline::new(Physical::from_board(&Board::default()))
    }

    fn scanner(rotated: bool, occupancy_only: bool, seed: u64) -> (Scanner, Timeline) {
        let tl = start_timeline();
        let cfg = ScanConfig {
            period: Duration::from_millis(200),
            rotated,
            occupancy_only,
        };
        let init = tl.board().to_hardware(rotated, occupancy_only);
        (Scanner::new(cfg, init, Duration::ZERO, Rng::new(seed)), tl)
    }

    #[test]
    fn lift_and_place_within_one_scan_show_both_squares() {
        let (mut sc, mut tl) = scanner(false, false, 1);
        // e2 (index 52) is read at 162.5 ms, e4 (index 36) at 112.5 ms. Lift e2 at 10 ms,
        // place on e4 at 50 ms: both read in the first scan.
        tl.schedule(Duration::from_millis(10), Action::Lift(Square::E2));
        tl.schedule(Duration::from_millis(50), Action::Place(Square::E4, 1));
        let mut changes = sc.scan(&mut tl);
        changes.sort();
        assert_eq!(changes, vec![(36, 1), (52, 0)]);
        assert!(sc.scan(&mut tl).is_empty());
    }

    #[test]
    fn piece_seen_on_two_squares_in_one_scan() {
        let (mut sc, mut tl) = scanner(false, false, 1);
        // Black e7 (index 12, read at 37.5 ms) to e5 (index 28, read at 87.5 ms): lifted at
        // 50 ms (after e7 was read), placed at 80 ms (before e5 is read). The first scan
        // shows the pawn on both squares (new square reported first), the next one e7 empty.
        tl.schedule(Duration::from_millis(50), Action::Lift(Square::E7));
        tl.schedule(Duration::from_millis(80), Action::Place(Square::E5, 7));
        assert_eq!(sc.scan(&mut tl), vec![(28, 7)]);
        assert_eq!(sc.scan(&mut tl), vec![(12, 0)]);
    }

    #[test]
    fn report_order_is_seeded() {
        let orders: Vec<Vec<(u8, u8)>> = (0..8)
            .map(|seed| {
                let (mut sc, mut tl) = scanner(false, false, seed);
                for f in [Square::A2, Square::B2, Square::C2, Square::D2, Square::E2] {
                    tl.schedule(Duration::ZERO, Action::Lift(f));
                }
                sc.scan(&mut tl)
            })
            .collect();
        // Same seed, same order.
        let (mut sc, mut tl) = scanner(false, false, 3);
        for f in [Square::A2, Square::B2, Square::C2, Square::D2, Square::E2] {
            tl.schedule(Duration::ZERO, Action::Lift(f));
        }
        assert_eq!(sc.scan(&mut tl), orders[3]);
        // Different seeds give more than one order.
        assert!(orders.iter().any(|o| o != &orders[0]));
        for o in &orders {
            let mut s = o.clone();
            s.sort();
            assert_eq!(s, vec![(48, 0), (49, 0), (50, 0), (51, 0), (52, 0)]);
        }
    }

    #[test]
    fn rotated_and_occupancy_only() {
        let (mut sc, mut tl) = scanner(true, true, 1);
        assert_eq!(sc.last()[0], 1); // h1 rook, occupancy only
        assert_eq!(sc.last()[63], 1); // a8 rook
        assert_eq!(sc.last()[20], 0);
        tl.schedule(Duration::ZERO, Action::Lift(Square::E2));
        assert_eq!(
            sc.scan(&mut tl),
            vec![(index_of(Square::E2, true) as u8, 0)]
        );
        assert_eq!(index_of(Square::E2, true), 63 - 52);
    }

    #[test]
    fn misread_lasts_one_scan() {
        let (mut sc, mut tl) = scanner(false, false, 1);
        tl.schedule(Duration::ZERO, Action::Misread(Square::D1, 2));
        assert_eq!(sc.scan(&mut tl), vec![(59, 2)]);
        assert_eq!(sc.scan(&mut tl), vec![(59, 6)]);
        assert!(sc.scan(&mut tl).is_empty());
    }
}
