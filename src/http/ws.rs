//! `GET /api/ws`: the live events over WebSocket, one JSON text message each (the same
//! objects as SSE; `?since=ID` resumes).

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};

use super::App;
use super::live;
use super::sse::Resume;

/// `GET /api/ws`
pub async fn events(
    upgrade: WebSocketUpgrade,
    State(app): State<App>,
    Query(resume): Query<Resume>,
) -> Response {
    upgrade.on_upgrade(move |socket| forward(socket, app, resume.since))
}

async fn forward(socket: WebSocket, app: App, since: Option<u64>) {
    let (mut outgoing, mut incoming) = socket.split();
    let events = live::events(app.hub, since, None);
    futures_util::pin_mut!(events);
    loop {
        tokio::select! {
            event = events.next() => {
                let Some(event) = event else { break };
                if outgoing.send(Message::Text(event.json.as_str().into())).await.is_err() {
                    break;
                }
            }
            message = incoming.next() => match message {
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
        }
    }
}
