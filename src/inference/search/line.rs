//! A hypothesis's moves played once, for every depth a search of its extensions tries.
//!
//! An ambiguity carried across the moves that follow (see `extend`) grows by every move
//! made until someone decides it: each search of its extensions walks the whole
//! hypothesis again at each depth, and checking, playing and applying each move there
//! was most of the work of a long game's searches.

use shakmaty::{Chess, Move, Position};

use super::bounds::{Counts, board_counts, counts_after};
use crate::inference::codes::{Codes, Effect, move_effect, piece_code};

/// Hypotheses checked legal one move after another from their start, kept for the next
/// board. An ambiguity carried across the moves that follow is extended at every board,
/// and its hypotheses grow by the moves made: checking every move of each again, from
/// the same start, was most of the work of playing them along.
#[derive(Clone, Debug, Default)]
pub(crate) struct CheckedLines {
    start: Option<Chess>,
    lines: Vec<Checked>,
}

/// A hypothesis checked, and the position it leads to when its moves are legal.
#[derive(Clone, Debug)]
struct Checked {
    moves: Vec<Move>,
    end: Option<Chess>,
}

impl CheckedLines {
    /// Whether each of `hypotheses` (in their order) is legal one move after the other
    /// from `start`. Only the moves after the longest hypothesis checked last time that
    /// one begins with are checked (at the same place in the list, else anywhere).
    pub(crate) fn legal(&mut self, start: &Chess, hypotheses: &[Vec<Move>]) -> Vec<bool> {
        if self.start.as_ref() != Some(start) {
            self.start = Some(start.clone());
            self.lines.clear();
        }
        let before = |moves: &[Move], c: &Checked| moves.starts_with(&c.moves);
        let lines: Vec<Checked> = hypotheses
            .iter()
            .enumerate()
            .map(|(i, moves)| {
                let prior = self.lines.get(i).filter(|c| before(moves, c)).or_else(|| {
                    let prefixes = self.lines.iter().filter(|c| before(moves, c));
                    prefixes.max_by_key(|c| c.moves.len())
                });
                let (done, from) = match prior {
                    Some(c) => (c.moves.len(), c.end.as_ref()),
                    None => (0, Some(start)),
                };
                Checked {
                    moves: moves.clone(),
                    end: from.and_then(|from| played_legally(from, &moves[done..])),
                }
            })
            .collect();
        let legal = lines.iter().map(|c| c.end.is_some()).collect();
        self.lines = lines;
        legal
    }
}

/// The position after `moves` from `start`, if they are legal one after the other.
fn played_legally(start: &Chess, moves: &[Move]) -> Option<Chess> {
    let mut pos = start.clone();
    for &mv in moves {
        if !pos.is_legal(mv) {
            return None;
        }
        pos.play_unchecked(mv);
    }
    Some(pos)
}

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

/// The positions after each move of a hypothesis from its start, its moves legal one
/// after the other (see `CheckedLines`).
pub(super) fn played_along(
    start: &Chess,
    codes: &Codes,
    hypothesis: &[Move],
    occupancy_only: bool,
) -> Vec<Played> {
    let mut line: Vec<Played> = Vec::with_capacity(hypothesis.len());
    for &mv in hypothesis {
        let before = line.last().map_or(start, |p| &p.pos);
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
    use super::{CheckedLines, played_along, played_legally};
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

    /// Hypotheses checked on from those checked at the board before are as legal as
    /// checked afresh: grown, turned illegal, grown past an illegal move, in another
    /// order, and from another start.
    #[test]
    fn hypotheses_checked_on_are_as_legal_as_checked_afresh() {
        let game = after_moves(&Chess::default(), &OPERA);
        // White's dxe5 where Black is to move (after e4 e5 Nf3).
        let wrong = [&game[..3], &[game[6]]].concat();
        let past_wrong = [&wrong[..], &game[3..5]].concat();
        let mut after_e4 = Chess::default();
        after_e4.play_unchecked(game[0]);
        let start = Chess::default();
        // Each board's start, hypotheses, and which of them are legal. (Black's e5 first
        // is illegal from the start, and so is any move after it.)
        let boards = [
            (
                &start,
                vec![game[..3].to_vec(), game[..1].to_vec()],
                [true, true].as_slice(),
            ),
            (
                &start,
                vec![
                    game[..5].to_vec(),
                    wrong.clone(),
                    game[..2].to_vec(),
                    vec![game[1]],
                ],
                &[true, false, true, false],
            ),
            (
                &start,
                vec![game[..9].to_vec(), past_wrong, vec![game[1], game[0]]],
                &[true, false, false],
            ),
            (
                &after_e4,
                vec![game[..10].to_vec(), game[1..6].to_vec()],
                &[false, true],
            ),
            (&after_e4, vec![game[1..12].to_vec(), wrong], &[true, false]),
        ];
        let mut checked = CheckedLines::default();
        for (start, hypotheses, legal) in &boards {
            let afresh: Vec<bool> = hypotheses
                .iter()
                .map(|h| played_legally(start, h).is_some())
                .collect();
            assert_eq!(afresh, *legal, "{hypotheses:?}");
            assert_eq!(checked.legal(start, hypotheses), *legal, "{hypotheses:?}");
        }
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
