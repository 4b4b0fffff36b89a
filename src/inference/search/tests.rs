//! Unit tests of the search: explanations of boards a few moves on.

use super::bounds::{board_counts, counts_after, piece_counts};
use super::*;
use shakmaty::{CastlingMode, Square, fen::Fen, san::San, uci::UciMove};

/// The position of `fen` (standard castling).
pub(super) fn position(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap()
}

pub(super) fn after(pos: &Chess, sans: &[&str]) -> Chess {
    let mut p = pos.clone();
    for mv in after_moves(pos, sans) {
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

pub(super) const NO_ORDER: Since = [None; 64];

/// Evidence read without gaps from time zero, scans 250 ms apart.
pub(super) fn evidence<'a>(since: &'a Since, seen: Bitboard, history: &'a History) -> Evidence<'a> {
    Evidence {
        since,
        seen,
        history,
        start: Duration::ZERO,
        readings: Duration::ZERO,
        scan: Duration::from_millis(250),
        lost: None,
        fresh: false,
        slack: Duration::ZERO,
    }
}

pub(super) fn run(start: &Chess, target: &Codes, since: &Since) -> Explanation {
    let history = History::default();
    let evidence = evidence(since, Bitboard::FULL, &history);
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
    let seen = Bitboard::from_iter([Square::E2, Square::E4, Square::E7, Square::E5, Square::G1]);
    match explain(
        &start,
        &target,
        evidence(&NO_ORDER, seen, &history),
        false,
        4,
        None,
    ) {
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
fn piece_counts_kept_along_moves_match_the_board() {
    // Captures, en passant and a promotion with capture, from both sides.
    let fen = "r3k3/1P6/8/3pP3/8/8/8/4K2R w Kq d6 0 1";
    let start: Chess = fen
        .parse::<shakmaty::fen::Fen>()
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap();
    for sans in [
        vec!["exd6"],
        vec!["bxa8=N", "Kd7"],
        vec!["O-O", "Kd7"],
        vec!["b8=Q", "Rxb8"],
    ] {
        let (mut pos, mut count) = (start.clone(), board_counts(start.board()));
        for mv in after_moves(&start, &sans) {
            count = counts_after(count, mv, pos.turn());
            pos.play_unchecked(mv);
            assert_eq!(count, board_counts(pos.board()), "{sans:?}");
        }
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

/// A middlegame position and the board three moves on (a knight's move, its capture,
/// the recapture): three plies of every legal move pass the search's node budget.
fn knight_exchange() -> (Chess, Codes) {
    let start = position("r3k2r/1pqn1ppp/p1pb1nb1/3pp1B1/P6N/1N1P2P1/1PPQPPBP/R4RK1 b kq - 0 11");
    let target = from_board(after(&start, &["Nc5", "Nxc5", "Bxc5"]).board(), false);
    (start, target)
}

/// A middlegame board three moves on (a knight's move, its capture, the recapture): the
/// search spends its budget at three moves after finding the one that explains it. What
/// it found is reported, not thrown away as nothing (the caller would then look for a
/// correction of the last move, and record one that was never played).
#[test]
fn a_search_cut_after_finding_explanations_reports_them() {
    let (start, target) = knight_exchange();
    match run(&start, &target, &NO_ORDER) {
        Explanation::Ambiguous {
            sequences,
            exhaustive: false,
            plies: 3,
            ..
        } => {
            let truth = ucis(&after_moves(&start, &["Nc5", "Nxc5", "Bxc5"]));
            assert!(sequences.iter().any(|s| ucis(s) == truth), "{sequences:?}");
        }
        other => panic!("{other:?}"),
    }
}

/// The changes read as the knight exchange was made: the knight read on c5 before its
/// capture, each capture swapped within a scan.
fn knight_exchange_read() -> History {
    use crate::inference::codes::piece_code;
    use crate::inference::history::Change;
    use shakmaty::{Color, Role};
    let ms = Duration::from_millis;
    let (knight, white_knight, bishop) = (
        piece_code(Role::Knight.of(Color::Black)),
        piece_code(Role::Knight.of(Color::White)),
        piece_code(Role::Bishop.of(Color::Black)),
    );
    let mut history = History::default();
    for (at, square, code, was) in [
        (ms(1000), Square::D7, EMPTY, knight),
        (ms(1000), Square::C5, knight, EMPTY),
        (ms(1500), Square::B3, EMPTY, white_knight),
        (ms(1500), Square::C5, white_knight, knight),
        (ms(2000), Square::D6, EMPTY, bishop),
        (ms(2000), Square::C5, bishop, white_knight),
    ] {
        let occupied = code != EMPTY;
        history.push(Change {
            at,
            square,
            occupied,
            code,
            was,
        });
    }
    history
}

/// The squares the knight exchange changes.
fn knight_exchange_seen() -> Bitboard {
    [Square::D7, Square::C5, Square::B3, Square::D6]
        .into_iter()
        .collect()
}

/// The same board, read as it was made: the squares of the three moves seen to change,
/// the knight read on c5 before its capture. The cut search is done again over moves on
/// those squares; the three moves explain the board whole there, and any sequence the
/// cut left out changes a square never seen to change: they are recorded.
#[test]
fn a_search_cut_is_decided_by_the_moves_on_squares_seen_to_change() {
    let (start, target) = knight_exchange();
    let history = knight_exchange_read();
    let evidence = evidence(&NO_ORDER, knight_exchange_seen(), &history);
    match explain(&start, &target, evidence, false, 4, None) {
        Explanation::Found {
            moves, complete, ..
        } => {
            let truth = ucis(&after_moves(&start, &["Nc5", "Nxc5", "Bxc5"]));
            assert_eq!((ucis(&moves), complete), (truth, true));
        }
        other => panic!("{other:?}"),
    }
}

/// Whether no sequence of a depth explains the board whole is known from the moves on
/// squares seen to change: none of two moves does, one of three does; without the
/// bishop's square none of three does either; with the bishop in the hand (its capture
/// under way) none of two does, though two explain the board with a move in progress;
/// and with every square seen, that search is cut and proves nothing.
#[test]
fn no_whole_explanation_is_proved_over_the_moves_on_squares_seen_to_change() {
    let (start, target) = knight_exchange();
    let codes = from_board(start.board(), false);
    let history = knight_exchange_read();
    let none_whole = |target: &Codes, seen: Bitboard, plies: usize| {
        let evidence = evidence(&NO_ORDER, seen, &history);
        let seen = seen::seen_whole(&start, &codes, target, evidence, None, plies);
        matches!(seen, seen::SeenWhole::None)
    };
    let seen = knight_exchange_seen();
    assert!(none_whole(&target, seen, 2));
    assert!(!none_whole(&target, seen, 3));
    assert!(none_whole(&target, seen.without(Square::D6), 3));
    let mut in_hand = from_board(after(&start, &["Nc5", "Nxc5"]).board(), false);
    in_hand[Square::D6.to_usize()] = EMPTY;
    assert!(none_whole(&in_hand, seen, 2));
    assert!(!none_whole(&target, Bitboard::FULL, 3));
}

/// A pawn's one step taken at once by a pawn and its two steps taken en passant end alike:
/// the pawn read standing on the one step's square (longer than a scan) decides for the
/// step; read there for less (what two steps sliding across it leave too), the step is
/// still the likelier, marked as told by one reading; never read there, neither is.
#[test]
fn a_one_step_taken_at_once_is_told_from_en_passant_by_the_pawn_read_there() {
    use crate::inference::codes::piece_code;
    use crate::inference::history::Change;
    use shakmaty::{Color, Role};
    let start = position("7k/5p2/8/4P3/8/8/8/6K1 b - - 0 1");
    let target = from_board(after(&start, &["f6", "exf6"]).board(), false);
    let (black, white) = (
        piece_code(Role::Pawn.of(Color::Black)),
        piece_code(Role::Pawn.of(Color::White)),
    );
    // The pawn read on f6 for `stood_ms`, if at all.
    let explain_after = |stood_ms: Option<u64>| {
        let ms = Duration::from_millis;
        let mut history = History::default();
        let lifted = ms(1000 + stood_ms.unwrap_or(0));
        let mut changes = vec![(ms(1000), Square::F7, EMPTY, black)];
        if stood_ms.is_some() {
            changes.push((ms(1000), Square::F6, black, EMPTY));
            changes.push((lifted, Square::F6, EMPTY, black));
        }
        changes.push((lifted + ms(400), Square::E5, EMPTY, white));
        changes.push((lifted + ms(800), Square::F6, white, EMPTY));
        for (at, square, code, was) in changes {
            let occupied = code != EMPTY;
            history.push(Change {
                at,
                square,
                occupied,
                code,
                was,
            });
        }
        let evidence = evidence(&NO_ORDER, Bitboard::FULL, &history);
        explain(&start, &target, evidence, false, 4, None)
    };
    for (stood, once) in [(500, false), (220, true)] {
        match explain_after(Some(stood)) {
            Explanation::Found {
                moves, read_once, ..
            } => {
                assert_eq!(ucis(&moves), ["f7f6", "e5f6"]);
                assert_eq!(read_once, once, "read for {stood} ms");
            }
            other => panic!("{other:?}"),
        }
    }
    match explain_after(None) {
        Explanation::Ambiguous { sequences, .. } => {
            let mut got: Vec<Vec<String>> = sequences.iter().map(|s| ucis(s)).collect();
            got.sort();
            assert_eq!(got, [["f7f5", "e5f6"], ["f7f6", "e5f6"]]);
        }
        other => panic!("{other:?}"),
    }
}

pub(super) fn after_moves(pos: &Chess, sans: &[&str]) -> Vec<Move> {
    let mut p = pos.clone();
    sans.iter()
        .map(|san| {
            let mv = san.parse::<San>().unwrap().to_move(&p).unwrap();
            p.play_unchecked(mv);
            mv
        })
        .collect()
}

/// A sequence of the moves `ucis` from the start position, complete, guessing `unseen`
/// captures nobody saw land.
fn guessing(ucis: &[&str], unseen: usize) -> Sequence {
    let mut pos = Chess::default();
    let moves = ucis
        .iter()
        .map(|u| {
            let mv = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(mv);
            mv
        })
        .collect();
    Sequence {
        moves,
        complete: true,
        unseen,
        ordered: true,
        promotions_seen: true,
        promotions_read: true,
        pawns_read: true,
        pawn_read_once: false,
        captures_seen: true,
        settled: true,
        unseen_capture: unseen > 0,
        tail_read: true,
    }
}

#[test]
fn the_fewest_unseen_captures_are_preferred() {
    // Occupancy only: a reading one sequence explains (a capture read landing) is noise
    // in another, beside a capture of its own nobody saw.
    let one = guessing(&["e2e4", "d7d5", "e4d5"], 1);
    let two = guessing(&["d2d4", "d7d5", "c2c4"], 2);
    let Explanation::Found { moves, .. } = choose(vec![two, one], 3) else {
        panic!("expected the sequence guessing one capture");
    };
    assert_eq!(ucis(&moves), ["e2e4", "d7d5", "e4d5"]);
    // As many unseen each: reported.
    let a = guessing(&["e2e4", "d7d5", "e4d5"], 1);
    let b = guessing(&["d2d4", "d7d5", "c2c4"], 1);
    assert!(matches!(
        choose(vec![a, b], 3),
        Explanation::Ambiguous { .. }
    ));
}

#[test]
fn a_carried_ambiguity_keeps_the_extensions_the_board_shows_best_once_at_rest() {
    // Two hypotheses (e4 and d4, their captures unseen) grown by a capture each: one seen
    // landing, one not. At rest, the one the board shows better is kept, as `choose`
    // keeps it of one search.
    let extensions = |two_in_progress: bool| {
        let one = guessing(&["e2e4", "d7d5", "e4d5"], 1);
        let mut two = guessing(&["d2d4", "d7d5", "c2c4"], 2);
        two.complete = !two_in_progress;
        Extensions {
            shallow: vec![one, two],
            deeper: Vec::new(),
            put_down: Vec::new(),
        }
    };
    let kept: Vec<Vec<String>> = (extensions(false).into_moves(true).iter())
        .map(|m| ucis(m))
        .collect();
    assert_eq!(kept, [["e2e4", "d7d5", "e4d5"]]);
    // With a move in progress in either, the board is not at rest: both stay open.
    assert_eq!(extensions(true).into_moves(true).len(), 2);
}

#[test]
fn pieces_held_for_the_hold_window_give_way_to_those_put_down() {
    // Three hypotheses with a piece in the hand (after e4 d5: exd5, Nc3 and Nf3, each
    // with a black piece lifted). Held for the hold window, it was put down: exd5 grows
    // by Qxd5 (swapped within a scan, one capture more unseen), Nf3 by dxe4 (its capture
    // read), Nc3 by nothing. Those put down replace every sequence with a piece in the
    // hand, and both are kept: each hypothesis counts the captures before the last its
    // own way.
    let in_hand = |ucis: &[&str]| Sequence {
        complete: false,
        ..guessing(ucis, 1)
    };
    let extensions = Extensions {
        shallow: vec![
            in_hand(&["e2e4", "d7d5", "e4d5"]),
            in_hand(&["e2e4", "d7d5", "b1c3"]),
            in_hand(&["e2e4", "d7d5", "g1f3"]),
        ],
        deeper: Vec::new(),
        put_down: vec![
            guessing(&["e2e4", "d7d5", "e4d5", "d8d5"], 2),
            guessing(&["e2e4", "d7d5", "g1f3", "d5e4"], 1),
        ],
    };
    let kept: Vec<Vec<String>> = (extensions.into_moves(true).iter())
        .map(|m| ucis(m))
        .collect();
    assert_eq!(
        kept,
        [
            ["e2e4", "d7d5", "e4d5", "d8d5"],
            ["e2e4", "d7d5", "g1f3", "d5e4"]
        ]
    );
}

#[test]
fn an_unread_promotion_is_a_queen_unless_the_search_was_cut() {
    // Occupancy only: b8=Q+ Ke7 and its twins promoting to other pieces (the same
    // squares) leave the same board; the queen's line is kept.
    let start = position("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1");
    let line = |promotion: &str| Sequence {
        moves: after_moves(&start, &[promotion, "Ke7"]),
        ..guessing(&[], 0)
    };
    let mut found: Vec<Sequence> = ["b8=Q+", "b8=R+", "b8=B", "b8=N"].map(line).into();
    queens_promoted(&mut found);
    assert_eq!(found.len(), 1);
    assert_eq!(ucis(&found[0].moves), ["b7b8q", "e8e7"]);
    // At the cap the search stopped collecting: the lines stay, so that it shows.
    let mut capped: Vec<Sequence> = (0..MAX_COUNTED)
        .map(|i| line(["b8=Q+", "b8=R+"][i % 2]))
        .collect();
    queens_promoted(&mut capped);
    assert_eq!(capped.len(), MAX_COUNTED);
}

#[test]
fn a_sequence_two_hypotheses_grow_into_is_one_extension() {
    // Hypotheses of different lengths (e4, and e4 d5) grow into the same sequence.
    let extensions = Extensions {
        shallow: vec![
            guessing(&["e2e4", "d7d5", "e4d5"], 1),
            guessing(&["e2e4", "d7d5", "e4d5"], 1),
        ],
        deeper: vec![guessing(&["e2e4", "d7d5", "e4d5"], 1)],
        put_down: Vec::new(),
    };
    assert_eq!(extensions.into_moves(true).len(), 1);
}

#[test]
fn a_fresh_read_after_a_move_may_show_a_piece_of_its_player_taken_off_by_the_reply() {
    use crate::inference::codes::piece_code;
    use shakmaty::{Color, Role};
    let start = position("3q2k1/3B4/8/8/8/8/P7/6K1 w - - 0 1");
    let moves = after_moves(&start, &["Kg2"]);
    let end = from_board(after(&start, &["Kg2"]).board(), false);
    // Kg2 while nothing was read, then the bishop on d7 taken off for Qxd7 (its victim
    // first): a snapshot of Kg2. A pawn on a2 in the hand, which no reply takes, is not.
    for (square, role, passed) in [
        (Square::D7, Role::Bishop, true),
        (Square::A2, Role::Pawn, false),
    ] {
        let mut target = end;
        target[square.to_usize()] = EMPTY;
        let code = piece_code(role.of(Color::White));
        let history = History::from_readings(&[(1000, square, EMPTY, code)]);
        let evidence = Evidence {
            lost: Some(Duration::from_millis(1000)),
            fresh: true,
            ..evidence(&NO_ORDER, Bitboard::FULL, &history)
        };
        assert_eq!(
            fresh_read_passed(&start, &target, &evidence, &moves),
            passed,
            "{square}"
        );
    }
}
