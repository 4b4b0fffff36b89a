//! The command line: every subcommand and option, with the help text users read.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::inference::{EngineConfig, Mode};

/// boardcast turns electronic chessboards into live, correct PGN.
#[derive(Debug, Parser)]
#[command(name = "boardcast", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the daemon on one or more boards.
    Run(RunArgs),
    /// Run a simulated DGT board on a pseudo-terminal, for tests and demos.
    Simulate(boardcast_simulator::cli::SimulateArgs),
    /// List serial ports and mark the ones that look like DGT boards.
    Ports,
    /// Play a bundled real game on a simulated board and show the live result.
    Demo(DemoArgs),
    /// Re-run a recording made with `run --record` and print the game as PGN.
    Replay(ReplayArgs),
}

/// Options of `boardcast run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Serial port of a board (e.g. /dev/ttyACM0). Repeat for several boards; they are
    /// numbered from 1 in the order given.
    #[arg(long = "port", value_name = "PATH", required_unless_present = "bus")]
    pub ports: Vec<PathBuf>,
    /// Serial port of a chain of older DGT boards in bus mode (repeat for several
    /// chains). The boards are found by ping and numbered after the --port boards, in
    /// the order they answer.
    #[arg(long = "bus", value_name = "PATH")]
    pub bus: Vec<PathBuf>,
    /// Keep a JSON snapshot of every board's status in this file, rewritten atomically on
    /// every change.
    #[arg(long, value_name = "PATH")]
    pub status_file: Option<PathBuf>,
    /// Seconds to wait for a board to answer before reporting it (the daemon keeps trying).
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub answer_timeout: u64,
    /// Seconds of silence after which a board is reported as not responding (at least
    /// 2: the board is asked for a sign of life every second).
    #[arg(long, value_name = "SECONDS", default_value_t = 3, value_parser = clap::value_parser!(u64).range(2..))]
    pub silence_timeout: u64,
    /// Inference settings.
    #[command(flatten)]
    pub inference: InferenceArgs,
    /// Keep each board's raw serial traffic, with timestamps, in a file in this directory
    /// (`boardcast replay FILE` re-runs it).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Serve the HTTP API and the viewer page on this address (default 127.0.0.1:8080;
    /// port 0 picks a free port, logged as `listening on http://ADDR`).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Do not serve HTTP.
    #[arg(long, conflicts_with = "http")]
    pub no_http: bool,
    /// Bearer token for the API calls that change anything (default: one is generated
    /// and printed at start).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "BOARDCAST_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Keep the round's games in this directory as `games.pgn` (all boards) and
    /// `game-N.pgn` (board N), rewritten atomically on every change.
    #[arg(long, value_name = "DIR")]
    pub pgn_dir: Option<PathBuf>,
    /// TOML file with the round's game data (event, site, round, players per board) and
    /// an optional lichess broadcast to push to.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// How moves are worked out from the board.
#[derive(Debug, Args)]
pub struct InferenceArgs {
    /// How long the board must stay unchanged, in milliseconds, before a move is
    /// recorded. A DGT scan takes 200-250 ms.
    #[arg(long, value_name = "MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(1..=300))]
    pub settle_ms: u64,
    /// The boards sense occupancy only (piece codes 0/1, as a DGT Pegasus). A board
    /// reporting firmware 1.0 is taken for a Pegasus anyway.
    #[arg(long)]
    pub occupancy_only: bool,
    /// Tournament mode: takebacks are reported as irregular instead of retracting moves.
    #[arg(long)]
    pub tournament: bool,
    /// Deepest sequence of moves searched to explain a board after missed updates.
    #[arg(long, value_name = "PLIES", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=6))]
    pub search_plies: u64,
    /// Accept an irregular board as the new position once it has been unchanged this many
    /// seconds (default: wait for the operator).
    #[arg(long, value_name = "SECONDS")]
    pub auto_reanchor: Option<u64>,
}

impl InferenceArgs {
    /// The engine settings these options describe.
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            settle: Duration::from_millis(self.settle_ms),
            max_search_plies: usize::try_from(self.search_plies).unwrap_or(4),
            mode: if self.tournament {
                Mode::Tournament
            } else {
                Mode::Casual
            },
            occupancy_only: self.occupancy_only,
            auto_reanchor: self.auto_reanchor.map(Duration::from_secs),
        }
    }
}

/// Options of `boardcast replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A recording written by `boardcast run --record DIR`.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Print every inference event, with its time, before the PGN.
    #[arg(long)]
    pub events: bool,
    /// Inference settings (use the ones the recording was made with).
    #[command(flatten)]
    pub inference: InferenceArgs,
}

/// Options of `boardcast demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Play faster (2 = twice as fast) or slower than a real game.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Seed for the simulated players' handling and noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print each new state on its own instead of redrawing the screen.
    #[arg(long)]
    pub plain: bool,
    /// Serve the HTTP API and the viewer page on this address (default 127.0.0.1:8080,
    /// skipped with a warning if taken).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Do not serve HTTP.
    #[arg(long, conflicts_with = "http")]
    pub no_http: bool,
}
