//! Replays a recording through the same decoder, mirror and inference as the live
//! daemon, in simulated time, so a session from a tournament hall can be re-run exactly.
//! A bus line's recording also goes through the bus session, which takes the recorded
//! requests as its own and hands each board its messages, as it did live.

use std::time::Duration;

use boardcast_protocol::{BusAddress, BusCommandDecoder, BusInput, Decoded, Decoder, Message};

use crate::board::{BoardCore, GameStatus};
use crate::inference::{EngineConfig, Event};
use crate::link::bus::session::{BusConfig, BusEvent, BusSession};
use crate::link::session::LinkState;
use crate::recording::{BusTiming, Direction, Entry};

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

/// Runs the board's side of a board's recordings through a fresh board core, one
/// recording per connection in the order they were made: the bytes read, and the link
/// losses the live daemon told its core of. Each connection starts a fresh decoder, as
/// live, so a message cut off by a lost link is lost here too.
pub fn replay(connections: &[Vec<Entry>], config: EngineConfig) -> Replayed {
    let mut board = Replayer::new(config);
    let mut last = Duration::ZERO;
    for entries in connections {
        let mut decoder = Decoder::new();
        for entry in entries {
            board.run_timers(entry.at());
            match entry {
                Entry::Traffic(chunk) if chunk.direction == Direction::FromBoard => {
                    decoder.feed(&chunk.bytes);
                    while let Some(decoded) = decoder.poll() {
                        if let Decoded::Message(message) = decoded {
                            board.message(&message, chunk.at);
                        }
                    }
                }
                Entry::Traffic(_) => {}
                Entry::LinkLost { heard, .. } => board.core.link_lost(*heard),
            }
            last = last.max(entry.at());
        }
    }
    board.finish(last)
}

/// Runs a bus line's recording: the requests (`>`) and the replies (`<`) through the bus
/// session, and each board's messages through its own board core, with the link losses
/// (a board fallen silent, the port failed) told to the cores as live. The boards come in
/// the order the live daemon found them (it numbered them in this order). The session
/// runs with the recording's `timing` (the defaults if it names none), as live.
pub fn replay_bus(
    entries: &[Entry],
    timing: Option<BusTiming>,
    config: EngineConfig,
) -> Vec<(BusAddress, Replayed)> {
    let bus = timing.map_or_else(BusConfig::default, BusConfig::from);
    let mut session = BusSession::new(bus.clone(), Duration::ZERO);
    let mut requests = BusCommandDecoder::new();
    let mut boards: Vec<(BusAddress, Replayer)> = Vec::new();
    let mut last = Duration::ZERO;
    for entry in entries {
        let at = entry.at();
        for (_, board) in &mut boards {
            board.run_timers(at);
        }
        session.expire(at);
        let chunk = match entry {
            Entry::Traffic(chunk) => chunk,
            Entry::LinkLost { .. } => {
                take_events(&mut session, &mut boards, &config, at);
                // The port failed: as live, each board that answered is told when it
                // last did, and the reopened port gets a new session knowing the boards.
                for (address, board) in &mut boards {
                    if let Some(heard) = session.heard(*address) {
                        board.core.link_lost(heard);
                    }
                }
                session = BusSession::new(bus.clone(), at);
                for (address, _) in &boards {
                    session.know(*address, at);
                }
                requests = BusCommandDecoder::new();
                last = at;
                continue;
            }
        };
        match chunk.direction {
            Direction::ToBoard => {
                requests.feed(&chunk.bytes);
                while let Some(input) = requests.poll() {
                    if let BusInput::Command(command) = input {
                        session.observe(command, at);
                    }
                }
            }
            Direction::FromBoard => session.on_bytes(&chunk.bytes, at),
        }
        take_events(&mut session, &mut boards, &config, at);
        last = at;
    }
    boards
        .into_iter()
        .map(|(address, board)| (address, board.finish(last)))
        .collect()
}

/// Hands the bus session's events to the boards' cores (a board first heard gets one):
/// their messages, and, when one falls silent, when it last answered, as live.
fn take_events(
    session: &mut BusSession,
    boards: &mut Vec<(BusAddress, Replayer)>,
    config: &EngineConfig,
    at: Duration,
) {
    while let Some(event) = session.poll_event() {
        let (address, message) = match event {
            BusEvent::Discovered(address) => (address, None),
            BusEvent::Message(address, message) => (address, Some(message)),
            BusEvent::Version(address, Some((major, minor))) => {
                (address, Some(Message::Version { major, minor }))
            }
            BusEvent::State(address, LinkState::NotResponding) => {
                let board = boards.iter_mut().find(|(a, _)| *a == address);
                if let (Some((_, board)), Some(heard)) = (board, session.heard(address)) {
                    board.core.link_lost(heard);
                }
                continue;
            }
            _ => continue,
        };
        let index = match boards.iter().position(|(a, _)| *a == address) {
            Some(index) => index,
            None => {
                boards.push((address, Replayer::new(config.clone())));
                boards.len() - 1
            }
        };
        if let Some(message) = message {
            boards[index].1.message(&message, at);
        }
    }
}

/// One board's core in a replay, and what it emitted.
struct Replayer {
    core: BoardCore,
    events: Vec<(Duration, Event)>,
    finished_games: Vec<String>,
}

impl Replayer {
    fn new(config: EngineConfig) -> Self {
        Replayer {
            core: BoardCore::new(config),
            events: Vec::new(),
            finished_games: Vec::new(),
        }
    }

    fn message(&mut self, message: &Message, at: Duration) {
        self.core.on_message(message, at);
        self.drain(at);
    }

    /// Runs every engine timer due up to `until`, each at its own deadline.
    fn run_timers(&mut self, until: Duration) {
        while let Some(deadline) = self.core.next_deadline().filter(|d| *d <= until) {
            self.core.tick(deadline);
            self.drain(deadline);
            if self.core.next_deadline() == Some(deadline) {
                // A timer that does not move on would loop forever; the engine is
                // expected to clear it, so stop here rather than hang a replay.
                break;
            }
        }
    }

    fn drain(&mut self, now: Duration) {
        while let Some(event) = self.core.poll_event() {
            self.events.push((now, event));
        }
        self.finished_games.extend(self.core.take_finished_games());
    }

    /// The timers a little past the recording's end, then the outcome.
    fn finish(mut self, last: Duration) -> Replayed {
        self.run_timers(last + DRAIN);
        Replayed {
            events: self.events,
            game: self.core.game_status(),
            finished_games: self.finished_games,
        }
    }
}

/// What `boardcast replay` prints for one board: with `events`, every engine event and
/// its time, then a blank line; then the games, oldest first, as PGN.
pub fn report(replayed: &Replayed, events: bool) -> String {
    let mut out = String::new();
    if events {
        for (at, event) in &replayed.events {
            out.push_str(&format!("{:>10.3}s  {event}\n", at.as_secs_f64()));
        }
        out.push('\n');
    }
    for pgn in &replayed.finished_games {
        out.push_str(pgn);
    }
    out.push_str(&replayed.game.pgn);
    out
}

/// What `boardcast replay` prints for a bus line: each board's [`report`] after a PGN
/// escape line (`%`, which PGN readers skip) naming the board by its serial number.
pub fn report_bus(boards: &[(BusAddress, Replayed)], events: bool) -> String {
    boards
        .iter()
        .map(|(address, replayed)| format!("% bus board {address}\n{}", report(replayed, events)))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use boardcast_simulator::{BusBoardConfig, BusChain, ClockConfig, Script, SimConfig};

    use super::*;
    use crate::recording::Chunk;

    /// A chain of two boards, one with a clock, each playing its own opening; a share of
    /// the replies has a corrupted checksum.
    fn chain() -> BusChain {
        let games: [&[&str]; 2] = [
            &["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6"],
            &["d4", "Nf6", "c4", "e6", "Nc3", "Bb4", "Qc2", "O-O"],
        ];
        BusChain::new(
            games
                .iter()
                .enumerate()
                .map(|(i, moves)| {
                    let sim = SimConfig {
                        seed: 30 + i as u64,
                        speed: 2.0,
                        clock: (i == 1).then(ClockConfig::default),
                        ..SimConfig::default()
                    };
                    let script = Script::from_fen_and_san(None, moves).expect("script");
                    BusBoardConfig {
                        checksum_faults: 0.1,
                        ..BusBoardConfig::new(sim, format!("{:05}", 2000 + i), script)
                    }
                })
                .collect(),
        )
    }

    #[test]
    fn a_bus_recording_replays_to_every_board_s_live_game() {
        let mut chain = chain();
        let mut session = BusSession::new(BusConfig::default(), Duration::ZERO);
        let mut chunks = Vec::new();
        let mut live: HashMap<BusAddress, BoardCore> = HashMap::new();
        let mut now = Duration::ZERO;
        // The live side, in 1 ms steps: what the bus thread and the boards' threads do.
        // Until two seconds after both games are over, so the last changes are read.
        let mut until = Duration::from_secs(90);
        while now < until {
            if chain.boards().iter().all(|b| b.simulation().is_finished()) {
                until = until.min(now + Duration::from_secs(2));
            }
            session.tick(now);
            while let Some(command) = session.poll_transmit() {
                let bytes = command.encode().to_vec();
                chain.receive(&bytes, now);
                chunks.push(Entry::Traffic(Chunk {
                    at: now,
                    direction: Direction::ToBoard,
                    bytes,
                }));
            }
            let bytes = chain.advance(now);
            if !bytes.is_empty() {
                session.on_bytes(&bytes, now);
                chunks.push(Entry::Traffic(Chunk {
                    at: now,
                    direction: Direction::FromBoard,
                    bytes,
                }));
            }
            while let Some(event) = session.poll_event() {
                let (address, message) = match event {
                    BusEvent::Message(address, message) => (address, message),
                    BusEvent::Version(address, Some((major, minor))) => {
                        (address, Message::Version { major, minor })
                    }
                    _ => continue,
                };
                let core = live
                    .entry(address)
                    .or_insert_with(|| BoardCore::new(EngineConfig::default()));
                core.on_message(&message, now);
                while core.poll_event().is_some() {}
            }
            for core in live.values_mut() {
                if core.next_deadline().is_some_and(|d| d <= now) {
                    core.tick(now);
                    while core.poll_event().is_some() {}
                }
            }
            now += Duration::from_millis(1);
        }
        // Let the last moves settle.
        for core in live.values_mut() {
            if let Some(deadline) = core.next_deadline() {
                core.tick(deadline.max(now));
                while core.poll_event().is_some() {}
            }
        }
        let replayed = replay_bus(&chunks, None, EngineConfig::default());
        let found: Vec<u16> = replayed.iter().map(|(a, _)| a.value()).collect();
        assert_eq!(found, [2000, 2001]);
        for (address, board) in &replayed {
            let game = live[address].game_status();
            assert_eq!(game.moves.len(), 8, "{address}: {:?}", game.moves);
            assert_eq!(board.game.moves, game.moves, "{address}");
            assert_eq!(board.game.pgn, game.pgn, "{address}");
        }
        // The clock's times are in the replayed PGN too.
        assert!(
            replayed[1].1.game.pgn.contains("[%clk "),
            "{}",
            replayed[1].1.game.pgn
        );
        let report = report_bus(&replayed, false);
        assert!(report.starts_with("% bus board 02000\n[Event"), "{report}");
        assert!(report.contains("% bus board 02001\n"), "{report}");
    }
}
