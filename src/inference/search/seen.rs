//! A search cut at its node budget, done again over the moves on squares seen to change:
//! the explanations the board shows whole are few, and when one of them is preferred
//! over every other, the sequences the cut search never reached cannot change that.

use shakmaty::{Chess, Move};

use super::choice::prefer;
use super::deeper::Deeper;
use super::dfs::Search;
use super::{Evidence, MAX_COUNTED, MAX_NODES, Sequence};
use crate::inference::codes::Codes;

/// The explanations of `plies` moves (none shorter exists) among moves whose squares
/// were all seen to change (but where a pawn taken within a scan may have stood, see
/// `Search::within`), when that search ends before its budget and the
/// one it prefers is complete, seen whole and shows each piece it moves and captures
/// where it was captured, and one of them shows each piece the board read standing
/// (see `Deeper::shown`). Every explanation the full search could add changes a square
/// never seen to change, and `prefer` ranks each such one below these; so they are what
/// the full search would have kept. `None` otherwise: the cut search's explanations
/// stay reported.
pub(super) fn seen_whole(
    start: &Chess,
    codes: &Codes,
    target: &Codes,
    evidence: Evidence<'_>,
    skip_first: Option<Move>,
    plies: usize,
) -> Option<Vec<Sequence>> {
    let mut found = Vec::new();
    let mut nodes = 0;
    let mut path = Vec::with_capacity(plies);
    let mut search = Search {
        skip_first,
        collect_whole: true,
        within: Some(evidence.seen),
        ..Search::new(target, evidence, false, &mut found, &mut nodes)
    };
    search.dfs(start, codes, plies, &mut path);
    if nodes >= MAX_NODES || found.len() >= MAX_COUNTED {
        return None;
    }
    let mut best = found.clone();
    prefer(&mut best);
    let first = best.first()?;
    if !(first.complete && first.captures_seen && first.visible()) {
        return None;
    }
    let deeper = Deeper::new(start, codes, target, evidence, skip_first);
    found
        .iter()
        .any(|s| s.complete && s.visible() && deeper.shown(s))
        .then_some(found)
}
