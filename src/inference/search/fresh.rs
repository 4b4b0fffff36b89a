//! The board read whole after lost updates: a snapshot of the moves made, taken in one
//! position they pass through, or part-way through the move after it.

use shakmaty::{Bitboard, Chess, Color, Move, Position, Square};

use super::deeper::Deeper;
use super::{Evidence, MAX_LIFTED, Sequence};
use crate::inference::codes::{Codes, EMPTY, code_piece, from_board, move_effect, move_squares};

/// After lost updates, what an explanation must agree with of the readings since the
/// board was read whole: each piece read standing since stands on a position it passes
/// through, and the fresh read is a snapshot of one. (A piece read standing before the
/// updates were lost and gone since is what any move made while nothing was read looks
/// like, e.g. a slide read resting and then finished; see `Engine::rest_unread`.)
pub(super) struct SinceLost<'a> {
    /// The search's start and the pieces read standing since the loss (`Deeper` keeps
    /// the start position and its codes the fresh read is checked from).
    deeper: Deeper<'a>,
    fresh: Option<FreshRead>,
}

impl<'a> SinceLost<'a> {
    /// `None` when no updates were lost since the evidence's start.
    pub(super) fn new(
        start: &'a Chess,
        codes: &'a Codes,
        target: &'a Codes,
        evidence: Evidence<'a>,
        skip_first: Option<Move>,
    ) -> Option<Self> {
        let lost = evidence.lost?;
        let since = Evidence {
            readings: evidence.readings.max(lost),
            ..evidence
        };
        Some(SinceLost {
            deeper: Deeper::new(start, codes, target, since, skip_first),
            fresh: FreshRead::new(target, &evidence),
        })
    }

    /// Whether `s` agrees with them.
    pub(super) fn fits(&self, s: &Sequence) -> bool {
        self.deeper.shown(s)
            && self
                .fresh
                .as_ref()
                .is_none_or(|f| f.passed(self.deeper.start, self.deeper.codes, &s.moves))
    }

    /// Whether the readings since the fresh read go forward in `s` (see
    /// `FreshRead::forward`).
    pub(super) fn forward(&self, s: &Sequence) -> bool {
        self.fresh
            .as_ref()
            .is_none_or(|f| f.forward(self.deeper.start, self.deeper.codes, &s.moves))
    }
}

/// Whether `moves` from `start` (recorded, or about to be) agree with the fresh read after
/// lost updates the evidence holds, if the search would check one (see `FreshRead::new`):
/// a board one move shows whole is recorded without a search, but after lost updates
/// the board read whole then must be a snapshot of that move as of the search's.
pub(crate) fn fresh_read_passed(
    start: &Chess,
    target: &Codes,
    evidence: &Evidence,
    moves: &[Move],
) -> bool {
    let codes = from_board(start.board(), false);
    FreshRead::new(target, evidence).is_none_or(|f| f.passed(start, &codes, moves))
}

/// The board as it was read when updates were last lost.
pub(super) struct FreshRead {
    board: Codes,
    /// Squares read as one piece and, a scan later, as another: the code may have been a
    /// wrong one (a piece being put down), only the occupancy counts.
    brief: Bitboard,
    /// The pieces read put down since, each replaced since by another reading of its
    /// square (the board's current readings left out), by square and colour.
    put_since: Vec<(Square, Color)>,
}

impl FreshRead {
    /// The fresh read since the evidence's start, if the search starts from the position
    /// recorded then (moves recorded since start after it) and the changes kept reach
    /// back to it.
    pub(super) fn new(target: &Codes, evidence: &Evidence) -> Option<Self> {
        let lost = evidence.lost.filter(|_| evidence.fresh)?;
        let mut boards = evidence.history.boards_back(*target);
        // The board a scan after the fresh read, if it changed within that scan.
        let mut later = None;
        let board = loop {
            let (at, board) = boards.next()?;
            if at <= lost {
                break board;
            }
            if at <= lost + evidence.scan && later.is_none() {
                later = Some(board);
            }
        };
        let later = later.unwrap_or(board);
        // A piece read and then gone a scan later was lifted: it stood there, its code
        // read whole. Only a code read over by another piece may have been a wrong one.
        let brief = Square::ALL
            .into_iter()
            .filter(|sq| {
                let (read, next) = (board[sq.to_usize()], later[sq.to_usize()]);
                read != EMPTY && next != EMPTY && next != read
            })
            .collect();
        let put_since = evidence
            .history
            .replaced_pieces(lost)
            .filter(|&(_, at, _)| at > lost)
            .filter_map(|(sq, _, code)| code_piece(code).map(|p| (sq, p.color)))
            .collect();
        Some(FreshRead {
            board,
            brief,
            put_since,
        })
    }

    /// Whether `moves` from `start` (`codes`) pass through a position the fresh read
    /// shows, or part-way through the move after it (its pieces in the hand or put down:
    /// a slide or a castling half done), or with at most [`MAX_LIFTED`] pieces in the hand
    /// after the last one (a move in progress the sequence leaves open: one piece, or two
    /// that one legal move of the side to move lifts, a capture or a castling).
    pub(super) fn passed(&self, start: &Chess, codes: &Codes, moves: &[Move]) -> bool {
        let line = Line::new(start, codes, moves);
        (0..=moves.len()).any(|k| self.snapshot(&line, k))
    }

    /// Whether `moves` from `start` (`codes`) pass through a position the fresh read is
    /// a snapshot of (see `passed`) from which the pieces read put down since go forward:
    /// each stands, by its colour, on its square in a later position, or in that one off
    /// the squares of the move the fresh read caught part-way (a piece touched and put
    /// back). A piece put down again on a square that move had emptied, where no later
    /// position has one of its colour, undoes it (its victim put back where it was
    /// taken): when the moves read since land there, they are later moves (Rb8 a4 with
    /// e6 in the hand, then e6 read and dxe6; not e6 a4 Rb8 with the pawn taken off for
    /// dxe6 and put back).
    pub(super) fn forward(&self, start: &Chess, codes: &Codes, moves: &[Move]) -> bool {
        let line = Line::new(start, codes, moves);
        let color = |code: u8| code_piece(code).map(|p| p.color);
        (0..=moves.len()).any(|k| {
            let caught = line.steps.get(k).map_or(Bitboard::EMPTY, |s| s.squares);
            self.snapshot(&line, k)
                && self.put_since.iter().all(|&(sq, put)| {
                    let i = sq.to_usize();
                    line.positions[k + 1..]
                        .iter()
                        .any(|p| color(p[i]) == Some(put))
                        || !caught.contains(sq) && color(line.positions[k][i]) == Some(put)
                })
        })
    }

    /// Whether the fresh read is a snapshot of `line` at its position `k`: part-way
    /// through the move after it, or with pieces in the hand after the last move.
    fn snapshot(&self, line: &Line, k: usize) -> bool {
        let before = &line.positions[k];
        match line.steps.get(k) {
            Some(step) => self.part_way(before, &line.positions[k + 1], step.squares, step.mover),
            None => self.in_hand(&line.end, before),
        }
    }

    fn same(&self, sq: Square, code: u8) -> bool {
        let read = self.board[sq.to_usize()];
        match self.brief.contains(sq) {
            true => (read == EMPTY) == (code == EMPTY),
            false => read == code,
        }
    }

    /// The fresh read shows `before`, except on the squares the move to `after` (by
    /// `mover`) changes, which show a piece of the move or nothing, and one other piece in
    /// the hand at most (touched). Once the move shows a piece put down, that piece is the
    /// opponent's (his reply begun), and before it is begun the mover's: only the player
    /// having the move adjusts his pieces, and not with his move's piece already on its
    /// new square.
    fn part_way(&self, before: &Codes, after: &Codes, squares: Bitboard, mover: Color) -> bool {
        let pieces: Vec<u8> = squares
            .into_iter()
            .flat_map(|sq| [before[sq.to_usize()], after[sq.to_usize()]])
            .collect();
        let put_down = squares.into_iter().any(|sq| {
            let read = self.board[sq.to_usize()];
            read != EMPTY && read != before[sq.to_usize()]
        });
        // Not begun: the position before it, a piece of its mover's in the hand at most.
        let begun = squares
            .into_iter()
            .any(|sq| !self.same(sq, before[sq.to_usize()]));
        let mut touched = 0;
        Square::ALL.into_iter().all(|sq| {
            let read = self.board[sq.to_usize()];
            let code = before[sq.to_usize()];
            if self.same(sq, code) {
                return true;
            }
            if squares.contains(sq) {
                return read == EMPTY || pieces.iter().any(|&code| self.same(sq, code));
            }
            touched += 1;
            let mine = owned_by(code, mover);
            read == EMPTY && touched <= 1 && !(put_down && mine) && (begun || mine)
        })
    }

    /// The fresh read shows `last` (the position `pos`), but for a few of its pieces in
    /// the hand. Two in the hand are one move's, and the side to move's: once a move is
    /// made its player does not lift two of his pieces again (a castling read half done
    /// before the opponent's move is part-way through it, see `part_way`, not after it).
    /// Nor is one of the player who just moved, unless a move of the side to move takes
    /// it (its victim lifted first: Kg2, then the bishop on d7 taken off for Qxd7): only
    /// the player having the move adjusts his pieces (j'adoube), so such a piece in the
    /// hand is his next move's, made after moves nothing read (a round trip of both sides
    /// the board cannot show).
    fn in_hand(&self, pos: &Chess, last: &Codes) -> bool {
        let mut lifted = Bitboard::EMPTY;
        let mut just_moved = false;
        let read = Square::ALL.into_iter().all(|sq| {
            let code = last[sq.to_usize()];
            if self.same(sq, code) {
                return true;
            }
            lifted.add(sq);
            just_moved |= owned_by(code, !pos.turn());
            self.board[sq.to_usize()] == EMPTY && lifted.count() <= MAX_LIFTED
        });
        read && (lifted.count() < 2 && !just_moved || one_move_lifts(pos, lifted))
    }
}

/// The positions `moves` pass through from a start position (its codes first), and
/// each move's squares and mover.
struct Line {
    positions: Vec<Codes>,
    steps: Vec<LineStep>,
    /// The position after the last move.
    end: Chess,
}

struct LineStep {
    squares: Bitboard,
    mover: Color,
}

impl Line {
    fn new(start: &Chess, codes: &Codes, moves: &[Move]) -> Self {
        let mut pos = start.clone();
        let mut positions = Vec::with_capacity(moves.len() + 1);
        positions.push(*codes);
        let mut steps = Vec::with_capacity(moves.len());
        for &mv in moves {
            let effect = move_effect(mv, pos.turn(), false);
            let mut after = *positions.last().expect("the start");
            effect.apply(&mut after);
            positions.push(after);
            steps.push(LineStep {
                squares: effect.squares(),
                mover: pos.turn(),
            });
            pos.play_unchecked(mv);
        }
        Line {
            positions,
            steps,
            end: pos,
        }
    }
}

/// Whether `code` is a piece of `color`'s.
fn owned_by(code: u8, color: Color) -> bool {
    code_piece(code).is_some_and(|piece| piece.color == color)
}

/// Whether one legal move of the side to move in `pos` lifts every piece of `lifted`.
fn one_move_lifts(pos: &Chess, lifted: Bitboard) -> bool {
    let turn = pos.turn();
    pos.legal_moves()
        .iter()
        .any(|&mv| (lifted & !move_squares(mv, turn)).is_empty())
}
