//! Human timing and sensor noise: think times, j'adoube, flicker and wrong piece codes.

use std::time::Duration;

use shakmaty::{Chess, Move, Position, Square};

use crate::codes::{Physical, piece_code};
use crate::handling::{Action, Pace, TimedAction};
use crate::rng::Rng;

/// Probabilities (0.0..=1.0, per move) of each kind of noise.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Noise {
    /// A square misread as empty for one scan, some time before the move.
    pub flicker: f64,
    /// A piece not taking part in the move is lifted and put back (short or long).
    pub jadoube: f64,
    /// The moved piece is read with a wrong code for one scan right after it is placed.
    pub wrong_code: f64,
}

impl Noise {
    /// Every kind of noise with the same probability.
    pub fn all(p: f64) -> Self {
        Self {
            flicker: p,
            jadoube: p,
            wrong_code: p,
        }
    }
}

/// Think time before a move: sometimes a very fast reply (100–300 ms), usually a few
/// seconds. Scaled by the pace.
pub fn think_time(rng: &mut Rng, pace: &Pace) -> Duration {
    match rng.range(0, 99) {
        0..=19 => pace.delay(rng, 100, 300),
        20..=69 => pace.delay(rng, 600, 3000),
        _ => pace.delay(rng, 3000, 9000),
    }
}

/// Noise happening before a move (offsets from the end of the previous move), within
/// the think time. Returns the actions and the time they need.
pub fn before_move(
    pos: &Chess,
    m: &Move,
    noise: &Noise,
    pace: &Pace,
    rng: &mut Rng,
) -> (Vec<TimedAction>, Duration) {
    let mut out = Vec::new();
    let mut t = Duration::ZERO;
    if rng.chance(noise.jadoube) {
        let involved = involved_squares(m);
        let ours: Vec<Square> = pos
            .us()
            .into_iter()
            .filter(|sq| !involved.contains(sq))
            .collect();
        if !ours.is_empty() {
            let sq = ours[rng.below(ours.len())];
            let piece = pos.board().piece_at(sq).expect("occupied");
            t += pace.delay(rng, 100, 400);
            out.push(TimedAction {
                at: t,
                action: Action::Lift(sq),
            });
            t += if rng.chance(0.5) {
                pace.delay(rng, 150, 600)
            } else {
                pace.delay(rng, 1500, 4000)
            };
            out.push(TimedAction {
                at: t,
                action: Action::Place(sq, piece_code(piece)),
            });
        }
    }
    if rng.chance(noise.flicker) {
        let occupied: Vec<Square> = pos.board().occupied().into_iter().collect();
        let sq = occupied[rng.below(occupied.len())];
        t += pace.delay(rng, 50, 300);
        out.push(TimedAction {
            at: t,
            action: Action::Misread(sq, 0),
        });
    }
    (out, t)
}

/// Noise right after the move's last action: a wrong code on the target square, read
/// for one scan and corrected by the next.
pub fn after_move(after: &Physical, m: &Move, noise: &Noise, rng: &mut Rng) -> Vec<TimedAction> {
    if !rng.chance(noise.wrong_code) {
        return Vec::new();
    }
    let sq = match m {
        Move::Castle { king, rook } => {
            let side = if king < rook {
                shakmaty::CastlingSide::KingSide
            } else {
                shakmaty::CastlingSide::QueenSide
            };
            let color = if king.rank() == shakmaty::Rank::First {
                shakmaty::Color::White
            } else {
                shakmaty::Color::Black
            };
            side.king_to(color)
        }
        _ => m.to(),
    };
    let code = after.get(sq);
    if code == 0 {
        return Vec::new();
    }
    // Another piece of the same colour: e.g. a bishop read as a queen.
    let base = if code <= 6 { 0 } else { 6 };
    let mut wrong = base + 1 + rng.range(0, 4) as u8;
    if wrong >= code {
        wrong += 1;
    }
    vec![TimedAction {
        at: Duration::from_millis(5),
        action: Action::Misread(sq, wrong),
    }]
}

fn involved_squares(m: &Move) -> Vec<Square> {
    match *m {
        Move::Normal { from, to, .. } => vec![from, to],
        Move::EnPassant { from, to } => vec![from, to, Square::from_coords(to.file(), from.rank())],
        Move::Castle { king, rook } => vec![king, rook],
        Move::Put { to, .. } => vec![to],
    }
}
