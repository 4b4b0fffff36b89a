//! SimConfig: every knob of the virtual board.

use std::time::Duration;

use crate::board::Identity;
use crate::clock::ClockConfig;
use crate::handling::StyleMix;
use crate::noise::Noise;

/// When the scripted game starts playing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartTrigger {
    /// At time zero (plus the start delay).
    Immediately,
    /// When the host first puts the board in an update mode (0x43/0x44/0x4B), so it
    /// sees every move.
    OnUpdateMode,
}

/// Settings of a simulation. `Default` is a realistic board: mixed handling styles, no
/// noise, 220 ms scans, normal speed, no clock, starting when the host enters an update mode.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Seed of every random choice; the same seed gives byte-identical output.
    pub seed: u64,
    /// Handling styles to choose from per move.
    pub styles: StyleMix,
    /// Noise probabilities per move.
    pub noise: Noise,
    /// Duration of one full scan of the board.
    pub scan_period: Duration,
    /// Speed factor for all human delays (2.0 = twice as fast). The scan is hardware and
    /// is not scaled.
    pub speed: f64,
    /// The board is turned 180°: every index mirrored (63 − i).
    pub rotated: bool,
    /// Occupancy-only sensor (Pegasus-like): codes 0/1, version 1.0.
    pub occupancy_only: bool,
    /// An attached DGT 3000 clock.
    pub clock: Option<ClockConfig>,
    /// Send garbage bytes and a truncated frame before the first reply.
    pub garbage_on_connect: bool,
    /// Serial number, version, trademark, battery. `None`: derived from `occupancy_only`.
    pub identity: Option<Identity>,
    /// When the game starts.
    pub start: StartTrigger,
    /// Pause between the start trigger and the first move.
    pub start_delay: Duration,
    /// Play the next scripted move only when [`crate::Simulation::step`] is called.
    pub stepped: bool,
    /// After the last move of a decided game, put the DGT result piece on an empty
    /// central square.
    pub result_piece: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            styles: StyleMix::realistic(),
            noise: Noise::default(),
            scan_period: Duration::from_millis(220),
            speed: 1.0,
            rotated: false,
            occupancy_only: false,
            clock: None,
            garbage_on_connect: false,
            identity: None,
            start: StartTrigger::OnUpdateMode,
            start_delay: Duration::from_millis(1000),
            stepped: false,
            result_piece: false,
        }
    }
}
