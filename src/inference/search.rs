//! Explaining a board by a short sequence of legal moves, for updates that were lost.

use shakmaty::{Chess, Color, Move, Position};

use super::codes::{Codes, EMPTY, after_move, code_piece, from_board};

/// Most explanations counted before the search gives up counting.
const MAX_COUNTED: usize = 16;
/// Positions visited before the search gives up, bounding the worst case (a board no
/// sequence explains, searched to the full depth) to a few milliseconds.
const MAX_NODES: usize = 200_000;

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Explanation {
    Nothing,
    Unique(Vec<Move>),
    /// `count` (at least, capped) sequences of `plies` moves explain the board.
    Ambiguous {
        plies: usize,
        count: usize,
    },
}

/// Looks for sequences of 2 to `max_plies` legal moves from `start` whose final board is
/// `target`, shortest first: the shortest explanation is the likeliest.
pub(crate) fn explain(
    start: &Chess,
    target: &Codes,
    occupancy_only: bool,
    max_plies: usize,
) -> Explanation {
    // Result pieces and unknown bytes are never the result of a move.
    if target
        .iter()
        .any(|&c| c != EMPTY && code_piece(c).is_none() && !occupancy_only)
    {
        return Explanation::Nothing;
    }
    let codes = from_board(start.board(), occupancy_only);
    let mut nodes = 0;
    for plies in 2..=max_plies {
        let mut found = Vec::new();
        let mut path = Vec::with_capacity(plies);
        let mut search = Search {
            target,
            occupancy_only,
            found: &mut found,
            nodes: &mut nodes,
        };
        search.dfs(start, &codes, plies, &mut path);
        if nodes >= MAX_NODES {
            return Explanation::Nothing;
        }
        match found.len() {
            0 => continue,
            1 => return Explanation::Unique(found.remove(0)),
            count => return Explanation::Ambiguous { plies, count },
        }
    }
    Explanation::Nothing
}

struct Search<'a> {
    target: &'a Codes,
    occupancy_only: bool,
    found: &'a mut Vec<Vec<Move>>,
    nodes: &'a mut usize,
}

impl Search<'_> {
    fn dfs(&mut self, pos: &Chess, codes: &Codes, remaining: usize, path: &mut Vec<Move>) {
        *self.nodes += 1;
        if self.found.len() >= MAX_COUNTED || *self.nodes >= MAX_NODES {
            return;
        }
        if remaining == 0 {
            if codes == self.target {
                self.found.push(path.clone());
            }
            return;
        }
        if !self.reachable(pos, codes, remaining) {
            return;
        }
        for mv in pos.legal_moves() {
            let (next_codes, _) = after_move(codes, mv, pos.turn(), self.occupancy_only);
            let mut next = pos.clone();
            next.play_unchecked(mv);
            path.push(mv);
            self.dfs(&next, &next_codes, remaining - 1, path);
            path.pop();
        }
    }

    /// A lower bound on the moves still needed: each move puts one piece on its final
    /// square (castling two), so a side with more target squares left to fill than it
    /// has moves (plus one for a possible castling) cannot reach the target.
    fn reachable(&self, pos: &Chess, codes: &Codes, remaining: usize) -> bool {
        let moves_of = |color: Color| {
            let mine = if color == pos.turn() {
                remaining.div_ceil(2)
            } else {
                remaining / 2
            };
            mine + usize::from(pos.castles().has_color(color))
        };
        if self.occupancy_only {
            let (mut fill, mut empty) = (0, 0);
            for (have, want) in codes.iter().zip(self.target.iter()) {
                fill += usize::from(*have == EMPTY && *want != EMPTY);
                empty += usize::from(*have != EMPTY && *want == EMPTY);
            }
            let castles = usize::from(pos.castles().any());
            return fill.max(empty) <= remaining + castles;
        }
        // Pieces only disappear by capture, one per move of the other side.
        let mut count = [[0usize; 2]; 2];
        for (i, board) in [codes, self.target].into_iter().enumerate() {
            for piece in board.iter().filter_map(|&c| code_piece(c)) {
                count[i][usize::from(piece.color.is_black())] += 1;
            }
        }
        for (color, side) in [(Color::White, 0), (Color::Black, 1)] {
            let captures = count[0][side].checked_sub(count[1][side]);
            if captures.is_none_or(|n| n > moves_of(!color)) {
                return false;
            }
        }
        let mut need = [0usize; 2];
        for (have, want) in codes.iter().zip(self.target.iter()) {
            if have != want
                && let Some(piece) = code_piece(*want)
            {
                need[usize::from(piece.color.is_black())] += 1;
            }
        }
        need[0] <= moves_of(Color::White) && need[1] <= moves_of(Color::Black)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{san::San, uci::UciMove};

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

    #[test]
    fn unique_two_and_three_ply_explanations() {
        let start = Chess::default();
        let target = from_board(after(&start, &["e4", "c5"]).board(), false);
        match explain(&start, &target, false, 4) {
            Explanation::Unique(m) => assert_eq!(ucis(&m), ["e2e4", "c7c5"]),
            other => panic!("{other:?}"),
        }
        // The queen can only leave after the pawn, so the order is forced.
        let target = from_board(after(&start, &["e4", "e5", "Qh5"]).board(), false);
        match explain(&start, &target, false, 4) {
            Explanation::Unique(m) => assert_eq!(ucis(&m), ["e2e4", "e7e5", "d1h5"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn transpositions_are_ambiguous() {
        let start = Chess::default();
        let target = from_board(after(&start, &["Nf3", "Nf6", "Nc3", "Nc6"]).board(), false);
        assert!(matches!(
            explain(&start, &target, false, 4),
            Explanation::Ambiguous { plies: 4, .. }
        ));
    }

    #[test]
    fn impossible_boards_end_the_search_quickly() {
        let start = Chess::default();
        let mut target = from_board(start.board(), false);
        target[shakmaty::Square::E2.to_usize()] = EMPTY;
        assert_eq!(explain(&start, &target, false, 4), Explanation::Nothing);
        target[shakmaty::Square::E4.to_usize()] = 99;
        assert_eq!(explain(&start, &target, false, 4), Explanation::Nothing);
    }

    #[test]
    fn too_distant_boards_are_not_explained() {
        let start = Chess::default();
        let target = from_board(
            after(&start, &["e4", "e5", "Nf3", "Nc6", "Bb5"]).board(),
            false,
        );
        assert_eq!(explain(&start, &target, false, 4), Explanation::Nothing);
    }
}
