//! `boardcast demo`: a simulated board plays a bundled real game on a pseudo-terminal,
//! the daemon reads it like real hardware, and the terminal shows the live result.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use boardcast_simulator::{DEMO_PGN, PtyBoard, Script, SimConfig, Source, spawn_on_pty};

use crate::cli::DemoArgs;
use crate::daemon::{self, DaemonConfig, HttpListen, RunError};
use crate::error::EXIT_FAILURE;
use crate::inference::EngineConfig;
use crate::link::session::LinkConfig;
use crate::output::round::{Players, Round};
use crate::status::DaemonStatus;

/// How long the demo keeps showing the board after the game's last move.
const LINGER: Duration = Duration::from_secs(2);

/// Why the demo could not run.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The bundled game did not parse (a build problem, reported rather than panicking).
    #[error("bundled demo game: {0}")]
    Script(String),
    /// The simulated board could not start.
    #[error("simulated board: {0}")]
    Simulator(String),
    /// The daemon failed.
    #[error(transparent)]
    Daemon(#[from] RunError),
}

impl DemoError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            DemoError::Daemon(e) => e.exit_code(),
            _ => EXIT_FAILURE,
        }
    }
}

/// Runs the demo until the game is over or `shutdown` is set.
pub fn run(args: &DemoArgs, shutdown: Arc<AtomicBool>) -> Result<(), DemoError> {
    let script = Script::parse_pgn(DEMO_PGN)
        .map_err(|e| DemoError::Script(e.to_string()))?
        .into_iter()
        .next()
        .ok_or_else(|| DemoError::Script("no game in the bundled PGN".into()))?;
    let sim_config = SimConfig {
        seed: args.seed,
        speed: args.speed,
        ..SimConfig::default()
    };
    let script_tags = script.tags().to_vec();
    let board = spawn_on_pty(sim_config, Source::Script(script))
        .map_err(|e| DemoError::Simulator(e.to_string()))?;
    let config = DaemonConfig {
        ports: vec![board.path().to_path_buf()],
        bus_ports: Vec::new(),
        discovery: None,
        status_file: None,
        link: LinkConfig::default(),
        engine: EngineConfig::default(),
        http: HttpListen::from_options(args.http, args.no_http),
        token: None,
        pgn_dir: None,
        round: round_of(&script_tags),
        push: None,
        nats: None,
        http_limits: crate::http::Limits::default(),
    };
    let stop = shutdown.clone();
    let watcher = std::thread::spawn(move || stop_when_finished(board, stop));
    let plain = args.plain;
    let result = daemon::run(&config, shutdown.clone(), |status| render(status, plain));
    shutdown.store(true, Ordering::Relaxed);
    let _ = watcher.join();
    result.map_err(DemoError::from)
}

/// The round data of the bundled game, so the demo's PGN carries its real tags.
fn round_of(tags: &[(String, String)]) -> Round {
    let tag = |name: &str| tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let mut round = Round::default();
    round.event = tag("Event").unwrap_or(round.event);
    round.site = tag("Site").unwrap_or(round.site);
    round.date = tag("Date").unwrap_or(round.date);
    round.set_players(
        1,
        Players {
            white: tag("White"),
            black: tag("Black"),
        },
    );
    round
}

/// Waits for the simulated game to end, lets the screen settle, then stops the daemon.
fn stop_when_finished(board: PtyBoard, shutdown: Arc<AtomicBool>) {
    while !shutdown.load(Ordering::Relaxed) {
        if board.is_finished() {
            std::thread::sleep(LINGER);
            shutdown.store(true, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    board.stop();
}

fn render(status: &DaemonStatus, plain: bool) {
    let mut out = String::new();
    if !plain {
        // Clear the screen and go home, so the board redraws in place.
        out.push_str("\x1b[2J\x1b[H");
    }
    for board in &status.boards {
        out.push_str(&format!(
            "board {} on {}: {:?}\n",
            board.id,
            board.port.display(),
            board.connection
        ));
        if let Some(text) = &board.board {
            out.push_str(&diagram(text));
        }
        if let Some(game) = &board.game {
            out.push_str(&format!("{:?}\n\n{}", game.state, game.pgn));
        }
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
}

/// Draws a `RawBoard` text (index 0 = a8) as eight ranks with coordinates.
pub fn diagram(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    for (row, rank) in chars.chunks(8).zip((1..=8).rev()) {
        out.push_str(&format!(" {rank} "));
        for c in row {
            out.push(' ');
            out.push(*c);
        }
        out.push('\n');
    }
    out.push_str("    a b c d e f g h\n");
    out
}
