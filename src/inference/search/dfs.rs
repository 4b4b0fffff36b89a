//! The depth-first search over legal move sequences, and what each sequence that
//! reaches the board records about the evidence for it.

use std::time::Duration;

use shakmaty::{Bitboard, Chess, Move, Position, Role};

use super::bounds::{Counts, board_counts, counts_after, piece_counts};
use super::evidence::sliders_across;
use super::line::Played;
use super::moves::{capture_square, landing, start_push};
use super::{Evidence, IN_PROGRESS_SQUARES, MAX_COUNTED, MAX_NODES, Sequence, Step};
use crate::inference::codes::{Codes, EMPTY, Effect, diff, move_effect, move_squares, piece_code};

pub(super) struct Search<'a> {
    pub(super) target: &'a Codes,
    /// `piece_counts` of the target.
    pub(super) target_pieces: [[usize; 6]; 2],
    pub(super) evidence: Evidence<'a>,
    pub(super) occupancy_only: bool,
    pub(super) skip_first: Option<Move>,
    /// The moves every sequence starts with (tried as far as `line` has them).
    pub(super) hypothesis: &'a [Move],
    /// The positions after each of them, as far as they were played (`played_along`).
    pub(super) line: &'a [Played],
    pub(super) found: &'a mut Vec<Sequence>,
    /// Past `MAX_COUNTED` explanations, go on for every one the board shows best (every
    /// square seen, in the order of the lifts), whole or with a move in progress:
    /// sequences a piece in the hand fits (every square it can go to) fill the quota in
    /// move order, and the best must not be left out for them, nor any of them for the
    /// first (a rook away and back while nothing was read, to any of six squares: not
    /// the first square recorded; a pawn's one step taken at once, then the rook lifted
    /// on an open board: not the one step because its twin, two steps taken en passant,
    /// comes later in move order).
    pub(super) collect_best: bool,
    /// When set, the codes read on each square (a bit per code): only moves whose piece
    /// was read on its destination are tried (castling aside).
    pub(super) placed: Option<&'a [u16; 64]>,
    /// When set, only moves whose squares are all in it are tried, but for where a pawn
    /// taken within a scan may have stood (where a push from its start rank lands, the
    /// pawn an en passant capture takes: see `unread_victims`, `seen_whole`).
    pub(super) within: Option<Bitboard>,
    pub(super) nodes: &'a mut usize,
    /// On an occupancy-only board, the squares empty where the search starts and read
    /// filling since the board last showed that position (see `fills_covered`): set at
    /// the root, the same for every sequence.
    pub(super) fills_read: Bitboard,
    /// When set, the legal moves of the position the search starts from (the caller
    /// searching it depth after depth generates them once).
    pub(super) root_moves: Option<&'a [Move]>,
}

impl<'a> Search<'a> {
    /// A search for `target` that collects what it finds into `found` and counts the
    /// positions it visits into `nodes`: every move tried, none required first.
    pub(super) fn new(
        target: &'a Codes,
        evidence: Evidence<'a>,
        occupancy_only: bool,
        found: &'a mut Vec<Sequence>,
        nodes: &'a mut usize,
    ) -> Self {
        Search {
            target,
            target_pieces: piece_counts(target),
            evidence,
            occupancy_only,
            skip_first: None,
            hypothesis: &[],
            line: &[],
            found,
            collect_best: false,
            placed: None,
            within: None,
            nodes,
            fills_read: Bitboard::EMPTY,
            root_moves: None,
        }
    }
}

impl Search<'_> {
    /// Counts a position visited; false once the search is full (enough explanations
    /// collected, or the node budget spent).
    fn visit(&mut self) -> bool {
        *self.nodes += 1;
        (self.found.len() < MAX_COUNTED || self.collect_best) && *self.nodes < MAX_NODES
    }

    /// `remaining` is at least 1: the last move's positions are visited by `leaf`.
    pub(super) fn dfs(
        &mut self,
        pos: &Chess,
        codes: &Codes,
        remaining: usize,
        path: &mut Vec<Step>,
    ) {
        if let Some((skipped, changed)) = self.skip_along_line(remaining, path) {
            let line = self.line;
            let last = &line[skipped - 1];
            let left = remaining - skipped;
            self.dfs_from(&last.pos, &last.codes, changed, &last.counts, left, path);
            return;
        }
        let counts = board_counts(pos.board());
        self.dfs_from(
            pos,
            codes,
            diff(codes, self.target),
            &counts,
            remaining,
            path,
        );
    }

    /// Within a hypothesis carried on a board that reads pieces, the positions the search
    /// walks before its last move fail no bound once the last of them passes: the bounds
    /// only tighten along a line of moves (each changes at most three squares, castling
    /// four and a right to castle; each puts at most one piece of its side where the
    /// target wants it, castling two and a right to castle; pieces only go). They are
    /// then counted as visited and their moves put on the path as the search would, but
    /// without a look at each: a hypothesis grows by every move made while its ambiguity
    /// stays open, and walking it again at each depth of every search was most of a long
    /// game's searching. How many moves were skipped, if any, and where the board still
    /// differs after them.
    fn skip_along_line(
        &mut self,
        remaining: usize,
        path: &mut Vec<Step>,
    ) -> Option<(usize, Bitboard)> {
        let line = self.line;
        let skipped = self.hypothesis.len().checked_sub(1)?;
        // Each position skipped has two moves or more left (no last move's cuts), and
        // none of them ends the search at the node budget.
        if skipped == 0
            || line.len() < skipped
            || remaining < self.hypothesis.len()
            || *self.nodes + skipped >= MAX_NODES
            || !path.is_empty()
            || self.occupancy_only
            || self.skip_first.is_some()
            || self.within.is_some()
            || self.placed.is_some()
        {
            return None;
        }
        let last = &line[skipped - 1];
        let changed = diff(&last.codes, self.target);
        let left = remaining - skipped;
        if !self.within_reach(&last.pos, changed, left)
            || !self.reachable(&last.pos, &last.codes, changed, left, &last.counts)
        {
            return None;
        }
        *self.nodes += skipped;
        path.extend(
            line[..skipped]
                .iter()
                .zip(self.hypothesis)
                .map(|(played, &mv)| Step {
                    mv,
                    squares: played.effect.squares(),
                    fills: Bitboard::EMPTY,
                    lift: Duration::ZERO,
                    code: played.code,
                    taken_unseen: false,
                    across: Bitboard::EMPTY,
                }),
        );
        Some((skipped, changed))
    }

    /// `dfs` from a board differing from the target on `changed` (known to the move
    /// that led there, without comparing the whole board again).
    fn dfs_from(
        &mut self,
        pos: &Chess,
        codes: &Codes,
        changed: Bitboard,
        counts: &Counts,
        remaining: usize,
        path: &mut Vec<Step>,
    ) {
        if !self.visit() {
            return;
        }
        if path.is_empty() && self.occupancy_only {
            self.fills_read = self.fills_read_since_shown(codes);
        }
        if !self.within_reach(pos, changed, remaining)
            || !self.reachable(pos, codes, changed, remaining, counts)
        {
            return;
        }
        // Squares still differing whose target shows a piece of the side to move: the
        // last move must put it there, as no move in progress after it can (see `leaf`).
        let stray: Bitboard = if remaining == 1 {
            let turn = !pos.turn();
            changed
                .into_iter()
                .filter(|&sq| !self.mover_code(self.target[sq.to_usize()], turn))
                .collect()
        } else {
            Bitboard::EMPTY
        };
        // A board differing on at most that many squares is never cut below: the count
        // per move is skipped.
        let spread = changed.count() > IN_PROGRESS_SQUARES;
        // At the last move each move is one position (counted by a cut or by its leaf)
        // and only one landing on every stray square can explain the board: the others,
        // most of the search's positions, are counted all at once, each move tried
        // numbered as if they had been counted in turn (so the cap falls where it did).
        let only = (remaining == 1
            && stray.any()
            && !self.occupancy_only
            && !path.is_empty()
            && self.hypothesis.len() <= path.len())
        .then(|| (stray.single_square(), *self.nodes));
        let generated;
        let forced;
        let root = self.root_moves.filter(|_| path.is_empty());
        let moves = match (root, self.hypothesis.get(path.len())) {
            (Some(moves), _) => moves,
            // Within the hypothesis only its move is tried (the others are skipped below
            // uncounted), when legal there: a carried ambiguity's long sequences generate
            // no move lists.
            (None, Some(&h)) => {
                forced = [h];
                if path.len() < self.line.len() {
                    &forced[..]
                } else {
                    &[]
                }
            }
            (None, None) => {
                generated = pos.legal_moves();
                &generated[..]
            }
        };
        for (i, &mv) in moves.iter().enumerate() {
            if let Some((single, base)) = only {
                let lands = match mv {
                    Move::Castle { .. } => (stray & !landing(mv, pos.turn())).is_empty(),
                    _ => single == Some(mv.to()),
                };
                if !lands {
                    continue;
                }
                *self.nodes = base + i;
            }
            if path.is_empty() && (Some(mv) == self.skip_first || !self.moved_on(mv))
                || self.hypothesis.get(path.len()).is_some_and(|&h| h != mv)
            {
                continue;
            }
            if let Some(within) = self.within {
                let victim = match mv {
                    Move::EnPassant { .. } => capture_square(mv),
                    _ => start_push(mv).map(|_| mv.to()),
                };
                let unread = victim.map_or(Bitboard::EMPTY, Bitboard::from);
                if (move_squares(mv, pos.turn()) & !within & !unread).any() {
                    *self.nodes += 1;
                    continue;
                }
            }
            // On an occupancy-only board only a piece seen leaving its square can move,
            // after the previous move's piece left (or up to `Evidence::slack` before)
            // and landed (or was placed and taken by this move within a scan, see
            // `taken_unseen`).
            let (lift, taken_unseen) = if self.occupancy_only {
                let scan = self.evidence.scan;
                let after = path.last().map_or(self.evidence.start, |s| {
                    s.lift.saturating_sub(self.evidence.slack)
                });
                let Some(t) = self.lifted(mv, after) else {
                    continue;
                };
                match path.last() {
                    Some(s) if !self.landed_by(s, t, scan) => {
                        if self.taken_unseen(s, mv, t) {
                            (t, true)
                        } else if let Some(t) =
                            self.lifted_again(mv, t, |t| self.landed_by(s, t, scan))
                        {
                            (t, false)
                        } else {
                            continue;
                        }
                    }
                    _ => (t, false),
                }
            } else {
                (Duration::ZERO, false)
            };
            if (stray & !landing(mv, pos.turn())).any() {
                // Its leaf is visited (and counted) but cannot explain the board.
                *self.nodes += 1;
                continue;
            }
            // Nor can a last move whose piece the board still shows where it stood: its
            // square, unchanged so far, then differs and shows a piece of the side that
            // just moved, which no move in progress after it puts back (see `leaf`).
            // (Not castling: in Chess960 the king may end where it stood.)
            if remaining == 1
                && !matches!(mv, Move::Castle { .. })
                && let Some(from) = mv.from()
                && !changed.contains(from)
                && !self.mover_code(self.target[from.to_usize()], !pos.turn())
            {
                *self.nodes += 1;
                continue;
            }
            // Nor can a leaf still differing, off the move's squares, on more than a move
            // in progress changes (see `leaf`): counted, without building its effect.
            if remaining == 1
                && spread
                && (changed & !move_squares(mv, pos.turn())).count() > IN_PROGRESS_SQUARES
            {
                *self.nodes += 1;
                continue;
            }
            // (The cuts above and this one only count the move: the cheapest come first.)
            let role = mv.promotion().unwrap_or(mv.role());
            let code = piece_code(role.of(pos.turn()));
            if let Some(read) = self.placed
                && !matches!(mv, Move::Castle { .. })
                && read[mv.to().to_usize()] & (1 << code) == 0
            {
                *self.nodes += 1;
                continue;
            }
            // Within the hypothesis (its move), the move was played once for every depth.
            let line = self.line;
            let played = line.get(path.len());
            let effect = played.map_or_else(
                || move_effect(mv, pos.turn(), self.occupancy_only),
                |p| p.effect,
            );
            let squares = effect.squares();
            // The empty squares the move fills (only asked on an occupancy-only board).
            let fills = if self.occupancy_only {
                squares
                    .into_iter()
                    .filter(|&sq| {
                        codes[sq.to_usize()] == EMPTY
                            && effect.code_on(sq).is_some_and(|c| c != EMPTY)
                    })
                    .collect()
            } else {
                Bitboard::EMPTY
            };
            let across = fills
                .single_square()
                .map_or(Bitboard::EMPTY, |sq| sliders_across(pos, mv, sq));
            path.push(Step {
                mv,
                squares,
                fills,
                lift,
                code,
                taken_unseen,
                across,
            });
            // Off the move's squares the board still differs where it did.
            let moved: Bitboard = squares
                .into_iter()
                .filter(|&sq| effect.code_on(sq) != Some(self.target[sq.to_usize()]))
                .collect();
            let next_changed = (changed & !squares) | moved;
            if remaining == 1 {
                self.leaf(pos, mv, codes, &effect, next_changed, path);
            } else {
                // A board out of reach from here is out of reach after the move (which
                // never adds a right to castle): the node is counted, as `dfs` would,
                // without playing the move.
                if !self.within_reach(pos, next_changed, remaining - 1) {
                    *self.nodes += 1;
                } else if let Some(p) = played {
                    self.dfs_from(
                        &p.pos,
                        &p.codes,
                        next_changed,
                        &p.counts,
                        remaining - 1,
                        path,
                    );
                } else {
                    let mut next_codes = *codes;
                    effect.apply(&mut next_codes);
                    let mut next = pos.clone();
                    next.play_unchecked(mv);
                    let counts = counts_after(*counts, mv, pos.turn());
                    self.dfs_from(
                        &next,
                        &next_codes,
                        next_changed,
                        &counts,
                        remaining - 1,
                        path,
                    );
                }
            }
            path.pop();
        }
        if let Some((_, base)) = only {
            *self.nodes = base + moves.len();
        }
    }

    /// The end of a full-length sequence: `mv` (its `effect`), played from `before`
    /// (`codes`), leaves a board differing from the target on `changed`. Most such
    /// boards are far from the target, so the board and position after the move are
    /// only built when a move in progress may explain the rest.
    fn leaf(
        &mut self,
        before: &Chess,
        mv: Move,
        codes: &Codes,
        effect: &Effect,
        changed: Bitboard,
        path: &[Step],
    ) {
        if !self.visit() {
            return;
        }
        let complete = changed.is_empty();
        let mut settled = true;
        // Its move in progress takes the last move's piece, never read landing.
        let mut taken = false;
        let mut victims = unread_victims(path);
        let mut tail_read = true;
        if !complete {
            // A move in progress leaves only empty squares and pieces of its side where the
            // board still differs (see `in_progress`): other boards need no position.
            let turn = !before.turn();
            if changed.count() > IN_PROGRESS_SQUARES
                || !changed
                    .into_iter()
                    .all(|sq| self.mover_code(self.target[sq.to_usize()], turn))
            {
                return;
            }
            let mut after = *codes;
            effect.apply(&mut after);
            let mut pos = before.clone();
            pos.play_unchecked(mv);
            if !self.in_progress(&pos, &after) {
                return;
            }
            if self.fills_read.any() && !self.fills_covered(path, Some((&pos, &after))) {
                return;
            }
            victims |= taken_in_progress(&pos, path, self.target);
            tail_read = self.read_under_way(&after, changed, path, turn);
            if self.lifted_after(&after, path) {
                settled = self.lifted_later(&after, path);
            } else if self.taken_in_hand(&after, path) {
                // Begun before the last move was read landing.
                (settled, taken) = (false, true);
            } else {
                return;
            }
        }
        if complete && self.fills_read.any() && !self.fills_covered(path, None) {
            return;
        }
        let unseen = if self.occupancy_only {
            let mut after = self.evidence.start;
            let mut count = usize::from(taken);
            for (i, s) in path.iter().enumerate() {
                let next = path.get(i + 1).map(|n| n.lift);
                if s.taken_unseen || !self.capture_landed(s, after, next) || self.slid_over(s) {
                    count += 1;
                }
                after = s.lift;
            }
            count
        } else {
            let squares = path.iter().fold(Bitboard::EMPTY, |all, s| all | s.squares);
            let landed_unread: Bitboard = path
                .iter()
                .filter_map(|s| self.changed_only_before_leaving(s.mv))
                .collect();
            let unseen = (squares & !self.evidence.seen) | landed_unread;
            usize::from((unseen & !victims).any())
        };
        let visible = unseen == 0;
        let ordered = self.ordered(path, changed);
        if self.found.len() >= MAX_COUNTED && !(visible && ordered) {
            return;
        }
        let (pawns_read, pawn_read_once) = self.pawns_read(path);
        self.found.push(Sequence {
            moves: path.iter().map(|s| s.mv).collect(),
            complete,
            unseen,
            ordered,
            promotions_seen: self.promotions_seen(path),
            promotions_read: self.promotions_read(path),
            pawns_read,
            pawn_read_once,
            captures_seen: self.captures_seen(path),
            settled,
            unseen_capture: self.occupancy_only && !visible,
            tail_read,
        });
    }
}

/// The squares of pawns the sequence moves two steps and then takes en passant: such a
/// pawn, placed and taken within a scan, leaves its square never read changed, as the
/// one step taken at once (the same position) leaves its own square changed only by the
/// capturing pawn's landing. Neither is then seen, so that square tells them nothing
/// (what the board read there does: see `captures_seen`).
fn unread_victims(path: &[Step]) -> Bitboard {
    let mut victims = Bitboard::EMPTY;
    for (i, step) in path.iter().enumerate() {
        if let Move::EnPassant { .. } = step.mv
            && let Some(square) = capture_square(step.mv)
            && path[..i].iter().any(|s| s.mv.to() == square)
        {
            victims.add(square);
        }
    }
    victims
}

/// The square of the pawn the sequence's last move put one or two steps on from its
/// start rank, when the board shows it being taken (gone, a pawn that can take it, on
/// its square or en passant, in the hand): placed and taken within a scan, either leaves
/// its square never read changed, as in `unread_victims`. Each ends where the other ends
/// once the capture lands, so neither may count as seen only because its twin was not.
fn taken_in_progress(after: &Chess, path: &[Step], target: &Codes) -> Bitboard {
    let Some((steps, to)) = path
        .last()
        .and_then(|s| Some((start_push(s.mv)?, s.mv.to())))
    else {
        return Bitboard::EMPTY;
    };
    if target[to.to_usize()] != EMPTY {
        return Bitboard::EMPTY;
    }
    let in_hand = |mv: &Move| {
        mv.role() == Role::Pawn
            && capture_square(*mv) == Some(to)
            && mv.from().is_some_and(|sq| target[sq.to_usize()] == EMPTY)
    };
    let taken = match steps {
        2 => after.en_passant_moves().iter().any(in_hand),
        _ => after.capture_moves().iter().any(in_hand),
    };
    if taken {
        Bitboard::from(to)
    } else {
        Bitboard::EMPTY
    }
}
