//! The HTTP server (`--http`): the JSON and PGN API, live events over SSE and
//! WebSocket, a DGT LiveChess-compatible WebSocket API, and the viewer page.

mod api;
mod auth;
mod limits;
mod live;
mod livechess;
#[cfg(test)]
mod route_tests;
mod sse;
mod viewer;
mod ws;

pub use auth::generate_token;
pub use limits::{DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_STALL_TIMEOUT, Limits};

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{MethodRouter, get, post, put};
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
/// that change anything; `limits` bounds the connections (see `Limits`).
pub async fn serve(
    listener: TcpListener,
    hub: Arc<Hub>,
    control: BoardControl,
    token: String,
    limits: Limits,
) {
    let app = App {
        hub,
        control,
        token: Some(token.into()),
    };
    run(listener, app, limits).await;
}

/// Serves a relay's hub read-only: every call that would change something is refused.
/// A relay is for viewers: it takes as many connections as a daemon does by default.
pub async fn serve_relay(listener: TcpListener, hub: Arc<Hub>) {
    let app = App {
        hub,
        control: BoardControl::default(),
        token: None,
    };
    run(listener, app, Limits::default()).await;
}

async fn run(listener: TcpListener, app: App, limits: Limits) {
    let listener =
        limits::LimitedListener::new(listener, limits.max_connections, limits.stall_timeout);
    limits::serve(listener, router(app), limits.header_timeout).await;
}

/// Every route the server answers, with its handlers: the one list of them, so that the
/// tests can try each route for the token (a handler that changes anything takes
/// [`api::Operator`] before its body).
fn routes() -> Vec<(&'static str, MethodRouter<App>)> {
    vec![
        ("/", get(viewer::page)),
        ("/viewer.js", get(viewer::script)),
        ("/viewer.css", get(viewer::style)),
        ("/games.pgn", get(api::round_pgn)),
        ("/api/boards", get(api::boards)),
        ("/api/boards/{id}", get(api::board)),
        ("/api/boards/{id}/pgn", get(api::board_pgn)),
        ("/api/boards/{id}/games", get(api::board_games)),
        ("/api/boards/{id}/games/{file}", get(api::board_game)),
        ("/api/boards/{id}/events", get(sse::board_events)),
        ("/api/boards/{id}/players", put(api::set_players)),
        ("/api/boards/{id}/result", post(api::set_result)),
        ("/api/boards/{id}/accept", post(api::accept_board)),
        ("/api/boards/{id}/setup", post(api::declare_setup)),
        ("/api/boards/{id}/resolve", post(api::resolve)),
        ("/api/round", get(api::round).put(api::set_round)),
        ("/api/events", get(sse::all_events)),
        ("/api/ws", get(ws::events)),
        ("/api/v1.0", get(livechess::socket)),
        ("/api/v1.0/eboards", get(livechess::eboards)),
    ]
}

/// The routes with the body limits, serving `app`.
fn router(app: App) -> Router {
    routes()
        .into_iter()
        .fold(Router::new(), |router, (path, route)| {
            router.route(path, route)
        })
        .layer(DefaultBodyLimit::max(limits::MAX_BODY))
        .layer(axum::middleware::from_fn(limits::refuse_large_bodies))
        .with_state(app)
}

/// Binds the server's address and logs it in a line scripts can read
/// (`listening on http://ADDR`).
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tracing::info!("listening on http://{bound}");
    Ok(listener)
}
