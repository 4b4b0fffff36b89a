//! Unit tests of the proof that nothing explains a board (`none`).

use shakmaty::{Square, san::San};

use super::tests::{NO_ORDER, evidence, position, run};
use super::*;

fn played(pos: &Chess, sans: &[&str]) -> Chess {
    let mut pos = pos.clone();
    for san in sans {
        let mv = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(mv);
    }
    pos
}

/// Whether the proof, from `first` moves to four, holds that nothing explains `target`.
fn proven(start: &Chess, target: &Codes, first: usize) -> bool {
    let history = History::default();
    let evidence = evidence(&NO_ORDER, Bitboard::FULL, &history);
    let codes = from_board(start.board(), false);
    // Unbounded: what it proves, not where it gives up.
    let mut budget = usize::MAX;
    Search::new(target, evidence, false, &mut Vec::new(), &mut 0).none_explain(
        start,
        &codes,
        first,
        4,
        &mut budget,
    )
}

fn explained(start: &Chess, target: &Codes) -> Explanation {
    run(start, target, &NO_ORDER)
}

#[test]
fn a_king_read_beyond_its_sides_moves_is_proven_unexplained() {
    // Black's king read on g8 (its rook already on f8, f7 its pawn's) and White's rook
    // in the hand: two black moves never take the king there. The search used to visit
    // its whole node budget to say so.
    let start = position("r2qkr2/1p1n1pp1/2p2bp1/1P1p4/3P4/2N1P3/4NPPP/R2Q1RK1 w q - 1 16");
    let mut target = from_board(start.board(), false);
    target[Square::F1.to_usize()] = EMPTY;
    target[Square::E8.to_usize()] = EMPTY;
    target[Square::G8.to_usize()] = target_king(Color::Black);
    assert!(proven(&start, &target, 3));
    assert!(proven(&start, &target, 1));
    assert_eq!(explained(&start, &target), Explanation::Nothing);
}

fn target_king(color: Color) -> u8 {
    super::super::codes::piece_code(shakmaty::Role::King.of(color))
}

#[test]
fn boards_the_search_explains_are_never_proven_unexplained() {
    let start = Chess::default();
    let lines: [&[&str]; 5] = [
        &["e4", "e5", "Ke2", "Ke7"],
        &["e4", "e5", "Ke2"],
        &["e4", "f5", "Ke2", "Kf7"],
        &["Nf3", "Nf6", "g3", "g6"],
        &["e4", "e5", "Qh5", "Ke7"],
    ];
    for sans in lines {
        let target = from_board(played(&start, sans).board(), false);
        assert_ne!(explained(&start, &target), Explanation::Nothing, "{sans:?}");
        assert!(!proven(&start, &target, 1), "{sans:?}");
    }
    // A king placed by the move in progress: castling with the king on g1, its rook
    // still on h1; and the king lifted, on its way.
    let start = position("rnbqk2r/pppp1ppp/5n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 5 4");
    let mut target = from_board(played(&start, &["d6", "d3", "Bg4"]).board(), false);
    target[Square::E1.to_usize()] = EMPTY;
    target[Square::G1.to_usize()] = target_king(Color::White);
    assert_ne!(explained(&start, &target), Explanation::Nothing);
    assert!(!proven(&start, &target, 1));
    let mut target = from_board(played(&start, &["d6", "Ke2", "Bg4"]).board(), false);
    target[Square::E2.to_usize()] = EMPTY;
    target[Square::D3.to_usize()] = EMPTY;
    assert!(!proven(&start, &target, 1));
}
