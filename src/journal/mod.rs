//! Crash safety: every input a board core receives is journalled, so that after a crash
//! or a power loss replaying the journal rebuilds the core exactly, with every finished
//! game, the live game and its clocks (`run --journal DIR`).
//!
//! The journal records the core's inputs (board messages, timer runs, operator commands)
//! with the core's time, because the core is a deterministic function of them; the
//! moves it committed are recorded too, as a check on the replay and as the points
//! where the file is fsync'd. `JournaledCore` is the board core with its journal: the
//! live worker and the replay at start both feed it through `feed`, so there is one way
//! to change a core's state.

pub mod file;
pub mod format;

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::Path;
use std::time::Duration;

use boardcast_protocol::Message;

use crate::board::{BoardCommand, BoardCore, GameStatus};
use crate::game::GameRecord;
use crate::inference::{EngineConfig, EngineError, Event};
use crate::mirror::Mirror;
use crate::recording::EngineSettings;
use file::JournalFile;
use format::{Entry, Record};

/// A board core whose inputs are journalled, with its time running on from the
/// journal's after a restart.
#[derive(Debug)]
pub struct JournaledCore {
    core: BoardCore,
    journal: Option<JournalFile>,
    /// Events the core emitted, drained right after each input.
    events: VecDeque<Event>,
    /// Added to the caller's time to get the core's: the caller's clock starts at zero
    /// with each daemon, the core's runs on past the last journalled record.
    offset: Duration,
    board: usize,
}

/// What replaying a journal rebuilt.
#[derive(Debug)]
pub struct Rebuilt {
    /// The core, as it was after the last record.
    pub core: BoardCore,
    /// The engine settings it was rebuilt with.
    pub config: EngineConfig,
    /// The time of the last record.
    pub last_at: Duration,
    /// Committed changes the journal recorded.
    pub committed: usize,
    /// The first committed change the replay did not reproduce: (index, journalled,
    /// replayed, or "nothing").
    pub diverged: Option<(usize, String, String)>,
}

impl JournaledCore {
    /// A core without a journal.
    pub fn unjournaled(config: EngineConfig, board: usize) -> Self {
        JournaledCore {
            core: BoardCore::new(config),
            journal: None,
            events: VecDeque::new(),
            offset: Duration::ZERO,
            board,
        }
    }

    /// Board `board`'s core, restored from its journal in `dir` (if given) and journalling
    /// from now on. A journal that cannot be used is logged and the board runs without.
    pub fn open(config: EngineConfig, dir: Option<&Path>, board: usize, port: &Path) -> Self {
        Self::open_named(config, dir, board, &file::file_name(board, port))
    }

    /// Board `board`'s core, restored from the journal file `name` in `dir` (if given),
    /// as [`JournaledCore::open`] does.
    pub fn open_named(config: EngineConfig, dir: Option<&Path>, board: usize, name: &str) -> Self {
        let Some(dir) = dir else {
            return Self::unjournaled(config, board);
        };
        let mut rebuilder = Rebuilder::new(config.clone());
        match file::open_named(dir, name, |entry| rebuilder.feed(entry)) {
            Ok(opened) => Self::restore(rebuilder.finish(), opened, board),
            Err(e) => {
                tracing::error!(board, "{e}; running without a journal");
                Self::unjournaled(config, board)
            }
        }
    }

    /// Board `board`'s core `rebuilt` from the journal `opened`, journalling on into it.
    /// The core's time goes on from the last record plus `opened.idle`, the time the
    /// daemon was away.
    ///
    /// The journal is rebuilt with the daemon's engine settings, whatever an earlier run
    /// had (the operator may have restarted with corrected options, and every board of a
    /// daemon runs with the same ones); they are named in the journal, for `boardcast
    /// replay` to rebuild it as this daemon did.
    pub fn restore(rebuilt: Rebuilt, opened: file::Opened, board: usize) -> Self {
        let status = rebuilt.core.game_status();
        tracing::info!(
            board,
            journal = %opened.file.path().display(),
            "restored {} records: {} committed changes, current game {} plies",
            opened.records,
            rebuilt.committed,
            status.moves.len()
        );
        if let Some((index, journalled, replayed)) = &rebuilt.diverged {
            tracing::error!(
                board,
                "journal replay differs at committed change {}: journal has `{journalled}`, replay gave `{replayed}` (was the daemon upgraded mid-game?)",
                index + 1
            );
        }
        // The core's clock goes on from the last record plus the time the daemon was
        // away, so its timers and clock readings keep their order.
        let offset = if opened.records == 0 {
            Duration::ZERO
        } else {
            micros(rebuilt.last_at + opened.idle + Duration::from_millis(1))
        };
        let records = opened.records;
        let mut restored = JournaledCore {
            core: rebuilt.core,
            journal: Some(opened.file),
            events: VecDeque::new(),
            offset,
            board,
        };
        restored.comment(&EngineSettings::line(&rebuilt.config));
        if records > 0 {
            // Journalled like any input, so a later restore replays it in its place.
            let _ = restored.input(offset, Record::Restarted);
        }
        restored
    }

    /// The mirror.
    pub fn mirror(&self) -> &Mirror {
        self.core.mirror()
    }

    /// The game record as inferred so far, remarks included.
    pub fn game(&self) -> &GameRecord {
        self.core.game()
    }

    /// Applies a board message at the caller's `now`; returns whether the mirror or the
    /// clock changed.
    pub fn on_message(&mut self, message: &Message, now: Duration) -> bool {
        let at = self.core_time(now);
        self.input(at, Record::Message(message.clone()))
            .unwrap_or(false)
    }

    /// Runs the core's timers if one is due at the caller's `now`.
    pub fn tick(&mut self, now: Duration) {
        let at = self.core_time(now);
        if self.core.next_deadline().is_some_and(|d| d <= at) {
            let _ = self.input(at, Record::Tick);
        }
    }

    /// The link went down, last heard at the caller's `heard`, as the worker learns at
    /// `now` (see `BoardCore::link_lost`).
    pub fn link_lost(&mut self, heard: Duration, now: Duration) {
        let at = self.core_time(now);
        let heard = self.core_time(heard).min(at);
        let _ = self.input(at, Record::LinkLost(heard));
    }

    /// The link heard the board at the caller's `heard` (any frame, a keep-alive answer
    /// too), as the worker learns at `now`. Journalled only when it proves a rest read
    /// that the journal does not show yet (see `BoardCore::wants_heard`), about once a
    /// move, so that a restart knows it.
    pub fn heard(&mut self, heard: Duration, now: Duration) {
        let at = self.core_time(now);
        let heard = self.core_time(heard).min(at);
        if self.core.wants_heard(heard) {
            let _ = self.input(at, Record::RestHeard(heard));
        }
    }

    /// When `tick` next has work, in the caller's time.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.core
            .next_deadline()
            .map(|d| d.saturating_sub(self.offset))
    }

    /// Carries out an operator's command at the caller's `now`; it is journalled and
    /// made durable first.
    pub fn apply(&mut self, command: BoardCommand, now: Duration) -> Result<(), EngineError> {
        let at = self.core_time(now);
        self.input(at, Record::Command(command)).map(|_| ())
    }

    /// The next event the core emitted.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Games that ended since the last call (restored ones included), oldest first.
    pub fn take_finished_games(&mut self) -> Vec<String> {
        self.core.take_finished_games()
    }

    /// The candidate sequences of the ambiguity still open.
    pub fn open_ambiguity(&self) -> Vec<String> {
        self.core.open_ambiguity()
    }

    /// Whether those candidates replace the last recorded move.
    pub fn ambiguity_replaces_last(&self) -> bool {
        self.core.ambiguity_replaces_last()
    }

    /// The game as it stands.
    pub fn game_status(&self) -> GameStatus {
        self.core.game_status()
    }

    /// Journals an input, gives it to the core, and journals what it committed; the
    /// file is synced when something was committed or the operator acted.
    fn input(&mut self, at: Duration, record: Record) -> Result<bool, EngineError> {
        self.write(at, &record);
        let mut emitted = Vec::new();
        let result = feed(&mut self.core, at, &record, &mut emitted);
        let mut sync = matches!(record, Record::Command(_));
        for event in emitted {
            if is_committed(&event) {
                self.write(at, &Record::Committed(event.to_string()));
                sync = true;
            }
            self.events.push_back(event);
        }
        if sync
            && let Some(journal) = &mut self.journal
            && let Err(e) = journal.sync()
        {
            self.stop_journal(&e);
        }
        result
    }

    fn write(&mut self, at: Duration, record: &Record) {
        if let Some(journal) = &mut self.journal {
            let entry = Entry {
                at,
                record: record.clone(),
            };
            if let Err(e) = journal.append(&entry) {
                self.stop_journal(&e);
            }
        }
    }

    fn comment(&mut self, comment: &str) {
        if let Some(journal) = &mut self.journal
            && let Err(e) = journal.append_comment(comment)
        {
            self.stop_journal(&e);
        }
    }

    /// A journal that cannot be written is given up; the board goes on.
    fn stop_journal(&mut self, error: &std::io::Error) {
        if let Some(journal) = self.journal.take() {
            tracing::error!(
                board = self.board,
                "journal {} stopped: {error}",
                journal.path().display()
            );
        }
    }

    /// The core's time for the caller's `now`, in whole microseconds as journalled, so
    /// the live core and a replay see the same times.
    fn core_time(&self, now: Duration) -> Duration {
        micros(now + self.offset)
    }
}

/// Gives one record to `core` and collects what it emitted. Both the live worker and
/// the replay go through here. Returns whether a message changed the mirror or clock,
/// or the outcome of a command.
pub fn feed(
    core: &mut BoardCore,
    at: Duration,
    record: &Record,
    emitted: &mut Vec<Event>,
) -> Result<bool, EngineError> {
    let result = match record {
        Record::Message(message) => Ok(core.on_message(message, at)),
        Record::Tick => {
            core.tick(at);
            Ok(false)
        }
        Record::Command(command) => core.apply(command.clone()).map(|()| true),
        Record::LinkLost(heard) => {
            core.link_lost(*heard);
            Ok(false)
        }
        Record::RestHeard(heard) => {
            core.rest_heard(*heard);
            Ok(false)
        }
        Record::Restarted => {
            core.restarted();
            Ok(false)
        }
        Record::Committed(_) => Ok(false),
    };
    // Drained at once so that what the core records (clock times, the archived PGN)
    // depends only on the inputs, not on when a caller gets round to polling.
    while let Some(event) = core.poll_event() {
        emitted.push(event);
    }
    result
}

/// Replays a journal's records, one at a time as they are read, into a fresh core, and
/// checks what the core commits against what the journal says it committed. Finished
/// games stay in the core for the caller to publish.
#[derive(Debug)]
pub struct Rebuilder {
    core: BoardCore,
    config: EngineConfig,
    last_at: Duration,
    /// Committed records seen so far.
    committed: usize,
    /// What the replay committed that no committed record has been checked against
    /// yet: the journal writes an input's committed records right after the input.
    unchecked: VecDeque<String>,
    diverged: Option<(usize, String, String)>,
}

impl Rebuilder {
    /// A fresh core to replay into.
    pub fn new(config: EngineConfig) -> Self {
        Rebuilder {
            core: BoardCore::new(config.clone()),
            config,
            last_at: Duration::ZERO,
            committed: 0,
            unchecked: VecDeque::new(),
            diverged: None,
        }
    }

    /// Replays the next record.
    pub fn feed(&mut self, entry: Entry) {
        self.last_at = entry.at;
        if let Record::Committed(journalled) = entry.record {
            let replayed = self.unchecked.pop_front();
            if self.diverged.is_none() && replayed.as_ref() != Some(&journalled) {
                let replayed = replayed.unwrap_or_else(|| "nothing".into());
                self.diverged = Some((self.committed, journalled, replayed));
            }
            self.committed += 1;
            return;
        }
        let mut emitted = Vec::new();
        // A command refused live is refused again here, the same way.
        let _ = feed(&mut self.core, entry.at, &entry.record, &mut emitted);
        self.unchecked.extend(
            emitted
                .iter()
                .filter(|e| is_committed(e))
                .map(|e| e.to_string().replace(['\n', '\r'], " ")),
        );
    }

    /// The core after the last record. The replay may have committed one more change
    /// than the journal recorded (its record was lost with a torn tail), never fewer or
    /// other ones.
    pub fn finish(self) -> Rebuilt {
        Rebuilt {
            core: self.core,
            config: self.config,
            last_at: self.last_at,
            committed: self.committed,
            diverged: self.diverged,
        }
    }
}

/// Every game a journal holds, as PGN, oldest first (`boardcast replay FILE.journal`);
/// a damaged end is left out, as at a restart.
pub fn replay(reader: impl BufRead, config: EngineConfig) -> std::io::Result<String> {
    let mut rebuilder = Rebuilder::new(config);
    let scanned = format::scan(reader, |entry| rebuilder.feed(entry))?;
    if let Some(damage) = &scanned.damage {
        tracing::warn!(
            "line {}: {}; replaying the {} records before it",
            damage.line,
            damage.reason,
            scanned.records
        );
    }
    let mut rebuilt = rebuilder.finish();
    let mut out: String = rebuilt.core.take_finished_games().concat();
    out.push_str(&rebuilt.core.game_status().pgn);
    Ok(out)
}

/// Events that change the game record: these are checked on replay and synced.
fn is_committed(event: &Event) -> bool {
    matches!(
        event,
        Event::MoveMade { .. }
            | Event::MoveCorrected { .. }
            | Event::MovesRetracted { .. }
            | Event::NewGame { .. }
            | Event::GameEnded { .. }
            | Event::Reanchored { .. }
    )
}

fn micros(at: Duration) -> Duration {
    Duration::from_micros(u64::try_from(at.as_micros()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests;
