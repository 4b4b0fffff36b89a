//! Where the file's boards are written, so that a mistake in them found only when they
//! are planned with the command line's options ([`crate::link::plan`]) is named by the
//! file, line and field as a mistake found at load is.

use std::path::PathBuf;

use super::FileConfig;
use crate::link::plan::PlanError;

/// A mistake found when the boards are planned, named as [`super::ConfigError`] names
/// one found at load.
#[derive(Debug, thiserror::Error)]
pub enum BoardsError {
    /// The mistake is in the file.
    #[error("config file {path}, line {line}{field}: {source}")]
    InFile {
        /// The file.
        path: PathBuf,
        /// 1-based line of the board's `port` or `serial`, or of its `[[board]]` table
        /// when it has neither.
        line: usize,
        /// `, field "port"` or `, field "serial"`, or empty for a board that has neither.
        field: String,
        /// What is wrong.
        source: PlanError,
    },
    /// The mistake is not in one place of a file (no boards anywhere, or no file).
    #[error(transparent)]
    Plan(PlanError),
}

/// Where one `[[board]]` of the file is written: 1-based lines.
#[derive(Debug, Clone, Copy)]
pub(super) struct BoardLines {
    /// The `[[board]]` line.
    pub(super) table: usize,
    /// The `port = ...` line, if any.
    pub(super) port: Option<usize>,
    /// The `serial = ...` line, if any.
    pub(super) serial: Option<usize>,
}

impl BoardLines {
    /// The line and name of the field that locates the board (the one written later when
    /// there are both), or the table's line and no field when there is neither.
    fn locating_field(self) -> (usize, Option<&'static str>) {
        match (self.port, self.serial) {
            (Some(port), Some(serial)) if port > serial => (port, Some("port")),
            (_, Some(serial)) => (serial, Some("serial")),
            (Some(port), None) => (port, Some("port")),
            (None, None) => (self.table, None),
        }
    }
}

impl FileConfig {
    /// `error`, from planning this file's boards, with the place in the file it is about.
    pub fn place(&self, error: PlanError) -> BoardsError {
        let board = match error {
            PlanError::NoBoards => None,
            // The command line's ports clash with the first board the file locates.
            PlanError::Both => self
                .board_lines
                .iter()
                .position(|b| b.port.is_some() || b.serial.is_some()),
            PlanError::PortAndSerial(id) | PlanError::Unlocated(id) => Some(id - 1),
            PlanError::Duplicate(_, second) => Some(second - 1),
        };
        let found =
            board.and_then(|index| Some((self.path.as_ref()?, self.board_lines.get(index)?)));
        let Some((path, lines)) = found else {
            return BoardsError::Plan(error);
        };
        let (line, field) = lines.locating_field();
        BoardsError::InFile {
            path: path.clone(),
            line,
            field: field
                .map(|name| format!(", field \"{name}\""))
                .unwrap_or_default(),
            source: error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error planning the boards of `text` (a file at `round.toml`) with `ports`
    /// and `--auto` off.
    fn plan_error(text: &str, ports: &[&str]) -> String {
        let config = FileConfig {
            path: Some("round.toml".into()),
            ..super::super::parse(text).expect("valid TOML")
        };
        let ports: Vec<PathBuf> = ports.iter().map(PathBuf::from).collect();
        let error = crate::link::plan::plan(&ports, &config.boards, false).expect_err(text);
        config.place(error).to_string()
    }

    #[test]
    fn board_mistakes_name_line_and_field() {
        let two = "[[board]]\nwhite = \"A\"\nserial = \"1\"\n\n[[board]]\nblack = \"B\"\n";
        let both = "[[board]]\nport = \"/dev/a\"\nserial = \"1\"\n";
        let twice =
            "[[board]]\nserial = \"1\"\n[[board]]\nport = \"/dev/b\"\n[[board]]\nserial = \"1\"\n";
        for (text, ports, want) in [
            (
                two,
                &[][..],
                "config file round.toml, line 5: config board 2 has neither port nor serial",
            ),
            (
                both,
                &[],
                "config file round.toml, line 3, field \"serial\": config board 1: give its port",
            ),
            (
                twice,
                &[],
                "config file round.toml, line 6, field \"serial\": config boards 1 and 3 name",
            ),
            (
                two,
                &["/dev/x"],
                "config file round.toml, line 3, field \"serial\": the config file lists boards",
            ),
        ] {
            let message = plan_error(text, ports);
            assert!(message.starts_with(want), "{text:?}: {message}");
        }
        // No boards anywhere is not a mistake in one place of the file.
        assert!(plan_error("event = \"E\"\n", &[]).starts_with("no boards"));
    }
}
