//! The evidence rules a sequence is judged by: on an occupancy-only board, when each
//! piece was seen to leave and land; on any board, the order of the lifts and the pieces
//! read standing.

use std::time::Duration;

use shakmaty::{Bitboard, CastlingSide, Chess, Color, Move, Position, Rank, Role, Square, attacks};

use super::dfs::Search;
use super::moves::{
    capture_square, landing_elsewhere, moved_elsewhere, one_step_twin, start_push,
    taken_like_its_twin, two_steps_beside,
};
use super::{IN_PROGRESS_SQUARES, Step};
use crate::inference::codes::{
    Codes, EMPTY, code_piece, diff, move_effect, move_squares, normalize, occupied, piece_code,
};

/// How long after a capturing piece is in the hand and its victim off the board the piece
/// is put down: a player captures in one motion (the simulator's capture styles take at
/// most 0.9 s between the later of the two and the landing). A square of the victim read
/// empty longer and filled again is a piece held there: one of the side to reply, lifted
/// and put back while the capture was swapped elsewhere within a scan (Bxh3 read for
/// Bxf3, the pawn on h3 held 2.6 s).
const PUT_DOWN: Duration = Duration::from_secs(1);

/// Whether a capture's piece, read lifted at `lifted`, can have landed at `landed` on the
/// square read emptied at `emptied`: when the piece was in the hand first, it is put
/// down within `PUT_DOWN` (and a scan's slack) of the victim's removal. A victim taken
/// off first may lie off the board any time before the piece is lifted.
pub(crate) fn put_down(
    lifted: Duration,
    emptied: Duration,
    landed: Duration,
    scan: Duration,
) -> bool {
    emptied < lifted || landed <= emptied + PUT_DOWN + scan
}

/// A promotion of a sequence, as `Search::promoted` finds it.
struct Promoted<'p> {
    square: Square,
    role: Role,
    color: Color,
    /// The promoted piece's code.
    code: u8,
    /// When the pawn was read leaving its square.
    left: Duration,
    /// The sequence's later move that lands on the promotion square first.
    capture: Option<&'p Step>,
    /// When that move's piece was first read there since `left`.
    taken: Option<Duration>,
}

impl Promoted<'_> {
    /// Until when a reading on the square may be the promoted piece's.
    fn until(&self) -> Duration {
        self.taken.unwrap_or(Duration::MAX)
    }
}

/// The indices of `path`'s promotions.
fn promotions(path: &[Step]) -> impl Iterator<Item = usize> + '_ {
    (path.iter().enumerate())
        .filter(|(_, step)| step.mv.is_promotion())
        .map(|(i, _)| i)
}

/// The squares of the bishops, rooks and queens of the side to reply to `mv` (played in
/// `pos`) that reach `square`, where it lands: pieces that can slide across it.
pub(super) fn sliders_across(pos: &Chess, mv: Move, square: Square) -> Bitboard {
    let board = pos.board();
    let from = mv.from().map_or(Bitboard::EMPTY, Bitboard::from);
    let occupied = (board.occupied() & !from) | Bitboard::from(square);
    let diagonal = attacks::bishop_attacks(square, occupied) & (board.bishops() | board.queens());
    let straight = attacks::rook_attacks(square, occupied) & (board.rooks() | board.queens());
    (diagonal | straight) & board.by_color(!pos.turn())
}

impl Search<'_> {
    /// The destination of `mv`, a move to an empty square, when it was last read filling
    /// or emptying more than a scan before its piece was first read leaving its square:
    /// that change was another move's (a pawn leaving e5 before Nf3-e5), no sign of this
    /// one landing. A code read anew there since is no landing either (Qe8 read as a
    /// pawn first, its own code a scan later, both before the queen left e7: no Qe7-e8).
    /// Only on readings without a gap since the evidence's start: what a fresh read
    /// shows changed while nothing was read, in any order.
    pub(super) fn changed_only_before_leaving(&self, mv: Move) -> Option<Square> {
        if !self.evidence.continuous() {
            return None;
        }
        let Move::Normal {
            from,
            to,
            capture: None,
            ..
        } = mv
        else {
            return None;
        };
        let history = self.evidence.history;
        let left = history.left(from, self.evidence.start)?;
        let changed = history.last_filled_or_left(to)?;
        (changed + self.evidence.scan < left).then_some(to)
    }

    /// On an occupancy-only board, whether `step`'s landing was read as a piece of the
    /// side to reply sliding across its square shows it: filled for one scan only, no
    /// earlier than such a piece (see `sliders_across`) was read leaving its square, and
    /// empty again. The move's piece, landed there, stands until the reply takes it, and
    /// a reply lifted before the landing was read takes it within a scan only in the
    /// fastest of captures: such a landing is not seen, a guess as good as a capture
    /// swapped within a scan (Qxe2 swapped, then Black's queen sliding g5-a5 read on f5
    /// as it was lifted: not Qf5 with that queen taking it).
    pub(super) fn slid_over(&self, step: &Step) -> bool {
        let Some(square) = step.fills.single_square() else {
            return false;
        };
        if step.across.is_empty() || !self.evidence.continuous() {
            return false;
        }
        let (history, scan) = (self.evidence.history, self.evidence.scan);
        let Some(at) = history.filled(square, step.lift.saturating_sub(scan)) else {
            return false;
        };
        history
            .left(square, at)
            .is_some_and(|gone| gone <= at + scan)
            && step
                .across
                .into_iter()
                .any(|sq| history.left(sq, step.lift).is_some_and(|t| t <= at))
    }

    /// On an occupancy-only board, whether `mv`, replacing the last move (`skip_first`),
    /// a quiet move, by the same piece to another square, was read landing there (its
    /// square filled) no earlier than a scan before the piece left the last move's
    /// square: as `Engine::moved_on` has it for a single move.
    pub(super) fn moved_on(&self, mv: Move) -> bool {
        let (true, Some(last)) = (self.occupancy_only, self.skip_first) else {
            return true;
        };
        let Some((to, square)) = moved_elsewhere(last, mv) else {
            return true;
        };
        let history = self.evidence.history;
        history.last_left(to).is_none_or(|vacated| {
            let since = vacated.saturating_sub(self.evidence.scan);
            history.filled(square, since).is_some()
        })
    }

    /// On an occupancy-only board, whether a capture's landing was seen: its target
    /// square, occupied before and after, read empty after the previous move's lift
    /// (`after`) and occupied again from the reading of the piece's lift on (the captured
    /// piece removed, then the capturing piece placed: not before it was lifted, as
    /// `Engine::landed` has it). A square read empty for a scan and filled again before
    /// the lift is a misread (flicker), no landing. A capture whose pieces were
    /// swapped within a scan shows nothing there, and neither does a capture of another
    /// piece by the same mover: the last move landing on that square, or one filling it
    /// that this capture would then take, is no evidence for either. The move's other
    /// squares need no such check: the search only moves pieces seen leaving, and the
    /// squares they fill show in the board or were seen filled. When a move follows
    /// (lifted at `next_lift`), the landing is read no later than a scan after that lift,
    /// as `landed_by` has it for the squares a move fills: a player replies to a finished
    /// move, so a filling read later (the square flickering during the reply) is none.
    /// A piece in the hand before its victim was taken off is put down soon after
    /// (`put_down`, readings continuous): a square read empty longer is a piece held
    /// there, no landing.
    pub(super) fn capture_landed(
        &self,
        step: &Step,
        after: Duration,
        next_lift: Option<Duration>,
    ) -> bool {
        let Move::Normal {
            capture: Some(_),
            to,
            ..
        } = step.mv
        else {
            return true;
        };
        let history = self.evidence.history;
        let scan = self.evidence.scan;
        let Some(emptied) = history.left(to, after) else {
            return false;
        };
        history
            .filled(to, emptied.max(step.lift))
            .is_some_and(|at| {
                next_lift.is_none_or(|next| at <= next + scan)
                    && (!self.evidence.continuous() || put_down(step.lift, emptied, at, scan))
            })
    }

    /// The squares empty on `codes` (where the search starts) and read filling since the
    /// board last showed its occupancy (the newest such board among the changes kept), or
    /// since the readings began if later. Before the board showed that position, the
    /// fills are the recorded moves' (a move recorded by a search leaves the evidence's
    /// start where it was).
    pub(super) fn fills_read_since_shown(&self, codes: &Codes) -> Bitboard {
        let on = occupied(codes);
        let history = self.evidence.history;
        let Some(shown) = history
            .boards_back(*self.target)
            .find(|(_, b)| occupied(b) == on)
            .map(|(t, _)| t)
        else {
            return Bitboard::EMPTY;
        };
        history.filled_after(shown.max(self.evidence.readings)) & !on
    }

    /// On an occupancy-only board, whether every square in `fills_read` (empty where the
    /// search starts, read filled since) is one the sequence fills, or passes over
    /// sliding, or one its move in progress fills or a piece in the hand can reach.
    /// Nothing but a piece fills an empty square there (a flicker or a piece adjusted
    /// reads a square empty, never filled): a sequence that leaves such a reading out
    /// explains the board by moves other than those made (Rxd5 with a rook in the hand,
    /// for Rd8 read landing, Rxe7 swapped and the rook on d8 lifted again).
    /// A piece crosses a square or is put down there only after it left its own (a
    /// scan's slack): a square read filling only before that is no place it went (Qf5
    /// read landing, then White's queen read leaving e4: not Qh4 with that queen put
    /// down on f5 and lifted again, nor Qh4 Qxg6+ with it sliding over f5).
    pub(super) fn fills_covered(&self, path: &[Step], tail: Option<(&Chess, &Codes)>) -> bool {
        let history = self.evidence.history;
        let scan = self.evidence.scan;
        // The squares of `reach` read filling since `left` (a scan before).
        let since = |reach: Bitboard, left: Duration| -> Bitboard {
            let from = left.saturating_sub(scan);
            (reach & self.fills_read)
                .into_iter()
                .filter(|&fill| history.filled(fill, from).is_some())
                .collect()
        };
        let mut covered = Bitboard::EMPTY;
        for s in path {
            covered |= s.fills;
            if let Move::Normal { from, to, .. } = s.mv {
                // Empty for a knight's jump or a one-square step.
                covered |= since(shakmaty::attacks::between(from, to), s.lift);
            }
        }
        if let Some((pos, after)) = tail {
            covered |= occupied(self.target) & !occupied(after);
            let begun = path.last().map_or(self.evidence.start, |s| s.lift);
            for sq in occupied(after) & !occupied(self.target) {
                if let Some(left) = history.left(sq, begun) {
                    covered |= since(pos.board().attacks_from(sq), left);
                }
            }
        }
        (self.fills_read & !covered).is_empty()
    }

    /// Whether the target is `codes` with a move of the side to move in progress: one of
    /// its pieces in the hand, or part of a legal move (each square the move changes
    /// shows its final content, an empty square or, on the promotion square, the pawn),
    /// but not all of it.
    pub(super) fn in_progress(&self, pos: &Chess, codes: &Codes) -> bool {
        let changed = diff(codes, self.target);
        if changed.count() > IN_PROGRESS_SQUARES {
            return false;
        }
        if let Some(sq) = changed.single_square()
            && self.target[sq.to_usize()] == EMPTY
            && pos.board().color_at(sq) == Some(pos.turn())
        {
            return true;
        }
        let turn = pos.turn();
        let pawn = normalize(piece_code(Role::Pawn.of(turn)), self.occupancy_only);
        // Whether the target shows `mv` under way: begun, not finished.
        let fits = |&mv: &Move| {
            // Most moves miss a square still differing: no effect needed to tell.
            if (changed & !move_squares(mv, turn)).any() {
                return false;
            }
            let effect = move_effect(mv, turn, self.occupancy_only);
            let squares = effect.squares();
            if (changed & !squares).any()
                || squares
                    .into_iter()
                    .all(|sq| effect.code_on(sq) == Some(self.target[sq.to_usize()]))
            {
                return false;
            }
            changed.into_iter().all(|sq| {
                let code = self.target[sq.to_usize()];
                Some(code) == effect.code_on(sq)
                    || code == EMPTY
                    || (mv.is_promotion() && sq == mv.to() && code == pawn)
            }) && !self.landed_still_standing(mv, changed)
        };
        // A move other than en passant or castling changes one square holding a piece of
        // its side (where it leaves) and one other (where it lands): a board differing
        // on more of either can only be one of those in progress.
        let ours = pos.board().by_color(turn);
        // Each list is asked for only when the position can have such a move, and tested
        // where it is made: a move list is large, and copying one out (an empty one, or
        // the legal moves into a binding shared by both branches) was a visible share of
        // the search.
        if (changed & ours).count() > 1 || (changed & !ours).count() > 1 {
            pos.maybe_ep_square().is_some() && pos.en_passant_moves().iter().any(fits)
                || [CastlingSide::KingSide, CastlingSide::QueenSide]
                    .into_iter()
                    .any(|side| {
                        pos.castles().has(turn, side) && pos.castling_moves(side).iter().any(fits)
                    })
        } else {
            pos.legal_moves().iter().any(fits)
        }
    }

    /// Whether `mv`, under way on a board differing on `changed`, shows its piece landed
    /// on its destination while its square of departure still reads it, and the board
    /// was read changing more than a scan after that landing. One piece cannot stand on
    /// two squares: within a scan the departure's emptying may not be read yet, but a
    /// piece read there that long beside the one still standing is another (a rook put
    /// on h3 and read there for seconds while the rook on h1 stands is not Rh1-h3 under
    /// way). Occupancy-only boards have their own landing rules.
    fn landed_still_standing(&self, mv: Move, changed: Bitboard) -> bool {
        let Move::Normal { from, to, .. } = mv else {
            return false;
        };
        if self.occupancy_only
            || changed.contains(from)
            || !changed.contains(to)
            || self.target[to.to_usize()] == EMPTY
        {
            return false;
        }
        let history = self.evidence.history;
        match (history.last_change(to, Duration::MAX), history.last_read()) {
            (Some(landed), Some(read)) => read > landed + self.evidence.scan,
            _ => false,
        }
    }

    /// Whether `code` is an empty square or a piece of `turn`: what a move of `turn` in
    /// progress can show on a square it changes.
    /// (A range of codes, not a code per role: the search asks it of every square still
    /// differing at its last move.)
    pub(super) fn mover_code(&self, code: u8, turn: Color) -> bool {
        let first = normalize(piece_code(Role::Pawn.of(turn)), self.occupancy_only);
        let last = normalize(piece_code(Role::Queen.of(turn)), self.occupancy_only);
        code == EMPTY || (first..=last).contains(&code)
    }

    /// On an occupancy-only board, whether each piece a move in progress has in the hand
    /// (squares read empty that the sequence leaves occupied: its piece, a piece it
    /// captures) was seen leaving its square after the sequence's last move began, at a
    /// time `when` accepts (given that last move). True on boards that read pieces.
    fn hand_left(
        &self,
        codes: &Codes,
        path: &[Step],
        when: impl Fn(&Step, Duration) -> bool,
    ) -> bool {
        let Some(last) = path.last().filter(|_| self.occupancy_only) else {
            return true;
        };
        (occupied(codes) & !occupied(self.target))
            .into_iter()
            .all(|sq| {
                self.evidence
                    .history
                    .left(sq, last.lift)
                    .is_some_and(|t| when(last, t))
            })
    }

    /// On an occupancy-only board, whether the pieces a move in progress has in the hand
    /// were seen leaving their squares after the sequence's last move began and landed
    /// (read at most a scan later): the next move starts after the last one.
    pub(super) fn lifted_after(&self, codes: &Codes, path: &[Step]) -> bool {
        self.hand_left(codes, path, |last, t| {
            self.landed_by(last, t, self.evidence.scan)
        }) && !self.gone_as_lifted(codes, path)
    }

    /// On an occupancy-only board, whether a square the sequence's last move filled,
    /// which the move in progress leaves standing, read empty (emptied since that move
    /// began) from a scan before a piece in the hand was last read leaving to a scan
    /// after: longer than a flicker, so that piece was gone from there as the reply
    /// began (Qe5 read landing and leaving, White's knight lifted, e5 read filling
    /// again: not Qe5 with the knight in the hand, but the queen sliding over e5 and
    /// Ne5 landing there).
    fn gone_as_lifted(&self, codes: &Codes, path: &[Step]) -> bool {
        let Some(last) = path.last().filter(|_| self.occupancy_only) else {
            return false;
        };
        let (history, scan) = (self.evidence.history, self.evidence.scan);
        let standing = last.fills & occupied(self.target);
        (occupied(codes) & !occupied(self.target))
            .into_iter()
            .filter_map(|sq| history.last_left(sq))
            .any(|lifted| {
                let read = lifted + scan;
                standing.into_iter().any(|sq| {
                    history.occupied_at(sq, read) == Some(false)
                        && history
                            .last_change(sq, read)
                            .is_some_and(|emptied| emptied >= last.lift && emptied + scan <= lifted)
                })
            })
    }

    /// On an occupancy-only board, whether the pieces a move in progress has in the hand
    /// were each read leaving in a later scan than the sequence's last move was read
    /// landing. A landing and a lift read in the same scan tell nothing of which came
    /// first: the reply's piece lifted while the move's was still in the air fits them,
    /// and so does a capture swapped within a scan (never read) before a whole reply
    /// (Rxb2 swapped, then Rd7-d2 read landing and leaving at once: not Rd2 with the
    /// rook on d7 in the hand). Such a move in progress is not settled (see `explain`).
    pub(super) fn lifted_later(&self, codes: &Codes, path: &[Step]) -> bool {
        let history = self.evidence.history;
        self.hand_left(codes, path, |last, t| {
            let from = last.lift.saturating_sub(self.evidence.scan);
            last.fills
                .into_iter()
                .all(|fill| history.filled(fill, from).is_some_and(|at| at < t))
        })
    }

    /// On an occupancy-only board, whether the move in progress (its pieces in the
    /// hand: squares read empty that `codes` occupies) takes the piece the sequence's
    /// last move placed before that landing was read: the square it fills is never
    /// read occupied, the capturing piece is in the hand, seen leaving after the last
    /// move began, and no square that piece could have landed on was read filling in
    /// between (as `taken_unseen` has it for a capture that landed). The capture in progress is
    /// one nobody saw land.
    pub(super) fn taken_in_hand(&self, codes: &Codes, path: &[Step]) -> bool {
        let Some(last) = path.last().filter(|_| self.occupancy_only) else {
            return false;
        };
        let history = self.evidence.history;
        let scan = self.evidence.scan;
        let in_hand = occupied(codes) & !occupied(self.target);
        let unread = |sq| history.filled(sq, last.lift.saturating_sub(scan)).is_none();
        let Some(square) = (in_hand & last.fills).into_iter().find(|&sq| unread(sq)) else {
            return false;
        };
        let rest = Step {
            fills: last.fills.without(square),
            ..*last
        };
        // The capturing piece is in the hand too: a square that only empties is no capture.
        let others = in_hand.without(square);
        if others.is_empty() {
            return false;
        }
        let mut lifts = others.into_iter().map(|sq| {
            history
                .left(sq, last.lift)
                .filter(|&t| self.landed_by(&rest, t, scan))
        });
        let Some(latest) = lifts.try_fold(last.lift, |latest, t| t.map(|t| t.max(latest))) else {
            return false;
        };
        !history.any_filled(last.lift, latest, !landing_elsewhere(last.mv))
    }

    /// On an occupancy-only board, whether `step`'s piece was seen landing (each empty
    /// square it fills read occupied) no later than `slack` after `next_lift`, when the
    /// next piece left its square: a player replies to a finished move. (A reading
    /// within a scan may come in the scan before or after the one of an earlier change:
    /// the search allows a scan.)
    pub(super) fn landed_by(&self, step: &Step, next_lift: Duration, slack: Duration) -> bool {
        let history = self.evidence.history;
        let scan = self.evidence.scan;
        step.fills.into_iter().all(|sq| {
            history
                .filled(sq, step.lift.saturating_sub(scan))
                .is_some_and(|at| at <= next_lift + slack)
        })
    }

    /// On an occupancy-only board, whether `mv` captures the piece `step` placed on a
    /// square it filled (en passant too), that landing never read: a piece placed and
    /// taken within a scan, the capturer's landing read for both. Only when no square
    /// the piece could have landed on was read filling from `step`'s lift to `mv`'s (at
    /// `next_lift`): such a reading may be where it landed (see `landing_elsewhere`: not
    /// its own way, nor a square out of its reach, a flicker or a piece adjusted
    /// meanwhile, as on g8 while a knight leaves g3). Such a capture was not
    /// seen landing: a guess as good as any other unseen capture (see
    /// `capture_landed`), kept beside them for the moves that follow to decide.
    pub(super) fn taken_unseen(&self, step: &Step, mv: Move, next_lift: Duration) -> bool {
        let Some(square) = capture_square(mv).filter(|&sq| step.fills.contains(sq)) else {
            return false;
        };
        if self
            .evidence
            .history
            .any_filled(step.lift, next_lift, !landing_elsewhere(step.mv))
        {
            return false;
        }
        let rest = Step {
            fills: step.fills.without(square),
            ..*step
        };
        self.landed_by(&rest, next_lift, self.evidence.scan)
    }

    /// When the piece(s) of `mv` were first seen leaving their square at or after
    /// `after` (castling: the first of king and rook, both must have left).
    pub(super) fn lifted(&self, mv: Move, after: Duration) -> Option<Duration> {
        let history = self.evidence.history;
        match mv {
            Move::Castle { king, rook } => history
                .left(king, after)
                .zip(history.left(rook, after))
                .map(|(k, r)| k.min(r)),
            _ => history.left(mv.from()?, after),
        }
    }

    /// On an occupancy-only board, the first lift of `mv`'s piece after `first` (its
    /// square filled again between) after which `landed` holds: a square read empty and
    /// filled again before the previous move landed was a flicker or the piece touched
    /// and put back, not the move's lift (g7 misread empty in the scan that reads Nf5
    /// lifted, then g6). Not castling: its two squares decide its lift together.
    pub(super) fn lifted_again(
        &self,
        mv: Move,
        first: Duration,
        landed: impl Fn(Duration) -> bool,
    ) -> Option<Duration> {
        if matches!(mv, Move::Castle { .. }) {
            return None;
        }
        let (from, history) = (mv.from()?, self.evidence.history);
        let mut lift = first;
        while let Some(next) = history.left(from, lift + Duration::from_nanos(1)) {
            if landed(next) {
                return Some(next);
            }
            lift = next;
        }
        None
    }

    /// Whether each promoted piece was read on its promotion square since the sequence
    /// began as no wrong code is (see `History::placed`): when a fast reply captured
    /// it, that reading is the only evidence of the piece chosen, and it must then be
    /// one the capture replaced (not the capturing piece's). A later move of the
    /// sequence that puts a piece of the same code there (a rook recapturing where a
    /// pawn would have become a rook) leaves a reading of that code that tells the two
    /// apart only from before the opponent's piece that took the promoted one was read
    /// standing there, and only when no piece of the opponent's lands there after the
    /// later one: that one came after the capturing piece stood there (exd8=Q Rxd8
    /// Qxd8 with the queen read on d8 before the rook). Occupancy-only boards cannot
    /// tell pieces apart.
    pub(super) fn promotions_seen(&self, path: &[Step]) -> bool {
        if self.occupancy_only {
            return true;
        }
        let (scan, history) = (self.evidence.scan, self.evidence.history);
        promotions(path).all(|i| {
            let Some(p) = self.promoted(path, i) else {
                return true;
            };
            let landing = || {
                path[i + 1..]
                    .iter()
                    .filter(|later| later.mv.to() == p.square)
            };
            // Its side's other pieces: the pawn is left out (the pawn put on the last
            // rank and then swapped for the piece, whose first reading may be wrong).
            let corrects = Role::ALL
                .into_iter()
                .filter(|&r| r != p.role && r != Role::Pawn)
                .fold(0u16, |bits, r| bits | 1 << piece_code(r.of(p.color)));
            if landing().any(|later| later.code == p.code) {
                // The later piece of the promoted code came after the opponent's piece
                // that took the promoted one stood there (read for a scan: no wrong code
                // of a piece put down and lifted again), when no piece of the opponent's
                // lands there after it.
                let opponent =
                    |later: &Step| code_piece(later.code).is_some_and(|q| q.color != p.color);
                let stood = p.capture.zip(p.taken).is_some_and(|(later, at)| {
                    opponent(later)
                        && history.stood(p.square, later.code, (at, at + scan), scan, false)
                });
                let none_after = landing()
                    .skip_while(|later| later.code != p.code)
                    .all(|later| !opponent(later));
                if !(stood && none_after) {
                    return false;
                }
            }
            history.placed(
                p.square,
                p.code,
                (p.left, p.until()),
                (scan, p.capture.is_some()),
                corrects,
            )
        })
    }

    /// Whether each promoted piece is a queen, the last piece of its side read on its
    /// promotion square (see `promoted`), if only once (the pawn put there and swapped
    /// for a piece nobody read is no such reading). A reply that takes it within a scan
    /// of its landing leaves that one reading, which `promotions_seen` does not take for
    /// the piece: a piece put down is read with a wrong code for a scan. But the next
    /// scan corrects a wrong code, so one left standing needs a misread and a capture
    /// within the same scan, and nearly every promotion makes a queen: a queen read once
    /// is one (b1=Q read once, then Bxb1: not b1=R). Another piece read once is as
    /// likely a queen misread as itself: nothing tells it (h1=N read once, then Bxh1).
    /// Occupancy-only boards cannot tell pieces apart.
    pub(super) fn promotions_read(&self, path: &[Step]) -> bool {
        if self.occupancy_only {
            return true;
        }
        let history = self.evidence.history;
        promotions(path).all(|i| {
            self.promoted(path, i).is_none_or(|p| {
                p.role == Role::Queen
                    && history.last_piece(p.square, p.color, (p.left, p.until())) == Some(p.code)
            })
        })
    }

    /// Whether each pawn pushed from its start rank and taken at once by a pawn, where its
    /// one step taken and its two steps taken en passant end alike, was read on the
    /// square the sequence puts it on before the capturing pawn was read landing, if
    /// only once (`.0`); and whether one of them was read there for no longer than a
    /// scan (`.1`). A pawn's two steps slide across the one step's square, so such a
    /// reading is the slide's as much as the step's (see `captures_seen`); but a pawn
    /// taken at once by a pawn is far more often a step taken than two steps taken en
    /// passant, and two steps read on the far square are those: the sequence that has
    /// the pawn where it was read is the likelier (f6 read once, then exf6: not f5 and
    /// exf6 en passant), unless the two steps' square read a piece of its side put there
    /// and taken. Occupancy-only boards cannot tell the two apart.
    pub(super) fn pawns_read(&self, path: &[Step]) -> (bool, bool) {
        if self.occupancy_only {
            return (true, false);
        }
        let (history, start, scan) = (
            self.evidence.history,
            self.evidence.start,
            self.evidence.scan,
        );
        path.windows(2).fold((true, false), |(all, once), pair| {
            let (step, later) = (&pair[0], &pair[1]);
            if !taken_like_its_twin(step.mv, later.mv) {
                return (all, once);
            }
            let square = step.mv.to();
            let landed = self.capture_landed_at(step, later);
            // A one step is not read where it stands when the two steps' square read a
            // piece of its side with a wrong code, then none before the next scan: a piece
            // was put there and taken (f5 read as a rook, then exf6 en passant), which the
            // one step leaves unexplained, while two steps also slide across its square.
            let beyond = (start_push(step.mv) == Some(1))
                .then(|| two_steps_beside(square))
                .flatten();
            let read = history.read(square, step.code, start, landed)
                && beyond.is_none_or(|sq| !history.misread(sq, step.code, (start, landed), scan));
            // Whether it stood there is asked only of a pawn read there.
            let once =
                once || read && !history.stood(square, step.code, (start, landed), scan, true);
            (all && read, once)
        })
    }

    /// The promotion of `path[i]`, if it is one: where a reading of its piece counts.
    /// Only what was read there since the pawn left counts: a piece of the promoted code
    /// read there before (one the promotion's victim took) is not the promoted one.
    /// Once the piece that lands there next in the sequence (its capture) was read there
    /// (since the pawn left), that piece is there: a piece of the promoted code read
    /// after that is a later one's (a rook recapturing, lifted again by the next capture
    /// while the sequence counts its move in progress).
    fn promoted<'p>(&self, path: &'p [Step], i: usize) -> Option<Promoted<'p>> {
        let step = &path[i];
        let role = step.mv.promotion()?;
        let square = step.mv.to();
        let color = Color::from_white(square.rank() == Rank::Eighth);
        let start = self.evidence.start;
        let left = self.lifted(step.mv, start).unwrap_or(start);
        let capture = path[i + 1..].iter().find(|later| later.mv.to() == square);
        let taken =
            capture.and_then(|later| self.evidence.history.filled_with(square, later.code, left));
        Some(Promoted {
            square,
            role,
            color,
            code: piece_code(role.of(color)),
            left,
            capture,
            taken,
        })
    }

    /// Whether each piece a move of the sequence placed and a later one captured, or
    /// moved on from there after the opponent's reply (judged only when no updates were
    /// lost since the sequence began: a piece missing from what a fresh read shows is
    /// no evidence), was read on that square (its
    /// code, or a wrong code of its colour for a scan before it went), since the
    /// sequence began and before the capturing piece was read there (whose own wrong
    /// code may be the captured piece's: a bishop taking a pawn, read as a pawn).
    /// Players reply to a move after it landed, so the board reads the piece there,
    /// except when a capture swaps it away within a scan. Occupancy-only boards cannot
    /// tell pieces apart. (A pawn's two steps taken en passant leave the position its
    /// one step captured at once leaves: this is what tells them apart, when the pawn was
    /// read on one of the two squares; a reading on the one step's square for no longer
    /// than a scan is the two steps' slide as much as the step.) Evidence is matched to
    /// the moves in time order: a reading after the capture landed (its piece read on its
    /// destination) is a later piece's, no evidence for the captured one (Bc4 read once
    /// as a pawn after dxc3 e.p. landed: not c4's pawn; White's pawn taking back on b3:
    /// not b3's pawn, taken there).
    pub(super) fn captures_seen(&self, path: &[Step]) -> bool {
        if self.occupancy_only {
            return true;
        }
        let (history, start) = (self.evidence.history, self.evidence.start);
        path.iter().enumerate().all(|(i, step)| {
            // (A promoted piece: see `promotions_seen`.)
            let Move::Normal {
                to: square,
                promotion: None,
                ..
            } = step.mv
            else {
                return true;
            };
            let Some((j, later)) = path
                .iter()
                .enumerate()
                .skip(i + 1)
                .find(|(_, later)| later.squares.contains(square))
            else {
                return true;
            };
            let captured = || self.capture_landed_at(step, later);
            // The pawn's two steps taken en passant end alike and slide across this
            // square: only the pawn read standing there (longer than a scan) is its step.
            if j == i + 1 && one_step_twin(step.mv, later.mv) {
                return history.stood(
                    square,
                    step.code,
                    (start, captured()),
                    self.evidence.scan,
                    true,
                );
            }
            let until = if capture_square(later.mv) == Some(square) {
                captured()
            } else if later.mv.from() == Some(square) && self.evidence.continuous() {
                Duration::MAX
            } else {
                return true;
            };
            history.read(square, step.code, start, until)
                || history.misread(square, step.code, (start, until), self.evidence.scan)
        })
    }

    /// When `later`, a move of the sequence after `step`, landed taking the piece `step`
    /// placed: when its piece was first read on its destination since the sequence
    /// began, `Duration::MAX` if never. Its destination is beside the captured piece's
    /// square en passant. On the captured piece's own square, after that piece was first
    /// read there, if the capturing piece's code was read there since: read there
    /// before, it is no landing of a piece that takes one placed later (a queen read as
    /// the knight that later took on d4: Qxd4 Qxd4 Nxd4).
    fn capture_landed_at(&self, step: &Step, later: &Step) -> Duration {
        let (history, start) = (self.evidence.history, self.evidence.start);
        let (square, to) = (step.mv.to(), later.mv.to());
        let placed = (to == square)
            .then(|| history.filled_with(square, step.code, start))
            .flatten();
        placed
            .and_then(|t| history.filled_with(to, later.code, t))
            .or_else(|| history.filled_with(to, later.code, start))
            .unwrap_or(Duration::MAX)
    }

    /// After lost updates, whether the move in progress that explains the rest of the
    /// board (`changed`, where it still differs from `codes`, the board the sequence's
    /// moves leave; `turn` its side) was read under way: some square of it changed since
    /// the board was read whole, each piece of its side in the hand was read leaving
    /// since, and none began to differ before its side's previous move in the sequence
    /// began (a player lifts his next piece after his last move). A move in progress the
    /// fresh read already showed, or begun before moves read since, is a piece gone
    /// while nothing was read (captured, or moved by moves the shorter sequence leaves
    /// out) as much as one in the hand: such a sequence may be the moves made, but
    /// nothing shows it is (exd5 Qxd5 Nc3 read with the queen in the hand is also Nc3
    /// with dxe4 under way). The other side's piece read lifted since is no sign of the
    /// mover's piece in the hand (Bc6 with the bishop already gone at the fresh read,
    /// then the knight on d7 read lifted: not Bxd7 under way, the bishop may have been
    /// taken and the knight be moving). On a board read without gaps the order rules
    /// apply.
    pub(super) fn read_under_way(
        &self,
        codes: &Codes,
        changed: Bitboard,
        path: &[Step],
        turn: Color,
    ) -> bool {
        let Some(lost) = self.evidence.lost.filter(|_| !self.occupancy_only) else {
            return true;
        };
        let history = self.evidence.history;
        let read = changed.into_iter().any(|sq| {
            history
                .last_change(sq, Duration::MAX)
                .is_some_and(|t| t > lost)
        });
        if !read {
            return false;
        }
        // When each of the side's moves in the sequence began (as `ordered` has it).
        let since = self.evidence.since;
        let mut touched = Bitboard::EMPTY;
        let mut begun = Duration::ZERO;
        for (i, step) in path.iter().enumerate() {
            // The side's own moves are an even number of plies before the end.
            if let Some(from) = step.mv.from()
                && (path.len() - i).is_multiple_of(2)
                && !touched.contains(from)
                && let Some(at) = since[from.to_usize()]
            {
                begun = begun.max(at);
            }
            touched |= step.squares;
        }
        changed
            .into_iter()
            .filter(|&sq| self.target[sq.to_usize()] == EMPTY && codes[sq.to_usize()] != EMPTY)
            .filter(|&sq| self.mover_code(codes[sq.to_usize()], turn))
            .all(|sq| {
                since[sq.to_usize()].is_none_or(|at| at >= begun)
                    && history
                        .last_change(sq, Duration::MAX)
                        .is_some_and(|t| t > lost)
            })
    }

    /// Whether the moves were started in the order their pieces were seen lifted: a move
    /// whose square of departure no earlier move touched was started when that square
    /// began to differ, which must not be before the previous such move's. After lost
    /// updates a piece read leaving before them may have gone back and left again while
    /// nothing was read: its lift dates no move made meanwhile (the knight read lifted,
    /// then Bc3 Qg6 Nxe5 played while the daemon was down), so it counts as left when
    /// the updates were lost. The move in progress, if any (`in_progress`: the squares
    /// where the board still differs from the sequence's end), was begun after them: a
    /// square of it no move touched differs since no earlier than the last lift (a
    /// piece in the hand since before its side's last move is not held through it).
    pub(super) fn ordered(&self, path: &[Step], in_progress: Bitboard) -> bool {
        let mut touched = Bitboard::EMPTY;
        let mut last = Duration::ZERO;
        let lost = self.evidence.lost.unwrap_or(Duration::ZERO);
        let since = |sq: Square| self.evidence.since[sq.to_usize()].map(|t| t.max(lost));
        for &Step { mv, squares, .. } in path {
            if let Some(from) = mv.from()
                && !touched.contains(from)
                && let Some(at) = since(from)
            {
                if at < last {
                    return false;
                }
                last = at;
            }
            touched |= squares;
        }
        let begun_late = |sq| since(sq).is_none_or(|at| at >= last);
        (in_progress & !touched).into_iter().all(begun_late) && self.landed_after_leaving(path)
    }

    /// Whether no move's piece was read on its destination more than a scan before its
    /// square of departure was first read empty: one piece cannot land before it leaves,
    /// so a piece read there that early is another (Qxb5 Rf4 Qb4 for Qb4 Rf4 and the
    /// pawn on b5 lifted for axb5: the queen read on b4 long before b5 emptied). Only a
    /// move whose squares no later move touches and that the board shows made is
    /// judged: its departure square then reads empty from its lift on (by the next
    /// scan), and its destination's last reading began after it landed. Only when every
    /// change since the sequence began was read: a fresh read after lost updates shows
    /// the changes made meanwhile at once, in no order. Occupancy-only boards have their
    /// own landing rules.
    fn landed_after_leaving(&self, path: &[Step]) -> bool {
        if self.occupancy_only || !self.evidence.continuous() {
            return true;
        }
        let history = self.evidence.history;
        let mut later = Bitboard::EMPTY;
        path.iter().rev().all(|step| {
            let judged = match step.mv {
                Move::Normal { from, to, .. } | Move::EnPassant { from, to } => Some((from, to)),
                _ => None,
            }
            .filter(|&(from, to)| {
                !later.contains(from)
                    && !later.contains(to)
                    && self.target[from.to_usize()] == EMPTY
                    && self.target[to.to_usize()] == step.code
            });
            later |= step.squares;
            let Some((from, to)) = judged else {
                return true;
            };
            match (
                history.last_change(to, Duration::MAX),
                history.left(from, self.evidence.start),
            ) {
                (Some(landed), Some(left)) => landed + self.evidence.scan >= left,
                _ => true,
            }
        })
    }
}
