//! The board's recent changes, oldest first: on a board that only senses occupancy, the
//! order in which squares emptied and filled is the only evidence of which piece went
//! where (a capture leaves the same occupancy as the piece still in the hand, or as
//! another capture by the same piece). The search only moves pieces seen leaving their
//! squares, in the order they left them.

use std::collections::VecDeque;
use std::time::Duration;

use shakmaty::{Bitboard, Color, Square};

use super::codes::{Codes, EMPTY, code_piece};

/// Changes kept: several moves' worth (a move is a handful of changes, noise a few more),
/// so the deepest explanation the search looks for is covered.
const KEPT: usize = 192;

/// One square's reading changing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    pub at: Duration,
    pub square: Square,
    pub occupied: bool,
    /// The code read (on an occupancy-only board, 0 or 1).
    pub code: u8,
    /// The code the square read before (so earlier boards can be rebuilt).
    pub was: u8,
}

/// The last [`KEPT`] changes, in the order read: their times never go back, so a lookup
/// from a time starts at the first change at or after it (see `since`).
#[derive(Clone, Debug, Default)]
pub(crate) struct History {
    changes: VecDeque<Change>,
    /// When the last change let go (past [`KEPT`]) was read: what the changes kept say
    /// of the time up to then is not all that happened (see `covers`).
    dropped: Option<Duration>,
}

impl History {
    /// Keeps `change`; one dated before the last change kept (a clock that went back) is
    /// kept at that change's time.
    pub fn push(&mut self, mut change: Change) {
        if let Some(last) = self.changes.back() {
            change.at = change.at.max(last.at);
        }
        if self.changes.len() == KEPT {
            self.dropped = self.changes.pop_front().map(|c| c.at);
        }
        self.changes.push_back(change);
    }

    /// Whether every change read at or after `from` is still kept. A long carried
    /// ambiguity outlives its first moves' changes: the first lift of a square found
    /// among those kept is then a later move's, not the one searched.
    pub fn covers(&self, from: Duration) -> bool {
        self.dropped.is_none_or(|at| at < from)
    }

    /// The same changes read with the board turned 180° (a1 is h8).
    pub fn turn(&mut self) {
        for c in &mut self.changes {
            c.square = c.square.flip_vertical().flip_horizontal();
        }
    }

    /// The changes read at or after `from`, oldest first.
    fn since(&self, from: Duration) -> std::collections::vec_deque::Iter<'_, Change> {
        self.changes
            .range(self.changes.partition_point(|c| c.at < from)..)
    }

    fn on(&self, square: Square) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(move |c| c.square == square)
    }

    /// The changes of `square` read at or after `from`, oldest first.
    fn on_since(&self, square: Square, from: Duration) -> impl Iterator<Item = &Change> {
        self.since(from).filter(move |c| c.square == square)
    }

    /// When `square` was first left (read empty) at or after `from`.
    pub fn left(&self, square: Square, from: Duration) -> Option<Duration> {
        self.on_since(square, from)
            .find(|c| !c.occupied)
            .map(|c| c.at)
    }

    /// Whether `square` read `code` at or after `from` and before `before` and kept it for
    /// at least `least` (a wrong code is read for one scan only). The last reading keeps
    /// it until now, unless only a reading `replaced` since counts.
    pub fn stood(
        &self,
        square: Square,
        code: u8,
        (from, before): (Duration, Duration),
        least: Duration,
        replaced: bool,
    ) -> bool {
        let mut on = self.on_since(square, from).peekable();
        while let Some(c) = on.next() {
            let until = on.peek().map(|next| next.at);
            let kept = match until {
                Some(t) => t >= c.at + least,
                None => !replaced,
            };
            if c.code == code && c.at < before && kept {
                return true;
            }
        }
        false
    }

    /// Whether `square` read `code`, the code of a piece placed there, at or after `from`
    /// and before `until` in a way a wrong code does not explain. A wrong code is one
    /// reading of a piece just placed, and the next scan reads its true code; so the code
    /// counts when it stood (see `stood`), when it was read twice (the same wrong code
    /// again would take the piece placed again and misread alike), or when it replaced a
    /// code of `corrects` (a bit per code: pieces of its side the player would not have put
    /// there instead) with the square never read empty between: that one was the wrong
    /// code.
    pub fn placed(
        &self,
        square: Square,
        code: u8,
        (from, until): (Duration, Duration),
        (least, replaced): (Duration, bool),
        corrects: u16,
    ) -> bool {
        if self.stood(square, code, (from, until), least, replaced) {
            return true;
        }
        let mut reads = self
            .on_since(square, from)
            .filter(|c| c.code == code && c.at < until);
        match (reads.next(), reads.next()) {
            (Some(_), Some(_)) => true,
            (Some(once), None) => corrects & 1u16.checked_shl(once.was.into()).unwrap_or(0) != 0,
            _ => false,
        }
    }

    /// Since when `square` has read something other than `code`, without a break: the
    /// change that took it from `code`, or its first change kept if none did. `None`
    /// when it reads `code` now or has no change kept.
    pub fn differs_since(&self, square: Square, code: u8) -> Option<Duration> {
        let mut since = None;
        for c in self.changes.iter().rev().filter(|c| c.square == square) {
            if c.code == code {
                break;
            }
            since = Some(c.at);
            if c.was == code {
                break;
            }
        }
        since
    }

    /// Whether `square` read `code` at or after `from` and before `until`.
    pub fn read(&self, square: Square, code: u8, from: Duration, until: Duration) -> bool {
        self.on_since(square, from)
            .take_while(|c| c.at < until)
            .any(|c| c.code == code)
    }

    /// Whether `square` read another piece of `code`'s colour at or after `from` and
    /// before `until` for at most `scan`, and then no piece of that colour: a piece
    /// placed is read with a wrong code for a scan, and one taken away before the next
    /// scan is never read with its own. (A wrong code corrected is the piece itself
    /// read: see `read`.)
    pub fn misread(
        &self,
        square: Square,
        code: u8,
        (from, until): (Duration, Duration),
        scan: Duration,
    ) -> bool {
        let color = |code: u8| code_piece(code).map(|p| p.color);
        let mut on = self.on_since(square, from).peekable();
        while let Some(c) = on.next() {
            let Some(next) = on.peek() else {
                return false;
            };
            if c.at < until
                && c.code != code
                && color(c.code).is_some()
                && color(c.code) == color(code)
                && next.at <= c.at + scan
                && color(next.code) != color(code)
            {
                return true;
            }
        }
        false
    }

    /// The pieces read at or after `from` and replaced since by another reading of
    /// their square (the board's current readings left out), with when each was read,
    /// newest first.
    pub fn replaced_pieces(
        &self,
        from: Duration,
    ) -> impl Iterator<Item = (Square, Duration, u8)> + '_ {
        let mut later = 0u64;
        self.changes
            .iter()
            .rev()
            .take_while(move |c| c.at >= from)
            .filter_map(move |c| {
                let bit = 1u64 << c.square.to_usize();
                let replaced = later & bit != 0;
                later |= bit;
                (replaced && c.occupied).then_some((c.square, c.at, c.code))
            })
    }

    /// The pieces read at or after `from` and replaced since, each kept for at least
    /// `least` first (longer than a wrong code or a slide's step is read), oldest first;
    /// kept from the reading before it when that was a wrong code (see `began`). Or
    /// read with the code of a piece then in the hand and replaced at once by a piece of
    /// the other side: a wrong code keeps its piece's colour, so that piece was put down
    /// there and taken within a scan or so (Bd2 Bxd2 Qxd2 read as B, b, Q on d2 a scan
    /// each). A piece placed that was not in the hand (a pawn's promotion) may have been
    /// read with a wrong code.
    pub fn stood_replaced(&self, from: Duration, least: Duration) -> Vec<(Square, u8)> {
        let recent = self.since(from);
        let began = began(recent.clone(), least);
        let color = |code: u8| code_piece(code).map(|p| p.color);
        let mut next: [Option<&Change>; 64] = [None; 64];
        let mut stood = Vec::new();
        for (c, &began) in recent.clone().rev().zip(began.iter().rev()) {
            let i = c.square.to_usize();
            let kept = |n: &Change| {
                n.at >= began + least
                    || color(n.code)
                        .zip(color(c.code))
                        .is_some_and(|(a, b)| a != b)
                        && in_hand(recent.clone(), c.square, c.code, c.at)
            };
            if c.occupied && next[i].is_some_and(kept) {
                stood.push((c.square, c.code));
            }
            next[i] = Some(c);
        }
        stood.reverse();
        stood
    }

    /// The pieces read at or after `from` for less than `least` and replaced since, each
    /// with the code of a piece then in the hand, read standing later (or standing now)
    /// on a square other than this one and the one it left, oldest first: a piece put
    /// down and moved on within a scan or so (a move made and another by the same piece,
    /// faster than the board rests), or read passing over the square. One never read
    /// standing again may have been taken there, a wrong code, or a step of a slide
    /// still in progress; one standing again where it was lifted, a wrong code read
    /// while it was adjusted.
    pub fn put_down_briefly(&self, from: Duration, least: Duration) -> Vec<(Square, u8)> {
        let recent = self.since(from);
        let mut next: [Option<Duration>; 64] = [None; 64];
        // The squares each piece code stood on (or stands on) after the change looked at.
        let mut stood_later = [Bitboard::EMPTY; 13];
        let mut brief = Vec::new();
        for c in recent.clone().rev() {
            let i = c.square.to_usize();
            let kept = next[i].is_none_or(|t| t >= c.at + least);
            next[i] = Some(c.at);
            let Some(later) = stood_later.get_mut(usize::from(c.code)) else {
                continue;
            };
            let elsewhere = later.without(c.square);
            if c.occupied && !kept && elsewhere.any() {
                let origins = lifted_from(recent.clone(), c.square, c.code, c.at);
                if origins.any() && (elsewhere & !origins).any() {
                    brief.push((c.square, c.code));
                }
            }
            if c.occupied && kept {
                later.add(c.square);
            }
        }
        brief.reverse();
        brief
    }

    /// The squares read with a piece at or after `from` and then, within `scan`, empty or
    /// with the code of no piece already in the hand (the board's current readings left
    /// out), the code read first being that of no piece read leaving another square since:
    /// a wrong code is read for one scan only, so the piece placed there may have been any
    /// (a bishop read as a king, then taken before the next scan read it). A piece of a
    /// code that left another square may be a slide's step, read on the squares it passes,
    /// unless it was read standing on this square since (for longer than a slide's step is
    /// read) and then lifted (a capture's victim: it passes nowhere any more) or put back
    /// where it left (a piece adjusted). (A queen read on c5 for one scan on its way from
    /// b6 to f2, then lifted, is a step.) One followed by the code of a piece then in the
    /// hand may be that piece misread, its true code read next, unless the square held a
    /// piece of that piece's side before (no piece lands on its own side's, so another was
    /// placed there first and taken by it: exd4 read as a rook, then Nxd4 read) or was read
    /// giving up a piece just before (the piece that took that one may have been placed and
    /// taken within a scan, never read: dxe5 Nxe5 Rxe5, the pawn on e5 taken before a scan
    /// read it, the knight read once with a wrong code).
    pub fn misread_briefly(&self, from: Duration, scan: Duration) -> Bitboard {
        let recent = || self.changes.iter().rev().take_while(|c| c.at >= from);
        let left_elsewhere = |square: Square, code: u8, until: Duration| {
            recent().any(|c| {
                !c.occupied
                    && c.was == code
                    && c.square != square
                    && c.at <= until
                    && !recent().any(|d| {
                        d.at > c.at
                            && d.at <= until
                            && (d.square == square
                                && !d.occupied
                                && d.was == code
                                && self.stood(square, code, (c.at, d.at), scan, true)
                                || d.square == c.square && d.occupied && d.code == code)
                    })
            })
        };
        let color = |code: u8| code_piece(code).map(|p| p.color);
        let mut next: [Option<(Duration, u8)>; 64] = [None; 64];
        let mut brief = Bitboard::EMPTY;
        // Readings followed by the code of a piece in the hand: brief if the square's
        // change before it gave up a piece.
        let mut after_vacated = Bitboard::EMPTY;
        for c in recent() {
            let i = c.square.to_usize();
            if after_vacated.contains(c.square) {
                after_vacated.discard(c.square);
                if !c.occupied && c.was != EMPTY {
                    brief.add(c.square);
                }
            }
            if c.occupied
                && let Some((t, code)) = next[i]
                && t < c.at + scan
                && !left_elsewhere(c.square, c.code, Duration::MAX)
            {
                if code == EMPTY
                    || !left_elsewhere(c.square, code, c.at)
                    || color(c.was).is_some() && color(c.was) == color(code)
                {
                    brief.add(c.square);
                } else {
                    after_vacated.add(c.square);
                }
            }
            next[i] = Some((c.at, c.code));
        }
        brief
    }

    /// The codes read on each square at or after `from`, a bit per code.
    pub fn codes_read(&self, from: Duration) -> [u16; 64] {
        let mut read = [0u16; 64];
        for c in self.changes.iter().rev().take_while(|c| c.at >= from) {
            read[c.square.to_usize()] |= 1u16.checked_shl(c.code.into()).unwrap_or(0);
        }
        read
    }

    /// When the board was last read changing, if any change is kept.
    pub fn last_read(&self) -> Option<Duration> {
        self.changes.back().map(|c| c.at)
    }

    /// When `square` was last left (read empty), if it still is among the changes kept.
    pub fn last_left(&self, square: Square) -> Option<Duration> {
        self.changes
            .iter()
            .rev()
            .find(|c| c.square == square && !c.occupied)
            .map(|c| c.at)
    }

    /// When `square` was last filled (read occupied), if it still is among the changes kept.
    pub fn last_filled(&self, square: Square) -> Option<Duration> {
        self.changes
            .iter()
            .rev()
            .find(|c| c.square == square && c.occupied)
            .map(|c| c.at)
    }

    /// When `square` was last read filling or emptying, if among the changes kept: a
    /// code read anew on a piece standing there (a wrong code corrected) is no change
    /// of what stands there.
    pub fn last_filled_or_left(&self, square: Square) -> Option<Duration> {
        self.changes
            .iter()
            .rev()
            .find(|c| c.square == square && c.occupied == (c.was == EMPTY))
            .map(|c| c.at)
    }

    /// When `square` was last filled, a flicker aside: a piece read back within `scan`
    /// of being read gone, with the code it read before, was misread (or touched)
    /// there, not put down.
    pub fn last_put_down(&self, square: Square, scan: Duration) -> Option<Duration> {
        let mut changes = self.changes.iter().rev().filter(|c| c.square == square);
        let mut fill = changes.find(|c| c.occupied)?;
        while let Some(gone) = changes.next() {
            if gone.occupied || gone.was != fill.code || fill.at > gone.at + scan {
                break;
            }
            match changes.next() {
                Some(before) if before.occupied && before.code == fill.code => fill = before,
                _ => break,
            }
        }
        Some(fill.at)
    }

    /// The boards read before `now` (the board read last), newest first: each with the
    /// time of the changes that made it, as far back as the changes kept reach.
    pub fn boards_back(&self, now: Codes) -> impl Iterator<Item = (Duration, Codes)> + '_ {
        let mut board = now;
        let mut changes = self.changes.iter().rev().peekable();
        std::iter::from_fn(move || {
            let at = changes.peek()?.at;
            let shown = board;
            while let Some(c) = changes.next_if(|c| c.at == at) {
                board[c.square.to_usize()] = c.was;
            }
            Some((at, shown))
        })
    }

    /// Takes the changes read after `at` out, oldest first.
    pub fn split_off_after(&mut self, at: Duration) -> Vec<Change> {
        let kept = self.changes.partition_point(|c| c.at <= at);
        self.changes.split_off(kept).into()
    }

    /// The code of the last piece of `color` read on `square` at or after `from` and
    /// before `until`.
    pub fn last_piece(
        &self,
        square: Square,
        color: Color,
        (from, until): (Duration, Duration),
    ) -> Option<u8> {
        self.on_since(square, from)
            .take_while(|c| c.at < until)
            .filter(|c| code_piece(c.code).is_some_and(|p| p.color == color))
            .last()
            .map(|c| c.code)
    }

    /// When `square` last changed at or before `at`, if it still is among the changes kept.
    pub fn last_change(&self, square: Square, at: Duration) -> Option<Duration> {
        self.changes
            .iter()
            .rev()
            .find(|c| c.square == square && c.at <= at)
            .map(|c| c.at)
    }

    /// Whether `square` read occupied at `at`: as its last change at or before then left
    /// it, or else as its first change after found it; None if it never changed among the
    /// changes kept.
    pub fn occupied_at(&self, square: Square, at: Duration) -> Option<bool> {
        let mut on = self.on(square);
        let first_after = on.find(|c| c.at > at);
        let before = self.on(square).filter(|c| c.at <= at).last();
        before
            .map(|c| c.occupied)
            .or_else(|| first_after.map(|c| !c.occupied))
    }

    /// The code `square` read at `at`: as its last change at or before then left it, or
    /// else as its first change after found it; None if it never changed among the
    /// changes kept.
    pub fn reading_at(&self, square: Square, at: Duration) -> Option<u8> {
        let before = self.on(square).filter(|c| c.at <= at).last();
        before
            .map(|c| c.code)
            .or_else(|| self.on(square).find(|c| c.at > at).map(|c| c.was))
    }

    /// Whether any square but those of `except` was filled (read occupied) at or after
    /// `from`, up to `to`.
    pub fn any_filled(&self, from: Duration, to: Duration, except: Bitboard) -> bool {
        self.changes
            .iter()
            .rev()
            .take_while(|c| c.at >= from)
            .any(|c| c.occupied && c.at <= to && !except.contains(c.square))
    }

    /// The squares filled (read occupied) after `from`.
    pub fn filled_after(&self, from: Duration) -> Bitboard {
        self.changes
            .iter()
            .rev()
            .take_while(|c| c.at > from)
            .filter(|c| c.occupied)
            .map(|c| c.square)
            .collect()
    }

    /// When `square` first read `code` at or after `from`.
    pub fn filled_with(&self, square: Square, code: u8, from: Duration) -> Option<Duration> {
        self.on_since(square, from)
            .find(|c| c.code == code)
            .map(|c| c.at)
    }

    /// When `square` was first filled (read occupied) at or after `from`.
    pub fn filled(&self, square: Square, from: Duration) -> Option<Duration> {
        self.on_since(square, from)
            .find(|c| c.occupied)
            .map(|c| c.at)
    }

    /// The squares filled (read occupied) at or after `from`.
    pub fn filled_since(&self, from: Duration) -> Bitboard {
        self.since(from)
            .filter(|c| c.occupied)
            .map(|c| c.square)
            .collect()
    }
}

#[cfg(test)]
impl History {
    /// A history of `changes` read in this order: (milliseconds, square, code read, code
    /// before).
    pub(crate) fn from_readings(changes: &[(u64, Square, u8, u8)]) -> History {
        let mut h = History::default();
        for &(t, square, code, was) in changes {
            h.push(Change {
                at: Duration::from_millis(t),
                square,
                occupied: code != EMPTY,
                code,
                was,
            });
        }
        h
    }
}

/// When the piece each of `changes` reads (oldest first) began to be read on its
/// square: at that change, or at the one before it when that read another code for
/// less than `least` (a wrong code is read for a scan), the code of no piece in the
/// hand (not a piece passing over the square: a king castling across the rook's square,
/// then the rook), and the piece is one in the hand (the piece placed there). A piece
/// read with a wrong code and then its own for a scan each stood two scans, as long as
/// one read alike for both (Kf1 read as a knight first, then h6 and Ke1 within the next
/// scans: not Ke1 h6). A piece read back within `least` of being read gone, with its
/// code, began when it did before: it stood through a flicker, or was touched (Rd6 read
/// for a scan, gone for one and back for one stood three scans: not a slide's step).
fn began<'a>(changes: impl Iterator<Item = &'a Change> + Clone, least: Duration) -> Vec<Duration> {
    let in_hand =
        |square: Square, code: u8, at: Duration| in_hand(changes.clone(), square, code, at);
    // Each square's last change, and when the piece it read (if any) began to be read.
    let mut last: [Option<(&Change, Duration)>; 64] = [None; 64];
    // The piece each square read before it was last read gone (its code and when it
    // began to be read), and when that was.
    let mut gone: [Option<(u8, Duration, Duration)>; 64] = [None; 64];
    changes
        .clone()
        .map(|c| {
            let i = c.square.to_usize();
            let began = match (last[i], gone[i]) {
                (Some((p, _)), _)
                    if p.occupied
                        && c.occupied
                        && c.code != p.code
                        && c.at < p.at + least
                        && !in_hand(c.square, p.code, p.at)
                        && in_hand(c.square, c.code, c.at) =>
                {
                    p.at
                }
                // Read back within a scan of being read gone: a flicker, or the piece
                // touched; it stood on.
                (Some((p, _)), Some((code, began, at)))
                    if !p.occupied && c.occupied && c.code == code && c.at < at + least =>
                {
                    began
                }
                _ => c.at,
            };
            if !c.occupied {
                gone[i] = last[i]
                    .filter(|(p, _)| p.occupied)
                    .map(|(p, b)| (p.code, b, c.at));
            }
            last[i] = Some((c, began));
            began
        })
        .collect()
}

/// Whether a piece of `code` was in the hand at `at` by `changes` (oldest first): read
/// leaving a square other than `square`, and not read back there since.
fn in_hand<'a>(
    changes: impl Iterator<Item = &'a Change> + Clone,
    square: Square,
    code: u8,
    at: Duration,
) -> bool {
    lifted_from(changes, square, code, at).any()
}

/// The squares other than `square` that pieces of `code` in the hand at `at` were read
/// leaving, by `changes` (oldest first), not read back there since.
fn lifted_from<'a>(
    changes: impl Iterator<Item = &'a Change> + Clone,
    square: Square,
    code: u8,
    at: Duration,
) -> Bitboard {
    let upto = || changes.clone().take_while(move |d| d.at <= at);
    upto()
        .filter(|d| {
            !d.occupied
                && d.was == code
                && d.square != square
                && !upto().any(|e| e.at > d.at && e.square == d.square && e.code == code)
        })
        .map(|d| d.square)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A piece read back a scan after it was read gone was not put down again; read back
    /// later, or with another code, it was.
    #[test]
    fn a_flicker_is_no_piece_put_down() {
        let (bishop, knight) = (3, 2);
        let scan = ms(250);
        let mut changes = vec![
            (1_000, Square::E4, bishop, EMPTY),
            (2_000, Square::E4, EMPTY, bishop),
            (2_220, Square::E4, bishop, EMPTY),
            (3_000, Square::E4, EMPTY, bishop),
            (3_220, Square::E4, bishop, EMPTY),
        ];
        let put_down = |changes: &[(u64, Square, u8, u8)]| {
            History::from_readings(changes).last_put_down(Square::E4, scan)
        };
        assert_eq!(put_down(&changes), Some(ms(1_000)));
        changes.extend([
            (4_000, Square::E4, EMPTY, bishop),
            (4_500, Square::E4, bishop, EMPTY),
        ]);
        assert_eq!(put_down(&changes), Some(ms(4_500)));
        changes.extend([
            (5_000, Square::E4, EMPTY, bishop),
            (5_220, Square::E4, knight, EMPTY),
        ]);
        assert_eq!(put_down(&changes), Some(ms(5_220)));
        assert_eq!(put_down(&changes[..2]), Some(ms(1_000)));
    }

    /// A piece's code read anew where it stands (a wrong code corrected) is no filling:
    /// the square last filled when it was read occupied after empty.
    #[test]
    fn a_code_corrected_is_no_filling() {
        let (pawn, queen) = (1, 5);
        let h = History::from_readings(&[
            (1_000, Square::E8, pawn, EMPTY),
            (1_220, Square::E8, queen, pawn),
        ]);
        assert_eq!(h.last_filled_or_left(Square::E8), Some(ms(1_000)));
        assert_eq!(h.last_change(Square::E8, Duration::MAX), Some(ms(1_220)));
        let h = History::from_readings(&[
            (1_000, Square::E8, queen, EMPTY),
            (2_000, Square::E8, EMPTY, queen),
        ]);
        assert_eq!(h.last_filled_or_left(Square::E8), Some(ms(2_000)));
        assert_eq!(h.last_filled_or_left(Square::E7), None);
    }

    /// A piece read for a scan, gone for a scan and back for a scan stood there three
    /// scans; read back with another code, or later, it stood no longer than each read.
    #[test]
    fn a_piece_stands_through_a_flicker() {
        let (rook, knight) = (4, 2);
        let scan = ms(250);
        let stays = |back: u64, code: u8| {
            History::from_readings(&[
                (1_000, Square::D6, rook, EMPTY),
                (1_220, Square::D6, EMPTY, rook),
                (back, Square::D6, code, EMPTY),
                (back + 220, Square::D6, EMPTY, code),
            ])
            .stood_replaced(ms(0), scan)
        };
        assert_eq!(stays(1_440, rook), vec![(Square::D6, rook)]);
        assert_eq!(stays(1_440, knight), vec![]);
        assert_eq!(stays(1_500, rook), vec![]);
    }

    /// The lookups from a time (which skip the changes before it) answer as a scan of
    /// every change kept: changes at the same time, lookups at a change's exact time,
    /// after the oldest were let go.
    #[test]
    fn lookups_from_a_time_answer_as_a_scan_of_every_change() {
        let mut h = History::default();
        let mut seed = 0x9e37_79b9_u32;
        let mut next = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed % n
        };
        let squares = [Square::E2, Square::E4, Square::D7, Square::G1];
        let mut t = 0;
        for _ in 0..KEPT + 60 {
            t += u64::from(next(3)) * 10;
            let code = next(4) as u8;
            h.push(Change {
                at: ms(t),
                square: squares[next(4) as usize],
                occupied: code != EMPTY,
                code,
                was: EMPTY,
            });
        }
        // A clock that went back changes no lookup's start.
        let mut late = *h.changes.back().expect("pushed");
        late.at = ms(0);
        h.push(late);
        assert_eq!(h.changes.back().map(|c| c.at), Some(ms(t)));
        let all: Vec<Change> = h.changes.iter().copied().collect();
        let scan = |square: Square, from: Duration, hit: &dyn Fn(&Change) -> bool| {
            all.iter()
                .find(|c| c.square == square && c.at >= from && hit(c))
                .map(|c| c.at)
        };
        for from in (0..=t + 10).step_by(10).map(ms) {
            for square in squares {
                assert_eq!(h.left(square, from), scan(square, from, &|c| !c.occupied));
                assert_eq!(h.filled(square, from), scan(square, from, &|c| c.occupied));
                for code in 0..4 {
                    let same = |c: &Change| c.code == code;
                    assert_eq!(h.filled_with(square, code, from), scan(square, from, &same));
                    let until = from + ms(40);
                    let read = all
                        .iter()
                        .any(|c| c.square == square && same(c) && c.at >= from && c.at < until);
                    assert_eq!(h.read(square, code, from, until), read);
                }
            }
        }
    }

    /// A bishop put on a8 (code 4), read first with a wrong code (a king, 5), then
    /// lifted: a8 has differed from the bishop since the lift, from empty not at all
    /// now, and from a code it never read since its first change kept.
    #[test]
    fn a_square_differs_since_its_readings_left_a_code() {
        let mut h = History::default();
        for (t, square, code, was) in [
            (10, Square::A8, 5, EMPTY),
            (20, Square::E2, EMPTY, 1),
            (30, Square::A8, 4, 5),
            (40, Square::A8, EMPTY, 4),
        ] {
            h.push(Change {
                at: ms(t),
                square,
                occupied: code != EMPTY,
                code,
                was,
            });
        }
        assert_eq!(h.differs_since(Square::A8, 4), Some(ms(40)));
        assert_eq!(h.differs_since(Square::A8, EMPTY), None);
        assert_eq!(h.differs_since(Square::A8, 2), Some(ms(10)));
        assert_eq!(h.differs_since(Square::E2, 1), Some(ms(20)));
        assert_eq!(h.differs_since(Square::H1, 1), None);
    }

    /// The changes (milliseconds, square, code read, code before), oldest first.
    #[test]
    fn finds_the_first_lift_after_a_time() {
        let mut h = History::default();
        for (t, sq, occupied) in [
            (10, Square::E2, false),
            (20, Square::E4, true),
            (30, Square::E2, true),
            (40, Square::E2, false),
        ] {
            h.push(Change {
                at: ms(t),
                square: sq,
                occupied,
                code: u8::from(occupied),
                was: u8::from(!occupied),
            });
        }
        assert_eq!(h.left(Square::E2, ms(0)), Some(ms(10)));
        assert_eq!(h.left(Square::E2, ms(11)), Some(ms(40)));
        assert_eq!(h.left(Square::E4, ms(0)), None);
        assert_eq!(h.filled(Square::E2, ms(0)), Some(ms(30)));
        assert_eq!(h.filled(Square::E4, ms(21)), None);
        assert_eq!(h.last_left(Square::E2), Some(ms(40)));
        assert_eq!(h.last_left(Square::E4), None);
        assert!(h.covers(ms(0)));
        for i in 0..KEPT {
            h.push(Change {
                at: ms(100 + i as u64),
                square: Square::A1,
                occupied: true,
                code: 1,
                was: 1,
            });
        }
        assert_eq!(h.left(Square::E2, ms(0)), None);
        // The four changes let go, the last of them read at 40 ms.
        assert!(!h.covers(ms(0)) && !h.covers(ms(40)));
        assert!(h.covers(ms(41)));
    }

    #[test]
    fn a_wrong_code_taken_away_within_a_scan_is_a_misread_piece() {
        // f6: empty, a black pawn (code 7) read as a black bishop (10) for a scan, then
        // a white pawn (1) taking it; later a black bishop (10) read as a pawn (7).
        let mut h = History::default();
        for (t, code) in [(100, 10), (320, 1), (900, 7), (1120, 10)] {
            h.push(Change {
                at: ms(t),
                square: Square::F6,
                occupied: code != 0,
                code,
                was: 0,
            });
        }
        let scan = ms(250);
        let taken = h.filled_with(Square::F6, 1, ms(0));
        assert_eq!(taken, Some(ms(320)));
        let until = taken.unwrap_or(Duration::MAX);
        // The pawn itself was read only after the capture (the bishop's wrong code).
        assert!(!h.read(Square::F6, 7, ms(0), until));
        assert!(h.read(Square::F6, 7, ms(0), Duration::MAX));
        assert!(h.misread(Square::F6, 7, (ms(0), until), scan));
        // Not before the capture's window, nor a wrong code corrected to its own colour.
        assert!(!h.misread(Square::F6, 7, (ms(200), until), scan));
        assert!(!h.misread(Square::F6, 10, (ms(500), Duration::MAX), scan));
    }

    #[test]
    fn a_wrong_code_after_a_victim_lifted_may_hide_an_unread_capture() {
        // fxe5 dxe5 Nxe5 Rxe5: a black pawn (7) leaves f6 and lands on e5; the white pawn
        // (1) leaves d4 and e5 is read empty (the white pawn placed and taken within a
        // scan); the black knight (9) leaves c6, is read once as a pawn (7), then as
        // itself, then the white rook (2) from e1 replaces it.
        let h = History::from_readings(&[
            (0, Square::F6, 0, 7),
            (200, Square::E5, 0, 1),
            (400, Square::E5, 7, 0),
            (3_000, Square::D4, 0, 1),
            (3_000, Square::E5, 0, 7),
            (4_000, Square::C6, 0, 9),
            (4_700, Square::E5, 7, 0),
            (4_900, Square::E1, 0, 2),
            (4_900, Square::E5, 9, 7),
            (5_100, Square::E5, 2, 9),
        ]);
        let scan = ms(250);
        assert_eq!(h.misread_briefly(ms(0), scan), Bitboard::from(Square::E5));
        // Without the victim lifted first, the pawn read once is the knight misread on
        // its way in: the square held nothing unread.
        assert_eq!(h.misread_briefly(ms(3_500), scan), Bitboard::EMPTY);
    }

    #[test]
    fn a_slide_step_lifted_again_is_no_victim() {
        // Rxf2 Qxf2: the black rook (8) leaves c2, the white pawn (1) is lifted from f2,
        // the rook is read there once as a pawn (7), then as itself; the white queen (6)
        // is read on c5 for one scan on its way from b6, then replaces the rook on f2;
        // the black queen (12) is lifted from f3 for the next move.
        let h = History::from_readings(&[
            (0, Square::C2, 0, 8),
            (220, Square::F2, 0, 1),
            (440, Square::F2, 7, 0),
            (660, Square::F2, 8, 7),
            (880, Square::C5, 6, 0),
            (880, Square::B6, 0, 6),
            (1_100, Square::C5, 0, 6),
            (1_320, Square::F2, 0, 8),
            (1_540, Square::F2, 6, 0),
            (1_760, Square::F3, 0, 12),
        ]);
        // f2 gave up the pawn before its wrong code (it may have held any piece then);
        // the queen on c5 is a slide's step, not a piece that stood and was taken there.
        assert_eq!(
            h.misread_briefly(ms(0), ms(250)),
            Bitboard::from(Square::F2)
        );
    }

    #[test]
    fn reads_a_square_as_it_was_at_a_time() {
        // f6: a black king (11) read as a queen (12) for a scan, then as itself, then
        // lifted; g6 never changed.
        let h = History::from_readings(&[
            (1_000, Square::F6, 12, 0),
            (1_220, Square::F6, 11, 12),
            (1_440, Square::F6, 0, 11),
        ]);
        assert_eq!(h.reading_at(Square::F6, ms(500)), Some(0));
        assert_eq!(h.reading_at(Square::F6, ms(1_000)), Some(12));
        assert_eq!(h.reading_at(Square::F6, ms(1_300)), Some(11));
        assert_eq!(h.reading_at(Square::F6, ms(2_000)), Some(0));
        assert_eq!(h.reading_at(Square::G6, ms(1_300)), None);
    }

    #[test]
    fn a_piece_read_with_a_wrong_code_first_stood_from_that_reading() {
        let (king, knight, bishop) = (5, 3, 10);
        let scan = ms(250);
        // The king lifted from e2, read on f1 as a knight for a scan, then as itself for
        // one more, then lifted again: it stood two scans.
        let h = History::from_readings(&[
            (0, Square::E2, EMPTY, king),
            (0, Square::F1, knight, EMPTY),
            (220, Square::F1, king, knight),
            (440, Square::F1, EMPTY, king),
        ]);
        assert_eq!(h.stood_replaced(ms(0), scan), vec![(Square::F1, king)]);
        // Read for that one scan alone, it may have been passing.
        let h = History::from_readings(&[
            (0, Square::E2, EMPTY, king),
            (220, Square::F1, king, EMPTY),
            (440, Square::F1, EMPTY, king),
        ]);
        assert!(h.stood_replaced(ms(0), scan).is_empty());
        // A piece in the hand read first is no wrong code: the black king castling
        // across f8, then the rook placed there (and adjusted).
        let (black_king, black_rook) = (11, 8);
        let h = History::from_readings(&[
            (0, Square::E8, EMPTY, black_king),
            (0, Square::H8, EMPTY, black_rook),
            (0, Square::F8, black_king, EMPTY),
            (220, Square::F8, black_rook, black_king),
            (220, Square::G8, black_king, EMPTY),
            (440, Square::F8, EMPTY, black_rook),
        ]);
        assert!(h.stood_replaced(ms(0), scan).is_empty());
        // Nor is a code read next that of no piece in the hand: both were wrong (the
        // black knight that took on f2 read as a bishop, then as a white knight, then
        // the king that took it).
        let (black_knight, white_knight) = (9, knight);
        let h = History::from_readings(&[
            (0, Square::E4, EMPTY, black_knight),
            (0, Square::F2, bishop, 1),
            (220, Square::E1, EMPTY, king),
            (220, Square::F2, white_knight, bishop),
            (440, Square::F2, king, white_knight),
        ]);
        assert!(h.stood_replaced(ms(0), scan).is_empty());
    }

    #[test]
    fn a_piece_from_the_hand_taken_by_the_other_side_within_a_scan_stood() {
        let (bishop, queen, black_bishop, black_rook, knight, pawn) = (4, 6, 10, 8, 3, 1);
        let scan = ms(250);
        // Bd2 Bxd2 Qxd2, each read on d2 for one scan: both bishops stood there.
        let h = History::from_readings(&[
            (0, Square::F4, EMPTY, bishop),
            (0, Square::G5, black_bishop, EMPTY),
            (220, Square::D2, bishop, EMPTY),
            (440, Square::G5, EMPTY, black_bishop),
            (440, Square::D2, black_bishop, bishop),
            (660, Square::E2, EMPTY, queen),
            (660, Square::D2, queen, black_bishop),
        ]);
        let d2 = |code| (Square::D2, code);
        assert_eq!(
            h.stood_replaced(ms(0), scan),
            vec![(Square::G5, black_bishop), d2(bishop), d2(black_bishop)]
        );
        // A promoted piece is no piece from the hand: read once as a knight, then taken,
        // it may have been a queen read with a wrong code.
        let h = History::from_readings(&[
            (0, Square::D7, EMPTY, pawn),
            (200, Square::D8, knight, EMPTY),
            (420, Square::B8, EMPTY, black_rook),
            (420, Square::D8, black_rook, knight),
        ]);
        assert!(h.stood_replaced(ms(0), scan).is_empty());
    }

    #[test]
    fn a_piece_put_down_for_a_scan_and_moved_on_is_read_put_down() {
        let (rook, knight) = (2, 9);
        let scan = ms(250);
        // The rook lifted from c1, read on a1 for a scan, then standing on b1.
        let moved_on = [
            (0, Square::C1, EMPTY, rook),
            (220, Square::A1, rook, EMPTY),
            (440, Square::A1, EMPTY, rook),
            (660, Square::B1, rook, EMPTY),
        ];
        let h = History::from_readings(&moved_on);
        assert_eq!(h.put_down_briefly(ms(0), scan), vec![(Square::A1, rook)]);
        // Not yet standing anywhere: a slide's step, its move still in progress.
        let h = History::from_readings(&moved_on[..3]);
        assert!(h.put_down_briefly(ms(0), scan).is_empty());
        // Standing again where it was lifted: the reading was a wrong code (a knight
        // adjusted on e5 while the king castled across g8, read there as the knight).
        let h = History::from_readings(&[
            (0, Square::E5, EMPTY, knight),
            (0, Square::G8, knight, EMPTY),
            (220, Square::G8, 11, knight),
            (220, Square::E5, knight, EMPTY),
        ]);
        assert!(h.put_down_briefly(ms(0), scan).is_empty());
        // Read for a scan with the code of no piece in the hand.
        let h = History::from_readings(&[
            (220, Square::A1, knight, EMPTY),
            (440, Square::A1, EMPTY, knight),
            (660, Square::B1, knight, EMPTY),
        ]);
        assert!(h.put_down_briefly(ms(0), scan).is_empty());
    }

    #[test]
    fn a_code_stands_when_the_next_scan_still_reads_it() {
        let mut h = History::default();
        for (t, code) in [(0, 5), (220, 0), (500, 4), (720, 5), (1600, 0)] {
            h.push(Change {
                at: ms(t),
                square: Square::B8,
                occupied: code != 0,
                code,
                was: 0,
            });
        }
        let scan = ms(250);
        // Read once, then replaced: it may have been a wrong code.
        assert!(!h.stood(Square::B8, 4, (ms(0), Duration::MAX), scan, false));
        assert!(h.stood(Square::B8, 5, (ms(0), Duration::MAX), scan, true));
        assert!(!h.stood(Square::B8, 5, (ms(800), Duration::MAX), scan, false));
        // The last reading stands, unless a replaced one is asked for.
        assert!(h.stood(Square::B8, 0, (ms(1000), Duration::MAX), scan, false));
        assert!(!h.stood(Square::B8, 0, (ms(1000), Duration::MAX), scan, true));
    }
}
