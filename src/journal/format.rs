//! The journal's on-disk format: one record a line, each with its own checksum, so a
//! line torn by a power loss (or garbled by the disk) is recognised and never replayed.
//!
//! ```text
//! # boardcast journal v1
//! 3f2a9c1e 1523004 m 8e00051c00
//! 0b7d44f2 1773120 t
//! 9a01be33 1773120 e ply 1: e4
//! 51c2d0aa 1800000 c {"op":"set_tags","tags":[["White","Carlsen"]]}
//! ```
//!
//! Each line is `CRC BODY`, where CRC is the CRC-32 of BODY in 8 hex digits and BODY is
//! `MICROS KIND [PAYLOAD]`: the board core's time in microseconds, then
//! * `m HEX`: a board message given to the core, as its wire frame;
//! * `t`: the core's timer ran;
//! * `l MICROS`: the link went down, last heard at that core time;
//! * `h MICROS`: the link heard the board at that core time, resting on the last
//!   recorded move for a settle window (written only when that is news, at most once a
//!   move: a restart then knows the move's rest was read, so it was no slide cut off);
//! * `r`: the daemon started again on this journal (nothing was read while it was away);
//! * `c JSON`: an operator command given to the core;
//! * `e TEXT`: a move or game change the core committed (a check for the replay; these
//!   are the records that are fsync'd).
//!
//! Lines starting with `#` after the header are comments, skipped by the replay: each
//! daemon that opens the journal writes one naming the engine settings it runs the
//! board with (`# engine settle-ms 250 …`, see `recording::EngineSettings`), which
//! `boardcast replay` uses. Older journals have none and replay with the defaults.

use std::io::{self, BufRead};
use std::time::Duration;

use boardcast_protocol::{Decoded, Decoder, Message};
use serde::{Deserialize, Serialize};
use shakmaty::{KnownOutcome, Role};

use crate::board::BoardCommand;
use crate::inference::Choice;

/// The first line of every journal.
pub const HEADER: &str = "# boardcast journal v1";

/// What one record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A board message given to the core.
    Message(Message),
    /// The core's timer ran.
    Tick,
    /// The link went down; it was last heard at this core time.
    LinkLost(Duration),
    /// The link heard the board at this core time, resting on the last recorded move
    /// for a settle window.
    RestHeard(Duration),
    /// The daemon started again on this journal: nothing was read while it was away.
    Restarted,
    /// An operator command given to the core.
    Command(BoardCommand),
    /// What the core committed (a move, a correction, a new game …), as one line.
    Committed(String),
}

/// A record and the core time it happened at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The board core's time.
    pub at: Duration,
    /// What happened.
    pub record: Record,
}

/// A line that cannot be used, and everything after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset where the damaged line starts (the file is good up to here).
    pub offset: usize,
    /// Its 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
    /// Good records that follow it, and so cannot be replayed: more than zero means the
    /// damage is not a torn tail but something in the middle of the file.
    pub records_after: usize,
}

/// What reading a journal found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    /// Bytes read: the whole file.
    pub len: usize,
    /// Good records handed on, those before any damage.
    pub records: usize,
    /// The first damaged line, if any.
    pub damage: Option<Damage>,
}

/// The line for one entry, newline included.
pub fn encode(entry: &Entry) -> String {
    let micros = entry.at.as_micros();
    let body = match &entry.record {
        Record::Message(message) => format!("{micros} m {}", hex(&message.encode())),
        Record::Tick => format!("{micros} t"),
        Record::LinkLost(heard) => format!("{micros} l {}", heard.as_micros()),
        Record::RestHeard(heard) => format!("{micros} h {}", heard.as_micros()),
        Record::Restarted => format!("{micros} r"),
        Record::Command(command) => {
            let json = serde_json::to_string(&CommandRecord::from(command))
                .unwrap_or_else(|_| "{}".into());
            format!("{micros} c {json}")
        }
        // A line break inside would split the record.
        Record::Committed(text) => format!("{micros} e {}", text.replace(['\n', '\r'], " ")),
    };
    format!("{:08x} {body}\n", crc32fast::hash(body.as_bytes()))
}

/// Reads a journal a line at a time and hands each good record to `each`, so that a
/// long journal is never held in memory whole. Everything from the first bad line on is
/// left out and described in `damage`; a last line without its newline counts as bad
/// (torn).
pub fn scan(mut reader: impl BufRead, mut each: impl FnMut(Entry)) -> io::Result<Scanned> {
    let mut scanned = Scanned {
        len: 0,
        records: 0,
        damage: None,
    };
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(scanned);
        }
        number += 1;
        let offset = scanned.len;
        scanned.len += read;
        let parsed = match line.strip_suffix(b"\n") {
            None => Err("incomplete last line (torn write)".to_string()),
            Some(line) => parse_line(line, number),
        };
        match (parsed, &mut scanned.damage) {
            (Ok(None), _) => {}
            (Ok(Some(_)), Some(damage)) => damage.records_after += 1,
            (Ok(Some(entry)), None) => {
                scanned.records += 1;
                each(entry);
            }
            (Err(_), Some(_)) => {}
            (Err(reason), None) => {
                scanned.damage = Some(Damage {
                    offset,
                    line: number,
                    reason,
                    records_after: 0,
                })
            }
        }
    }
}

/// One complete line: a record, or `None` for the header and comments.
fn parse_line(line: &[u8], number: usize) -> Result<Option<Entry>, String> {
    let line = std::str::from_utf8(line).map_err(|_| "not text".to_string())?;
    if number == 1 {
        return if line == HEADER {
            Ok(None)
        } else {
            Err("not a boardcast journal (no header line)".into())
        };
    }
    if line.starts_with('#') {
        return Ok(None);
    }
    let (crc, body) = line.split_once(' ').ok_or("no checksum")?;
    let crc = u32::from_str_radix(crc, 16).map_err(|_| "bad checksum field")?;
    if crc32fast::hash(body.as_bytes()) != crc {
        return Err("checksum mismatch".into());
    }
    let mut fields = body.splitn(3, ' ');
    let micros = fields
        .next()
        .and_then(|m| m.parse::<u64>().ok())
        .ok_or("bad time")?;
    let kind = fields.next().ok_or("no record kind")?;
    let payload = fields.next().unwrap_or("");
    let record = match kind {
        "m" => Record::Message(decode_message(payload).ok_or("bad message frame")?),
        "t" => Record::Tick,
        "l" => Record::LinkLost(Duration::from_micros(
            payload.parse().map_err(|_| "bad link-lost time")?,
        )),
        "h" => Record::RestHeard(Duration::from_micros(
            payload.parse().map_err(|_| "bad rest-heard time")?,
        )),
        "r" => Record::Restarted,
        "c" => {
            let command: CommandRecord =
                serde_json::from_str(payload).map_err(|e| format!("bad command: {e}"))?;
            Record::Command(command.try_into()?)
        }
        "e" => Record::Committed(payload.to_string()),
        other => return Err(format!("unknown record kind `{other}`")),
    };
    Ok(Some(Entry {
        at: Duration::from_micros(micros),
        record,
    }))
}

/// Exactly one message frame in hex.
fn decode_message(hex_text: &str) -> Option<Message> {
    let bytes = unhex(hex_text)?;
    let mut decoder = Decoder::new();
    decoder.feed(&bytes);
    let Some(Decoded::Message(message)) = decoder.poll() else {
        return None;
    };
    decoder.poll().is_none().then_some(message)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// An operator command as the journal stores it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum CommandRecord {
    SetTags {
        tags: Vec<(String, String)>,
    },
    SetResult {
        result: Option<String>,
    },
    AcceptBoard,
    DeclareSetup,
    /// `index` when the arbiter picked by place, else `moves`.
    Resolve {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index: Option<usize>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        moves: Vec<String>,
    },
    /// The recorded moves from ply `from` on replaced by `moves`.
    Amend {
        from: usize,
        moves: Vec<String>,
    },
    CorrectPromotion {
        ply: usize,
        role: char,
    },
}

impl From<&BoardCommand> for CommandRecord {
    fn from(command: &BoardCommand) -> Self {
        match command {
            BoardCommand::SetTags(tags) => CommandRecord::SetTags { tags: tags.clone() },
            BoardCommand::SetResult(outcome) => CommandRecord::SetResult {
                result: outcome.map(|o| o.as_str().to_string()),
            },
            BoardCommand::AcceptBoard => CommandRecord::AcceptBoard,
            BoardCommand::DeclareSetup => CommandRecord::DeclareSetup,
            BoardCommand::Resolve(Choice::Index(index)) => CommandRecord::Resolve {
                index: Some(*index),
                moves: Vec::new(),
            },
            BoardCommand::Resolve(Choice::Moves(moves)) => CommandRecord::Resolve {
                index: None,
                moves: moves.clone(),
            },
            BoardCommand::Amend { from, moves } => CommandRecord::Amend {
                from: *from,
                moves: moves.clone(),
            },
            BoardCommand::CorrectPromotion { ply, role } => CommandRecord::CorrectPromotion {
                ply: *ply,
                role: role.char(),
            },
        }
    }
}

impl TryFrom<CommandRecord> for BoardCommand {
    type Error = String;

    fn try_from(record: CommandRecord) -> Result<Self, String> {
        Ok(match record {
            CommandRecord::SetTags { tags } => BoardCommand::SetTags(tags),
            CommandRecord::SetResult { result } => BoardCommand::SetResult(
                result
                    .map(|r| KnownOutcome::from_ascii(r.as_bytes()))
                    .transpose()
                    .map_err(|_| "bad result")?,
            ),
            CommandRecord::AcceptBoard => BoardCommand::AcceptBoard,
            CommandRecord::DeclareSetup => BoardCommand::DeclareSetup,
            CommandRecord::Resolve { index, moves } => BoardCommand::Resolve(match index {
                Some(index) => Choice::Index(index),
                None => Choice::Moves(moves),
            }),
            CommandRecord::Amend { from, moves } => BoardCommand::Amend { from, moves },
            CommandRecord::CorrectPromotion { ply, role } => BoardCommand::CorrectPromotion {
                ply,
                role: Role::from_char(role).ok_or("bad promotion piece")?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use boardcast_protocol::{RawBoard, SquareIndex};
    use shakmaty::Color;

    use super::*;

    fn entries() -> Vec<Entry> {
        let at = |ms: u64| Duration::from_micros(ms * 1000 + 7);
        let square = SquareIndex::new(12).expect("a square");
        vec![
            Entry {
                at: at(10),
                record: Record::Message(Message::BoardDump(RawBoard::default())),
            },
            Entry {
                at: at(20),
                record: Record::Message(Message::FieldUpdate { square, code: 1 }),
            },
            Entry {
                at: at(270),
                record: Record::Tick,
            },
            Entry {
                at: at(280),
                record: Record::LinkLost(at(25)),
            },
            Entry {
                at: at(290),
                record: Record::Restarted,
            },
            Entry {
                at: at(270),
                record: Record::Committed("ply 1: e4".into()),
            },
            Entry {
                at: at(300),
                record: Record::Command(BoardCommand::SetTags(vec![(
                    "White".into(),
                    "Nakamura, \"Hikaru\" ☃".into(),
                )])),
            },
            Entry {
                at: at(301),
                record: Record::Command(BoardCommand::SetResult(Some(KnownOutcome::Decisive {
                    winner: Color::Black,
                }))),
            },
            Entry {
                at: at(302),
                record: Record::Command(BoardCommand::SetResult(None)),
            },
            Entry {
                at: at(303),
                record: Record::Command(BoardCommand::CorrectPromotion {
                    ply: 41,
                    role: Role::Knight,
                }),
            },
            Entry {
                at: at(304),
                record: Record::Command(BoardCommand::AcceptBoard),
            },
            Entry {
                at: at(305),
                record: Record::Command(BoardCommand::Resolve(Choice::Index(2))),
            },
            Entry {
                at: at(306),
                record: Record::Command(BoardCommand::Resolve(Choice::Moves(vec![
                    "Nf3".into(),
                    "Nf6".into(),
                    "Nc3".into(),
                ]))),
            },
            Entry {
                at: at(307),
                record: Record::Command(BoardCommand::Amend {
                    from: 9,
                    moves: vec!["Bb5".into(), "a6".into()],
                }),
            },
            Entry {
                at: at(305),
                record: Record::Command(BoardCommand::DeclareSetup),
            },
        ]
    }

    /// What `scan` handed on and found.
    struct Parsed {
        entries: Vec<Entry>,
        damage: Option<Damage>,
    }

    fn parse(bytes: &[u8]) -> Parsed {
        let mut entries = Vec::new();
        let scanned = scan(bytes, |entry| entries.push(entry)).expect("a slice reads");
        assert_eq!(scanned.len, bytes.len());
        assert_eq!(scanned.records, entries.len());
        Parsed {
            entries,
            damage: scanned.damage,
        }
    }

    fn journal(entries: &[Entry]) -> String {
        let mut text = format!("{HEADER}\n");
        entries.iter().for_each(|e| text.push_str(&encode(e)));
        text
    }

    #[test]
    fn every_record_reads_back() {
        let entries = entries();
        let parsed = parse(journal(&entries).as_bytes());
        assert_eq!(parsed.damage, None);
        assert_eq!(parsed.entries, entries);
    }

    #[test]
    fn lines_split_across_reads_are_put_together() {
        let entries = entries();
        let text = journal(&entries);
        let mut read = Vec::new();
        let reader = std::io::BufReader::with_capacity(7, text.as_bytes());
        let scanned = scan(reader, |entry| read.push(entry)).expect("a slice reads");
        assert_eq!((scanned.len, scanned.damage), (text.len(), None));
        assert_eq!(read, entries);
    }

    #[test]
    fn a_torn_last_line_is_left_out() {
        let entries = entries();
        let whole = journal(&entries);
        let last = encode(entries.last().expect("entries"));
        // Every cut inside the last line (power loss mid-write) loses that line only.
        for cut in 1..last.len() {
            let torn = &whole[..whole.len() - cut];
            let parsed = parse(torn.as_bytes());
            assert_eq!(parsed.entries, entries[..entries.len() - 1], "cut {cut}");
            let damage = parsed.damage.expect("damage");
            assert_eq!(damage.offset, whole.len() - last.len());
            assert_eq!(damage.records_after, 0);
        }
    }

    #[test]
    fn a_garbled_line_stops_the_replay_and_counts_what_follows() {
        let entries = entries();
        let whole = journal(&entries);
        // Flip one character of the third record's body: the checksum catches it.
        let start = whole.match_indices('\n').nth(2).expect("line").0 + 1;
        let mut bytes = whole.into_bytes();
        bytes[start + 12] ^= 0x01;
        let parsed = parse(&bytes);
        assert_eq!(parsed.entries, entries[..2]);
        let damage = parsed.damage.expect("damage");
        assert_eq!((damage.line, damage.offset), (4, start));
        assert_eq!(damage.records_after, entries.len() - 3);
        assert!(damage.reason.contains("checksum"), "{}", damage.reason);
    }

    #[test]
    fn zeros_after_a_power_loss_are_damage() {
        let mut bytes = journal(&entries()).into_bytes();
        let good = bytes.len();
        bytes.extend([0u8; 512]);
        let parsed = parse(&bytes);
        assert_eq!(parsed.entries, entries());
        assert_eq!(parsed.damage.expect("damage").offset, good);
    }

    #[test]
    fn a_file_that_is_not_a_journal_is_refused() {
        let parsed = parse(b"hello\n");
        assert_eq!(parsed.damage.expect("damage").line, 1);
    }
}
