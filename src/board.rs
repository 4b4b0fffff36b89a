//! One board's pure state: the mirror, the inference engine fed from it, and the status
//! they add up to. Sans-IO: the worker hands it messages and the time.

use std::time::Duration;

use boardcast_protocol::Message;
use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::{Color, EnPassantMode, KnownOutcome, Position, Role};

use crate::clock::{ClockTracker, MoveTime};
use crate::game::{GameRecord, write_pgn};
use crate::inference::{Choice, Engine, EngineConfig, EngineError, Event};
use crate::mirror::Mirror;

/// What the game on a board is doing, as consumers see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum GameState {
    /// Waiting for the next move.
    InPlay,
    /// A move is under way (e.g. king moved, rook not yet).
    Pending {
        /// The legal moves the board is part-way to.
        candidates: Vec<String>,
    },
    /// The board matches no legal continuation.
    Irregular {
        /// What to put where to restore the last legal position (`Qd1`, `-e4`).
        restore: Vec<String>,
    },
    /// Several move sequences explain the board; waiting for more evidence, or for the
    /// arbiter to pick one (`BoardCommand::Resolve`).
    Ambiguous {
        /// Each sequence's moves in SAN, separated by spaces.
        #[serde(default)]
        candidates: Vec<String>,
        /// The last recorded move the sequences replace (they start before it), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replaces: Option<String>,
    },
    /// The board's position cannot occur in a game.
    IllegalPosition {
        /// What is wrong with it.
        problems: Vec<String>,
    },
    /// The game is over.
    Ended,
}

/// The game as inferred so far, for the status and the outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameStatus {
    /// What the game is doing.
    pub state: GameState,
    /// Whether the board is read as turned 180°.
    pub rotated: bool,
    /// The position after the last recorded move.
    pub fen: String,
    /// The recorded moves in SAN.
    pub moves: Vec<String>,
    /// "1-0", "0-1", "1/2-1/2" or "*".
    pub result: String,
    /// The game as PGN.
    pub pgn: String,
    /// White's clock, `h:mm:ss`, once a clock is attached and its sides are known.
    pub clock_white: Option<String>,
    /// Black's clock, likewise.
    pub clock_black: Option<String>,
    /// Whose clock runs ("white" or "black"); `None` while it is stopped or unknown.
    #[serde(default)]
    pub clock_running: Option<String>,
}

/// What an operator (through the API) can ask of a board's game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardCommand {
    /// Set PGN tags (White, Black, Event, Round, …); they carry over to the next games.
    SetTags(Vec<(String, String)>),
    /// Enter a result the board cannot show, or clear it with `None`.
    SetResult(Option<KnownOutcome>),
    /// Accept the board's position as the game's (re-anchor).
    AcceptBoard,
    /// Declare the position on the board a new game.
    DeclareSetup,
    /// Record one of the sequences the engine reported as ambiguous (the arbiter's pick,
    /// from the scoresheets), or moves the arbiter enters from the scoresheets for an
    /// irregular board, then explain the board from there.
    Resolve(Choice),
    /// Replace the recorded moves from ply `from` (1-based; the ply after the last
    /// recorded adds them) on by `moves` (SAN, from the scoresheets), when the board
    /// follows from them: a move recorded wrongly before the board stopped, or moves made
    /// and taken back while it went unread (see `Engine::amend`).
    Amend {
        /// The 1-based ply of the first recorded move to replace.
        from: usize,
        /// The moves played from there, in SAN.
        moves: Vec<String>,
    },
    /// Correct the piece a pawn promoted to at `ply` (occupancy-only boards).
    CorrectPromotion {
        /// The 1-based ply of the promotion.
        ply: usize,
        /// The piece it became.
        role: Role,
    },
}

/// The longest time a board may go unread in play without a remark in its game: a move
/// made and taken back is four hand actions (lift, place, lift, place back), each
/// read in a scan of its own, which take people more than two seconds; a shorter gap
/// (a USB glitch, a port reopened at once) cannot hide one.
const UNREAD_NOTED_OVER: Duration = Duration::from_secs(2);

/// How the remark on a board that went unread in play begins (see `unread_note`), for
/// whoever reads the game's remarks.
pub const UNREAD_REMARK: &str = "board not read for";

/// The remark for the arbiter on a board that went unread for `gap` in play: the board
/// read after it shows no move made and taken back meanwhile.
fn unread_note(gap: Duration) -> String {
    format!(
        "{UNREAD_REMARK} {} s: a move made and taken back meanwhile leaves no trace; \
         check the scoresheet",
        gap.as_secs()
    )
}

/// Mirror plus inference for one board.
#[derive(Debug)]
pub struct BoardCore {
    mirror: Mirror,
    engine: Engine,
    state: GameState,
    finished: Vec<String>,
    clock: ClockTracker,
    /// The time of the latest input, for events that carry no time of their own.
    now: Duration,
    /// When the link was last heard before it went down, until the next dump.
    heard: Option<Duration>,
    /// When the link was last heard with the board resting on the last recorded move for
    /// a settle window (see `rest_heard`): what a restart takes as last heard.
    rest_heard: Option<Duration>,
    /// Since when nothing was read (a lost link: when it was last heard; a restart: the
    /// last input journalled), until the next dump, which says for how long.
    unread_from: Option<Duration>,
}

impl BoardCore {
    /// A board whose engine uses `config`.
    pub fn new(config: EngineConfig) -> Self {
        BoardCore {
            mirror: Mirror::default(),
            engine: Engine::new(config),
            state: GameState::InPlay,
            finished: Vec::new(),
            clock: ClockTracker::default(),
            now: Duration::ZERO,
            heard: None,
            rest_heard: None,
            unread_from: None,
        }
    }

    /// The mirror.
    pub fn mirror(&self) -> &Mirror {
        &self.mirror
    }

    /// The game record as inferred so far.
    pub fn game(&self) -> &GameRecord {
        self.engine.game()
    }

    /// Applies a message at `now`; returns whether the mirror or the clock changed.
    ///
    /// The engine only sees complete boards: field updates before the first dump
    /// describe squares of a board we do not know yet.
    pub fn on_message(&mut self, message: &Message, now: Duration) -> bool {
        self.now = now;
        match message {
            Message::Version { major: 1, minor: 0 } => self.adopt_occupancy_only(),
            Message::ClockTime(times) => {
                tracing::trace!(?times, "clock reading");
                let before = self.clock_times();
                let note = self.clock.on_times(times, now);
                self.annotate(note);
                return self.clock_times() != before;
            }
            _ => {}
        }
        let changed = self.mirror.apply(message);
        // The host asks for a dump when it starts reading and after trouble: what the
        // board did before it is unknown.
        let dump = matches!(message, Message::BoardDump(_));
        if dump {
            let heard = self.heard.take();
            if changed {
                self.engine.updates_lost(now, heard);
            }
            self.note_unread(now);
        }
        if self.mirror.is_complete() && (changed || dump) {
            self.engine.observe(self.mirror.board(), now);
        }
        changed
    }

    /// The link went down (the port failed or the board fell silent); it was last heard
    /// at `heard`, so the board stood as read until then. The earliest such time since
    /// the last dump counts: nothing was read after it.
    pub fn link_lost(&mut self, heard: Duration) {
        self.engine.link_down();
        self.clock.unread();
        self.heard = Some(self.heard.map_or(heard, |h| h.min(heard)));
        self.unread_from = Some(self.unread_from.map_or(heard, |u| u.min(heard)));
    }

    /// The daemon was away and this core was restored from its journal: nothing was read
    /// meanwhile, as with a lost link (the fresh dump that follows is read as after lost
    /// updates). The board was last heard, as far as the journal knows, when a rest was
    /// last heard (see `rest_heard`): a move read whole before the daemon went away is
    /// then no slide cut off.
    pub fn restarted(&mut self) {
        self.engine.link_down();
        self.clock.unread();
        if let Some(heard) = self.rest_heard {
            self.heard = Some(self.heard.map_or(heard, |h| h.min(heard)));
        }
        // Every change read was journalled: the board stood as last read at least until
        // the last input (or the last rest heard, if later).
        let from = self.rest_heard.map_or(self.now, |h| h.max(self.now));
        self.unread_from = Some(self.unread_from.map_or(from, |u| u.min(from)));
    }

    /// A dump read at `now`, the first after the board went unread (see `unread_from`)
    /// for longer than [`UNREAD_NOTED_OVER`] in a game in play: the game says so at its
    /// last move recorded before, for the arbiter to check the scoresheet there. Not
    /// before a game's first move: boards are unplugged and set up between rounds, and
    /// no one plays a move and its undoing before the game's first move is read.
    /// Called before the dump is observed, so the moves it shows come after the remark.
    fn note_unread(&mut self, now: Duration) {
        let Some(from) = self.unread_from.take() else {
            return;
        };
        let gap = now.saturating_sub(from);
        let game = self.engine.game();
        let ply = game.ply_count();
        if gap <= UNREAD_NOTED_OVER || game.is_over() || ply == 0 {
            return;
        }
        if let Err(e) = self.engine.add_comment(ply, unread_note(gap)) {
            tracing::debug!("unread remark at ply {ply} dropped: {e}");
        }
    }

    /// Whether hearing the link at `at` (any frame, a keep-alive answer too) tells
    /// something not yet known: that the board's rest on the last recorded move was
    /// read for a settle window. Only such hearings are worth journalling (see
    /// `rest_heard`), about one a move.
    pub fn wants_heard(&self, at: Duration) -> bool {
        self.engine
            .rest_read_at()
            .is_some_and(|from| from <= at && self.rest_heard.is_none_or(|h| h < from))
    }

    /// The link heard the board at `at`, resting on the last recorded move for a settle
    /// window (see `wants_heard`). Nothing changes until the daemon restarts: a lost
    /// link tells itself when the board was last heard.
    pub fn rest_heard(&mut self, at: Duration) {
        self.rest_heard = Some(at);
    }

    /// Runs the engine's timers.
    pub fn tick(&mut self, now: Duration) {
        self.now = now;
        if self.engine.next_deadline().is_some_and(|at| at <= now) {
            self.engine.tick(now);
        }
    }

    /// When `tick` next has work.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.engine.next_deadline()
    }

    /// The next engine event, with the game state updated for it.
    pub fn poll_event(&mut self) -> Option<Event> {
        let event = self.engine.poll_event()?;
        self.state = match &event {
            Event::Pending { candidates } => GameState::Pending {
                candidates: candidates.sans().to_vec(),
            },
            Event::Irregular { restore, .. } => GameState::Irregular {
                restore: restore.iter().map(ToString::to_string).collect(),
            },
            Event::Ambiguous {
                candidates,
                replaces,
                ..
            } => GameState::Ambiguous {
                candidates: candidates.clone(),
                replaces: replaces.clone(),
            },
            Event::IllegalPosition { problems } => GameState::IllegalPosition {
                problems: problems.iter().map(|p| format!("{p:?}")).collect(),
            },
            Event::GameEnded { .. } => GameState::Ended,
            Event::MoveMade { .. }
            | Event::MoveCorrected { .. }
            | Event::MovesRetracted { .. }
            | Event::NewGame { .. }
            | Event::Reanchored { .. } => self.settled_state(),
            Event::TouchMove { .. }
            | Event::DrawClaimable(_)
            | Event::OrientationChanged { .. } => self.state.clone(),
        };
        match &event {
            Event::MoveMade { ply, .. } => {
                let mover = self.engine.game().position_at(ply - 1).map(|p| p.turn());
                if let Some(mover) = mover {
                    let note = self.clock.on_move(*ply, mover, self.now);
                    self.annotate(note);
                }
            }
            Event::MovesRetracted { ply, .. } => self.clock.on_retract(*ply),
            Event::NewGame { .. } => self.clock.new_game(),
            _ => {}
        }
        // The game a new game replaced is archived as the engine had it then, so a last
        // move that came in the same step as the new game is not lost.
        if let Event::NewGame { .. } = event
            && let Some(game) = self.engine.take_replaced_game()
            && game.ply_count() > 0
        {
            self.finished.push(write_pgn(&game));
        }
        Some(event)
    }

    /// The PGN of each game that ended (the board set up for a new one) since the last
    /// call, oldest first.
    pub fn take_finished_games(&mut self) -> Vec<String> {
        std::mem::take(&mut self.finished)
    }

    /// Carries out an operator's command; events follow through `poll_event`.
    pub fn apply(&mut self, command: BoardCommand) -> Result<(), EngineError> {
        match command {
            BoardCommand::SetTags(tags) => {
                for (name, value) in &tags {
                    self.engine.set_tag(name, value);
                }
            }
            BoardCommand::SetResult(outcome) => self.engine.set_result(outcome),
            BoardCommand::AcceptBoard => self.engine.accept_board()?,
            BoardCommand::DeclareSetup => self.engine.declare_setup()?,
            BoardCommand::Resolve(choice) => self.engine.resolve(&choice)?,
            BoardCommand::Amend { from, moves } => self.engine.amend(from, &moves)?,
            BoardCommand::CorrectPromotion { ply, role } => {
                self.engine.correct_promotion(ply, role)?
            }
        }
        Ok(())
    }

    /// The candidate sequences of the ambiguity still open (see
    /// `BoardCommand::Resolve`), even when the board has gone irregular since.
    pub fn open_ambiguity(&self) -> Vec<String> {
        self.engine.open_ambiguity()
    }

    /// Whether the open ambiguity's candidates replace the last recorded move.
    pub fn ambiguity_replaces_last(&self) -> bool {
        self.engine.ambiguity_replaces_last()
    }

    /// The game as it stands.
    pub fn game_status(&self) -> GameStatus {
        let record = self.engine.game();
        GameStatus {
            state: self.state.clone(),
            rotated: self.engine.is_rotated(),
            fen: Fen::from_position(record.position(), EnPassantMode::Legal).to_string(),
            moves: record.sans(),
            result: record.status().result_str().to_string(),
            pgn: write_pgn(record),
            clock_white: self.clock.time_of(Color::White),
            clock_black: self.clock.time_of(Color::Black),
            clock_running: self.clock.running().map(|c| c.to_string()),
        }
    }

    fn clock_times(&self) -> (Option<String>, Option<String>) {
        (
            self.clock.time_of(Color::White),
            self.clock.time_of(Color::Black),
        )
    }

    /// Writes a mover's clock time into the record.
    fn annotate(&mut self, note: Option<MoveTime>) {
        if let Some(MoveTime { ply, text }) = note
            && let Err(e) = self.engine.annotate(ply, Some(text))
        {
            tracing::debug!("clock annotation for ply {ply} dropped: {e}");
        }
    }

    fn settled_state(&self) -> GameState {
        if self.engine.game().is_over() {
            GameState::Ended
        } else {
            GameState::InPlay
        }
    }

    /// A board that reports version 1.0 is a DGT Pegasus, which senses occupancy only
    /// (reference §1.5, §2.4). Switch before any move is recorded; later it would rewrite
    /// history, so then it is only logged.
    fn adopt_occupancy_only(&mut self) {
        if self.engine.config().occupancy_only {
            return;
        }
        if self.engine.game().ply_count() == 0 {
            tracing::info!("board reports version 1.0 (a Pegasus): reading occupancy only");
            let config = EngineConfig {
                occupancy_only: true,
                ..self.engine.config().clone()
            };
            self.engine = Engine::new(config);
        } else {
            tracing::warn!("board reports version 1.0 (a Pegasus) mid-game; pass --occupancy-only");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use boardcast_protocol::{Message, RawBoard};
    use shakmaty::{Chess, Position, san::San};

    use super::BoardCore;
    use crate::inference::EngineConfig;

    /// The board's dump text (index 0 = a8 … 63 = h1) of a position.
    fn dump(position: &Chess) -> Message {
        let text: String = (0..64)
            .map(|i| {
                let square = shakmaty::Square::new(((7 - i / 8) * 8 + i % 8) as u32);
                position.board().piece_at(square).map_or('.', |p| p.char())
            })
            .collect();
        Message::BoardDump(RawBoard::from_text(&text).expect("board text"))
    }

    #[test]
    fn a_restart_takes_the_last_rest_heard_as_when_the_board_was_last_heard() {
        let (mut core, _) = after_e4();
        assert!(
            !core.wants_heard(Duration::from_secs(2)),
            "e4 not yet rested"
        );
        let heard = Duration::from_secs(3);
        assert!(core.wants_heard(heard));
        core.rest_heard(heard);
        assert!(
            !core.wants_heard(heard + Duration::from_secs(1)),
            "once a rest"
        );
        // The daemon went away: the dump read next is after lost updates, the board
        // standing as read until then (e4 rested, read: no slide cut off).
        core.restarted();
        assert_eq!(core.heard, Some(heard));
    }

    /// A PGN on one line (its movetext wraps).
    fn flat(pgn: &str) -> String {
        pgn.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// A core that read the start position at 1 s and recorded e4 at 2 s.
    fn after_e4() -> (BoardCore, Chess) {
        let mut core = BoardCore::new(EngineConfig::default());
        let mut position = Chess::default();
        core.on_message(&dump(&position), Duration::from_secs(1));
        play(&mut core, &mut position, "e4", Duration::from_secs(2));
        assert_eq!(core.game_status().moves, ["e4"]);
        (core, position)
    }

    /// Plays `san` on `position` and shows the core its board at `at`, then a second of
    /// rest.
    fn play(core: &mut BoardCore, position: &mut Chess, san: &str, at: Duration) {
        let mv = san
            .parse::<San>()
            .expect("san")
            .to_move(position)
            .expect("legal");
        position.play_unchecked(mv);
        core.on_message(&dump(position), at);
        core.tick(at + Duration::from_secs(1));
    }

    #[test]
    fn a_board_unread_in_play_is_remarked_at_the_last_move_before() {
        let (mut core, position) = after_e4();
        core.link_lost(Duration::from_millis(3500));
        core.on_message(&dump(&position), Duration::from_millis(9900));
        let pgn = flat(&core.game_status().pgn);
        assert!(
            pgn.contains("1. e4 {board not read for 6 s: a move made and taken back"),
            "{pgn}"
        );
        // Said once: a later dump without a gap adds nothing.
        core.on_message(&dump(&position), Duration::from_secs(11));
        assert_eq!(core.game_status().pgn.matches("not read").count(), 1);
    }

    #[test]
    fn a_short_gap_is_not_remarked() {
        let (mut core, position) = after_e4();
        core.link_lost(Duration::from_millis(3500));
        core.on_message(&dump(&position), Duration::from_millis(5500));
        assert!(!core.game_status().pgn.contains("not read"));
    }

    #[test]
    fn a_restart_is_remarked_from_the_last_input() {
        let (mut core, position) = after_e4();
        core.rest_heard(Duration::from_secs(3));
        core.tick(Duration::from_secs(4));
        core.restarted();
        core.on_message(&dump(&position), Duration::from_secs(30));
        let pgn = flat(&core.game_status().pgn);
        assert!(pgn.contains("1. e4 {board not read for 26 s:"), "{pgn}");
    }

    #[test]
    fn a_gap_before_the_first_move_is_not_remarked() {
        let mut core = BoardCore::new(EngineConfig::default());
        let position = Chess::default();
        core.on_message(&dump(&position), Duration::from_secs(1));
        core.link_lost(Duration::from_secs(1));
        core.on_message(&dump(&position), Duration::from_secs(5));
        assert!(!core.game_status().pgn.contains("not read"));
    }

    #[test]
    fn a_gap_after_the_game_ended_is_not_remarked() {
        let mut core = BoardCore::new(EngineConfig::default());
        let mut position = Chess::default();
        let mut now = Duration::from_secs(1);
        core.on_message(&dump(&position), now);
        for san in ["f3", "e5", "g4", "Qh4#"] {
            now += Duration::from_secs(1);
            play(&mut core, &mut position, san, now);
            now += Duration::from_secs(1);
        }
        assert_eq!(core.game_status().result, "0-1");
        core.link_lost(now);
        core.on_message(&dump(&position), now + Duration::from_secs(20));
        assert!(!core.game_status().pgn.contains("not read"));
    }

    #[test]
    fn a_last_move_and_the_new_game_in_one_step_are_both_archived() {
        let mut core = BoardCore::new(EngineConfig::default());
        let mut position = Chess::default();
        let mut now = Duration::from_secs(1);
        core.on_message(&dump(&position), now);
        for san in ["f3", "e5", "g4", "Qh4#"] {
            now += Duration::from_secs(1);
            play(&mut core, &mut position, san, now);
            now += Duration::from_secs(1);
            // The last move's events wait in the engine while the board is set up again.
            if san != "Qh4#" {
                while core.poll_event().is_some() {}
            }
        }
        now += Duration::from_secs(1);
        core.on_message(&dump(&Chess::default()), now);
        now += Duration::from_secs(1);
        core.tick(now);
        while core.poll_event().is_some() {}
        let finished = core.take_finished_games();
        assert_eq!(finished.len(), 1, "{finished:?}");
        assert!(finished[0].contains("2. g4 Qh4#"), "{}", finished[0]);
        assert!(core.game_status().moves.is_empty());
    }
}
