//! Server-Sent Events: `GET /api/events` (all boards) and `/api/boards/{id}/events`.
//! Each event carries its id; a client that reconnects with `Last-Event-ID` (or
//! `?since=ID`) gets what it missed.

use std::convert::Infallible;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::Deserialize;

use super::App;
use super::api::{ApiError, existing_board};
use super::live;

/// Query parameters of the event streams.
#[derive(Deserialize)]
pub struct Resume {
    /// The last event id seen, for clients that cannot send `Last-Event-ID`.
    pub since: Option<u64>,
}

/// `GET /api/events`
pub async fn all_events(
    State(app): State<App>,
    headers: HeaderMap,
    Query(resume): Query<Resume>,
) -> Response {
    stream(app, &headers, resume, None)
}

/// `GET /api/boards/{id}/events`
pub async fn board_events(
    State(app): State<App>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Query(resume): Query<Resume>,
) -> Result<Response, ApiError> {
    let id = existing_board(&app, &id)?;
    Ok(stream(app, &headers, resume, Some(id)))
}

fn stream(app: App, headers: &HeaderMap, resume: Resume, board: Option<usize>) -> Response {
    let since = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .or(resume.since);
    let events = live::events(app.hub, since, board).map(|event| {
        Ok::<_, Infallible>(Event::default().id(event.id.to_string()).data(&event.json))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}
