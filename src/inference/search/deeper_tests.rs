//! Unit tests of the deeper search's evidence: moves answered in turn, pieces shown in the
//! order read, moves passing over squares.

use std::time::Duration;

use shakmaty::{Bitboard, Chess, Color, Position, Role, Square};

use super::deeper::{Deeper, codes_along, passes, stood_shown_in_order, with_unread_victims};
use super::tests::{NO_ORDER, after, after_moves, evidence, position};
use super::{Evidence, Sequence, from_board};
use crate::inference::codes::{EMPTY, piece_code};
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
        promotions_read: true,
        pawns_read: true,
        pawn_read_once: false,
        captures_seen: true,
        settled: true,
        unseen_capture: false,
        tail_read: true,
    }
}

#[test]
fn a_reply_landing_while_the_piece_stood_elsewhere_answers_the_move_there() {
    let start = position("8/6k1/8/7R/5p2/5P2/1P3P1K/5b2 b - - 0 52");
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

/// Black's Ra2, White's R1b2 and Black's Ra1 while the link was down; the board read
/// then (Ra1 R1b2, two plies for three) shows Black's rook on a1 and White's on b2, and
/// White's rook is read since standing on b1 for a second before it goes back to b2.
/// Ra1 R1b2 then Ra2 has the rook on b1 only before it was read on b2; White's Rb1 Ra2
/// R1b2 after the two plies has it there in the order read.
#[test]
fn pieces_read_standing_are_shown_in_the_order_read() {
    let start = position("6k1/5np1/rR5p/4p3/3p2P1/3K3P/8/1R6 b - - 0 38");
    let codes = from_board(start.board(), false);
    let (rook, black_rook) = (codes[Square::B1.to_usize()], codes[Square::A6.to_usize()]);
    let history = History::from_readings(&[
        (1_000, Square::A6, EMPTY, black_rook),
        (1_000, Square::A1, black_rook, EMPTY),
        (1_000, Square::B1, EMPTY, rook),
        (1_000, Square::B2, rook, EMPTY),
        (4_000, Square::B2, EMPTY, rook),
        (4_440, Square::B1, rook, EMPTY),
        (4_660, Square::A1, EMPTY, black_rook),
        (5_540, Square::A2, black_rook, EMPTY),
        (5_760, Square::B1, EMPTY, rook),
        (6_420, Square::B2, rook, EMPTY),
    ]);
    let window = (Duration::from_millis(1_000), Duration::from_millis(250));
    let recorded = after_moves(&start, &["Ra1", "R1b2"]);
    let own = after_moves(&start, &["Ra1", "R1b2", "Ra2"]);
    assert!(!stood_shown_in_order(
        &codes_along(&start, &codes, &own),
        &history,
        window
    ));
    let reached = after(&start, &["Ra1", "R1b2"]);
    let other = reached.clone().swap_turn().expect("White to move");
    let mut positions = codes_along(&start, &codes, &recorded);
    let last = *positions.last().expect("the dump's position");
    let line = after_moves(&other, &["Rb1", "Ra2", "R1b2"]);
    positions.extend(codes_along(&other, &last, &line).into_iter().skip(1));
    assert!(stood_shown_in_order(&positions, &history, window));
}

/// A move takes its piece over the squares between its own (a slide's steps), castling
/// both its king and its rook, a knight anywhere within its move's rectangle.
#[test]
fn a_move_passes_over_the_squares_on_its_way() {
    let start = position("4k3/8/8/8/8/8/8/RN2K2R w K - 0 1");
    let codes = from_board(start.board(), false);
    let code = |sq: Square| codes[sq.to_usize()];
    let (rook, knight, king) = (code(Square::A1), code(Square::B1), code(Square::E1));
    let [castle, knight_move, rook_move] = [
        after_moves(&start, &["O-O"])[0],
        after_moves(&start, &["Nc3"])[0],
        after_moves(&start, &["Ra4"])[0],
    ];
    assert!(passes(castle, &codes, Square::F1, king));
    assert!(passes(castle, &codes, Square::G1, rook));
    assert!(!passes(castle, &codes, Square::G1, king));
    assert!(passes(knight_move, &codes, Square::B2, knight));
    assert!(passes(knight_move, &codes, Square::C2, knight));
    assert!(!passes(knight_move, &codes, Square::A2, knight));
    assert!(passes(rook_move, &codes, Square::A3, rook));
    assert!(!passes(rook_move, &codes, Square::B2, rook));
    assert!(!passes(rook_move, &codes, Square::A3, knight));
}

/// Where the board read a piece, one of the other side may have landed and been taken
/// before a scan read it; a pawn so on its one step, or on its two taken en passant.
#[test]
fn a_piece_read_where_it_may_have_taken_one_unread() {
    let code = |role: Role, color: Color| piece_code(role.of(color));
    let bit = |role: Role, color: Color| 1u16 << code(role, color);
    let mut read = [0u16; 64];
    read[Square::E3.to_usize()] = bit(Role::Bishop, Color::White);
    read[Square::F6.to_usize()] = bit(Role::Pawn, Color::White);
    read[Square::D6.to_usize()] = bit(Role::Bishop, Color::White);
    read[Square::C3.to_usize()] = bit(Role::Pawn, Color::White) | bit(Role::Pawn, Color::Black);
    let widened = with_unread_victims(&read);
    let may_land =
        |sq: Square, role: Role, color: Color| widened[sq.to_usize()] & bit(role, color) != 0;
    // Any black piece may have landed on e3 and been taken there by the bishop read.
    assert!(may_land(Square::E3, Role::Knight, Color::Black));
    assert!(may_land(Square::E3, Role::Bishop, Color::White));
    assert!(!may_land(Square::E3, Role::Knight, Color::White));
    // A black pawn taken on f6 may as well have gone on to f5 and been taken en passant.
    assert!(may_land(Square::F6, Role::Pawn, Color::Black));
    assert!(may_land(Square::F5, Role::Pawn, Color::Black));
    assert!(!may_land(Square::F5, Role::Pawn, Color::White));
    // Not where a piece took it: only a pawn takes en passant.
    assert!(may_land(Square::D6, Role::Pawn, Color::Black));
    assert!(!may_land(Square::D5, Role::Pawn, Color::Black));
    // Where the pawn itself was read on its one step, that reading tells the step.
    assert!(!may_land(Square::C4, Role::Pawn, Color::White));
    // Squares where nothing was read stay empty.
    assert_eq!(widened[Square::A1.to_usize()], 0);
}
