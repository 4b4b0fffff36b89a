//! End-of-game conditions of the Laws (Art. 9–10 and the current automatic draws).

use shakmaty::{Chess, KnownOutcome, Move, Position};

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// Art. 10.1: the side to move is checkmated.
    Checkmate,
    /// Art. 10.3: the side to move has no legal move and is not in check.
    Stalemate,
    /// Art. 10.4: neither side can mate by any series of legal moves. Detected from
    /// material (K v K, K v K+B, K v K+N, bishops all on one colour), which covers the
    /// Laws' list.
    DeadPosition,
    /// Current Laws: the same position for the fifth time.
    FivefoldRepetition,
    /// Current Laws: 75 moves by each side without a capture or pawn move.
    SeventyFiveMoves,
    /// A result signalled on the board (DGT result pieces, kings on the centre).
    ResultSignal,
    /// A result entered by the operator.
    Operator,
}

/// Draws a player may claim (Art. 10.10, 10.12); the game goes on until someone does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawClaims {
    /// The current position has occurred at least three times.
    pub threefold_repetition: bool,
    /// At least 50 moves by each side without a capture or pawn move.
    pub fifty_moves: bool,
}

impl DrawClaims {
    /// Whether any claim is available.
    pub fn any(self) -> bool {
        self.threefold_repetition || self.fifty_moves
    }
}

/// The state of a game as the Laws see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The game goes on; some draws may be claimable.
    InPlay(DrawClaims),
    /// The game is over.
    Ended {
        outcome: KnownOutcome,
        termination: Termination,
    },
}

impl Status {
    /// The PGN result string: "1-0", "0-1", "1/2-1/2" or "*".
    pub fn result_str(self) -> &'static str {
        match self {
            Status::InPlay(_) => "*",
            Status::Ended { outcome, .. } => outcome.as_str(),
        }
    }

    /// Whether the game is over.
    pub fn is_over(self) -> bool {
        matches!(self, Status::Ended { .. })
    }
}

/// Evaluates `pos`, whose legal moves are `legal`, reached for the `repetitions`-th time
/// in its game.
///
/// Checkmate is tested first: a mating move ends the game even if it also completes a
/// fivefold repetition or the 75th move (Art. 9.6 of the current Laws).
pub(crate) fn evaluate(pos: &Chess, legal: &[Move], repetitions: usize) -> Status {
    let ended = |outcome, termination| Status::Ended {
        outcome,
        termination,
    };
    // shakmaty's `is_checkmate` and `is_stalemate`, with the legal moves already known.
    let check = pos.is_check();
    if check && legal.is_empty() {
        return ended(
            KnownOutcome::Decisive {
                winner: !pos.turn(),
            },
            Termination::Checkmate,
        );
    }
    if !check && legal.is_empty() {
        return ended(KnownOutcome::Draw, Termination::Stalemate);
    }
    if pos.is_insufficient_material() {
        return ended(KnownOutcome::Draw, Termination::DeadPosition);
    }
    if repetitions >= 5 {
        return ended(KnownOutcome::Draw, Termination::FivefoldRepetition);
    }
    if pos.halfmoves() >= 150 {
        return ended(KnownOutcome::Draw, Termination::SeventyFiveMoves);
    }
    Status::InPlay(DrawClaims {
        threefold_repetition: repetitions >= 3,
        fifty_moves: pos.halfmoves() >= 100,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, Color, fen::Fen};

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    fn verdict(pos: &Chess, repetitions: usize) -> Status {
        evaluate(pos, &pos.legal_moves(), repetitions)
    }

    #[test]
    fn checkmate_stalemate_and_dead_positions() {
        let mate = pos("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1");
        assert_eq!(
            verdict(&mate, 1),
            Status::Ended {
                outcome: KnownOutcome::Decisive {
                    winner: Color::White
                },
                termination: Termination::Checkmate
            }
        );
        let stale = pos("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
        assert!(matches!(
            verdict(&stale, 1),
            Status::Ended {
                termination: Termination::Stalemate,
                ..
            }
        ));
        for dead in [
            "8/8/4k3/8/8/3K4/8/8 w - - 0 1",
            "8/8/4k3/8/8/3KB3/8/8 w - - 0 1",
            "8/8/4k3/8/8/3KN3/8/8 w - - 0 1",
            "8/2b5/4k3/8/8/3KB3/8/8 w - - 0 1",
        ] {
            assert!(
                matches!(
                    verdict(&pos(dead), 1),
                    Status::Ended {
                        termination: Termination::DeadPosition,
                        ..
                    }
                ),
                "{dead}"
            );
        }
        // Bishops on squares of different colours can still mate.
        let alive = pos("8/3b4/4k3/8/8/3KB3/8/8 w - - 0 1");
        assert!(!verdict(&alive, 1).is_over());
    }

    #[test]
    fn repetition_and_move_counts() {
        let p = pos("r3k3/8/8/8/8/8/8/4K2R w - - 0 1");
        assert_eq!(verdict(&p, 2), Status::InPlay(DrawClaims::default()));
        assert!(matches!(verdict(&p, 3), Status::InPlay(c) if c.threefold_repetition));
        assert!(matches!(
            verdict(&p, 5),
            Status::Ended {
                termination: Termination::FivefoldRepetition,
                ..
            }
        ));
        let fifty = pos("r3k3/8/8/8/8/8/8/4K2R w - - 100 80");
        assert!(matches!(verdict(&fifty, 1), Status::InPlay(c) if c.fifty_moves));
        let seventy_five = pos("r3k3/8/8/8/8/8/8/4K2R w - - 150 100");
        assert!(matches!(
            verdict(&seventy_five, 1),
            Status::Ended {
                termination: Termination::SeventyFiveMoves,
                ..
            }
        ));
    }
}
