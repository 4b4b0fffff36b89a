//! The round being broadcast: event, site, date, round number and each board's players,
//! and the PGN tags they give every board's games.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// The players at one board.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Players {
    /// The player with the white pieces.
    #[serde(default)]
    pub white: Option<String>,
    /// The player with the black pieces.
    #[serde(default)]
    pub black: Option<String>,
}

/// What the round's games are tagged with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Round {
    /// The Event tag.
    pub event: String,
    /// The Site tag.
    pub site: String,
    /// The Date tag, `YYYY.MM.DD`.
    pub date: String,
    /// The round number; board B of round R is tagged `Round "R.B"`.
    pub round: String,
    /// Players by board number − 1.
    pub boards: Vec<Players>,
}

impl Default for Round {
    fn default() -> Self {
        Round {
            event: "?".into(),
            site: "?".into(),
            date: today(),
            round: "1".into(),
            boards: Vec::new(),
        }
    }
}

impl Round {
    /// The players at board `id` (from 1); unknown players are "?".
    pub fn players(&self, id: usize) -> (String, String) {
        let players = id.checked_sub(1).and_then(|i| self.boards.get(i));
        let name = |n: Option<&Option<String>>| n.and_then(Option::clone).unwrap_or("?".into());
        (
            name(players.map(|p| &p.white)),
            name(players.map(|p| &p.black)),
        )
    }

    /// Sets the players at board `id` (from 1).
    pub fn set_players(&mut self, id: usize, players: Players) {
        let Some(index) = id.checked_sub(1) else {
            return;
        };
        if self.boards.len() <= index {
            self.boards.resize(index + 1, Players::default());
        }
        self.boards[index] = players;
    }

    /// The `Round` tag of board `id`.
    pub fn round_tag(&self, id: usize) -> String {
        format!("{}.{id}", self.round)
    }

    /// The PGN tags of board `id`'s games, in Seven Tag Roster order (Result comes
    /// from the game).
    pub fn tags(&self, id: usize) -> Vec<(String, String)> {
        let (white, black) = self.players(id);
        vec![
            ("Event".into(), self.event.clone()),
            ("Site".into(), self.site.clone()),
            ("Date".into(), self.date.clone()),
            ("Round".into(), self.round_tag(id)),
            ("White".into(), white),
            ("Black".into(), black),
        ]
    }

    /// A game with board `id`'s tags and no moves, for a board that has no game yet
    /// (its port never opened), so that combined files keep their board order.
    pub fn empty_game(&self, id: usize) -> String {
        let mut out = String::new();
        for (name, value) in self.tags(id) {
            out.push_str(&format!("[{name} \"{}\"]\n", escape(&value)));
        }
        out.push_str("[Result \"*\"]\n\n*\n\n");
        out
    }
}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Today's date (UTC) as a PGN date.
fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}.{m:02}.{d:02}")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// algorithm), so that no date crate is needed for one tag.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_513), (2026, 3, 1));
    }

    #[test]
    fn board_tags() {
        let mut round = Round {
            round: "3".into(),
            ..Round::default()
        };
        round.set_players(
            2,
            Players {
                white: Some("Carlsen, Magnus".into()),
                black: None,
            },
        );
        assert_eq!(round.round_tag(2), "3.2");
        assert_eq!(round.players(2), ("Carlsen, Magnus".into(), "?".into()));
        assert_eq!(round.players(1), ("?".into(), "?".into()));
        assert!(round.empty_game(2).contains("[Round \"3.2\"]"));
    }
}
