//! Scripts: the games the virtual board replays, from PGN text or a FEN plus moves.

use std::ops::ControlFlow;

use pgn_reader::{Outcome, RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position};

use crate::error::ScriptError;

/// One game to replay: a start position and the mainline moves, checked legal.
#[derive(Clone, Debug)]
pub struct Script {
    start: Chess,
    moves: Vec<Move>,
    tags: Vec<(String, String)>,
    result: Option<String>,
}

impl Script {
    /// Every game of a PGN text (mainlines only; a `FEN` tag sets up the start position).
    pub fn parse_pgn(text: &str) -> Result<Vec<Script>, ScriptError> {
        Self::parse_pgn_from(text, None)
    }

    /// Like [`Script::parse_pgn`], but games without a `FEN` tag start from `fen`
    /// (the standard start position when `None`).
    pub fn parse_pgn_from(text: &str, fen: Option<&str>) -> Result<Vec<Script>, ScriptError> {
        let default_start = match fen {
            Some(f) => Some(parse_fen(f)?),
            None => None,
        };
        let mut reader = Reader::new(text.as_bytes());
        let mut visitor = PgnVisitor {
            game: 0,
            default_start,
        };
        let mut games = Vec::new();
        for game in reader.read_games(&mut visitor) {
            games.push(game??);
        }
        if games.is_empty() {
            return Err(ScriptError::NoGame);
        }
        Ok(games)
    }

    /// A script from an optional FEN (standard start position when `None`) and moves in
    /// SAN or UCI.
    pub fn from_fen_and_san(fen: Option<&str>, moves: &[&str]) -> Result<Script, ScriptError> {
        let start = match fen {
            Some(f) => parse_fen(f)?,
            None => Chess::default(),
        };
        let mut script = Script::from_position(start);
        let mut pos = script.start.clone();
        for (i, text) in moves.iter().enumerate() {
            let m = parse_move(&pos, text).ok_or_else(|| ScriptError::Move {
                game: 1,
                ply: i + 1,
                text: (*text).to_string(),
            })?;
            pos.play_unchecked(m);
            script.moves.push(m);
        }
        if let Some(f) = fen {
            script.tags.push(("FEN".into(), f.into()));
        }
        Ok(script)
    }

    /// An empty script starting from a position.
    pub fn from_position(start: Chess) -> Script {
        Script {
            start,
            moves: Vec::new(),
            tags: Vec::new(),
            result: None,
        }
    }

    /// The start position.
    pub fn start(&self) -> &Chess {
        &self.start
    }

    /// The mainline moves.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The PGN tags, in order.
    pub fn tags(&self) -> &[(String, String)] {
        &self.tags
    }

    /// The value of a tag.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The game result ("1-0", "0-1", "1/2-1/2") if the PGN gave one.
    pub fn result(&self) -> Option<&str> {
        self.result.as_deref()
    }

    /// The position after every move.
    pub fn final_position(&self) -> Chess {
        let mut pos = self.start.clone();
        for m in &self.moves {
            pos.play_unchecked(*m);
        }
        pos
    }
}

/// Parse a FEN into a legal standard-chess position.
pub fn parse_fen(fen: &str) -> Result<Chess, ScriptError> {
    let err = |reason: String| ScriptError::Fen {
        fen: fen.to_string(),
        reason,
    };
    let parsed = Fen::from_ascii(fen.trim().as_bytes()).map_err(|e| err(e.to_string()))?;
    parsed
        .into_position(CastlingMode::Standard)
        .map_err(|e| err(e.to_string()))
}

/// A move in SAN (with or without +/#) or UCI, if legal in `pos`.
pub fn parse_move(pos: &Chess, text: &str) -> Option<Move> {
    let t = text.trim();
    if let Ok(san) = SanPlus::from_ascii(t.as_bytes())
        && let Ok(m) = san.san.to_move(pos)
    {
        return Some(m);
    }
    if let Ok(san) = San::from_ascii(t.trim_end_matches(['+', '#', '!', '?']).as_bytes())
        && let Ok(m) = san.to_move(pos)
    {
        return Some(m);
    }
    let uci = UciMove::from_ascii(t.as_bytes()).ok()?;
    uci.to_move(pos).ok()
}

struct PgnVisitor {
    game: usize,
    default_start: Option<Chess>,
}

struct Movetext {
    script: Script,
    pos: Chess,
    error: Option<ScriptError>,
}

impl Visitor for PgnVisitor {
    type Tags = Vec<(String, String)>;
    type Movetext = Movetext;
    type Output = Result<Script, ScriptError>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        self.game += 1;
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let start = match tags.iter().find(|(k, _)| k.eq_ignore_ascii_case("FEN")) {
            Some((_, fen)) => match parse_fen(fen) {
                Ok(pos) => pos,
                Err(e) => return ControlFlow::Break(Err(e)),
            },
            None => self.default_start.clone().unwrap_or_default(),
        };
        let result = tags
            .iter()
            .find(|(k, _)| k == "Result")
            .map(|(_, v)| v.clone());
        let script = Script {
            start: start.clone(),
            moves: Vec::new(),
            tags,
            result,
        };
        ControlFlow::Continue(Movetext {
            script,
            pos: start,
            error: None,
        })
    }

    fn san(&mut self, mt: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if mt.error.is_some() {
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&mt.pos) {
            Ok(m) => {
                mt.pos.play_unchecked(m);
                mt.script.moves.push(m);
            }
            Err(_) => {
                mt.error = Some(ScriptError::Move {
                    game: self.game,
                    ply: mt.script.moves.len() + 1,
                    text: san_plus.to_string(),
                });
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _mt: &mut Self::Movetext) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn outcome(&mut self, mt: &mut Self::Movetext, outcome: Outcome) -> ControlFlow<Self::Output> {
        mt.script.result = Some(outcome.to_string());
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, mt: Self::Movetext) -> Self::Output {
        match mt.error {
            Some(e) => Err(e),
            None => Ok(mt.script),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_games_and_fen_tags() {
        let pgn = "[Event \"a\"]\n[Result \"1-0\"]\n\n1. e4 e5 (1... c5 2. Nf3) 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n\
                   [FEN \"4k3/P7/8/8/8/8/8/4K3 w - - 0 1\"]\n\n1. a8=N Kd7 *\n";
        let games = Script::parse_pgn(pgn).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].moves().len(), 7);
        assert_eq!(games[0].result(), Some("1-0"));
        assert!(games[0].final_position().is_checkmate());
        assert_eq!(games[1].moves().len(), 2);
        assert_eq!(games[1].tag("FEN"), Some("4k3/P7/8/8/8/8/8/4K3 w - - 0 1"));
    }

    #[test]
    fn illegal_move_is_an_error() {
        let err = Script::parse_pgn("1. e4 e5 2. Ke3 *").unwrap_err();
        assert!(
            matches!(
                err,
                ScriptError::Move {
                    game: 1,
                    ply: 3,
                    ..
                }
            ),
            "{err}"
        );
        assert!(matches!(Script::parse_pgn(""), Err(ScriptError::NoGame)));
    }

    #[test]
    fn fen_and_mixed_san_uci() {
        let s = Script::from_fen_and_san(None, &["e2e4", "e5", "Nf3", "b8c6"]).unwrap();
        assert_eq!(s.moves().len(), 4);
        assert!(Script::from_fen_and_san(Some("not a fen"), &[]).is_err());
        assert!(Script::from_fen_and_san(None, &["e5"]).is_err());
    }
}
