//! The boardcast binary: parses the command line, sets up logging, and hands over to the
//! library. Errors become one line on stderr and a distinct exit code.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgMatches, CommandFactory, FromArgMatches};
use tracing_subscriber::EnvFilter;

use boardcast::cli::{Cli, Command, RelayArgs, ReplayArgs, RunArgs};
use boardcast::daemon::{self, DaemonConfig, HttpListen};
use boardcast::error::EXIT_FAILURE;
use boardcast::http::Limits;
use boardcast::inference::EngineConfig;
use boardcast::link::discovery::{DEFAULT_PATTERNS, DiscoveryConfig};
use boardcast::link::plan::{self, BoardPlan, PlanError};
use boardcast::link::session::LinkConfig;
use boardcast::output::config::{self, FileConfig};
use boardcast::output::nats::NatsTarget;
use boardcast::relay::{self, RelayConfig};
use boardcast::{demo, journal, ports, recording, replay, signals};

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    // The matches too: a replay needs to know which options were given, not defaulted.
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Some(flag) = matches
        .subcommand_matches("run")
        .and_then(nats_login_without_server)
    {
        let message = format!("--{flag} is only used with --nats");
        Cli::command()
            .error(clap::error::ErrorKind::MissingRequiredArgument, message)
            .exit();
    }
    let result = match cli.command {
        Command::Run(args) => run(*args),
        Command::Simulate(args) => {
            boardcast_simulator::cli::run(args).map_err(|e| (EXIT_FAILURE, e.to_string()))
        }
        Command::Ports => ports::print_ports()
            .map(|_| ())
            .map_err(|e| (EXIT_FAILURE, format!("cannot list serial ports: {e}"))),
        Command::Replay(args) => {
            let given = matches.subcommand_matches("replay").unwrap_or(&matches);
            replay(&args, given)
        }
        Command::Relay(args) => run_relay(&args),
        Command::Demo(args) => {
            demo::run(&args, signals::shutdown_flag()).map_err(|e| (e.exit_code(), e.to_string()))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, message)) => {
            eprintln!("boardcast: {message}");
            ExitCode::from(u8::try_from(code).unwrap_or(1))
        }
    }
}

/// A NATS login option typed on `run`'s command line with no `--nats` server to log in
/// to: a mistake to say so, not to ignore. (The same in the environment may be meant
/// for other commands, such as a relay's.)
fn nats_login_without_server(given: &ArgMatches) -> Option<&'static str> {
    if given.value_source("nats").is_some() {
        return None;
    }
    [
        ("nats_user", "nats-user"),
        ("nats_password", "nats-password"),
        ("nats_token", "nats-token"),
    ]
    .into_iter()
    .find(|(id, _)| given.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
    .map(|(_, flag)| flag)
}

fn run(args: RunArgs) -> Result<(), (i32, String)> {
    let file = match &args.config {
        Some(path) => config::load(path).map_err(|e| (EXIT_FAILURE, e.to_string()))?,
        None => FileConfig::default(),
    };
    let plan = match plan::plan(&args.ports, &file.boards, args.auto) {
        // Bus ports alone are boards enough.
        Err(PlanError::NoBoards) if !args.bus.is_empty() => BoardPlan::default(),
        planned => planned.map_err(|e| (EXIT_FAILURE, file.place(e).to_string()))?,
    };
    let discovery = plan.discover.then(|| DiscoveryConfig {
        patterns: match args.scan.is_empty() {
            true => DEFAULT_PATTERNS.map(String::from).to_vec(),
            false => args.scan.clone(),
        },
        serials: plan.serials,
        auto: args.auto,
    });
    let config = DaemonConfig {
        ports: plan.ports,
        bus_ports: args.bus,
        discovery,
        status_file: args.status_file,
        link: LinkConfig {
            answer_timeout: Duration::from_secs(args.answer_timeout),
            silence_timeout: Duration::from_secs(args.silence_timeout),
            record_dir: args.record,
            journal_dir: args.journal.or(file.journal),
            ..LinkConfig::default()
        },
        engine: args.inference.engine_config(),
        http: HttpListen::from_options(args.http, args.no_http),
        token: args.token,
        pgn_dir: args.pgn_dir,
        round: file.round,
        push: file.push,
        nats: match args.nats {
            Some(servers) => Some(NatsTarget {
                servers: servers
                    .with_auth(args.nats_login.auth())
                    .map_err(|e| (EXIT_FAILURE, format!("--nats {e}")))?,
                first_board: usize::try_from(args.nats_first_board).unwrap_or(1),
            }),
            None => None,
        },
        http_limits: Limits {
            max_connections: args.max_connections,
            header_timeout: Duration::from_secs(args.header_timeout),
            stall_timeout: Duration::from_secs(args.stall_timeout),
        },
    };
    daemon::run(&config, signals::shutdown_flag(), |_| {})
        .map_err(|e| (e.exit_code(), e.to_string()))
}

fn run_relay(args: &RelayArgs) -> Result<(), (i32, String)> {
    let config = RelayConfig {
        nats: args
            .nats
            .clone()
            .with_auth(args.nats_login.auth())
            .map_err(|e| (EXIT_FAILURE, format!("--nats {e}")))?,
        http: args.http,
    };
    relay::run(&config, signals::shutdown_flag()).map_err(|e| (e.exit_code(), e.to_string()))
}

/// The engine settings to replay `text` (a recording or a journal) with: the ones it
/// names (the defaults for one that names none), each option given on the command line
/// taking the place of its recorded setting. Says which on stderr.
fn replay_engine(
    args: &ReplayArgs,
    matches: &ArgMatches,
    text: &str,
) -> Result<EngineConfig, recording::ParseError> {
    let recorded = recording::EngineSettings::read(text)?;
    let named = recorded.is_some();
    let (config, given) = args.engine_config_over(recorded.unwrap_or_default(), matches);
    let from = match (named, given.is_empty()) {
        (true, true) => "as recorded".to_string(),
        (true, false) => format!("as recorded but {}", given.join(", ")),
        (false, true) => "the defaults (the file names none)".to_string(),
        (false, false) => format!("the file names none; {} as given", given.join(", ")),
    };
    tracing::info!(
        "replaying with engine settings {from}: {}",
        recording::EngineSettings::line(&config).trim_start_matches("# engine ")
    );
    Ok(config)
}

fn replay(args: &ReplayArgs, matches: &ArgMatches) -> Result<(), (i32, String)> {
    let failed = |file: &Path, e: String| (EXIT_FAILURE, format!("{}: {e}", file.display()));
    let mut texts = Vec::new();
    for file in &args.files {
        let text = std::fs::read_to_string(file).map_err(|e| failed(file, e.to_string()))?;
        texts.push((file.as_path(), text));
    }
    if let [(file, text)] = texts.as_slice() {
        if text.starts_with(journal::format::HEADER) {
            let engine =
                replay_engine(args, matches, text).map_err(|e| failed(file, e.to_string()))?;
            let games = journal::replay(text.as_bytes(), engine)
                .map_err(|e| failed(file, e.to_string()))?;
            print!("{games}");
            return Ok(());
        }
        if text.starts_with(recording::BUS_HEADER) {
            let entries = recording::parse(text).map_err(|e| failed(file, e.to_string()))?;
            let engine =
                replay_engine(args, matches, text).map_err(|e| failed(file, e.to_string()))?;
            print!(
                "{}",
                replay::report_bus(
                    &replay::replay_bus(&entries, recording::BusTiming::read(text), engine),
                    args.events
                )
            );
            return Ok(());
        }
    }
    let mut connections: Vec<Vec<recording::Entry>> = Vec::new();
    for (file, text) in &texts {
        if text.starts_with(journal::format::HEADER) || text.starts_with(recording::BUS_HEADER) {
            let what = "a journal or a bus line's recording replays alone; several files \
                        replay as one board's recordings, in order";
            return Err(failed(file, what.to_string()));
        }
        let entries = recording::parse(text).map_err(|e| failed(file, e.to_string()))?;
        let ended = connections.iter().flatten().map(|e| e.at()).max();
        if let (Some(ended), Some(first)) = (ended, entries.first())
            && first.at() < ended
        {
            let why = format!(
                "starts at {} ms, before the recording before it ends ({} ms): give one \
                 daemon run's recordings of one board, in the order they were written",
                first.at().as_millis(),
                ended.as_millis()
            );
            return Err(failed(file, why));
        }
        connections.push(entries);
    }
    // One daemon run's recordings of a board: the first names the settings of them all.
    let (file, text) = texts
        .first()
        .ok_or((EXIT_FAILURE, "no recording".to_string()))?;
    let engine = replay_engine(args, matches, text).map_err(|e| failed(file, e.to_string()))?;
    let replayed = replay::replay(&connections, engine);
    print!("{}", replay::report(&replayed, args.events));
    Ok(())
}
