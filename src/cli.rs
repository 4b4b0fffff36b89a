//! The command line: every subcommand and option, with the help text users read.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Parser, Subcommand};

use crate::inference::{EngineConfig, Mode};
use crate::output::nats_connect::{NatsAuth, NatsServers, Secret};

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
    // Boxed: its options outweigh every other command's (clippy::large_enum_variant).
    Run(Box<RunArgs>),
    /// Run a simulated DGT board on a pseudo-terminal, for tests and demos.
    Simulate(boardcast_simulator::cli::SimulateArgs),
    /// List serial ports and mark the ones that look like DGT boards.
    Ports,
    /// Play a bundled real game on a simulated board and show the live result.
    Demo(DemoArgs),
    /// Re-run a recording made with `run --record` (or a `--journal` file) and print the
    /// games as PGN.
    Replay(ReplayArgs),
    /// Serve the HTTP API, live events and viewer of boards that bridges (`run --nats`)
    /// publish to NATS.
    Relay(RelayArgs),
}

/// Options of `boardcast run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Serial port of a board (e.g. /dev/ttyACM0). Repeat for several boards; they are
    /// numbered from 1 in the order given. (Or list boards by port or serial number in
    /// the --config file, or use --auto.)
    #[arg(long = "port", value_name = "PATH")]
    pub ports: Vec<PathBuf>,
    /// Serial port of a chain of older DGT boards in bus mode (repeat for several
    /// chains). The boards are found by ping and take the numbers the config file gives
    /// their serial numbers, or else the next free board numbers, in the order they answer.
    #[arg(long = "bus", value_name = "PATH")]
    pub bus: Vec<PathBuf>,
    /// Pick up DGT boards as they are plugged in; each gets the next free board number
    /// (or the one the config file gives its serial number).
    #[arg(long)]
    pub auto: bool,
    /// Where to look for boards plugged in (with --auto or boards listed by serial
    /// number); `*` in the file name matches anything. Repeat for several (default:
    /// /dev/ttyACM*, /dev/ttyUSB*, /dev/rfcomm*).
    #[arg(long = "scan", value_name = "PATTERN")]
    pub scan: Vec<String>,
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
    /// Keep each board's raw serial traffic, with timestamps, in a file in this directory,
    /// and each bus line's in one file (`boardcast replay FILE` re-runs it).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Journal every board's moves and inputs in this directory (fsync'd at each move),
    /// and restore every game and move from it at start: after a crash or power loss,
    /// run again with the same directory and ports. Overrides `journal` in --config.
    #[arg(long, value_name = "DIR")]
    pub journal: Option<PathBuf>,
    /// Serve the HTTP API and the viewer page on this address (default 127.0.0.1:8080;
    /// port 0 picks a free port, logged as `listening on http://ADDR`).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Do not serve HTTP.
    #[arg(long, conflicts_with = "http")]
    pub no_http: bool,
    /// Most HTTP connections served at once (SSE and WebSocket viewers included); more
    /// are answered `503 Service Unavailable` and closed.
    #[arg(long, value_name = "N", default_value_t = crate::http::DEFAULT_MAX_CONNECTIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65536))]
    pub max_connections: usize,
    /// Seconds an HTTP client has to send a request's line and headers; a connection
    /// that takes longer (or sits idle that long between requests) is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::http::DEFAULT_HEADER_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout: u64,
    /// Seconds an HTTP client may take nothing of what it is sent (a viewer that
    /// stopped reading its event stream) before its connection is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::http::DEFAULT_STALL_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub stall_timeout: u64,
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
    /// Publish every board's events, PGN and state to this NATS server (with JetStream),
    /// e.g. nats://127.0.0.1:4222, for `boardcast relay` and other readers.
    /// Credentials may be in its userinfo (nats://USER:PASSWORD@HOST, nats://TOKEN@HOST)
    /// or in the --nats-user, --nats-password and --nats-token options.
    #[arg(long, value_name = "URL", value_parser = NatsUrl)]
    pub nats: Option<NatsServers>,
    /// The number of this bridge's board 1 in the round on NATS, when several bridges
    /// feed one round (board N is published as N + FIRST - 1).
    #[arg(long, value_name = "FIRST", default_value_t = 1, requires = "nats", value_parser = clap::value_parser!(u64).range(1..))]
    pub nats_first_board: u64,
    /// How to log in to NATS.
    #[command(flatten)]
    pub nats_login: NatsLoginArgs,
}

/// Options of `boardcast relay`.
#[derive(Debug, Args)]
pub struct RelayArgs {
    /// The NATS server the bridges publish to, e.g. nats://127.0.0.1:4222 (credentials as
    /// for `run --nats`).
    #[arg(long, value_name = "URL", value_parser = NatsUrl)]
    pub nats: NatsServers,
    /// How to log in to NATS.
    #[command(flatten)]
    pub nats_login: NatsLoginArgs,
    /// Serve the HTTP API and the viewer page on this address (port 0 picks a free port,
    /// logged as `listening on http://ADDR`).
    #[arg(long, value_name = "ADDR", default_value_t = crate::daemon::DEFAULT_HTTP)]
    pub http: std::net::SocketAddr,
}

/// The NATS credentials of `run` and `relay`, when the URL has none. The secrets are
/// best given in the environment: the command line shows in `ps`.
#[derive(Debug, Args)]
pub struct NatsLoginArgs {
    /// The NATS user name, with --nats-password.
    #[arg(
        long,
        value_name = "USER",
        env = "BOARDCAST_NATS_USER",
        requires = "nats_password"
    )]
    pub nats_user: Option<String>,
    /// The NATS password of --nats-user. Better in the environment: the command line
    /// shows in `ps`.
    #[arg(
        long,
        value_name = "PASSWORD",
        env = "BOARDCAST_NATS_PASSWORD",
        hide_env_values = true,
        requires = "nats_user"
    )]
    pub nats_password: Option<Secret>,
    /// The NATS token. Better in the environment: the command line shows in `ps`.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "BOARDCAST_NATS_TOKEN",
        hide_env_values = true,
        conflicts_with = "nats_user"
    )]
    pub nats_token: Option<Secret>,
}

impl NatsLoginArgs {
    /// The credentials these options give.
    pub fn auth(&self) -> NatsAuth {
        match (&self.nats_user, &self.nats_password, &self.nats_token) {
            (Some(user), Some(password), _) => NatsAuth::UserPassword {
                user: user.clone(),
                password: password.clone(),
            },
            (_, _, Some(token)) => NatsAuth::Token(token.clone()),
            _ => NatsAuth::Anonymous,
        }
    }
}

/// How moves are worked out from the board.
#[derive(Debug, Args)]
pub struct InferenceArgs {
    /// How long the board must stay unchanged, in milliseconds, before a move is
    /// recorded: longer than one scan of the board. A DGT board scans in 200-250 ms over
    /// USB and at half speed over Bluetooth (give 500 there).
    #[arg(long, value_name = "MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(1..=2000))]
    pub settle_ms: u64,
    /// The boards sense occupancy only (piece codes 0/1, as a DGT Pegasus). A board
    /// reporting firmware 1.0 is taken for a Pegasus anyway.
    #[arg(long)]
    pub occupancy_only: bool,
    /// Tournament mode: takebacks are reported as irregular instead of retracting moves.
    #[arg(long)]
    pub tournament: bool,
    /// Deepest sequence of moves searched to explain a board after missed updates (two
    /// more on an occupancy-only board, and for moves the board read being made faster
    /// than it rested).
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
            ..EngineConfig::default()
        }
    }
}

/// The inference options by their argument ids (the field names).
const INFERENCE_IDS: [&str; 5] = [
    "settle_ms",
    "occupancy_only",
    "tournament",
    "search_plies",
    "auto_reanchor",
];

impl InferenceArgs {
    /// `base` with each of these options that `matches` (the subcommand's) shows given on
    /// the command line in its place, and the options so given, as written.
    pub fn engine_config_over(
        &self,
        base: EngineConfig,
        matches: &ArgMatches,
    ) -> (EngineConfig, Vec<String>) {
        let given: Vec<&str> = INFERENCE_IDS
            .into_iter()
            .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
            .collect();
        let ours = self.engine_config();
        let mut config = base;
        for id in &given {
            match *id {
                "settle_ms" => config.settle = ours.settle,
                "occupancy_only" => config.occupancy_only = ours.occupancy_only,
                "tournament" => config.mode = ours.mode,
                "search_plies" => config.max_search_plies = ours.max_search_plies,
                _ => config.auto_reanchor = ours.auto_reanchor,
            }
        }
        let written = given
            .iter()
            .map(|id| format!("--{}", id.replace('_', "-")))
            .collect();
        (config, written)
    }
}

/// Options of `boardcast replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A recording written by `boardcast run --record DIR`, or a journal written by
    /// `boardcast run --journal DIR` (its games are printed; --events is for recordings).
    /// A board whose link was lost and reopened has one recording per connection: give
    /// them all, in the order they were written (their names sort that way).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Print every inference event, with its time, before the PGN.
    #[arg(long)]
    pub events: bool,
    /// Inference settings: a recording or a journal names the ones it was made with and
    /// replays with them; an option given here takes the place of the recorded one.
    #[command(flatten)]
    pub inference: InferenceArgs,
    /// Replay in casual mode (takebacks retract moves) though the file names tournament
    /// mode.
    #[arg(long, conflicts_with = "tournament")]
    pub no_tournament: bool,
    /// Replay reading piece codes though the file names occupancy-only boards (a board
    /// that reported firmware 1.0 is still read as a Pegasus).
    #[arg(long, conflicts_with = "occupancy_only")]
    pub no_occupancy_only: bool,
}

impl ReplayArgs {
    /// `recorded` (the settings a file names) with each inference option given on the
    /// command line in its place, `--no-tournament` and `--no-occupancy-only` turning
    /// those off, and the options so given, as written.
    pub fn engine_config_over(
        &self,
        recorded: EngineConfig,
        matches: &ArgMatches,
    ) -> (EngineConfig, Vec<String>) {
        let (mut config, mut given) = self.inference.engine_config_over(recorded, matches);
        if self.no_tournament {
            config.mode = Mode::Casual;
            given.push("--no-tournament".into());
        }
        if self.no_occupancy_only {
            config.occupancy_only = false;
            given.push("--no-occupancy-only".into());
        }
        (config, given)
    }
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

/// Reads a `--nats` URL (see [`NatsServers::parse`]). Not a plain function parser:
/// clap would put the value, credentials and all, in its error message.
#[derive(Clone)]
struct NatsUrl;

impl TypedValueParser for NatsUrl {
    type Value = NatsServers;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<NatsServers, clap::Error> {
        let invalid = |message: String| {
            let name = arg.map_or_else(|| "--nats".to_string(), ToString::to_string);
            clap::Error::raw(
                ErrorKind::ValueValidation,
                format!("invalid value for '{name}': {message}\n"),
            )
            .with_cmd(cmd)
        };
        let url = value.to_str().ok_or_else(|| invalid("not UTF-8".into()))?;
        NatsServers::parse(url).map_err(|e| invalid(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches};

    use super::*;
    use crate::daemon::HttpListen;

    fn replay_over(args: &[&str], base: EngineConfig) -> (EngineConfig, Vec<String>) {
        let matches = Cli::command()
            .try_get_matches_from(["boardcast", "replay", "x.rec"].iter().chain(args))
            .expect("parses");
        let Command::Replay(replay) = Cli::from_arg_matches(&matches).expect("args").command else {
            panic!("replay");
        };
        let sub = matches.subcommand_matches("replay").expect("replay");
        replay.engine_config_over(base, sub)
    }

    #[test]
    fn a_settle_window_covers_a_bluetooth_boards_scan() {
        let settle = |ms: &str| {
            Cli::command()
                .try_get_matches_from(["boardcast", "replay", "x.rec", "--settle-ms", ms])
                .map(|m| {
                    m.subcommand_matches("replay")
                        .and_then(|r| r.get_one::<u64>("settle_ms").copied())
                })
        };
        assert_eq!(settle("500").expect("parses"), Some(500));
        assert_eq!(settle("2000").expect("parses"), Some(2000));
        for refused in ["0", "2001"] {
            let err = settle(refused).expect_err("out of range");
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{refused}"
            );
        }
    }

    #[test]
    fn options_given_take_the_place_of_the_recorded_ones() {
        let recorded = EngineConfig {
            settle: Duration::from_millis(100),
            mode: Mode::Tournament,
            occupancy_only: true,
            auto_reanchor: Some(Duration::from_secs(4)),
            max_search_plies: 6,
            ..EngineConfig::default()
        };
        // Nothing given: the recorded settings, defaults of the options notwithstanding.
        assert_eq!(
            replay_over(&[], recorded.clone()),
            (recorded.clone(), vec![])
        );
        let (config, given) = replay_over(
            &[
                "--settle-ms",
                "250",
                "--search-plies",
                "4",
                "--auto-reanchor",
                "9",
            ],
            recorded.clone(),
        );
        assert_eq!(
            config,
            EngineConfig {
                settle: Duration::from_millis(250),
                max_search_plies: 4,
                auto_reanchor: Some(Duration::from_secs(9)),
                ..recorded
            }
        );
        assert_eq!(given, ["--settle-ms", "--search-plies", "--auto-reanchor"]);
        let (config, given) = replay_over(
            &["--tournament", "--occupancy-only"],
            EngineConfig::default(),
        );
        assert_eq!(
            config,
            EngineConfig {
                mode: Mode::Tournament,
                occupancy_only: true,
                ..EngineConfig::default()
            }
        );
        assert_eq!(given, ["--occupancy-only", "--tournament"]);
        // A recorded tournament mode or occupancy-only board turned off.
        let (config, given) = replay_over(
            &["--no-tournament", "--no-occupancy-only"],
            recorded.clone(),
        );
        assert_eq!(
            config,
            EngineConfig {
                mode: Mode::Casual,
                occupancy_only: false,
                ..recorded
            }
        );
        assert_eq!(given, ["--no-tournament", "--no-occupancy-only"]);
    }

    #[test]
    fn an_option_and_its_negation_conflict() {
        for (on, off) in [
            ("--tournament", "--no-tournament"),
            ("--occupancy-only", "--no-occupancy-only"),
        ] {
            let parsed =
                Cli::command().try_get_matches_from(["boardcast", "replay", "x.rec", on, off]);
            assert!(parsed.is_err(), "{on} {off}");
        }
    }

    /// The address each command serves HTTP on when given no `--http`.
    fn default_http(args: &[&str]) -> std::net::SocketAddr {
        let parsed = Cli::try_parse_from(["boardcast"].iter().chain(args)).expect("parses");
        let listen = match parsed.command {
            Command::Run(run) => HttpListen::from_options(run.http, run.no_http),
            Command::Demo(demo) => HttpListen::from_options(demo.http, demo.no_http),
            Command::Relay(relay) => HttpListen::Required(relay.http),
            _ => panic!("{args:?} serves no HTTP"),
        };
        match listen {
            HttpListen::Default(addr) | HttpListen::Required(addr) => addr,
            HttpListen::Off => panic!("{args:?}: HTTP off"),
        }
    }

    #[test]
    fn http_listens_on_loopback_unless_told_otherwise() {
        for args in [
            &["run", "--port", "/dev/ttyACM0"][..],
            &["demo"],
            &["relay", "--nats", "nats://127.0.0.1:4222"],
        ] {
            let addr = default_http(args);
            assert!(addr.ip().is_loopback(), "{args:?}: {addr}");
        }
        let told = default_http(&["run", "--port", "/dev/a", "--http", "0.0.0.0:80"]);
        assert!(told.ip().is_unspecified(), "--http is followed: {told}");
    }
}
