//! Inference throughput, per-event latency and memory per board, against a naive baseline.
//!
//! The observation stream is recorded once: every corpus game is played by the simulator
//! (realistic mix of handling styles, noise 0.1 — the corpus test's `realistic` variant)
//! through the decoder and the mirror (`boardcast::simulated::SimulatedBoard`), and each
//! board the engine is shown becomes a (board, now) step; the engine's timer calls (`tick`
//! at its deadlines) are recorded as steps too.
//! Only the engine consuming that stream is timed: `observe` per board change, `tick` at
//! the recorded times, events drained as the daemon does.
//!
//! BASELINE: a naive engine that, on every event, plays every legal move of the current
//! position and compares the resulting 64 squares with the board; a match is taken as
//! the move. Both run in the same process, alternating, so a noisy machine slows both.
//!
//! Output: a custom report (events/s per round, p50/p99 per event, the ratio, memory per
//! board from a counting global allocator), then criterion throughput on a quarter of
//! the games. `cargo bench --bench inference`; `-- --skip-criterion` prints only the
//! custom report; `-- --skip-criterion --occupancy` plays the games on an occupancy-only board (the
//! corpus test's `occupancy` variant, whose engine runs extra searches; the games with an
//! under-promotion, which such a board cannot show, count among those recorded wrong,
//! and the baseline, comparing piece codes, matches nothing there); `--sample K` plays
//! every K-th game only (same seeds), e.g. to profile under callgrind; `--game FILE#N`
//! plays one game (as the report names it: `twic1599_1000k#471`), e.g. one of the slowest.
//! Game `i` (0-based over both files) is seeded `0x5EED0000 + i`: one reported recorded
//! wrong replays with its trace in the corpus test (`CORPUS_SEED=0x5EED0091
//! CORPUS_GAME=realistic:lichess_db_1000k:146`, see tests/corpus.rs).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use boardcast::game::GameRecord;
use boardcast::inference::{Engine, EngineConfig};
use boardcast::journal::JournaledCore;
use boardcast::simulated::{Progress, Seen, SimulatedBoard};
use boardcast_protocol::RawBoard;
use boardcast_simulator::codes::Physical;
use boardcast_simulator::{Noise, Script, SimConfig, Simulation, StyleMix};
use criterion::{Criterion, Throughput};
use shakmaty::{Chess, Position};

mod counting;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

// ---------------------------------------------------------------------------------------
// The recorded stream.

/// One step of a game's stream: a board change at `now`, or a timer call at `now`.
#[derive(Clone)]
struct Step {
    now: Duration,
    board: Option<RawBoard>,
}

struct GameStream {
    steps: Vec<Step>,
    observations: usize,
    /// The engine's SAN while recording, to check that replays behave identically.
    sans: Vec<String>,
}

const FILES: [&str; 2] = ["lichess_db_1000k", "twic1599_1000k"];

/// Whether the boards sense occupancy only (`--occupancy`).
static OCCUPANCY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// The engine's settings for the boards played.
fn engine_config() -> EngineConfig {
    EngineConfig {
        occupancy_only: *OCCUPANCY.get().expect("set in main"),
        ..EngineConfig::default()
    }
}

/// Game counts per file, in `FILES` order.
static COUNTS: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();

/// File stem and 1-based game number of game `i` (over both files).
fn game_name(i: usize) -> (&'static str, usize) {
    let counts = COUNTS.get().expect("loaded");
    match i.checked_sub(counts[0]) {
        Some(j) => (FILES[1], j + 1),
        None => (FILES[0], i + 1),
    }
}

/// The script's mainline in SAN (with check marks).
fn mainline_sans(script: &Script) -> Vec<String> {
    let mut pos = script.start().clone();
    script
        .moves()
        .iter()
        .map(|m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string())
        .collect()
}

fn load_scripts() -> Vec<Script> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus");
    let per_file: Vec<Vec<Script>> = FILES
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(dir.join(format!("{f}.pgn"))).expect("corpus");
            Script::parse_pgn(&text).expect("corpus parses")
        })
        .collect();
    let _ = COUNTS.set(per_file.iter().map(Vec::len).collect());
    per_file.into_iter().flatten().collect()
}

/// Plays one game through simulator → decoder → mirror → engine (the library's
/// `SimulatedBoard`, as the soak bench runs it) and records the steps.
fn record(script: &Script, seed: u64) -> GameStream {
    let config = SimConfig {
        seed,
        styles: StyleMix::realistic(),
        noise: Noise::all(0.1),
        occupancy_only: engine_config().occupancy_only,
        ..SimConfig::default()
    };
    let sim = Simulation::new(config, script.clone());
    let core = JournaledCore::unjournaled(engine_config(), 1);
    let mut run = SimulatedBoard::new(sim, core, Duration::ZERO);
    let mut steps = Vec::new();
    let mut observations = 0;
    loop {
        let progress = run.step(Duration::MAX, &mut |now, seen| match seen {
            Seen::Observed(board) => {
                steps.push(Step {
                    now,
                    board: Some(*board),
                });
                observations += 1;
            }
            Seen::Ticked => steps.push(Step { now, board: None }),
            Seen::Event(_) | Seen::Report(_) => {}
        });
        match progress {
            Progress::Running => {}
            Progress::Finished => break,
            Progress::Stuck(why) => panic!("game with seed {seed:#x} stuck: {why}"),
        }
    }
    GameStream {
        steps,
        observations,
        sans: run.core().game_status().moves,
    }
}

/// Records the games `scripts` (each with its index over both files, which seeds it).
fn record_all(scripts: &[(usize, Script)]) -> Vec<GameStream> {
    let workers = 2;
    let mut out: Vec<(usize, GameStream)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                scope.spawn(move || {
                    (w..scripts.len())
                        .step_by(workers)
                        .map(|i| {
                            let (n, script) = &scripts[i];
                            (i, record(script, 0x5EED_0000 + *n as u64))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("recorder"))
            .collect()
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, s)| s).collect()
}

// ---------------------------------------------------------------------------------------
// Consumers.

/// Feeds one game's stream to a fresh engine; returns it for inspection.
fn run_engine(game: &GameStream) -> Engine {
    let mut engine = Engine::new(engine_config());
    for step in &game.steps {
        match &step.board {
            Some(board) => engine.observe(board, step.now),
            None => engine.tick(step.now),
        }
        while let Some(event) = engine.poll_event() {
            black_box(event);
        }
    }
    engine
}

/// The naive baseline: on every board, every legal move played and compared in full.
struct Naive {
    pos: Chess,
    plies: usize,
}

impl Naive {
    fn new() -> Self {
        Naive {
            pos: Chess::default(),
            plies: 0,
        }
    }

    fn observe(&mut self, board: &RawBoard) {
        for m in self.pos.legal_moves() {
            let mut next = self.pos.clone();
            next.play_unchecked(m);
            if hardware_codes(&next) == board.0 {
                self.pos = next;
                self.plies += 1;
                return;
            }
        }
    }
}

/// The 64 DGT codes of a position by hardware index (0 = a8 … 63 = h1), through the
/// simulator's own mapping, so the baseline reads boards exactly as they are produced.
fn hardware_codes(pos: &Chess) -> [u8; 64] {
    Physical::from_board(pos.board()).to_hardware(false, false)
}

fn run_naive(game: &GameStream) -> Naive {
    let mut naive = Naive::new();
    for step in &game.steps {
        if let Some(board) = &step.board {
            naive.observe(board);
        }
    }
    naive
}

// ---------------------------------------------------------------------------------------
// Measurements.

/// Events per second over all games, one pass.
fn throughput(games: &[GameStream], events: usize, naive: bool) -> f64 {
    let start = Instant::now();
    for game in games {
        if naive {
            black_box(run_naive(game).plies);
        } else {
            black_box(run_engine(game).game().ply_count());
        }
    }
    events as f64 / start.elapsed().as_secs_f64()
}

/// Per-event latencies in ns: each observe (and each tick, separately), events drained.
fn latencies(games: &[GameStream], naive: bool) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let mut observe = Vec::new();
    let mut tick = Vec::new();
    let mut per_game = Vec::new();
    for game in games {
        let mut game_ns = 0;
        let mut engine = Engine::new(engine_config());
        let mut base = Naive::new();
        for step in &game.steps {
            let start = Instant::now();
            match (&step.board, naive) {
                (Some(board), true) => base.observe(board),
                (None, true) => continue,
                (Some(board), false) => engine.observe(board, step.now),
                (None, false) => engine.tick(step.now),
            }
            while let Some(event) = engine.poll_event() {
                black_box(event);
            }
            let ns = start.elapsed().as_nanos() as u64;
            game_ns += ns;
            match step.board {
                Some(_) => observe.push(ns),
                None => tick.push(ns),
            }
        }
        black_box(engine.game().ply_count());
        black_box(base.plies);
        per_game.push(game_ns);
    }
    observe.sort_unstable();
    tick.sort_unstable();
    (observe, tick, per_game)
}

fn pct(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn fmt_ns(ns: u64) -> String {
    if ns >= 10_000 {
        format!("{:.1} µs", ns as f64 / 1000.0)
    } else {
        format!("{ns} ns")
    }
}

/// Heap of one engine after its game, minus the heap of a bare record of the same moves.
struct Memory {
    engine_size: usize,
    max_overhead: usize,
    mean_overhead: f64,
    max_total_heap: usize,
    max_peak_during: usize,
}

fn memory(games: &[GameStream]) -> Memory {
    let mut m = Memory {
        engine_size: std::mem::size_of::<Engine>(),
        max_overhead: 0,
        mean_overhead: 0.0,
        max_total_heap: 0,
        max_peak_during: 0,
    };
    let mut sum = 0usize;
    for game in games {
        counting::reset_peak();
        let before = counting::live();
        let engine = run_engine(game);
        let peak = counting::peak() - before;
        let heap = counting::live() - before;
        let moves: Vec<_> = engine.game().moves().iter().map(|r| r.mv).collect();
        let before_record = counting::live();
        let mut record = GameRecord::new();
        for mv in &moves {
            record.push(*mv).expect("the engine's moves are legal");
        }
        let record_heap = counting::live() - before_record;
        drop(record);
        drop(moves);
        let overhead = heap.saturating_sub(record_heap);
        sum += overhead;
        m.max_overhead = m.max_overhead.max(overhead);
        m.max_total_heap = m.max_total_heap.max(heap);
        m.max_peak_during = m.max_peak_during.max(peak);
        drop(engine);
    }
    m.mean_overhead = sum as f64 / games.len().max(1) as f64;
    m
}

fn timer_overhead() -> u64 {
    let mut v: Vec<u64> = (0..100_000)
        .map(|_| {
            let start = Instant::now();
            start.elapsed().as_nanos() as u64
        })
        .collect();
    v.sort_unstable();
    pct(&v, 0.5)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs benches with `--test`: compile-check only.
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let skip_criterion = args.iter().any(|a| a == "--skip-criterion");
    let occupancy = args.iter().any(|a| a == "--occupancy");
    OCCUPANCY.set(occupancy).expect("set once");

    let started = Instant::now();
    // `--sample K`: every K-th game only (e.g. for a profile under callgrind).
    let sample = args
        .iter()
        .position(|a| a == "--sample")
        .and_then(|i| args.get(i + 1))
        .map_or(1, |k| k.parse::<usize>().expect("--sample K").max(1));
    // `--game FILE#N`: that game alone.
    let only = args
        .iter()
        .position(|a| a == "--game")
        .and_then(|i| args.get(i + 1))
        .map(|g| g.split_once('#').expect("--game FILE#N"));
    let scripts: Vec<(usize, Script)> = load_scripts()
        .into_iter()
        .enumerate()
        .step_by(sample)
        .filter(|(i, _)| {
            only.is_none_or(|(file, n)| {
                let (f, m) = game_name(*i);
                f == file && m.to_string() == n
            })
        })
        .collect();
    if let Some((file, n)) = only {
        assert!(
            !scripts.is_empty(),
            "--game {file}#{n}: no such game in the corpus"
        );
    }
    let games = record_all(&scripts);
    let events: usize = games.iter().map(|g| g.observations).sum();
    let ticks: usize = games.iter().map(|g| g.steps.len() - g.observations).sum();
    let plies: usize = scripts.iter().map(|(_, s)| s.moves().len()).sum();
    println!(
        "recorded {} games{}, {plies} plies: {events} board events + {ticks} timer calls in {:.1} s",
        games.len(),
        if occupancy {
            " (occupancy-only board)"
        } else {
            ""
        },
        started.elapsed().as_secs_f64()
    );
    // A replay behaves exactly like the recording run.
    for (i, game) in games.iter().enumerate() {
        assert_eq!(
            run_engine(game).game().sans(),
            game.sans,
            "replay of game {i} differs"
        );
    }

    // Throughput, engine and baseline alternating.
    let rounds = 3;
    let mut engine_rates = Vec::new();
    let mut naive_rates = Vec::new();
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        let e = throughput(&games, events, false);
        let n = throughput(&games, events, true);
        println!(
            "round {round}: engine {:>10.0} events/s   baseline {:>10.0} events/s   ratio {:.1}x",
            e,
            n,
            e / n
        );
        engine_rates.push(e);
        naive_rates.push(n);
        ratios.push(e / n);
    }
    let (e_obs, e_tick, e_games) = latencies(&games, false);
    let (n_obs, _, _) = latencies(&games, true);
    let mut all = e_obs.clone();
    all.extend_from_slice(&e_tick);
    all.sort_unstable();
    let mem = memory(&games);
    let timer = timer_overhead();

    println!("\n== inference over the corpus ({events} board events, {ticks} timer calls) ==");
    println!(
        "engine   throughput (median of {rounds}): {:>10.0} events/s",
        median(engine_rates)
    );
    println!(
        "baseline throughput (median of {rounds}): {:>10.0} events/s",
        median(naive_rates)
    );
    println!("ratio engine/baseline (median):   {:.1}x", median(ratios));
    println!(
        "engine   observe  p50 {}  p99 {}  max {}",
        fmt_ns(pct(&e_obs, 0.5)),
        fmt_ns(pct(&e_obs, 0.99)),
        fmt_ns(pct(&e_obs, 1.0))
    );
    println!(
        "engine   tick     p50 {}  p99 {}  max {}",
        fmt_ns(pct(&e_tick, 0.5)),
        fmt_ns(pct(&e_tick, 0.99)),
        fmt_ns(pct(&e_tick, 1.0))
    );
    println!(
        "engine   any call p50 {}  p99 {}  max {}",
        fmt_ns(pct(&all, 0.5)),
        fmt_ns(pct(&all, 0.99)),
        fmt_ns(pct(&all, 1.0))
    );
    println!(
        "baseline observe  p50 {}  p99 {}  max {}",
        fmt_ns(pct(&n_obs, 0.5)),
        fmt_ns(pct(&n_obs, 0.99)),
        fmt_ns(pct(&n_obs, 1.0))
    );
    let secs = |v: &[u64]| v.iter().sum::<u64>() as f64 / 1e9;
    println!(
        "engine   time in observe {:.2} s, in tick {:.2} s (p99.9 observe {}, tick {})",
        secs(&e_obs),
        secs(&e_tick),
        fmt_ns(pct(&e_obs, 0.999)),
        fmt_ns(pct(&e_tick, 0.999))
    );
    println!("(timer overhead per sample, p50: {timer} ns, included above)");
    println!(
        "memory per board: size_of::<Engine>() = {} B; heap after a game minus its move \
         record: max {} B, mean {:.0} B; whole heap after a game max {} B; \
         peak heap during a game max {} B",
        mem.engine_size,
        mem.max_overhead,
        mem.mean_overhead,
        mem.max_total_heap,
        mem.max_peak_during
    );
    println!(
        "per board (size_of + max overhead): {:.1} KiB",
        (mem.engine_size + mem.max_overhead) as f64 / 1024.0
    );

    // Where the engine's time goes: games it records right versus the others.
    let right: Vec<bool> = games
        .iter()
        .zip(&scripts)
        .map(|(g, (_, s))| g.sans == mainline_sans(s))
        .collect();
    let total: u64 = e_games.iter().sum();
    let (mut ok_ns, mut ok_events, mut ok_games) = (0u64, 0usize, 0usize);
    for ((ns, game), ok) in e_games.iter().zip(&games).zip(&right) {
        if *ok {
            ok_ns += ns;
            ok_events += game.observations;
            ok_games += 1;
        }
    }
    println!(
        "engine time: {:.2} s per pass; games recorded right: {ok_games}, {:.1} % of the time, \
         {:.0} events/s on them; the other {} games: {:.1} % of the time",
        total as f64 / 1e9,
        100.0 * ok_ns as f64 / total.max(1) as f64,
        ok_events as f64 / (ok_ns.max(1) as f64 / 1e9),
        games.len() - ok_games,
        100.0 * (total - ok_ns) as f64 / total.max(1) as f64
    );
    let mut order: Vec<usize> = (0..games.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(e_games[i]));
    for &i in order.iter().take(5) {
        let (file, number) = game_name(scripts[i].0);
        println!(
            "  slowest: {file}#{number}: {:.1} ms ({:.1} % of the pass), recorded {}",
            e_games[i] as f64 / 1e6,
            100.0 * e_games[i] as f64 / total.max(1) as f64,
            if right[i] { "right" } else { "WRONG" }
        );
    }

    if skip_criterion {
        return;
    }
    // Criterion throughput on every fourth game, engine and baseline in one group.
    let quarter: Vec<GameStream> = games.into_iter().step_by(4).collect::<Vec<_>>();
    let quarter_events: usize = quarter.iter().map(|g| g.observations).sum();
    let mut criterion = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(10))
        .configure_from_args();
    let mut group = criterion.benchmark_group("inference");
    group.throughput(Throughput::Elements(quarter_events as u64));
    group.bench_function("engine", |b| {
        b.iter(|| {
            for game in &quarter {
                black_box(run_engine(game).game().ply_count());
            }
        })
    });
    group.bench_function("baseline", |b| {
        b.iter(|| {
            for game in &quarter {
                black_box(run_naive(game).plies);
            }
        })
    });
    group.finish();
    criterion.final_summary();
}
