//! The `--config` file (TOML): the round's game data and the push target.
//!
//! ```toml
//! event = "Club Championship"
//! site = "Utrecht"
//! round = "3"
//! date = "2026.03.01"          # default: today
//! journal = "/var/lib/boardcast/round-3"  # optional: as --journal DIR
//!
//! [[board]]                    # board 1, then board 2, ...
//! white = "Carlsen, Magnus"
//! black = "Nakamura, Hikaru"
//! serial = "01025"             # optional: the board, by serial number (or port = "/dev/…")
//!
//! [push]                       # optional: a lichess broadcast round
//! url = "https://lichess.org/api/broadcast/round/AbCdEfGh/push"
//! token = "lip_..."
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::push::PushTarget;
use super::round::{Players, Round};
use crate::link::plan::Locator;

/// Why the config file cannot be used; names the file, the line and the field.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid for this schema.
    #[error("config file {path}, line {line}{field}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// `, field "name"` when the problem is in one field's value, else empty.
        field: String,
        /// What is wrong.
        message: String,
    },
}

/// What the config file describes.
#[derive(Debug, Clone, Default)]
pub struct FileConfig {
    /// The round's tags and players.
    pub round: Round,
    /// Where to push the round's PGN, if anywhere.
    pub push: Option<PushTarget>,
    /// Where each board is, by board number − 1.
    pub boards: Vec<Locator>,
    /// Where to journal the boards (`--journal`), if anywhere.
    pub journal: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    event: Option<String>,
    site: Option<String>,
    round: Option<String>,
    date: Option<String>,
    #[serde(default)]
    board: Vec<RawBoard>,
    push: Option<RawPush>,
    journal: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoard {
    white: Option<String>,
    black: Option<String>,
    port: Option<PathBuf>,
    serial: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPush {
    url: String,
    token: String,
}

/// Reads and checks the config file at `path`.
pub fn load(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text).map_err(|(line, field, message)| ConfigError::Invalid {
        path: path.to_path_buf(),
        line,
        field,
        message,
    })
}

/// Parses config text; an error is (line, field note, message).
fn parse(text: &str) -> Result<FileConfig, (usize, String, String)> {
    let raw: RawConfig = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let line = text[..offset.min(text.len())].matches('\n').count() + 1;
        (line, field_on_line(text, line), e.message().to_string())
    })?;
    let defaults = Round::default();
    let round = Round {
        event: raw.event.unwrap_or(defaults.event),
        site: raw.site.unwrap_or(defaults.site),
        date: raw.date.unwrap_or(defaults.date),
        round: raw.round.unwrap_or(defaults.round),
        boards: raw
            .board
            .iter()
            .map(|b| Players {
                white: b.white.clone(),
                black: b.black.clone(),
            })
            .collect(),
    };
    let boards = raw
        .board
        .into_iter()
        .map(|b| Locator {
            port: b.port,
            serial: b.serial,
        })
        .collect();
    let push = raw.push.map(|p| PushTarget {
        url: p.url,
        token: p.token,
    });
    Ok(FileConfig {
        round,
        push,
        boards,
        journal: raw.journal,
    })
}

/// `, field "key"` for a `key = value` line, so that errors about a value name its field.
fn field_on_line(text: &str, line: usize) -> String {
    text.lines()
        .nth(line - 1)
        .and_then(|l| l.split_once('='))
        .map(|(key, _)| format!(", field \"{}\"", key.trim()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_config() {
        let config = parse(
            "event = \"Open\"\nround = \"2\"\n[[board]]\nwhite = \"A\"\nblack = \"B\"\n\
             [[board]]\nwhite = \"C\"\n[push]\nurl = \"http://x/push\"\ntoken = \"t\"\n",
        )
        .expect("valid");
        assert_eq!(config.round.event, "Open");
        assert_eq!(config.round.round_tag(2), "2.2");
        assert_eq!(config.round.players(2), ("C".into(), "?".into()));
        assert_eq!(config.push.expect("push").url, "http://x/push");
        let config = parse("journal = \"/var/lib/j\"\n").expect("valid");
        assert_eq!(config.journal, Some(PathBuf::from("/var/lib/j")));
    }

    #[test]
    fn boards_by_serial_or_port() {
        let config = parse(
            "[[board]]\nserial = \"01025\"\nwhite = \"A\"\n[[board]]\nport = \"/dev/ttyACM0\"\n",
        )
        .expect("valid");
        assert_eq!(config.boards[0].serial.as_deref(), Some("01025"));
        assert_eq!(config.boards[1].port, Some(PathBuf::from("/dev/ttyACM0")));
        assert_eq!(config.round.players(1), ("A".into(), "?".into()));
        let (line, field, _) = parse("[[board]]\nserial = 1025\n").expect_err("a string");
        assert_eq!((line, field.as_str()), (2, ", field \"serial\""));
    }

    #[test]
    fn errors_name_line_and_field() {
        let (line, field, message) =
            parse("event = \"Open\"\nround = 3\n").expect_err("round must be a string");
        assert_eq!((line, field.as_str()), (2, ", field \"round\""));
        assert!(message.contains("string"), "{message}");
        let (line, _, message) =
            parse("event = \"Open\"\n\n[[board]]\nwhite = \"A\"\nwhit = \"B\"\n")
                .expect_err("typo");
        assert_eq!(line, 5);
        assert!(message.contains("whit"), "{message}");
    }
}
