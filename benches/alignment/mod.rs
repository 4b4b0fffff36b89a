//! The soak's second count: the record aligned with the source (a longest common
//! subsequence of their plies, each a move in a position), so one missing stretch counts
//! its own plies only, and each stretch of source plies the record lacks classified:
//! invisible when no board reading could have shown it (a round trip of which the
//! daemon read nothing but pieces lifted, as while the link or the daemon was down), or
//! why not.

use std::time::Duration;

/// What a missing stretch is: invisible, or why not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The placement after its last ply is the one before its first, the record goes on
    /// with the source's moves after it, and every board read from the end of the ply
    /// before it until the placement after it was read is the placement before it with
    /// pieces lifted: the daemon's readings are those of the game without it. `first`
    /// and `last` are the stretch's plies (0-based), shifted to where a repetition of
    /// moves allows it.
    Invisible { first: usize, last: usize },
    /// The record has other moves in its place.
    Replaced,
    /// Some of its plies were never made on the board (the game was given up first).
    NeverMade,
    /// A board read while it was played shows one of its plies.
    Seen,
    /// The placement after its last ply is not the one before its first (or the one
    /// before is not known: the game's first ply).
    NotRoundTrip,
}

/// A stretch of source plies (0-based, inclusive) the record lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stretch {
    pub first: usize,
    pub last: usize,
    pub verdict: Verdict,
}

impl Stretch {
    pub fn plies(&self) -> usize {
        self.last + 1 - self.first
    }
}

/// The record against the source.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Alignment {
    /// Source plies the record lacks, in stretches.
    pub missing: Vec<Stretch>,
    /// Recorded plies that match no source ply.
    pub not_played: usize,
}

impl Alignment {
    pub fn missing_plies(&self) -> usize {
        self.missing.iter().map(Stretch::plies).sum()
    }

    /// The invisible stretches' plies.
    pub fn invisible_plies(&self) -> usize {
        let invisible = |s: &&Stretch| matches!(s.verdict, Verdict::Invisible { .. });
        self.missing
            .iter()
            .filter(invisible)
            .map(Stretch::plies)
            .sum()
    }
}

/// Aligns `record` with `source` (plies as keys: a move and the position it is made in, so
/// a ply is matched only where it is the same move in the same position) and classifies
/// each missing stretch. `made[i]` is when source ply `i` was finished on the board and
/// the board after it, as the board reads it (a character a square, `.` for an empty
/// one; shorter when the game ended before all were made); `readings` every board the
/// daemon read in the game, in order, with when; `lag` the longest a change on the board
/// takes to be read.
pub fn align<K: PartialEq>(
    source: &[K],
    record: &[K],
    made: &[(Duration, String)],
    readings: &[(Duration, String)],
    lag: Duration,
) -> Alignment {
    let matched = common_subsequence(source, record);
    let mut source_matched = vec![false; source.len()];
    for &(s, _) in &matched {
        source_matched[s] = true;
    }
    let mut alignment = Alignment {
        not_played: record.len() - matched.len(),
        ..Alignment::default()
    };
    // The stretches between consecutive matched pairs (and before the first and after
    // the last), each with the recorded plies in its place.
    let ends = matched
        .iter()
        .copied()
        .chain([(source.len(), record.len())]);
    let mut next = (0, 0);
    for (s, r) in ends {
        if s > next.0 {
            let (first, last) = (next.0, s - 1);
            let verdict = match r > next.1 {
                true => Verdict::Replaced,
                false => classify(
                    (first, last),
                    source,
                    &source_matched,
                    (made, readings, lag),
                ),
            };
            alignment.missing.push(Stretch {
                first,
                last,
                verdict,
            });
        }
        next = (s + 1, r + 1);
    }
    alignment
}

/// The matched (source, record) index pairs of a longest common subsequence, in order.
fn common_subsequence<K: PartialEq>(source: &[K], record: &[K]) -> Vec<(usize, usize)> {
    let width = record.len() + 1;
    // `longest[i * width + r]`: the longest common subsequence of `source[i..]` and
    // `record[r..]`.
    let mut longest = vec![0u32; (source.len() + 1) * width];
    for i in (0..source.len()).rev() {
        for r in (0..record.len()).rev() {
            longest[i * width + r] = match source[i] == record[r] {
                true => longest[(i + 1) * width + r + 1] + 1,
                false => longest[(i + 1) * width + r].max(longest[i * width + r + 1]),
            };
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut r) = (0, 0);
    while i < source.len() && r < record.len() {
        if source[i] == record[r] {
            pairs.push((i, r));
            i += 1;
            r += 1;
        } else if longest[(i + 1) * width + r] >= longest[i * width + r + 1] {
            i += 1;
        } else {
            r += 1;
        }
    }
    pairs
}

/// Whether a stretch the record simply lacks is invisible. Where the players repeated
/// moves, the same record is the source without the stretch shifted back (the ply before
/// it the same as its last): each such place is tried, and the reason given when none is
/// invisible is the stretch's own. (The alignment matches each recorded ply with the
/// earliest source ply it can, so no stretch can shift forward.)
fn classify<K: PartialEq>(
    (first, last): (usize, usize),
    source: &[K],
    source_matched: &[bool],
    board: Board,
) -> Verdict {
    let mut places = vec![(first, last)];
    let (mut a, mut b) = (first, last);
    while a > 0 && source_matched[a - 1] && source[a - 1] == source[b] {
        (a, b) = (a - 1, b - 1);
        places.push((a, b));
    }
    let verdicts: Vec<Verdict> = places
        .into_iter()
        .map(|place| window(place, board))
        .collect();
    verdicts
        .iter()
        .copied()
        .find(|v| matches!(v, Verdict::Invisible { .. }))
        .unwrap_or(verdicts[0])
}

/// What happened on the board: the plies made, the boards read, the reading's lag (see
/// [`align`]).
type Board<'a> = (&'a [(Duration, String)], &'a [(Duration, String)], Duration);

/// The verdict on source plies `first..=last` taken as a stretch the record lacks.
fn window((first, last): (usize, usize), (made, readings, lag): Board) -> Verdict {
    if made.len() <= last {
        return Verdict::NeverMade;
    }
    let Some((from, before)) = first.checked_sub(1).map(|i| &made[i]) else {
        return Verdict::NotRoundTrip;
    };
    let (until, after) = &made[last];
    if before != after {
        return Verdict::NotRoundTrip;
    }
    // Readings lag the board. Those of the stretch come after the ply before it is made,
    // from the placement before it read before its first ply is made (the boards read
    // before that are the ply before's), until the placement after it is read once its
    // last ply is made, or the lag after that.
    let later = readings.iter().filter(|(at, _)| at > from);
    let opened = later
        .clone()
        .position(|(at, board)| at < &made[first].0 && board == before);
    for (at, board) in later.skip(opened.unwrap_or(0)) {
        if at >= until && (board == after || *at > *until + lag) {
            break;
        }
        if !only_lifted(board, before) {
            return Verdict::Seen;
        }
    }
    Verdict::Invisible { first, last }
}

/// Whether `board` is `placement` with pieces lifted (or as it is).
fn only_lifted(board: &str, placement: &str) -> bool {
    board.len() == placement.len()
        && board
            .chars()
            .zip(placement.chars())
            .all(|(read, stands)| read == '.' || read == stands)
}

// Run by the integration tests. The soak bench is built with `cfg(test)` but without the
// test harness, which drops the tests and leaves their helpers unused.
#[cfg(test)]
#[allow(dead_code)]
mod tests {
    use super::*;

    const LAG: Duration = Duration::from_millis(300);

    fn timed(boards: &[(u64, &str)]) -> Vec<(Duration, String)> {
        let at = |ms| Duration::from_millis(ms);
        boards
            .iter()
            .map(|&(ms, b)| (at(ms), b.to_string()))
            .collect()
    }

    /// Plies `a`..`h` made at 1..8 s on a three-square board; the placement before `c`
    /// comes back after `f`.
    fn source() -> (Vec<&'static str>, Vec<(Duration, String)>) {
        let keys = vec!["a", "b", "c", "d", "e", "f", "g", "h"];
        let boards = ["a..", "ab.", "a.c", "ad.", "a.e", "ab.", "abg", "abh"];
        let made = (1..=8).zip(boards).map(|(s, b)| (s * 1000, b));
        (keys, timed(&made.collect::<Vec<_>>()))
    }

    /// The boards read: `a` and `b` live, a piece lifted, the link down from 2.8 s to
    /// 6.5 s, the dump, `g` and `h` live.
    fn gap_readings() -> Vec<(Duration, String)> {
        timed(&[
            (1_000, "a.."),
            (2_000, "ab."),
            (2_600, "a.."),
            (6_500, "ab."),
            (7_000, "abg"),
            (8_000, "abh"),
        ])
    }

    #[test]
    fn a_round_trip_unread_is_invisible_and_counted_once() {
        let (keys, made) = source();
        let record = ["a", "b", "g", "h"];
        let aligned = align(&keys, &record, &made, &gap_readings(), LAG);
        assert_eq!(aligned.not_played, 0);
        assert_eq!(aligned.missing_plies(), 4);
        let invisible = Verdict::Invisible { first: 2, last: 5 };
        assert_eq!(aligned.missing[0].verdict, invisible);
        assert_eq!(aligned.invisible_plies(), 4);
    }

    #[test]
    fn a_round_trip_with_a_ply_read_is_seen() {
        let (keys, made) = source();
        let record = ["a", "b", "g", "h"];
        let mut readings = gap_readings();
        readings.insert(3, (Duration::from_millis(3_000), "a.c".to_string()));
        let aligned = align(&keys, &record, &made, &readings, LAG);
        assert_eq!(aligned.missing[0].verdict, Verdict::Seen);
        assert_eq!(aligned.invisible_plies(), 0);
    }

    #[test]
    fn the_board_read_after_the_lag_is_not_the_stretchs() {
        let (keys, made) = source();
        let record = ["a", "b", "g", "h"];
        // The dump comes once `g` is made: the placement after the stretch is never read.
        let mut readings = gap_readings();
        readings.remove(3);
        let aligned = align(&keys, &record, &made, &readings, LAG);
        let invisible = Verdict::Invisible { first: 2, last: 5 };
        assert_eq!(aligned.missing[0].verdict, invisible);
        // Within the lag of its last ply, a board read can still be the stretch's.
        readings.insert(3, (Duration::from_millis(6_200), "a.e".to_string()));
        let aligned = align(&keys, &record, &made, &readings, LAG);
        assert_eq!(aligned.missing[0].verdict, Verdict::Seen);
    }

    #[test]
    fn a_board_read_late_of_the_ply_before_is_not_the_stretchs() {
        let (keys, made) = source();
        let record = ["a", "b", "g", "h"];
        // `b` misread for a scan as `x`, then read right, before `c` is made.
        let mut readings = gap_readings();
        readings.insert(2, (Duration::from_millis(2_100), "ax.".to_string()));
        readings.insert(3, (Duration::from_millis(2_300), "ab.".to_string()));
        let aligned = align(&keys, &record, &made, &readings, LAG);
        let invisible = Verdict::Invisible { first: 2, last: 5 };
        assert_eq!(aligned.missing[0].verdict, invisible);
        // Never read right before `c` is made, the misread may be the stretch's.
        readings.remove(3);
        let aligned = align(&keys, &record, &made, &readings, LAG);
        assert_eq!(aligned.missing[0].verdict, Verdict::Seen);
    }

    #[test]
    fn a_stretch_that_changes_the_placement_is_not_a_round_trip() {
        let (keys, made) = source();
        let record = ["a", "b", "c", "h"];
        let aligned = align(&keys, &record, &made, &gap_readings(), LAG);
        let stretch = Stretch {
            first: 3,
            last: 6,
            verdict: Verdict::NotRoundTrip,
        };
        assert_eq!(aligned.missing, [stretch]);
    }

    #[test]
    fn other_moves_in_its_place_are_not_played_and_the_stretch_replaced() {
        let (keys, made) = source();
        let record = ["a", "b", "x", "g", "h", "y"];
        let aligned = align(&keys, &record, &made, &gap_readings(), LAG);
        assert_eq!(aligned.not_played, 2);
        assert_eq!(aligned.missing_plies(), 4);
        assert_eq!(aligned.missing[0].verdict, Verdict::Replaced);
    }

    #[test]
    fn plies_never_made_are_missing_and_not_invisible() {
        let (keys, made) = source();
        let record = ["a", "b"];
        let aligned = align(&keys, &record, &made[..4], &gap_readings()[..3], LAG);
        assert_eq!(aligned.missing[0].verdict, Verdict::NeverMade);
        assert_eq!(aligned.missing_plies(), 6);
    }

    #[test]
    fn a_repeated_round_trip_is_found_where_the_board_was_not_read() {
        // x, then checks and king moves round the cycle 1 2 3 4 twice, then y: the record
        // has the cycle once; the alignment misses the second, the board went unread
        // from 2.5 s to 6.5 s (plies 2-5).
        let keys = [
            ("x", 0),
            ("Rb8+", 1),
            ("Kd7", 2),
            ("Rb7+", 3),
            ("Ke8", 4),
            ("Rb8+", 1),
            ("Kd7", 2),
            ("Rb7+", 3),
            ("Ke8", 4),
            ("y", 1),
        ];
        let boards = ["1", "2", "3", "4", "1", "2", "3", "4", "1", "5"];
        let made = (1..=10).zip(boards).map(|(s, b)| (s * 1000, b));
        let made = timed(&made.collect::<Vec<_>>());
        let record = [keys[0], keys[1], keys[2], keys[3], keys[4], keys[9]];
        let live = |plies: &[usize]| -> Vec<(u64, &str)> {
            plies
                .iter()
                .map(|&i| (i as u64 * 1000 + 1000, boards[i]))
                .collect()
        };
        let mut readings = live(&[0, 1]);
        readings.push((6_500, "2"));
        readings.extend(live(&[6, 7, 8, 9]));
        let aligned = align(&keys, &record, &made, &timed(&readings), LAG);
        assert_eq!((aligned.missing[0].first, aligned.missing[0].last), (5, 8));
        let invisible = Verdict::Invisible { first: 2, last: 5 };
        assert_eq!(aligned.missing[0].verdict, invisible);
        // Read all along: the stretch's own reason.
        let aligned = align(
            &keys,
            &record,
            &made,
            &timed(&live(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9])),
            LAG,
        );
        assert_eq!(aligned.missing[0].verdict, Verdict::Seen);
    }
}
