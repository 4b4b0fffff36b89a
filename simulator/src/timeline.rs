//! The physical board over time: what really stands where, changed by timed actions.

use std::collections::VecDeque;
use std::time::Duration;

use shakmaty::Square;

use crate::codes::Physical;
use crate::handling::Action;

/// The true board plus the queue of actions that have not happened yet.
#[derive(Clone, Debug)]
pub struct Timeline {
    board: Physical,
    queue: VecDeque<(Duration, Action)>,
    misreads: [Option<u8>; 64],
    applied_until: Duration,
}

impl Timeline {
    /// A board standing still.
    pub fn new(board: Physical) -> Self {
        Self {
            board,
            queue: VecDeque::new(),
            misreads: [None; 64],
            applied_until: Duration::ZERO,
        }
    }

    /// Schedule an action at an absolute time (kept in time order; equal times keep
    /// insertion order). Actions in the past happen at the next application.
    pub fn schedule(&mut self, at: Duration, action: Action) {
        let pos = self.queue.partition_point(|(t, _)| *t <= at);
        self.queue.insert(pos, (at, action));
    }

    /// Apply every action scheduled at or before `t`.
    pub fn apply_until(&mut self, t: Duration) {
        while let Some(&(at, action)) = self.queue.front() {
            if at > t {
                break;
            }
            self.queue.pop_front();
            apply(&mut self.board, &mut self.misreads, action);
        }
        self.applied_until = self.applied_until.max(t);
    }

    /// The sensor reading of a square at time `t` (non-decreasing across calls): the truth,
    /// unless a misread is pending for the square, which this reading consumes.
    pub fn read_at(&mut self, t: Duration, sq: Square) -> u8 {
        self.apply_until(t);
        match self.misreads[usize::from(sq)].take() {
            Some(code) => code,
            None => self.board.get(sq),
        }
    }

    /// The true board with every action up to `t` applied, without consuming anything.
    pub fn board_at(&self, t: Duration) -> Physical {
        let mut board = self.board;
        let mut scratch = [None; 64];
        for &(_, action) in self.queue.iter().take_while(|(at, _)| *at <= t) {
            apply(&mut board, &mut scratch, action);
        }
        board
    }

    /// The board as of the last application.
    pub fn board(&self) -> &Physical {
        &self.board
    }

    /// Time of the next scheduled action.
    pub fn next_action(&self) -> Option<Duration> {
        self.queue.front().map(|(t, _)| *t)
    }

    /// Time of the last scheduled action.
    pub fn last_action(&self) -> Option<Duration> {
        self.queue.back().map(|(t, _)| *t)
    }

    /// Number of misreads waiting for their square to be read.
    pub fn misreads_pending(&self) -> usize {
        self.misreads.iter().flatten().count()
    }

    /// No action pending and no misread waiting.
    pub fn is_quiet(&self) -> bool {
        self.queue.is_empty() && self.misreads.iter().all(Option::is_none)
    }
}

fn apply(board: &mut Physical, misreads: &mut [Option<u8>; 64], action: Action) {
    match action {
        Action::Lift(sq) => board.set(sq, 0),
        Action::Place(sq, code) => board.set(sq, code),
        Action::Misread(sq, code) => misreads[usize::from(sq)] = Some(code),
    }
}
