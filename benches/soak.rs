//! Soak run: several boards play the corpus's real games back to back, with handling
//! noise, link gaps (updates lost, then a fresh dump) and daemon restarts (the core
//! thrown away and restored from its journal, written to a temporary directory, then the
//! board opened afresh), through the daemon's decoder and board core in simulated time
//! ([`boardcast::simulated`]), for hours of simulated time. Counts lost moves (source
//! moves missing from the record) and phantom moves (recorded moves not in the source),
//! lists every such case with its seed, game, ply and the nearest link gap or restart,
//! checks that every restored core equals the one that crashed, and samples the
//! process's resident memory. Beside that count (the record against the source up to
//! their first difference, so one missing stretch counts every later ply twice), the
//! record is aligned with the source ([`alignment`]): moves missing and moves not played,
//! and of the missing those no board reading could show (a round trip of which the daemon
//! read nothing but pieces lifted, as while the link or the daemon was down). A simulated arbiter answers each ambiguity the boards
//! report, [`ARBITER_DELAY`] later, with the one operator action for it (pick the
//! engine's candidate that the scoresheet shows); its interventions are counted apart.
//! The arbiter also reads, as long after a board is read again following a link gap or a
//! restart, the remark the game then has where the board went unread in play (`board
//! not read for N s`: a move made and taken back meanwhile leaves no trace) and checks
//! the scoresheet there, and as long after a move is recorded with a remark that it was
//! told from others by one reading of a piece taken at once (`read only once before it
//! was taken: check it`); `--no-unread-checks` leaves such remarks unread, to tell what
//! the engine records on its own.
//! A game is compared with its source once the board has read its end: a game ended
//! while the link is down waits on its final position for the link and the fresh dump.
//!
//! `cargo bench --bench soak -- [--boards N] [--hours H] [--seed S] [--no-gaps]
//! [--no-restarts] [--no-unread-checks] [--max-downtime MS] [--search-plies N] [--trace GAME-SEED[,GAME-SEED...]]` (defaults
//! 8, 8, 1, 10000, the engine's default; `--no-gaps` keeps the link up and
//! `--no-restarts` the daemon running, without a journal, to tell their shares apart;
//! `--max-downtime 0` restarts at once, so no move falls in a downtime; `--search-plies`
//! is `run --search-plies`; `--trace` prints what the core of the game with that seed
//! (as the cases list it, hex with `0x`) was shown and said, as scenario-file lines;
//! with several seeds, each line starts with its game's seed).
//!
//! Memory: the process's resident set, and the bytes the program has allocated and not
//! freed (a counting allocator), which tells a leak from the allocator keeping pages.

use std::collections::BTreeMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use alignment::{Stretch, Verdict};
use boardcast::board::{BoardCommand, GameState, UNREAD_REMARK};
use boardcast::inference::READ_ONCE_REMARK;
use boardcast::inference::{Choice, EngineConfig, Event};
use boardcast::journal::{JournaledCore, Rebuilder, file};
use boardcast::simulated::{Progress, Seen, SimulatedBoard};
use boardcast_simulator::rng::Rng;
use boardcast_simulator::{Noise, Script, SimConfig, Simulation, StyleMix};
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, Position};

const FILES: [&str; 2] = ["lichess_db_1000k", "twic1599_1000k"];
/// Probability per move of each noise kind, as in the corpus test.
const NOISE_RATE: f64 = 0.1;
/// Time between two link gaps on a board, drawn uniformly.
const GAP_EVERY: (u64, u64) = (2 * 60_000, 20 * 60_000);
/// Length of a link gap.
const GAP_LENGTH: (u64, u64) = (500, 8_000);
/// Time between two daemon restarts on a board (after the previous one is up).
const RESTART_EVERY: (u64, u64) = (20 * 60_000, 100 * 60_000);
/// Longest time the daemon is down at a restart (crash, service manager, start-up)
/// unless told otherwise; the shortest is a second (or the longest, if less).
const MAX_DOWNTIME: u64 = 10_000;
/// A gap or restart this close after a move's last action may have caused a difference
/// at that move (the settle window and the fresh dump come after it).
const NEAR: Duration = Duration::from_secs(3);
/// How long after a board reports an ambiguity or an irregular board the arbiter acts
/// on it from the scoresheets (`BoardCommand::Resolve` or `Amend`), and after a board is
/// read again following a link gap or a restart the arbiter reads the game's remarks.
const ARBITER_DELAY: Duration = Duration::from_secs(10);
/// Arbiter actions in a row at a game's end after which the harness gives the game up
/// (each should settle what it answers; the game's end waits on none of them).
const MAX_END_ACTIONS: usize = 4;
/// The port every journal is named after (one directory per run; boards by number).
const PORT: &str = "/dev/soak";
/// Boards advance together in slices of this much simulated time.
const SLICE: Duration = Duration::from_secs(60);
/// Memory is sampled this often (simulated).
const SAMPLE_EVERY: Duration = Duration::from_secs(600);

mod alignment;
mod counting;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

struct Game {
    name: String,
    script: Script,
    sans: Vec<String>,
}

fn load() -> Vec<Game> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus");
    let mut games = Vec::new();
    for file in FILES {
        let text = std::fs::read_to_string(dir.join(format!("{file}.pgn"))).expect("corpus");
        for (i, script) in Script::parse_pgn(&text)
            .expect("corpus parses")
            .into_iter()
            .enumerate()
        {
            let mut pos = script.start().clone();
            let sans = script
                .moves()
                .iter()
                .map(|m| {
                    shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string()
                })
                .collect();
            games.push(Game {
                name: format!("{file} game {}", i + 1),
                script,
                sans,
            });
        }
    }
    games
}

/// What interrupted a game: a link gap or a daemon restart, from when to when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Cause {
    Gap,
    Restart,
}

/// One board of the soak: its simulated board, the game it plays, its link gaps and
/// restarts.
struct Board {
    number: usize,
    run: SimulatedBoard,
    game: usize,
    seed: u64,
    games_started: usize,
    rng: Rng,
    /// When the link next goes down, and when it comes back.
    gap: (Duration, Duration),
    gaps: usize,
    restart_rng: Rng,
    /// When the daemon next restarts (never without `journal`).
    restart_at: Duration,
    restarts: usize,
    max_downtime: u64,
    engine: EngineConfig,
    /// Every game this board finished, as a hash of its PGN, in order: a restored core
    /// must give them all back.
    finished: Vec<u64>,
    /// Where the board's journal is written, with restarts on.
    journal: Option<PathBuf>,
    /// The current game's start, its moves' last actions and what interrupted it.
    started_at: Duration,
    completed: Vec<Duration>,
    /// The board after each move, as the board reads it, and every board the core was
    /// shown, with when: what the alignment needs to tell a stretch no reading showed.
    boards_after: Vec<String>,
    readings: Vec<(Duration, String)>,
    /// When each recorded move (by ply) was last written, made or corrected: a wrong
    /// entry may be written long after the move it stands for was played (moves read
    /// live, retracted after a later gap and recorded again otherwise).
    written: Vec<Duration>,
    interruptions: Vec<(Cause, Duration, Duration)>,
    /// When the arbiter, called by an ambiguity or an irregular board, reaches the board.
    arbiter: Option<Duration>,
    /// When the arbiter next reads the game's remarks for one saying the board went
    /// unread (after a link gap or a restart) or that one reading told a move (after it
    /// was recorded; never with `--no-unread-checks`), and the remarks read so far, by
    /// ply.
    unread_check: Option<Duration>,
    unread_checks_on: bool,
    unread_read: Vec<(usize, String)>,
    /// The last ambiguity whose candidates missed the moves played, as the game (by its
    /// number on this board) and the recorded moves it opened after: a carried ambiguity
    /// changes its candidates at every move but not the record, so it is one episode.
    missed: Option<(usize, usize)>,
    /// What the arbiter's last pick answered: the game (by its number on this board), the
    /// recorded moves, the candidates and the board. The same again means the pick did
    /// not stick.
    picked: Option<(usize, Vec<String>, Vec<String>, String)>,
    /// Why the game is given up, when the arbiter's actions do not settle it (a pick that
    /// did not stick, or too many actions at the game's end).
    given_up: Option<String>,
    /// Arbiter actions in a row at the game's end.
    end_actions: usize,
    /// The seeds of the games to trace (`--trace`), and where this board's trace stands.
    trace: Vec<u64>,
    traced: Trace,
}

/// What the trace of a game printed last: when, the board, and whether the next board
/// is a fresh dump (after the game's start, a link gap or a restart).
#[derive(Default)]
struct Trace {
    /// Put before each line when several games are traced (their seed), so one run's
    /// traces can be told apart.
    tag: String,
    at: Duration,
    board: String,
    dump_next: bool,
}

impl Trace {
    /// One line of the trace at `now`, as a scenario file writes it (`+<delay> ...`).
    fn line(&mut self, now: Duration, text: &str) {
        let delay = now.saturating_sub(self.at).as_millis();
        self.at = self.at.max(now);
        println!("{}+{delay}ms {text}", self.tag);
    }

    /// A comment line at `now`, without moving the trace's time.
    fn note(&self, now: Duration, text: &str) {
        println!("{}# {:.3} s: {text}", self.tag, now.as_secs_f64());
    }

    /// The board the core was shown: as the squares that changed, or whole after lost
    /// updates.
    fn observed(&mut self, now: Duration, board: String) {
        let squares = board.chars().zip(self.board.chars()).enumerate();
        let changes: Vec<String> = squares
            .filter(|(_, (new, old))| new != old)
            .map(|(i, (new, _))| {
                let square = format!("{}{}", (b'a' + (i % 8) as u8) as char, 8 - i / 8);
                match new {
                    '.' => format!("lift {square}"),
                    piece => format!("place {square} {piece}"),
                }
            })
            .collect();
        if self.dump_next || self.board.len() != board.len() {
            self.line(now, &format!("dump {board}"));
        } else if !changes.is_empty() {
            self.line(now, &changes.join("; "));
        }
        self.dump_next = false;
        self.board = board;
    }
}

/// Totals and the cases to report.
#[derive(Default)]
struct Tally {
    games: usize,
    plies: usize,
    lost: usize,
    phantom: usize,
    /// Each differing game's case line and the line of its alignment.
    cases: Vec<(String, String)>,
    /// The record aligned with the source: source plies missing (those never made on the
    /// board among them), recorded plies not played, and missing plies no board reading
    /// could show.
    missing: usize,
    never_made: usize,
    not_played: usize,
    invisible: usize,
    /// Differing games by what came near the first difference and whether the record
    /// stopped there or took another move: (games, lost, phantom).
    kinds: BTreeMap<(&'static str, &'static str), (usize, usize, usize)>,
    /// Restarts whose restored core differed from the one that crashed.
    restore_mismatches: Vec<String>,
    /// Journal records replayed at restarts, and the longest restore.
    replayed_records: usize,
    longest_restore: Duration,
    /// Ambiguities the arbiter resolved, and those whose candidates did not include the
    /// sequence played (left as they are: lost).
    interventions: usize,
    unresolved: usize,
    /// The games those ambiguities were in.
    unresolved_games: usize,
    /// Games given up because the arbiter's pick did not stick (the same board reported
    /// the same ambiguity after it) or the game's end took too many actions.
    picks_not_stuck: usize,
    end_actions_exceeded: usize,
    /// Irregular boards after lost updates on which the arbiter entered the moves from
    /// the scoresheet, the plies entered, and entries the engine refused.
    entries: usize,
    entered_plies: usize,
    entries_refused: usize,
    /// Such boards whose record had moves the scoresheet does not, amended from the
    /// first of them, the recorded plies replaced, and amendments the engine refused.
    amendments: usize,
    amended_plies: usize,
    amendments_refused: usize,
    /// Remarks that the board went unread in play the arbiter checked against the
    /// scoresheet; of those, records amended (plies entered, recorded plies replaced)
    /// and amendments the engine refused. Remarks that a move was told by one reading
    /// the arbiter checked, and records amended there (counted in the above too).
    read_once_checks: usize,
    read_once_amendments: usize,
    unread_checks: usize,
    unread_amendments: usize,
    unread_entered: usize,
    unread_replaced: usize,
    unread_refused: usize,
    /// Each such amendment or refusal: the board, game, remark and what changed.
    unread_cases: Vec<String>,
}

/// How many of the recorded moves, from the first, are the scoresheet's.
fn agreeing(recorded: &[String], played: &[String]) -> usize {
    recorded
        .iter()
        .zip(played)
        .take_while(|(recorded, played)| recorded == played)
        .count()
}

fn sim_config(seed: u64) -> SimConfig {
    SimConfig {
        seed,
        styles: StyleMix::realistic(),
        noise: Noise::all(NOISE_RATE),
        ..SimConfig::default()
    }
}

impl Board {
    fn next_gap(&mut self, after: Duration) {
        let start = after + self.rng.millis(GAP_EVERY.0, GAP_EVERY.1);
        self.gap = (start, start + self.rng.millis(GAP_LENGTH.0, GAP_LENGTH.1));
    }

    fn next_restart(&mut self, after: Duration) {
        if self.journal.is_some() {
            self.restart_at = after + self.restart_rng.millis(RESTART_EVERY.0, RESTART_EVERY.1);
        }
    }

    /// Restarts the daemon as after a crash: the core is restored from its journal the
    /// way the daemon does at start, after a downtime; the restored core must equal
    /// the one that crashed.
    fn restart(&mut self, tally: &mut Tally) {
        let Some(dir) = self.journal.clone() else {
            return;
        };
        let now = self.run.now();
        let downtime = self
            .restart_rng
            .millis(self.max_downtime.min(1_000), self.max_downtime);
        // What the daemon published before it died.
        self.take_finished();
        let before = (
            format!("{:?}", self.run.core().game_status()),
            self.run.core().mirror().board().to_text(),
        );
        let number = self.number;
        let engine = self.engine.clone();
        let started = Instant::now();
        let mut records = 0;
        self.run.restart(downtime, |idle| {
            let mut rebuilder = Rebuilder::new(engine);
            let mut opened =
                file::open(&dir, number, Path::new(PORT), |entry| rebuilder.feed(entry))
                    .expect("journal opens");
            // The journal was idle for the simulated downtime, not the wall time.
            opened.idle = idle;
            records = opened.records;
            JournaledCore::restore(rebuilder.finish(), opened, number)
        });
        tally.longest_restore = tally.longest_restore.max(started.elapsed());
        tally.replayed_records += records;
        let after = (
            format!("{:?}", self.run.core().game_status()),
            self.run.core().mirror().board().to_text(),
        );
        if before != after {
            tally.restore_mismatches.push(format!(
                "board {} seed {:#x} at {now:?}: before {before:?}, restored {after:?}",
                self.number, self.seed
            ));
        }
        let restored: Vec<u64> = self
            .run
            .core_mut()
            .take_finished_games()
            .iter()
            .map(|pgn| hash(pgn))
            .collect();
        if restored != self.finished {
            tally.restore_mismatches.push(format!(
                "board {} seed {:#x} at {now:?}: {} finished games restored, {} played, \
                 first differing: {:?}",
                self.number,
                self.seed,
                restored.len(),
                self.finished.len(),
                restored
                    .iter()
                    .zip(&self.finished)
                    .position(|(a, b)| a != b)
            ));
        }
        if self.tracing() {
            self.traced
                .note(now, &format!("restart, down for {downtime:?}"));
            self.traced.dump_next = true;
        }
        self.restarts += 1;
        self.interruptions
            .push((Cause::Restart, now, now + downtime));
        self.call_unread_check(now + downtime);
        self.next_restart(now + downtime);
    }

    /// The arbiter at the board: picks, among the candidates the board reported, the
    /// one the game's scoresheet has after the recorded moves (after all but the last,
    /// when the candidates replace it); without such a candidate the board is left as it
    /// is. A board still irregular after lost updates
    /// (a link gap or restart since the last recorded move was made) gets the moves the
    /// scoresheet has after the recorded ones (those finished so far) entered, through
    /// the same action, or, when the record has a wrong move, amended from it.
    fn arbitrate(&mut self, games: &[Game], tally: &mut Tally) {
        self.arbiter = None;
        // Nothing to do when the engine has explained the board itself since.
        let candidates = self.run.core().open_ambiguity();
        if candidates.is_empty() {
            self.enter_moves(games, tally);
            return;
        }
        let source = &games[self.game].sans;
        let plain = |san: &str| san.trim_end_matches(['+', '#']).to_string();
        let n = self.run.core().game_status().moves.len();
        // Candidates that replace the last recorded move start where it stands.
        let from = n.saturating_sub(usize::from(self.run.core().ambiguity_replaces_last()));
        let played: Vec<String> = source.iter().skip(from).map(|s| plain(s)).collect();
        let pick = candidates.iter().find(|c| {
            let moves: Vec<String> = c.split_whitespace().map(plain).collect();
            played.starts_with(&moves)
        });
        let Some(pick) = pick else {
            // Counted once per ambiguity, however often the arbiter is called to it and
            // however its candidates change while it is carried.
            let episode = (self.games_started, n);
            if self.missed != Some(episode) {
                tally.unresolved += 1;
                if self
                    .missed
                    .is_none_or(|(game, _)| game != self.games_started)
                {
                    tally.unresolved_games += 1;
                }
                self.missed = Some(episode);
            }
            self.enter_moves(games, tally);
            return;
        };
        if self.tracing() {
            self.traced.note(
                self.run.now(),
                &format!("arbiter picks {pick} of {candidates:?}"),
            );
        }
        let answered = (
            self.games_started,
            self.run.core().game_status().moves,
            candidates.clone(),
            self.run.core().mirror().board().to_text(),
        );
        if self.picked.as_ref() == Some(&answered) {
            tally.picks_not_stuck += 1;
            self.given_up = Some(format!(
                "the arbiter's pick {pick} of {candidates:?} did not stick"
            ));
            return;
        }
        self.picked = Some(answered);
        let choice = Choice::Moves(pick.split_whitespace().map(str::to_string).collect());
        match self.run.command(BoardCommand::Resolve(choice)) {
            Ok(()) => tally.interventions += 1,
            Err(e) => panic!(
                "board {}: the arbiter's pick {pick} refused: {e}",
                self.number
            ),
        }
    }

    /// Enters the moves finished since the record's last (from the scoresheet) on a board
    /// left irregular (or ambiguous, the truth not among the candidates) by updates lost
    /// after the last recorded move was made, when the record so far is the scoresheet's.
    /// When the record has a move the scoresheet does not (updates lost after the last
    /// move it has right: the board read then was explained wrongly), the arbiter amends
    /// the record instead: the recorded moves from the first wrong one are replaced by
    /// the scoresheet's moves finished so far (the engine refuses them unless the board
    /// follows from them).
    fn enter_moves(&mut self, games: &[Game], tally: &mut Tally) {
        let status = self.run.core().game_status();
        let n = status.moves.len();
        let source = &games[self.game].sans;
        // The recorded moves that are the scoresheet's.
        let right = agreeing(&status.moves, source);
        // Updates were lost after the last move the record has right was made.
        let made = right.checked_sub(1).and_then(|i| self.completed.get(i));
        let made = made.copied().unwrap_or(self.started_at);
        let lost_updates = self.interruptions.iter().any(|(_, _, end)| *end >= made);
        let stopped = matches!(
            status.state,
            GameState::Irregular { .. } | GameState::Ambiguous { .. }
        );
        if !stopped || !lost_updates {
            return;
        }
        let finished = self.completed.len().min(source.len());
        if right >= finished {
            return;
        }
        let moves = source[right..finished].to_vec();
        let amend = right < n;
        if self.tracing() {
            let action = match amend {
                true => format!("amends from ply {}:", right + 1),
                false => "enters".to_string(),
            };
            self.traced.note(
                self.run.now(),
                &format!("arbiter {action} {}", moves.join(" ")),
            );
        }
        let command = match amend {
            true => BoardCommand::Amend {
                from: right + 1,
                moves: moves.clone(),
            },
            false => BoardCommand::Resolve(Choice::Moves(moves.clone())),
        };
        match (self.run.command(command), amend) {
            (Ok(()), true) => {
                tally.amendments += 1;
                tally.amended_plies += n - right;
            }
            (Ok(()), false) => {
                tally.entries += 1;
                tally.entered_plies += moves.len();
            }
            (Err(_), true) => tally.amendments_refused += 1,
            (Err(_), false) => tally.entries_refused += 1,
        }
    }

    /// The board is read again from `at` on, after a link gap or a restart: the arbiter
    /// reads the game's remarks [`ARBITER_DELAY`] later (see `check_unread`).
    fn call_unread_check(&mut self, at: Duration) {
        if self.unread_checks_on {
            let due = at + ARBITER_DELAY;
            self.unread_check = Some(self.unread_check.map_or(due, |d| d.max(due)));
        }
    }

    /// The arbiter reads the game's remarks; a new one saying the board went unread in
    /// play (moves made and taken back meanwhile leave no trace) sends them to the
    /// scoresheet. When the record differs from the scoresheet's moves finished so far
    /// from the remark's move on (that move too: one read before the board went unread
    /// may have gone on), or misses more than the last of them (which may be settling),
    /// the arbiter amends it from the first difference with the scoresheet's moves.
    /// Differences before the remark's move are not the gap's and are left as they are.
    /// A board stopped is the arbiter's other actions' to answer first: the arbiter comes
    /// back as long after, or checks at once at the game's end (`at_end`).
    fn check_unread(&mut self, games: &[Game], tally: &mut Tally, at_end: bool) {
        self.unread_check = None;
        let remarks = self.remarks_to_check();
        let fresh = (remarks.iter())
            .filter(|r| !self.unread_read.contains(r))
            .min();
        let Some((remark, text)) = fresh.cloned() else {
            return;
        };
        let read_once = text.contains(READ_ONCE_REMARK);
        let status = self.run.core().game_status();
        let stopped = !matches!(
            status.state,
            GameState::InPlay | GameState::Pending { .. } | GameState::Ended
        );
        if stopped && !at_end {
            self.call_unread_check(self.run.now());
            return;
        }
        self.unread_read.extend(remarks);
        tally.unread_checks += 1;
        tally.read_once_checks += usize::from(read_once);
        if stopped {
            return;
        }
        let n = status.moves.len();
        let source = &games[self.game].sans;
        let right = agreeing(&status.moves, source);
        let finished = self.completed.len().min(source.len());
        let differs = right < n || finished > n + 1;
        if right + 1 < remark || right >= finished || !differs {
            return;
        }
        let moves = source[right..finished].to_vec();
        if self.tracing() {
            self.traced.note(
                self.run.now(),
                &format!(
                    "arbiter, reading the remark at ply {remark}, amends from ply {}: {}",
                    right + 1,
                    moves.join(" ")
                ),
            );
        }
        let command = BoardCommand::Amend {
            from: right + 1,
            moves: moves.clone(),
        };
        let case = format!(
            "board {} seed {:#x} {} at {:.1} s: remark at ply {remark}; from ply {}, recorded \
             {:?}, scoresheet {:?}",
            self.number,
            self.seed,
            games[self.game].name,
            self.run.now().as_secs_f64(),
            right + 1,
            status.moves[right..].join(" "),
            moves.join(" ")
        );
        match self.run.command(command) {
            Ok(()) => {
                tally.unread_amendments += 1;
                tally.read_once_amendments += usize::from(read_once);
                tally.unread_entered += moves.len();
                tally.unread_replaced += n - right;
                tally.unread_cases.push(format!("amended: {case}"));
            }
            Err(e) => {
                tally.unread_refused += 1;
                tally.unread_cases.push(format!("refused ({e}): {case}"));
            }
        }
    }

    /// The game's remarks the arbiter checks against the scoresheet, with their plies:
    /// that the board went unread in play, or that a move was told by one reading.
    fn remarks_to_check(&self) -> Vec<(usize, String)> {
        (self.run.core().game().moves().iter())
            .zip(1..)
            .flat_map(|(m, ply)| {
                (m.comments.iter())
                    .filter(|c| c.starts_with(UNREAD_REMARK) || c.contains(READ_ONCE_REMARK))
                    .map(move |c| (ply, c.clone()))
            })
            .collect()
    }

    /// Takes the games the core finished, as the daemon's worker does to publish them.
    fn take_finished(&mut self) {
        let taken = self.run.core_mut().take_finished_games();
        self.finished.extend(taken.iter().map(|pgn| hash(pgn)));
    }

    /// Starts game `index` of the corpus on this board.
    fn start(&mut self, games: &[Game], index: usize, base_seed: u64) {
        self.started_at = self.run.now();
        self.completed.clear();
        self.boards_after.clear();
        self.readings.clear();
        self.written.clear();
        self.interruptions.clear();
        self.arbiter = None;
        self.unread_check = None;
        self.unread_read.clear();
        self.picked = None;
        self.given_up = None;
        self.end_actions = 0;
        self.game = index;
        self.seed = base_seed << 32 | (self.number as u64) << 20 | self.games_started as u64;
        self.games_started += 1;
        let sim = Simulation::new(sim_config(self.seed), games[index].script.clone());
        self.run.replace_sim(sim);
        if self.tracing() {
            self.traced = Trace {
                tag: match self.trace.len() {
                    1 => String::new(),
                    _ => format!("{:#x} ", self.seed),
                },
                at: self.started_at,
                dump_next: true,
                ..Trace::default()
            };
            println!(
                "{}# trace: board {} seed {:#x} {} from {:.3} s: {}",
                self.traced.tag,
                self.number,
                self.seed,
                games[index].name,
                self.started_at.as_secs_f64(),
                games[index].sans.join(" ")
            );
        }
    }

    /// Whether the game being played is the one to trace.
    fn tracing(&self) -> bool {
        self.trace.contains(&self.seed)
    }

    /// Counts a link gap still open when a stuck run is given up among the game's
    /// interruptions: the updates of the last moves were lost and no dump was read, so
    /// such a difference is the gap's. (A run finishes only with the link up: see
    /// `SimulatedBoard::step`.)
    fn note_open_gap(&mut self, gaps_on: bool) {
        let now = self.run.now();
        if gaps_on && self.gap.0 <= now && now < self.gap.1 {
            self.interruptions.push((Cause::Gap, self.gap.0, now));
        }
    }

    /// Compares the record with the game played and counts the differences.
    fn check(&mut self, games: &[Game], tally: &mut Tally, stuck: Option<String>) {
        self.take_finished();
        let game = &games[self.game];
        let recorded = self.run.core().game_status().moves;
        let common = agreeing(&recorded, &game.sans);
        let lost = game.sans.len() - common;
        let phantom = recorded.len() - common;
        tally.games += 1;
        tally.plies += game.sans.len();
        tally.lost += lost;
        tally.phantom += phantom;
        if lost > 0 || phantom > 0 || stuck.is_some() {
            let (near, details) = self.near(common);
            let kind = match recorded.get(common) {
                None => "record stopped",
                Some(_) => "other move recorded",
            };
            let entry = tally.kinds.entry((near, kind)).or_default();
            entry.0 += 1;
            entry.1 += lost;
            entry.2 += phantom;
            let case = format!(
                "board {} seed {:#x} {} (started at {:.1} s): first difference at ply {}: source \
                 {:?}, recorded {:?}; {lost} lost, {phantom} phantom; {near} ({details}); ends \
                 {:?}{}",
                self.number,
                self.seed,
                game.name,
                self.started_at.as_secs_f64(),
                common + 1,
                game.sans.get(common),
                recorded.get(common),
                self.run.core().game_status().state,
                stuck.map(|s| format!("; stuck: {s}")).unwrap_or_default()
            );
            let aligned = self.align(game, &recorded, tally);
            tally.cases.push((case, aligned));
        }
    }

    /// Aligns the record with the source, adds it to the tally and describes it: each
    /// missing stretch, invisible or why not.
    fn align(&self, game: &Game, recorded: &[String], tally: &mut Tally) -> String {
        let source = plies(game.script.start(), game.script.moves());
        let record = recorded_plies(game.script.start(), recorded);
        let made: Vec<(Duration, String)> = self
            .completed
            .iter()
            .copied()
            .zip(self.boards_after.iter().cloned())
            .collect();
        // The sensor reads the squares in order over a scan and reports at its end: a
        // change is read in the scan in progress or the next one, at most two scans later.
        let lag = 2 * sim_config(self.seed).scan_period;
        let aligned = alignment::align(&source, &record, &made, &self.readings, lag);
        let missing = aligned.missing_plies();
        tally.missing += missing;
        tally.not_played += aligned.not_played;
        tally.invisible += aligned.invisible_plies();
        for stretch in &aligned.missing {
            let made = made.len().max(stretch.first);
            tally.never_made += (stretch.last + 1).saturating_sub(made);
        }
        let stretches: Vec<String> = aligned
            .missing
            .iter()
            .map(|stretch| self.describe(game, stretch))
            .collect();
        format!(
            "aligned: {missing} missing, {} not played{}{}",
            aligned.not_played,
            if stretches.is_empty() { "" } else { "; " },
            stretches.join("; ")
        )
    }

    /// A missing stretch: its plies (1-based) and moves, and its verdict.
    fn describe(&self, game: &Game, stretch: &Stretch) -> String {
        let moves = |first: usize, last: usize| {
            let sans = &game.sans[first..=last];
            let shown = sans.iter().take(8).cloned().collect::<Vec<_>>().join(" ");
            let more = if sans.len() > 8 { " ..." } else { "" };
            format!("plies {}-{} ({shown}{more})", first + 1, last + 1)
        };
        let own = moves(stretch.first, stretch.last);
        let why = match stretch.verdict {
            Verdict::Invisible { first, last } => {
                let place = match (first, last) == (stretch.first, stretch.last) {
                    true => String::new(),
                    false => format!(", the same record as without {}", moves(first, last)),
                };
                // What kept the daemon from reading it: the gaps and restarts from the
                // end of the ply before it to the end of its last.
                let (from, to) = (self.completed[first - 1], self.completed[last]);
                let downs: Vec<String> = self
                    .overlapping(from, to)
                    .map(|(cause, start, end)| {
                        format!(
                            "{cause:?} at {:.1} s for {:.1} s",
                            start.as_secs_f64(),
                            (*end - *start).as_secs_f64()
                        )
                    })
                    .collect();
                format!(
                    "invisible{place}: a round trip, plies finished at {:.1}-{:.1} s, of \
                     which no board read showed more than pieces lifted ({})",
                    self.completed[first].as_secs_f64(),
                    to.as_secs_f64(),
                    downs.join(", ")
                )
            }
            Verdict::Replaced => "other moves recorded in their place".to_string(),
            Verdict::NeverMade => {
                "not all made on the board (the game was given up first)".to_string()
            }
            Verdict::Seen => "a round trip, but a board read shows a ply of it".to_string(),
            Verdict::NotRoundTrip => "not a round trip".to_string(),
        };
        format!("{own} {why}")
    }

    /// The game's link gaps and restarts that overlap the time from `from` to `to`.
    fn overlapping(
        &self,
        from: Duration,
        to: Duration,
    ) -> impl Iterator<Item = &(Cause, Duration, Duration)> {
        self.interruptions
            .iter()
            .filter(move |(_, start, end)| *start <= to && *end >= from)
    }

    /// What interrupted the game near the first difference, after `common` moves were
    /// recorded right: a link gap or restart that overlaps the time from the last right
    /// move's last action to [`NEAR`] after the next move's (or the game's end), or after
    /// the wrong entry in its place was written, when that came later.
    fn near(&self, common: usize) -> (&'static str, String) {
        let from = match common {
            0 => self.started_at,
            n => self
                .completed
                .get(n - 1)
                .copied()
                .unwrap_or(self.started_at),
        };
        let played = self
            .completed
            .get(common)
            .copied()
            .unwrap_or_else(|| self.run.now());
        let written = match self.run.core().game_status().moves.len() > common {
            true => self.written.get(common).copied().unwrap_or(played),
            false => played,
        };
        let to = played.max(written) + NEAR;
        let near: Vec<&(Cause, Duration, Duration)> = self.overlapping(from, to).collect();
        let has = |cause| near.iter().any(|(c, _, _)| *c == cause);
        let label = match (has(Cause::Gap), has(Cause::Restart)) {
            (false, false) => "no gap or restart near",
            (true, false) => "link gap near",
            (false, true) => "restart near",
            (true, true) => "link gap and restart near",
        };
        // Each one's length and the moves finished while it lasted (the dump after it
        // has to explain them all).
        let details: Vec<String> = near
            .iter()
            .map(|(cause, start, end)| {
                let moves = self
                    .completed
                    .iter()
                    .filter(|at| *at >= start && *at < end)
                    .count();
                format!(
                    "{cause:?} at {:.1} s for {:.1} s, {moves} plies finished in it",
                    start.as_secs_f64(),
                    (*end - *start).as_secs_f64()
                )
            })
            .collect();
        // None near: the game's last one before, whose dump may have left an ambiguity
        // open until the first difference (an arbiter's pick replays the moves read since).
        let earlier = self
            .interruptions
            .iter()
            .rfind(|(_, _, end)| *end < from)
            .filter(|_| near.is_empty())
            .map(|(cause, start, end)| {
                format!(
                    "the last one before: {cause:?} at {:.1} s for {:.1} s, {:.1} s before",
                    start.as_secs_f64(),
                    (*end - *start).as_secs_f64(),
                    (from - *end).as_secs_f64()
                )
            });
        (
            label,
            details
                .into_iter()
                .chain(earlier)
                .collect::<Vec<_>>()
                .join(", "),
        )
    }
}

/// A ply as the alignment compares it: the move, and the placement and side to move it
/// was made in (none where the record could not be replayed: it matches nothing).
struct Ply {
    san: String,
    at: Option<(shakmaty::Board, Color)>,
}

impl PartialEq for Ply {
    fn eq(&self, other: &Ply) -> bool {
        self.san == other.san && self.at.is_some() && self.at == other.at
    }
}

/// The source's plies.
fn plies(start: &Chess, moves: &[shakmaty::Move]) -> Vec<Ply> {
    let mut pos = start.clone();
    moves
        .iter()
        .map(|m| {
            let at = Some((pos.board().clone(), pos.turn()));
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string();
            Ply { san, at }
        })
        .collect()
}

/// The recorded plies, replayed from the game's start.
fn recorded_plies(start: &Chess, recorded: &[String]) -> Vec<Ply> {
    let mut pos = Some(start.clone());
    recorded
        .iter()
        .map(|san| {
            let at = pos.as_ref().map(|p| (p.board().clone(), p.turn()));
            let played = pos.take().and_then(|p| {
                let m = san.parse::<SanPlus>().ok()?.san.to_move(&p).ok()?;
                p.play(m).ok()
            });
            pos = played;
            Ply {
                san: san.clone(),
                at,
            }
        })
        .collect()
}

fn hash(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn option(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let board_count = option(&args, "--boards", 8) as usize;
    let hours = option(&args, "--hours", 8);
    let base_seed = option(&args, "--seed", 1);
    let gaps_on = !args.iter().any(|a| a == "--no-gaps");
    let restarts_on = !args.iter().any(|a| a == "--no-restarts");
    let unread_checks_on = !args.iter().any(|a| a == "--no-unread-checks");
    let max_downtime = option(&args, "--max-downtime", MAX_DOWNTIME);
    let mut engine = EngineConfig::default();
    engine.max_search_plies =
        option(&args, "--search-plies", engine.max_search_plies as u64) as usize;
    // Games' seeds as the cases print them (hex with `0x`), or in decimal, separated by
    // commas.
    let trace: Vec<u64> = args
        .iter()
        .position(|a| a == "--trace")
        .and_then(|i| args.get(i + 1))
        .map(|list| {
            list.split(',')
                .filter_map(|v| match v.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16).ok(),
                    None => v.parse().ok(),
                })
                .collect()
        })
        .unwrap_or_default();
    let journal_dir = std::env::temp_dir().join(format!("boardcast-soak-{}", std::process::id()));
    if restarts_on {
        let _ = std::fs::remove_dir_all(&journal_dir);
    }
    let games = load();
    let mut order: Vec<usize> = (0..games.len()).collect();
    Rng::new(base_seed).shuffle(&mut order);
    let mut next_game = 0;
    let mut take_game = || {
        let index = order[next_game % order.len()];
        next_game += 1;
        index
    };
    let started = Instant::now();
    let mut boards: Vec<Board> = (1..=board_count)
        .map(|number| {
            // With restarts, the daemon runs with `--journal`; it starts on an empty one.
            let journal = restarts_on.then(|| journal_dir.clone());
            let core =
                JournaledCore::open(engine.clone(), journal.as_deref(), number, Path::new(PORT));
            let mut board = Board {
                number,
                // The first game's simulator comes with `start` below.
                run: SimulatedBoard::new(
                    Simulation::new(sim_config(0), games[0].script.clone()),
                    core,
                    Duration::ZERO,
                ),
                game: 0,
                seed: 0,
                games_started: 0,
                rng: Rng::stream(base_seed, number as u64),
                gap: (Duration::ZERO, Duration::ZERO),
                gaps: 0,
                // Its own stream, so the games and gaps are those of a run without.
                restart_rng: Rng::stream(base_seed, 1000 + number as u64),
                restart_at: Duration::MAX,
                restarts: 0,
                max_downtime,
                engine: engine.clone(),
                finished: Vec::new(),
                journal,
                started_at: Duration::ZERO,
                completed: Vec::new(),
                boards_after: Vec::new(),
                readings: Vec::new(),
                written: Vec::new(),
                interruptions: Vec::new(),
                arbiter: None,
                unread_check: None,
                unread_checks_on,
                unread_read: Vec::new(),
                missed: None,
                picked: None,
                given_up: None,
                end_actions: 0,
                trace: trace.clone(),
                traced: Trace::default(),
            };
            board.next_gap(Duration::ZERO);
            board.next_restart(Duration::ZERO);
            board
        })
        .collect();
    for board in &mut boards {
        let index = take_game();
        board.start(&games, index, base_seed);
    }
    let end = Duration::from_secs(hours * 3600);
    let mut tally = Tally::default();
    let memory = || [rss_kib(), counting::live() as u64 / 1024];
    let mut samples: Vec<(Duration, [u64; 2])> = vec![(Duration::ZERO, memory())];
    let mut horizon = Duration::ZERO;
    let mut events = 0u64;
    while horizon < end {
        horizon += SLICE;
        for board in &mut boards {
            while board.run.now() < horizon {
                let link_down =
                    gaps_on && board.run.now() >= board.gap.0 && board.run.now() < board.gap.1;
                board.run.set_link(!link_down);
                if gaps_on && board.run.now() >= board.gap.1 {
                    if board.tracing() {
                        let (start, end) = (board.gap.0.as_secs_f64(), board.gap.1.as_secs_f64());
                        let heard = board.run.last_heard().as_secs_f64();
                        board.traced.note(
                            board.gap.1,
                            &format!("link gap {start:.3}-{end:.3} s, last heard {heard:.3} s"),
                        );
                        board.traced.dump_next = true;
                    }
                    board.gaps += 1;
                    board
                        .interruptions
                        .push((Cause::Gap, board.gap.0, board.gap.1));
                    let back = board.gap.1;
                    board.call_unread_check(back);
                    let now = board.run.now();
                    board.next_gap(now);
                }
                if board.run.now() >= board.restart_at {
                    board.restart(&mut tally);
                }
                if board.arbiter.is_some_and(|due| board.run.now() >= due) {
                    board.arbitrate(&games, &mut tally);
                }
                if board.unread_check.is_some_and(|due| board.run.now() >= due) {
                    board.check_unread(&games, &mut tally, false);
                }
                if let Some(why) = board.given_up.take() {
                    board.check(&games, &mut tally, Some(why));
                    let index = take_game();
                    board.start(&games, index, base_seed);
                    continue;
                }
                let change = if link_down { board.gap.1 } else { board.gap.0 };
                let until = if gaps_on {
                    horizon.min(change)
                } else {
                    horizon
                };
                let until = until.min(board.restart_at);
                let until = until
                    .min(board.arbiter.unwrap_or(Duration::MAX))
                    .min(board.unread_check.unwrap_or(Duration::MAX))
                    .max(board.run.now());
                let tracing = board.tracing();
                let completed = &mut board.completed;
                let boards_after = &mut board.boards_after;
                let readings = &mut board.readings;
                let written = &mut board.written;
                let arbiter = &mut board.arbiter;
                let traced = &mut board.traced;
                let mut recorded = false;
                let progress = board.run.step(until, &mut |now, seen| {
                    events += 1;
                    if tracing {
                        match &seen {
                            Seen::Observed(raw) => traced.observed(now, raw.to_text()),
                            Seen::Event(event) => traced.note(now, &format!("{event:?}")),
                            Seen::Report(r) => {
                                traced.note(now, &format!("played {} {}", r.ply, r.san))
                            }
                            Seen::Ticked => {}
                        }
                    }
                    match seen {
                        Seen::Observed(raw) => readings.push((now, raw.to_text())),
                        Seen::Report(report) => {
                            completed.push(report.completed_at);
                            boards_after.push(report.board);
                        }
                        Seen::Event(
                            Event::MoveMade { ply, .. } | Event::MoveCorrected { ply, .. },
                        ) if ply > 0 => {
                            recorded = true;
                            if written.len() < ply {
                                written.resize(ply, now);
                            }
                            written[ply - 1] = now;
                        }
                        Seen::Event(Event::Ambiguous { .. } | Event::Irregular { .. }) => {
                            arbiter.get_or_insert(now + ARBITER_DELAY);
                        }
                        _ => {}
                    }
                });
                // A move recorded with a remark that one reading told it: the arbiter
                // reads the remarks as long after as after a gap.
                if recorded
                    && (board.remarks_to_check().iter())
                        .any(|r| r.1.contains(READ_ONCE_REMARK) && !board.unread_read.contains(r))
                {
                    let now = board.run.now();
                    board.call_unread_check(now);
                }
                match progress {
                    Progress::Running => {
                        if board.run.now() == until && until < horizon {
                            // A link change or restart is due: the loop above applies it.
                            continue;
                        }
                    }
                    Progress::Finished => {
                        // The arbiter resolves what is left at the game's end at the latest,
                        // in a few actions (what one settles, the next need not).
                        if board.arbiter.is_some() {
                            board.end_actions += 1;
                            if board.end_actions <= MAX_END_ACTIONS {
                                board.arbitrate(&games, &mut tally);
                                continue;
                            }
                            tally.end_actions_exceeded += 1;
                            board.given_up = Some(format!(
                                "{MAX_END_ACTIONS} arbiter actions at the game's end did not \
                                 settle it"
                            ));
                        }
                        // Then reads a remark due, on the board those actions settled.
                        if board.given_up.is_none() && board.unread_check.is_some() {
                            board.check_unread(&games, &mut tally, true);
                            continue;
                        }
                        let stuck = board.given_up.take();
                        board.check(&games, &mut tally, stuck);
                        let index = take_game();
                        board.start(&games, index, base_seed);
                    }
                    Progress::Stuck(why) => {
                        board.note_open_gap(gaps_on);
                        board.check(&games, &mut tally, Some(why));
                        let index = take_game();
                        board.start(&games, index, base_seed);
                    }
                }
            }
        }
        if horizon.as_secs().is_multiple_of(SAMPLE_EVERY.as_secs()) {
            samples.push((horizon, memory()));
        }
    }
    let wall = started.elapsed();
    let gaps: usize = boards.iter().map(|b| b.gaps).sum();
    let restarts: usize = boards.iter().map(|b| b.restarts).sum();
    let on_off = |on| if on { "on" } else { "off" };
    println!(
        "soak: {board_count} boards x {hours} simulated hours, seed {base_seed}, gaps {}, \
         restarts {}: {} games finished, {} plies, {gaps} link gaps, {restarts} restarts, \
         {events} steps' outputs, wall {:.1} s",
        on_off(gaps_on),
        on_off(restarts_on),
        tally.games,
        tally.plies,
        wall.as_secs_f64()
    );
    println!(
        "lost moves: {}, phantom moves: {}, games with a difference: {}",
        tally.lost,
        tally.phantom,
        tally.cases.len()
    );
    println!(
        "aligned: {} missing ({} invisible: no board reading shows them), {} not played; \
         of the missing, {} never made on the board (games given up first)",
        tally.missing, tally.invisible, tally.not_played, tally.never_made
    );
    println!(
        "arbiter interventions (an ambiguity resolved from the scoresheet, {} s after it \
         was reported): {}; ambiguities whose candidates missed the moves played: {} in {} \
         games",
        ARBITER_DELAY.as_secs(),
        tally.interventions,
        tally.unresolved,
        tally.unresolved_games
    );
    println!(
        "games given up: arbiter picks that did not stick (the same board reported the same \
         ambiguity after the pick): {}; games whose end took more than {MAX_END_ACTIONS} \
         arbiter actions: {}",
        tally.picks_not_stuck, tally.end_actions_exceeded
    );
    println!(
        "arbiter entries (moves entered from the scoresheet on a board irregular after lost \
         updates): {} boards, {} plies; refused by the engine: {}; amendments (moves \
         recorded wrongly, replaced from the scoresheet on a board stopped after lost \
         updates): {} boards, {} plies replaced; refused: {}",
        tally.entries,
        tally.entered_plies,
        tally.entries_refused,
        tally.amendments,
        tally.amended_plies,
        tally.amendments_refused
    );
    println!(
        "arbiter checks of remarks that the board went unread in play: {}{}; records amended \
         from the scoresheet there: {} ({} plies entered, {} recorded plies replaced); \
         refused: {}; of those, remarks that one reading told a move: {}, amended {}",
        tally.unread_checks,
        if unread_checks_on { "" } else { " (off)" },
        tally.unread_amendments,
        tally.unread_entered,
        tally.unread_replaced,
        tally.unread_refused,
        tally.read_once_checks,
        tally.read_once_amendments
    );
    for case in &tally.unread_cases {
        println!("  {case}");
    }
    for ((near, kind), (count, lost, phantom)) in &tally.kinds {
        println!("  {near}, {kind}: {count} games, {lost} lost, {phantom} phantom");
    }
    for (case, aligned) in &tally.cases {
        println!("  {case}");
        println!("    {aligned}");
    }
    if restarts_on {
        println!(
            "restores: {restarts}, {} journal records replayed, longest {:.0} ms, {} differing \
             from the core that crashed",
            tally.replayed_records,
            tally.longest_restore.as_secs_f64() * 1000.0,
            tally.restore_mismatches.len()
        );
        for mismatch in &tally.restore_mismatches {
            println!("  {mismatch}");
        }
        drop(boards);
        let _ = std::fs::remove_dir_all(&journal_dir);
    }
    for (name, column) in [("RSS", 0), ("allocated", 1)] {
        let values = |from: Duration| -> Vec<u64> {
            samples
                .iter()
                .filter(|(t, _)| *t >= from)
                .map(|(_, kib)| kib[column])
                .collect()
        };
        let hourly: Vec<String> = samples
            .iter()
            .filter(|(t, _)| t.as_secs().is_multiple_of(3600))
            .map(|(t, kib)| {
                format!(
                    "{}h {:.1} MiB",
                    t.as_secs() / 3600,
                    kib[column] as f64 / 1024.0
                )
            })
            .collect();
        println!("{name} hourly: {}", hourly.join(", "));
        let after_warmup = values(Duration::from_secs(3600));
        if let (Some(min), Some(max)) = (after_warmup.iter().min(), after_warmup.iter().max()) {
            println!(
                "{name} after the first hour: min {min} KiB, max {max} KiB, spread {} KiB over {} \
                 samples",
                max - min,
                after_warmup.len()
            );
        }
    }
}
