//! `boardcast relay --nats URL --http ADDR`: serves the HTTP API, SSE, WebSocket,
//! `games.pgn` and the viewer from what bridges (`run --nats`) publish, so that many
//! bridge machines feed one or more public-facing relays.
//!
//! The relay reads every board's `.state` messages from the JetStream stream: first the
//! last one of each board (so it starts with the full state at once), then live ones.
//! Boards are numbered in the relay by (event, round, board) as they stood at start
//! (rounds compared numerically: 2 before 10), and boards first seen later take the
//! next numbers, so a number never changes while the relay runs. Calls that would change
//! anything are refused: they belong to the bridge that reads the board.

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
use crate::output::nats::{STATE_FILTER, StateMessage, servers, stream_config};
use crate::output::round::Round;

/// How often the relay looks at the shutdown flag.
const SHUTDOWN_POLL: Duration = Duration::from_millis(100);
/// How long to wait before reading the stream again after it broke off.
const RETRY: Duration = Duration::from_secs(1);

/// What the relay runs.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// The NATS server URL.
    pub nats: String,
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
        /// The server URL.
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

/// A board's identity across bridges.
type BoardKey = (String, String, usize);

/// The boards the relay knows: their numbers and the last message applied.
#[derive(Default)]
struct Boards {
    ids: HashMap<BoardKey, usize>,
    /// (run, seq) of the last message applied, by relay number.
    applied: HashMap<usize, (u64, u64)>,
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
        url: config.nats.clone(),
        message,
    };
    let client = async_nats::ConnectOptions::new()
        .name("boardcast relay")
        .connect(servers(&config.nats).map_err(nats_error)?)
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
    let (mut messages, pending) = read_states(&stream)
        .await
        .map_err(|e| nats_error(format!("JetStream consumer: {e}")))?;

    // The state at start: the last message of every board, numbered in order.
    let mut first = Vec::new();
    while (first.len() as u64) < pending {
        let Some(Ok(message)) = messages.next().await else {
            break;
        };
        let done = message.info().is_ok_and(|info| info.pending == 0);
        first.extend(parse(&message.payload));
        if done {
            break;
        }
    }
    first.sort_by_key(board_order);
    let round = first.first().map_or_else(Round::default, |m| Round {
        event: m.event.clone(),
        round: m.round.clone(),
        ..Round::default()
    });
    let hub = Arc::new(Hub::new(&[], round));
    let mut boards = Boards::default();
    for message in first {
        apply(&hub, &mut boards, message);
    }
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
                        apply(&hub, &mut boards, state);
                    }
                }
                Some(Err(e)) => {
                    // E.g. a restarted server that forgot the consumer: read the last
                    // state of every board again; what was applied already is skipped.
                    tracing::warn!("relay: NATS: {e}; reading the stream again");
                    match reopen(&stream, shutdown).await {
                        Some(again) => messages = again,
                        None => break,
                    }
                }
                None => {
                    tracing::warn!("relay: the stream ended; reading it again");
                    match reopen(&stream, shutdown).await {
                        Some(again) => messages = again,
                        None => break,
                    }
                }
            },
            _ = poll.tick() => {}
        }
    }
    Ok(())
}

/// A new consumer of the state messages, retried until NATS answers (None: shut down).
async fn reopen(
    stream: &jetstream::stream::Stream,
    shutdown: &AtomicBool,
) -> Option<consumer::pull::Ordered> {
    while !shutdown.load(Ordering::Relaxed) {
        tokio::time::sleep(RETRY).await;
        match read_states(stream).await {
            Ok((messages, _)) => return Some(messages),
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

fn parse(payload: &[u8]) -> Option<StateMessage> {
    serde_json::from_slice(payload)
        .inspect_err(|e| tracing::warn!("relay: a state message that does not parse: {e}"))
        .ok()
}

/// Adds or updates the board `message` is about.
fn apply(hub: &Hub, boards: &mut Boards, message: StateMessage) {
    let key = (message.event.clone(), message.round.clone(), message.board);
    let remote = RemoteBoard {
        status: message.status,
        view: message.view,
        finished_games: message.finished_games,
    };
    let stamp = (message.run, message.seq);
    match boards.ids.get(&key) {
        Some(&id) => {
            let last = boards.applied.get(&id).copied().unwrap_or_default();
            if stamp.0 == last.0 && stamp.1 <= last.1 {
                // Read again after the stream was recreated: already applied.
                return;
            }
            hub.apply_remote(id, remote, &message.changes);
            boards.applied.insert(id, stamp);
        }
        None => {
            let id = hub.add_remote(remote);
            tracing::info!(
                board = id,
                event = %key.0,
                round = %key.1,
                number = key.2,
                "relay: new board"
            );
            boards.ids.insert(key, id);
            boards.applied.insert(id, stamp);
        }
    }
}

/// The order of boards: by event, then round (dot-separated numbers compared as numbers),
/// then board number.
fn board_order(message: &StateMessage) -> (String, Vec<u64>, String, usize) {
    let numbers = message
        .round
        .split('.')
        .map(|part| part.parse().ok())
        .collect::<Option<Vec<u64>>>()
        .unwrap_or_default();
    (
        message.event.clone(),
        numbers,
        message.round.clone(),
        message.board,
    )
}
