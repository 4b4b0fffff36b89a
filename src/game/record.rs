//! The game record: start position, moves with SAN, comments and the result.

use std::borrow::Cow;

use shakmaty::{
    Bitboard, CastlingMode, Chess, EnPassantMode, KnownOutcome, Move, MoveList, Position, Role,
    attacks::attacks,
    fen::Fen,
    san::{San, SanPlus, Suffix},
    uci::UciMove,
    zobrist::Zobrist64,
};

use super::outcome::{Status, Termination, evaluate};

/// Errors from editing a game record.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RecordError {
    #[error("{0} is not a legal move in this position")]
    IllegalMove(String),
    #[error("invalid FEN: {0}")]
    InvalidFen(String),
    #[error("there is no move at ply {0}")]
    NoSuchPly(usize),
}

/// One move of the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedMove {
    pub mv: Move,
    pub san: SanPlus,
    /// Remarks for the arbiter (irregularities), written as PGN comments after the move.
    pub comments: Vec<String>,
    /// A machine annotation written first in the move's comment, e.g. `[%clk 1:23:45]`.
    pub annotation: Option<String>,
}

/// A game: where it started, the moves played, and what follows from them.
///
/// Positions are kept for every ply, so retracting moves and recognising an earlier
/// position are cheap; repetition keys use shakmaty's `EnPassantMode::Legal`, so an en
/// passant right counts only where the capture is really possible (Art. 10.10).
///
/// What the inference engine asks after every move is computed once, when the position
/// is reached: its verdict under the Laws, and the legal moves of the current position
/// and of the one before it (a correction replaces the last move).
#[derive(Clone, Debug)]
pub struct GameRecord {
    tags: Vec<(String, String)>,
    positions: Vec<Chess>,
    keys: Vec<Zobrist64>,
    /// The game's status at each position from the board alone (no signalled result):
    /// once the board ends the game, it stays ended.
    verdicts: Vec<Status>,
    /// The legal moves of the current position.
    legal: Vec<Move>,
    /// The legal moves of the position before it, when known (not after a retraction).
    legal_before: Option<Vec<Move>>,
    moves: Vec<RecordedMove>,
    preface: Vec<String>,
    signalled: Option<(KnownOutcome, Termination)>,
}

impl Default for GameRecord {
    fn default() -> Self {
        Self::new()
    }
}

const ROSTER: [(&str, &str); 6] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
];

/// The plies a record has room for from the start, in each vector it keeps per ply or
/// per move: growing them from empty, doubling each time, was a tenth of the work of
/// recording a move (reallocating and copying the positions). Games longer than this
/// grow once or twice more.
const PLIES_RESERVED: usize = 64;

/// A vector kept per position, holding the start position's `first`, with room for
/// `PLIES_RESERVED` more.
fn per_ply<T>(first: T) -> Vec<T> {
    let mut v = Vec::with_capacity(PLIES_RESERVED + 1);
    v.push(first);
    v
}

impl GameRecord {
    /// A game from the standard start position.
    pub fn new() -> Self {
        Self::from_position(Chess::default())
    }

    /// A game from any legal position (a set-up position when it is not the start).
    pub fn from_position(start: Chess) -> Self {
        let legal = start.legal_moves();
        GameRecord {
            tags: ROSTER
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            keys: per_ply(start.zobrist_hash(EnPassantMode::Legal)),
            verdicts: per_ply(evaluate(&start, &legal, 1)),
            legal: legal.to_vec(),
            legal_before: None,
            positions: per_ply(start),
            moves: Vec::with_capacity(PLIES_RESERVED),
            preface: Vec::new(),
            signalled: None,
        }
    }

    /// A game from a FEN.
    pub fn from_fen(fen: &str) -> Result<Self, RecordError> {
        let fen: Fen = fen
            .parse()
            .map_err(|e| RecordError::InvalidFen(format!("{e}")))?;
        let pos: Chess = fen
            .into_position(CastlingMode::Standard)
            .map_err(|e| RecordError::InvalidFen(format!("{e}")))?;
        Ok(Self::from_position(pos))
    }

    /// The start position.
    pub fn start(&self) -> &Chess {
        &self.positions[0]
    }

    /// Whether the game starts from a set-up position (needs SetUp/FEN tags).
    pub fn is_setup(&self) -> bool {
        self.positions[0] != Chess::default()
    }

    /// The start position as FEN.
    pub fn start_fen(&self) -> String {
        Fen::from_position(self.start(), EnPassantMode::Legal).to_string()
    }

    /// The current position.
    pub fn position(&self) -> &Chess {
        self.positions
            .last()
            .expect("a record always holds its start position")
    }

    /// The position after `ply` moves (0 = start).
    pub fn position_at(&self, ply: usize) -> Option<&Chess> {
        self.positions.get(ply)
    }

    /// The moves played.
    pub fn moves(&self) -> &[RecordedMove] {
        &self.moves
    }

    /// Number of moves (plies) played.
    pub fn ply_count(&self) -> usize {
        self.moves.len()
    }

    /// The SAN of every move, in order.
    pub fn sans(&self) -> Vec<String> {
        self.moves.iter().map(|m| m.san.to_string()).collect()
    }

    /// Plays `mv` (must be legal in the current position).
    pub fn push(&mut self, mv: Move) -> Result<&RecordedMove, RecordError> {
        let pos = self.position();
        // The kept legal moves answer without generating any.
        if !self.legal.contains(&mv) {
            return Err(RecordError::IllegalMove(
                mv.to_uci(CastlingMode::Standard).to_string(),
            ));
        }
        let san = san_among(pos, mv, &self.legal);
        let mut next = pos.clone();
        next.play_unchecked(mv);
        let legal = next.legal_moves();
        let san = SanPlus {
            san,
            suffix: suffix(&next, || legal.is_empty()),
        };
        let key = next.zobrist_hash(EnPassantMode::Legal);
        self.keys.push(key);
        // A position can only have stood before since the last capture or pawn move (the
        // halfmove clock counts the plies since), with the same side to move.
        let since = (next.halfmoves() as usize).min(self.keys.len() - 1);
        let repetitions = self.keys[self.keys.len() - 1 - since..]
            .iter()
            .rev()
            .step_by(2)
            .filter(|k| **k == key)
            .count();
        // A game the board ended stays ended: moves the players make after it (a dead
        // position or a fivefold repetition nobody noticed) are recorded, the result
        // stands.
        let verdict = match self.verdicts.last() {
            Some(&ended @ Status::Ended { .. }) => ended,
            _ => evaluate(&next, &legal, repetitions),
        };
        self.verdicts.push(verdict);
        self.positions.push(next);
        // The buffer of the position two moves back is reused.
        let mut before = self.legal_before.take().unwrap_or_default();
        before.clear();
        before.extend_from_slice(&legal);
        self.legal_before = Some(std::mem::replace(&mut self.legal, before));
        self.moves.push(RecordedMove {
            mv,
            san,
            comments: Vec::new(),
            annotation: None,
        });
        Ok(self.moves.last().expect("just pushed"))
    }

    /// Plays a move given in UCI notation.
    pub fn push_uci(&mut self, uci: &str) -> Result<&RecordedMove, RecordError> {
        let mv = uci
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(self.position()).ok())
            .ok_or_else(|| RecordError::IllegalMove(uci.to_string()))?;
        self.push(mv)
    }

    /// Plays a move given in SAN.
    pub fn push_san(&mut self, san: &str) -> Result<&RecordedMove, RecordError> {
        let mv = san
            .parse::<SanPlus>()
            .ok()
            .and_then(|s| s.san.to_move(self.position()).ok())
            .ok_or_else(|| RecordError::IllegalMove(san.to_string()))?;
        self.push(mv)
    }

    /// Retracts the last move.
    pub fn pop(&mut self) -> Option<RecordedMove> {
        let ply = self.moves.len().checked_sub(1)?;
        self.truncate(ply).pop()
    }

    /// Retracts moves until `ply` remain; returns the retracted moves, oldest first.
    pub fn truncate(&mut self, ply: usize) -> Vec<RecordedMove> {
        let ply = ply.min(self.moves.len());
        if ply < self.moves.len() {
            self.positions.truncate(ply + 1);
            self.keys.truncate(ply + 1);
            self.verdicts.truncate(ply + 1);
            self.legal = self.position().legal_moves().to_vec();
            self.legal_before = None;
        }
        self.moves.split_off(ply)
    }

    /// The legal moves of the current position.
    pub fn legal_moves(&self) -> &[Move] {
        &self.legal
    }

    /// The legal moves of the position after `ply` moves (0 = start): kept for the
    /// current position and usually for the one before it, generated for the others.
    pub fn legal_moves_at(&self, ply: usize) -> Option<Cow<'_, [Move]>> {
        let current = self.moves.len();
        match (current.checked_sub(ply), &self.legal_before) {
            (Some(0), _) => Some(Cow::Borrowed(&self.legal)),
            (Some(1), Some(before)) => Some(Cow::Borrowed(before)),
            _ => Some(Cow::Owned(self.position_at(ply)?.legal_moves().to_vec())),
        }
    }

    /// Replaces the move at `ply` (1-based) by `mv` and replays the later moves by their
    /// squares, keeping their comments. Nothing changes if `mv` or a later move becomes
    /// illegal.
    pub fn replace(&mut self, ply: usize, mv: Move) -> Result<(), RecordError> {
        if ply == 0 || ply > self.moves.len() {
            return Err(RecordError::NoSuchPly(ply));
        }
        let mut edited = self.clone();
        let later = edited.truncate(ply - 1);
        let mut later = later.into_iter();
        let old = later.next().expect("ply checked above");
        edited.push(mv)?;
        // The clock reading still belongs to this ply; remarks about the old move do not.
        let last = edited.moves.len() - 1;
        edited.moves[last].annotation = old.annotation;
        for m in later {
            let uci = m.mv.to_uci(CastlingMode::Standard).to_string();
            edited.push_uci(&uci)?;
            let last = edited.moves.len() - 1;
            edited.moves[last].comments = m.comments;
            edited.moves[last].annotation = m.annotation;
        }
        *self = edited;
        Ok(())
    }

    /// Adds a comment after the move at `ply` (1-based), or before the first move for 0.
    pub fn add_comment(&mut self, ply: usize, text: impl Into<String>) -> Result<(), RecordError> {
        match ply {
            0 => self.preface.push(text.into()),
            _ => self
                .moves
                .get_mut(ply - 1)
                .ok_or(RecordError::NoSuchPly(ply))?
                .comments
                .push(text.into()),
        }
        Ok(())
    }

    /// Sets the annotation (e.g. a clock reading) of the move at `ply` (1-based).
    pub fn set_annotation(&mut self, ply: usize, text: Option<String>) -> Result<(), RecordError> {
        let m = ply
            .checked_sub(1)
            .and_then(|i| self.moves.get_mut(i))
            .ok_or(RecordError::NoSuchPly(ply))?;
        m.annotation = text;
        Ok(())
    }

    /// Comments written before the first move.
    pub fn preface(&self) -> &[String] {
        &self.preface
    }

    /// The PGN tags other than Result, SetUp and FEN, in order.
    pub fn tags(&self) -> &[(String, String)] {
        &self.tags
    }

    /// Sets a tag (Result, SetUp and FEN are derived from the game and ignored here).
    pub fn set_tag(&mut self, name: &str, value: &str) {
        if matches!(name, "Result" | "SetUp" | "FEN") {
            return;
        }
        match self.tags.iter_mut().find(|(k, _)| k == name) {
            Some((_, v)) => *v = value.to_string(),
            None => self.tags.push((name.to_string(), value.to_string())),
        }
    }

    /// Records a result that the board cannot show by itself (signal or operator).
    /// `None` clears it.
    pub fn set_result(&mut self, result: Option<(KnownOutcome, Termination)>) {
        self.signalled = result;
    }

    /// How often the current position has occurred, counting this time.
    pub fn repetitions(&self) -> usize {
        let current = self.keys.last().expect("a record always holds a key");
        self.keys.iter().filter(|k| *k == current).count()
    }

    /// Half-moves since the last capture or pawn move.
    pub fn halfmove_clock(&self) -> u32 {
        self.position().halfmoves()
    }

    /// The game's state under the Laws; a signalled result takes precedence only when
    /// the board itself has not already ended the game.
    pub fn status(&self) -> Status {
        let on_board = *self
            .verdicts
            .last()
            .expect("a record always holds its start position's verdict");
        match (on_board, self.signalled) {
            (Status::InPlay(_), Some((outcome, termination))) => Status::Ended {
                outcome,
                termination,
            },
            (status, _) => status,
        }
    }

    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.status().is_over()
    }
}

/// The check or mate sign of the move that led to `after`; `no_legal_moves` is only asked
/// in check. Equal to shakmaty's `Suffix::from_position`, which asks for the game's
/// outcome and so generates the legal moves after every move.
fn suffix(after: &Chess, no_legal_moves: impl FnOnce() -> bool) -> Option<Suffix> {
    if !after.is_check() {
        None
    } else if no_legal_moves() {
        Some(Suffix::Checkmate)
    } else {
        Some(Suffix::Check)
    }
}

/// The SAN of `mv`, legal in `pos` (whose legal moves are `legal`): the same as
/// shakmaty's `San::from_move`, which generates the moves again. Only another piece of
/// the same kind attacking the target square can make the move ambiguous, so the legal
/// moves are only looked through when there is one.
fn san_among(pos: &Chess, mv: Move, legal: &[Move]) -> San {
    let mut rivals = MoveList::new();
    if let Move::Normal { role, from, to, .. } = mv
        && role != Role::Pawn
    {
        let piece = role.of(pos.turn());
        let board = pos.board();
        // Most pieces have no twin to look for (kings, a lone queen): no attack lookup.
        let twins = board.by_piece(piece).without(from);
        let others = if twins.any() {
            twins & attacks(to, piece, board.occupied())
        } else {
            Bitboard::EMPTY
        };
        if others.any() {
            rivals.extend(
                legal
                    .iter()
                    .copied()
                    .filter(|m| m.to() == to && m.from().is_some_and(|f| others.contains(f))),
            );
        }
    }
    San::disambiguate(mv, &rivals)
}

/// The SAN of `mv`, a legal move in `pos` (whose legal moves are `legal`), with its check
/// or mate sign: the same as shakmaty's `SanPlus::from_move`, but no moves are generated
/// in `pos`, and those after the move only when it gives check.
pub fn san_plus(pos: &Chess, mv: Move, legal: &[Move]) -> SanPlus {
    let san = san_among(pos, mv, legal);
    let mut after = pos.clone();
    after.play_unchecked(mv);
    let suffix = suffix(&after, || after.legal_moves().is_empty());
    SanPlus { san, suffix }
}

/// The SAN of `mv`, legal in `pos`, with its check or mate sign, and `mv` played: the
/// same as shakmaty's `SanPlus::from_move_and_play_unchecked`, but the moves after it
/// are generated only when it gives check (a long line's SAN, e.g. an ambiguity's
/// sequences, costs no move list per move).
pub fn san_plus_and_play(pos: &mut Chess, mv: Move) -> SanPlus {
    let san = San::from_move(pos, mv);
    pos.play_unchecked(mv);
    let suffix = suffix(pos, || pos.legal_moves().is_empty());
    SanPlus { san, suffix }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::DrawClaims;

    #[test]
    fn push_pop_and_san() {
        let mut g = GameRecord::new();
        for san in ["e4", "e5", "Nf3", "Nc6", "Bb5"] {
            g.push_san(san).unwrap();
        }
        assert_eq!(g.sans(), ["e4", "e5", "Nf3", "Nc6", "Bb5"]);
        assert_eq!(g.pop().unwrap().san.to_string(), "Bb5");
        assert_eq!(g.ply_count(), 4);
        assert!(g.push_san("Ke3").is_err());
        let retracted = g.truncate(2);
        assert_eq!(retracted.len(), 2);
        assert_eq!(g.sans(), ["e4", "e5"]);
    }

    #[test]
    fn kept_legal_moves_verdicts_and_san_match_shakmaty() {
        let check = |g: &GameRecord| {
            for ply in 0..=g.ply_count() {
                let pos = g.position_at(ply).unwrap();
                let moves = g.legal_moves_at(ply).unwrap();
                assert_eq!(moves.as_ref(), pos.legal_moves().as_slice(), "ply {ply}");
                for &mv in moves.iter() {
                    assert_eq!(
                        san_plus(pos, mv, &moves),
                        SanPlus::from_move(pos.clone(), mv)
                    );
                    let (mut ours, mut theirs) = (pos.clone(), pos.clone());
                    assert_eq!(
                        san_plus_and_play(&mut ours, mv),
                        SanPlus::from_move_and_play_unchecked(&mut theirs, mv)
                    );
                    assert_eq!(ours, theirs);
                }
            }
            assert_eq!(g.legal_moves(), g.position().legal_moves().as_slice());
            let on_board = evaluate(g.position(), &g.position().legal_moves(), g.repetitions());
            assert_eq!(g.status(), on_board);
        };
        // Moves told apart by their file, their rank or their whole square.
        check(&GameRecord::from_fen("k7/8/8/8/1N3N2/8/1N6/K2R3R w - - 0 1").unwrap());
        // Checks, a capture, castling and a mate.
        let mut g = GameRecord::new();
        check(&g);
        for san in ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"] {
            g.push_san(san).unwrap();
            check(&g);
        }
        assert_eq!(g.moves().last().unwrap().san.to_string(), "Qxf7#");
        assert!(g.is_over());
        g.pop();
        check(&g);
        g.truncate(3);
        check(&g);
        for san in ["Nf6", "Nf3", "Bc5", "O-O", "Nxe4", "Re1"] {
            g.push_san(san).unwrap();
            check(&g);
        }
        let e6 = "e7e6"
            .parse::<UciMove>()
            .unwrap()
            .to_move(g.position_at(1).unwrap());
        g.replace(2, e6.unwrap()).unwrap();
        assert_eq!(g.sans()[1], "e6");
        check(&g);
    }

    #[test]
    fn replace_replays_later_moves() {
        let mut g = GameRecord::new();
        for san in ["e4", "e5", "Nf3"] {
            g.push_san(san).unwrap();
        }
        let d4 = "d2d4"
            .parse::<UciMove>()
            .unwrap()
            .to_move(g.start())
            .unwrap();
        g.replace(1, d4).unwrap();
        assert_eq!(g.sans(), ["d4", "e5", "Nf3"]);
        // Replacing by a move after which a later move is illegal changes nothing.
        let a3 = "a2a3"
            .parse::<UciMove>()
            .unwrap()
            .to_move(g.start())
            .unwrap();
        let e4 = "e2e4"
            .parse::<UciMove>()
            .unwrap()
            .to_move(g.start())
            .unwrap();
        g.replace(1, e4).unwrap();
        assert_eq!(g.sans(), ["e4", "e5", "Nf3"]);
        g.push_san("Nc6").unwrap();
        g.push_san("Bb5").unwrap();
        // After 1. a3 the bishop on f1 cannot reach b5.
        assert!(g.replace(1, a3).is_err());
        assert_eq!(g.sans(), ["e4", "e5", "Nf3", "Nc6", "Bb5"]);
    }

    #[test]
    fn repetition_counts_en_passant_only_when_legal() {
        // After 1. e4 the en passant square e3 is not capturable, so the position after
        // the knights' dance repeats the one after 1. e4.
        let mut g = GameRecord::new();
        for san in ["e4", "Nf6", "Nf3", "Ng8", "Ng1"] {
            g.push_san(san).unwrap();
        }
        assert_eq!(g.repetitions(), 2);
        for san in ["Nf6", "Nf3", "Ng8", "Ng1"] {
            g.push_san(san).unwrap();
        }
        assert_eq!(g.repetitions(), 3);
        assert_eq!(
            g.status(),
            Status::InPlay(DrawClaims {
                threefold_repetition: true,
                fifty_moves: false
            })
        );
    }

    #[test]
    fn repetitions_of_a_set_up_position_count_from_its_start() {
        // The halfmove clock of the FEN reaches back past the start of the record.
        let mut g = GameRecord::from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 90 60").unwrap();
        for _ in 0..2 {
            for san in ["Ra2", "Kd8", "Ra1", "Ke8"] {
                g.push_san(san).unwrap();
            }
        }
        assert_eq!(g.repetitions(), 3);
        assert!(matches!(g.status(), Status::InPlay(c) if c.threefold_repetition));
    }

    #[test]
    fn a_game_the_board_ended_stays_ended_when_play_goes_on() {
        let mut g = GameRecord::new();
        for _ in 0..4 {
            for san in ["Nf3", "Nf6", "Ng1", "Ng8"] {
                g.push_san(san).unwrap();
            }
        }
        let fivefold = Status::Ended {
            outcome: KnownOutcome::Draw,
            termination: Termination::FivefoldRepetition,
        };
        assert_eq!(g.status(), fivefold);
        g.push_san("e4").unwrap();
        assert_eq!(g.status(), fivefold);
        g.pop();
        g.pop();
        assert!(!g.is_over());
    }

    #[test]
    fn capturable_en_passant_makes_a_different_position() {
        let mut g = GameRecord::from_fen("4k3/8/8/8/3p4/8/4P3/4K1N1 w - - 0 1").unwrap();
        for san in ["e4", "Kd7", "Nf3", "Ke8", "Ng1", "Kd7", "Nf3", "Ke8", "Ng1"] {
            g.push_san(san).unwrap();
        }
        // After e4 black could capture en passant; after the knight's returns not.
        assert_eq!(g.repetitions(), 2);
    }

    #[test]
    fn signalled_result_and_setup() {
        let mut g = GameRecord::from_fen("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1").unwrap();
        assert!(g.is_setup());
        assert!(!GameRecord::new().is_setup());
        assert_eq!(g.status().result_str(), "*");
        g.set_result(Some((KnownOutcome::Draw, Termination::ResultSignal)));
        assert_eq!(g.status().result_str(), "1/2-1/2");
        assert!(GameRecord::from_fen("not a fen").is_err());
    }
}
