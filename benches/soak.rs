//! Soak run: several boards play the corpus's real games back to back, with handling
//! noise and link gaps (updates lost, then a fresh dump), through the daemon's decoder
//! and board core in simulated time ([`boardcast::simulated`]), for hours of simulated
//! time. Counts lost moves (source moves missing from the record) and phantom moves
//! (recorded moves not in the source), lists every such case with its seed, game and
//! ply, and samples the process's resident memory.
//!
//! `cargo bench --bench soak -- [--boards N] [--hours H] [--seed S] [--no-gaps]` (defaults
//! 8, 8, 1; `--no-gaps` keeps the link up, to tell the gaps' share from the noise's).

use std::path::Path;
use std::time::{Duration, Instant};

use boardcast::board::BoardCore;
use boardcast::inference::EngineConfig;
use boardcast::simulated::{Progress, SimulatedBoard};
use boardcast_simulator::rng::Rng;
use boardcast_simulator::{Noise, Script, SimConfig, Simulation, StyleMix};

const FILES: [&str; 2] = ["lichess_db_1000k", "twic1599_1000k"];
/// Probability per move of each noise kind, as in the corpus test.
const NOISE_RATE: f64 = 0.1;
/// Time between two link gaps on a board, drawn uniformly.
const GAP_EVERY: (u64, u64) = (2 * 60_000, 20 * 60_000);
/// Length of a link gap.
const GAP_LENGTH: (u64, u64) = (500, 8_000);
/// Boards advance together in slices of this much simulated time.
const SLICE: Duration = Duration::from_secs(60);
/// Memory is sampled this often (simulated).
const SAMPLE_EVERY: Duration = Duration::from_secs(600);

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

/// One board of the soak: its simulated board, the game it plays and its link gaps.
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
}

/// Totals and the cases to report.
#[derive(Default)]
struct Tally {
    games: usize,
    plies: usize,
    lost: usize,
    phantom: usize,
    cases: Vec<String>,
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

    /// Starts game `index` of the corpus on this board.
    fn start(&mut self, games: &[Game], index: usize, base_seed: u64) {
        self.game = index;
        self.seed = base_seed << 32 | (self.number as u64) << 20 | self.games_started as u64;
        self.games_started += 1;
        let sim = Simulation::new(sim_config(self.seed), games[index].script.clone());
        self.run.replace_sim(sim);
    }

    /// Compares the record with the game played and counts the differences.
    fn check(&self, games: &[Game], tally: &mut Tally, stuck: Option<String>) {
        let game = &games[self.game];
        let recorded = self.run.core().game().sans();
        let common = recorded
            .iter()
            .zip(&game.sans)
            .take_while(|(a, b)| a == b)
            .count();
        let lost = game.sans.len() - common;
        let phantom = recorded.len() - common;
        tally.games += 1;
        tally.plies += game.sans.len();
        tally.lost += lost;
        tally.phantom += phantom;
        if lost > 0 || phantom > 0 || stuck.is_some() {
            tally.cases.push(format!(
                "board {} seed {:#x} {}: first difference at ply {}: source {:?}, recorded {:?}; \
                 {lost} lost, {phantom} phantom{}",
                self.number,
                self.seed,
                game.name,
                common + 1,
                game.sans.get(common),
                recorded.get(common),
                stuck.map(|s| format!("; stuck: {s}")).unwrap_or_default()
            ));
        }
    }
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
            let mut board = Board {
                number,
                // The first game's simulator comes with `start` below.
                run: SimulatedBoard::new(
                    Simulation::new(sim_config(0), games[0].script.clone()),
                    BoardCore::new(EngineConfig::default()),
                    Duration::ZERO,
                ),
                game: 0,
                seed: 0,
                games_started: 0,
                rng: Rng::stream(base_seed, number as u64),
                gap: (Duration::ZERO, Duration::ZERO),
                gaps: 0,
            };
            board.next_gap(Duration::ZERO);
            board
        })
        .collect();
    for board in &mut boards {
        let index = take_game();
        board.start(&games, index, base_seed);
    }
    let end = Duration::from_secs(hours * 3600);
    let mut tally = Tally::default();
    let mut samples: Vec<(Duration, u64)> = vec![(Duration::ZERO, rss_kib())];
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
                    board.gaps += 1;
                    let now = board.run.now();
                    board.next_gap(now);
                }
                let change = if link_down { board.gap.1 } else { board.gap.0 };
                let until = if gaps_on {
                    horizon.min(change)
                } else {
                    horizon
                };
                let until = until.max(board.run.now());
                let progress = board.run.step(until, &mut |_, _| events += 1);
                match progress {
                    Progress::Running => {
                        if board.run.now() == until && until < horizon {
                            // A link change is due: the loop above applies it.
                            continue;
                        }
                    }
                    Progress::Finished => {
                        board.check(&games, &mut tally, None);
                        let index = take_game();
                        board.start(&games, index, base_seed);
                    }
                    Progress::Stuck(why) => {
                        board.check(&games, &mut tally, Some(why));
                        let index = take_game();
                        board.start(&games, index, base_seed);
                    }
                }
            }
        }
        if horizon.as_secs().is_multiple_of(SAMPLE_EVERY.as_secs()) {
            samples.push((horizon, rss_kib()));
        }
    }
    let wall = started.elapsed();
    let gaps: usize = boards.iter().map(|b| b.gaps).sum();
    println!(
        "soak: {board_count} boards x {hours} simulated hours, seed {base_seed}, gaps {}: \
         {} games finished, {} plies, {gaps} link gaps, {events} steps' outputs, wall {:.1} s",
        if gaps_on { "on" } else { "off" },
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
    for case in &tally.cases {
        println!("  {case}");
    }
    let after_warmup: Vec<u64> = samples
        .iter()
        .filter(|(t, _)| *t >= Duration::from_secs(3600))
        .map(|(_, kib)| *kib)
        .collect();
    let hourly: Vec<String> = samples
        .iter()
        .filter(|(t, _)| t.as_secs().is_multiple_of(3600))
        .map(|(t, kib)| format!("{}h {} MiB", t.as_secs() / 3600, kib / 1024))
        .collect();
    println!("RSS hourly: {}", hourly.join(", "));
    if let (Some(min), Some(max)) = (after_warmup.iter().min(), after_warmup.iter().max()) {
        println!(
            "RSS after the first hour: min {} KiB, max {} KiB, spread {} KiB over {} samples",
            min,
            max,
            max - min,
            after_warmup.len()
        );
    }
}
