//! Unit tests of the deeper search's evidence: moves answered in turn.

use std::time::Duration;

use shakmaty::fen::Fen;
use shakmaty::{Bitboard, CastlingMode, Chess, Position, Square};

use super::deeper::Deeper;
use super::tests::{NO_ORDER, after, after_moves, evidence};
use super::{Evidence, Sequence, from_board};
use crate::inference::codes::EMPTY;
use crate::inference::history::History;

/// 52... Kf6 53. b4 Kg6 at 220 ms scans: the king lifted, put down on f6 (read once as
/// a queen), b4 landing as it stands there, then the king lifted again and put on g6;
/// `via_f6` false: the king in the hand until it lands on g6.
fn readings(via_f6: bool) -> History {
    let (king, queen, pawn) = (11, 12, 1);
    let mut changes = vec![
        (0, Square::G7, EMPTY, king),
        (660, Square::B2, EMPTY, pawn),
        (880, Square::B4, pawn, EMPTY),
        (1_980, Square::G6, king, EMPTY),
    ];
    if via_f6 {
        changes.extend([
            (660, Square::F6, queen, EMPTY),
            (880, Square::F6, king, queen),
            (1_100, Square::F6, EMPTY, king),
        ]);
    }
    changes.sort_by_key(|c| c.0);
    History::from_readings(&changes)
}

fn sequence(start: &Chess, sans: &[&str]) -> Sequence {
    let moves = after_moves(start, sans);
    Sequence {
        moves,
        complete: true,
        unseen: 0,
        ordered: true,
        promotions_seen: true,
        captures_seen: true,
        settled: true,
        unseen_capture: false,
        tail_read: true,
    }
}

#[test]
fn a_reply_landing_while_the_piece_stood_elsewhere_answers_the_move_there() {
    let fen: Fen = "8/6k1/8/7R/5p2/5P2/1P3P1K/5b2 b - - 0 52"
        .parse()
        .expect("fen");
    let start: Chess = fen.into_position(CastlingMode::Standard).expect("position");
    let codes = from_board(start.board(), false);
    let target = from_board(after(&start, &["Kg6", "b4"]).board(), false);
    for via_f6 in [true, false] {
        let history = readings(via_f6);
        let evidence = evidence(&NO_ORDER, Bitboard::FULL, &history);
        let deeper = Deeper::new(&start, &codes, &target, evidence, None);
        // b4 landed while the king stood on f6: not an answer to Kg6.
        assert_eq!(
            deeper.landed_early(&sequence(&start, &["Kg6", "b4"])),
            via_f6
        );
        assert!(!deeper.landed_early(&sequence(&start, &["Kf6", "b4", "Kg6"])));
    }
    // b4 first read landing by a fresh read after lost updates: no order is known.
    let history = readings(true);
    let evidence = Evidence {
        lost: Some(Duration::from_millis(880)),
        ..evidence(&NO_ORDER, Bitboard::FULL, &history)
    };
    let deeper = Deeper::new(&start, &codes, &target, evidence, None);
    assert!(!deeper.landed_early(&sequence(&start, &["Kg6", "b4"])));
}
