//! Boards as 64 piece codes in chess-square order (a1 = 0 … h8 = 63), the engine's
//! working form: hardware boards are remapped into it once per observation, so every
//! comparison afterwards is a plain byte compare.

use shakmaty::{Bitboard, Board, CastlingSide, Color, Move, Piece, Role, Square};

/// 64 codes indexed by `Square::to_usize()`.
pub(crate) type Codes = [u8; 64];

pub(crate) const EMPTY: u8 = 0;
/// Any byte above the known codes: never equal to a piece, so it can never match a move.
pub(crate) const UNKNOWN: u8 = 16;
/// DGT result pieces: draw, white wins, black wins.
pub(crate) const DRAW_PIECE: u8 = 0x0D;
pub(crate) const WHITE_WINS_PIECE: u8 = 0x0E;
pub(crate) const BLACK_WINS_PIECE: u8 = 0x0F;

/// The DGT code of a piece (white P R N B K Q = 1..=6, black = 7..=12).
pub(crate) fn piece_code(piece: Piece) -> u8 {
    let base = match piece.role {
        Role::Pawn => 1,
        Role::Rook => 2,
        Role::Knight => 3,
        Role::Bishop => 4,
        Role::King => 5,
        Role::Queen => 6,
    };
    if piece.color.is_white() {
        base
    } else {
        base + 6
    }
}

/// The piece of a DGT code, if it is one of the twelve.
pub(crate) fn code_piece(code: u8) -> Option<Piece> {
    let (color, base) = match code {
        1..=6 => (Color::White, code),
        7..=12 => (Color::Black, code - 6),
        _ => return None,
    };
    let role = match base {
        1 => Role::Pawn,
        2 => Role::Rook,
        3 => Role::Knight,
        4 => Role::Bishop,
        5 => Role::King,
        _ => Role::Queen,
    };
    Some(Piece { color, role })
}

/// Reduces a raw byte to what the engine compares: occupancy (0/1) on boards that only
/// sense occupancy, otherwise the code with every unknown byte folded into `UNKNOWN`.
pub(crate) fn normalize(code: u8, occupancy_only: bool) -> u8 {
    if occupancy_only {
        u8::from(code != EMPTY)
    } else if code <= BLACK_WINS_PIECE {
        code
    } else {
        UNKNOWN
    }
}

/// Remaps a hardware board (index 0 = a8 in the board's own view) into chess order.
/// Hardware index `i` of a normally placed board is chess square `i ^ 56`; a board
/// turned 180° reads index `63 - i` there instead.
pub(crate) fn from_hardware(raw: &[u8; 64], rotated: bool, occupancy_only: bool) -> Codes {
    let mut out = [EMPTY; 64];
    for (sq, slot) in out.iter_mut().enumerate() {
        let hw = if rotated { 63 - (sq ^ 56) } else { sq ^ 56 };
        *slot = normalize(raw[hw], occupancy_only);
    }
    out
}

/// The codes of a shakmaty board.
pub(crate) fn from_board(board: &Board, occupancy_only: bool) -> Codes {
    let mut out = [EMPTY; 64];
    for (sq, piece) in board {
        out[sq.to_usize()] = normalize(piece_code(piece), occupancy_only);
    }
    out
}

/// The squares `codes` show occupied.
pub(crate) fn occupied(codes: &Codes) -> Bitboard {
    let mut mask = 0u64;
    for (i, &c) in codes.iter().enumerate() {
        mask |= u64::from(c != EMPTY) << i;
    }
    Bitboard(mask)
}

/// Whether `codes`, occupying `occupied`, show `board`. The occupied squares are
/// compared first: an earlier position of the game (a takeback) is looked for among
/// every position of the record, and almost all of them differ there already.
pub(crate) fn shows(
    codes: &Codes,
    occupied: Bitboard,
    board: &Board,
    occupancy_only: bool,
) -> bool {
    occupied == board.occupied() && from_board(board, occupancy_only) == *codes
}

/// The board after `mv` by `color`, computed from the squares the move touches only,
/// and those squares.
pub(crate) fn after_move(
    before: &Codes,
    mv: Move,
    color: Color,
    occupancy_only: bool,
) -> (Codes, Bitboard) {
    let mut out = *before;
    let mut touched = Bitboard::EMPTY;
    let mut set = |sq: Square, code: u8| {
        out[sq.to_usize()] = code;
        touched.add(sq);
    };
    let code = |role: Role| normalize(piece_code(role.of(color)), occupancy_only);
    match mv {
        Move::Normal {
            role,
            from,
            to,
            promotion,
            ..
        } => {
            set(from, EMPTY);
            set(to, code(promotion.unwrap_or(role)));
        }
        Move::EnPassant { from, to } => {
            set(from, EMPTY);
            set(Square::from_coords(to.file(), from.rank()), EMPTY);
            set(to, code(Role::Pawn));
        }
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_king_side(king < rook);
            set(king, EMPTY);
            set(rook, EMPTY);
            set(side.king_to(color), code(Role::King));
            set(side.rook_to(color), code(Role::Rook));
        }
        Move::Put { role, to } => set(to, code(role)),
    }
    (out, touched)
}

/// The squares of `among` on which two boards differ.
pub(crate) fn diff_on(a: &Codes, b: &Codes, among: Bitboard) -> Bitboard {
    among
        .into_iter()
        .filter(|sq| a[sq.to_usize()] != b[sq.to_usize()])
        .collect()
}

/// Squares on which two boards differ.
pub(crate) fn diff(a: &Codes, b: &Codes) -> Bitboard {
    let mut mask = 0u64;
    // Boards mostly agree: whole ranks are compared first.
    for (rank, (x, y)) in a.chunks_exact(8).zip(b.chunks_exact(8)).enumerate() {
        if x != y {
            for (file, (p, q)) in x.iter().zip(y.iter()).enumerate() {
                mask |= u64::from(p != q) << (rank * 8 + file);
            }
        }
    }
    Bitboard(mask)
}

/// A shakmaty board holding the twelve pieces of `codes` (other codes are left out).
pub(crate) fn to_board(codes: &Codes) -> Board {
    let mut board = Board::empty();
    for (sq, &code) in Square::ALL.iter().zip(codes.iter()) {
        if let Some(piece) = code_piece(code) {
            board.set_piece_at(*sq, piece);
        }
    }
    board
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Chess, Position};

    #[test]
    fn codes_round_trip() {
        for code in 0..=255u8 {
            if let Some(piece) = code_piece(code) {
                assert_eq!(piece_code(piece), code);
            } else {
                assert!(code == 0 || code > 12);
            }
        }
    }

    #[test]
    fn hardware_mapping_and_rotation() {
        let mut raw = [0u8; 64];
        raw[0] = 8; // a8 black rook in the board's own numbering
        raw[63] = 2; // h1 white rook
        raw[10] = 200; // garbage byte
        let codes = from_hardware(&raw, false, false);
        assert_eq!(codes[Square::A8.to_usize()], 8);
        assert_eq!(codes[Square::H1.to_usize()], 2);
        assert_eq!(codes[Square::C7.to_usize()], UNKNOWN);
        let turned = from_hardware(&raw, true, false);
        assert_eq!(turned[Square::H1.to_usize()], 8);
        assert_eq!(turned[Square::A8.to_usize()], 2);
        let occupancy = from_hardware(&raw, false, true);
        assert_eq!(occupancy[Square::C7.to_usize()], 1);
    }

    #[test]
    fn after_move_matches_shakmaty_for_every_move_kind() {
        for fen in [
            "r3k2r/pPpp1ppp/8/3Pp3/8/8/P1PP1PPP/R3K2R w KQkq e6 0 1",
            "r3k2r/pppp1p1p/8/8/3Pp3/8/PPP2PpP/R3K2R b KQkq d3 0 1",
        ] {
            let pos: Chess = fen
                .parse::<shakmaty::fen::Fen>()
                .unwrap()
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap();
            let before = from_board(pos.board(), false);
            for mv in pos.legal_moves() {
                let mut next = pos.clone();
                next.play_unchecked(mv);
                let (after, touched) = after_move(&before, mv, pos.turn(), false);
                let expected = from_board(next.board(), false);
                assert_eq!(after, expected, "{mv:?}");
                assert_eq!(diff(&before, &expected), touched, "{mv:?}");
            }
        }
    }
}
