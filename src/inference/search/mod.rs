//! Explaining a board by a short sequence of legal moves: for updates that were lost,
//! and for play faster than the settle window (the board never rested between moves).
//!
//! An explanation is a sequence of complete moves, optionally followed by a move in
//! progress (a *pending* tail: pieces in the hand, or part of the next move). The
//! shortest explanations win; among them, those whose moves were started in the order the
//! board saw their pieces lifted; what they all agree on (a common prefix of moves) is
//! safe to record.

mod bounds;
mod choice;
mod deeper;
#[cfg(test)]
mod deeper_tests;
mod dfs;
mod evidence;
mod fresh;
mod line;
mod moves;
mod none;
#[cfg(test)]
mod none_tests;
mod seen;
#[cfg(test)]
mod tests;

use std::time::Duration;

use shakmaty::{Bitboard, Chess, Color, Move, Position};

use self::bounds::seen_moves_reach;
use self::choice::{choose, choose_between, prefer, queens_promoted};
use self::deeper::{Deeper, misread_as_any, readings_explained};
use self::dfs::Search;
use self::fresh::SinceLost;
use self::line::played_along;
use self::seen::{SeenWhole, seen_whole};
use super::codes::{Codes, EMPTY, code_piece, from_board};
use super::history::History;

pub(crate) use self::deeper::{codes_along, stood_shown_in_order};
pub(crate) use self::evidence::put_down;
pub(crate) use self::fresh::fresh_read_passed;
pub(crate) use self::line::CheckedLines;
pub(crate) use self::moves::{
    capture_square, castles_after, landing, moved_elsewhere, slides_past, taken_like_its_twin,
};
pub(crate) use self::seen::round_trip;

/// Most explanations collected per depth. (A search on a board that reads pieces goes on
/// after that for every one that explains the board whole.)
pub(crate) const MAX_COUNTED: usize = 16;
/// Positions visited before the search gives up, bounding the worst case (a board no
/// sequence explains, searched to the full depth) to a few milliseconds.
const MAX_NODES: usize = 50_000;
/// Positions whose moves `seen_moves_reach` generates before it gives up (the search then
/// runs as if it had not been asked).
const PROOF_NODES: usize = 1_000;
/// The depth from which a search that found nothing first tries to prove that nothing
/// is found deeper either (see `none`): from there on its positions number thousands.
const NONE_DEPTH: usize = 3;
/// Positions whose moves that proof generates before it gives up (the search then runs
/// as if it had not been tried): a board it settles takes a few dozen.
const NONE_NODES: usize = 200;
/// Moves beyond the search's depth that a deeper search for the pieces the board read
/// standing goes on (see `Deeper::search`): moves read being made, each piece read on
/// its destination, only faster than the board rested between them (a burst of blitz
/// moves: Qf3 Be4 Qg4 Bf5 Qf3 within two seconds).
const READ_PLIES: usize = 2;
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
    /// When updates were last lost, if since `start` (`None`: every change since was
    /// read, in turn; after lost updates a fresh read shows changes made at unknown
    /// times, all at once).
    pub lost: Option<Duration>,
    /// The search starts from the position recorded when updates were last lost: the
    /// board read whole then is a snapshot of the moves searched (see `fresh`).
    pub fresh: bool,
    /// On an occupancy-only board, how long before the previous move's piece was read
    /// leaving the next move's may have been (zero; a scan once nothing else explains
    /// the board, see `Engine::explained_in_any_order`).
    pub slack: Duration,
}

impl Evidence<'_> {
    /// No updates were lost since `start`, and the history still holds every change
    /// read since (see `History::covers`): the order of the changes is known.
    pub fn continuous(&self) -> bool {
        self.lost.is_none() && self.history.covers(self.start)
    }
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
        /// Its moves were told from others only by one reading of a piece taken at once
        /// (a queen promoted, a pawn's one or two steps: see `Sequence::read_once`),
        /// which a wrong code or a slide would also leave.
        read_once: bool,
    },
    /// The `sequences` (at most [`MAX_COUNTED`]) of `plies` moves explain the board
    /// equally well and disagree from the first move on (or were cut at the cap);
    /// `exhaustive` when they are every such explanation (fewer than the cap).
    /// `unread_tail` when each explains the board only with a move in progress not read
    /// under way since updates were lost (see `choose`) and they are every one found
    /// (not cut at the cap): none is known to be the moves made until a board read since
    /// is explained by moves after it.
    Ambiguous {
        plies: usize,
        sequences: Vec<Vec<Move>>,
        exhaustive: bool,
        unread_tail: bool,
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
    /// On an occupancy-only board, it captures the piece the previous move placed
    /// before that landing was read (see `taken_unseen`).
    taken_unseen: bool,
    /// On an occupancy-only board, the pieces of the side to reply that can slide across
    /// the one square it fills (see `slid_over`).
    across: Bitboard,
}

/// One sequence that explains the board.
#[derive(Clone)]
struct Sequence {
    moves: Vec<Move>,
    complete: bool,
    /// On an occupancy-only board, how many of its captures were not seen landing (see
    /// `capture_landed`, `taken_unseen`), with the landings a slide across explains (see
    /// `slid_over`); elsewhere 1 when a square its moves change was not seen to change
    /// (see `visible`).
    unseen: usize,
    /// Its moves started in the order their squares were left (see `ordered`).
    ordered: bool,
    /// Each promoted piece was read on its square (see `promotions_seen`).
    promotions_seen: bool,
    /// Each promoted piece is a queen, the last of its side read on its square, if only
    /// once (see `promotions_read`).
    promotions_read: bool,
    /// Each pawn taken at once where its one or two steps end alike was read where it
    /// stands in the sequence (see `pawns_read`).
    pawns_read: bool,
    /// One such pawn was read there for no longer than a scan.
    pawn_read_once: bool,
    /// Each piece it moves and then captures was read where it was captured (see
    /// `captures_seen`).
    captures_seen: bool,
    /// On an occupancy-only board, its move in progress (if any) was read begun in a
    /// later scan than its last move was read landing (see `lifted_later`).
    settled: bool,
    /// On an occupancy-only board, a capture of it was not seen landing (see
    /// `capture_landed`): a guess the board does not show.
    unseen_capture: bool,
    /// Complete, or its move in progress was read under way (see `read_under_way`):
    /// otherwise it explains the board but records nothing (see `choose`).
    tail_read: bool,
}

impl Sequence {
    /// Every square its moves change was seen to change (on an occupancy-only board:
    /// each capture seen landing).
    fn visible(&self) -> bool {
        self.unseen == 0
    }

    /// A queen it promotes to was read on its square, but only once (see
    /// `promotions_read`), or so was a pawn it takes at once where the pawn's one or two
    /// steps end alike (see `pawns_read`).
    fn read_once(&self) -> bool {
        (!self.promotions_seen && self.promotions_read) || (self.pawns_read && self.pawn_read_once)
    }
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
    // Whether every weak explanation leaves a piece the board read unexplained, or was
    // not begun in the order the pieces were lifted (a piece held in the hand through
    // its side's last move).
    let mut overlooks = false;
    // The codes read on each square since the evidence's start, once searched beyond.
    let mut placed = None;
    // On an occupancy-only board, explanations that each leave a move in progress begun
    // before their last move was read landing (see `choose_between`), and their length.
    let mut strained: Option<(Vec<Sequence>, usize)> = None;
    // The weak explanations were found by a search cut at its budget: reported, never
    // recorded.
    let mut weak_cut = false;
    // The moves of the start position, for every depth's search.
    let root_moves = start.legal_moves();
    for plies in 1..=max_plies {
        // Nothing found so far: when no sequence this long or longer can be accepted
        // either (a king the board shows beyond its side's reach), nothing explains the
        // board, as the search would find visiting all of them (or up to its cap).
        if plies == NONE_DEPTH && weak.is_none() && strained.is_none() && !occupancy_only {
            let (mut budget, mut found, mut visited) = (NONE_NODES, Vec::new(), 0);
            let search = Search::new(target, evidence, false, &mut found, &mut visited);
            if search.none_explain(start, &codes, plies, max_plies, &mut budget) {
                return Explanation::Nothing;
            }
        }
        // One move deeper than a weak explanation the search comes back with the weak
        // one unless it finds one that explains the board whole (below: complete, and
        // every square it changes seen to change). When no sequence of moves on squares
        // seen to change ends on the board, that is known without the search.
        // (The weak explanation is then chosen after the loop; when it overlooks a
        // reading, a deeper one may still show it: see below.)
        let mut budget = PROOF_NODES;
        if weak.is_some()
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
            if overlooks {
                continue;
            }
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
            // A piece read on a square for one scan only may have been any piece.
            let mut read = evidence.history.codes_read(evidence.start);
            misread_as_any(&mut read, &evidence);
            placed = Some(read);
        }
        let mut found = Vec::new();
        let mut path = Vec::with_capacity(plies);
        let mut search = Search {
            skip_first,
            collect_best: !occupancy_only,
            placed: placed.as_ref(),
            root_moves: Some(&root_moves),
            ..Search::new(target, evidence, occupancy_only, &mut found, &mut nodes)
        };
        search.dfs(start, &codes, plies, &mut path);
        if occupancy_only {
            queens_promoted(&mut found);
        }
        // Shortest first, but a board explained only by a move still in progress or by
        // moves on squares never seen to change (pieces in the hand, unseen placements)
        // gives way to one more move that explains it whole, as seen, and started in the
        // order the pieces were lifted: a piece lifted for the next move while the last
        // ones land also makes a longer sequence fit the board, but in the wrong order.
        // (On an occupancy-only board a capture's square never changes: its own evidence
        // rules apply there.) When every weak explanation overlooks a piece the board
        // read (a piece placed on a square and replaced there, which none of its
        // positions has), the search goes on deeper for a whole one: moves made faster
        // than they were read show only as such readings. So it does when every one has
        // its move in progress begun before its last moves (Qe5 Qd7 with the rook lifted
        // before Qe5 still in the hand, for Rxd1+ Rxd1 Qe5 Qd7, the rook taken on d1
        // within a scan). The order of the lifts is asked of the longer one only where
        // a weak one keeps it: lifts read a scan apart may be read in either order
        // (exd6 Qxd6 Qxd6, White's queen read lifted first, its square read late in
        // the scan, beside Qxd6 Qf6 with the pawn lifted before both still in the hand).
        // Beyond one move deeper, a promoted piece must also have been read for longer
        // than a wrong code lasts, or be a queen read once, the last piece of its side
        // read there (see `promotions_read`: g1=Q read for a scan, then Rxg1 Kxg1; not
        // Kg1 with Rxg2 under way, the queen and the rook read on g1 left unexplained).
        let order_kept = weak
            .as_ref()
            .is_some_and(|(weak, _): &(Vec<Sequence>, usize)| weak.iter().any(|s| s.ordered));
        let whole = |s: &Sequence| {
            s.complete
                && s.visible()
                && (!order_kept || s.ordered)
                && (!beyond || s.promotions_seen || s.promotions_read)
        };
        if nodes >= MAX_NODES {
            // Cut short one move deeper than a weak explanation: a whole one found there
            // beats it, but others the search did not reach may explain the board as
            // well, so they are reported, not recorded.
            // So are those found at the first depth that has any: a board the
            // recorded position explains is no evidence that its last move must be
            // replaced (the correction the caller tries after nothing).
            // Unless the moves on squares seen to change alone explain it whole, as
            // none the search did not reach would (see `seen_whole`); so too when the
            // search was cut before it found any (a burst of captures in a middlegame:
            // four plies of every legal move pass the budget), nothing shorter found;
            // or they are weak, and one move deeper decides (below).
            if occupancy_only {
                break;
            }
            let mut cut = true;
            if weak.is_some() && found.iter().any(whole) {
                found.retain(whole);
            } else if weak.is_none() {
                match seen_whole(start, &codes, target, evidence, skip_first, plies) {
                    SeenWhole::Kept(seen) => (found, cut) = (seen, false),
                    _ if found.is_empty() => break,
                    // No sequence this long explains the board whole (one that did
                    // would change only squares seen to change, and those give none):
                    // what the cut search found is weak, and one move deeper a whole
                    // explanation replaces it, as it replaces a weak one found uncut
                    // (Bxd4 Nxd4 Nxd4 Qxd4, each swapped within a scan, not Bxd4 Qxd4
                    // with Ne5 under way, both knights in the hands). The weak ones are
                    // never recorded.
                    SeenWhole::None if plies < max_plies => {
                        weak = Some((found, plies));
                        weak_cut = true;
                        continue;
                    }
                    _ => prefer(&mut found),
                }
            } else if weak.is_some()
                && let SeenWhole::Kept(seen) =
                    seen_whole(start, &codes, target, evidence, skip_first, plies)
                && seen.iter().any(whole)
            {
                // Nor is a weak explanation kept when the cut search found no whole one
                // but the moves on squares seen to change explain the board whole: many
                // weak ones (pieces in the hand fit in many ways) spent the budget
                // before the search reached it (Qxd4 Qxd4 Nxd4, not Nxd4 Qb3 with Qxb3
                // under way, both queens in the hand).
                (found, cut) = (seen, false);
            } else {
                break;
            }
            if cut {
                return Explanation::Ambiguous {
                    plies,
                    sequences: found.into_iter().map(|s| s.moves).collect(),
                    exhaustive: false,
                    unread_tail: false,
                };
            }
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
                if let Some(deeper) = deeper.search(&whole, depths, true) {
                    return deeper;
                }
            }
            // So does one that answers a move while the board read its piece standing
            // elsewhere (see `Deeper::landed_early`), for one in turn.
            let early: Vec<bool> = found
                .iter()
                .map(|s| whole(s) && deeper.landed_early(s))
                .collect();
            if found
                .iter()
                .zip(&early)
                .any(|(s, &early)| whole(s) && !early)
            {
                let mut early = early.into_iter();
                found.retain(|_| !early.next().unwrap_or(false));
            } else if let Some(in_turn) = deeper.search_in_turn((plies + 1)..=max_plies) {
                return in_turn;
            }
            // After lost updates, moves that never show a piece read standing since the
            // board was read whole where it stood, or never pass through the position
            // the fresh read is a snapshot of, are not the moves made: those are more
            // than the search reaches. Reported, not recorded.
            if let Some(since) = SinceLost::new(start, &codes, target, evidence, skip_first) {
                if !found.iter().any(|s| whole(s) && since.fits(s)) {
                    return reported(found, plies);
                }
                found.retain(|s| !whole(s) || since.fits(s));
                // Of those, the ones the readings since the fresh read go forward in,
                // if any (see `FreshRead::forward`).
                if found.iter().any(|s| whole(s) && since.forward(s)) {
                    found.retain(|s| !whole(s) || since.forward(s));
                }
            }
            return choose(found, plies);
        }
        if weak.is_none() {
            overlooks = found
                .iter()
                .all(|s| !s.ordered || !readings_explained(start, &codes, &s.moves, &evidence));
            weak = Some((found, plies));
        } else if !overlooks {
            break;
        }
    }
    match (weak, strained) {
        (Some((found, plies)), _) if weak_cut => reported(found, plies),
        (Some((found, plies)), _) => {
            // The same holds of a weak explanation: a deeper one, as weak, that shows such
            // a piece where it stood beats it; as does one as long, when the search
            // stopped collecting them (a piece away and back fits in many ways). So does
            // one in the order of the lifts, when no weak one is.
            if !occupancy_only {
                let capped = found.len() >= MAX_COUNTED;
                let depths = (plies + usize::from(!capped))..=max_plies;
                let deeper = Deeper::new(start, &codes, target, evidence, skip_first);
                let shorter: Vec<&Sequence> = found.iter().collect();
                if let Some(deeper) = deeper.search(&shorter, depths, false) {
                    return deeper;
                }
                // None found, and each weak one contradicts what the board read (a piece
                // standing where none of its positions has it: the moves made are more than
                // the search reaches). They are reported, not recorded. (After lost
                // updates, only what was read since the board was read whole counts.)
                let overlooked = match SinceLost::new(start, &codes, target, evidence, skip_first) {
                    None => deeper.overlooked(&shorter),
                    Some(since) => !shorter.iter().any(|s| since.fits(s)),
                };
                if overlooked {
                    return reported(found, plies);
                }
            }
            choose(found, plies)
        }
        (None, Some((found, plies))) => choose(found, plies),
        (None, None) => Explanation::Nothing,
    }
}

/// Explanations that contradict what the board read: the moves made are more than the
/// search reaches. Reported, never recorded.
fn reported(mut found: Vec<Sequence>, plies: usize) -> Explanation {
    prefer(&mut found);
    Explanation::Ambiguous {
        plies,
        sequences: found.into_iter().map(|s| s.moves).collect(),
        exhaustive: false,
        unread_tail: false,
    }
}

/// For a board that reads pieces and that no sequence of at most `max_plies` moves from
/// `start` explains: the complete explanations of the fewest moves up to [`READ_PLIES`]
/// beyond, among the moves the board read being made (see `Deeper::beyond`); `Nothing`
/// when there is none.
pub(crate) fn explain_beyond(
    start: &Chess,
    target: &Codes,
    evidence: Evidence<'_>,
    max_plies: usize,
) -> Explanation {
    let codes = from_board(start.board(), false);
    Deeper::new(start, &codes, target, evidence, None)
        .beyond(max_plies)
        .unwrap_or(Explanation::Nothing)
}

/// The complete explanations of `target` from `start` after which `turn` is to move, of
/// the fewest moves (at most `max_plies`) that give any, preferred as by `choose`; and
/// whether they are every such explanation (the search was not cut). For a board read
/// after lost updates whose side to move the moves read since showed to be the other:
/// only explanations of the other parity can be the moves made.
pub(crate) fn explain_to_move(
    start: &Chess,
    target: &Codes,
    evidence: Evidence<'_>,
    occupancy_only: bool,
    max_plies: usize,
    turn: Color,
) -> (Vec<Vec<Move>>, bool) {
    let codes = from_board(start.board(), occupancy_only);
    let mut nodes = 0;
    let fewest = if start.turn() == turn { 2 } else { 1 };
    for plies in (fewest..=max_plies).step_by(2) {
        let mut found = Vec::new();
        let mut path = Vec::with_capacity(plies);
        Search::new(target, evidence, occupancy_only, &mut found, &mut nodes)
            .dfs(start, &codes, plies, &mut path);
        let exhaustive = found.len() < MAX_COUNTED && nodes < MAX_NODES;
        found.retain(|s| s.complete);
        if !found.is_empty() || !exhaustive {
            prefer(&mut found);
            return (found.into_iter().map(|s| s.moves).collect(), exhaustive);
        }
    }
    (Vec::new(), true)
}

/// The explanations of `target` that start with `hypothesis` (moves from `start` that
/// explained an earlier board, legal one after the other: see `CheckedLines`) and add
/// at most `extra` moves, the fewest that do, preferred as by `choose`.
/// On an occupancy-only board, when each of the fewest leaves a move in progress begun
/// before its last move was read landing, the complete ones one move longer come
/// next to them, as `explain` reports them (`choose_between`). With `held` (the board
/// read unchanged for the hold window), a move in progress is a piece put down: the
/// complete ones one move longer are kept aside (`Extensions::put_down`). Also whether
/// they are every such explanation (the search was not cut).
pub(crate) fn extend(
    start: &Chess,
    target: &Codes,
    evidence: Evidence<'_>,
    occupancy_only: bool,
    hypothesis: &[Move],
    extra: usize,
    held: bool,
) -> (Extensions, bool) {
    let codes = from_board(start.board(), occupancy_only);
    let mut nodes = 0;
    let deepest = hypothesis.len() + extra;
    let line = played_along(start, &codes, hypothesis, occupancy_only);
    let mut strained: Vec<Sequence> = Vec::new();
    let mut in_hand: Vec<Sequence> = Vec::new();
    for plies in hypothesis.len().max(1)..=deepest {
        let mut found = Vec::new();
        let mut path = Vec::with_capacity(plies);
        let mut search = Search {
            hypothesis,
            line: &line,
            ..Search::new(target, evidence, occupancy_only, &mut found, &mut nodes)
        };
        search.dfs(start, &codes, plies, &mut path);
        if nodes >= MAX_NODES {
            if !in_hand.is_empty() {
                return Extensions::preferred(in_hand, Vec::new());
            }
            return (Extensions::default(), false);
        }
        if occupancy_only {
            queens_promoted(&mut found);
        }
        if !strained.is_empty() {
            found.retain(|s| s.complete);
            return Extensions::preferred(strained, found);
        }
        if !in_hand.is_empty() {
            // Counted before the moves in progress are dropped: at the cap, complete ones
            // the search did not collect may be missing.
            let exhaustive = found.len() < MAX_COUNTED;
            found.retain(|s| s.complete);
            prefer(&mut found);
            let (extensions, all) = Extensions::preferred(in_hand, Vec::new());
            let put_down = Extensions {
                put_down: found,
                ..extensions
            };
            return (put_down, all && exhaustive);
        }
        let in_progress = !found.is_empty() && found.iter().all(|s| !s.complete);
        if occupancy_only && plies < deepest && in_progress {
            if held {
                in_hand = found;
                continue;
            }
            if found.iter().all(|s| !s.settled) {
                strained = found;
                continue;
            }
        }
        if !found.is_empty() {
            return Extensions::preferred(found, Vec::new());
        }
    }
    Extensions::preferred(strained, Vec::new())
}

/// What `extend` found for one hypothesis or more: the preferred of the fewest moves
/// (`shallow`), and those one move longer beside them (`deeper`, see `extend`).
#[derive(Default)]
pub(crate) struct Extensions {
    shallow: Vec<Sequence>,
    deeper: Vec<Sequence>,
    /// With the board read unchanged for the hold window, the complete ones one move
    /// longer than those of `shallow` that leave a piece in the hand (see `extend`).
    put_down: Vec<Sequence>,
}

impl Extensions {
    /// The preferred of `shallow` and of `deeper`, and whether the search collected
    /// every one (it stops collecting at a cap).
    fn preferred(mut shallow: Vec<Sequence>, mut deeper: Vec<Sequence>) -> (Self, bool) {
        let exhaustive = shallow.len() < MAX_COUNTED && deeper.len() < MAX_COUNTED;
        prefer(&mut shallow);
        prefer(&mut deeper);
        let put_down = Vec::new();
        (
            Self {
                shallow,
                deeper,
                put_down,
            },
            exhaustive,
        )
    }

    /// Adds those of `other` whose moves (and whether a move in progress was read under
    /// way, see `Sequence::tail_read`) `keep` accepts.
    pub(crate) fn add(&mut self, other: Extensions, keep: impl Fn(&[Move], bool) -> bool) {
        let kept = |s: &Sequence| keep(&s.moves, s.tail_read);
        self.shallow.extend(other.shallow.into_iter().filter(kept));
        self.deeper.extend(other.deeper.into_iter().filter(kept));
        self.put_down
            .extend(other.put_down.into_iter().filter(kept));
    }

    /// Their moves, each once (hypotheses of different lengths grow into the same
    /// sequence: counted twice, they would fill the cap on what is collected). On an
    /// occupancy-only board, when every one shows the board at rest (complete), only
    /// those with the fewest captures nobody saw landing (see `Sequence::unseen`), as
    /// `choose` keeps them of one search: each hypothesis starts a search the ambiguity
    /// left open, and a reading one extension explains (a capture's square read emptied
    /// and filled again) another leaves as noise. Not on a board that reads pieces,
    /// where `unseen` asks whether every square a sequence changes was seen to change
    /// since the ambiguity began: a square the moves after it changed counts for a
    /// hypothesis that passed there unread long before (Bf4 g5 Bg3 or Bh4 g5 Bg3, then
    /// ...f4 eighteen plies on: no evidence for Bf4). (A move in progress leaves a board
    /// that fits a quiet move the reply's landing seems to show; the order of the
    /// lifts, over the many moves a carried ambiguity grows, tells them apart no
    /// better than chance.) Pieces held in the hand for the hold window were put down:
    /// when one hypothesis or more grow one move longer to show the board at rest (a
    /// capture, swapped within a scan or read), those sequences replace every one that
    /// leaves a piece in the hand, all of them kept (the hypotheses count the captures
    /// before it each their own way). On an occupancy-only board, a promotion to
    /// another piece gives way to its twin making a queen from another hypothesis too
    /// (see `queens_promoted`).
    pub(crate) fn into_moves(self, occupancy_only: bool) -> Vec<Vec<Move>> {
        let Self {
            mut shallow,
            mut deeper,
            put_down,
        } = self;
        let held = !put_down.is_empty();
        if held {
            shallow.retain(|s| s.complete);
            deeper.retain(|s| s.complete);
            shallow.extend(put_down);
        }
        if occupancy_only {
            queens_promoted(&mut shallow);
            queens_promoted(&mut deeper);
        }
        let all = || shallow.iter().chain(&deeper);
        if !held
            && occupancy_only
            && all().all(|s| s.complete)
            && let Some(least) = all().map(|s| s.unseen).min()
        {
            shallow.retain(|s| s.unseen == least);
            deeper.retain(|s| s.unseen == least);
        }
        let mut moves: Vec<Vec<Move>> = Vec::new();
        for s in shallow.into_iter().chain(deeper) {
            if !moves.contains(&s.moves) {
                moves.push(s.moves);
            }
        }
        moves
    }
}
