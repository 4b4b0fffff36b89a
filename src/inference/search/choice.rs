//! Choosing among the explanations a search found: what they all agree on is recorded,
//! the rest is reported as ambiguous.

use shakmaty::{Move, Role};

use super::{Explanation, MAX_COUNTED, Sequence};

/// On an occupancy-only board, the explanations of one move more (`deeper`, complete
/// ones) next to those (`shallow`, of `depth` moves) whose every move in progress was
/// read begun no later than their last move was read landing. That is a player lifting
/// a piece while the opponent's is still in the air, or readings a scan apart; the board
/// also fits a capture swapped within a scan (its square never changes) followed by the
/// reply landing where the shorter one puts the first move. Nothing tells them apart
/// but the moves that follow: both are reported, unless they all start alike.
pub(super) fn choose_between(
    mut shallow: Vec<Sequence>,
    depth: usize,
    mut deeper: Vec<Sequence>,
    plies: usize,
) -> Explanation {
    if deeper.is_empty() {
        return choose(shallow, depth);
    }
    let capped = shallow.len() >= MAX_COUNTED || deeper.len() >= MAX_COUNTED;
    prefer(&mut shallow);
    prefer(&mut deeper);
    let sequences: Vec<Vec<Move>> = shallow.into_iter().chain(deeper).map(|s| s.moves).collect();
    let first = &sequences[0];
    let shared = (0..depth)
        .take_while(|&i| sequences.iter().all(|s| s[i] == first[i]))
        .count();
    if shared > 0 && !capped {
        return Explanation::Found {
            moves: first[..shared].to_vec(),
            plies,
            complete: false,
            ordered: false,
            read_once: false,
        };
    }
    Explanation::Ambiguous {
        plies,
        exhaustive: !capped,
        sequences,
        unread_tail: false,
    }
}

/// Picks among the shortest explanations: finished boards before boards in progress,
/// then those whose squares were all seen to change (else those guessing the fewest
/// unseen captures), then those agreeing with the order of the lifts, then those whose
/// promoted pieces were seen (else a queen read once), then those whose pawns taken at
/// once were read where they have them; records what the rest share.
/// A finished board counts as such only if each piece it moves and then captures was
/// seen where it was captured: a piece lifted for the next move also leaves a board
/// that a move to a square and a capture there would finish.
pub(super) fn choose(mut found: Vec<Sequence>, plies: usize) -> Explanation {
    // Past the cap, sequences the search did not collect may start otherwise: what the
    // collected ones share is not known to be shared.
    let capped = found.len() >= MAX_COUNTED;
    // Each explains the board only with a move in progress not read under way since
    // updates were lost: the board may as well show moves made while nothing was read
    // (a piece taken, not in the hand). Reported, never recorded: all of them, as none
    // is preferred by what was read of it (later boards settle them, see
    // `Engine::carried`, only if they are every one found).
    if !found.is_empty() && found.iter().all(|s| !s.tail_read) {
        return Explanation::Ambiguous {
            plies,
            exhaustive: false,
            sequences: found.into_iter().map(|s| s.moves).collect(),
            unread_tail: !capped,
        };
    }
    prefer(&mut found);
    let read_once = !found.is_empty() && found.iter().all(Sequence::read_once);
    let Some(first) = found.first() else {
        return Explanation::Nothing;
    };
    if found.len() == 1 {
        return Explanation::Found {
            moves: first.moves.clone(),
            plies,
            complete: first.complete,
            ordered: first.ordered,
            read_once,
        };
    }
    let shared = (0..plies)
        .take_while(|&i| found.iter().all(|s| s.moves[i] == first.moves[i]))
        .count();
    if shared == 0 || capped {
        return Explanation::Ambiguous {
            plies,
            exhaustive: !capped && found.len() < MAX_COUNTED,
            sequences: found.into_iter().map(|s| s.moves).collect(),
            unread_tail: false,
        };
    }
    Explanation::Found {
        moves: first.moves[..shared].to_vec(),
        plies,
        complete: false,
        ordered: first.ordered,
        read_once,
    }
}

/// Keeps the preferred explanations (see `choose`). On an occupancy-only board, when
/// none is both complete and shows each capture landing, a complete one that guesses a
/// capture nobody saw is no better than one still in progress that shows every move
/// it makes: both are kept, and the moves that follow tell them apart.
pub(super) fn prefer(found: &mut Vec<Sequence>) {
    let guessed = |s: &Sequence| s.complete && s.unseen_capture;
    let shown = |s: &Sequence| !s.complete && s.visible();
    if !found.iter().any(|s| s.complete && !s.unseen_capture)
        && found.iter().any(guessed)
        && found.iter().any(shown)
    {
        found.retain(|s| guessed(s) || shown(s));
        retain_preferred(found);
        return;
    }
    if found.iter().any(|s| s.complete && s.captures_seen) {
        found.retain(|s| s.complete && s.captures_seen);
    }
    // Those whose squares were all seen to change, or else those that guess the fewest
    // captures nobody saw landing: a reading one of them explains (Qxd2 read landing on
    // the square Nxd2 was swapped onto within a scan) the others leave as noise, beside
    // a swap of their own (Nxe5 Qxb5).
    if let Some(least) = found.iter().map(|s| s.unseen).min() {
        found.retain(|s| s.unseen == least);
    }
    retain_preferred(found);
}

/// Keeps those agreeing with the order of the lifts, then of them those whose promoted
/// pieces were seen, else those whose promoted queens were read once, then those whose
/// pawns taken at once were read where they have them: each only where some have it.
fn retain_preferred(found: &mut Vec<Sequence>) {
    let preferences: [fn(&Sequence) -> bool; 4] = [
        |s| s.ordered,
        |s| s.promotions_seen,
        |s| s.promotions_seen || s.promotions_read,
        |s| s.pawns_read,
    ];
    for prefer in preferences {
        if found.iter().any(prefer) {
            found.retain(prefer);
        }
    }
}

/// On an occupancy-only board, drops each sequence that promotes to another piece where
/// one otherwise alike (every move from and to the same squares) makes queens: the board
/// never shows which piece a pawn became, and a promotion is taken as a queen (corrected
/// once the piece moves as only a knight could, see `Engine::promotion_piece`). A
/// sequence no queen could stand in for (its knight jumps) is kept. Not when the search
/// stopped collecting (at the cap): fewer would hide that it was cut.
pub(super) fn queens_promoted(found: &mut Vec<Sequence>) {
    let under = |m: &Move| m.promotion().is_some_and(|r| r != Role::Queen);
    if found.len() >= MAX_COUNTED || !found.iter().any(|s| s.moves.iter().any(under)) {
        return;
    }
    let queens = |s: &[Move], twin: &[Move]| {
        s.len() == twin.len()
            && s.iter().any(under)
            && !twin.iter().any(under)
            && s.iter()
                .zip(twin)
                .all(|(a, b)| a.from() == b.from() && a.to() == b.to())
    };
    let all: Vec<Vec<Move>> = found.iter().map(|s| s.moves.clone()).collect();
    found.retain(|s| !all.iter().any(|twin| queens(&s.moves, twin)));
}
