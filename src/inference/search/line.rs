//! A hypothesis's moves played once, for every depth a search of its extensions tries.
//!
//! An ambiguity carried across the moves that follow (see `extend`) grows by every move
//! made until someone decides it: each search of its extensions walks the whole
//! hypothesis again at each depth, and checking, playing and applying each move there
//! was most of the work of a long game's searches.

use shakmaty::{Chess, Move, Position};

use super::bounds::{Counts, board_counts, counts_after};
use crate::inference::codes::{Codes, Effect, move_effect, piece_code};

/// The position after a move of the hypothesis, and what the search keeps of it.
pub(super) struct Played {
    pub pos: Chess,
    pub codes: Codes,
    pub counts: Counts,
    /// What the move did to the board before it.
    pub effect: Effect,
    /// The code of the piece it placed on its destination.
    pub code: u8,
}

/// The positions after each move of a hypothesis from its start, as long as its moves
/// are legal one after the other: the search tries the hypothesis's move at a position
/// exactly when there is one after it here.
pub(super) fn played_along(
    start: &Chess,
    codes: &Codes,
    hypothesis: &[Move],
    occupancy_only: bool,
) -> Vec<Played> {
    let mut line: Vec<Played> = Vec::with_capacity(hypothesis.len());
    for &mv in hypothesis {
        let before = line.last().map_or(start, |p| &p.pos);
        if !before.is_legal(mv) {
            break;
        }
        let turn = before.turn();
        let effect = move_effect(mv, turn, occupancy_only);
        let (mut codes, counts) = match line.last() {
            Some(p) => (p.codes, p.counts),
            None => (*codes, board_counts(start.board())),
        };
        effect.apply(&mut codes);
        let mut pos = before.clone();
        pos.play_unchecked(mv);
        line.push(Played {
            pos,
            codes,
            counts: counts_after(counts, mv, turn),
            effect,
            code: piece_code(mv.promotion().unwrap_or(mv.role()).of(turn)),
        });
    }
    line
}

#[cfg(test)]
mod tests {
    use shakmaty::{Bitboard, Chess, Position};

    use super::super::bounds::board_counts;
    use super::super::dfs::Search;
    use super::super::tests::{NO_ORDER, after_moves, evidence};
    use super::played_along;
    use crate::inference::codes::{EMPTY, diff, from_board};
    use crate::inference::history::History;

    /// The Opera Game (Morphy, Paris 1858): captures, castling long, mate.
    const OPERA: [&str; 33] = [
        "e4", "e5", "Nf3", "d6", "d4", "Bg4", "dxe5", "Bxf3", "Qxf3", "dxe5", "Bc4", "Nf6", "Qb3",
        "Qe7", "Nc3", "c6", "Bg5", "b5", "Nxb5", "cxb5", "Bxb5+", "Nbd7", "O-O-O", "Rd8", "Rxd7",
        "Rxd7", "Rd1", "Qe6", "Bxd7+", "Nxd7", "Qb8+", "Nxb8", "Rd8#",
    ];

    /// The boards along the game, and each with the next move's piece in the hand.
    fn targets(moves: &[shakmaty::Move]) -> Vec<crate::inference::codes::Codes> {
        let mut pos = Chess::default();
        let mut boards = vec![from_board(pos.board(), false)];
        for &mv in moves {
            let mut lifted = from_board(pos.board(), false);
            if let Some(from) = mv.from() {
                lifted[from.to_usize()] = EMPTY;
            }
            boards.push(lifted);
            pos.play_unchecked(mv);
            boards.push(from_board(pos.board(), false));
        }
        boards
    }

    /// The search's bounds only tighten along a line of legal moves: what the search
    /// skipping a hypothesis's positions relies on (see `Search::skip_along_line`).
    #[test]
    fn the_bounds_only_tighten_along_a_line() {
        let moves = after_moves(&Chess::default(), &OPERA);
        let history = History::default();
        let evidence = evidence(&NO_ORDER, Bitboard::FULL, &history);
        let line = played_along(
            &Chess::default(),
            &from_board(Chess::default().board(), false),
            &moves,
            false,
        );
        assert_eq!(line.len(), moves.len());
        let start = Chess::default();
        let start_codes = from_board(start.board(), false);
        let start_counts = board_counts(start.board());
        let at = |k: usize| match k {
            0 => (&start, &start_codes, &start_counts),
            _ => (&line[k - 1].pos, &line[k - 1].codes, &line[k - 1].counts),
        };
        let (mut found, mut nodes) = (Vec::new(), 0);
        let mut tightened = 0;
        for target in targets(&moves) {
            let search = Search::new(&target, evidence, false, &mut found, &mut nodes);
            let fails = |k: usize, remaining: usize| {
                let (pos, codes, counts) = at(k);
                let changed = diff(codes, &target);
                !search.within_reach(pos, changed, remaining)
                    || !search.reachable(pos, codes, changed, remaining, counts)
            };
            for k in 0..moves.len() {
                for remaining in 2..=8 {
                    if fails(k, remaining) {
                        tightened += 1;
                        assert!(fails(k + 1, remaining - 1), "ply {k}, {remaining} left");
                    }
                }
            }
        }
        // Not vacuous: most of those positions are far from most of those boards.
        assert!(tightened > 1000, "{tightened}");
    }

    /// A search skipping a hypothesis's positions finds what walking them finds, and
    /// counts as many positions visited.
    #[test]
    fn skipping_a_hypothesis_finds_and_counts_as_walking_it() {
        let moves = after_moves(&Chess::default(), &OPERA);
        let start = Chess::default();
        let codes = from_board(start.board(), false);
        let history = History::default();
        let evidence = evidence(&NO_ORDER, Bitboard::FULL, &history);
        let mut skipped = 0;
        for hypothesis in [&moves[..12], &moves[..21], &moves[..2]] {
            let line = played_along(&start, &codes, hypothesis, false);
            for target in targets(&moves) {
                for plies in hypothesis.len()..=hypothesis.len() + 3 {
                    let run = |walk: bool| {
                        let (mut found, mut nodes) = (Vec::new(), 0);
                        let mut path = Vec::new();
                        Search {
                            hypothesis,
                            line: &line,
                            // A restriction to the whole board changes nothing but
                            // keeps the search from skipping.
                            within: walk.then_some(Bitboard::FULL),
                            ..Search::new(&target, evidence, false, &mut found, &mut nodes)
                        }
                        .dfs(&start, &codes, plies, &mut path);
                        let found: Vec<_> = found
                            .iter()
                            .map(|s| (s.moves.clone(), s.complete))
                            .collect();
                        (found, nodes)
                    };
                    let (skipping, walking) = (run(false), run(true));
                    assert_eq!(skipping, walking, "{} plies", plies);
                    skipped += usize::from(!skipping.0.is_empty());
                }
            }
        }
        assert!(skipped > 10, "{skipped}");
    }
}
