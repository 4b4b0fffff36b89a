//! The boardcast binary: parses the command line, sets up logging, and hands over to the
//! library. Errors become one line on stderr and a distinct exit code.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use boardcast::cli::{Cli, Command, ReplayArgs, RunArgs};
use boardcast::daemon::{self, DaemonConfig, HttpListen};
use boardcast::error::EXIT_FAILURE;
use boardcast::link::session::LinkConfig;
use boardcast::output::config::{self, FileConfig};
use boardcast::{demo, ports, recording, replay, signals};

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Simulate(args) => {
            boardcast_simulator::cli::run(args).map_err(|e| (EXIT_FAILURE, e.to_string()))
        }
        Command::Ports => ports::print_ports()
            .map(|_| ())
            .map_err(|e| (EXIT_FAILURE, format!("cannot list serial ports: {e}"))),
        Command::Replay(args) => replay(&args),
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

fn run(args: RunArgs) -> Result<(), (i32, String)> {
    let file = match &args.config {
        Some(path) => config::load(path).map_err(|e| (EXIT_FAILURE, e.to_string()))?,
        None => FileConfig::default(),
    };
    let config = DaemonConfig {
        ports: args.ports,
        bus_ports: args.bus,
        status_file: args.status_file,
        link: LinkConfig {
            answer_timeout: Duration::from_secs(args.answer_timeout),
            silence_timeout: Duration::from_secs(args.silence_timeout),
            record_dir: args.record,
            ..LinkConfig::default()
        },
        engine: args.inference.engine_config(),
        http: HttpListen::from_options(args.http, args.no_http),
        token: args.token,
        pgn_dir: args.pgn_dir,
        round: file.round,
        push: file.push,
    };
    daemon::run(&config, signals::shutdown_flag(), |_| {})
        .map_err(|e| (e.exit_code(), e.to_string()))
}

fn replay(args: &ReplayArgs) -> Result<(), (i32, String)> {
    let failed = |e: String| (EXIT_FAILURE, format!("{}: {e}", args.file.display()));
    let text = std::fs::read_to_string(&args.file).map_err(|e| failed(e.to_string()))?;
    let chunks = recording::parse(&text).map_err(|e| failed(e.to_string()))?;
    let replayed = replay::replay(&chunks, args.inference.engine_config());
    let mut out = String::new();
    if args.events {
        for (at, event) in &replayed.events {
            out.push_str(&format!("{:>10.3}s  {event}\n", at.as_secs_f64()));
        }
        out.push('\n');
    }
    for pgn in &replayed.finished_games {
        out.push_str(pgn);
    }
    out.push_str(&replayed.game.pgn);
    print!("{out}");
    Ok(())
}
