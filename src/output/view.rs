//! How consumers see one board: the JSON of `/api/boards/{id}`, also carried by every
//! live event, so that a client never has to merge partial updates.

use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, Position};

use crate::board::{GameState, GameStatus};
use crate::status::{BoardStatus, Connection};

use super::round::Round;

/// One board, as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardView {
    /// Board number, from 1 in the order the ports were given.
    pub id: usize,
    /// The serial port path.
    pub port: String,
    /// The board's serial number, once known.
    pub serial: Option<String>,
    /// The connection to the board.
    pub connection: Connection,
    /// "normal", or "rotated" when the board is read turned 180°.
    pub orientation: String,
    /// The game's position after the last recorded move.
    pub fen: Option<String>,
    /// What the game is doing (`kind`: in_play, pending, irregular, ambiguous,
    /// illegal_position, ended), with the details of that state.
    pub status: Option<GameState>,
    /// For an irregular board: the squares to put right.
    pub squares_to_fix: Vec<String>,
    /// The recorded moves in SAN.
    pub moves: Vec<String>,
    /// The last move as UCI (`e2e4`), for highlighting.
    pub last_move: Option<String>,
    /// "1-0", "0-1", "1/2-1/2" or "*".
    pub result: String,
    /// White's clock, `h:mm:ss`, when a clock is attached.
    pub clock_white: Option<String>,
    /// Black's clock, likewise.
    pub clock_black: Option<String>,
    /// Whose clock runs, "white" or "black"; `None` while it is stopped.
    #[serde(default)]
    pub clock_running: Option<String>,
    /// The Round tag, `R.B`.
    pub round: String,
    /// The player with White.
    pub white: String,
    /// The player with Black.
    pub black: String,
}

impl BoardView {
    /// The view of `board` in `round`.
    pub fn new(board: &BoardStatus, round: &Round) -> BoardView {
        let game = board.game.as_ref();
        let (white, black) = round.players(board.id);
        BoardView {
            id: board.id,
            port: board.port.display().to_string(),
            serial: board.serial.clone(),
            connection: board.connection,
            orientation: if game.is_some_and(|g| g.rotated) {
                "rotated"
            } else {
                "normal"
            }
            .into(),
            fen: game.map(|g| g.fen.clone()),
            status: game.map(|g| g.state.clone()),
            squares_to_fix: game.map(squares_to_fix).unwrap_or_default(),
            moves: game.map(|g| g.moves.clone()).unwrap_or_default(),
            last_move: game.and_then(last_move),
            result: game.map_or_else(|| "*".into(), |g| g.result.clone()),
            clock_white: game.and_then(|g| g.clock_white.clone()),
            clock_black: game.and_then(|g| g.clock_black.clone()),
            clock_running: game.and_then(|g| g.clock_running.clone()),
            round: round.round_tag(board.id),
            white,
            black,
        }
    }
}

/// The squares named by an irregular board's fixes (`Qd1` → d1, `-e4` → e4).
fn squares_to_fix(game: &GameStatus) -> Vec<String> {
    match &game.state {
        GameState::Irregular { restore } => restore
            .iter()
            .filter_map(|fix| fix.get(fix.len().checked_sub(2)?..).map(String::from))
            .collect(),
        _ => Vec::new(),
    }
}

/// The last move as UCI, by replaying the game from its start position (the FEN tag of
/// a set-up game, else the standard start).
fn last_move(game: &GameStatus) -> Option<String> {
    let (last, before) = game.moves.split_last()?;
    let mut position = start_position(&game.pgn)?;
    for san in before {
        let m = san.parse::<San>().ok()?.to_move(&position).ok()?;
        position.play_unchecked(m);
    }
    let m = last.parse::<San>().ok()?.to_move(&position).ok()?;
    Some(m.to_uci(CastlingMode::Standard).to_string())
}

fn start_position(pgn: &str) -> Option<Chess> {
    let fen_tag = pgn
        .lines()
        .take_while(|l| l.starts_with('['))
        .find_map(|l| l.strip_prefix("[FEN \"")?.strip_suffix("\"]"));
    match fen_tag {
        Some(fen) => fen
            .parse::<Fen>()
            .ok()?
            .into_position(CastlingMode::Standard)
            .ok(),
        None => Some(Chess::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(moves: &[&str], pgn: &str) -> GameStatus {
        GameStatus {
            state: GameState::InPlay,
            rotated: false,
            fen: String::new(),
            moves: moves.iter().map(|m| m.to_string()).collect(),
            result: "*".into(),
            pgn: pgn.into(),
            clock_white: None,
            clock_black: None,
            clock_running: None,
        }
    }

    #[test]
    fn last_move_replays_the_game() {
        assert_eq!(last_move(&game(&[], "")), None);
        assert_eq!(
            last_move(&game(&["e4", "e5", "Nf3"], "")).as_deref(),
            Some("g1f3")
        );
        let setup = "[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w K - 0 1\"]\n\n";
        assert_eq!(last_move(&game(&["O-O"], setup)).as_deref(), Some("e1g1"));
    }

    #[test]
    fn fixes_name_squares() {
        let mut g = game(&[], "");
        g.state = GameState::Irregular {
            restore: vec!["Qd1".into(), "-e4".into()],
        };
        assert_eq!(squares_to_fix(&g), ["d1", "e4"]);
    }
}
