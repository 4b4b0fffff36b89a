//! Explaining a board by a short sequence of legal moves: for updates that were lost,
//! and for play faster than the settle window (the board never rested between moves).
//!
//! An explanation is a sequence of complete moves, optionally followed by a move in
//! progress (a *pending* tail: pieces in the hand, or part of the next move). The
//! shortest explanations win; among them, those whose moves were started in the order the
//! board saw their pieces lifted; what they all agree on (a common prefix of moves) is
//! safe to record.

use std::time::Duration;

use shakmaty::{
    Bitboard, Board, CastlingSide, Chess, Color, Move, MoveList, Position, Rank, Role, Square,
};

use super::codes::{
    Codes, EMPTY, Effect, code_piece, diff, from_board, move_effect, move_squares, normalize,
    occupied, piece_code,
};
use super::history::History;

/// Most explanations collected per depth. (A search one move deeper than a weak
/// explanation goes on after that for one that explains the board whole.)
pub(crate) const MAX_COUNTED: usize = 16;
/// Positions visited before the search gives up, bounding the worst case (a board no
/// sequence explains, searched to the full depth) to a few milliseconds.
const MAX_NODES: usize = 50_000;
/// Positions whose moves `seen_moves_reach` generates before it gives up (the search then
/// runs as if it had not been asked).
const PROOF_NODES: usize = 1_000;
/// Pieces that may be in the hands at once in a move in progress (a capture).
const MAX_LIFTED: usize = 2;

/// Squares a move in progress can change (castling's four).
const IN_PROGRESS_SQUARES: usize = 4;
/// Squares a move changes at most (castling's four).
const MOVE_SQUARES: usize = 4;

/// When each square started to differ from the last recorded position (`None`: it
/// shows that position), the evidence of the order in which moves were made.
pub(crate) type Since = [Option<Duration>; 64];

/// What the board showed since the last recorded position, beyond its current state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Evidence<'a> {
    pub since: &'a Since,
    /// Squares seen to change: a move whose squares never changed was not made (a scan
    /// can miss a piece placed and lifted again quickly, so this only ranks).
    pub seen: Bitboard,
    /// The board's changes, and the earliest time the first move's lift can have been
    /// read: on an occupancy-only board only a piece seen leaving its square (after the
    /// previous move's piece did) can have moved.
    pub history: &'a History,
    pub start: Duration,
    /// From when a piece read standing is evidence of the moves searched: once the
    /// recorded position stood complete on the board (its last move's piece landed), not
    /// the readings of the moves before it.
    pub readings: Duration,
    /// How far apart two readings of one moment can be (a scan): a change read in one
    /// scan may have happened before one read in the scan before it.
    pub scan: Duration,
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Explanation {
    Nothing,
    /// Every shortest explanation starts with `moves`; `complete` when it is the only
    /// one and the board shows its final position (nothing in progress).
    Found {
        moves: Vec<Move>,
        /// How many moves those explanations make (more than `moves` when they differ
        /// after them).
        plies: usize,
        complete: bool,
        /// Its moves were started in the order their pieces were lifted.
        ordered: bool,
    },
    /// The `sequences` (at most [`MAX_COUNTED`]) of `plies` moves explain the board
    /// equally well and disagree from the first move on (or were cut at the cap);
    /// `exhaustive` when they are every such explanation (fewer than the cap).
    Ambiguous {
        plies: usize,
        sequences: Vec<Vec<Move>>,
        exhaustive: bool,
    },
}

/// One move of a sequence being searched: the squares it changes and, on an
/// occupancy-only board, when its piece was seen to leave its square.
#[derive(Clone, Copy)]
struct Step {
    mv: Move,
    squares: Bitboard,
    /// The empty squares it fills (on an occupancy-only board, see `landed_by`).
    fills: Bitboard,
    lift: Duration,
    /// The code of the piece it places on its destination.
    code: u8,
}

/// One sequence that explains the board.
struct Sequence {
    moves: Vec<Move>,
    complete: bool,
    /// Every square its moves change was seen to change.
    visible: bool,
    /// Its moves started in the order their squares were left (see `ordered`).
    ordered: bool,
    /// Each promoted piece was read on its square (see `promotions_seen`).
    promotions_seen: bool,
    /// Each piece it moves and then captures was read where it was captured (see
    /// `captures_seen`).
    captures_seen: bool,
    /// On an occupancy-only board, its move in progress (if any) was read begun no
    /// earlier than its last move was read landing (see `lifted_after`).
    settled: bool,
}

/// Looks for sequences of 1 to `max_plies` legal moves from `start` that explain
/// `target`, shortest first; `skip_first` excludes sequences starting with that move.
pub(crate) fn explain(
    start: &Chess,
    target: &Codes,
    evidence: Evidence<'_>,
    occupancy_only: bool,
    max_plies: usize,
    skip_first: Option<Move>,
) -> Explanation {
    // Result pieces and unknown bytes are never the result of a move.
    if !occupancy_only
        && target
            .iter()
            .any(|&c| c != EMPTY && code_piece(c).is_none())
    {
        return Explanation::Nothing;
    }
    let codes = from_board(start.board(), occupancy_only);
    let mut nodes = 0;
    let mut weak = None;
    // Whether every weak explanation leaves a piece the board read unexplained.
    let mut overlooks = false;
    // The codes read on each square since the evidence's start, once searched beyond.
    let mut placed = None;
    // On an occupancy-only board, explanations that each leave a move in progress begun
    // before their last move was read landing (see `choose_between`), and their length.
    let mut strained: Option<(Vec<Sequence>, usize)> = None;
    for plies in 1..=max_plies {
        // One move deeper than a weak explanation the search comes back with the weak
        // one unless it finds one that explains the board whole (below: complete, and
        // every square it changes seen to change). When no sequence of moves on squares
        // seen to change ends on the board, that is known without the search.
        // (Not when the weak explanation overlooks a reading: see below.)
        // (The weak explanation is then chosen after the loop.)
        let mut budget = PROOF_NODES;
        if weak.is_some()
            && !overlooks
            && !occupancy_only
            && !seen_moves_reach(
                start,
                &codes,
                target,
                evidence.seen,
                plies,
                skip_first,
                &mut budget,
            )
        {
            break;
        }
        // Beyond one move deeper than the weak explanation, only sequences whose every
        // move's piece was read where it landed are searched (few: it keeps the deeper
        // search cheap). The weak explanation never changes once found, so neither do
        // `beyond` once true nor the readings.
        let beyond = weak
            .as_ref()
            .is_some_and(|(_, weak_plies)| plies > weak_plies + 1);
        if beyond && placed.is_none() {
            placed = Some(evidence.history.codes_read(evidence.start));
        }
        let mut found = Vec::new();
        let mut path = Vec::with_capacity(plies);
        let mut search = Search {
            target,
            target_pieces: piece_counts(target),
            evidence,
            occupancy_only,
            skip_first,
            hypothesis: &[],
            found: &mut found,
            seek_whole: weak.is_some(),
            placed: placed.as_ref(),
            nodes: &mut nodes,
        };
        search.dfs(start, &codes, plies, &mut path);
        // Shortest first, but a board explained only by a move still in progress or by
        // moves on squares never seen to change (pieces in the hand, unseen placements)
        // gives way to one more move that explains it whole, as seen, and started in the
        // order the pieces were lifted: a piece lifted for the next move while the last
        // ones land also makes a longer sequence fit the board, but in the wrong order.
        // (On an occupancy-only board a capture's square never changes: its own evidence
        // rules apply there.) When every weak explanation overlooks a piece the board
        // read (a piece placed on a square and replaced there, which none of its
        // positions has), the search goes on deeper for a whole one: moves made faster
        // than they were read show only as such readings.
        // Beyond one move deeper, a promoted piece must also have been read for longer
        // than a wrong code lasts.
        let whole = |s: &Sequence| {
            s.complete
                && s.visible
                && (weak.is_none() || s.ordered)
                && (!beyond || s.promotions_seen)
        };
        if nodes >= MAX_NODES {
            // Cut short one move deeper than a weak explanation: a whole one found there
            // beats it, but others the search did not reach may explain the board as
            // well, so they are reported, not recorded.
            if weak.is_some() && !occupancy_only && found.iter().any(whole) {
                found.retain(whole);
                return Explanation::Ambiguous {
                    plies,
                    sequences: found.into_iter().map(|s| s.moves).collect(),
                    exhaustive: false,
                };
            }
            break;
        }
        if occupancy_only {
            match strained.take() {
                Some((shallow, depth)) => {
                    found.retain(|s| s.complete);
                    return choose_between(shallow, depth, found, plies);
                }
                None if plies < max_plies
                    && !found.is_empty()
                    && found.iter().all(|s| !s.complete && !s.settled) =>
                {
                    strained = Some((found, plies));
                    continue;
                }
                None => {}
            }
        }
        if found.is_empty() {
            if weak.is_some() && !overlooks {
                break;
            }
            continue;
        }
        if occupancy_only {
            return choose(found, plies);
        }
        if found.iter().any(whole) {
            // A whole explanation that leaves a piece the board read for longer than a
            // wrong code lasts off every position it passes through (a move made and
            // left again before the board rested: the rook read on e1 for two scans,
            // then on g1) gives way to one that shows it where it stood: one as long,
            // or else a deeper one.
            let deeper = Deeper::new(start, &codes, target, evidence, skip_first);
            if found.iter().any(|s| whole(s) && deeper.shown(s)) {
                found.retain(|s| !whole(s) || deeper.shown(s));
            } else {
                let whole: Vec<&Sequence> = found.iter().filter(|s| whole(s)).collect();
                let depths = (plies + 1)..=max_plies;
                if let Some(deeper) = deeper.search(&whole, depths, true, &mut nodes) {
                    return deeper;
                }
            }
            return choose(found, plies);
        }
        if weak.is_none() {
            overlooks = found
                .iter()
                .all(|s| !readings_explained(start, &codes, &s.moves, &evidence));
            weak = Some((found, plies));
        } else if !overlooks {
            break;
        }
    }
    match (weak, strained) {
        (Some((found, plies)), _) => {
            // The same holds of a weak explanation: a deeper one, as weak, that shows such
            // a piece where it stood beats it; as does one as long, when the search
            // stopped collecting them (a piece away and back fits in many ways).
            if !occupancy_only {
                let capped = found.len() >= MAX_COUNTED;
                let depths = (plies + usize::from(!capped))..=max_plies;
                let deeper = Deeper::new(start, &codes, target, evidence, skip_first);
                let shorter: Vec<&Sequence> = found.iter().collect();
                if let Some(deeper) = deeper.search(&shorter, depths, false, &mut nodes) {
                    return deeper;
                }
            }
            choose(found, plies)
        }
        (None, Some((found, plies))) => choose(found, plies),
        (None, None) => Explanation::Nothing,
    }
}

/// On an occupancy-only board, the explanations of one move more (`deeper`, complete
/// ones) next to those (`shallow`, of `depth` moves) whose every move in progress was
/// read begun before their last move was read landing. That is a player lifting a
/// piece while the opponent's is still in the air, or readings a scan apart; the board
/// also fits a capture swapped within a scan (its square never changes) followed by the
/// reply landing where the shorter one puts the first move. Nothing tells them apart
/// but the moves that follow: both are reported, unless they all start alike.
fn choose_between(
    mut shallow: Vec<Sequence>,
    depth: usize,
    mut deeper: Vec<Sequence>,
    plies: usize,
) -> Explanation {
    if deeper.is_empty() {
        return choose(shallow, depth);
    }
    let capped = shallow.len() >= MAX_COUNTED || deeper.len() >= MAX_COUNTED;
    prefer(&mut shallow);
    prefer(&mut deeper);
    let sequences: Vec<Vec<Move>> = shallow.into_iter().chain(deeper).map(|s| s.moves).collect();
    let first = &sequences[0];
    let shared = (0..depth)
        .take_while(|&i| sequences.iter().all(|s| s[i] == first[i]))
        .count();
    if shared > 0 && !capped {
        return Explanation::Found {
            moves: first[..shared].to_vec(),
            plies,
            complete: false,
            ordered: false,
        };
    }
    Explanation::Ambiguous {
        plies,
        exhaustive: !capped,
        sequences,
    }
}

/// Whether each piece the board read since the evidence's start and replaced since
/// stood on its square in the position `moves` start from or in one they lead to.
fn readings_explained(start: &Chess, codes: &Codes, moves: &[Move], evidence: &Evidence) -> bool {
    let replaced = evidence.history.replaced_pieces(evidence.start);
    shows(start, codes, moves, replaced)
}

/// Whether each of `pieces` (square, code) stands on its square in the position `moves`
/// start from (`codes`) or in one they lead to.
fn shows(
    start: &Chess,
    codes: &Codes,
    moves: &[Move],
    mut pieces: impl Iterator<Item = (Square, u8)>,
) -> bool {
    let mut positions = vec![*codes];
    let mut pos = start.clone();
    for &mv in moves {
        let mut next = *positions.last().expect("the start");
        move_effect(mv, pos.turn(), false).apply(&mut next);
        positions.push(next);
        pos.play_unchecked(mv);
    }
    pieces.all(|(square, code)| positions.iter().any(|p| p[square.to_usize()] == code))
}

/// A search deeper than a shorter explanation, for one that shows each piece the board
/// read for longer than a wrong code lasts, and replaced since, where it stood.
struct Deeper<'a> {
    start: &'a Chess,
    codes: &'a Codes,
    target: &'a Codes,
    evidence: Evidence<'a>,
    skip_first: Option<Move>,
    /// The pieces read standing and replaced since (`History::stood_replaced`).
    stood: Vec<(Square, u8)>,
}

impl<'a> Deeper<'a> {
    fn new(
        start: &'a Chess,
        codes: &'a Codes,
        target: &'a Codes,
        evidence: Evidence<'a>,
        skip_first: Option<Move>,
    ) -> Self {
        let stood = evidence
            .history
            .stood_replaced(evidence.readings, evidence.scan);
        Deeper {
            start,
            codes,
            target,
            evidence,
            skip_first,
            stood,
        }
    }

    /// Whether `s` shows each piece read standing where it stood.
    fn shown(&self, s: &Sequence) -> bool {
        shows(self.start, self.codes, &s.moves, self.stood.iter().copied())
    }

    /// When none of the `shorter` explanations shows every such piece: the explanations
    /// of the fewest moves in `depths` that do, are seen whole (every square seen to
    /// change, in the order of the lifts, promoted pieces read) and complete if
    /// `complete` (the shorter one was), among moves whose piece was read on its
    /// destination (few, so the search stays cheap). `None` when there is none, or the
    /// search was cut (it cannot tell them from the rest).
    fn search(
        &self,
        shorter: &[&Sequence],
        depths: std::ops::RangeInclusive<usize>,
        complete: bool,
        nodes: &mut usize,
    ) -> Option<Explanation> {
        let (start, codes) = (self.start, self.codes);
        if self.stood.is_empty() || shorter.iter().any(|s| self.shown(s)) {
            return None;
        }
        let placed = self.evidence.history.codes_read(self.evidence.start);
        for plies in depths {
            let mut found = Vec::new();
            let mut path = Vec::with_capacity(plies);
            let mut search = Search {
                target: self.target,
                target_pieces: piece_counts(self.target),
                evidence: self.evidence,
                occupancy_only: false,
                skip_first: self.skip_first,
                hypothesis: &[],
                found: &mut found,
                seek_whole: false,
                placed: Some(&placed),
                nodes,
            };
            search.dfs(start, codes, plies, &mut path);
            if *nodes >= MAX_NODES || found.len() >= MAX_COUNTED {
                return None;
            }
            found.retain(|s| {
                (s.complete || !complete)
                    && s.visible
                    && s.ordered
                    && s.promotions_seen
                    && self.shown(s)
            });
            if !found.is_empty() {
                return Some(choose(found, plies));
            }
        }
        None
    }
}

/// Picks among the shortest explanations: finished boards before boards in progress,
/// then those whose squares were all seen to change, then those agreeing with the order
/// of the lifts, then those whose promoted pieces were seen; records what the rest share.
/// A finished board counts as such only if each piece it moves and then captures was
/// seen where it was captured: a piece lifted for the next move also leaves a board
/// that a move to a square and a capture there would finish.
fn choose(mut found: Vec<Sequence>, plies: usize) -> Explanation {
    // Past the cap, sequences the search did not collect may start otherwise: what the
    // collected ones share is not known to be shared.
    let capped = found.len() >= MAX_COUNTED;
    prefer(&mut found);
    let Some(first) = found.first() else {
        return Explanation::Nothing;
    };
    if found.len() == 1 {
        return Explanation::Found {
            moves: first.moves.clone(),
            plies,
            complete: first.complete,
            ordered: first.ordered,
        };
    }
    let shared = (0..plies)
        .take_while(|&i| found.iter().all(|s| s.moves[i] == first.moves[i]))
        .count();
    if shared == 0 || capped {
        return Explanation::Ambiguous {
            plies,
            exhaustive: !capped && found.len() < MAX_COUNTED,
            sequences: found.into_iter().map(|s| s.moves).collect(),
        };
    }
    Explanation::Found {
        moves: first.moves[..shared].to_vec(),
        plies,
        complete: false,
        ordered: first.ordered,
    }
}

/// Keeps the preferred explanations (see `choose`).
fn prefer(found: &mut Vec<Sequence>) {
    let preferences: [fn(&Sequence) -> bool; 4] = [
        |s| s.complete && s.captures_seen,
        |s| s.visible,
        |s| s.ordered,
        |s| s.promotions_seen,
    ];
    for prefer in preferences {
        if found.iter().any(prefer) {
            found.retain(prefer);
        }
    }
}

/// The explanations of `target` that start with `hypothesis` (moves from `start` that
/// explained an earlier board) and add at most `extra` moves, the fewest that do,
/// preferred as by `choose`: each with whether it is complete (nothing in progress).
/// Also whether they are every such explanation (the search was not cut).
pub(crate) fn extend(
    start: &Chess,
    target: &Codes,
    evidence: Evidence<'_>,
    occupancy_only: bool,
    hypothesis: &[Move],
    extra: usize,
) -> (Vec<(Vec<Move>, bool)>, bool) {
    let codes = from_board(start.board(), occupancy_only);
    let mut nodes = 0;
    for plies in hypothesis.len().max(1)..=hypothesis.len() + extra {
        let mut found = Vec::new();
        let mut path = Vec::with_capacity(plies);
        let mut search = Search {
            target,
            target_pieces: piece_counts(target),
            evidence,
            occupancy_only,
            skip_first: None,
            hypothesis,
            found: &mut found,
            seek_whole: false,
            placed: None,
            nodes: &mut nodes,
        };
        search.dfs(start, &codes, plies, &mut path);
        if nodes >= MAX_NODES {
            return (Vec::new(), false);
        }
        if !found.is_empty() {
            let exhaustive = found.len() < MAX_COUNTED;
            prefer(&mut found);
            let found = found.into_iter().map(|s| (s.moves, s.complete));
            return (found.collect(), exhaustive);
        }
    }
    (Vec::new(), true)
}

struct Search<'a> {
    target: &'a Codes,
    /// `piece_counts` of the target.
    target_pieces: [[usize; 6]; 2],
    evidence: Evidence<'a>,
    occupancy_only: bool,
    skip_first: Option<Move>,
    /// The moves every sequence starts with.
    hypothesis: &'a [Move],
    found: &'a mut Vec<Sequence>,
    /// Past `MAX_COUNTED` explanations, go on for one that explains the board whole
    /// (complete, seen, in the order of the lifts), then stop: a shorter explanation
    /// is weak, and the many a piece in the hand fits must not hide the one that is not.
    seek_whole: bool,
    /// When set, the codes read on each square (a bit per code): only moves whose piece
    /// was read on its destination are tried (castling aside).
    placed: Option<&'a [u16; 64]>,
    nodes: &'a mut usize,
}

impl Search<'_> {
    /// Counts a position visited; false once the search is full (enough explanations
    /// collected, or the node budget spent).
    fn visit(&mut self) -> bool {
        *self.nodes += 1;
        (self.found.len() < MAX_COUNTED || self.seek_whole) && *self.nodes < MAX_NODES
    }

    /// `remaining` is at least 1: the last move's positions are visited by `leaf`.
    fn dfs(&mut self, pos: &Chess, codes: &Codes, remaining: usize, path: &mut Vec<Step>) {
        if !self.visit() {
            return;
        }
        let changed = diff(codes, self.target);
        if !self.within_reach(pos, changed, remaining)
            || !self.reachable(pos, codes, changed, remaining)
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
        for mv in pos.legal_moves() {
            if path.is_empty() && (Some(mv) == self.skip_first || !self.moved_on(mv))
                || self.hypothesis.get(path.len()).is_some_and(|&h| h != mv)
            {
                continue;
            }
            // On an occupancy-only board only a piece seen leaving its square can move,
            // after the previous move's piece left and landed.
            let lift = if self.occupancy_only {
                let after = path.last().map_or(self.evidence.start, |s| s.lift);
                let scan = self.evidence.scan;
                match self.lifted(mv, after) {
                    Some(t) if path.last().is_none_or(|s| self.landed_by(s, t, scan)) => t,
                    _ => continue,
                }
            } else {
                Duration::ZERO
            };
            let role = mv.promotion().unwrap_or(mv.role());
            let code = piece_code(role.of(pos.turn()));
            if let Some(read) = self.placed
                && !matches!(mv, Move::Castle { .. })
                && read[mv.to().to_usize()] & (1 << code) == 0
            {
                *self.nodes += 1;
                continue;
            }
            if (stray & !landing(mv, pos.turn())).any() {
                // Its leaf is visited (and counted) but cannot explain the board.
                *self.nodes += 1;
                continue;
            }
            // Nor can a leaf still differing, off the move's squares, on more than a move
            // in progress changes (see `leaf`): counted, without building its effect.
            if remaining == 1
                && (changed & !move_squares(mv, pos.turn())).count() > IN_PROGRESS_SQUARES
            {
                *self.nodes += 1;
                continue;
            }
            let effect = move_effect(mv, pos.turn(), self.occupancy_only);
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
            path.push(Step {
                mv,
                squares,
                fills,
                lift,
                code,
            });
            if remaining == 1 {
                // Off the move's squares the board still differs where it did.
                let moved: Bitboard = squares
                    .into_iter()
                    .filter(|&sq| effect.code_on(sq) != Some(self.target[sq.to_usize()]))
                    .collect();
                self.leaf(pos, mv, codes, &effect, (changed & !squares) | moved, path);
            } else {
                let mut next_codes = *codes;
                effect.apply(&mut next_codes);
                // A board out of reach from here is out of reach after the move (which
                // never adds a right to castle): the node is counted, as `dfs` would,
                // without playing the move.
                if self.within_reach(pos, diff(&next_codes, self.target), remaining - 1) {
                    let mut next = pos.clone();
                    next.play_unchecked(mv);
                    self.dfs(&next, &next_codes, remaining - 1, path);
                } else {
                    *self.nodes += 1;
                }
            }
            path.pop();
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
        if !complete && self.found.len() >= MAX_COUNTED {
            return;
        }
        let (scan, mut settled) = (self.evidence.scan, true);
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
            if !self.in_progress(&pos, &after) || !self.lifted_after(&after, path, scan) {
                return;
            }
            settled = self.lifted_after(&after, path, Duration::ZERO);
        }
        let visible = if self.occupancy_only {
            let mut after = self.evidence.start;
            path.iter().all(|s| {
                let landed = self.capture_landed(s, after);
                after = s.lift;
                landed
            })
        } else {
            let squares = path.iter().fold(Bitboard::EMPTY, |all, s| all | s.squares);
            (squares & !self.evidence.seen).is_empty()
        };
        let ordered = self.ordered(path);
        if self.found.len() >= MAX_COUNTED {
            if !(visible && ordered) {
                return;
            }
            self.seek_whole = false;
        }
        self.found.push(Sequence {
            moves: path.iter().map(|s| s.mv).collect(),
            complete,
            visible,
            ordered,
            promotions_seen: self.promotions_seen(path),
            captures_seen: self.captures_seen(path),
            settled,
        });
    }

    /// On an occupancy-only board, whether `mv`, replacing the last move (`skip_first`),
    /// a quiet move, by the same piece to another square, was read landing there (its
    /// square filled) no earlier than a scan before the piece left the last move's
    /// square: as `Engine::moved_on` has it for a single move.
    fn moved_on(&self, mv: Move) -> bool {
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
    /// squares they fill show in the board or were seen filled.
    fn capture_landed(&self, step: &Step, after: Duration) -> bool {
        let Move::Normal {
            capture: Some(_),
            to,
            ..
        } = step.mv
        else {
            return true;
        };
        let history = self.evidence.history;
        history
            .left(to, after)
            .and_then(|emptied| history.filled(to, emptied.max(step.lift)))
            .is_some()
    }

    /// Whether the target is `codes` with a move of the side to move in progress: one of
    /// its pieces in the hand, or part of a legal move (each square the move changes
    /// shows its final content, an empty square or, on the promotion square, the pawn),
    /// but not all of it.
    fn in_progress(&self, pos: &Chess, codes: &Codes) -> bool {
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
        // A move other than en passant or castling changes one square holding a piece of
        // its side (where it leaves) and one other (where it lands): a board differing
        // on more of either can only be one of those in progress.
        let ours = pos.board().by_color(turn);
        let moves = if (changed & ours).count() > 1 || (changed & !ours).count() > 1 {
            // Each list is asked for only when the position can have such a move: a move
            // list is large, and copying an empty one out was a visible share of the search.
            let mut moves = MoveList::new();
            if pos.maybe_ep_square().is_some() {
                moves.extend(pos.en_passant_moves());
            }
            for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
                if pos.castles().has(turn, side) {
                    moves.extend(pos.castling_moves(side));
                }
            }
            moves
        } else {
            pos.legal_moves()
        };
        moves.iter().any(|&mv| {
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
            })
        })
    }

    /// Whether `code` is an empty square or a piece of `turn`: what a move of `turn` in
    /// progress can show on a square it changes.
    fn mover_code(&self, code: u8, turn: Color) -> bool {
        code == EMPTY
            || Role::ALL
                .into_iter()
                .any(|role| normalize(piece_code(role.of(turn)), self.occupancy_only) == code)
    }

    /// On an occupancy-only board, whether the pieces a move in progress has in the hand
    /// (squares read empty that the sequence leaves occupied: its piece, a piece it
    /// captures) were seen leaving their squares after the sequence's last move began
    /// and landed (read at most `slack` later): the next move starts after the last one.
    fn lifted_after(&self, codes: &Codes, path: &[Step], slack: Duration) -> bool {
        let Some(last) = path.last().filter(|_| self.occupancy_only) else {
            return true;
        };
        let history = self.evidence.history;
        (occupied(codes) & !occupied(self.target))
            .into_iter()
            .all(|sq| {
                history
                    .left(sq, last.lift)
                    .is_some_and(|t| self.landed_by(last, t, slack))
            })
    }

    /// On an occupancy-only board, whether `step`'s piece was seen landing (each empty
    /// square it fills read occupied) no later than `slack` after `next_lift`, when the
    /// next piece left its square: a player replies to a finished move. (A reading
    /// within a scan may come in the scan before or after the one of an earlier change:
    /// the search allows a scan.)
    fn landed_by(&self, step: &Step, next_lift: Duration, slack: Duration) -> bool {
        let history = self.evidence.history;
        let scan = self.evidence.scan;
        step.fills.into_iter().all(|sq| {
            history
                .filled(sq, step.lift.saturating_sub(scan))
                .is_some_and(|at| at <= next_lift + slack)
        })
    }

    /// When the piece(s) of `mv` were first seen leaving their square at or after
    /// `after` (castling: the first of king and rook, both must have left).
    fn lifted(&self, mv: Move, after: Duration) -> Option<Duration> {
        let history = self.evidence.history;
        match mv {
            Move::Castle { king, rook } => history
                .left(king, after)
                .zip(history.left(rook, after))
                .map(|(k, r)| k.min(r)),
            _ => history.left(mv.from()?, after),
        }
    }

    /// Whether each promoted piece was read on its promotion square since the sequence
    /// began, for longer than a wrong code lasts (one scan): when a fast reply captured
    /// it, that reading is the only evidence of the piece chosen, and it must then be
    /// one the capture replaced (not the capturing piece's). Occupancy-only boards
    /// cannot tell pieces apart.
    fn promotions_seen(&self, path: &[Step]) -> bool {
        if self.occupancy_only {
            return true;
        }
        path.iter().enumerate().all(|(i, step)| {
            let Some(role) = step.mv.promotion() else {
                return true;
            };
            let square = step.mv.to();
            let color = Color::from_white(square.rank() == Rank::Eighth);
            let code = piece_code(role.of(color));
            let captured = path[i + 1..].iter().any(|later| later.mv.to() == square);
            let (start, scan) = (self.evidence.start, self.evidence.scan);
            self.evidence
                .history
                .stood(square, code, start, scan, captured)
        })
    }

    /// Whether each piece a move of the sequence placed and a later one captured was
    /// read on that square (its code, since the sequence began). Players reply to a
    /// move after it landed, so the board reads the piece there, except when a capture
    /// swaps it away within a scan. Occupancy-only boards cannot tell pieces apart. (A
    /// pawn's two steps taken en passant leave the position its one step captured at
    /// once leaves: this is what tells them apart.)
    fn captures_seen(&self, path: &[Step]) -> bool {
        if self.occupancy_only {
            return true;
        }
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
            let captured = path[i + 1..]
                .iter()
                .find(|later| later.squares.contains(square))
                .is_some_and(|later| capture_square(later.mv) == Some(square));
            !captured
                || self.evidence.history.stood(
                    square,
                    step.code,
                    self.evidence.start,
                    Duration::ZERO,
                    false,
                )
        })
    }

    /// Whether the moves were started in the order their pieces were seen lifted: a move
    /// whose square of departure no earlier move touched was started when that square
    /// began to differ, which must not be before the previous such move's.
    fn ordered(&self, path: &[Step]) -> bool {
        let mut touched = Bitboard::EMPTY;
        let mut last = Duration::ZERO;
        for &Step { mv, squares, .. } in path {
            if let Some(from) = mv.from()
                && !touched.contains(from)
                && let Some(at) = self.evidence.since[from.to_usize()]
            {
                if at < last {
                    return false;
                }
                last = at;
            }
            touched |= squares;
        }
        true
    }

    /// Whether the squares still differing can be changed in `remaining` moves plus a
    /// move in progress: a move changes at most three squares (en passant), castling one
    /// more per side that may still castle, and a move in progress at most four. Cheap,
    /// and it cuts the last levels of the search, where most nodes are, when the board
    /// is far from every sequence (an unexplainable board).
    fn within_reach(&self, pos: &Chess, changed: Bitboard, remaining: usize) -> bool {
        let castling_sides = [Color::White, Color::Black]
            .into_iter()
            .filter(|&c| pos.castles().has_color(c))
            .count();
        let most = 3 * remaining + castling_sides + IN_PROGRESS_SQUARES;
        changed.count() <= most
    }

    /// A lower bound on the moves still needed: each move puts one piece on its final
    /// square (castling two), so a side with more target squares left to fill than it
    /// has moves (plus one for a possible castling) cannot reach the target. A move in
    /// progress may add one placed piece and two in the hands.
    fn reachable(&self, pos: &Chess, codes: &Codes, changed: Bitboard, remaining: usize) -> bool {
        let moves_of = |color: Color| {
            let mine = if color == pos.turn() {
                (remaining + 1).div_ceil(2)
            } else {
                remaining.div_ceil(2)
            };
            mine + usize::from(pos.castles().has_color(color))
        };
        let slack = MAX_LIFTED;
        if self.occupancy_only {
            let (mut fill, mut empty) = (0, 0);
            for (have, want) in codes.iter().zip(self.target.iter()) {
                fill += usize::from(*have == EMPTY && *want != EMPTY);
                empty += usize::from(*have != EMPTY && *want == EMPTY);
            }
            let castles = usize::from(pos.castles().any());
            return fill <= remaining + 1 + castles && empty <= remaining + castles + slack;
        }
        // Pieces only disappear by capture, one per move of the other side, or into a hand.
        // A piece only appears by promotion, for a pawn that disappears: a board with a
        // piece more than that (a misread code) is no sequence of moves, whatever its depth.
        let count = board_counts(pos.board());
        let pawn = usize::from(piece_code(Role::Pawn.of(Color::White)) - 1);
        let mut lost = 0;
        for (color, side) in [(Color::White, 0), (Color::Black, 1)] {
            let (have, want) = (&count[side], &self.target_pieces[side]);
            let Some(promoted) = have[pawn].checked_sub(want[pawn]) else {
                return false;
            };
            let appeared: usize = (0..6)
                .filter(|&r| r != pawn)
                .map(|r| want[r].saturating_sub(have[r]))
                .sum();
            if appeared > promoted {
                return false;
            }
            let total = |c: &[usize; 6]| c.iter().sum::<usize>();
            let Some(gone) = total(have).checked_sub(total(want)) else {
                return false;
            };
            lost += gone.saturating_sub(moves_of(!color));
        }
        if lost > slack {
            return false;
        }
        let mut need = [0usize; 2];
        for sq in changed {
            if let Some(piece) = code_piece(self.target[sq.to_usize()]) {
                need[usize::from(piece.color.is_black())] += 1;
            }
        }
        need[0] <= moves_of(Color::White) && need[1] <= moves_of(Color::Black)
    }
}

/// Whether a sequence of `remaining` legal moves from `pos` (showing `codes`), none
/// starting with `skip_first` and each changing only squares in `seen`, ends on `target`
/// exactly: a necessary condition for an explanation that is complete and was seen
/// whole. Each position whose moves it generates spends one of `budget`; once it is
/// spent, the answer is yes (nothing was ruled out).
fn seen_moves_reach(
    pos: &Chess,
    codes: &Codes,
    target: &Codes,
    seen: Bitboard,
    remaining: usize,
    skip_first: Option<Move>,
    budget: &mut usize,
) -> bool {
    // Every square still differing is changed by a move to come (at most four each).
    let changed = diff(codes, target);
    if (changed & !seen).any() || changed.count() > MOVE_SQUARES * remaining {
        return false;
    }
    let Some(left) = budget.checked_sub(1) else {
        return true;
    };
    *budget = left;
    let turn = pos.turn();
    pos.legal_moves().iter().any(|&mv| {
        let squares = move_squares(mv, turn);
        if (squares & !seen).any()
            || Some(mv) == skip_first
            || remaining == 1 && (changed & !squares).any()
        {
            return false;
        }
        let mut next_codes = *codes;
        move_effect(mv, turn, false).apply(&mut next_codes);
        if remaining == 1 {
            return next_codes == *target;
        }
        let mut next = pos.clone();
        next.play_unchecked(mv);
        seen_moves_reach(
            &next,
            &next_codes,
            target,
            seen,
            remaining - 1,
            None,
            budget,
        )
    })
}

/// When `mv`, replacing `last` (a quiet move), moves the same piece to another square:
/// the square `last` put it on and the one `mv` puts it on.
pub(crate) fn moved_elsewhere(last: Move, mv: Move) -> Option<(Square, Square)> {
    let Move::Normal {
        from,
        to,
        capture: None,
        ..
    } = last
    else {
        return None;
    };
    let Move::Normal {
        from: start,
        to: square,
        ..
    } = mv
    else {
        return None;
    };
    (start == from && square != to).then_some((to, square))
}

/// The squares `mv` by `color` puts a piece on.
pub(crate) fn landing(mv: Move, color: Color) -> Bitboard {
    match mv {
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_king_side(king < rook);
            Bitboard::from(side.king_to(color)) | side.rook_to(color)
        }
        _ => Bitboard::from(mv.to()),
    }
}

/// The square of the piece `mv` captures: its destination, or beside it en passant.
fn capture_square(mv: Move) -> Option<Square> {
    match mv {
        Move::Normal {
            capture: Some(_),
            to,
            ..
        } => Some(to),
        Move::EnPassant { from, to } => Some(Square::from_coords(to.file(), from.rank())),
        _ => None,
    }
}

/// `piece_counts` of the codes of `board`, from its piece bitboards.
fn board_counts(board: &Board) -> [[usize; 6]; 2] {
    let mut count = [[0; 6]; 2];
    for color in Color::ALL {
        for role in Role::ALL {
            let k = usize::from(piece_code(role.of(color)) - 1);
            count[k / 6][k % 6] = board.by_piece(role.of(color)).count();
        }
    }
    count
}

/// How many pieces of each kind `codes` show, by colour (White, Black) and code (the
/// six codes of a colour in order, its pawn first).
fn piece_counts(codes: &Codes) -> [[usize; 6]; 2] {
    let mut count = [[0; 6]; 2];
    for &code in codes {
        if let 1..=12 = code {
            let k = usize::from(code - 1);
            count[k / 6][k % 6] += 1;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Square, san::San, uci::UciMove};

    fn after(pos: &Chess, sans: &[&str]) -> Chess {
        let mut p = pos.clone();
        for san in sans {
            let mv = san.parse::<San>().unwrap().to_move(&p).unwrap();
            p.play_unchecked(mv);
        }
        p
    }

    fn ucis(moves: &[Move]) -> Vec<String> {
        moves
            .iter()
            .map(|m| UciMove::from_standard(*m).to_string())
            .collect()
    }

    const NO_ORDER: Since = [None; 64];

    fn run(start: &Chess, target: &Codes, since: &Since) -> Explanation {
        let history = History::default();
        let evidence = Evidence {
            since,
            seen: Bitboard::FULL,
            history: &history,
            start: Duration::ZERO,
            readings: Duration::ZERO,
            scan: Duration::from_millis(250),
        };
        explain(start, target, evidence, false, 4, None)
    }

    fn found(moves: &[Move], complete: bool) -> (Vec<String>, bool) {
        (ucis(moves), complete)
    }

    #[test]
    fn unique_two_and_three_ply_explanations() {
        let start = Chess::default();
        let target = from_board(after(&start, &["e4", "c5"]).board(), false);
        match run(&start, &target, &NO_ORDER) {
            Explanation::Found {
                moves, complete, ..
            } => {
                assert_eq!(
                    found(&moves, complete),
                    (vec!["e2e4".into(), "c7c5".into()], true)
                );
            }
            other => panic!("{other:?}"),
        }
        // The queen can only leave after the pawn, so the order is forced.
        let target = from_board(after(&start, &["e4", "e5", "Qh5"]).board(), false);
        match run(&start, &target, &NO_ORDER) {
            Explanation::Found { moves, .. } => {
                assert_eq!(ucis(&moves), ["e2e4", "e7e5", "d1h5"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn transpositions_are_ambiguous_without_order_evidence() {
        let start = Chess::default();
        let target = from_board(after(&start, &["Nf3", "Nf6", "Nc3", "Nc6"]).board(), false);
        assert!(matches!(
            run(&start, &target, &NO_ORDER),
            Explanation::Ambiguous { plies: 4, .. }
        ));
        // The order in which the squares were left decides.
        let target = from_board(after(&start, &["e4", "e5", "Nf3"]).board(), false);
        assert!(matches!(
            run(&start, &target, &NO_ORDER),
            Explanation::Ambiguous { plies: 3, .. }
        ));
        let mut since = NO_ORDER;
        for (sq, ms) in [(Square::E2, 10), (Square::E7, 20), (Square::G1, 30)] {
            since[sq.to_usize()] = Some(Duration::from_millis(ms));
        }
        match run(&start, &target, &since) {
            Explanation::Found { moves, .. } => assert_eq!(ucis(&moves), ["e2e4", "e7e5", "g1f3"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_move_in_progress_after_complete_moves() {
        // e4 e5 played, White's knight in the hand: e4 e5 are certain.
        let start = Chess::default();
        let mut target = from_board(after(&start, &["e4", "e5"]).board(), false);
        target[Square::G1.to_usize()] = EMPTY;
        match run(&start, &target, &NO_ORDER) {
            Explanation::Found {
                moves, complete, ..
            } => {
                assert_eq!(
                    found(&moves, complete),
                    (vec!["e2e4".into(), "e7e5".into()], false)
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_moves_on_seen_squares_reach_the_board_exactly() {
        let start = Chess::default();
        let codes = from_board(start.board(), false);
        let target = from_board(after(&start, &["e4", "e5"]).board(), false);
        let seen = Bitboard::from_iter([Square::E2, Square::E4, Square::E7, Square::E5]);
        let reach = |seen: Bitboard, plies, skip: Option<&str>| {
            let skip = skip.map(|s| s.parse::<San>().unwrap().to_move(&start).unwrap());
            let mut budget = PROOF_NODES;
            seen_moves_reach(&start, &codes, &target, seen, plies, skip, &mut budget)
        };
        assert!(reach(seen, 2, None));
        assert!(!reach(seen, 2, Some("e4")));
        assert!(!reach(seen, 1, None));
        assert!(!reach(seen.without(Square::E5), 2, None));
        // Knights going out and back reach it too, on their squares only.
        let knights = seen | Square::G1 | Square::F3 | Square::G8 | Square::F6;
        assert!(!reach(seen, 6, None));
        assert!(reach(knights, 6, None));
        assert!(!reach(knights.without(Square::G8), 6, None));
        // Its budget spent, nothing is ruled out.
        let mut budget = 0;
        assert!(seen_moves_reach(
            &start,
            &codes,
            &target,
            seen,
            3,
            None,
            &mut budget
        ));
    }

    #[test]
    fn a_piece_in_the_hand_seen_lifted_keeps_the_shorter_explanation() {
        // e4 e5 played and White's knight in the hand, only those squares seen: no third
        // move on seen squares ends on the board, so e4 e5 stand (as the full search).
        let start = Chess::default();
        let mut target = from_board(after(&start, &["e4", "e5"]).board(), false);
        target[Square::G1.to_usize()] = EMPTY;
        let history = History::default();
        let seen =
            Bitboard::from_iter([Square::E2, Square::E4, Square::E7, Square::E5, Square::G1]);
        let evidence = Evidence {
            since: &NO_ORDER,
            seen,
            history: &history,
            start: Duration::ZERO,
            readings: Duration::ZERO,
            scan: Duration::from_millis(250),
        };
        match explain(&start, &target, evidence, false, 4, None) {
            Explanation::Found {
                moves, complete, ..
            } => assert_eq!(
                found(&moves, complete),
                (vec!["e2e4".into(), "e7e5".into()], false)
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn piece_counts_from_bitboards_match_the_codes() {
        let start = Chess::default();
        let middle = after(&start, &["e4", "d5", "exd5", "Qxd5", "Nc3"]);
        for pos in [start, middle] {
            let codes = from_board(pos.board(), false);
            assert_eq!(board_counts(pos.board()), piece_counts(&codes));
        }
    }

    #[test]
    fn impossible_boards_end_the_search_quickly() {
        let start = Chess::default();
        let mut target = from_board(start.board(), false);
        for sq in [Square::D2, Square::E2, Square::F2] {
            target[sq.to_usize()] = EMPTY;
        }
        assert_eq!(run(&start, &target, &NO_ORDER), Explanation::Nothing);
        target[Square::E4.to_usize()] = 99;
        assert_eq!(run(&start, &target, &NO_ORDER), Explanation::Nothing);
    }

    #[test]
    fn too_distant_boards_are_not_explained() {
        let start = Chess::default();
        let target = from_board(
            after(&start, &["e4", "e5", "Nf3", "Nc6", "Bb5"]).board(),
            false,
        );
        assert_eq!(run(&start, &target, &NO_ORDER), Explanation::Nothing);
    }
}
