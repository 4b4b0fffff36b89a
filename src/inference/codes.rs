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
#[inline]
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
#[inline]
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
#[inline]
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
/// (Rank by rank, then one pass over the bytes without branches: this runs for every
/// board the engine is shown.)
pub(crate) fn from_hardware(raw: &[u8; 64], rotated: bool, occupancy_only: bool) -> Codes {
    let mut out = [EMPTY; 64];
    for (rank, chunk) in out.chunks_exact_mut(8).enumerate() {
        // Chess rank r is hardware row 7 - r; a turned board reads it in row r, its
        // files the other way round (63 - (sq ^ 56) = sq ^ 7).
        let row = if rotated { rank } else { 7 - rank };
        chunk.copy_from_slice(&raw[row * 8..row * 8 + 8]);
        if rotated {
            chunk.reverse();
        }
    }
    if occupancy_only {
        for code in &mut out {
            *code = u8::from(*code != EMPTY);
        }
    } else {
        // `normalize`: the known codes kept, every byte above them `UNKNOWN`.
        const _: () = assert!(UNKNOWN == BLACK_WINS_PIECE + 1);
        for code in &mut out {
            *code = (*code).min(UNKNOWN);
        }
    }
    out
}

/// The hardware board `from_hardware` reads as `codes` (the codes it keeps: piece codes,
/// `UNKNOWN`, or occupancy).
pub(crate) fn to_hardware(codes: &Codes, rotated: bool) -> [u8; 64] {
    let mut raw = [EMPTY; 64];
    for (sq, &code) in codes.iter().enumerate() {
        let hw = if rotated { 63 - (sq ^ 56) } else { sq ^ 56 };
        raw[hw] = code;
    }
    raw
}

/// The codes of a shakmaty board.
pub(crate) fn from_board(board: &Board, occupancy_only: bool) -> Codes {
    let mut out = [EMPTY; 64];
    // One bitboard per piece kind: cheaper than asking each occupied square its piece.
    for color in Color::ALL {
        for role in Role::ALL {
            let piece = role.of(color);
            let code = normalize(piece_code(piece), occupancy_only);
            for sq in board.by_piece(piece) {
                out[sq.to_usize()] = code;
            }
        }
    }
    out
}

/// One bit per byte of `x` that is not zero (bit i for byte i, little-endian).
#[inline]
fn nonzero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // The high bit of each byte is set when the byte is not zero (no carry crosses bytes).
    let high = (((x & LOW7) + LOW7) | x) & !LOW7;
    // Gathers the eight high bits into the top byte.
    (high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// The eight codes of rank `rank` as one word (file a in the lowest byte).
#[inline]
fn rank_word(codes: &Codes, rank: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&codes[rank * 8..rank * 8 + 8]);
    u64::from_le_bytes(bytes)
}

/// The squares `codes` show occupied.
#[inline]
pub(crate) fn occupied(codes: &Codes) -> Bitboard {
    let mut mask = 0u64;
    for rank in 0..8 {
        mask |= nonzero_bytes(rank_word(codes, rank)) << (rank * 8);
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

/// What a move does to a board: the codes it writes on the squares it changes, in order
/// (a later write to the same square wins). At most four squares (castling).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Effect {
    writes: [(Square, u8); 4],
    len: usize,
    squares: Bitboard,
}

impl Effect {
    #[inline]
    fn new() -> Self {
        Effect {
            writes: [(Square::A1, EMPTY); 4],
            len: 0,
            squares: Bitboard::EMPTY,
        }
    }

    #[inline]
    fn set(&mut self, sq: Square, code: u8) {
        self.writes[self.len] = (sq, code);
        self.len += 1;
        self.squares.add(sq);
    }

    /// The squares the move changes.
    #[inline]
    pub fn squares(&self) -> Bitboard {
        self.squares
    }

    /// The code the move leaves on `sq`, if it changes that square.
    #[inline]
    pub fn code_on(&self, sq: Square) -> Option<u8> {
        self.writes[..self.len]
            .iter()
            .rev()
            .find(|(s, _)| *s == sq)
            .map(|(_, code)| *code)
    }

    /// Plays the move on `codes`.
    #[inline]
    pub fn apply(&self, codes: &mut Codes) {
        for &(sq, code) in &self.writes[..self.len] {
            codes[sq.to_usize()] = code;
        }
    }
}

/// What `mv` by `color` does to a board, from the squares the move touches only.
#[inline]
pub(crate) fn move_effect(mv: Move, color: Color, occupancy_only: bool) -> Effect {
    let mut effect = Effect::new();
    let code = |role: Role| normalize(piece_code(role.of(color)), occupancy_only);
    match mv {
        Move::Normal {
            role,
            from,
            to,
            promotion,
            ..
        } => {
            effect.set(from, EMPTY);
            effect.set(to, code(promotion.unwrap_or(role)));
        }
        Move::EnPassant { from, to } => {
            effect.set(from, EMPTY);
            effect.set(Square::from_coords(to.file(), from.rank()), EMPTY);
            effect.set(to, code(Role::Pawn));
        }
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_king_side(king < rook);
            effect.set(king, EMPTY);
            effect.set(rook, EMPTY);
            effect.set(side.king_to(color), code(Role::King));
            effect.set(side.rook_to(color), code(Role::Rook));
        }
        Move::Put { role, to } => effect.set(to, code(role)),
    }
    effect
}

/// The squares `mv` by `color` changes (its effect's), without building its effect.
#[inline]
pub(crate) fn move_squares(mv: Move, color: Color) -> Bitboard {
    match mv {
        Move::Normal { from, to, .. } => Bitboard::from(from) | to,
        Move::EnPassant { from, to } => {
            Bitboard::from(from) | to | Square::from_coords(to.file(), from.rank())
        }
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_king_side(king < rook);
            Bitboard::from(king) | rook | side.king_to(color) | side.rook_to(color)
        }
        Move::Put { to, .. } => Bitboard::from(to),
    }
}

/// Squares on which two boards differ. A rank at a time, as words: this runs for every
/// position the search visits.
#[inline]
pub(crate) fn diff(a: &Codes, b: &Codes) -> Bitboard {
    let mut mask = 0u64;
    for rank in 0..8 {
        mask |= nonzero_bytes(rank_word(a, rank) ^ rank_word(b, rank)) << (rank * 8);
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
    fn hardware_boards_are_remapped_square_by_square() {
        let raw: [u8; 64] = std::array::from_fn(|i| (i * 53 % 256) as u8);
        for rotated in [false, true] {
            for occupancy in [false, true] {
                let plain: Vec<u8> = (0..64)
                    .map(|sq| {
                        let hw = if rotated { 63 - (sq ^ 56) } else { sq ^ 56 };
                        normalize(raw[hw], occupancy)
                    })
                    .collect();
                assert_eq!(from_hardware(&raw, rotated, occupancy).to_vec(), plain);
            }
        }
    }

    #[test]
    fn diff_and_occupied_match_a_square_by_square_compare() {
        let mut a = [EMPTY; 64];
        let mut b = [EMPTY; 64];
        // Every byte value, including those with the high bit set, in every file.
        for i in 0..64 {
            a[i] = (i * 37 % 256) as u8;
            b[i] = if i % 3 == 0 {
                a[i]
            } else {
                (i * 91 % 256) as u8
            };
        }
        // Bytes that differ only in the high bit, or only below it.
        (a[5], b[5], a[6], b[6]) = (0x80, 0x00, 0x01, 0x81);
        for (x, y) in [(a, b), (b, a), (a, a), ([EMPTY; 64], [255; 64])] {
            let plain: Bitboard = Square::ALL
                .into_iter()
                .filter(|sq| x[sq.to_usize()] != y[sq.to_usize()])
                .collect();
            assert_eq!(diff(&x, &y), plain);
            let filled: Bitboard = Square::ALL
                .into_iter()
                .filter(|sq| x[sq.to_usize()] != EMPTY)
                .collect();
            assert_eq!(occupied(&x), filled);
        }
        let board = Board::default();
        for occupancy in [false, true] {
            let plain: Vec<u8> = Square::ALL
                .into_iter()
                .map(|sq| {
                    board
                        .piece_at(sq)
                        .map_or(EMPTY, |p| normalize(piece_code(p), occupancy))
                })
                .collect();
            assert_eq!(from_board(&board, occupancy).to_vec(), plain);
        }
    }

    #[test]
    fn move_effects_match_shakmaty_for_every_move_kind() {
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
                let effect = move_effect(mv, pos.turn(), false);
                let mut after = before;
                effect.apply(&mut after);
                let expected = from_board(next.board(), false);
                assert_eq!(after, expected, "{mv:?}");
                assert_eq!(diff(&before, &expected), effect.squares(), "{mv:?}");
                assert_eq!(move_squares(mv, pos.turn()), effect.squares(), "{mv:?}");
                for sq in effect.squares() {
                    assert_eq!(effect.code_on(sq), Some(after[sq.to_usize()]), "{mv:?}");
                }
            }
        }
    }
}
