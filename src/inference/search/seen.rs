//! A search cut at its node budget, done again over the moves on squares seen to change:
//! the explanations the board shows whole are few, and when one of them is preferred
//! over every other, the sequences the cut search never reached cannot change that.

use shakmaty::{Chess, Move, Position};

use super::choice::prefer;
use super::deeper::Deeper;
use super::dfs::Search;
use super::{Evidence, MAX_COUNTED, MAX_NODES, Sequence};
use crate::inference::codes::{Codes, from_board};

/// What the moves on squares seen to change show of a depth whose full search was cut.
pub(super) enum SeenWhole {
    /// Their explanations, which the full search would have kept (see `seen_whole`).
    Kept(Vec<Sequence>),
    /// None of them explains the board whole, so no sequence of that depth does: one
    /// that did would change only squares seen to change.
    None,
    /// Neither is known: the cut search's explanations stay reported.
    Unknown,
}

/// The explanations of `plies` moves (none shorter exists but a weak one, see `explain`)
/// among moves whose squares were all seen to change (but where a pawn taken within a scan
/// may have stood, see `Search::within`), when that search ends before its budget and the
/// one it prefers is complete, seen whole and shows each piece it moves and captures where
/// it was captured, and one of them shows each piece the board read standing (see
/// `Deeper::shown`). Every explanation the full search could add changes a square never
/// seen to change, and `prefer` ranks each such one below these; so they are what the full
/// search would have kept. Else whether none of them is complete and seen whole.
pub(super) fn seen_whole(
    start: &Chess,
    codes: &Codes,
    target: &Codes,
    evidence: Evidence<'_>,
    skip_first: Option<Move>,
    plies: usize,
) -> SeenWhole {
    let Some(found) = within_seen(start, codes, target, evidence, skip_first, plies, &mut 0) else {
        return SeenWhole::Unknown;
    };
    if !found.iter().any(|s| s.complete && s.visible()) {
        return SeenWhole::None;
    }
    let mut best = found.clone();
    prefer(&mut best);
    let preferred = best
        .first()
        .is_some_and(|first| first.complete && first.captures_seen && first.visible());
    let deeper = Deeper::new(start, codes, target, evidence, skip_first);
    match preferred
        && found
            .iter()
            .any(|s| s.complete && s.visible() && deeper.shown(s))
    {
        true => SeenWhole::Kept(found),
        false => SeenWhole::Unknown,
    }
}

/// The one sequence of moves from `start` back to it (the board shows `start` again) that
/// the readings since prove, among those `fits` accepts: of the fewest moves on squares
/// seen to change that lead back complete (the board at rest shows no move in progress: Qe2
/// Re4 Qxe4 with the rook in the hand is none) and show each piece the board read standing
/// (see `Deeper::shown`), the only one preferred, every square it changes seen to change,
/// and begun in the order the pieces were read lifted. A round trip on squares never seen
/// to change was not made; several the readings fit alike are not told apart. (After lost
/// updates every square counts as seen, a fresh read showing no change it hid: the pieces
/// read standing tell the round trips apart, as the king read on h3 in the dump, then Nf3
/// Kg2 Ne1+ read: Kh3 first, not Kf1 or Kg1.) `None` on a board that senses occupancy only
/// (a piece put back where another stood reads the same), or when the search is cut.
pub(crate) fn round_trip(
    start: &Chess,
    evidence: Evidence<'_>,
    occupancy_only: bool,
    max_plies: usize,
    fits: impl Fn(&[Move]) -> bool,
) -> Option<Vec<Move>> {
    if occupancy_only {
        return None;
    }
    let codes = from_board(start.board(), false);
    let deeper = Deeper::new(start, &codes, &codes, evidence, None);
    let mut nodes = 0;
    for plies in 1..=max_plies {
        let mut found = within_seen(start, &codes, &codes, evidence, None, plies, &mut nodes)?;
        found.retain(|s| s.complete && fits(&s.moves) && deeper.shown(s));
        if found.is_empty() {
            continue;
        }
        prefer(&mut found);
        return match &found[..] {
            [only] if only.visible() && only.ordered && only.captures_seen => {
                Some(only.moves.clone())
            }
            _ => None,
        };
    }
    None
}

/// The sequences of `plies` moves from `start` to `target` on squares seen to change
/// (see `Search::within`), every whole one collected; `None` when the search is cut (the
/// node budget, counted on across calls in `nodes`, spent, or as many as it keeps found).
fn within_seen(
    start: &Chess,
    codes: &Codes,
    target: &Codes,
    evidence: Evidence<'_>,
    skip_first: Option<Move>,
    plies: usize,
    nodes: &mut usize,
) -> Option<Vec<Sequence>> {
    let mut found = Vec::new();
    let mut path = Vec::with_capacity(plies);
    let mut search = Search {
        skip_first,
        collect_best: true,
        within: Some(evidence.seen),
        ..Search::new(target, evidence, false, &mut found, nodes)
    };
    search.dfs(start, codes, plies, &mut path);
    (*nodes < MAX_NODES && found.len() < MAX_COUNTED).then_some(found)
}
