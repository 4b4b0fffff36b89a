//! One client's stream of live events, shared by SSE and WebSocket: what it missed
//! first, then every new event in order; a client that falls behind the bounded live
//! queue gets a snapshot of the full state instead of a silent gap.

use std::sync::Arc;

use futures_util::Stream;
use tokio::sync::broadcast::error::RecvError;

use crate::output::hub::{Hub, Published, Subscription};

/// The events for a client that last saw event `since` (none: start from a snapshot),
/// for all boards or only `board`.
pub fn events(
    hub: Arc<Hub>,
    since: Option<u64>,
    board: Option<usize>,
) -> impl Stream<Item = Arc<Published>> + Send {
    let Subscription { backlog, live } = hub.subscribe(since, board);
    let last = backlog.iter().map(|p| p.id).max().or(since).unwrap_or(0);
    let start = (backlog.into_iter(), live, last);
    futures_util::stream::unfold(start, move |(mut backlog, mut live, mut last)| {
        let hub = hub.clone();
        async move {
            if let Some(event) = backlog.next() {
                return Some((event, (backlog, live, last)));
            }
            loop {
                match live.recv().await {
                    Ok(event) if event.id > last && board.is_none_or(|b| event.board == b) => {
                        last = event.id;
                        return Some((event, (backlog, live, last)));
                    }
                    Ok(_) => {}
                    Err(RecvError::Lagged(missed)) => {
                        tracing::debug!(missed, "slow client: sending a snapshot");
                        let snapshot = hub.snapshot(board);
                        last = snapshot.id;
                        return Some((snapshot, (backlog, live, last)));
                    }
                    Err(RecvError::Closed) => return None,
                }
            }
        }
    })
}
