//! Handling model: how a human hand turns one chess move into timed lifts and placements.

use std::time::Duration;

use shakmaty::{Chess, Color, Move, Piece, Position, Role, Square, attacks};

use crate::codes::piece_code;
use crate::rng::Rng;

/// One physical event on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The piece standing on the square is lifted (the square becomes empty).
    Lift(Square),
    /// A piece with this DGT piece code is put on the square.
    Place(Square, u8),
    /// Sensor noise: the next reading of the square returns this code instead of the truth.
    Misread(Square, u8),
}

/// An action at an offset from the start of its plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedAction {
    /// Offset from the start of the plan.
    pub at: Duration,
    /// What happens.
    pub action: Action,
}

/// How a move is handled. Each style applies to some kinds of moves only; a move whose kind
/// none of the configured styles fits is handled the kind's default way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Style {
    /// Quiet move: lift the piece, place it on the target square.
    Plain,
    /// Slide the piece across the squares in between (quick place/lift on each).
    Slide,
    /// Touch the piece (lift it and put it back), then make the move.
    Touch,
    /// Capture: remove the captured piece first, then move.
    CaptureVictimFirst,
    /// Capture: lift the own piece, remove the captured piece, place.
    CaptureOwnFirst,
    /// Capture: lift own piece, remove the victim and place, all within one scan.
    CaptureSwap,
    /// Castling: king first, then rook.
    CastleKingFirst,
    /// Castling: both pieces lifted, then both placed.
    CastleBothLifted,
    /// Castling: rook first, a pause of seconds, then the king.
    CastleRookFirst,
    /// En passant: move the pawn, then remove the captured pawn.
    EpOwnFirst,
    /// En passant: remove the captured pawn first, then move.
    EpVictimFirst,
    /// En passant: move the pawn, and remove the captured pawn only after a pause.
    EpVictimLast,
    /// Promotion: the new piece is placed directly on the last rank.
    PromoteDirect,
    /// Promotion: the pawn is put on the last rank, stays a few seconds, then is replaced.
    PromoteSwap,
}

impl Style {
    /// Every style, in declaration order.
    pub const ALL: [Style; 14] = [
        Style::Plain,
        Style::Slide,
        Style::Touch,
        Style::CaptureVictimFirst,
        Style::CaptureOwnFirst,
        Style::CaptureSwap,
        Style::CastleKingFirst,
        Style::CastleBothLifted,
        Style::CastleRookFirst,
        Style::EpOwnFirst,
        Style::EpVictimFirst,
        Style::EpVictimLast,
        Style::PromoteDirect,
        Style::PromoteSwap,
    ];
}

/// The kind of a move, for style selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveKind {
    /// Quiet non-special move.
    Quiet,
    /// Ordinary capture.
    Capture,
    /// Castling.
    Castle,
    /// En passant.
    EnPassant,
    /// Promotion (with or without capture).
    Promotion,
}

impl MoveKind {
    /// Classify a move.
    pub fn of(m: &Move) -> Self {
        match m {
            Move::Castle { .. } => MoveKind::Castle,
            Move::EnPassant { .. } => MoveKind::EnPassant,
            Move::Normal {
                promotion: Some(_), ..
            } => MoveKind::Promotion,
            Move::Normal {
                capture: Some(_), ..
            } => MoveKind::Capture,
            _ => MoveKind::Quiet,
        }
    }

    fn default_style(self) -> Style {
        match self {
            MoveKind::Quiet => Style::Plain,
            MoveKind::Capture => Style::CaptureOwnFirst,
            MoveKind::Castle => Style::CastleKingFirst,
            MoveKind::EnPassant => Style::EpOwnFirst,
            MoveKind::Promotion => Style::PromoteDirect,
        }
    }
}

impl Style {
    /// Whether this style can handle the move.
    pub fn applies_to(self, m: &Move) -> bool {
        let kind = MoveKind::of(m);
        match self {
            Style::Plain => kind == MoveKind::Quiet,
            Style::Slide => {
                matches!(kind, MoveKind::Quiet | MoveKind::Capture)
                    && m.from().is_some_and(|f| attacks::between(f, m.to()).any())
                    && m.role() != Role::Knight
            }
            Style::Touch => true,
            Style::CaptureVictimFirst | Style::CaptureOwnFirst | Style::CaptureSwap => {
                kind == MoveKind::Capture
            }
            Style::CastleKingFirst | Style::CastleBothLifted | Style::CastleRookFirst => {
                kind == MoveKind::Castle
            }
            Style::EpOwnFirst | Style::EpVictimFirst | Style::EpVictimLast => {
                kind == MoveKind::EnPassant
            }
            Style::PromoteDirect | Style::PromoteSwap => kind == MoveKind::Promotion,
        }
    }
}

/// Weighted choice of styles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StyleMix(pub Vec<(Style, u32)>);

impl StyleMix {
    /// A realistic mix of every style.
    pub fn realistic() -> Self {
        use Style::*;
        StyleMix(vec![
            (Plain, 12),
            (Slide, 2),
            (Touch, 1),
            (CaptureVictimFirst, 4),
            (CaptureOwnFirst, 5),
            (CaptureSwap, 2),
            (CastleKingFirst, 5),
            (CastleBothLifted, 2),
            (CastleRookFirst, 1),
            (EpOwnFirst, 3),
            (EpVictimFirst, 2),
            (EpVictimLast, 1),
            (PromoteDirect, 3),
            (PromoteSwap, 2),
        ])
    }

    /// Only these styles, equally weighted.
    pub fn only(styles: &[Style]) -> Self {
        StyleMix(styles.iter().map(|&s| (s, 1)).collect())
    }

    /// Pick a style for the move: weighted among the applicable ones, else the kind's default.
    pub fn choose(&self, m: &Move, rng: &mut Rng) -> Style {
        let candidates: Vec<(Style, u32)> = self
            .0
            .iter()
            .copied()
            .filter(|(s, w)| *w > 0 && s.applies_to(m))
            .collect();
        let weights: Vec<u32> = candidates.iter().map(|c| c.1).collect();
        match rng.weighted(&weights) {
            Some(i) => candidates[i].0,
            None => MoveKind::of(m).default_style(),
        }
    }
}

impl Default for StyleMix {
    fn default() -> Self {
        Self::realistic()
    }
}

/// Scales every human delay: `speed` 2.0 halves them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pace {
    speed: f64,
}

impl Pace {
    /// A pace with this speed factor (clamped to a sane positive range).
    pub fn new(speed: f64) -> Self {
        let speed = if speed.is_finite() && speed > 0.0 {
            speed.clamp(0.01, 1000.0)
        } else {
            1.0
        };
        Self { speed }
    }

    /// A random delay in `lo..=hi` ms, scaled by the speed factor (rounded to whole µs).
    pub fn delay(&self, rng: &mut Rng, lo_ms: u64, hi_ms: u64) -> Duration {
        let ms = rng.range(lo_ms, hi_ms);
        let micros = (ms as f64 * 1000.0 / self.speed).round() as u64;
        Duration::from_micros(micros.max(1))
    }
}

impl Default for Pace {
    fn default() -> Self {
        Self::new(1.0)
    }
}

/// Builds a plan step by step.
struct Planner<'a> {
    t: Duration,
    out: Vec<TimedAction>,
    pace: &'a Pace,
    rng: &'a mut Rng,
}

impl Planner<'_> {
    fn wait(&mut self, lo: u64, hi: u64) {
        self.t += self.pace.delay(self.rng, lo, hi);
    }
    fn push(&mut self, action: Action) {
        self.out.push(TimedAction { at: self.t, action });
    }
    fn lift(&mut self, sq: Square) {
        self.push(Action::Lift(sq));
    }
    fn place(&mut self, sq: Square, piece: Piece) {
        self.push(Action::Place(sq, piece_code(piece)));
    }
    /// Carry a lifted piece from `from` to `to`, optionally sliding across the path.
    fn carry(&mut self, from: Square, to: Square, piece: Piece, slide: bool) {
        if slide {
            let mut path: Vec<Square> = attacks::between(from, to).into_iter().collect();
            path.sort_by_key(|s| s.distance(from));
            for sq in path {
                self.wait(40, 90);
                self.place(sq, piece);
                self.wait(30, 80);
                self.lift(sq);
            }
            self.wait(40, 90);
        } else {
            self.wait(250, 900);
        }
    }
}

/// Turn a legal move in `pos` into timed actions, handled in `style` (falls back to the move
/// kind's default when the style does not apply). Offsets start at zero.
pub fn plan_move(
    pos: &Chess,
    m: &Move,
    style: Style,
    pace: &Pace,
    rng: &mut Rng,
) -> Vec<TimedAction> {
    let style = if style.applies_to(m) {
        style
    } else {
        MoveKind::of(m).default_style()
    };
    let us = pos.turn();
    let mut p = Planner {
        t: Duration::ZERO,
        out: Vec::new(),
        pace,
        rng,
    };
    let mut core_style = style;
    if style == Style::Touch {
        if let Some(from) = m.from() {
            let piece = Piece {
                color: us,
                role: m.role(),
            };
            p.lift(from);
            p.wait(200, 1200);
            p.place(from, piece);
            p.wait(300, 1500);
        }
        core_style = MoveKind::of(m).default_style();
    }
    match *m {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            let piece = Piece { color: us, role };
            match promotion {
                Some(new_role) => promote(
                    &mut p,
                    from,
                    to,
                    capture.is_some(),
                    us,
                    new_role,
                    core_style,
                ),
                None if capture.is_some() => capture_move(&mut p, from, to, piece, core_style),
                None => {
                    p.lift(from);
                    p.carry(from, to, piece, core_style == Style::Slide);
                    p.place(to, piece);
                }
            }
        }
        Move::EnPassant { from, to } => {
            let victim = Square::from_coords(to.file(), from.rank());
            let pawn = Piece {
                color: us,
                role: Role::Pawn,
            };
            match core_style {
                Style::EpVictimFirst => {
                    p.lift(victim);
                    p.wait(300, 900);
                    p.lift(from);
                    p.carry(from, to, pawn, false);
                    p.place(to, pawn);
                }
                Style::EpVictimLast => {
                    p.lift(from);
                    p.carry(from, to, pawn, false);
                    p.place(to, pawn);
                    p.wait(1500, 4000);
                    p.lift(victim);
                }
                _ => {
                    p.lift(from);
                    p.carry(from, to, pawn, false);
                    p.place(to, pawn);
                    p.wait(200, 700);
                    p.lift(victim);
                }
            }
        }
        Move::Castle { king, rook } => {
            let side = m.castling_side().expect("castle has a side");
            let (k_to, r_to) = (side.king_to(us), side.rook_to(us));
            let kp = Piece {
                color: us,
                role: Role::King,
            };
            let rp = Piece {
                color: us,
                role: Role::Rook,
            };
            match core_style {
                Style::CastleBothLifted => {
                    p.lift(king);
                    p.wait(100, 400);
                    p.lift(rook);
                    p.wait(200, 600);
                    p.place(k_to, kp);
                    p.wait(100, 400);
                    p.place(r_to, rp);
                }
                Style::CastleRookFirst => {
                    p.lift(rook);
                    p.carry(rook, r_to, rp, false);
                    p.place(r_to, rp);
                    p.wait(2000, 5000);
                    p.lift(king);
                    p.carry(king, k_to, kp, false);
                    p.place(k_to, kp);
                }
                _ => {
                    p.lift(king);
                    p.carry(king, k_to, kp, false);
                    p.place(k_to, kp);
                    p.wait(150, 600);
                    p.lift(rook);
                    p.carry(rook, r_to, rp, false);
                    p.place(r_to, rp);
                }
            }
        }
        Move::Put { .. } => {}
    }
    p.out
}

fn capture_move(p: &mut Planner<'_>, from: Square, to: Square, piece: Piece, style: Style) {
    match style {
        Style::CaptureVictimFirst => {
            p.lift(to);
            p.wait(200, 800);
            p.lift(from);
            p.carry(from, to, piece, false);
            p.place(to, piece);
        }
        Style::CaptureSwap => {
            p.lift(from);
            p.wait(20, 60);
            p.lift(to);
            p.wait(20, 60);
            p.place(to, piece);
        }
        // CaptureOwnFirst, Slide and the default.
        _ => {
            p.lift(from);
            p.carry(from, to, piece, style == Style::Slide);
            p.lift(to);
            p.wait(150, 500);
            p.place(to, piece);
        }
    }
}

fn promote(
    p: &mut Planner<'_>,
    from: Square,
    to: Square,
    capture: bool,
    us: Color,
    new_role: Role,
    style: Style,
) {
    let pawn = Piece {
        color: us,
        role: Role::Pawn,
    };
    let new_piece = Piece {
        color: us,
        role: new_role,
    };
    p.lift(from);
    p.carry(from, to, pawn, false);
    if capture {
        p.lift(to);
        p.wait(150, 500);
    }
    if style == Style::PromoteSwap {
        p.place(to, pawn);
        p.wait(2000, 5000);
        p.lift(to);
        p.wait(300, 900);
    }
    p.place(to, new_piece);
}

#[cfg(test)]
#[path = "handling/tests.rs"]
mod tests;
