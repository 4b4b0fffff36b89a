//! What the journal (`run --journal`) costs: time per committed move, journal size per
//! game, and the time to restore a board from its journal at start.
//!
//! Corpus games are played by the simulator in simulated time (realistic handling, noise
//! 0.1, a DGT 3000 attached, so a clock reading arrives every second: the largest
//! journal a board writes) and fed, message by message with the engine's timers, to a
//! `JournaledCore` with a journal file and to one without, alternating game by game in
//! the same process. The difference per committed move is the journal's cost; an fsync
//! micro-benchmark on the same file system shows what part of it is the fsync.
//!
//! `cargo bench --bench journal` (journals go under the target directory's tmp; set
//! `JOURNAL_BENCH_DIR` to measure another file system; `JOURNAL_BENCH_GAMES`, default 20).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use boardcast::inference::EngineConfig;
use boardcast::journal::JournaledCore;
use boardcast_protocol::{Command, Decoded, Decoder, Message};
use boardcast_simulator::{ClockConfig, Noise, Script, SimConfig, Simulation, StyleMix};

/// One game's board messages and timer runs as the worker would hand them to the core.
enum Input {
    Message(Message),
    Tick,
}

struct GameInputs {
    inputs: Vec<(Duration, Input)>,
    plies: usize,
}

/// Plays a game on the simulator and records what the core would be given.
fn record(script: &Script, seed: u64) -> GameInputs {
    let config = SimConfig {
        seed,
        styles: StyleMix::realistic(),
        noise: Noise::all(0.1),
        clock: Some(ClockConfig::default()),
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(config, script.clone());
    let mut decoder = Decoder::new();
    // A plain core tells when its timers are due, so the recorded ticks are the worker's.
    let mut core = JournaledCore::unjournaled(EngineConfig::default(), 1);
    let mut inputs = Vec::new();
    let mut init = Vec::new();
    Command::SendUpdateNice.encode_into(&mut init);
    Command::SendBoard.encode_into(&mut init);
    let mut now = Duration::ZERO;
    sim.receive(&init, now);
    for _ in 0..10_000_000 {
        decoder.feed(&sim.advance(now));
        while let Some(decoded) = decoder.poll() {
            if let Decoded::Message(message) = decoded {
                core.on_message(&message, now);
                inputs.push((now, Input::Message(message)));
            }
        }
        if core.next_deadline().is_some_and(|at| at <= now) {
            core.tick(now);
            inputs.push((now, Input::Tick));
        }
        while core.poll_event().is_some() {}
        while sim.poll_report().is_some() {}
        let deadline = core.next_deadline();
        if sim.is_finished() && deadline.is_none() {
            break;
        }
        let Some(next) = [sim.next_wakeup(), deadline].into_iter().flatten().min() else {
            break;
        };
        now = next.max(now);
    }
    GameInputs {
        inputs,
        plies: core.game_status().moves.len(),
    }
}

/// Feeds a game to a core (journalled in `dir`, or not); returns the time taken and the
/// number of committed moves.
fn feed(game: &GameInputs, dir: Option<&Path>) -> (Duration, usize) {
    let start = Instant::now();
    let mut core = JournaledCore::open(EngineConfig::default(), dir, 1, Path::new("/dev/bench"));
    let mut moves = 0;
    for (at, input) in &game.inputs {
        match input {
            Input::Message(message) => {
                core.on_message(message, *at);
            }
            Input::Tick => core.tick(*at),
        }
        while let Some(event) = core.poll_event() {
            moves += usize::from(matches!(
                event,
                boardcast::inference::Event::MoveMade { .. }
            ));
        }
    }
    (start.elapsed(), moves)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Appends `count` commit-sized records, with or without an fsync after each.
fn appends(dir: &Path, count: usize, sync: bool) -> Vec<Duration> {
    let path = dir.join(format!("fsync-{sync}.bin"));
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("bench file");
    let line = b"3f2a9c1e 1773120000 e ply 31: Nxd4\n";
    let mut times: Vec<Duration> = (0..count)
        .map(|_| {
            let start = Instant::now();
            file.write_all(line).expect("write");
            if sync {
                file.sync_data().expect("fsync");
            }
            start.elapsed()
        })
        .collect();
    let _ = std::fs::remove_file(path);
    times.sort();
    times
}

fn main() {
    let dir = std::env::var_os("JOURNAL_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("journal-bench"));
    let games: usize = std::env::var("JOURNAL_BENCH_GAMES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench dir");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/twic1599_1000k.pgn");
    let text = std::fs::read_to_string(corpus).expect("corpus");
    let scripts = Script::parse_pgn(&text).expect("corpus parses");
    let recorded: Vec<GameInputs> = scripts
        .iter()
        .take(games)
        .enumerate()
        .map(|(i, s)| record(s, 0x10_0000 + i as u64))
        .collect();

    let (mut plain, mut journalled, mut moves, mut bytes, mut records) =
        (Duration::ZERO, Duration::ZERO, 0usize, 0u64, 0usize);
    let mut restore = Duration::ZERO;
    let mut game_time = Duration::ZERO;
    for (i, game) in recorded.iter().enumerate() {
        let journal = dir.join(format!("game-{i}"));
        // Alternate the order so drift on a noisy machine hits both.
        let (t_plain, t_journal, committed) = if i % 2 == 0 {
            let (p, _) = feed(game, None);
            let (j, m) = feed(game, Some(&journal));
            (p, j, m)
        } else {
            let (j, m) = feed(game, Some(&journal));
            let (p, _) = feed(game, None);
            (p, j, m)
        };
        plain += t_plain;
        journalled += t_journal;
        moves += committed;
        assert_eq!(committed, game.plies, "game {i}: every move committed once");
        game_time += game.inputs.last().map_or(Duration::ZERO, |(at, _)| *at);
        let file = std::fs::read_dir(&journal)
            .expect("journal dir")
            .map(|e| e.expect("entry").path())
            .next()
            .expect("journal file");
        bytes += std::fs::metadata(&file).expect("journal").len();
        records += std::fs::read_to_string(&file)
            .expect("text")
            .lines()
            .count()
            - 1;
        let start = Instant::now();
        let core = JournaledCore::open(
            EngineConfig::default(),
            Some(&journal),
            1,
            Path::new("/dev/bench"),
        );
        restore += start.elapsed();
        assert_eq!(
            core.game_status().moves.len(),
            game.plies,
            "game {i} restored"
        );
    }
    let n = recorded.len() as u32;
    let per_move = journalled.saturating_sub(plain) / moves.max(1) as u32;
    println!(
        "journal bench: {n} corpus games (twic1599), {moves} moves, dir {}",
        dir.display()
    );
    println!(
        "  feeding the core:   plain {:.1} ms, journalled {:.1} ms (all games)",
        plain.as_secs_f64() * 1e3,
        journalled.as_secs_f64() * 1e3
    );
    println!(
        "  journal cost:       {:.3} ms per committed move (writes + fsync, all records)",
        per_move.as_secs_f64() * 1e3
    );
    println!(
        "  journal size:       {:.1} KiB per game ({} records), {:.0} bytes per move, {:.1} KiB per hour of play",
        bytes as f64 / 1024.0 / f64::from(n),
        records / n as usize,
        bytes as f64 / moves.max(1) as f64,
        bytes as f64 / 1024.0 / (game_time.as_secs_f64() / 3600.0)
    );
    println!(
        "  restore at start:   {:.1} ms per game journal",
        restore.as_secs_f64() * 1e3 / f64::from(n)
    );
    let write_only = appends(&dir, 500, false);
    let synced = appends(&dir, 500, true);
    for (name, times) in [("write only", &write_only), ("write+fsync", &synced)] {
        println!(
            "  {name:<12} one record: p50 {:>8.1} us  p99 {:>8.1} us  max {:>8.1} us",
            percentile(times, 0.5).as_secs_f64() * 1e6,
            percentile(times, 0.99).as_secs_f64() * 1e6,
            times.last().copied().unwrap_or_default().as_secs_f64() * 1e6
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
