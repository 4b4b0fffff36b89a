//! `boardcast relay --nats URL --http ADDR`: serves the HTTP API, SSE, WebSocket,
//! `games.pgn` and the viewer from what bridges (`run --nats`) publish, so that many
//! bridge machines feed one or more public-facing relays.
//!
//! The relay reads every board's `.state` messages from the JetStream stream: first the
//! last one of each board (so it starts with the full state at once), then live ones.
//!
//! Several relays can serve one broadcast behind a load balancer, so everything a client
//! sees is numbered the same on every relay, whenever it started:
//! * a board keeps its number in the round (`--nats-first-board` on the bridges keeps
//!   those apart); numbers not published yet show as boards still opening. When a newer
//!   round (by the bridges' send time) publishes a board number, it takes the number over
//!   from the older round's board: a relay shows one round at a time.
//! * event ids come from the stream's sequence numbers (see `IDS_PER_MESSAGE`), so a
//!   client can resume (`Last-Event-ID`) on another relay; one that last saw an event
//!   from before the relay (re)loaded the stream gets a snapshot.
//!
//! Calls that would change anything are refused: they belong to the bridge that reads
//! the board.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_nats::jetstream::{self, consumer};
use futures_util::StreamExt;

use crate::error::EXIT_FAILURE;
use crate::http;
use crate::output::hub::{Hub, RemoteBoard};
use crate::output::nats::{STATE_FILTER, StateMessage, stream_config};
use crate::output::nats_connect::NatsServers;
use crate::output::round::Round;

/// How often the relay looks at the shutdown flag.
const SHUTDOWN_POLL: Duration = Duration::from_millis(100);
/// How long to wait before reading the stream again after it broke off.
const RETRY: Duration = Duration::from_secs(1);

/// What the relay runs.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// The NATS servers, and the credentials to log in with.
    pub nats: NatsServers,
    /// Where to serve HTTP.
    pub http: SocketAddr,
}

/// Why the relay stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// The async runtime could not start.
    #[error("cannot start: {0}")]
    Start(std::io::Error),
    /// NATS could not be reached or its JetStream used at start.
    #[error("NATS {url}: {message}")]
    Nats {
        /// The server URL, credentials redacted.
        url: String,
        /// What failed.
        message: String,
    },
    /// The HTTP address cannot be bound.
    #[error("HTTP address {addr}: {source}")]
    Http {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

impl RelayError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        EXIT_FAILURE
    }
}

/// A relay event's id is its state message's stream sequence number times this, plus
/// the change's place in the message.
const IDS_PER_MESSAGE: u64 = 1 << 10;

/// A board's identity across bridges: event, round, number.
type BoardKey = (String, String, usize);

/// What the relay shows under each board number.
#[derive(Default)]
struct Boards {
    shown: HashMap<usize, Shown>,
}

/// The board shown under a number, and its last message applied.
struct Shown {
    key: BoardKey,
    sent_ms: u64,
    /// The bridge's (run, seq).
    stamp: (u64, u64),
}

/// Runs the relay until `shutdown` is set.
pub fn run(config: &RelayConfig, shutdown: Arc<AtomicBool>) -> Result<(), RelayError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("boardcast-relay")
        .enable_all()
        .build()
        .map_err(RelayError::Start)?;
    let result = runtime.block_on(serve(config, &shutdown));
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

async fn serve(config: &RelayConfig, shutdown: &AtomicBool) -> Result<(), RelayError> {
    let nats_error = |message: String| RelayError::Nats {
        url: config.nats.to_string(),
        message,
    };
    let client = config
        .nats
        .connect(async_nats::ConnectOptions::new().name("boardcast relay"))
        .await
        .map_err(|e| nats_error(e.to_string()))?;
    let context = jetstream::new(client);
    let stream = context
        .get_or_create_stream(stream_config())
        .await
        .map_err(|e| {
            nats_error(format!(
                "JetStream stream: {e} (is JetStream enabled, -js?)"
            ))
        })?;
    let (mut messages, loaded) = load_states(&stream)
        .await
        .map_err(|e| nats_error(format!("JetStream consumer: {e}")))?;

    // The round of the newest message names the relay's round.
    let round =
        loaded
            .iter()
            .max_by_key(|(_, m)| m.sent_ms)
            .map_or_else(Round::default, |(_, m)| Round {
                event: m.event.clone(),
                round: m.round.clone(),
                ..Round::default()
            });
    let hub = Arc::new(Hub::new(&[], round));
    let mut boards = Boards::default();
    apply_loaded(&hub, &mut boards, loaded);
    tracing::info!(boards = hub.board_count(), "relay: loaded the stream");

    let listener = http::bind(config.http)
        .await
        .map_err(|source| RelayError::Http {
            addr: config.http,
            source,
        })?;
    tokio::spawn(http::serve_relay(listener, hub.clone()));

    let mut poll = tokio::time::interval(SHUTDOWN_POLL);
    while !shutdown.load(Ordering::Relaxed) {
        tokio::select! {
            message = messages.next() => match message {
                Some(Ok(message)) => {
                    if let Some(state) = parse(&message.payload) {
                        let sequence = message.info().map_or(0, |i| i.stream_sequence);
                        hub.advance_event_ids(sequence * IDS_PER_MESSAGE);
                        apply(&hub, &mut boards, state);
                    }
                }
                Some(Err(e)) => {
                    // E.g. a restarted server that forgot the consumer: read the last
                    // state of every board again; what was applied already is skipped.
                    tracing::warn!("relay: NATS: {e}; reading the stream again");
                    match reopen(&stream, shutdown).await {
                        Some((again, loaded)) => {
                            messages = again;
                            apply_loaded(&hub, &mut boards, loaded);
                        }
                        None => break,
                    }
                }
                None => {
                    tracing::warn!("relay: the stream ended; reading it again");
                    match reopen(&stream, shutdown).await {
                        Some((again, loaded)) => {
                            messages = again;
                            apply_loaded(&hub, &mut boards, loaded);
                        }
                        None => break,
                    }
                }
            },
            _ = poll.tick() => {}
        }
    }
    Ok(())
}

/// A new consumer of the state messages and the last message of every board, retried
/// until NATS answers (None: shut down).
async fn reopen(
    stream: &jetstream::stream::Stream,
    shutdown: &AtomicBool,
) -> Option<(consumer::pull::Ordered, Vec<(u64, StateMessage)>)> {
    while !shutdown.load(Ordering::Relaxed) {
        tokio::time::sleep(RETRY).await;
        match load_states(stream).await {
            Ok(loaded) => return Some(loaded),
            Err(e) => tracing::warn!("relay: NATS: {e}; retrying"),
        }
    }
    None
}

/// An ordered consumer of every board's state messages, from the last of each, and how
/// many messages it starts with.
async fn read_states(
    stream: &jetstream::stream::Stream,
) -> Result<(consumer::pull::Ordered, u64), Box<dyn std::error::Error + Send + Sync>> {
    let consumer = stream
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: STATE_FILTER.into(),
            deliver_policy: consumer::DeliverPolicy::LastPerSubject,
            ..Default::default()
        })
        .await?;
    let pending = consumer.cached_info().num_pending;
    Ok((consumer.messages().await?, pending))
}

/// A consumer of the state messages, and the last message of every board with its
/// stream sequence number, read from it.
async fn load_states(
    stream: &jetstream::stream::Stream,
) -> Result<
    (consumer::pull::Ordered, Vec<(u64, StateMessage)>),
    Box<dyn std::error::Error + Send + Sync>,
> {
    let (mut messages, pending) = read_states(stream).await?;
    let mut loaded = Vec::new();
    let mut read = 0;
    while read < pending {
        let Some(message) = messages.next().await else {
            break;
        };
        let message = message?;
        read += 1;
        let info = message.info()?;
        let (sequence, done) = (info.stream_sequence, info.pending == 0);
        loaded.extend(parse(&message.payload).map(|m| (sequence, m)));
        if done {
            break;
        }
    }
    Ok((messages, loaded))
}

/// Applies the last message of every board, as (re)read from the stream, and numbers
/// the next events after the newest of them; the events in between were never seen
/// here, so resuming from before now gives a snapshot.
fn apply_loaded(hub: &Hub, boards: &mut Boards, loaded: Vec<(u64, StateMessage)>) {
    let newest = loaded.iter().map(|(sequence, _)| *sequence).max();
    for (_, message) in loaded {
        apply(hub, boards, message);
    }
    if let Some(newest) = newest {
        hub.advance_event_ids(newest * IDS_PER_MESSAGE + IDS_PER_MESSAGE - 1);
    }
    hub.forget_events();
}

fn parse(payload: &[u8]) -> Option<StateMessage> {
    serde_json::from_slice(payload)
        .inspect_err(|e| tracing::warn!("relay: a state message that does not parse: {e}"))
        .ok()
}

/// Shows the board `message` is about under its number, or updates it.
fn apply(hub: &Hub, boards: &mut Boards, message: StateMessage) {
    let id = message.board;
    if id == 0 {
        tracing::warn!("relay: a state message for board 0, skipped");
        return;
    }
    let key = (message.event.clone(), message.round.clone(), id);
    let stamp = (message.run, message.seq);
    let mut changes = message.changes;
    // Each change needs an id of its own below the next message's (one more for a new
    // board's connection event); a bridge sends a handful at a time.
    let room = IDS_PER_MESSAGE as usize - 2;
    if changes.len() > room {
        tracing::warn!(
            board = id,
            changes = changes.len(),
            "relay: only the last {room} changes of a message are sent on"
        );
        changes.drain(..changes.len() - room);
    }
    let remote = RemoteBoard {
        status: message.status,
        view: message.view,
        finished_games: message.finished_games,
    };
    let shown = Shown {
        key,
        sent_ms: message.sent_ms,
        stamp,
    };
    match boards.shown.get(&id) {
        Some(last) if last.key == shown.key => {
            if stamp.0 == last.stamp.0 && stamp.1 <= last.stamp.1 {
                // Read again after the stream was reopened: already applied.
                return;
            }
            hub.apply_remote(id, remote, &changes);
        }
        Some(last) if last.sent_ms > shown.sent_ms => {
            // A board of an older round than the one shown under this number.
            return;
        }
        last => {
            tracing::info!(
                board = id,
                event = %shown.key.0,
                round = %shown.key.1,
                replaces = ?last.map(|l| (&l.key.0, &l.key.1)),
                "relay: showing a board"
            );
            hub.put_remote(id, remote, &changes);
        }
    }
    boards.shown.insert(id, shown);
}
