//! Move inference: from board snapshots to moves and events.
