//! The JSON and PGN endpoints, and the operator calls that change a board's game data.

use axum::Json;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use shakmaty::{Color, KnownOutcome};

use super::App;
use super::auth::authorised;
use crate::board::BoardCommand;
use crate::inference::Choice;
use crate::output::control::ControlError;
use crate::output::round::{Players, Round};

/// The PGN media type.
const PGN: &str = "application/x-chess-pgn";

/// A failed call, as `{"error": "..."}` with its status code.
pub enum ApiError {
    NotFound(String),
    Unauthorised,
    BadRequest(String),
    Control(ControlError),
    /// A state-changing call on a relay.
    ReadOnly,
}

impl ApiError {
    /// No board has this number.
    pub fn no_board(id: usize) -> Self {
        ApiError::NotFound(format!("board {id}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            ApiError::NotFound(what) => (StatusCode::NOT_FOUND, format!("no {what}")),
            ApiError::Unauthorised => (
                StatusCode::UNAUTHORIZED,
                "this call needs `Authorization: Bearer <token>`".into(),
            ),
            ApiError::BadRequest(why) => (StatusCode::BAD_REQUEST, why),
            ApiError::ReadOnly => (
                StatusCode::FORBIDDEN,
                "this is a relay: game data and board commands go to the bridge that reads the board".into(),
            ),
            ApiError::Control(e) => {
                let status = match e {
                    ControlError::NoSuchBoard(_) => StatusCode::NOT_FOUND,
                    ControlError::NotRunning(_) => StatusCode::SERVICE_UNAVAILABLE,
                    ControlError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
                    ControlError::Refused(_) => StatusCode::CONFLICT,
                };
                (status, e.to_string())
            }
        };
        let mut response = Json(serde_json::json!({ "error": message })).into_response();
        *response.status_mut() = status;
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, "Bearer".parse().expect("valid"));
        }
        response
    }
}

fn pgn(text: String) -> Response {
    ([(header::CONTENT_TYPE, PGN)], text).into_response()
}

/// A board number from a path: anything that is not one (0, too large, not a number)
/// names no board.
pub fn board_id(raw: &str) -> Result<usize, ApiError> {
    raw.parse::<usize>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::NotFound(format!("board {raw:?}")))
}

/// The number of a board the daemon has, from a path.
pub fn existing_board(app: &App, raw: &str) -> Result<usize, ApiError> {
    let id = board_id(raw)?;
    match app.hub.view(id) {
        Some(_) => Ok(id),
        None => Err(ApiError::no_board(id)),
    }
}

/// A caller that presented the operator's token. As an extractor placed before the
/// body it refuses a caller without the token before the body is read or judged, so an
/// unauthorised call gets 401 whatever it sends (403 on a relay, which takes no
/// commands).
pub struct Operator;

impl FromRequestParts<App> for Operator {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, ApiError> {
        let token = app.token.as_deref().ok_or(ApiError::ReadOnly)?;
        if authorised(&parts.headers, token) {
            Ok(Operator)
        } else {
            Err(ApiError::Unauthorised)
        }
    }
}

/// `GET /api/boards`
pub async fn boards(State(app): State<App>) -> Response {
    Json(app.hub.views()).into_response()
}

/// `GET /api/boards/{id}`
pub async fn board(State(app): State<App>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let id = board_id(&id)?;
    let view = app.hub.view(id).ok_or_else(|| ApiError::no_board(id))?;
    Ok(Json(view).into_response())
}

/// `GET /api/boards/{id}/pgn`: the current game.
pub async fn board_pgn(
    State(app): State<App>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = board_id(&id)?;
    let text = app
        .hub
        .current_pgn(id)
        .ok_or_else(|| ApiError::no_board(id))?;
    Ok(pgn(text))
}

/// One entry of `GET /api/boards/{id}/games`.
#[derive(Serialize)]
struct GameEntry {
    /// 1-based, in the order played.
    number: usize,
    /// Where its PGN is.
    url: String,
    /// The Result tag's value.
    result: String,
    /// Plies played.
    plies: usize,
}

/// `GET /api/boards/{id}/games`: every game since the daemon started, the current one
/// last.
pub async fn board_games(
    State(app): State<App>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = board_id(&id)?;
    let games = app.hub.games(id).ok_or_else(|| ApiError::no_board(id))?;
    let entries: Vec<GameEntry> = games
        .iter()
        .enumerate()
        .map(|(i, text)| GameEntry {
            number: i + 1,
            url: format!("/api/boards/{id}/games/{}.pgn", i + 1),
            result: tag(text, "Result").unwrap_or("*").to_string(),
            plies: count_plies(text),
        })
        .collect();
    Ok(Json(entries).into_response())
}

/// `GET /api/boards/{id}/games/{n}.pgn`
pub async fn board_game(
    State(app): State<App>,
    Path((id, file)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let id = board_id(&id)?;
    let missing = || ApiError::NotFound(format!("game {file} on board {id}"));
    let n: usize = file
        .strip_suffix(".pgn")
        .and_then(|n| n.parse().ok())
        .ok_or_else(missing)?;
    let games = app.hub.games(id).ok_or_else(missing)?;
    let text = n
        .checked_sub(1)
        .and_then(|i| games.into_iter().nth(i))
        .ok_or_else(missing)?;
    Ok(pgn(text))
}

/// `GET /games.pgn`: every board's current game, in board order.
pub async fn round_pgn(State(app): State<App>) -> Response {
    pgn(app.hub.round_games().concat())
}

/// `GET /api/round`
pub async fn round(State(app): State<App>) -> Response {
    Json(app.hub.round()).into_response()
}

/// The body of `PUT /api/round`: the fields to change.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundChange {
    event: Option<String>,
    site: Option<String>,
    date: Option<String>,
    round: Option<String>,
}

/// `PUT /api/round` (token): changes event, site, date or round for every board.
pub async fn set_round(
    State(app): State<App>,
    _operator: Operator,
    Json(change): Json<RoundChange>,
) -> Result<Response, ApiError> {
    let old = app.hub.round();
    let round = Round {
        event: change.event.unwrap_or(old.event),
        site: change.site.unwrap_or(old.site),
        date: change.date.unwrap_or(old.date),
        round: change.round.unwrap_or(old.round),
        boards: old.boards,
    };
    app.hub.set_round(round.clone());
    for id in 1..=app.hub.board_count() {
        retag(&app, id);
    }
    Ok(Json(round).into_response())
}

/// `PUT /api/boards/{id}/players` (token): `{"white": "...", "black": "..."}`.
pub async fn set_players(
    State(app): State<App>,
    Path(id): Path<String>,
    _operator: Operator,
    Json(players): Json<Players>,
) -> Result<Response, ApiError> {
    let id = existing_board(&app, &id)?;
    app.hub.set_players(id, players);
    retag(&app, id);
    Ok(Json(app.hub.view(id)).into_response())
}

/// Sends board `id` its tags from the hub's round; the PGN outputs follow when the
/// board's worker has applied them.
fn retag(app: &App, id: usize) {
    let tags = app.hub.round().tags(id);
    let sent = app
        .control
        .send(id, BoardCommand::SetTags(tags), move |outcome| {
            if let Err(e) = outcome {
                tracing::warn!(board = id, "tags not applied: {e}");
            }
        });
    if let Err(e) = sent {
        tracing::debug!(board = id, "tags not sent: {e}");
    }
}

/// The body of `POST /api/boards/{id}/result`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultChange {
    /// "1-0", "0-1", "1/2-1/2", or null to clear.
    result: Option<String>,
}

/// `POST /api/boards/{id}/result` (token): enters a result the board cannot show.
pub async fn set_result(
    State(app): State<App>,
    Path(id): Path<String>,
    _operator: Operator,
    Json(change): Json<ResultChange>,
) -> Result<Response, ApiError> {
    let id = board_id(&id)?;
    let outcome = match change.result.as_deref() {
        None => None,
        Some("1-0") => Some(KnownOutcome::Decisive {
            winner: Color::White,
        }),
        Some("0-1") => Some(KnownOutcome::Decisive {
            winner: Color::Black,
        }),
        Some("1/2-1/2") => Some(KnownOutcome::Draw),
        Some(other) => {
            return Err(ApiError::BadRequest(format!(
                "result {other:?}: expected \"1-0\", \"0-1\", \"1/2-1/2\" or null"
            )));
        }
    };
    command(&app, id, BoardCommand::SetResult(outcome)).await
}

/// `POST /api/boards/{id}/accept` (token): accepts the board's position as the game's.
pub async fn accept_board(
    State(app): State<App>,
    Path(id): Path<String>,
    _operator: Operator,
) -> Result<Response, ApiError> {
    let id = board_id(&id)?;
    command(&app, id, BoardCommand::AcceptBoard).await
}

/// `POST /api/boards/{id}/setup` (token): declares the board's position a new game.
pub async fn declare_setup(
    State(app): State<App>,
    Path(id): Path<String>,
    _operator: Operator,
) -> Result<Response, ApiError> {
    let id = board_id(&id)?;
    command(&app, id, BoardCommand::DeclareSetup).await
}

/// The body of `POST /api/boards/{id}/resolve`: one of the board's reported candidate
/// sequences, by its place in the list (from 0) or by its moves in SAN; or, with
/// `from`, the moves (SAN) that replace the recorded ones from that ply (1-based) on
/// (the ply after the last recorded adds them).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resolution {
    candidate: Option<usize>,
    /// "Nf3 Nf6 Nc3" or ["Nf3", "Nf6", "Nc3"].
    moves: Option<Moves>,
    /// The first recorded ply the moves replace (an amendment).
    from: Option<usize>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Moves {
    Text(String),
    List(Vec<String>),
}

impl Moves {
    fn sans(self) -> Vec<String> {
        match self {
            Moves::Text(text) => text.split_whitespace().map(str::to_string).collect(),
            Moves::List(moves) => moves,
        }
    }
}

/// `POST /api/boards/{id}/resolve` (token): records the candidate sequence the arbiter
/// picks from an ambiguous board (the scoresheets give the order a dump cannot), or the
/// moves the arbiter enters from the scoresheets for an irregular board (if legal and the
/// board shows their position or one more move), or, with `from`, replaces the recorded
/// moves from that ply on by the moves entered (on the same terms), then explains the
/// board from there.
pub async fn resolve(
    State(app): State<App>,
    Path(id): Path<String>,
    _operator: Operator,
    Json(resolution): Json<Resolution>,
) -> Result<Response, ApiError> {
    let id = board_id(&id)?;
    let action = match (resolution.candidate, resolution.moves, resolution.from) {
        (Some(index), None, None) => BoardCommand::Resolve(Choice::Index(index)),
        (None, Some(moves), None) => BoardCommand::Resolve(Choice::Moves(moves.sans())),
        (None, Some(moves), Some(from)) => BoardCommand::Amend {
            from,
            moves: moves.sans(),
        },
        (Some(_), _, Some(_)) => {
            return Err(ApiError::BadRequest(
                "\"from\" amends recorded moves with \"moves\" from the scoresheet; it does \
                 not go with \"candidate\""
                    .into(),
            ));
        }
        _ => {
            return Err(ApiError::BadRequest(
                "expected {\"candidate\": N}, {\"moves\": \"Nf3 Nf6 Nc3\"} or \
                 {\"from\": PLY, \"moves\": \"Nf3 Nf6 Nc3\"}"
                    .into(),
            ));
        }
    };
    command(&app, id, action).await
}

async fn command(app: &App, id: usize, command: BoardCommand) -> Result<Response, ApiError> {
    app.control
        .command(id, command)
        .await
        .map_err(ApiError::Control)?;
    Ok(Json(app.hub.view(id)).into_response())
}

/// A tag's value in a PGN game.
fn tag<'a>(pgn: &'a str, name: &str) -> Option<&'a str> {
    pgn.lines()
        .take_while(|l| l.starts_with('['))
        .find_map(|l| l.strip_prefix(&format!("[{name} \""))?.strip_suffix("\"]"))
}

/// Plies in a PGN game's movetext (tokens that are neither numbers, comments nor the
/// result).
fn count_plies(pgn: &str) -> usize {
    let movetext = pgn.split_once("\n\n").map_or("", |(_, m)| m);
    let mut in_comment = false;
    movetext
        .split_whitespace()
        .filter(|token| {
            let counts = !in_comment
                && !token.starts_with('{')
                && !token.starts_with(|c: char| c.is_ascii_digit())
                && *token != "*";
            if token.starts_with('{') {
                in_comment = true;
            }
            if token.ends_with('}') {
                in_comment = false;
            }
            counts
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plies_skip_numbers_comments_and_result() {
        let pgn = "[Result \"*\"]\n\n1. e4 {[%clk 1:30:00]} 1... e5 {a b} 2. Nf3 *\n\n";
        assert_eq!(count_plies(pgn), 3);
        assert_eq!(tag(pgn, "Result"), Some("*"));
        assert_eq!(count_plies("[Result \"1-0\"]\n\n1. e4 1-0\n\n"), 1);
    }
}
