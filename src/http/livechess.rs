//! `GET /api/v1.0`: the WebSocket API of DGT LiveChess, so that tools written for it
//! work unchanged. Clients send calls `{"id", "call", "param"}`; the answer is
//! `{"response": "call", "id", "param", "time"}`. `eboards` lists the boards;
//! `subscribe` with `{"feed": "eboardevent", "id": FEED, "param": {"serialnr"}}` starts
//! a feed of `{"response": "feed", "id": FEED, "param": {serialnr, flipped, board,
//! clock, start, san, match}}` messages, one now and one after each change;
//! `unsubscribe` with `{"id": FEED}` ends it. `GET /api/v1.0/eboards` answers the
//! `eboards` list over plain HTTP.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};

use super::App;
use super::live;
use crate::board::GameState;
use crate::status::{BoardStatus, Connection};

/// The standard start position.
const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A call from the client.
#[derive(Deserialize)]
struct Call {
    id: Value,
    call: String,
    #[serde(default)]
    param: Value,
}

/// `GET /api/v1.0`
pub async fn socket(upgrade: WebSocketUpgrade, State(app): State<App>) -> Response {
    upgrade.on_upgrade(move |socket| serve(socket, app))
}

async fn serve(socket: WebSocket, app: App) {
    let (mut outgoing, mut incoming) = socket.split();
    // Feed id → board number.
    let mut feeds: HashMap<i64, usize> = HashMap::new();
    let changes = live::events(app.hub.clone(), None, None);
    futures_util::pin_mut!(changes);
    loop {
        let replies = tokio::select! {
            change = changes.next() => {
                let Some(change) = change else { break };
                let boards: Vec<usize> = if change.board == 0 {
                    feeds.values().copied().collect()
                } else {
                    vec![change.board]
                };
                feeds
                    .iter()
                    .filter(|(_, board)| boards.contains(board))
                    .filter_map(|(feed, board)| feed_message(&app, *feed, *board))
                    .collect::<Vec<_>>()
            }
            message = incoming.next() => match message {
                Some(Ok(Message::Text(text))) => answer(&app, &mut feeds, &text),
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(_)) => Vec::new(),
            },
        };
        for reply in replies {
            if outgoing
                .send(Message::Text(reply.to_string().into()))
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

/// `GET /api/v1.0/eboards`: the REST form of the `eboards` call, which LiveChess serves
/// too (command-line tools such as PyPI's `livechess` read it).
pub async fn eboards(State(app): State<App>) -> Json<Value> {
    Json(eboard_list(&app))
}

/// Every board as an `eboards` entry, in board order.
fn eboard_list(app: &App) -> Value {
    app.hub
        .with_status(|s| Value::Array(s.boards.iter().map(eboard).collect()))
}

/// The messages answering one call from the client.
fn answer(app: &App, feeds: &mut HashMap<i64, usize>, text: &str) -> Vec<Value> {
    let call: Call = match serde_json::from_str(text) {
        Ok(call) => call,
        Err(e) => return vec![error(Value::Null, &format!("not a call: {e}"))],
    };
    match call.call.as_str() {
        "eboards" => vec![reply(call.id, eboard_list(app))],
        "subscribe" => {
            let feed = call.param["id"].as_i64();
            let serial = call.param["param"]["serialnr"].as_str().unwrap_or_default();
            let board = app.hub.with_status(|s| {
                s.boards
                    .iter()
                    .find(|b| serial_of(b) == serial)
                    .map(|b| b.id)
            });
            match (call.param["feed"].as_str(), feed, board) {
                (Some("eboardevent"), Some(feed), Some(board)) => {
                    feeds.insert(feed, board);
                    let mut out = vec![reply(call.id, Value::Null)];
                    out.extend(feed_message(app, feed, board));
                    out
                }
                (Some("eboardevent"), Some(_), None) => {
                    vec![error(
                        call.id,
                        &format!("no e-board with serialnr {serial:?}"),
                    )]
                }
                _ => vec![error(call.id, "only the eboardevent feed is available")],
            }
        }
        "unsubscribe" => {
            if let Some(feed) = call.param["id"].as_i64() {
                feeds.remove(&feed);
            }
            vec![reply(call.id, Value::Null)]
        }
        other => vec![error(call.id, &format!("unknown call {other:?}"))],
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn reply(id: Value, param: Value) -> Value {
    json!({ "response": "call", "id": id, "param": param, "time": now_ms() })
}

fn error(id: Value, message: &str) -> Value {
    json!({ "response": "error", "id": id, "param": message, "time": now_ms() })
}

/// The board's serial number, or `board-N` until the board has told it.
fn serial_of(board: &BoardStatus) -> String {
    board
        .serial
        .clone()
        .unwrap_or_else(|| format!("board-{}", board.id))
}

/// One entry of the `eboards` answer.
fn eboard(board: &BoardStatus) -> Value {
    let state = match board.connection {
        Connection::Responding => "ACTIVE",
        _ => "INACTIVE",
    };
    json!({
        "serialnr": serial_of(board),
        "source": board.port.display().to_string(),
        "state": state,
        "battery": null,
        "comment": null,
        "board": placement(board),
        "flipped": flipped(board),
        "clock": clock(board),
    })
}

fn feed_message(app: &App, feed: i64, id: usize) -> Option<Value> {
    app.hub.with_status(|s| {
        let board = s.boards.get(id.checked_sub(1)?)?;
        let game = board.game.as_ref();
        let start = game
            .and_then(|g| {
                g.pgn
                    .lines()
                    .take_while(|l| l.starts_with('['))
                    .find_map(|l| l.strip_prefix("[FEN \"")?.strip_suffix("\"]"))
            })
            .unwrap_or(START_FEN);
        let param = json!({
            "serialnr": serial_of(board),
            "flipped": flipped(board),
            "board": placement(board),
            "clock": clock(board),
            "start": start,
            "san": game.map(|g| g.moves.clone()).unwrap_or_default(),
            "match": game.is_some_and(|g| matches!(g.state, GameState::InPlay | GameState::Ended)),
        });
        Some(json!({ "response": "feed", "id": feed, "param": param, "time": now_ms() }))
    })
}

fn flipped(board: &BoardStatus) -> bool {
    board.game.as_ref().is_some_and(|g| g.rotated)
}

/// The pieces on the board as the first field of a FEN, seen from White (a board read
/// turned 180° is turned back). Anything but a piece reads as empty.
fn placement(board: &BoardStatus) -> Option<String> {
    let text = board.board.as_ref()?;
    let mut squares: Vec<char> = text.chars().collect();
    if flipped(board) {
        squares.reverse();
    }
    let ranks: Vec<String> = squares
        .chunks(8)
        .map(|rank| {
            let mut out = String::new();
            let mut empty = 0;
            for &c in rank {
                if "pnbrqkPNBRQK".contains(c) {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(c);
                } else {
                    empty += 1;
                }
            }
            if empty > 0 {
                out.push_str(&empty.to_string());
            }
            out
        })
        .collect();
    Some(ranks.join("/"))
}

/// The clock as LiveChess shows it: seconds left for each side.
fn clock(board: &BoardStatus) -> Value {
    let game = board.game.as_ref();
    let seconds = |t: Option<&String>| t.and_then(|t| hms_seconds(t));
    let white = seconds(game.and_then(|g| g.clock_white.as_ref()));
    let black = seconds(game.and_then(|g| g.clock_black.as_ref()));
    if white.is_none() && black.is_none() {
        return Value::Null;
    }
    // `run`: true while White's clock runs, false while Black's does, null when stopped.
    let run = match game.and_then(|g| g.clock_running.as_deref()) {
        Some("white") => Value::Bool(true),
        Some("black") => Value::Bool(false),
        _ => Value::Null,
    };
    json!({ "white": white, "black": black, "run": run, "time": now_ms() })
}

/// `h:mm:ss` as seconds.
fn hms_seconds(text: &str) -> Option<u64> {
    text.split(':')
        .try_fold(0u64, |acc, part| Some(acc * 60 + part.parse::<u64>().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_and_clock_text() {
        let mut board = BoardStatus::new(1, "/dev/x".into());
        board.board = Some(format!(
            "rnbqkbnr{}{}{}",
            "p".repeat(8),
            ".".repeat(32),
            "PPPPPPPPRNBQKBNR"
        ));
        assert_eq!(
            placement(&board).as_deref(),
            Some("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR")
        );
        assert_eq!(hms_seconds("1:30:05"), Some(5405));
        assert_eq!(hms_seconds("x"), None);
    }
}
