//! Replays a recording through the same decoder, mirror and inference as the live
//! daemon, in simulated time, so a session from a tournament hall can be re-run exactly.

use std::time::Duration;

use boardcast_protocol::{Decoded, Decoder};

use crate::board::{BoardCore, GameStatus};
use crate::inference::{EngineConfig, Event};
use crate::recording::{Chunk, Direction};

/// How long after the last recorded byte the engine's timers are still run, so a move
/// completed just before the recording ended is settled.
const DRAIN: Duration = Duration::from_secs(10);

/// What a replay produced.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// Every engine event with the time it was emitted.
    pub events: Vec<(Duration, Event)>,
    /// The game as it stands at the end.
    pub game: GameStatus,
    /// PGN of games that ended earlier in the recording.
    pub finished_games: Vec<String>,
}

/// Runs the board's side of `chunks` through a fresh board core.
pub fn replay(chunks: &[Chunk], config: EngineConfig) -> Replayed {
    let mut core = BoardCore::new(config);
    let mut decoder = Decoder::new();
    let mut events = Vec::new();
    let mut finished_games = Vec::new();
    let mut drain = |core: &mut BoardCore, now: Duration| {
        while let Some(event) = core.poll_event() {
            events.push((now, event));
        }
        finished_games.extend(core.take_finished_games());
    };
    let mut last = Duration::ZERO;
    for chunk in chunks
        .iter()
        .filter(|c| c.direction == Direction::FromBoard)
    {
        run_timers(&mut core, chunk.at, &mut drain);
        decoder.feed(&chunk.bytes);
        while let Some(decoded) = decoder.poll() {
            if let Decoded::Message(message) = decoded {
                core.on_message(&message, chunk.at);
                drain(&mut core, chunk.at);
            }
        }
        last = chunk.at;
    }
    run_timers(&mut core, last + DRAIN, &mut drain);
    Replayed {
        events,
        game: core.game_status(),
        finished_games,
    }
}

/// Runs every engine timer due up to `until`, each at its own deadline.
fn run_timers(
    core: &mut BoardCore,
    until: Duration,
    drain: &mut impl FnMut(&mut BoardCore, Duration),
) {
    while let Some(deadline) = core.next_deadline().filter(|d| *d <= until) {
        core.tick(deadline);
        drain(core, deadline);
        if core.next_deadline() == Some(deadline) {
            // A timer that does not move on would loop forever; the engine is expected
            // to clear it, so stop here rather than hang a replay.
            break;
        }
    }
}
