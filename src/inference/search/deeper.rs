//! Searching deeper than a shorter explanation that leaves a piece the board read
//! standing off every position it passes through, or that answers a move while the
//! board read its piece standing elsewhere.

use std::time::Duration;

use shakmaty::{Bitboard, Chess, Move, Piece, Position, Rank, Role, Square, attacks};

use super::choice::choose;
use super::dfs::Search;
use super::moves::two_steps_beside;
use super::{Evidence, Explanation, MAX_COUNTED, MAX_NODES, READ_PLIES, Sequence};
use crate::inference::codes::{Codes, EMPTY, code_piece, move_effect, piece_code};
use crate::inference::history::History;

/// The squares a move takes its piece from and to, when it moves one piece (not
/// castling).
fn moved(mv: Move) -> Option<(Square, Square)> {
    match mv {
        Move::Normal { from, to, .. } | Move::EnPassant { from, to } => Some((from, to)),
        _ => None,
    }
}

/// Whether each piece the board read since the evidence's start and replaced since
/// stood on its square in the position `moves` start from or in one they lead to.
pub(super) fn readings_explained(
    start: &Chess,
    codes: &Codes,
    moves: &[Move],
    evidence: &Evidence,
) -> bool {
    let replaced = evidence
        .history
        .replaced_pieces(evidence.start)
        .map(|(square, _, code)| (square, code));
    shows(start, codes, moves, replaced)
}

/// The codes of the position `moves` start from (`codes`, of `start`) and of each one
/// they lead to.
pub(crate) fn codes_along(start: &Chess, codes: &Codes, moves: &[Move]) -> Vec<Codes> {
    let mut positions = vec![*codes];
    let mut pos = start.clone();
    for &mv in moves {
        let mut next = *positions.last().expect("the start");
        move_effect(mv, pos.turn(), false).apply(&mut next);
        positions.push(next);
        pos.play_unchecked(mv);
    }
    positions
}

/// Whether each piece the board read at or after `from` for at least `least` (longer
/// than a wrong code or a slide's step is read), and replaced since, stands on its square
/// in one of `positions` (in the order played), each in one no earlier than the piece
/// read before it stands in: the board reads positions in the order they are played.
pub(crate) fn stood_shown_in_order(
    positions: &[Codes],
    history: &History,
    (from, least): (Duration, Duration),
) -> bool {
    shown_in_order(positions, &history.stood_replaced(from, least))
}

/// Whether each of `pieces` (square, code, in the order read) stands on its square in
/// one of `positions` (in the order played), no earlier than the one before it.
fn shown_in_order(positions: &[Codes], pieces: &[(Square, u8)]) -> bool {
    let mut at = 0;
    pieces.iter().all(|&(square, code)| {
        let found = positions[at..]
            .iter()
            .position(|p| p[square.to_usize()] == code);
        found.inspect(|i| at += i).is_some()
    })
}

/// Whether each of `pieces` (square, code) stands on its square in the position `moves`
/// start from (`codes`) or in one they lead to.
fn shows(
    start: &Chess,
    codes: &Codes,
    moves: &[Move],
    mut pieces: impl Iterator<Item = (Square, u8)>,
) -> bool {
    let positions = codes_along(start, codes, moves);
    pieces.all(|(square, code)| stands(&positions, square, code))
}

/// The codes read on each square (`read`, a bit per code), with every piece a piece
/// read there may have taken there (see `may_have_taken`): a piece may land where it is
/// taken before a scan reads it, and the board then reads only the piece that took it
/// (Nge3+ Bxe3, the knight never read on e3; f6 exf6 as much as f5 exf6).
pub(super) fn with_unread_victims(read: &[u16; 64]) -> [u16; 64] {
    let mut widened = *read;
    for square in Square::ALL {
        let bits = read[square.to_usize()];
        for code in (0..16u8).filter(|&code| bits & 1 << code != 0) {
            if let Some(taker) = code_piece(code) {
                may_have_taken(&mut widened, read, square, taker);
            }
        }
    }
    widened
}

/// Marks in `placed` (a bit per code on each square) the pieces `taker`, read on `square`,
/// may have taken there before a scan read them: any piece of the other side; for a
/// pawn on the square it would take en passant to, where no pawn of the other side was
/// read (`read`), also that side's pawn on the two steps beside it (b4 axb3 as much as
/// b3 axb3): only a pawn takes en passant.
fn may_have_taken(placed: &mut [u16; 64], read: &[u16; 64], square: Square, taker: Piece) {
    let victims = !taker.color;
    for role in Role::ALL {
        placed[square.to_usize()] |= 1 << piece_code(role.of(victims));
    }
    let pawn = 1 << piece_code(Role::Pawn.of(victims));
    if taker.role == Role::Pawn
        && square.rank() == taker.color.relative_rank(Rank::Sixth)
        && read[square.to_usize()] & pawn == 0
        && let Some(pushed) = two_steps_beside(square)
    {
        placed[pushed.to_usize()] |= pawn;
    }
}

/// Marks each square read with a piece for one scan only, with the code of no piece that
/// left another square (not a slide's step), as possibly any piece in `placed` (a bit
/// per code on each square): a wrong code (see `History::misread_briefly`). Returns
/// those squares.
pub(super) fn misread_as_any(placed: &mut [u16; 64], evidence: &Evidence) -> Bitboard {
    let misread = evidence
        .history
        .misread_briefly(evidence.start, evidence.scan);
    for square in misread {
        placed[square.to_usize()] = u16::MAX;
    }
    misread
}

/// Whether a piece of `code` stands on `square` in one of `positions`.
fn stands(positions: &[Codes], square: Square, code: u8) -> bool {
    positions.iter().any(|p| p[square.to_usize()] == code)
}

/// Whether `mv`, played from `before`, takes a piece of `code` over `square`: between
/// the squares of a piece it moves (castling's king and rook), or within the rectangle
/// of a knight's move (a knight slid across the board).
pub(super) fn passes(mv: Move, before: &Codes, square: Square, code: u8) -> bool {
    let ways = match (mv, mv.castling_side()) {
        (Move::Castle { king, rook }, Some(side)) => {
            let Some(color) = code_piece(before[king.to_usize()]).map(|p| p.color) else {
                return false;
            };
            [
                Some((king, side.king_to(color))),
                Some((rook, side.rook_to(color))),
            ]
        }
        _ => [mv.from().map(|from| (from, mv.to())), None],
    };
    ways.into_iter().flatten().any(|(from, to)| {
        before[from.to_usize()] == code
            && if mv.role() == Role::Knight {
                let files = from.file().min(to.file())..=from.file().max(to.file());
                let ranks = from.rank().min(to.rank())..=from.rank().max(to.rank());
                files.contains(&square.file()) && ranks.contains(&square.rank())
            } else {
                attacks::between(from, to).contains(square)
            }
    })
}

/// A search deeper than a shorter explanation, for one that shows each piece the board
/// read for longer than a wrong code lasts, and replaced since, where it stood (and each
/// piece in the hand read put down for less and moved on, there or passing over).
pub(super) struct Deeper<'a> {
    /// The position the search starts from, and its codes.
    pub(super) start: &'a Chess,
    pub(super) codes: &'a Codes,
    target: &'a Codes,
    evidence: Evidence<'a>,
    skip_first: Option<Move>,
    /// The pieces read standing and replaced since (`History::stood_replaced`).
    stood: Vec<(Square, u8)>,
    /// The pieces in the hand read put down for less (`History::put_down_briefly`).
    brief: Vec<(Square, u8)>,
}

impl<'a> Deeper<'a> {
    pub(super) fn new(
        start: &'a Chess,
        codes: &'a Codes,
        target: &'a Codes,
        evidence: Evidence<'a>,
        skip_first: Option<Move>,
    ) -> Self {
        let stood = evidence
            .history
            .stood_replaced(evidence.readings, evidence.scan);
        let brief = evidence
            .history
            .put_down_briefly(evidence.readings, evidence.scan);
        Deeper {
            start,
            codes,
            target,
            evidence,
            skip_first,
            stood,
            brief,
        }
    }

    /// Whether `s` shows each piece read standing where it stood, and each put down
    /// briefly where it was or on its way.
    pub(super) fn shown(&self, s: &Sequence) -> bool {
        let positions = codes_along(self.start, self.codes, &s.moves);
        let on = |&(square, code): &(Square, u8)| stands(&positions, square, code);
        self.stood.iter().all(on) && self.brief_shown(&positions, &s.moves)
    }

    /// Whether `s` shows each piece read standing where it stood, in the order read, and
    /// each put down briefly where it was or on its way.
    fn shown_in_order(&self, s: &Sequence) -> bool {
        let positions = codes_along(self.start, self.codes, &s.moves);
        shown_in_order(&positions, &self.stood) && self.brief_shown(&positions, &s.moves)
    }

    /// Whether each piece read put down briefly stands on its square in one of
    /// `positions` (those `moves` pass through), or one of `moves` takes a piece of its
    /// code over the square: between the squares of a line move, within the rectangle
    /// of a knight's (a knight slid across the board).
    fn brief_shown(&self, positions: &[Codes], moves: &[Move]) -> bool {
        self.brief.iter().all(|&(square, code)| {
            stands(positions, square, code)
                || moves
                    .iter()
                    .zip(positions)
                    .any(|(&mv, before)| passes(mv, before, square, code))
        })
    }

    /// Whether the board read a piece standing (or put down briefly) that none of the
    /// `shorter` explanations shows where it stood.
    pub(super) fn overlooked(&self, shorter: &[&Sequence]) -> bool {
        (!self.stood.is_empty() || !self.brief.is_empty()) && !shorter.iter().any(|s| self.shown(s))
    }

    /// When none of the `shorter` explanations shows every such piece, or they are weak
    /// (not `complete`) and each holds a piece in the hand through its side's next move
    /// (not `ordered`): the explanations of the fewest moves in `depths` (up to
    /// [`READ_PLIES`] beyond, on a board read without lost updates) that show them
    /// (those read standing in the order read), are seen whole (every square seen to
    /// change, promoted pieces read, in the order of the lifts where that tells them
    /// from the shorter ones: see below) and complete if `complete` (the shorter one
    /// was), among moves whose piece was read on its destination, or taken there (or
    /// en passant) by a piece read standing (few, so the search stays cheap). `None`
    /// when there is none, or the search was cut (it cannot tell them from the rest).
    pub(super) fn search(
        &self,
        shorter: &[&Sequence],
        depths: std::ops::RangeInclusive<usize>,
        complete: bool,
    ) -> Option<Explanation> {
        // Nobody holds a piece through their own next move: weak explanations that each
        // do are no more the moves made than ones that overlook a reading (c3 Be3 Rxe3
        // Be6 with the bishop from g5 lifted before c3, for Be3 Bxe3 Rxe3 Be6 c3: the
        // bishop taken as it landed, the five moves past the depth). Such a piece may
        // be taken before a scan reads it: past them, a move may land where the board
        // read a piece of the other side (see `with_unread_victims`).
        let held_through = !complete && shorter.iter().all(|s| !s.ordered);
        if !held_through && !self.overlooked(shorter) {
            return None;
        }
        // Moves the board read being made, faster than it rested between them, may be
        // more than the search reaches: each is read on its destination, so the few such
        // lines are searched deeper. (Not after lost updates: the board read afresh
        // shows every piece on its destination.)
        let beyond = if self.evidence.continuous() {
            READ_PLIES
        } else {
            0
        };
        let depths = *depths.start()..=*depths.end() + beyond;
        // The deeper ones are begun in the order of the lifts where the shorter ones
        // fall short for want of it (`held_through`) or one of them keeps it. Where none
        // does, that order tells nothing between them (Qxe5 Nd4 with the queen read
        // standing on b5 as the knight landed, for Qb5 Nd4 Qxe5: the queen slid back
        // across d5, which read it again and then left it last).
        let in_order = held_through || shorter.iter().any(|s| s.ordered);
        self.search_for(depths, complete, held_through, |s| {
            (s.ordered || !in_order) && self.shown_in_order(s)
        })
    }

    /// When no sequence of at most `max_plies` moves explains the board: the complete
    /// explanations of the fewest moves up to [`READ_PLIES`] beyond, searched as `search`
    /// does (on a board read without lost updates). A burst of moves made faster than
    /// the board rested between them, each piece read on its destination, is such a
    /// line (e5 Bf5 d4 e6 Bd3 within two seconds, wrong codes read on the way). So is
    /// one whose piece was taken on its destination before a scan read it there, by a
    /// piece of the other side read there (Nc5 dxc6 bxa4 cxd7+ Nxd7, captures swapped,
    /// the pawn never read on d7).
    pub(super) fn beyond(&self, max_plies: usize) -> Option<Explanation> {
        if !self.evidence.continuous() {
            return None;
        }
        let depths = (max_plies + 1)..=(max_plies + READ_PLIES);
        self.search_for(depths, true, true, |s| s.ordered && self.shown_in_order(s))
    }

    /// For shorter explanations that each answer a move while its piece stood elsewhere
    /// (see `landed_early`): the complete explanations of the fewest moves in `depths`
    /// that are in turn, searched as `search` does.
    pub(super) fn search_in_turn(
        &self,
        depths: std::ops::RangeInclusive<usize>,
    ) -> Option<Explanation> {
        self.search_for(depths, true, false, |s| {
            s.ordered && self.shown(s) && !self.landed_early(s)
        })
    }

    /// Whether `s` answers one of its moves while the board read that move's piece
    /// standing elsewhere: the reply's piece was read landing while the move's
    /// destination did not read it, and another square did, one off the move's way (or
    /// between its squares, the piece still read there a scan after the reply landed)
    /// that the move's position leaves without such a piece. A player replies to a
    /// finished move, so the piece was put down there, and that was the move answered
    /// (the king read on f6 as b4 landed, then on g6: Kf6 b4 Kg6, not Kg6 b4).
    pub(super) fn landed_early(&self, s: &Sequence) -> bool {
        let (history, begun) = (self.evidence.history, self.evidence.start);
        let mut pos = self.start.clone();
        let mut codes = *self.codes;
        // The last move, by its squares, with the code it put down and the position
        // it left.
        let mut answered: Option<((Square, Square), u8, Codes)> = None;
        // Only a reply read leaving and landing since updates were last lost: one read
        // landing by the fresh read landed at some time while nothing was read, and one
        // under way then may have landed meanwhile and been lifted again.
        let live = |at: Duration| self.evidence.lost.is_none_or(|lost| at > lost);
        for &mv in &s.moves {
            move_effect(mv, pos.turn(), false).apply(&mut codes);
            pos.play_unchecked(mv);
            let squares = moved(mv);
            // When the reply's piece was first read on its destination, from a scan
            // before it was read leaving.
            let landed = |(origin, to): (Square, Square)| {
                let left = history.left(origin, begun).filter(|&at| live(at))?;
                let since = left.saturating_sub(self.evidence.scan);
                history.filled_with(to, codes[to.to_usize()], since)
            };
            if let (Some((way, code, after)), Some(reply)) = (answered, squares)
                && let Some(at) = landed(reply).filter(|&at| live(at))
                && self.stood_elsewhere(way, code, &after, at)
            {
                return true;
            }
            answered = squares.map(|way| (way, codes[way.1.to_usize()], codes));
        }
        false
    }

    /// Whether, at `at`, the board read the piece (`code`) a move put down on neither of
    /// its squares (`way`) nor between them, but on a square that read it since the
    /// evidence's start and that `after`, the position the move left, has without it;
    /// a square that read a piece of its side already before `at` (perhaps with a wrong
    /// code first): one filled in the same reading may be a later move's, read out of
    /// order within a scan, and a wrong code read there for a scan another piece's.
    fn stood_elsewhere(
        &self,
        (origin, to): (Square, Square),
        code: u8,
        after: &Codes,
        at: Duration,
    ) -> bool {
        let history = self.evidence.history;
        if history.reading_at(to, at) == Some(code) {
            return false;
        }
        let between = attacks::between(origin, to);
        let on_way = between.with(origin).with(to);
        let read = history.codes_read(self.evidence.start);
        let color = |code: u8| code_piece(code).map(|p| p.color);
        let before = at.saturating_sub(Duration::from_nanos(1));
        // A square between the move's squares read with its piece is a slide's step,
        // unless the piece still stood there a scan after the reply landed: it was put
        // down there (Bf4 read as Qc2 landed and for two scans more, then Bxg3: not
        // Bxg3 Qc2). Its own square may read it again when a later move brings it back.
        let scan = self.evidence.scan;
        let stopped =
            |sq: Square| between.contains(sq) && history.reading_at(sq, at + scan) == Some(code);
        Square::ALL.into_iter().any(|sq| {
            (!on_way.contains(sq) || stopped(sq))
                && after[sq.to_usize()] != code
                && read[sq.to_usize()] & 1u16.checked_shl(code.into()).unwrap_or(0) != 0
                && history.reading_at(sq, at) == Some(code)
                && history
                    .reading_at(sq, before)
                    .is_some_and(|was| color(was).is_some() && color(was) == color(code))
        })
    }

    /// The complete (if `complete`) explanations of the fewest moves in `depths` that
    /// `fits` accepts, every square seen to change and promoted pieces read, among moves
    /// whose piece was read on its destination or taken there by a piece read standing
    /// (see `search`), or, with `unread_victims`, by one of the other side read there.
    /// With a node budget of its own: the search that came to it may have spent its
    /// own on sequences these moves rule out (pieces in the hands fit in many ways),
    /// and the moves read landing are few (Rc8 Rxc8+ Bxc8 Nd5, the rook taken on c8
    /// before a scan read it there, wrong codes read on c8 and d5: not reported as Bc8
    /// Nd5 with both rooks in the hands).
    fn search_for(
        &self,
        depths: std::ops::RangeInclusive<usize>,
        complete: bool,
        unread_victims: bool,
        fits: impl Fn(&Sequence) -> bool,
    ) -> Option<Explanation> {
        let mut nodes = 0;
        let (start, codes) = (self.start, self.codes);
        let read = self.evidence.history.codes_read(self.evidence.start);
        let mut placed = if unread_victims {
            with_unread_victims(&read)
        } else {
            read
        };
        // The rook read on e3 as a pawn, then slid back over e4, for Re3 Rc3 Re5 (not Re4
        // Rc3 Re5, leaving the reading on e3 to no piece).
        let misread = misread_as_any(&mut placed, &self.evidence);
        // A piece read standing there may have landed by taking one never read there
        // (Qe4+ Qxe4, the white queen taken before a scan read it): moves of the other
        // side to its square are tried too.
        for &(square, code) in &self.stood {
            if let Some(taker) = code_piece(code) {
                may_have_taken(&mut placed, &read, square, taker);
            }
        }
        for plies in depths {
            let mut found = Vec::new();
            let mut path = Vec::with_capacity(plies);
            let mut search = Search {
                skip_first: self.skip_first,
                placed: Some(&placed),
                ..Search::new(self.target, self.evidence, false, &mut found, &mut nodes)
            };
            search.dfs(start, codes, plies, &mut path);
            if nodes >= MAX_NODES || found.len() >= MAX_COUNTED {
                return None;
            }
            found.retain(|s| {
                (s.complete || !complete) && s.visible() && s.promotions_seen && fits(s)
            });
            if !found.is_empty() {
                // A misread is of a piece standing there: those that have one on each
                // such square, or take one over it, where some do.
                let covers = |s: &Sequence| {
                    let positions = codes_along(start, codes, &s.moves);
                    misread.into_iter().all(|square| {
                        positions.iter().any(|p| p[square.to_usize()] != EMPTY)
                            || s.moves.iter().zip(&positions).any(|(&mv, before)| {
                                mv.from().is_some_and(|from| {
                                    passes(mv, before, square, before[from.to_usize()])
                                })
                            })
                    })
                };
                if found.iter().any(covers) {
                    found.retain(covers);
                }
                return Some(choose(found, plies));
            }
        }
        None
    }
}
