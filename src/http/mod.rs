//! The HTTP server (`--http`): the JSON and PGN API, live events over SSE and
//! WebSocket, a DGT LiveChess-compatible WebSocket API, and the viewer page.

mod api;
mod auth;
mod limits;
mod live;
mod livechess;
mod sse;
mod viewer;
mod ws;

pub use auth::generate_token;
pub use limits::{DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, put};
use tokio::net::TcpListener;

use crate::output::control::BoardControl;
use crate::output::hub::Hub;

/// What every handler shares.
#[derive(Clone)]
struct App {
    hub: Arc<Hub>,
    control: BoardControl,
    /// The bearer token state-changing calls must present; none on a relay, which
    /// refuses them (they belong to the bridge that reads the board).
    token: Option<Arc<str>>,
}

/// Serves the API on `listener` until the runtime stops. `token` guards the calls
/// that change anything; at most `max_connections` are served at once, and a
/// connection that takes longer than `header_timeout` to send a request head is closed.
pub async fn serve(
    listener: TcpListener,
    hub: Arc<Hub>,
    control: BoardControl,
    token: String,
    max_connections: usize,
    header_timeout: Duration,
) {
    let app = App {
        hub,
        control,
        token: Some(token.into()),
    };
    run(listener, app, max_connections, header_timeout).await;
}

/// Serves a relay's hub read-only: every call that would change something is refused.
/// A relay is for viewers: it takes as many connections as a daemon does by default.
pub async fn serve_relay(listener: TcpListener, hub: Arc<Hub>) {
    let app = App {
        hub,
        control: BoardControl::default(),
        token: None,
    };
    run(
        listener,
        app,
        limits::DEFAULT_MAX_CONNECTIONS,
        limits::DEFAULT_HEADER_TIMEOUT,
    )
    .await;
}

async fn run(listener: TcpListener, app: App, max_connections: usize, header_timeout: Duration) {
    let router = Router::new()
        .route("/", get(viewer::page))
        .route("/viewer.js", get(viewer::script))
        .route("/viewer.css", get(viewer::style))
        .route("/games.pgn", get(api::round_pgn))
        .route("/api/boards", get(api::boards))
        .route("/api/boards/{id}", get(api::board))
        .route("/api/boards/{id}/pgn", get(api::board_pgn))
        .route("/api/boards/{id}/games", get(api::board_games))
        .route("/api/boards/{id}/games/{file}", get(api::board_game))
        .route("/api/boards/{id}/events", get(sse::board_events))
        .route("/api/boards/{id}/players", put(api::set_players))
        .route("/api/boards/{id}/result", post(api::set_result))
        .route("/api/boards/{id}/accept", post(api::accept_board))
        .route("/api/boards/{id}/setup", post(api::declare_setup))
        .route("/api/boards/{id}/resolve", post(api::resolve))
        .route("/api/round", get(api::round).put(api::set_round))
        .route("/api/events", get(sse::all_events))
        .route("/api/ws", get(ws::events))
        .route("/api/v1.0", get(livechess::socket))
        .route("/api/v1.0/eboards", get(livechess::eboards))
        .layer(DefaultBodyLimit::max(limits::MAX_BODY))
        .layer(axum::middleware::from_fn(limits::refuse_large_bodies))
        .with_state(app);
    let listener = limits::LimitedListener::new(listener, max_connections);
    limits::serve(listener, router, header_timeout).await;
}

/// Binds the server's address and logs it in a line scripts can read
/// (`listening on http://ADDR`).
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tracing::info!("listening on http://{bound}");
    Ok(listener)
}
