//! What a move does to the squares: where it lands, what it captures, and how a
//! correction moves the last move's piece elsewhere.

use shakmaty::{Bitboard, CastlingSide, Color, Move, Rank, Role, Square, attacks};

/// When `mv`, replacing `last` (a quiet move), moves the same piece to another square:
/// the square `last` put it on and the one `mv` puts it on.
pub(crate) fn moved_elsewhere(last: Move, mv: Move) -> Option<(Square, Square)> {
    let Move::Normal {
        from,
        to,
        capture: None,
        ..
    } = last
    else {
        return None;
    };
    let Move::Normal {
        from: start,
        to: square,
        ..
    } = mv
    else {
        return None;
    };
    (start == from && square != to).then_some((to, square))
}

/// Whether `mv` is castling whose rook goes where `last`, a quiet move of that rook,
/// put it: `last` was the castling begun with the rook (Art. 5.1(3)), the king not yet
/// across when it was recorded.
pub(crate) fn castles_after(last: Move, mv: Move) -> bool {
    let (
        Move::Normal {
            role: Role::Rook,
            from,
            to,
            capture: None,
            ..
        },
        Move::Castle { king, rook },
    ) = (last, mv)
    else {
        return false;
    };
    let color = match king.rank() {
        Rank::First => Color::White,
        _ => Color::Black,
    };
    rook == from && CastlingSide::from_king_side(king < rook).rook_to(color) == to
}

/// Whether `mv`, replacing `last` (a quiet move), takes the same piece on along a line
/// through the square `last` put it on: the piece may have been read there sliding on.
pub(crate) fn slides_past(last: Move, mv: Move) -> bool {
    let (Some(from), Some((to, square))) = (last.from(), moved_elsewhere(last, mv)) else {
        return false;
    };
    attacks::between(from, square).contains(to)
}

/// The squares `mv` by `color` puts a piece on.
pub(crate) fn landing(mv: Move, color: Color) -> Bitboard {
    match mv {
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_king_side(king < rook);
            Bitboard::from(side.king_to(color)) | side.rook_to(color)
        }
        _ => Bitboard::from(mv.to()),
    }
}

/// The square of the piece `mv` captures: its destination, or beside it en passant.
pub(crate) fn capture_square(mv: Move) -> Option<Square> {
    match mv {
        Move::Normal {
            capture: Some(_),
            to,
            ..
        } => Some(to),
        Move::EnPassant { from, to } => Some(Square::from_coords(to.file(), from.rank())),
        _ => None,
    }
}

/// Whether `step`, a pawn's one step from its start rank, and `capture`, the next move,
/// taking it by a pawn, end where that pawn's two steps taken en passant end. The two
/// steps pass the one step's square, so a reading of the pawn there for no longer than
/// a scan (a slide) is evidence of neither (see `Search::captures_seen`).
pub(super) fn one_step_twin(step: Move, capture: Move) -> bool {
    start_push(step) == Some(1)
        && matches!(
            capture,
            Move::Normal { role: Role::Pawn, capture: Some(Role::Pawn), to: target, .. }
                if target == step.to()
        )
}

/// Whether `step`, a pawn's push from its start rank, and `capture`, the next move,
/// taking it at once by a pawn, end where its twin taken so ends: the one step taken
/// and the two steps taken en passant leave the same position.
pub(crate) fn taken_like_its_twin(step: Move, capture: Move) -> bool {
    one_step_twin(step, capture)
        || (start_push(step) == Some(2)
            && capture.is_en_passant()
            && capture_square(capture) == Some(step.to()))
}

/// The square a pawn's two steps from its start rank end on, beside `one_step`, the
/// square its one step ends on (third or sixth rank); `None` on other ranks.
pub(super) fn two_steps_beside(one_step: Square) -> Option<Square> {
    match one_step.rank() {
        Rank::Third => one_step.offset(8),
        Rank::Sixth => one_step.offset(-8),
        _ => None,
    }
}

/// How many squares (one or two) `mv` pushes a pawn from its start rank, if it does (a
/// step from the second or seventh rank onto the last is a promotion, not one).
pub(super) fn start_push(mv: Move) -> Option<u32> {
    let Move::Normal {
        role: Role::Pawn,
        from,
        to,
        capture: None,
        ..
    } = mv
    else {
        return None;
    };
    let steps = from.distance(to);
    let start = matches!(from.rank(), Rank::Second | Rank::Seventh);
    let onward = steps == 2 || matches!(to.rank(), Rank::Third | Rank::Sixth);
    (start && onward).then_some(steps)
}

/// The squares `mv`'s piece itself passes on its way: the one it leaves (a piece touched
/// and put back is read filling it again) and those a slide crosses. A reading of one
/// of them filling is no landing of that piece elsewhere.
pub(super) fn own_way(mv: Move) -> Bitboard {
    match mv {
        Move::Normal { from, to, .. } => {
            Bitboard::from(from) | shakmaty::attacks::between(from, to)
        }
        Move::EnPassant { from, .. } => Bitboard::from(from),
        Move::Castle { king, rook } => Bitboard::from(king) | rook,
        Move::Put { .. } => Bitboard::EMPTY,
    }
}

/// The squares `mv`'s piece could have landed on instead of its destination (on an
/// empty board: a slider's rays; for a pawn, either way, the squares a step or two and
/// a capture reach), but its own way (see `own_way`). A square read filling anywhere
/// else is no landing of that piece: a flicker, or a piece adjusted there while it was
/// in the air. Other moves: every square but their own way.
pub(super) fn landing_elsewhere(mv: Move) -> Bitboard {
    let Move::Normal { role, from, .. } = mv else {
        return !own_way(mv);
    };
    let reach = if role == Role::Pawn {
        let steps: Bitboard = [-16, -8, 8, 16]
            .into_iter()
            .filter_map(|d| from.offset(d))
            .collect();
        let diagonal = shakmaty::attacks::king_attacks(from) & !Bitboard::from_rank(from.rank());
        steps | diagonal
    } else {
        shakmaty::attacks::attacks(from, role.of(Color::White), Bitboard::EMPTY)
    };
    reach & !own_way(mv)
}
