//! The inference fuzz target's checks (`tests/event_stream.rs`) as a proptest, so every
//! test run exercises them.

use proptest::prelude::*;

use crate::event_stream::run;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No panic, the mirror equals the bytes, the record is a legal game.
    #[test]
    fn event_streams_keep_the_mirror_and_a_legal_record(
        data in proptest::collection::vec(any::<u8>(), 0..600)
    ) {
        let _ = run(&data);
    }
}

/// Random bytes rarely spell a game; a program of legal moves with time between them
/// records one, so the legality check is not vacuous.
#[test]
fn legal_move_programs_record_moves() {
    let mut data = vec![1];
    for i in 0..40u8 {
        // A legal move (index, order, 20 ms between its updates), then 480 ms.
        data.extend([0, i.wrapping_mul(37), i, 20, 4, 60]);
    }
    let plies = run(&data);
    assert!(plies >= 10, "only {plies} moves recorded");
}

/// Found by the proptest above: a board the engine waited on kept its settle deadline
/// after the tick that should have analysed it (a daemon would spin on it).
#[test]
fn a_stable_board_s_deadline_moves_on_after_its_tick() {
    let data = [
        1, 3, 155, 112, 0, 0, 0, 72, 1, 0, 0, 229, 131, 6, 0, 0, 0, 0, 0, 0, 0, 24, 2, 0, 0, 21,
        230, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 86, 0, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0,
    ];
    run(&data);
}
