//! The hub every output reads: each board's latest status and view, the games each
//! board finished, the round's game data, and the numbered stream of live events with
//! a bounded ring of recent ones for clients that reconnect.
//!
//! Updates come from the board workers (through the daemon); readers take the lock only
//! briefly, and live events go out through a broadcast channel, so a slow client never
//! holds up a board: it lags, and then receives a snapshot instead of what it missed.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{broadcast, watch};

use crate::link::worker::BoardUpdate;
use crate::status::{BoardStatus, DaemonStatus};

use super::event::{Change, EventJson, SnapshotJson, status_changes};
use super::round::{Players, Round};
use super::view::BoardView;

/// How many recent events a reconnecting client can catch up on.
const RING: usize = 4096;
/// How many events a live client may fall behind before it is sent a snapshot.
const LIVE_BACKLOG: usize = 1024;

/// One event, serialised once for every client.
#[derive(Debug)]
pub struct Published {
    /// The event id (a snapshot carries the id of the last event it includes).
    pub id: u64,
    /// The board it concerns; 0 for a snapshot of all boards.
    pub board: usize,
    /// The event as JSON.
    pub json: String,
}

/// A client's start: what it missed (or a snapshot), then the live events.
pub struct Subscription {
    /// Events to send first, oldest first.
    pub backlog: Vec<Arc<Published>>,
    /// Live events after the backlog.
    pub live: broadcast::Receiver<Arc<Published>>,
}

/// The shared live state of all boards.
pub struct Hub {
    state: Mutex<HubState>,
    live: broadcast::Sender<Arc<Published>>,
    /// Bumped whenever any PGN output changes, for the file writer and the pusher.
    pgn_changed: watch::Sender<u64>,
}

struct HubState {
    status: DaemonStatus,
    views: Vec<BoardView>,
    /// Games each board finished, by board number − 1, oldest first.
    archives: Vec<Vec<String>>,
    round: Round,
    ring: VecDeque<Arc<Published>>,
    last_id: u64,
    /// The oldest event id a client can resume from: every event after it is in the
    /// ring (ids need not be consecutive).
    resumable_from: u64,
}

impl Hub {
    /// A hub for boards on `ports` (numbered from 1), tagged from `round`.
    pub fn new(ports: &[PathBuf], round: Round) -> Hub {
        let status = DaemonStatus {
            boards: ports
                .iter()
                .enumerate()
                .map(|(i, port)| BoardStatus::new(i + 1, port.clone()))
                .collect(),
        };
        let views = status
            .boards
            .iter()
            .map(|b| BoardView::new(b, &round))
            .collect();
        Hub {
            state: Mutex::new(HubState {
                archives: vec![Vec::new(); ports.len()],
                status,
                views,
                round,
                ring: VecDeque::with_capacity(RING),
                last_id: 0,
                resumable_from: 0,
            }),
            live: broadcast::channel(LIVE_BACKLOG).0,
            pgn_changed: watch::channel(0).0,
        }
    }

    /// Adds board `id`, found after the start at `port`, if it is the next number (the
    /// boards stay numbered 1..=n); its worker's updates follow.
    pub fn add_board(&self, id: usize, port: &std::path::Path) {
        let mut state = self.lock();
        if id != state.status.boards.len() + 1 {
            return;
        }
        let status = BoardStatus::new(id, port.to_path_buf());
        let view = BoardView::new(&status, &state.round);
        state.views.push(view);
        state.status.boards.push(status);
        state.archives.push(Vec::new());
    }

    /// Adds a board found after the start at `port` under the next free number and
    /// returns that number: the one allocator for boards found by discovery (`--auto`)
    /// and on a bus, so their numbers never collide.
    pub fn add_next_board(&self, port: &std::path::Path) -> usize {
        let mut state = self.lock();
        let id = state.status.boards.len() + 1;
        let status = BoardStatus::new(id, port.to_path_buf());
        let view = BoardView::new(&status, &state.round);
        state.views.push(view);
        state.status.boards.push(status);
        state.archives.push(Vec::new());
        id
    }

    fn lock(&self) -> MutexGuard<'_, HubState> {
        // A panic elsewhere while holding the lock leaves consistent data (every write
        // is a whole replacement), so carry on with it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes in a worker's update and publishes what changed.
    pub fn apply(&self, update: BoardUpdate) {
        let mut state = self.lock();
        let Some(index) = update.status.id.checked_sub(1) else {
            return;
        };
        if index >= state.status.boards.len() {
            // Every board number comes from this hub (add_next_board), so this is a bug.
            tracing::error!(
                board = index + 1,
                "update for a board the hub does not know"
            );
            return;
        }
        let before = &state.status.boards[index];
        let pgn_changed = before.game.as_ref().map(|g| &g.pgn)
            != update.status.game.as_ref().map(|g| &g.pgn)
            || !update.finished_games.is_empty();
        let mut changes: Vec<Change> = update.events.iter().map(Change::from).collect();
        changes.extend(status_changes(before, &update.status));
        state.views[index] = BoardView::new(&update.status, &state.round);
        state.status.boards[index] = update.status;
        state.archives[index].extend(update.finished_games);
        for change in &changes {
            self.publish(&mut state, index, change);
        }
        drop(state);
        if pgn_changed {
            self.pgn_changed.send_modify(|n| *n += 1);
        }
    }

    fn publish(&self, state: &mut HubState, index: usize, change: &Change) {
        state.last_id += 1;
        let event = EventJson {
            id: state.last_id,
            board: index + 1,
            change,
            state: &state.views[index],
        };
        let published = Arc::new(Published {
            id: state.last_id,
            board: index + 1,
            json: serde_json::to_string(&event).unwrap_or_default(),
        });
        if state.ring.len() == RING
            && let Some(dropped) = state.ring.pop_front()
        {
            state.resumable_from = dropped.id;
        }
        state.ring.push_back(published.clone());
        // No receivers is fine: nobody is watching.
        let _ = self.live.send(published);
    }

    /// Starts a client. `since` is the last event id it has seen (SSE Last-Event-ID);
    /// without one, or when the ring no longer reaches back that far, the client starts
    /// from a snapshot. `board` limits the stream to one board.
    pub fn subscribe(&self, since: Option<u64>, board: Option<usize>) -> Subscription {
        let state = self.lock();
        // Subscribing under the lock: every event is either in the backlog or live.
        let live = self.live.subscribe();
        let backlog = match since {
            Some(since) if since >= state.resumable_from && since <= state.last_id => state
                .ring
                .iter()
                .filter(|p| p.id > since && board.is_none_or(|b| p.board == b))
                .cloned()
                .collect(),
            _ => vec![snapshot_of(&state, board)],
        };
        Subscription { backlog, live }
    }

    /// The full state as a snapshot event, for a client that fell behind.
    pub fn snapshot(&self, board: Option<usize>) -> Arc<Published> {
        snapshot_of(&self.lock(), board)
    }

    /// Every board's view, in board order.
    pub fn views(&self) -> Vec<BoardView> {
        self.lock().views.clone()
    }

    /// Board `id`'s view.
    pub fn view(&self, id: usize) -> Option<BoardView> {
        self.lock().views.get(id.checked_sub(1)?).cloned()
    }

    /// Board `id`'s current game as PGN.
    pub fn current_pgn(&self, id: usize) -> Option<String> {
        let state = self.lock();
        current_pgn_of(&state, id)
    }

    /// Every game board `id` has played since the daemon started, the current one last
    /// (once it has a move, or when there is no other).
    pub fn games(&self, id: usize) -> Option<Vec<String>> {
        let state = self.lock();
        let mut games = state.archives.get(id.checked_sub(1)?)?.clone();
        let current = &state.status.boards[id - 1].game;
        if games.is_empty() || current.as_ref().is_some_and(|g| !g.moves.is_empty()) {
            games.extend(current_pgn_of(&state, id));
        }
        Some(games)
    }

    /// Every board's current game, in board order.
    pub fn round_games(&self) -> Vec<String> {
        let state = self.lock();
        (1..=state.views.len())
            .filter_map(|id| current_pgn_of(&state, id))
            .collect()
    }

    /// The round's game data.
    pub fn round(&self) -> Round {
        self.lock().round.clone()
    }

    /// Changes the round's game data; every board's view follows and a `tags` event
    /// goes out for each board whose tags changed.
    pub fn set_round(&self, round: Round) {
        let mut state = self.lock();
        let before = state.round.clone();
        state.round = round;
        for index in 0..state.views.len() {
            if before.tags(index + 1) != state.round.tags(index + 1) {
                state.views[index] = BoardView::new(&state.status.boards[index], &state.round);
                self.publish(&mut state, index, &Change::Tags);
            }
        }
    }

    /// Changes the players at board `id`.
    pub fn set_players(&self, id: usize, players: Players) {
        let mut round = self.round();
        round.set_players(id, players);
        self.set_round(round);
    }

    /// Calls `f` with the daemon's status.
    pub fn with_status<T>(&self, f: impl FnOnce(&DaemonStatus) -> T) -> T {
        f(&self.lock().status)
    }

    /// Notifies of every change to a PGN output.
    pub fn pgn_changes(&self) -> watch::Receiver<u64> {
        self.pgn_changed.subscribe()
    }

    /// How many boards there are.
    pub fn board_count(&self) -> usize {
        self.lock().views.len()
    }

    /// Board `id`'s status, view, finished games and current PGN, taken together.
    pub fn board_state(&self, id: usize) -> Option<(BoardStatus, BoardView, Vec<String>, String)> {
        let state = self.lock();
        let index = id.checked_sub(1)?;
        Some((
            state.status.boards.get(index)?.clone(),
            state.views.get(index)?.clone(),
            state.archives.get(index)?.clone(),
            current_pgn_of(&state, id)?,
        ))
    }

    /// Shows board `id` as fed from elsewhere (a relay's NATS feed), adding it, and
    /// numbers below it not seen yet as boards still opening, when it is new; live
    /// clients are told by a connection event, then get `changes`.
    pub fn put_remote(&self, id: usize, board: RemoteBoard, changes: &[Change]) {
        if id == 0 {
            return;
        }
        let mut state = self.lock();
        while state.views.len() < id {
            let status = BoardStatus::new(state.views.len() + 1, PathBuf::new());
            let view = BoardView::new(&status, &state.round);
            state.status.boards.push(status);
            state.views.push(view);
            state.archives.push(Vec::new());
        }
        drop(state);
        let mut all = vec![Change::Connection {
            connection: board.status.connection,
            serial: board.status.serial.clone(),
        }];
        all.extend_from_slice(changes);
        self.apply_remote(id, board, &all);
    }

    /// Moves the event numbering on so that the next event gets at least `id + 1`. A
    /// relay numbers its events from the NATS stream's sequence this way, so that every
    /// relay gives the same event the same id and a client can resume on any of them.
    pub fn advance_event_ids(&self, id: u64) {
        let mut state = self.lock();
        state.last_id = state.last_id.max(id);
    }

    /// Forgets the recent events: a client that asks to resume from before now gets a
    /// snapshot. For a relay that (re)loaded boards from their last messages, whose
    /// events in between it never saw.
    pub fn forget_events(&self) {
        let mut state = self.lock();
        state.ring.clear();
        state.resumable_from = state.last_id;
    }

    /// Replaces board `id` with what its bridge published, and publishes `changes`
    /// (what happened since the bridge's previous message) as live events.
    pub fn apply_remote(&self, id: usize, mut board: RemoteBoard, changes: &[Change]) {
        let mut state = self.lock();
        let Some(index) = id.checked_sub(1).filter(|i| *i < state.views.len()) else {
            return;
        };
        board.status.id = id;
        board.view.id = id;
        state.status.boards[index] = board.status;
        state.views[index] = board.view;
        state.archives[index] = board.finished_games;
        for change in changes {
            self.publish(&mut state, index, change);
        }
        drop(state);
        self.pgn_changed.send_modify(|n| *n += 1);
    }
}

/// A board as another daemon published it (see `output::nats`).
pub struct RemoteBoard {
    /// Its status there (the id is replaced by this hub's number).
    pub status: BoardStatus,
    /// Its view there (likewise).
    pub view: BoardView,
    /// The games it finished, oldest first.
    pub finished_games: Vec<String>,
}

fn current_pgn_of(state: &HubState, id: usize) -> Option<String> {
    let board = state.status.boards.get(id.checked_sub(1)?)?;
    Some(match &board.game {
        Some(game) => game.pgn.clone(),
        None => state.round.empty_game(id),
    })
}

fn snapshot_of(state: &HubState, board: Option<usize>) -> Arc<Published> {
    let boards = match board {
        Some(id) => id
            .checked_sub(1)
            .and_then(|i| state.views.get(i..=i))
            .unwrap_or(&[]),
        None => &state.views,
    };
    let json = serde_json::to_string(&SnapshotJson {
        id: state.last_id,
        kind: "snapshot",
        boards,
    })
    .unwrap_or_default();
    Arc::new(Published {
        id: state.last_id,
        board: 0,
        json,
    })
}

#[cfg(test)]
mod tests {
    use tokio::sync::broadcast::error::TryRecvError;

    use super::*;
    use crate::inference::Event;

    fn hub() -> Hub {
        Hub::new(&[PathBuf::from("/dev/board1")], Round::default())
    }

    fn moves(hub: &Hub, count: usize) {
        for ply in 1..=count {
            hub.apply(BoardUpdate {
                status: BoardStatus::new(1, "/dev/board1".into()),
                events: vec![Event::MoveMade {
                    ply,
                    san: "e4".into(),
                    uci: "e2e4".into(),
                }],
                finished_games: Vec::new(),
            });
        }
    }

    fn ids(subscription: &Subscription) -> Vec<(u64, usize)> {
        subscription
            .backlog
            .iter()
            .map(|p| (p.id, p.board))
            .collect()
    }

    #[test]
    fn resume_sends_what_was_missed_or_a_snapshot() {
        let hub = hub();
        moves(&hub, 3);
        assert_eq!(ids(&hub.subscribe(Some(1), None)), [(2, 1), (3, 1)]);
        assert_eq!(ids(&hub.subscribe(Some(3), Some(1))), []);
        assert_eq!(ids(&hub.subscribe(Some(1), Some(2))), [], "other board");
        // A fresh client, or an id from another run: the snapshot, with the last id.
        assert_eq!(ids(&hub.subscribe(None, None)), [(3, 0)]);
        assert_eq!(ids(&hub.subscribe(Some(99), None)), [(3, 0)]);
        let snapshot = &hub.subscribe(None, None).backlog[0].json;
        assert!(snapshot.contains("\"type\":\"snapshot\""), "{snapshot}");
    }

    #[test]
    fn a_client_older_than_the_ring_gets_a_snapshot() {
        let hub = hub();
        moves(&hub, RING + 10);
        assert_eq!(ids(&hub.subscribe(Some(5), None)), [(RING as u64 + 10, 0)]);
        assert_eq!(hub.subscribe(Some(20), None).backlog.len(), RING - 10);
    }

    #[test]
    fn ids_with_gaps_resume_but_not_from_before_a_reload() {
        let hub = hub();
        moves(&hub, 2);
        // A relay reloaded its boards: ids 1 and 2 cannot be resumed exactly any more.
        hub.forget_events();
        hub.advance_event_ids(1 << 10);
        moves(&hub, 1);
        assert_eq!(ids(&hub.subscribe(Some(1), None)), [(1025, 0)], "snapshot");
        assert_eq!(ids(&hub.subscribe(Some(2), None)), [(1025, 1)]);
        hub.advance_event_ids(3 << 10);
        moves(&hub, 1);
        assert_eq!(ids(&hub.subscribe(Some(1025), None)), [(3073, 1)]);
        assert_eq!(ids(&hub.subscribe(Some(2), None)), [(1025, 1), (3073, 1)]);
    }

    #[test]
    fn a_slow_live_client_lags_instead_of_holding_up_the_board() {
        let hub = hub();
        let mut slow = hub.subscribe(None, None);
        moves(&hub, LIVE_BACKLOG + 5);
        assert!(matches!(slow.live.try_recv(), Err(TryRecvError::Lagged(5))));
    }
}
