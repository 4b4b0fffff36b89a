//! Tests of the handling styles: each ends in the position after the move.

use super::*;
use crate::codes::Physical;
use crate::script::parse_fen;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, EnPassantMode};

fn run(pos: &Chess, m: &Move, style: Style, seed: u64) -> (Physical, Vec<TimedAction>) {
    let mut rng = Rng::new(seed);
    let plan = plan_move(pos, m, style, &Pace::default(), &mut rng);
    let mut board = Physical::from_board(pos.board());
    let mut last = Duration::ZERO;
    for a in &plan {
        assert!(a.at >= last, "actions in time order");
        last = a.at;
        match a.action {
            Action::Lift(sq) => {
                assert_ne!(board.get(sq), 0, "lifting from an empty square {sq}");
                board.set(sq, 0);
            }
            Action::Place(sq, c) => {
                assert_eq!(board.get(sq), 0, "placing on an occupied square {sq}");
                board.set(sq, c);
            }
            Action::Misread(..) => {}
        }
    }
    (board, plan)
}

fn check(fen: &str, uci: &str, style: Style) -> Vec<TimedAction> {
    let pos = parse_fen(fen).unwrap();
    let m = crate::script::parse_move(&pos, uci).unwrap();
    assert!(style.applies_to(&m), "{style:?} should apply to {uci}");
    let (board, plan) = run(&pos, &m, style, 42);
    let mut after = pos.clone();
    after.play_unchecked(m);
    assert_eq!(
        board,
        Physical::from_board(after.board()),
        "{style:?} {uci}"
    );
    let _ = Fen::from_position(&after, EnPassantMode::Legal);
    let _ = CastlingMode::Standard;
    plan
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const CAPTURE: &str = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
const CASTLE: &str = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";
const EP: &str = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3";
const PROMO: &str = "1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1";

fn actions(plan: &[TimedAction]) -> Vec<Action> {
    plan.iter().map(|a| a.action).collect()
}

#[test]
fn plain_and_touch_and_slide() {
    let plan = check(START, "e2e4", Style::Plain);
    assert_eq!(
        actions(&plan),
        vec![Action::Lift(Square::E2), Action::Place(Square::E4, 1)]
    );
    let plan = check(START, "g1f3", Style::Touch);
    assert_eq!(plan[0].action, Action::Lift(Square::G1));
    assert_eq!(plan[1].action, Action::Place(Square::G1, 3));
    let plan = check("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "a1a5", Style::Slide);
    assert_eq!(
        actions(&plan),
        vec![
            Action::Lift(Square::A1),
            Action::Place(Square::A2, 2),
            Action::Lift(Square::A2),
            Action::Place(Square::A3, 2),
            Action::Lift(Square::A3),
            Action::Place(Square::A4, 2),
            Action::Lift(Square::A4),
            Action::Place(Square::A5, 2),
        ]
    );
    assert!(
        !Style::Slide.applies_to(&crate::script::parse_move(&Chess::default(), "Nf3").unwrap())
    );
    // A slide is quick: well under a second in total.
    assert!(plan.last().unwrap().at < Duration::from_millis(700));
}

#[test]
fn capture_styles() {
    let plan = check(CAPTURE, "e4d5", Style::CaptureVictimFirst);
    assert_eq!(plan[0].action, Action::Lift(Square::D5));
    let plan = check(CAPTURE, "e4d5", Style::CaptureOwnFirst);
    assert_eq!(
        actions(&plan)[..2],
        [Action::Lift(Square::E4), Action::Lift(Square::D5)]
    );
    let plan = check(CAPTURE, "e4d5", Style::CaptureSwap);
    assert!(
        plan.last().unwrap().at <= Duration::from_millis(120),
        "within one scan"
    );
    check("4k3/8/8/8/3p4/8/8/Q3K3 w - - 0 1", "a1d4", Style::Slide);
    check("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1", "a1d4", Style::Slide);
}

#[test]
fn castling_styles() {
    let plan = check(CASTLE, "e1g1", Style::CastleKingFirst);
    assert_eq!(plan[0].action, Action::Lift(Square::E1));
    let plan = check(CASTLE, "e1c1", Style::CastleBothLifted);
    assert_eq!(
        actions(&plan)[..2],
        [Action::Lift(Square::E1), Action::Lift(Square::A1)]
    );
    let plan = check(CASTLE, "e1g1", Style::CastleRookFirst);
    assert_eq!(
        actions(&plan)[..2],
        [Action::Lift(Square::H1), Action::Place(Square::F1, 2)]
    );
    assert!(
        plan[2].at - plan[1].at >= Duration::from_secs(2),
        "long pause before the king"
    );
    let black = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1";
    check(black, "e8c8", Style::CastleRookFirst);
    check(black, "e8g8", Style::Touch);
}

#[test]
fn en_passant_styles() {
    let plan = check(EP, "e5f6", Style::EpOwnFirst);
    assert_eq!(plan.last().unwrap().action, Action::Lift(Square::F5));
    let plan = check(EP, "e5f6", Style::EpVictimFirst);
    assert_eq!(plan[0].action, Action::Lift(Square::F5));
    let plan = check(EP, "e5f6", Style::EpVictimLast);
    let n = plan.len();
    assert_eq!(plan[n - 1].action, Action::Lift(Square::F5));
    assert!(plan[n - 1].at - plan[n - 2].at >= Duration::from_millis(1500));
}

#[test]
fn promotion_styles() {
    let plan = check(PROMO, "a7a8q", Style::PromoteDirect);
    assert_eq!(
        actions(&plan),
        vec![Action::Lift(Square::A7), Action::Place(Square::A8, 6)]
    );
    let plan = check(PROMO, "a7a8n", Style::PromoteSwap);
    assert_eq!(
        plan[1].action,
        Action::Place(Square::A8, 1),
        "pawn first on the last rank"
    );
    assert!(plan[2].at - plan[1].at >= Duration::from_secs(2));
    assert_eq!(plan.last().unwrap().action, Action::Place(Square::A8, 3));
    check(PROMO, "a7b8r", Style::PromoteSwap);
    check(PROMO, "a7b8b", Style::PromoteDirect);
    check(
        "4k3/8/8/8/8/8/p7/4K3 b - - 0 1",
        "a2a1q",
        Style::PromoteSwap,
    );
}

#[test]
fn inapplicable_style_falls_back_to_default() {
    let (board, _) = run(
        &Chess::default(),
        &crate::script::parse_move(&Chess::default(), "e4").unwrap(),
        Style::CastleRookFirst,
        1,
    );
    let mut after = Chess::default();
    after.play_unchecked(crate::script::parse_move(&Chess::default(), "e4").unwrap());
    assert_eq!(board, Physical::from_board(after.board()));
}

#[test]
fn mix_choice_is_seeded_and_applicable() {
    let pos = parse_fen(CASTLE).unwrap();
    let m = crate::script::parse_move(&pos, "O-O").unwrap();
    let mix = StyleMix::realistic();
    let mut a = Rng::new(5);
    let mut b = Rng::new(5);
    for _ in 0..50 {
        let s = mix.choose(&m, &mut a);
        assert_eq!(s, mix.choose(&m, &mut b));
        assert!(s.applies_to(&m));
    }
    let only = StyleMix::only(&[Style::PromoteSwap]);
    assert_eq!(only.choose(&m, &mut a), Style::CastleKingFirst);
}
