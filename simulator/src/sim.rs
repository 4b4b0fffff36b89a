//! Simulation: the virtual board, its physical script, scanner and clock in simulated time.

use std::collections::VecDeque;
use std::time::Duration;

use boardcast_protocol::{PieceCode, RawBoard};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, EnPassantMode, Move, Position, Square};

use crate::board::{Identity, VirtualBoard};
use crate::clock::Side;
use crate::codes::Physical;
use crate::config::{SimConfig, StartTrigger};
use crate::error::SimError;
use crate::handling::{Action, Pace, Style, plan_move};
use crate::noise;
use crate::rng::Rng;
use crate::scan::{ScanConfig, Scanner};
use crate::script::{Script, parse_move};
use crate::timeline::Timeline;

/// Bytes sent before the first reply when `garbage_on_connect` is set: bytes without
/// bit 7, then a board dump cut short after three payload bytes.
pub const GARBAGE: [u8; 12] = [
    0x00, 0x13, 0x7F, 0x45, 0x0A, 0x2B, 0x86, 0x00, 0x43, 0x05, 0x02, 0x03,
];

/// One completed move: its last action is done and a full scan has been taken since.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveReport {
    /// 1-based ply number within the simulation.
    pub ply: u32,
    /// The move in SAN with check marks, e.g. `Nf3+`.
    pub san: String,
    /// The move in UCI, e.g. `e1g1`.
    pub uci: String,
    /// The board after the move in `RawBoard::to_text` form, in the board's own numbering
    /// (rotation and occupancy-only applied): what the daemon's mirror should show.
    pub board: String,
    /// FEN of the position after the move.
    pub fen: String,
    /// The handling style used.
    pub style: Style,
    /// Simulated time of the move's last physical action.
    pub completed_at: Duration,
}

#[derive(Clone, Copy, Debug)]
enum ClockEvent {
    Start(Side),
    Press(Side),
    Stop,
}

/// A virtual DGT board playing a script (or interactively submitted moves) in simulated
/// time. Sans-IO: bytes in with [`Simulation::receive`], bytes out of
/// [`Simulation::advance`].
#[derive(Debug)]
pub struct Simulation {
    cfg: SimConfig,
    pace: Pace,
    board: VirtualBoard,
    timeline: Timeline,
    scanner: Scanner,
    rng: Rng,
    pos: Chess,
    pending: VecDeque<Move>,
    result: Option<String>,
    releases: usize,
    input_open: bool,
    start_at: Option<Duration>,
    prev_end: Duration,
    scheduled_any: bool,
    awaiting: VecDeque<(Duration, MoveReport)>,
    reports: VecDeque<MoveReport>,
    clock_events: VecDeque<(Duration, ClockEvent)>,
    ply: u32,
    now: Duration,
    out: Vec<u8>,
    greeted: bool,
    /// Every change a scan reported `(scan end, index, code)`, kept for a bus board
    /// (which reports changes only when asked) once [`Simulation::log_scan_changes`] is
    /// called.
    scan_log: Option<Vec<(Duration, u8, u8)>>,
}

impl Simulation {
    /// A simulation replaying `script`. With the default start trigger the game begins
    /// `start_delay` after the host first enters an update mode.
    pub fn new(config: SimConfig, script: Script) -> Self {
        let pace = Pace::new(config.speed);
        let identity = config
            .identity
            .clone()
            .unwrap_or_else(|| Identity::new(config.occupancy_only));
        let board = VirtualBoard::new(identity, config.clock, Rng::stream(config.seed, 3));
        let physical = Physical::from_board(script.start().board());
        let timeline = Timeline::new(physical);
        let scan_cfg = ScanConfig {
            period: config.scan_period,
            rotated: config.rotated,
            occupancy_only: config.occupancy_only,
        };
        let initial = physical.to_hardware(config.rotated, config.occupancy_only);
        let scanner = Scanner::new(
            scan_cfg,
            initial,
            Duration::ZERO,
            Rng::stream(config.seed, 2),
        );
        let start_at = match config.start {
            StartTrigger::Immediately => Some(config.start_delay),
            StartTrigger::OnUpdateMode => None,
        };
        let mut sim = Simulation {
            pace,
            board,
            timeline,
            scanner,
            rng: Rng::stream(config.seed, 1),
            pos: script.start().clone(),
            pending: script.moves().iter().copied().collect(),
            result: script.result().map(str::to_string),
            releases: 0,
            input_open: false,
            start_at,
            prev_end: Duration::ZERO,
            scheduled_any: false,
            awaiting: VecDeque::new(),
            reports: VecDeque::new(),
            clock_events: VecDeque::new(),
            ply: 0,
            now: Duration::ZERO,
            out: Vec::new(),
            greeted: false,
            scan_log: None,
            cfg: config,
        };
        sim.schedule_pending(Duration::ZERO);
        sim
    }

    /// An interactive simulation from a start position: moves and raw actions are
    /// submitted with [`Simulation::submit_line`] and friends until
    /// [`Simulation::close_input`]. Any moves in `script` are played first.
    pub fn interactive(config: SimConfig, script: Script) -> Self {
        let mut sim = Self::new(config, script);
        sim.input_open = true;
        sim
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// Host → board bytes (commands) received at `now`.
    pub fn receive(&mut self, bytes: &[u8], now: Duration) {
        self.advance_to(now);
        if !self.greeted {
            self.greeted = true;
            if self.cfg.garbage_on_connect {
                self.out.extend_from_slice(&GARBAGE);
            }
        }
        let dump = *self.scanner.last();
        self.board.receive(bytes, now, &dump, &mut self.out);
        if self.start_at.is_none()
            && self.cfg.start == StartTrigger::OnUpdateMode
            && self.board.mode().sends_updates()
        {
            self.start_at = Some(now + self.cfg.start_delay);
            self.schedule_pending(now);
        }
    }

    /// Run the physical script, scanner and clock up to `now`; returns the board → host
    /// bytes produced (including replies to commands received since the last call).
    pub fn advance(&mut self, now: Duration) -> Vec<u8> {
        self.advance_to(now);
        std::mem::take(&mut self.out)
    }

    /// When something next happens (None when finished and idle).
    pub fn next_wakeup(&self) -> Option<Duration> {
        let cursor = self.now;
        [
            self.scan_due(),
            self.board.next_due(cursor),
            self.clock_events.front().map(|(t, _)| *t),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// What the board would report for a fresh full scan now, in its own numbering.
    pub fn physical(&self) -> RawBoard {
        let board = self.timeline.board_at(self.now);
        RawBoard(board.to_hardware(self.cfg.rotated, self.cfg.occupancy_only))
    }

    /// The next completed move, if any.
    pub fn poll_report(&mut self) -> Option<MoveReport> {
        self.reports.pop_front()
    }

    /// Every scripted (and submitted) move has been played and its report produced
    /// (reports may still wait in [`Simulation::poll_report`]), input is closed, and the
    /// board stands still.
    pub fn is_finished(&self) -> bool {
        !self.input_open
            && self.pending.is_empty()
            && self.awaiting.is_empty()
            && self.timeline.is_quiet()
            && self.stable()
    }

    /// The position after every move scheduled so far.
    pub fn position(&self) -> &Chess {
        &self.pos
    }

    /// Moves of the script not yet started.
    pub fn remaining_moves(&self) -> usize {
        self.pending.len()
    }

    /// Stepped mode: allow the next scripted move to start (at `now` at the earliest).
    /// Returns false when no scripted move is left.
    pub fn step(&mut self, now: Duration) -> bool {
        self.advance_to(now);
        if self.pending.len() <= self.releases {
            return false;
        }
        self.releases += 1;
        if self.start_at.is_none() {
            self.start_at = Some(now);
        }
        self.schedule_pending(now);
        true
    }

    /// Play a move given in SAN or UCI from the current position (after every move
    /// scheduled so far), starting at `now` or when the previous move is done.
    pub fn submit_move(&mut self, text: &str, now: Duration) -> Result<(), SimError> {
        self.advance_to(now);
        let m =
            parse_move(&self.pos, text).ok_or_else(|| SimError::IllegalMove(text.to_string()))?;
        let earliest = self.earliest(now);
        self.schedule_move(m, earliest, false);
        Ok(())
    }

    /// Perform a raw physical action at `now` (or when the scheduled moves are done).
    /// The tracked chess position is not changed.
    pub fn submit_action(&mut self, action: Action, now: Duration) {
        self.advance_to(now);
        let at = self.earliest(now);
        self.timeline.schedule(at, action);
        self.prev_end = at;
    }

    /// One interactive line: a move in SAN or UCI, `lift e2`, `place e4 P`, or empty.
    pub fn submit_line(&mut self, line: &str, now: Duration) -> Result<(), SimError> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let square = |s: &str| {
            s.parse::<Square>()
                .map_err(|_| SimError::BadLine(line.to_string()))
        };
        match words.as_slice() {
            [] => Ok(()),
            ["lift", sq] => {
                self.submit_action(Action::Lift(square(sq)?), now);
                Ok(())
            }
            ["place", sq, piece] => {
                let mut chars = piece.chars();
                let code = match (chars.next(), chars.next()) {
                    (Some(c), None) => PieceCode::from_char(c),
                    _ => None,
                }
                .ok_or_else(|| SimError::BadLine(line.to_string()))?;
                self.submit_action(Action::Place(square(sq)?, code.byte()), now);
                Ok(())
            }
            [mv] => self.submit_move(mv, now),
            _ => Err(SimError::BadLine(line.to_string())),
        }
    }

    /// Keep every change the scanner reports, for [`Simulation::take_scan_changes`]
    /// (a board in bus mode reports them when the host asks, not as they happen).
    pub fn log_scan_changes(&mut self) {
        self.scan_log.get_or_insert_with(Vec::new);
    }

    /// The scan changes `(scan end, index, code)` since the last call, oldest first.
    pub fn take_scan_changes(&mut self) -> Vec<(Duration, u8, u8)> {
        self.scan_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// What the last completed scan read, in the board's numbering: what a board dump
    /// sends.
    pub fn scanned(&self) -> RawBoard {
        RawBoard(*self.scanner.last())
    }

    /// The attached clock's reading at the simulation's current time (the "no clock"
    /// reading without one).
    pub fn clock_times(&self) -> boardcast_protocol::ClockTimes {
        self.board.times(self.now)
    }

    /// The host has started reading the board by a means other than an update mode (a
    /// bus poll): the game starts after the start delay, as with the default trigger.
    pub fn host_started(&mut self, now: Duration) {
        self.advance_to(now);
        if self.start_at.is_none() && self.cfg.start == StartTrigger::OnUpdateMode {
            self.start_at = Some(now + self.cfg.start_delay);
            self.schedule_pending(now);
        }
    }

    /// No more interactive input: the simulation finishes once the board is still.
    pub fn close_input(&mut self) {
        self.input_open = false;
    }

    /// The board is unplugged at `now`: it loses power and sends nothing until a host
    /// puts it in an update mode again, while the players go on moving pieces.
    pub fn unplug(&mut self, now: Duration) {
        self.advance_to(now);
        self.board.power_off();
        self.out.clear();
        self.host_connected();
    }

    /// Call when a host (re)connects: the next reply is preceded by garbage if configured.
    pub fn host_connected(&mut self) {
        self.greeted = false;
    }

    fn earliest(&mut self, now: Duration) -> Duration {
        if self.start_at.is_none() {
            self.start_at = Some(now);
        }
        let lead = self.pace.delay(&mut self.rng, 30, 100);
        (now + lead).max(self.prev_end + lead)
    }

    fn schedule_pending(&mut self, now: Duration) {
        let Some(start_at) = self.start_at else {
            return;
        };
        while let Some(&m) = self.pending.front() {
            let (earliest, think) = if self.cfg.stepped {
                if self.releases == 0 {
                    break;
                }
                self.releases -= 1;
                let lead = self.pace.delay(&mut self.rng, 100, 300);
                (self.prev_end.max(now).max(start_at) + lead, false)
            } else if !self.scheduled_any {
                (start_at.max(now), false)
            } else {
                (self.prev_end, true)
            };
            self.pending.pop_front();
            self.schedule_move(m, earliest, think);
        }
        if self.pending.is_empty() && self.scheduled_any && !self.input_open {
            self.finish_game();
        }
    }

    fn finish_game(&mut self) {
        if self
            .clock_events
            .iter()
            .any(|(_, e)| matches!(e, ClockEvent::Stop))
        {
            return;
        }
        let stop_at = self.clock_events.back().map_or(self.prev_end, |(t, _)| *t);
        self.clock_events.push_back((stop_at, ClockEvent::Stop));
        if self.cfg.result_piece {
            let code = match self.result.as_deref() {
                Some("1-0") => Some(PieceCode::WhiteWins),
                Some("0-1") => Some(PieceCode::BlackWins),
                Some("1/2-1/2") => Some(PieceCode::Draw),
                _ => None,
            };
            let board = self.pos.board();
            let empty = [
                Square::D4,
                Square::E4,
                Square::D5,
                Square::E5,
                Square::C4,
                Square::F5,
            ]
            .into_iter()
            .find(|sq| board.piece_at(*sq).is_none());
            if let (Some(code), Some(sq)) = (code, empty) {
                let at = self.prev_end + self.pace.delay(&mut self.rng, 1500, 4000);
                self.timeline.schedule(at, Action::Place(sq, code.byte()));
                self.prev_end = at;
            }
        }
    }

    /// Plan a move through the handling model and put its actions on the timeline.
    fn schedule_move(&mut self, m: Move, earliest: Duration, think: bool) {
        let think_time = if think {
            noise::think_time(&mut self.rng, &self.pace)
        } else {
            Duration::ZERO
        };
        let (pre, pre_len) =
            noise::before_move(&self.pos, &m, &self.cfg.noise, &self.pace, &mut self.rng);
        for a in &pre {
            self.timeline.schedule(earliest + a.at, a.action);
        }
        let settle = if pre.is_empty() {
            Duration::ZERO
        } else {
            pre_len + self.pace.delay(&mut self.rng, 100, 300)
        };
        let start = earliest + think_time.max(settle);
        let style = self.cfg.styles.choose(&m, &mut self.rng);
        let plan = plan_move(&self.pos, &m, style, &self.pace, &mut self.rng);
        for a in &plan {
            self.timeline.schedule(start + a.at, a.action);
        }
        let last = start + plan.last().map_or(Duration::ZERO, |a| a.at);

        let mover = self.pos.turn();
        let san = SanPlus::from_move(self.pos.clone(), m).to_string();
        let uci = UciMove::from_standard(m).to_string();
        self.pos.play_unchecked(m);
        let after = Physical::from_board(self.pos.board());
        for a in noise::after_move(&after, &m, &self.cfg.noise, &mut self.rng) {
            self.timeline.schedule(last + a.at, a.action);
        }
        if let Some(clock) = self.board.clock_mut() {
            let side = clock.side_of(mover.is_white());
            if !self.scheduled_any {
                self.clock_events
                    .push_back((earliest, ClockEvent::Start(side)));
            }
            let press = last + self.pace.delay(&mut self.rng, 150, 500);
            let press = self
                .clock_events
                .back()
                .map_or(press, |(t, _)| press.max(*t));
            self.clock_events
                .push_back((press, ClockEvent::Press(side)));
        }
        self.scheduled_any = true;
        self.ply += 1;
        let board =
            RawBoard(after.to_hardware(self.cfg.rotated, self.cfg.occupancy_only)).to_text();
        let fen = Fen::from_position(&self.pos, EnPassantMode::Legal).to_string();
        let report = MoveReport {
            ply: self.ply,
            san,
            uci,
            board,
            fen,
            style,
            completed_at: last,
        };
        self.awaiting.push_back((last, report));
        self.prev_end = self.prev_end.max(last);
    }

    /// The last scan equals what the sensor would read now and no misread is pending.
    fn stable(&self) -> bool {
        let hw = self
            .timeline
            .board()
            .to_hardware(self.cfg.rotated, self.cfg.occupancy_only);
        self.timeline.misreads_pending() == 0 && *self.scanner.last() == hw
    }

    /// End of the next scan that can report something.
    fn scan_due(&self) -> Option<Duration> {
        if !self.awaiting.is_empty() || !self.stable() {
            return Some(self.scanner.scan_end());
        }
        let next = self.timeline.next_action()?;
        let end = self.scanner.scan_end();
        if next < end {
            return Some(end);
        }
        let period = self.scanner.config().period;
        let n = (next - self.scanner.scan_start()).as_nanos() / period.as_nanos();
        Some(self.scanner.scan_start() + period * (n as u32 + 1))
    }

    fn advance_to(&mut self, now: Duration) {
        let now = now.max(self.now);
        let mut cursor = self.now;
        loop {
            let t_press = self.clock_events.front().map(|(t, _)| *t);
            let t_scan = self.scan_due();
            let t_board = self.board.next_due(cursor);
            let Some(t) = [t_press, t_scan, t_board].into_iter().flatten().min() else {
                break;
            };
            if t > now {
                break;
            }
            cursor = t.max(cursor);
            if t_press == Some(t) {
                let (_, ev) = self.clock_events.pop_front().expect("front exists");
                if let Some(clock) = self.board.clock_mut() {
                    match ev {
                        ClockEvent::Start(side) => clock.start(cursor, side),
                        ClockEvent::Press(side) => clock.press(cursor, side),
                        ClockEvent::Stop => clock.stop(cursor),
                    }
                }
                self.board.clock_changed(cursor);
            } else if t_scan == Some(t) {
                self.run_scan(t);
            } else {
                self.board.run_due(cursor, &mut self.out);
            }
        }
        self.now = now;
    }

    fn run_scan(&mut self, end: Duration) {
        // Skip quiet scans: the scan ending at `end` is the next one that can change.
        let period = self.scanner.config().period;
        if end >= period {
            self.scanner.skip_idle_until(end - period);
        }
        let scan_start = self.scanner.scan_start();
        let changes = self.scanner.scan(&mut self.timeline);
        for (index, code) in changes {
            self.board.field_update(index, code, &mut self.out);
            if let Some(log) = &mut self.scan_log {
                log.push((end, index, code));
            }
        }
        while let Some((last, _)) = self.awaiting.front() {
            if *last > scan_start {
                break;
            }
            let (_, report) = self.awaiting.pop_front().expect("front exists");
            self.reports.push_back(report);
        }
    }
}
