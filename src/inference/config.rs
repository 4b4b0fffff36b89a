//! Engine settings.

use std::time::Duration;

/// How takebacks are treated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Takebacks retract moves from the record.
    #[default]
    Casual,
    /// Takebacks are irregularities for the arbiter; the record keeps the moves.
    Tournament,
}

/// Settings of an [`Engine`](super::Engine).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// How long a board must stay unchanged before a move is recorded or the board is
    /// analysed further. A DGT scan takes 200–250 ms, so one window covers the
    /// half-finished readings of a scan.
    pub settle: Duration,
    /// Deepest sequence of moves searched to explain a board after missed updates (two
    /// more on an occupancy-only board, where later moves decide swapped captures).
    pub max_search_plies: usize,
    pub mode: Mode,
    /// The board senses occupancy only (codes 0 and 1).
    pub occupancy_only: bool,
    /// Accept an irregular board as the new position once it has been stable this long.
    pub auto_reanchor: Option<Duration>,
    /// On an occupancy-only board, how long a piece of the side to move may be read
    /// lifted before a board showing the one capture it can make is taken for that
    /// capture swapped within a scan (no player holds a piece in the air this long).
    pub hold: Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            settle: Duration::from_millis(250),
            max_search_plies: 4,
            mode: Mode::Casual,
            occupancy_only: false,
            auto_reanchor: None,
            hold: Duration::from_secs(30),
        }
    }
}
