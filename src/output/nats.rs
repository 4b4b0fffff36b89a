//! `--nats URL`: publishes every board's live events, current PGN and full state to NATS,
//! and keeps the last PGN and state per board in a JetStream stream so that a late joiner
//! (a relay, a script) gets the state at once.
//!
//! Subjects, per board: `boardcast.<event>.<round>.<board>.events` (each live event, the
//! same JSON as SSE), `.pgn` (the current game) and `.state` (a [`StateMessage`]: what a
//! relay needs to serve the board). The event and round names are mapped to subject tokens
//! by [`token`]. The stream [`STREAM`] holds `.pgn` and `.state`, one message per subject.
//!
//! The publisher reads the hub's live events like any client and never holds up a board:
//! if it falls behind it lags and republishes every board's state; while NATS is away it
//! keeps (bounded) what it owes each board, and on every (re)connection it makes sure the
//! stream exists and republishes every board.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_nats::jetstream;
use async_nats::jetstream::stream::{Config as StreamConfig, StorageType};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use crate::status::BoardStatus;

use super::event::Change;
use super::hub::Hub;
use super::nats_connect::NatsServers;
use super::view::BoardView;

/// The JetStream stream that keeps each board's last PGN and state.
pub const STREAM: &str = "BOARDCAST";
/// The subjects the stream keeps.
pub const STATE_SUBJECTS: [&str; 2] = ["boardcast.*.*.*.pgn", "boardcast.*.*.*.state"];
/// Every board's state messages, for a relay.
pub const STATE_FILTER: &str = "boardcast.*.*.*.state";
/// Most events kept for one board while NATS is away; older ones are dropped (the state
/// message that follows carries the board's whole view anyway).
const OWED_EVENTS: usize = 4096;
/// How long to wait before retrying a failed stream set-up.
const RETRY: Duration = Duration::from_secs(1);

/// Where and how to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NatsTarget {
    /// The servers, and the credentials to log in with.
    pub servers: NatsServers,
    /// The number this bridge's board 1 has in the round, so that several bridges can
    /// feed one round (board N is published as `first_board + N - 1`).
    pub first_board: usize,
}

/// One board's full state, as kept in the stream on `.state`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StateMessage {
    /// The Event tag.
    pub event: String,
    /// The round (the R of the Round tag `R.B`).
    pub round: String,
    /// The board's number in the round (the bridge's board number plus its offset).
    pub board: usize,
    /// The board's status on the bridge.
    pub status: BoardStatus,
    /// The board's view on the bridge.
    pub view: BoardView,
    /// The current game as PGN.
    pub pgn: String,
    /// The games the board finished, oldest first.
    pub finished_games: Vec<String>,
    /// The changes since the previous state message of this bridge, oldest first (empty
    /// when nothing is owed, e.g. a republish after reconnecting).
    pub changes: Vec<Change>,
    /// When the bridge sent it, milliseconds since the Unix epoch.
    pub sent_ms: u64,
    /// The bridge's run (when its publisher started, ms since the epoch) and the
    /// message's number within it for this board, so that a reader can skip a message
    /// it has already applied.
    pub run: u64,
    /// See `run`.
    pub seq: u64,
}

/// The subject token for a name: ASCII letters, digits, `-` and `_` stay; every other
/// byte of the UTF-8 name (`.`, spaces, `*`, `>`, `%`, non-ASCII) becomes `%XX`, so that
/// the mapping is reversible and two names never share a token. An empty name is `%`.
pub fn token(name: &str) -> String {
    if name.is_empty() {
        return "%".into();
    }
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The subject prefix of board `board` of `round` in `event`.
pub fn board_subject(event: &str, round: &str, board: usize) -> String {
    format!("boardcast.{}.{}.{board}", token(event), token(round))
}

/// The stream's configuration: state subjects only, the last message of each.
pub fn stream_config() -> StreamConfig {
    StreamConfig {
        name: STREAM.into(),
        subjects: STATE_SUBJECTS.iter().map(|s| s.to_string()).collect(),
        max_messages_per_subject: 1,
        storage: StorageType::File,
        ..StreamConfig::default()
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What the publisher owes one board that is due a state message: the event JSON not
/// yet sent.
#[derive(Default)]
struct Owed {
    events: VecDeque<String>,
}

/// Publishes the hub to NATS until the hub goes away. Never returns an error: NATS being
/// away is logged and waited out.
pub async fn publish_to_nats(hub: Arc<Hub>, target: NatsTarget) {
    let (connection_tx, mut connection) = mpsc::unbounded_channel();
    let options = async_nats::ConnectOptions::new()
        .name("boardcast bridge")
        .retry_on_initial_connect()
        .event_callback(move |event| {
            let sent = connection_tx.send(event);
            async move { drop(sent) }
        });
    let client = match target.servers.connect(options).await {
        Ok(client) => client,
        Err(e) => {
            tracing::error!(url = %target.servers, "NATS: cannot connect: {e}");
            return;
        }
    };
    let stream = jetstream::new(client.clone());
    let mut live = hub.subscribe(None, None).live;
    let mut owed: BTreeMap<usize, Owed> = all_boards(&hub);
    let mut sender = Sender {
        run: now_ms(),
        seq: BTreeMap::new(),
    };
    let mut ready = false;
    loop {
        tokio::select! {
            event = connection.recv() => {
                let Some(event) = event else { return };
                match event {
                    async_nats::Event::Connected => {
                        tracing::info!(url = %target.servers, "NATS: connected");
                        ready = ensure_stream(&stream).await;
                        // Whatever went out before may be lost (a restarted server):
                        // every board's state goes out again.
                        for (id, board) in all_boards(&hub) {
                            owed.entry(id).or_insert(board);
                        }
                    }
                    async_nats::Event::Disconnected => {
                        tracing::warn!(url = %target.servers, "NATS: disconnected; boards keep recording, reconnecting");
                        ready = false;
                    }
                    // A failed (re)connection, e.g. "authorization violation" for wrong
                    // credentials: worth seeing, as async-nats retries it for ever.
                    async_nats::Event::ClientError(e) => {
                        tracing::warn!(url = %target.servers, "NATS: {e}; retrying");
                    }
                    other => tracing::debug!("NATS: {other}"),
                }
            }
            received = live.recv() => match received {
                Ok(published) => owe(&mut owed, published.board, published.json.clone()),
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "NATS publisher fell behind; republishing every board");
                    for (id, board) in all_boards(&hub) {
                        owed.entry(id).or_insert(board);
                    }
                }
                Err(RecvError::Closed) => return,
            },
            _ = tokio::time::sleep(RETRY), if !ready && !owed.is_empty()
                && client.connection_state() == async_nats::connection::State::Connected => {
                ready = ensure_stream(&stream).await;
            }
        }
        // Take what else has arrived, so that a burst goes out as one state per board.
        while let Ok(published) = live.try_recv() {
            owe(&mut owed, published.board, published.json.clone());
        }
        if ready && client.connection_state() == async_nats::connection::State::Connected {
            flush(&client, &hub, &target, &mut owed, &mut sender).await;
        }
    }
}

/// This run's numbering of each board's state messages.
struct Sender {
    run: u64,
    seq: BTreeMap<usize, u64>,
}

fn all_boards(hub: &Hub) -> BTreeMap<usize, Owed> {
    (1..=hub.board_count())
        .map(|id| (id, Owed::default()))
        .collect()
}

fn owe(owed: &mut BTreeMap<usize, Owed>, board: usize, json: String) {
    if board == 0 {
        return;
    }
    let events = &mut owed.entry(board).or_default().events;
    if events.len() == OWED_EVENTS {
        events.pop_front();
    }
    events.push_back(json);
}

/// Creates the stream if it is missing; false (logged) if the server refuses.
async fn ensure_stream(context: &jetstream::Context) -> bool {
    match context.get_or_create_stream(stream_config()).await {
        Ok(_) => true,
        Err(e) => {
            tracing::error!(
                "NATS: cannot set up JetStream stream {STREAM}: {e} (is JetStream enabled, -js?)"
            );
            false
        }
    }
}

/// Sends what is owed to every board; what cannot be sent stays owed.
async fn flush(
    client: &async_nats::Client,
    hub: &Hub,
    target: &NatsTarget,
    owed: &mut BTreeMap<usize, Owed>,
    sender: &mut Sender,
) {
    let round = hub.round();
    while let Some((id, board)) = owed.pop_first() {
        let Some((status, view, finished_games, pgn)) = hub.board_state(id) else {
            continue;
        };
        let number = target.first_board + id - 1;
        let prefix = board_subject(&round.event, &round.round, number);
        let changes = board
            .events
            .iter()
            .filter_map(|json| serde_json::from_str::<Change>(json).ok())
            .collect();
        let message = StateMessage {
            event: round.event.clone(),
            round: round.round.clone(),
            board: number,
            status,
            view,
            pgn: pgn.clone(),
            finished_games,
            changes,
            sent_ms: now_ms(),
            run: sender.run,
            seq: {
                let seq = sender.seq.entry(id).or_default();
                *seq += 1;
                *seq
            },
        };
        let Ok(state) = serde_json::to_vec(&message) else {
            continue;
        };
        let mut sent = Ok(());
        for json in &board.events {
            sent = sent.and(
                client
                    .publish(format!("{prefix}.events"), json.clone().into())
                    .await,
            );
        }
        sent = sent
            .and(client.publish(format!("{prefix}.pgn"), pgn.into()).await)
            .and(
                client
                    .publish(format!("{prefix}.state"), state.into())
                    .await,
            );
        if let Err(e) = sent {
            tracing::warn!(board = id, "NATS: publish failed: {e}; will retry");
            owed.insert(id, board);
            return;
        }
    }
    if let Err(e) = client.flush().await {
        tracing::debug!("NATS: flush: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_reversible_and_valid() {
        assert_eq!(token("Club Championship"), "Club%20Championship");
        assert_eq!(token("1.2"), "1%2E2");
        assert_eq!(token("a*b>c%"), "a%2Ab%3Ec%25");
        assert_eq!(token("Zürich-Open_2"), "Z%C3%BCrich-Open_2");
        assert_eq!(token(""), "%");
        assert_eq!(
            board_subject("Open", "3", 12),
            "boardcast.Open.3.12".to_string()
        );
        for name in ["a.b c", "*", ">", "x\ty"] {
            let t = token(name);
            assert!(!t.contains(['.', ' ', '*', '>', '\t']), "{t}");
        }
    }

    #[test]
    fn changes_read_back_from_event_json() {
        let json =
            r#"{"id":3,"board":1,"type":"move","ply":1,"san":"e4","uci":"e2e4","state":{"id":1}}"#;
        let change: Change = serde_json::from_str(json).expect("change");
        assert_eq!(
            change,
            Change::Move {
                ply: 1,
                san: "e4".into(),
                uci: "e2e4".into()
            }
        );
        let tags: Change =
            serde_json::from_str(r#"{"id":4,"board":1,"type":"tags","state":{}}"#).expect("tags");
        assert_eq!(tags, Change::Tags);
    }
}
