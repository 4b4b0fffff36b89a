//! Push to a lichess broadcast round: after changes, POST the round's PGN to the round's
//! push URL (`/api/broadcast/round/{id}/push`, `Authorization: Bearer`, body
//! `text/plain` PGN, at most 100 games per request; the answer lists each game's moves or
//! error). One request in flight, at least a second apart, retried with backoff; the
//! boards never wait for it. The token is never logged.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tokio::time::{Instant, sleep, sleep_until};

use super::hub::Hub;

/// Most games in one request.
const GAMES_PER_REQUEST: usize = 100;
/// Least time between the starts of two pushes.
const MIN_INTERVAL: Duration = Duration::from_secs(1);
/// First wait after a failed push; doubles up to `MAX_BACKOFF`.
const MIN_BACKOFF: Duration = Duration::from_secs(1);
/// Longest wait after failed pushes.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Longest a request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// Where to push, and with what token.
#[derive(Clone, PartialEq, Eq)]
pub struct PushTarget {
    /// The round's push URL.
    pub url: String,
    /// The bearer token (study:write).
    pub token: String,
}

/// Shows the URL only: the token must not reach a log.
impl fmt::Debug for PushTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PushTarget")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// Why a push failed.
#[derive(Debug, thiserror::Error)]
enum PushError {
    #[error("{0}")]
    Transport(String),
    #[error("HTTP {status}: {body}")]
    Status { status: u16, body: String },
}

/// The answer to a push: one entry per game.
#[derive(Debug, Deserialize)]
struct PushAnswer {
    #[serde(default)]
    games: Vec<GameAnswer>,
}

#[derive(Debug, Deserialize)]
struct GameAnswer {
    #[serde(default)]
    error: Option<String>,
}

/// Pushes the round whenever it changes, until the hub goes away.
pub async fn push_round(hub: Arc<Hub>, target: PushTarget) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(REQUEST_TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into();
    let mut changes = hub.pgn_changes();
    let mut pushed = None;
    let mut last_start: Option<Instant> = None;
    let mut backoff = MIN_BACKOFF;
    loop {
        let generation = *changes.borrow_and_update();
        if pushed == Some(generation) {
            if changes.changed().await.is_err() {
                return;
            }
            continue;
        }
        if let Some(start) = last_start {
            sleep_until(start + MIN_INTERVAL).await;
        }
        last_start = Some(Instant::now());
        let games = hub.round_games();
        match push_games(&agent, &target, games).await {
            Ok(()) => {
                pushed = Some(generation);
                backoff = MIN_BACKOFF;
            }
            Err(e) => {
                tracing::warn!(url = %target.url, "push failed: {e}; retrying in {}s", backoff.as_secs());
                sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

async fn push_games(
    agent: &ureq::Agent,
    target: &PushTarget,
    games: Vec<String>,
) -> Result<(), PushError> {
    for (chunk_index, chunk) in games.chunks(GAMES_PER_REQUEST).enumerate() {
        let body = chunk.concat();
        let (agent, target) = (agent.clone(), target.clone());
        let answer = tokio::task::spawn_blocking(move || post(&agent, &target, body))
            .await
            .map_err(|e| PushError::Transport(e.to_string()))??;
        for (i, game) in answer.games.iter().enumerate() {
            if let Some(error) = &game.error {
                let number = chunk_index * GAMES_PER_REQUEST + i + 1;
                tracing::warn!("push: game {number} of the round refused: {error}");
            }
        }
    }
    Ok(())
}

fn post(agent: &ureq::Agent, target: &PushTarget, body: String) -> Result<PushAnswer, PushError> {
    let mut response = agent
        .post(&target.url)
        .header("Authorization", format!("Bearer {}", target.token))
        .content_type("text/plain; charset=utf-8")
        .send(body)
        .map_err(|e| PushError::Transport(e.to_string()))?;
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    if !(200..300).contains(&status) {
        let body: String = text.chars().take(200).collect();
        return Err(PushError::Status { status, body });
    }
    // An answer we cannot read still means the games were taken.
    Ok(serde_json::from_str(&text).unwrap_or(PushAnswer { games: Vec::new() }))
}
