//! Corpus acceptance test of move inference.
//!
//! Every game of the two corpus files is played in-process, in simulated time, through
//! the whole pipeline the daemon runs: the virtual board ([`Simulation`]) produces bytes,
//! the protocol [`Decoder`] turns them into messages, the [`Mirror`] keeps the 64 squares,
//! and the inference [`Engine`] sees the mirror after every change and runs its timers at
//! its deadlines. The host side opens like the daemon: update mode (0x4B), then a dump
//! (0x42). Time is an event loop: `now = min(sim.next_wakeup(), engine.next_deadline())`.
//!
//! Variants (every game gets its own deterministic seed, see [`seed`]):
//!
//! * `realistic`: the realistic mix of handling styles with noise — every game;
//! * `styles`: one handling style forced per game, rotating through all 14, with noise;
//! * `rotated`: the board turned 180°, realistic mix with noise;
//! * `occupancy`: an occupancy-only board (games without under-promotion), realistic mix
//!   with noise;
//! * `fast`: the realistic mix with noise, every human delay divided by [`FAST_SPEED`]
//!   (replies and hands of a blitz game: more moves made before the board rests).
//!
//! For each game the engine's record, written as PGN and read back, must have exactly the
//! source mainline's SAN, and its result must be what the final position decides
//! (checkmate, stalemate, dead position; fivefold repetition and the 75-move rule): `*`
//! when the position decides nothing, since the board cannot show a resignation or agreed
//! draw. Each variant prints its pass rate; the goal is 100 %, and a variant not there yet
//! asserts a ratchet (the rate last measured, rounded down) and prints
//! `GOAL 100 % NOT MET: x/y`. A failure prints a
//! compact list and writes the list and repro files for the first few failures to
//! `corpus-failures/` under the build's test directory (`CARGO_TARGET_TMPDIR`, e.g.
//! `target/tmp/corpus-failures/`), never into the source tree; regressions worth keeping
//! are distilled into scenario files (`tests/data/scenarios`).
//!
//! Environment knobs (for reproducing): `CORPUS_GAME=<variant>:<file stem>:<game>` plays
//! just that game (1-based) and prints its whole trace; `CORPUS_THREADS=<n>` sets the
//! worker threads (default 2); `CORPUS_NOISE_RATE=<p>` overrides the noise rate,
//! `CORPUS_SPEED=<f>` the players' speed (2 = every human delay halved);
//! `CORPUS_SAMPLE=<k>` plays every k-th game of each variant only (for quick iteration:
//! the ratchet then applies to the sample's rate); `CORPUS_ROUND=<r>` plays round `r`
//! instead of round 0: every game with other seeds (other handling, noise and pauses)
//! and, in `styles`, another forced style, to see how the figures hold up on handling
//! the fixes were not made against. `CORPUS_SEED=<seed>` (decimal or `0x` hex) gives the
//! game played that seed instead of its own: the inference bench seeds game `i` (0-based
//! over both files) `0x5EED0000 + i`, so a game it reports recorded wrong replays here.

use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use boardcast::game::write_pgn;
use boardcast::inference::{Engine, EngineConfig, Event};
use boardcast::mirror::Mirror;
use boardcast_protocol::{Command, Decoded, Decoder, Message};
use boardcast_simulator::{MoveReport, Noise, Script, SimConfig, Simulation, Style, StyleMix};
use pgn_reader::{Outcome, RawTag, Reader, SanPlus, Visitor};
use shakmaty::{Chess, EnPassantMode, Position, Role};

/// The corpus files, by stem (as used in seeds, reports and `CORPUS_GAME`).
const FILES: [&str; 2] = ["lichess_db_1000k", "twic1599_1000k"];

/// Probability per move of each noise kind (flicker, j'adoube, wrong code); the
/// simulator CLI's `--noise-rate`.
const NOISE_RATE: f64 = 0.1;

/// The players' speed in variant `fast`, relative to the others'.
const FAST_SPEED: f64 = 1.5;

/// The players' speed: the simulator's (1.0), or `CORPUS_SPEED` when set (2.0 = every
/// human delay halved; for probing play faster than the corpus's).
fn speed() -> f64 {
    std::env::var("CORPUS_SPEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0)
}

/// The noise rate: [`NOISE_RATE`], or `CORPUS_NOISE_RATE` when set (for bisecting a
/// failure; the acceptance run uses the default).
fn noise_rate() -> f64 {
    std::env::var("CORPUS_NOISE_RATE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(NOISE_RATE)
}

/// Repro files written per variant when games fail.
const REPROS_PER_VARIANT: usize = 3;

/// Simulated-time limit per game: far beyond any corpus game, so a game that runs into
/// it is stuck (e.g. an engine deadline that never passes).
const SIM_TIME_LIMIT: Duration = Duration::from_secs(12 * 3600);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Realistic,
    Styles,
    Rotated,
    Occupancy,
    Fast,
}

impl Variant {
    const ALL: [Variant; 5] = [
        Variant::Realistic,
        Variant::Styles,
        Variant::Rotated,
        Variant::Occupancy,
        Variant::Fast,
    ];

    fn name(self) -> &'static str {
        match self {
            Variant::Realistic => "realistic",
            Variant::Styles => "styles",
            Variant::Rotated => "rotated",
            Variant::Occupancy => "occupancy",
            Variant::Fast => "fast",
        }
    }

    /// The pass rate this variant must keep, in tenths of a percent: the goal is 100 %
    /// (1000); below it, the rate last measured (rounded down), so the rate can only rise.
    fn floor_permille(self) -> usize {
        match self {
            // A pawn's one step captured at once, never read, is reported with its two
            // steps taken en passant (the same position), not guessed: 995, 997, 998.
            // So is one read there for less than a scan (what the two steps' slide
            // leaves): 993, 996, 994. A promoted piece read once, then taken at once, is
            // recorded as read (with a comment for the arbiter): 994, 998, 995. So is a
            // pawn read once where a pawn took it at once, its one step or its two steps
            // taken en passant: 996, 999, 1000.
            Variant::Realistic => 996,
            Variant::Styles => 999,
            Variant::Rotated => 1000,
            // A move read landing in the scan that reads the reply begun is reported
            // beside a capture swapped within a scan before the whole reply, not
            // guessed: 924 -> 922. A capture recorded on the wrong square is replaced
            // once later moves fit only the same piece's other capture: 922 -> 925.
            // No capture landing read after the reply's lift, no move kept past a lift
            // read with its landing after a possible swap, the fewest unseen captures
            // preferred: 930, 926, 931 in rounds 0-2 (the lowest kept): 925 -> 926.
            // A piece read lifted for the hold window is its one capture (a game's last
            // move swapped within a scan): 954, 947, 949: 926 -> 947. A lift read before
            // the previous move landed, the square filled again since (a flicker), is
            // not the move's: the next one is: 954, 948, 950: 947 -> 948. A fill counts
            // as where a piece went only once it left its square, and a move in progress
            // leaves no piece standing on a square read empty as it began: 954, 949,
            // 950: 948 -> 949. A capture's piece in the hand first is put down within a
            // second of its victim's removal (a square read empty longer is a piece
            // held there): 954, 950, 952: 949 -> 950. A carried ambiguity keeps, once
            // the board is at rest, the extensions it shows best; a promotion in a
            // searched sequence is a queen; a sequence two hypotheses grow into counts
            // once: 967, 959, 963: 950 -> 959. A piece held for the hold window past
            // the sequences of an open ambiguity was put down: 969, 961, 966; a board
            // part-way only to a correction is not pending when moves since explain it
            // one way: 970, 961, 966: 959 -> 961.
            Variant::Occupancy => 961,
            // Every human delay two thirds as long: rounds 0-8 pass 98.8 % to 99.6 %
            // (round 0: 1531 of 1548 when added, 1532 since), about one game in 1,700
            // recorded with a wrong move.
            Variant::Fast => 989,
        }
    }

    /// The players' speed in this variant.
    fn speed(self) -> f64 {
        match self {
            Variant::Fast => FAST_SPEED * speed(),
            _ => speed(),
        }
    }

    fn number(self) -> u64 {
        match self {
            Variant::Realistic => 1,
            Variant::Styles => 2,
            Variant::Rotated => 3,
            Variant::Occupancy => 4,
            Variant::Fast => 5,
        }
    }
}

/// One corpus game: the simulator's script plus the mainline as the source writes it.
struct Game {
    file: &'static str,
    /// 1-based within its file (the simulator CLI's `--game`).
    number: usize,
    /// Across both files, 0-based: drives the style rotation.
    global: usize,
    script: Script,
    /// The source's mainline SAN tokens, as written.
    sans: Vec<String>,
    /// The source's Result tag or termination marker.
    source_result: String,
}

/// Collects the mainline SAN tokens and the termination marker of each game.
struct Mainline;

struct Moves {
    sans: Vec<String>,
    result: String,
}

impl Visitor for Mainline {
    type Tags = ();
    type Movetext = Moves;
    type Output = Moves;

    fn begin_tags(&mut self) -> ControlFlow<Moves> {
        ControlFlow::Continue(())
    }

    fn tag(&mut self, _: &mut (), _: &[u8], _: RawTag<'_>) -> ControlFlow<Moves> {
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _: ()) -> ControlFlow<Moves, Moves> {
        ControlFlow::Continue(Moves {
            sans: Vec::new(),
            result: "*".to_string(),
        })
    }

    fn san(&mut self, moves: &mut Moves, san: SanPlus) -> ControlFlow<Moves> {
        moves.sans.push(san.to_string());
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, moves: &mut Moves, outcome: Outcome) -> ControlFlow<Moves> {
        moves.result = outcome.to_string();
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, moves: Moves) -> Moves {
        moves
    }
}

/// Every game of a PGN text: mainline SANs (variations skipped) and result.
fn mainlines(text: &str) -> Vec<Moves> {
    let mut reader = Reader::new(text.as_bytes());
    let mut visitor = Mainline;
    reader
        .read_games(&mut visitor)
        .map(|game| game.expect("PGN text reads"))
        .collect()
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus")
}

/// Where failure lists and repros go: under the build directory, so a failing run never
/// dirties the checkout.
fn failures_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus-failures")
}

/// Both corpus files, every game.
fn load_corpus() -> Vec<Game> {
    let mut games = Vec::new();
    for file in FILES {
        let path = corpus_dir().join(format!("{file}.pgn"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let scripts = Script::parse_pgn(&text)
            .unwrap_or_else(|e| panic!("{}: the simulator cannot read it: {e}", path.display()));
        let lines = mainlines(&text);
        assert_eq!(scripts.len(), lines.len(), "{file}: game counts differ");
        for (i, (script, line)) in scripts.into_iter().zip(lines).enumerate() {
            assert_eq!(
                script.moves().len(),
                line.sans.len(),
                "{file} game {}: the simulator and pgn-reader see different mainlines",
                i + 1
            );
            let global = games.len();
            games.push(Game {
                file,
                number: i + 1,
                global,
                script,
                sans: line.sans,
                source_result: line.result,
            });
        }
    }
    games
}

/// The round played: 0, or `CORPUS_ROUND` when set.
fn round() -> u64 {
    std::env::var("CORPUS_ROUND")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The seed of one game in one variant: round, variant, file and game number, readable
/// in hex (`0x0001_0002_0017` = round 0, variant 1, file 2, game 23).
fn seed(variant: Variant, game: &Game) -> u64 {
    if let Some(seed) = seed_set() {
        return seed;
    }
    let file = FILES
        .iter()
        .position(|f| *f == game.file)
        .expect("known file") as u64
        + 1;
    round() << 40 | variant.number() << 32 | file << 16 | game.number as u64
}

/// `CORPUS_SEED`, when set: a seed in decimal or in hex (`0x5EED0091`).
fn seed_set() -> Option<u64> {
    let text = std::env::var("CORPUS_SEED").ok()?;
    let seed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => text.parse(),
    };
    Some(seed.unwrap_or_else(|e| panic!("CORPUS_SEED={text}: {e}")))
}

/// The environment that replays this run's games: its round and seed when not their own.
fn replay_env() -> String {
    let mut env = String::new();
    if round() != 0 {
        let _ = write!(env, "CORPUS_ROUND={} ", round());
    }
    if let Some(seed) = seed_set() {
        let _ = write!(env, "CORPUS_SEED={seed:#x} ");
    }
    env
}

/// The forced style of a game in variant `styles`.
fn forced_style(game: &Game) -> Style {
    Style::ALL[(game.global + round() as usize) % Style::ALL.len()]
}

fn sim_config(variant: Variant, game: &Game) -> SimConfig {
    SimConfig {
        seed: seed(variant, game),
        styles: match variant {
            Variant::Styles => StyleMix::only(&[forced_style(game)]),
            _ => StyleMix::realistic(),
        },
        noise: Noise::all(noise_rate()),
        rotated: variant == Variant::Rotated,
        occupancy_only: variant == Variant::Occupancy,
        speed: variant.speed(),
        ..SimConfig::default()
    }
}

/// The `boardcast simulate` command line that replays the same board (same bytes).
fn simulate_command(variant: Variant, game: &Game) -> String {
    let mut cmd = format!(
        "boardcast simulate --pgn tests/data/corpus/{}.pgn --game {} --seed {} \
         --flicker --jadoube --wrong-code --noise-rate {}",
        game.file,
        game.number,
        seed(variant, game),
        noise_rate()
    );
    match variant {
        Variant::Styles => {
            let _ = write!(cmd, " --style {}", style_name(forced_style(game)));
        }
        Variant::Rotated => cmd.push_str(" --rotated"),
        Variant::Occupancy => cmd.push_str(" --occupancy-only"),
        Variant::Realistic | Variant::Fast => {}
    }
    if variant.speed() != 1.0 {
        let _ = write!(cmd, " --speed {}", variant.speed());
    }
    cmd
}

/// The CLI spelling of a style (clap's kebab-case of the variant name).
fn style_name(style: Style) -> String {
    let mut out = String::new();
    for (i, c) in format!("{style:?}").chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Whether a game can be played on an occupancy-only board: such a board cannot show
/// which piece a pawn promoted to, and the engine takes a queen (a knight is recognised
/// by its next jump, rooks and bishops never).
fn has_under_promotion(game: &Game) -> bool {
    game.script
        .moves()
        .iter()
        .any(|m| matches!(m.promotion(), Some(role) if role != Role::Queen))
}

/// What the final position (and the game's history) decides: "1-0", "0-1", "1/2-1/2",
/// or "*" when the board cannot tell (resignation, agreement, time).
fn decided_result(script: &Script) -> &'static str {
    let mut pos: Chess = script.start().clone();
    let mut keys = vec![pos.zobrist_hash::<shakmaty::zobrist::Zobrist64>(EnPassantMode::Legal)];
    for m in script.moves() {
        pos.play_unchecked(*m);
        keys.push(pos.zobrist_hash(EnPassantMode::Legal));
    }
    if pos.is_checkmate() {
        return if pos.turn().is_white() { "0-1" } else { "1-0" };
    }
    let last = keys.last().expect("start key");
    let repetitions = keys.iter().filter(|k| *k == last).count();
    if pos.is_stalemate()
        || pos.is_insufficient_material()
        || repetitions >= 5
        || pos.halfmoves() >= 150
    {
        return "1/2-1/2";
    }
    "*"
}

/// Something that happened during a game, for repro traces.
enum Trace {
    /// The simulator finished a move (its last physical action).
    Report(MoveReport),
    /// The engine saw a new mirror state (board text in the board's own numbering).
    Observed(String),
    /// The engine emitted an event.
    Event(Event),
}

/// The outcome of one game in one variant.
struct Played {
    sans: Vec<String>,
    result: String,
    observations: usize,
    trace: Vec<(Duration, Trace)>,
    /// Moves per handling style, as the simulator played them.
    styles: Vec<(Style, usize)>,
    stuck: Option<String>,
    /// The candidate sequences (SAN) of the ambiguity the engine left open, waiting for
    /// the arbiter.
    open: Vec<String>,
}

/// Plays one game through simulator → decoder → mirror → engine in simulated time.
fn play(variant: Variant, game: &Game, keep_trace: bool) -> Played {
    let occupancy_only = variant == Variant::Occupancy;
    let mut sim = Simulation::new(sim_config(variant, game), game.script.clone());
    let mut decoder = Decoder::new();
    let mut mirror = Mirror::default();
    let mut engine = Engine::new(EngineConfig {
        occupancy_only,
        ..EngineConfig::default()
    });
    let mut played = Played {
        sans: Vec::new(),
        result: String::new(),
        observations: 0,
        trace: Vec::new(),
        styles: Vec::new(),
        stuck: None,
        open: Vec::new(),
    };
    let mut now = Duration::ZERO;
    let mut init = Vec::new();
    Command::SendUpdateNice.encode_into(&mut init);
    Command::SendBoard.encode_into(&mut init);
    sim.receive(&init, now);
    let mut idle_rounds = 0;
    loop {
        decoder.feed(&sim.advance(now));
        while let Some(decoded) = decoder.poll() {
            let Decoded::Message(message) = decoded else {
                continue;
            };
            let changed = mirror.apply(&message);
            if mirror.is_complete() && (changed || matches!(message, Message::BoardDump(_))) {
                engine.observe(mirror.board(), now);
                played.observations += 1;
                if keep_trace {
                    played
                        .trace
                        .push((now, Trace::Observed(mirror.board().to_text())));
                }
            }
        }
        if engine.next_deadline().is_some_and(|at| at <= now) {
            engine.tick(now);
        }
        while let Some(event) = engine.poll_event() {
            if keep_trace {
                played.trace.push((now, Trace::Event(event)));
            }
        }
        while let Some(report) = sim.poll_report() {
            match played.styles.iter_mut().find(|(s, _)| *s == report.style) {
                Some((_, n)) => *n += 1,
                None => played.styles.push((report.style, 1)),
            }
            if keep_trace {
                played
                    .trace
                    .push((report.completed_at, Trace::Report(report)));
            }
        }
        let deadline = engine.next_deadline();
        if sim.is_finished() && deadline.is_none() {
            break;
        }
        let Some(next) = [sim.next_wakeup(), deadline].into_iter().flatten().min() else {
            break;
        };
        if next <= now {
            idle_rounds += 1;
            if idle_rounds > 16 {
                played.stuck = Some(format!(
                    "no progress at {now:?}: sim wakeup {:?}, engine deadline {deadline:?}",
                    sim.next_wakeup()
                ));
                break;
            }
        } else {
            idle_rounds = 0;
        }
        now = next.max(now);
        if now > SIM_TIME_LIMIT {
            played.stuck = Some(format!("simulated time limit {SIM_TIME_LIMIT:?} reached"));
            break;
        }
    }
    // The record as a consumer sees it: the PGN written by the daemon, read back.
    let pgn = write_pgn(engine.game());
    let mut back = mainlines(&pgn);
    assert_eq!(back.len(), 1, "the record's PGN holds one game:\n{pgn}");
    let back = back.pop().expect("one game");
    assert_eq!(
        back.sans,
        engine.game().sans(),
        "the PGN writer lost or changed moves:\n{pgn}"
    );
    assert_eq!(
        back.result,
        engine.game().status().result_str(),
        "the PGN's result is not the record's:\n{pgn}"
    );
    played.sans = back.sans;
    played.result = back.result;
    played.open = engine.open_ambiguity();
    if keep_trace {
        played.trace.sort_by_key(|(t, _)| *t);
    }
    played
}

/// One failed game.
struct Failure {
    variant: Variant,
    game: usize,
    /// 1-based ply of the first difference (SAN or result).
    ply: usize,
    expected: String,
    got: String,
    /// A missing move the engine reported as ambiguous, the moves played among the
    /// candidates: the board could not tell them apart, and the arbiter picks.
    for_arbiter: bool,
}

/// Checks a played game; `None` when it passes.
fn check(variant: Variant, index: usize, game: &Game, played: &Played) -> Option<Failure> {
    let fail = |ply, expected: &str, got: &str| Failure {
        variant,
        game: index,
        ply,
        expected: expected.to_string(),
        got: got.to_string(),
        for_arbiter: false,
    };
    let diverge = game
        .sans
        .iter()
        .zip(&played.sans)
        .position(|(a, b)| a != b)
        .or_else(|| {
            (game.sans.len() != played.sans.len()).then_some(game.sans.len().min(played.sans.len()))
        });
    if let Some(i) = diverge {
        let none = "(none)".to_string();
        let for_arbiter = i == played.sans.len()
            && played.open.iter().any(|candidate| {
                let moves: Vec<&str> = candidate.split_whitespace().collect();
                let played = game.sans.get(i..i + moves.len());
                played.is_some_and(|s| s.iter().zip(&moves).all(|(a, b)| a == b))
            });
        return Some(Failure {
            for_arbiter,
            ..fail(
                i + 1,
                game.sans.get(i).unwrap_or(&none),
                played.sans.get(i).unwrap_or(&none),
            )
        });
    }
    if let Some(why) = &played.stuck {
        return Some(fail(game.sans.len(), "(finished)", why));
    }
    let decided = decided_result(&game.script);
    if played.result != decided {
        return Some(fail(
            game.sans.len(),
            &format!("result {decided}"),
            &format!("result {}", played.result),
        ));
    }
    None
}

/// Per-variant totals.
struct Summary {
    variant: Variant,
    games: usize,
    passed: usize,
    observations: usize,
    plies: usize,
    failures: Vec<Failure>,
    styles: Vec<(Style, usize)>,
    elapsed: Duration,
}

/// The games a variant plays: all, except occupancy-only skips under-promotions.
fn selection(variant: Variant, games: &[Game]) -> Vec<usize> {
    (0..games.len())
        .filter(|&i| variant != Variant::Occupancy || !has_under_promotion(&games[i]))
        .collect()
}

/// Every k-th game of `chosen` when `CORPUS_SAMPLE=<k>` is set, else all of them.
fn sample(chosen: Vec<usize>) -> Vec<usize> {
    let k = std::env::var("CORPUS_SAMPLE")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    chosen.into_iter().step_by(k).collect()
}

fn threads() -> usize {
    std::env::var("CORPUS_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2)
        .max(1)
}

/// Plays the selected games on a few threads; results in game order.
fn run_variant(variant: Variant, games: &[Game], chosen: &[usize]) -> Summary {
    let started = Instant::now();
    let workers = threads().min(chosen.len().max(1));
    let mut results: Vec<(usize, Played, Option<Failure>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                scope.spawn(move || {
                    chosen
                        .iter()
                        .skip(w)
                        .step_by(workers)
                        .map(|&i| {
                            let played = play(variant, &games[i], false);
                            let failure = check(variant, i, &games[i], &played);
                            (i, played, failure)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker thread"))
            .collect()
    });
    results.sort_by_key(|(i, _, _)| *i);
    let mut summary = Summary {
        variant,
        games: chosen.len(),
        passed: 0,
        observations: 0,
        plies: 0,
        failures: Vec::new(),
        styles: Vec::new(),
        elapsed: Duration::ZERO,
    };
    for (i, played, failure) in results {
        summary.observations += played.observations;
        summary.plies += games[i].sans.len();
        for (style, n) in played.styles {
            match summary.styles.iter_mut().find(|(s, _)| *s == style) {
                Some((_, total)) => *total += n,
                None => summary.styles.push((style, n)),
            }
        }
        match failure {
            Some(f) => summary.failures.push(f),
            None => summary.passed += 1,
        }
    }
    summary.elapsed = started.elapsed();
    summary
}

fn describe(games: &[Game], f: &Failure) -> String {
    let game = &games[f.game];
    let style = match f.variant {
        Variant::Styles => format!(" [{}]", style_name(forced_style(game))),
        _ => String::new(),
    };
    let arbiter = if f.for_arbiter {
        " (ambiguous, the moves played among the candidates)"
    } else {
        ""
    };
    format!(
        "{}{style} {}#{} seed {:#x}: ply {} expected {} got {}{arbiter}",
        f.variant.name(),
        game.file,
        game.number,
        seed(f.variant, game),
        f.ply,
        f.expected,
        f.got
    )
}

/// A plain-text repro of one failure: identification, how to replay the board, and the
/// trace (simulator move reports, mirror states seen by the engine, engine events)
/// around the failing ply.
fn repro(games: &[Game], f: &Failure) -> String {
    let game = &games[f.game];
    let played = play(f.variant, game, true);
    let mut out = String::new();
    let _ = writeln!(out, "variant: {}", f.variant.name());
    let _ = writeln!(out, "commit:  {}", head_commit());
    let _ = writeln!(out, "game:    {} game {} (1-based)", game.file, game.number);
    let _ = writeln!(
        out,
        "seed:    {} ({:#x})",
        seed(f.variant, game),
        seed(f.variant, game)
    );
    let _ = writeln!(out, "ply:     {}", f.ply);
    let _ = writeln!(out, "expected: {}", f.expected);
    let _ = writeln!(out, "got:      {}", f.got);
    let _ = writeln!(out, "source result: {}", game.source_result);
    let _ = writeln!(out, "decided result: {}", decided_result(&game.script));
    let _ = writeln!(
        out,
        "replay: {}CORPUS_GAME={}:{}:{} cargo test --release --test integration corpus -- --nocapture",
        replay_env(),
        f.variant.name(),
        game.file,
        game.number
    );
    let _ = writeln!(out, "board:  {}", simulate_command(f.variant, game));
    let _ = writeln!(
        out,
        "engine: EngineConfig {{ occupancy_only: {}, ..default }}; host sends 4B 42 at 0 s",
        f.variant == Variant::Occupancy
    );
    let lo = f.ply.saturating_sub(3);
    let hi = (f.ply + 2).min(game.sans.len());
    let _ = writeln!(
        out,
        "source plies {}..={}: {}",
        lo + 1,
        hi,
        game.sans[lo..hi].join(" ")
    );
    let _ = writeln!(
        out,
        "engine plies {}..: {}",
        lo + 1,
        played
            .sans
            .iter()
            .skip(lo)
            .take(hi - lo + 2)
            .cloned()
            .collect::<Vec<_>>()
            .join(" ")
    );
    // Window: from the report of ply - 2 to a few seconds after the report of ply + 1.
    let report_at = |ply: usize| {
        played.trace.iter().find_map(|(t, e)| match e {
            Trace::Report(r) if r.ply as usize == ply => Some(*t),
            _ => None,
        })
    };
    let from = report_at(f.ply.saturating_sub(2)).unwrap_or(Duration::ZERO);
    let to = report_at(f.ply + 1)
        .map(|t| t + Duration::from_secs(3))
        .unwrap_or(Duration::MAX);
    let _ = writeln!(
        out,
        "\ntrace {from:?} .. {to:?} (board text: index 0 = a8 .. 63 = h1 in the board's own view)"
    );
    for (t, entry) in played.trace.iter().filter(|(t, _)| *t >= from && *t <= to) {
        let line = match entry {
            Trace::Report(r) => format!(
                "sim    ply {} {} ({}) style {:?} board {}",
                r.ply, r.san, r.uci, r.style, r.board
            ),
            Trace::Observed(board) => format!("mirror {board}"),
            Trace::Event(e) => format!("event  {e:?}"),
        };
        let _ = writeln!(out, "{:>10.3}s  {line}", t.as_secs_f64());
    }
    out
}

/// Removes the repro files of earlier runs of `variant`, so the directory only holds
/// current failures.
fn clear_repros(variant: Variant) {
    let Ok(entries) = std::fs::read_dir(failures_dir()) else {
        return;
    };
    let prefix = format!("{}-", variant.name());
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && name.ends_with(".txt") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The checkout's commit (best effort), so a repro names the engine it ran against;
/// `+dirty` when src/ has uncommitted changes.
fn head_commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(corpus_dir())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "--short", "HEAD"]) else {
        return "unknown".to_string();
    };
    match git(&[
        "status",
        "--porcelain",
        "--",
        ":/src/inference",
        ":/src/game",
    ]) {
        Some(s) if !s.is_empty() => format!("{head}+dirty"),
        _ => head,
    }
}

fn write_repros(games: &[Game], summary: &Summary) {
    let dir = failures_dir();
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("cannot create {}: {e}", dir.display());
        return;
    }
    let list: String = summary
        .failures
        .iter()
        .map(|f| describe(games, f) + "\n")
        .collect();
    let path = dir.join(format!("{}-list.txt", summary.variant.name()));
    if let Err(e) = std::fs::write(&path, format!("{}\n{list}", report(summary))) {
        eprintln!("cannot write {}: {e}", path.display());
    }
    for f in summary.failures.iter().take(REPROS_PER_VARIANT) {
        let game = &games[f.game];
        let path = dir.join(format!(
            "{}-{}-{}.txt",
            f.variant.name(),
            game.file,
            game.number
        ));
        match std::fs::write(&path, repro(games, f)) {
            Ok(()) => eprintln!("repro: {}", path.display()),
            Err(e) => eprintln!("cannot write {}: {e}", path.display()),
        }
    }
}

fn report(summary: &Summary) -> String {
    let rate = 100.0 * summary.passed as f64 / summary.games.max(1) as f64;
    let count =
        |pred: &dyn Fn(&Failure) -> bool| summary.failures.iter().filter(|f| pred(f)).count();
    let missing = count(&|f| f.got == "(none)");
    let for_arbiter = count(&|f| f.for_arbiter);
    let extra = count(&|f| f.expected == "(none)");
    let result = count(&|f| f.expected.starts_with("result"));
    let stuck = count(&|f| f.expected == "(finished)");
    let wrong = summary.failures.len() - missing - extra - result - stuck;
    format!(
        "corpus {:<9} {:>4}/{:<4} games pass ({rate:.2} %), {} plies, {} observations, {:.1} s; \
         failures: {wrong} wrong move, {missing} missing moves ({for_arbiter} ambiguous, \
         for the arbiter), {extra} extra moves, {result} wrong result, {stuck} stuck",
        summary.variant.name(),
        summary.passed,
        summary.games,
        summary.plies,
        summary.observations,
        summary.elapsed.as_secs_f64()
    )
}

/// Runs one variant over its games and asserts its pass rate: every game, or while that
/// goal is not met, at least the ratchet (see [`Variant::floor_permille`]).
fn acceptance(variant: Variant) {
    let games = load_corpus();
    assert_eq!(games.len(), 438 + 1110, "corpus size");
    let chosen = sample(selection(variant, &games));
    let summary = run_variant(variant, &games, &chosen);
    eprintln!("{}", report(&summary));
    if variant == Variant::Styles {
        let mut line = String::from("corpus styles   moves per style:");
        for style in Style::ALL {
            let n = summary
                .styles
                .iter()
                .find(|(s, _)| *s == style)
                .map_or(0, |(_, n)| *n);
            let _ = write!(line, " {}={n}", style_name(style));
        }
        eprintln!("{line}");
        for style in Style::ALL {
            assert!(
                summary.styles.iter().any(|(s, n)| *s == style && *n > 0),
                "style {style:?} was never exercised"
            );
        }
    }
    // Repro files describe the acceptance configuration only.
    let acceptance_config = noise_rate() == NOISE_RATE;
    if acceptance_config {
        clear_repros(variant);
    }
    if summary.failures.is_empty() {
        return;
    }
    let mut list = String::new();
    for f in &summary.failures {
        let _ = writeln!(list, "  {}", describe(&games, f));
    }
    if acceptance_config {
        write_repros(&games, &summary);
    }
    eprintln!(
        "GOAL 100 % NOT MET: {}/{} in variant {} ({} failed):\n{list}",
        summary.passed,
        summary.games,
        variant.name(),
        summary.failures.len()
    );
    let floor = variant.floor_permille();
    assert!(
        summary.passed * 1000 >= floor * summary.games,
        "variant {} fell below its ratchet of {}.{} %: {}/{} pass",
        variant.name(),
        floor / 10,
        floor % 10,
        summary.passed,
        summary.games
    );
}

#[test]
fn realistic_mixed_styles_with_noise() {
    if single_game() {
        return;
    }
    acceptance(Variant::Realistic);
}

#[test]
fn every_style_forced_in_turn_with_noise() {
    if single_game() {
        return;
    }
    acceptance(Variant::Styles);
}

#[test]
fn rotated_board() {
    if single_game() {
        return;
    }
    acceptance(Variant::Rotated);
}

#[test]
fn occupancy_only_board() {
    if single_game() {
        return;
    }
    acceptance(Variant::Occupancy);
}

#[test]
fn fast_players() {
    if single_game() {
        return;
    }
    acceptance(Variant::Fast);
}

/// `CORPUS_GAME=<variant>:<file stem>:<game>`: plays that one game with its full trace
/// (the variant tests then skip).
fn single_game() -> bool {
    std::env::var_os("CORPUS_GAME").is_some()
}

#[test]
fn replay_one_game() {
    let Ok(spec) = std::env::var("CORPUS_GAME") else {
        return;
    };
    let parts: Vec<&str> = spec.split(':').collect();
    let [variant, file, number] = parts[..] else {
        panic!("CORPUS_GAME={spec}: expected <variant>:<file stem>:<game>");
    };
    let variant = Variant::ALL
        .into_iter()
        .find(|v| v.name() == variant)
        .unwrap_or_else(|| panic!("unknown variant {variant}"));
    let number: usize = number.parse().expect("game number");
    let games = load_corpus();
    let index = games
        .iter()
        .position(|g| g.file == file && g.number == number)
        .unwrap_or_else(|| panic!("no game {number} in {file}"));
    let game = &games[index];
    let played = play(variant, game, true);
    let failure = check(variant, index, game, &played);
    let f = failure.unwrap_or(Failure {
        variant,
        game: index,
        ply: game.sans.len(),
        expected: "(passes)".into(),
        got: "(passes)".into(),
        for_arbiter: false,
    });
    println!("{}", repro(&games, &f));
    println!("full trace:");
    for (t, entry) in &played.trace {
        match entry {
            Trace::Report(r) => println!(
                "{:>10.3}s  sim ply {} {} {:?}",
                t.as_secs_f64(),
                r.ply,
                r.san,
                r.style
            ),
            Trace::Observed(b) => println!("{:>10.3}s  mirror {b}", t.as_secs_f64()),
            Trace::Event(e) => println!("{:>10.3}s  event {e:?}", t.as_secs_f64()),
        }
    }
    assert!(
        check(variant, index, game, &played).is_none(),
        "{}",
        describe(&games, &f)
    );
}

/// The checks themselves can fail: a record missing a move, with a wrong move or a
/// wrong result is caught, with the right ply.
#[test]
fn checks_catch_wrong_records() {
    let games = load_corpus();
    let index = games
        .iter()
        .position(|g| decided_result(&g.script) != "*")
        .expect("a decided game");
    let game = &games[index];
    let good = Played {
        sans: game.sans.clone(),
        result: decided_result(&game.script).to_string(),
        observations: 0,
        trace: Vec::new(),
        styles: Vec::new(),
        stuck: None,
        open: Vec::new(),
    };
    assert!(check(Variant::Realistic, index, game, &good).is_none());
    let mut short = Played {
        sans: game.sans[..game.sans.len() - 1].to_vec(),
        ..clone(&good)
    };
    let f = check(Variant::Realistic, index, game, &short).expect("missing move caught");
    assert_eq!((f.ply, f.got.as_str()), (game.sans.len(), "(none)"));
    short.sans[2] = "Qh9".into();
    let f = check(Variant::Realistic, index, game, &short).expect("wrong move caught");
    assert_eq!(f.ply, 3);
    let invented = Played {
        result: "*".into(),
        ..clone(&good)
    };
    assert!(check(Variant::Realistic, index, game, &invented).is_some());
    // A game the position does not decide must stay "*".
    let open = games
        .iter()
        .position(|g| decided_result(&g.script) == "*" && g.source_result != "*")
        .expect("a resigned game");
    let g = &games[open];
    let invented = Played {
        sans: g.sans.clone(),
        result: g.source_result.clone(),
        ..clone(&good)
    };
    assert!(check(Variant::Realistic, open, g, &invented).is_some());
    // The decided results agree with the sources where the board decides.
    for g in &games {
        let decided = decided_result(&g.script);
        if decided != "*" {
            assert_eq!(decided, g.source_result, "{}#{}", g.file, g.number);
        }
    }
}

/// Same seed, same run: each variant's first game played twice gives the same trace.
#[test]
fn replays_are_deterministic() {
    let games = load_corpus();
    for variant in Variant::ALL {
        let index = selection(variant, &games)[0];
        let first = render(&play(variant, &games[index], true));
        let second = render(&play(variant, &games[index], true));
        assert!(first.len() > 100, "{}: trace too short", variant.name());
        assert_eq!(first, second, "{}: replay differs", variant.name());
    }
}

fn render(played: &Played) -> Vec<String> {
    let mut out: Vec<String> = played
        .trace
        .iter()
        .map(|(t, entry)| match entry {
            Trace::Report(r) => format!("{t:?} {r:?}"),
            Trace::Observed(b) => format!("{t:?} {b}"),
            Trace::Event(e) => format!("{t:?} {e:?}"),
        })
        .collect();
    out.push(played.sans.join(" "));
    out.push(played.result.clone());
    out
}

fn clone(p: &Played) -> Played {
    Played {
        sans: p.sans.clone(),
        result: p.result.clone(),
        observations: p.observations,
        trace: Vec::new(),
        styles: p.styles.clone(),
        stuck: p.stuck.clone(),
        open: p.open.clone(),
    }
}
