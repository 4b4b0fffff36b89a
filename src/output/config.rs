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
use toml::Spanned;

use super::push::PushTarget;
use super::round::{Players, Round};
use crate::link::plan::Locator;

mod boards;

use boards::BoardLines;
pub use boards::BoardsError;

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
    /// The file, when there is one, to name in errors found after loading.
    path: Option<PathBuf>,
    /// The lines of each board's table and locating fields, by board number − 1.
    board_lines: Vec<BoardLines>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    event: Option<String>,
    site: Option<String>,
    round: Option<String>,
    date: Option<String>,
    #[serde(default)]
    board: Vec<Spanned<RawBoard>>,
    push: Option<RawPush>,
    journal: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoard {
    white: Option<String>,
    black: Option<String>,
    port: Option<Spanned<PathBuf>>,
    serial: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPush {
    url: Spanned<String>,
    token: String,
}

/// Reads and checks the config file at `path`.
pub fn load(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let config = parse(&text).map_err(|(line, field, message)| ConfigError::Invalid {
        path: path.to_path_buf(),
        line,
        field,
        message,
    })?;
    Ok(FileConfig {
        path: Some(path.to_path_buf()),
        ..config
    })
}

/// Parses config text; an error is (line, field note, message).
fn parse(text: &str) -> Result<FileConfig, (usize, String, String)> {
    let raw: RawConfig = toml::from_str(text).map_err(|e| {
        let line = line_at(text, e.span().map_or(0, |s| s.start));
        (line, field_on_line(text, line), e.message().to_string())
    })?;
    let push = match raw.push {
        Some(push) => Some(PushTarget {
            url: push_url(push.url.get_ref()).map_err(|message| {
                let line = line_at(text, push.url.span().start);
                (line, ", field \"url\"".to_string(), message)
            })?,
            token: push.token,
        }),
        None => None,
    };
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
                white: b.get_ref().white.clone(),
                black: b.get_ref().black.clone(),
            })
            .collect(),
    };
    let board_lines = raw
        .board
        .iter()
        .map(|b| BoardLines {
            table: line_at(text, b.span().start),
            port: b
                .get_ref()
                .port
                .as_ref()
                .map(|p| line_at(text, p.span().start)),
            serial: b
                .get_ref()
                .serial
                .as_ref()
                .map(|s| line_at(text, s.span().start)),
        })
        .collect();
    let boards = raw
        .board
        .into_iter()
        .map(|b| {
            let b = b.into_inner();
            Locator {
                port: b.port.map(Spanned::into_inner),
                serial: b.serial.map(Spanned::into_inner),
            }
        })
        .collect();
    Ok(FileConfig {
        round,
        push,
        boards,
        journal: raw.journal,
        path: None,
        board_lines,
    })
}

/// A push `url` that can be pushed to (http or https, with a host), or what is wrong
/// with it: checked at load, so that a mistake stops the start instead of every push.
fn push_url(url: &str) -> Result<String, String> {
    let uri = url.parse::<ureq::http::Uri>().ok();
    let pushable = uri.is_some_and(|uri| {
        matches!(uri.scheme_str(), Some("http" | "https"))
            && uri.host().is_some_and(|host| !host.is_empty())
    });
    match pushable {
        true => Ok(url.to_string()),
        false => Err(format!(
            "push URL {url:?}: expected an http:// or https:// URL with a host"
        )),
    }
}

/// The 1-based line of byte `offset` of `text`.
fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
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

    #[test]
    fn every_field_is_named_in_its_error() {
        let cases: [(&str, usize, &str); 8] = [
            ("event = 1\n", 1, "event"),
            ("site = true\n", 1, "site"),
            ("date = 2026\n", 1, "date"),
            (
                "event = \"E\"\n[[board]]\nwhite = \"A\"\nblack = 2\n",
                4,
                "black",
            ),
            ("[[board]]\nwhite = [1]\n", 2, "white"),
            ("[push]\nurl = 5\ntoken = \"t\"\n", 2, "url"),
            ("[push]\nurl = \"http://x\"\ntoken = 7\n", 3, "token"),
            ("event = \"E\"\nevnt = \"F\"\n", 2, "evnt"),
        ];
        for (text, want_line, name) in cases {
            let (line, field, message) = parse(text).expect_err(text);
            assert_eq!(line, want_line, "{text:?}: {message}");
            assert!(
                field.contains(name) || message.contains(name),
                "{text:?}: field {field:?}, message {message:?}"
            );
        }
        // A missing field names the table that lacks it.
        let (_, _, message) = parse("[push]\nurl = \"http://x\"\n").expect_err("no token");
        assert!(message.contains("token"), "{message}");
    }

    #[test]
    fn a_push_url_that_cannot_be_pushed_to_is_named() {
        for url in [
            "lichess.org/api/push",
            "ftp://lichess.org/x",
            "https://",
            "http://a b/",
        ] {
            let text = format!("[push]\ntoken = \"t\"\nurl = \"{url}\"\n");
            let (line, field, message) = parse(&text).expect_err(url);
            assert_eq!(
                (line, field.as_str()),
                (3, ", field \"url\""),
                "{url}: {message}"
            );
            assert!(message.contains(url), "{message}");
        }
        let fine = parse("[push]\nurl = \"https://lichess.org/api/x/push\"\ntoken = \"t\"\n");
        assert!(fine.is_ok());
    }
}
