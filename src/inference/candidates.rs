//! The boards that legal moves lead to, computed once per position so that each
//! observation is matched with a mask compare per move instead of move generation.

use std::cell::OnceCell;

use shakmaty::{Bitboard, Chess, Color, Move, Position, Role, Square};

use super::codes::{Codes, EMPTY, UNKNOWN, diff, move_effect, move_squares, normalize, piece_code};
use super::pending::PendingMoves;

/// Which position a candidate move is played from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The current position.
    Current,
    /// The current position with the other side to move (a set-up position before its
    /// first move, when the side to move is not known yet).
    OtherTurn,
    /// The position before the last move: this move would replace the last one.
    Correction,
}

/// A legal move and the board it leads to, stored as its difference from the expected
/// board: at most eight squares (the move's own four, plus the last move's for a
/// correction), so a candidate stays small and cheap to build.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    pub origin: Origin,
    pub mv: Move,
    pub mover: Color,
    /// Squares where the board after the move differs from the expected board.
    pub changed: Bitboard,
    /// Squares the move's pieces leave or land on (plus, for a correction, those of the
    /// move it replaces): a superset of `changed`, which on an occupancy-only board
    /// leaves out a capture's target (occupied before and after).
    pub touched: Bitboard,
    /// The codes on `changed`, in square order.
    values: [u8; 8],
}

impl Candidate {
    /// The code the board after the move has on `sq`, a square of `changed`.
    pub fn value(&self, sq: Square) -> u8 {
        let below = self.changed.0 & ((1u64 << sq.to_usize()) - 1);
        self.values
            .get(below.count_ones() as usize)
            .copied()
            .unwrap_or(UNKNOWN)
    }

    /// Whether `observed` shows the board after the move on every square of `squares`.
    fn shown_on(&self, observed: &Codes, squares: Bitboard) -> bool {
        squares
            .into_iter()
            .all(|sq| observed[sq.to_usize()] == self.value(sq))
    }
}

/// What an observed board matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Match {
    None,
    One(usize),
    Several,
}

/// The candidate moves of one position.
#[derive(Clone, Debug)]
pub(crate) struct Candidates {
    list: Vec<Slot>,
    /// Every square of the moves of `list` (recomputed with it in `rebuild`, its only
    /// writer): a board differing from `expected` elsewhere shows none of them, nor is
    /// part-way to one, so most boards (the other side's piece in the hand) skip the
    /// list without a look at each move.
    reach: Bitboard,
    /// The board the moves of `list` are played on (their base and what they differ from).
    expected: Codes,
    occupancy_only: bool,
    other_turn: Option<Chess>,
    previous: Option<Previous>,
    /// The position whose moves alone `list` holds: once the record goes one move on, it
    /// is the position before the last move, whose moves' squares the list has.
    listed: Option<Chess>,
}

/// A move of the current position (or of `other_turn`) and the squares it changes. Its
/// candidate is built the first time a board differing only on those squares is matched
/// against it: a board shows at most a few moves' squares, so most candidates of a
/// position were never needed, and building them all was a large share of the work per
/// move.
#[derive(Clone, Debug)]
struct Slot {
    origin: Origin,
    mv: Move,
    mover: Color,
    squares: Bitboard,
    candidate: OnceCell<Candidate>,
}

impl Default for Candidates {
    fn default() -> Self {
        Candidates {
            list: Vec::new(),
            reach: Bitboard::EMPTY,
            expected: [EMPTY; 64],
            occupancy_only: false,
            other_turn: None,
            previous: None,
            listed: None,
        }
    }
}

/// The position before the last move, whose moves would replace it. Their candidates
/// (numbered after the others) are built the first time a board could show one: most
/// boards after a move (the reply being made) cannot, and building them was a large
/// share of the engine's work per move.
#[derive(Clone, Debug)]
struct Previous {
    pos: Chess,
    last: Move,
    moves: Vec<Move>,
    base: Codes,
    expected: Codes,
    occupancy_only: bool,
    /// Where the base differs from the expected board (the last move's squares).
    base_diff: Bitboard,
    /// The squares of each move of `moves` but the last move: a correction's board
    /// differs from the expected board only on its move's squares and `base_diff`.
    squares: Vec<Bitboard>,
    /// Every square of `squares`: a board differing elsewhere shows no correction.
    reach: Bitboard,
    corrections: OnceCell<Vec<Candidate>>,
}

impl Previous {
    /// Whether a board differing from the expected one on `changed` can show a
    /// correction or be part-way to one. Only an occupancy-only board can show one
    /// unchanged: on a board that reads codes, two moves from one position leave two
    /// different boards. A board showing a correction exactly (`whole`) also differs on
    /// the squares of `base_diff` its move leaves alone: the move's squares hold every
    /// square where the board and `base_diff` disagree.
    fn relevant(&self, changed: Bitboard, whole: bool) -> bool {
        let rest = if whole {
            changed ^ self.base_diff
        } else {
            changed & !self.base_diff
        };
        (changed.any() || self.occupancy_only)
            && (rest.is_empty()
                || ((rest & !self.reach).is_empty()
                    && self.squares.iter().any(|&s| (rest & !s).is_empty())))
    }

    fn corrections(&self) -> &[Candidate] {
        self.corrections.get_or_init(|| {
            let mut list = Vec::with_capacity(self.moves.len());
            add(
                &mut list,
                (&self.pos, &self.moves),
                (&self.base, &self.expected),
                Origin::Correction,
                Some(self.last),
                self.occupancy_only,
            );
            list
        })
    }
}

/// Adds the slots of `moves` played from `pos`, their candidates not built yet; returns
/// every square of those moves.
fn slots(list: &mut Vec<Slot>, (pos, moves): (&Chess, &[Move]), origin: Origin) -> Bitboard {
    let mover = pos.turn();
    let mut reach = Bitboard::EMPTY;
    let all = &mut reach;
    // The closure owns its copies of `origin` and `mover`: read through references, they
    // were loaded again for every move (the list's writes might change them).
    list.extend(moves.iter().map(move |&mv| {
        let squares = move_squares(mv, mover);
        *all |= squares;
        Slot {
            origin,
            mv,
            mover,
            squares,
            candidate: OnceCell::new(),
        }
    }));
    reach
}

/// Adds the candidates of `moves` played from `pos` (whose codes are `base`), as they
/// differ from `expected`, except `skip`.
fn add(
    list: &mut Vec<Candidate>,
    (pos, moves): (&Chess, &[Move]),
    (base, expected): (&Codes, &Codes),
    origin: Origin,
    skip: Option<Move>,
    occupancy_only: bool,
) {
    // A candidate differs from the expected board only where its base does or
    // where the move changed something, so only those squares are compared.
    let base_diff = diff(base, expected);
    for &mv in moves {
        if Some(mv) == skip {
            continue;
        }
        let board = (base, expected);
        list.push(candidate(
            origin,
            mv,
            pos.turn(),
            board,
            base_diff,
            occupancy_only,
        ));
    }
}

/// The candidate of `mv` by `mover`, played on `base` (which differs from `expected` on
/// `base_diff`).
fn candidate(
    origin: Origin,
    mv: Move,
    mover: Color,
    (base, expected): (&Codes, &Codes),
    base_diff: Bitboard,
    occupancy_only: bool,
) -> Candidate {
    let effect = move_effect(mv, mover, occupancy_only);
    let touched = effect.squares() | base_diff;
    // The board after the move: its codes where it wrote, the base's elsewhere.
    // One pass over the touched squares gives both the changed ones and their codes.
    let mut changed = Bitboard::EMPTY;
    let mut values = [UNKNOWN; 8];
    let mut slots = values.iter_mut();
    for sq in touched {
        let after = effect.code_on(sq).unwrap_or(base[sq.to_usize()]);
        if after != expected[sq.to_usize()] {
            changed.add(sq);
            if let Some(slot) = slots.next() {
                *slot = after;
            }
        }
    }
    Candidate {
        origin,
        mv,
        mover,
        changed,
        touched,
        values,
    }
}

impl Candidates {
    /// Replaces the candidates with those from `current` with its legal moves (unless
    /// `frozen`, after the game ended), from `other_turn`, and corrections of `last`
    /// played from `previous` with its legal moves. The vectors of the candidates it
    /// replaces are reused (a position's are rebuilt after every move).
    pub fn rebuild(
        &mut self,
        expected: &Codes,
        current: (&Chess, &[Move]),
        frozen: bool,
        other_turn: Option<Chess>,
        previous: Option<(&Chess, Move, &[Move])>,
        occupancy_only: bool,
    ) {
        let (mut kept_moves, mut squares) = self
            .previous
            .take()
            .map(|p| (p.moves, p.squares))
            .unwrap_or_default();
        // After a move the list holds the previous position's moves (legal moves are
        // generated in the same order for equal positions) and `expected` its board.
        let listed = self
            .listed
            .take()
            .filter(|_| self.occupancy_only == occupancy_only);
        self.previous = previous.map(|(pos, last, moves)| {
            let known = listed.as_ref() == Some(pos) && self.list.len() == moves.len();
            squares.clear();
            // Every move's squares in one pass, then the last move's taken out (their
            // order does not matter): cheaper than filtering while collecting.
            let base = if known {
                squares.extend(self.list.iter().map(|s| s.squares));
                self.expected
            } else {
                squares.extend(moves.iter().map(|&mv| move_squares(mv, pos.turn())));
                super::codes::from_board(pos.board(), occupancy_only)
            };
            // The last move found by its squares first: a word compare per move, where
            // comparing the moves themselves decodes each one's variant.
            let last_squares = move_squares(last, pos.turn());
            if let Some(i) = squares
                .iter()
                .zip(moves)
                .position(|(&s, &mv)| s == last_squares && mv == last)
            {
                squares.swap_remove(i);
            }
            kept_moves.clear();
            kept_moves.extend_from_slice(moves);
            Previous {
                reach: squares.iter().fold(Bitboard::EMPTY, |all, &s| all | s),
                base_diff: diff(&base, expected),
                pos: pos.clone(),
                last,
                moves: kept_moves,
                base,
                expected: *expected,
                occupancy_only,
                squares,
                corrections: OnceCell::new(),
            }
        });
        let list = &mut self.list;
        list.clear();
        self.reach = Bitboard::EMPTY;
        if !frozen {
            self.reach |= slots(list, current, Origin::Current);
        }
        if let Some(pos) = &other_turn {
            self.reach |= slots(list, (pos, &pos.legal_moves()), Origin::OtherTurn);
        }
        self.listed = (!frozen && other_turn.is_none()).then(|| current.0.clone());
        self.expected = *expected;
        self.occupancy_only = occupancy_only;
        self.other_turn = other_turn;
    }

    /// The candidate of `slot`, built the first time it is asked for.
    fn built<'a>(&'a self, slot: &'a Slot) -> &'a Candidate {
        slot.candidate.get_or_init(|| {
            let board = (&self.expected, &self.expected);
            let (origin, mv, mover) = (slot.origin, slot.mv, slot.mover);
            candidate(
                origin,
                mv,
                mover,
                board,
                Bitboard::EMPTY,
                self.occupancy_only,
            )
        })
    }

    /// The slots of `list` whose boards can differ from the expected one on `changed`: a
    /// move's board differs only on its squares, and (`whole`) exactly on `changed`,
    /// which for a normal move is told without building its candidate (see
    /// `differs_exactly`).
    fn slots_for(&self, changed: Bitboard, whole: bool) -> impl Iterator<Item = (usize, &Slot)> {
        let list = if (changed & !self.reach).is_empty() {
            &self.list[..]
        } else {
            &[]
        };
        list.iter().enumerate().filter(move |(_, s)| {
            (changed & !s.squares).is_empty()
                && (!whole || changed.any() && self.differs_exactly(s, changed))
        })
    }

    /// The moves of `list` (built) whose boards can differ from the expected one on
    /// `changed` (`whole`: exactly), as `slots_for` has them.
    fn current(&self, changed: Bitboard, whole: bool) -> impl Iterator<Item = (usize, &Candidate)> {
        self.slots_for(changed, whole)
            .map(|(i, s)| (i, self.built(s)))
    }

    /// Whether the board after `slot`'s move can differ from the expected board on
    /// exactly `changed`. A normal move's candidate (built on the expected board, see
    /// `built`) differs on its from square unless that square reads empty already, and
    /// on its to square unless the code it lands there is the one expected (a capture on
    /// an occupancy-only board): computed here as `candidate` does, so that a piece in
    /// the hand (its from square alone changed) builds none of its moves. Other moves are
    /// left to the candidate itself.
    fn differs_exactly(&self, slot: &Slot, changed: Bitboard) -> bool {
        let Move::Normal {
            role,
            from,
            to,
            promotion,
            ..
        } = slot.mv
        else {
            return true;
        };
        // The cheap tests first: a square outside the move's, then the from square
        // (a piece in the hand changes it alone), then a to square reading empty, which
        // differs from any piece landing; only then the code of the piece landing.
        let on_from = changed.contains(from);
        if (changed & !(Bitboard::from(from) | to)).any()
            || on_from != (self.expected[from.to_usize()] != EMPTY)
        {
            return false;
        }
        let expected_on_to = self.expected[to.to_usize()];
        if expected_on_to == EMPTY {
            return changed.contains(to);
        }
        let landed = normalize(
            piece_code(promotion.unwrap_or(role).of(slot.mover)),
            self.occupancy_only,
        );
        changed.contains(to) == (expected_on_to != landed)
    }

    /// The corrections a board differing from the expected one on `changed` can show
    /// (`whole`) or be part-way to, numbered after `list` (built for the first such
    /// board).
    fn corrections(
        &self,
        changed: Bitboard,
        whole: bool,
    ) -> impl Iterator<Item = (usize, &Candidate)> {
        let corrections = self
            .previous
            .as_ref()
            .filter(|p| p.relevant(changed, whole))
            .map(Previous::corrections);
        let first = self.list.len();
        (first..).zip(corrections.into_iter().flatten())
    }

    /// Candidate `index`, as numbered by `find` and `partial`.
    pub fn get(&self, index: usize) -> Option<&Candidate> {
        match index.checked_sub(self.list.len()) {
            None => self.list.get(index).map(|s| self.built(s)),
            Some(i) => self.previous.as_ref()?.corrections.get()?.get(i),
        }
    }

    /// The move of candidate `index` and the position it is played from, as `get` has
    /// them, without building a candidate of the list (its slot holds both).
    pub fn move_at(&self, index: usize) -> Option<(Move, Origin)> {
        match index.checked_sub(self.list.len()) {
            None => self.list.get(index).map(|s| (s.mv, s.origin)),
            Some(_) => self.get(index).map(|c| (c.mv, c.origin)),
        }
    }

    /// The candidate whose board is exactly `observed` (`changed` = its diff with the
    /// expected board) and that `evidence` accepts. Promotions that only differ in the
    /// piece (indistinguishable on occupancy boards) resolve to the queen.
    pub fn find<'a>(
        &'a self,
        observed: &Codes,
        changed: Bitboard,
        evidence: impl Fn(&Candidate) -> bool,
    ) -> Match {
        let mut found: Option<usize> = None;
        let mut several = false;
        let mut chosen: Option<&Candidate> = None;
        // The list's moves, then the corrections: two loops, not one over the two chained,
        // whose every step asked which half it was in.
        let mut consider = |i: usize, c: &'a Candidate| {
            if c.changed != changed || !c.shown_on(observed, changed) || !evidence(c) {
                return;
            }
            match chosen {
                None => (found, chosen) = (Some(i), Some(c)),
                Some(j) if same_promotion(j, c) => {
                    if c.mv.promotion() == Some(Role::Queen) {
                        (found, chosen) = (Some(i), Some(c));
                    }
                }
                Some(_) => several = true,
            }
        };
        for (i, c) in self.current(changed, true) {
            consider(i, c);
        }
        for (i, c) in self.corrections(changed, true) {
            consider(i, c);
        }
        match (found, several) {
            (Some(_), true) => Match::Several,
            (Some(i), false) => Match::One(i),
            (None, _) => Match::None,
        }
    }

    /// Candidates the board is part-way to: every square that differs from the
    /// expected board is one the move touches, and shows either its final content,
    /// an empty square (a piece in the hand) or, on the promotion square, the pawn.
    /// A move by the side to move is the likelier reading than a correction: the
    /// corrections are only looked at (and built) when no such move fits.
    pub fn partial(&self, observed: &Codes, changed: Bitboard, occupancy_only: bool) -> Vec<usize> {
        if changed.is_empty() {
            return Vec::new();
        }
        let fits = |c: &Candidate| {
            let pawn = normalize(piece_code(Role::Pawn.of(c.mover)), occupancy_only);
            (changed & !c.touched).is_empty()
                && changed.into_iter().all(|sq| {
                    let code = observed[sq.to_usize()];
                    (c.changed.contains(sq) && code == c.value(sq))
                        || code == EMPTY
                        || (c.mv.is_promotion() && sq == c.mv.to() && code == pawn)
                })
        };
        // Squares that all read empty (pieces in the hand) fit every move whose squares
        // hold them, as `slots_for` picks them (a move's candidate touches its squares):
        // no candidate is built for that.
        let in_hand = changed
            .into_iter()
            .all(|sq| observed[sq.to_usize()] == EMPTY);
        let mut current = self
            .slots_for(changed, false)
            .filter(|&(_, s)| in_hand || fits(self.built(s)))
            .map(|(i, _)| i);
        if let Some(first) = current.next() {
            // Room for every move at once (a piece in the hand fits each of its moves):
            // one allocation, not one per doubling.
            let mut list = Vec::with_capacity(self.list.len());
            list.push(first);
            list.extend(current);
            return list;
        }
        self.corrections(changed, false)
            .filter(|(_, c)| fits(c))
            .map(|(i, _)| i)
            .collect()
    }

    /// The moves of candidates `indices` (as numbered by `partial`), each with the
    /// position it is played from (`current` for the side to move), for a pending event.
    pub fn pending(&self, indices: &[usize], current: &Chess) -> PendingMoves {
        let mut pending = PendingMoves::with_capacity(indices.len());
        for (mv, origin) in indices.iter().filter_map(|&i| self.move_at(i)) {
            match (origin, &self.other_turn, &self.previous) {
                (Origin::OtherTurn, Some(pos), _) => pending.push(mv, origin, pos),
                (Origin::Correction, _, Some(p)) => pending.push(mv, origin, &p.pos),
                _ => pending.push(mv, Origin::Current, current),
            }
        }
        pending
    }

    /// The position with the other side to move, if it is being considered.
    pub fn other_turn(&self) -> Option<&Chess> {
        self.other_turn.as_ref()
    }
}

fn same_promotion(a: &Candidate, b: &Candidate) -> bool {
    a.origin == b.origin
        && a.mv.is_promotion()
        && b.mv.is_promotion()
        && a.mv.from() == b.mv.from()
        && a.mv.to() == b.mv.to()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::codes::from_board;
    use shakmaty::{CastlingMode, fen::Fen};

    fn build(fen: &str, occupancy: bool) -> (Chess, Codes, Candidates) {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let expected = from_board(pos.board(), occupancy);
        let mut c = Candidates::default();
        c.rebuild(
            &expected,
            (&pos, &pos.legal_moves()),
            false,
            None,
            None,
            occupancy,
        );
        (pos, expected, c)
    }

    fn play(pos: &Chess, uci: &str, occupancy: bool) -> Codes {
        let mv = uci
            .parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(pos)
            .unwrap();
        let mut next = pos.clone();
        next.play_unchecked(mv);
        from_board(next.board(), occupancy)
    }

    #[test]
    fn finds_exactly_the_move_played() {
        let (pos, expected, c) = build(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            false,
        );
        let board = play(&pos, "g1f3", false);
        match c.find(&board, diff(&board, &expected), |_| true) {
            Match::One(i) => assert_eq!(c.pending(&[i], &pos).sans(), ["Nf3"]),
            other => panic!("{other:?}"),
        }
        assert_eq!(c.find(&expected, Bitboard::EMPTY, |_| true), Match::None);
    }

    /// Rh1-f1 played from a bare king and rook: (position before it, the move, position
    /// after it), and a fresh list built for the position before.
    fn rook_to_f1(occupancy: bool) -> (Chess, Move, Chess, Candidates) {
        let (before, _, c) = build("4k3/8/8/8/8/8/8/4K2R w K - 0 1", occupancy);
        let rf1 = "h1f1"
            .parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(&before)
            .unwrap();
        let mut pos = before.clone();
        pos.play_unchecked(rf1);
        (before, rf1, pos, c)
    }

    /// Rebuilds `c` once `mv` is recorded from `before` (giving `pos`); the board expected.
    fn record(c: &mut Candidates, before: &Chess, mv: Move, pos: &Chess, occupancy: bool) -> Codes {
        let expected = from_board(pos.board(), occupancy);
        let previous = before.legal_moves();
        c.rebuild(
            &expected,
            (pos, &pos.legal_moves()),
            false,
            None,
            Some((before, mv, &previous)),
            occupancy,
        );
        expected
    }

    #[test]
    fn corrections_are_built_for_the_boards_that_can_show_one() {
        // Rh1-f1 was recorded; castling would replace it.
        let (before, rf1, pos, _) = rook_to_f1(false);
        let mut c = Candidates::default();
        let expected = record(&mut c, &before, rf1, &pos, false);
        let built = |c: &Candidates| c.previous.as_ref().unwrap().corrections.get().is_some();
        // Black's king in the hand: no move of White's from before Rf1 explains e8.
        let mut lifted = expected;
        lifted[shakmaty::Square::E8.to_usize()] = EMPTY;
        assert_eq!(
            c.find(&lifted, diff(&lifted, &expected), |_| true),
            Match::None
        );
        assert!(!built(&c));
        // The king on g1 too: castling, though the king's squares are not the rook's.
        let castled = play(&before, "e1g1", false);
        match c.find(&castled, diff(&castled, &expected), |_| true) {
            Match::One(i) => assert_eq!(c.pending(&[i], &pos).sans(), ["O-O"]),
            other => panic!("{other:?}"),
        }
        assert!(built(&c));
    }

    #[test]
    fn the_previous_position_taken_from_the_list_is_as_built_afresh() {
        for occupancy in [false, true] {
            // Rh1-f1 recorded after the list of the position before it was built.
            let (before, rf1, pos, mut reused) = rook_to_f1(occupancy);
            let base = from_board(before.board(), occupancy);
            let mut fresh = Candidates::default();
            for c in [&mut reused, &mut fresh] {
                record(c, &before, rf1, &pos, occupancy);
            }
            assert_eq!(reused.previous.as_ref().unwrap().base, base);
            assert_eq!(format!("{reused:?}"), format!("{fresh:?}"));
        }
    }

    #[test]
    fn occupancy_promotion_defaults_to_queen() {
        let (pos, expected, c) = build("8/4P1k1/8/8/8/8/8/4K3 w - - 0 1", true);
        let board = play(&pos, "e7e8n", true);
        match c.find(&board, diff(&board, &expected), |_| true) {
            Match::One(i) => assert_eq!(c.pending(&[i], &pos).sans(), ["e8=Q"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_normal_move_s_changed_squares_are_told_without_its_candidate() {
        // Captures, promotions (with capture), en passant and castling, either board.
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/1P4P1/8/3pP3/8/2n2q2/P1PP1PP1/R3K2R w KQkq d6 0 1",
        ];
        for occupancy in [false, true] {
            for fen in fens {
                let (_, _, c) = build(fen, occupancy);
                for slot in &c.list {
                    let changed = c.built(slot).changed;
                    assert!(c.differs_exactly(slot, changed), "{:?}", slot.mv);
                    let normal = matches!(slot.mv, Move::Normal { .. });
                    let from = Bitboard::from(slot.mv.from().unwrap());
                    if normal && changed != from {
                        assert!(!c.differs_exactly(slot, from), "{:?}", slot.mv);
                    }
                }
            }
        }
    }

    #[test]
    fn partial_moves_are_recognised() {
        let (pos, expected, c) = build("4k3/8/8/8/8/8/8/4K2R w K - 0 1", false);
        // King on g1, rook still on h1: part-way to castling.
        let mut board = expected;
        board[shakmaty::Square::E1.to_usize()] = EMPTY;
        board[shakmaty::Square::G1.to_usize()] = 5;
        let partial = c.partial(&board, diff(&board, &expected), false);
        assert_eq!(c.pending(&partial, &pos).sans(), ["O-O"]);
        // A white rook appearing on a8 is part of no move.
        let mut wrong = expected;
        wrong[shakmaty::Square::A8.to_usize()] = 2;
        assert!(c.partial(&wrong, diff(&wrong, &expected), false).is_empty());
    }
}
