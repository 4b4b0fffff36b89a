//! Data-driven engine scenarios: every file under `tests/data/scenarios` is one case.
//!
//! A file is a list of lines; lines starting with `#` are comments. Header lines (before the first
//! action) configure the case:
//!
//! * `fen: <FEN>` start position (default: the standard start)
//! * `rotated` the board stands turned 180°: square `s` is hardware index `63 - i`
//! * `occupancy` the board reports occupancy only (codes 0/1)
//! * `mode: casual|tournament`, `settle: 250ms`, `search: 4`, `auto-reanchor: 2s`
//!
//! The runner then dumps the start position and plays the actions. An action may start
//! with `+<duration>` (advance the clock first; timers run at their deadlines as they
//! would in the daemon); several actions joined by `;` arrive as one update.
//!
//! * `lift e2`, `place e4 P` (FEN letter; any letter on occupancy boards), `code e4 200`
//!   (a raw byte), `dump <64 chars in hardware order>` (a fresh read after lost updates),
//!   `link down` (the link went down, last heard now: the next dump says so)
//! * `wait 300ms`
//! * operator: `accept`, `setup`, `promote <ply> <q|r|b|n>`, `result 1-0`,
//!   `resolve <n>` or `resolve <SAN moves>` (pick a reported ambiguous sequence),
//!   `amend <ply> <SAN moves>` (replace the recorded moves from that ply on)
//! * `expect san: e4 e5` (the whole record), `expect event: <name> [text]` (the next
//!   such event, whose text form contains the text), `expect no event: <name>` (none
//!   since the last matched event), `expect result: 1-0`, `expect fen: <FEN>`,
//!   `expect pgn: <text>` (contained in the PGN), `expect replaced pgn: <text>` (contained
//!   in the PGN of the game the last new game replaced), `expect rotated: true|false`.
//!
//! `SCENARIO=<text>` runs only the files whose name contains the text (for iterating on one).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use boardcast::game::{GameRecord, write_pgn};
use boardcast::inference::{Choice, Engine, EngineConfig, Event, Mode};
use boardcast_protocol::RawBoard;
use shakmaty::{EnPassantMode, Position, Role, fen::Fen};

/// Runs one scenario text; `Err` says which line failed and why.
fn run(text: &str) -> Result<(), String> {
    let mut runner = Runner::default();
    let mut started = false;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |e: String| format!("line {}: {line}: {e}", number + 1);
        if !started {
            if runner.header(line).map_err(at)? {
                continue;
            }
            runner.start().map_err(at)?;
            started = true;
        }
        runner.step(line).map_err(at)?;
    }
    if !started {
        return Err("no actions".into());
    }
    Ok(())
}

struct Runner {
    config: EngineConfig,
    fen: Option<String>,
    rotated: bool,
    engine: Engine,
    board: RawBoard,
    now: Duration,
    events: Vec<Event>,
    cursor: usize,
    /// The PGN of each game a new game replaced, oldest first.
    replaced: Vec<String>,
    /// When the link was last heard before it went down (`link down`), until a dump.
    heard: Option<Duration>,
}

impl Default for Runner {
    fn default() -> Self {
        Runner {
            config: EngineConfig::default(),
            fen: None,
            rotated: false,
            engine: Engine::new(EngineConfig::default()),
            board: RawBoard::default(),
            now: Duration::ZERO,
            events: Vec::new(),
            cursor: 0,
            replaced: Vec::new(),
            heard: None,
        }
    }
}

impl Runner {
    /// Applies a header line; `Ok(false)` when the line is an action.
    fn header(&mut self, line: &str) -> Result<bool, String> {
        let (key, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.trim();
        match key.trim() {
            "fen" => self.fen = Some(value.to_string()),
            "rotated" => self.rotated = true,
            "occupancy" => self.config.occupancy_only = true,
            "mode" => {
                self.config.mode = match value {
                    "casual" => Mode::Casual,
                    "tournament" => Mode::Tournament,
                    other => return Err(format!("unknown mode {other}")),
                }
            }
            "settle" => self.config.settle = duration(value)?,
            "search" => self.config.max_search_plies = value.parse().map_err(|e| format!("{e}"))?,
            "auto-reanchor" => self.config.auto_reanchor = Some(duration(value)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Creates the engine and dumps the start position at time zero.
    fn start(&mut self) -> Result<(), String> {
        let record = match &self.fen {
            Some(fen) => GameRecord::from_fen(fen).map_err(|e| e.to_string())?,
            None => GameRecord::new(),
        };
        for (sq, piece) in record.start().board() {
            let code = if self.config.occupancy_only {
                1
            } else {
                piece_code(piece.char())?
            };
            self.board.0[self.index(&sq.to_string())?] = code;
        }
        self.engine = Engine::with_record(self.config.clone(), record);
        self.engine.observe(&self.board, self.now);
        self.drain();
        Ok(())
    }

    fn step(&mut self, line: &str) -> Result<(), String> {
        let mut line = line;
        if let Some(rest) = line.strip_prefix('+') {
            let (delay, rest) = rest.split_once(' ').unwrap_or((rest, ""));
            self.advance(self.now + duration(delay)?);
            line = rest.trim();
        }
        if let Some(expectation) = line.strip_prefix("expect ") {
            return self.expect(expectation);
        }
        let mut changed = false;
        for action in line.split(';').map(str::trim).filter(|a| !a.is_empty()) {
            changed |= self.act(action)?;
        }
        if changed {
            self.engine.observe(&self.board, self.now);
        }
        self.drain();
        Ok(())
    }

    /// Performs one action; `Ok(true)` when it changed the board.
    fn act(&mut self, action: &str) -> Result<bool, String> {
        let words: Vec<&str> = action.split_whitespace().collect();
        match words[..] {
            ["lift", sq] => self.board.0[self.index(sq)?] = 0,
            ["place", sq, piece] => {
                let code = match piece.chars().next() {
                    _ if self.config.occupancy_only => 1,
                    Some(c) if piece.len() == 1 => piece_code(c)?,
                    _ => return Err(format!("bad piece {piece}")),
                };
                self.board.0[self.index(sq)?] = code;
            }
            ["code", sq, byte] => {
                self.board.0[self.index(sq)?] = byte.parse().map_err(|e| format!("{e}"))?
            }
            ["dump", text] => {
                let board = RawBoard::from_text(text).map_err(|e| e.to_string())?;
                // As in the daemon's board core: a dump that changes the board means
                // updates were lost.
                let heard = self.heard.take();
                if board != self.board {
                    self.engine.updates_lost(self.now, heard);
                }
                self.board = board;
            }
            ["link", "down"] => {
                self.heard = Some(self.now);
                return Ok(false);
            }
            ["wait", d] => {
                self.advance(self.now + duration(d)?);
                return Ok(false);
            }
            ["accept"] => self.operator(|e| e.accept_board().map_err(|e| e.to_string()))?,
            ["setup"] => self.operator(|e| e.declare_setup().map_err(|e| e.to_string()))?,
            ["promote", ply, piece] => {
                let ply: usize = ply.parse().map_err(|e| format!("{e}"))?;
                let role = piece
                    .chars()
                    .next()
                    .and_then(Role::from_char)
                    .ok_or(format!("bad piece {piece}"))?;
                self.operator(|e| e.correct_promotion(ply, role).map_err(|e| e.to_string()))?
            }
            ["resolve", index] if index.parse::<usize>().is_ok() => {
                let choice = Choice::Index(index.parse().map_err(|e| format!("{e}"))?);
                self.operator(|e| e.resolve(&choice).map_err(|e| e.to_string()))?
            }
            ["resolve", ..] => {
                let choice = Choice::Moves(words[1..].iter().map(|w| w.to_string()).collect());
                self.operator(|e| e.resolve(&choice).map_err(|e| e.to_string()))?
            }
            ["amend", from, ref moves @ ..] => {
                let from: usize = from.parse().map_err(|e| format!("{e}"))?;
                let moves: Vec<String> = moves.iter().map(|w| w.to_string()).collect();
                self.operator(|e| e.amend(from, &moves).map_err(|e| e.to_string()))?
            }
            ["result", r] => {
                let outcome = r.parse().map_err(|_| format!("bad result {r}"))?;
                self.operator(|e| {
                    e.set_result(Some(outcome));
                    Ok(())
                })?
            }
            _ => return Err(format!("unknown action {action:?}")),
        }
        Ok(matches!(words[0], "lift" | "place" | "code" | "dump"))
    }

    fn operator(
        &mut self,
        f: impl FnOnce(&mut Engine) -> Result<(), String>,
    ) -> Result<(), String> {
        f(&mut self.engine)
    }

    /// Moves the clock to `target`, running every timer at its own deadline.
    fn advance(&mut self, target: Duration) {
        while let Some(deadline) = self.engine.next_deadline().filter(|d| *d <= target) {
            self.now = self.now.max(deadline);
            self.engine.tick(self.now);
            self.drain();
            if self.engine.next_deadline() == Some(deadline) {
                break;
            }
        }
        self.now = target;
        self.engine.tick(target);
        self.drain();
    }

    fn drain(&mut self) {
        while let Some(event) = self.engine.poll_event() {
            if let Event::NewGame { .. } = event
                && let Some(game) = self.engine.take_replaced_game()
            {
                self.replaced.push(write_pgn(&game));
            }
            self.events.push(event);
        }
    }

    fn expect(&mut self, expectation: &str) -> Result<(), String> {
        let (what, value) = expectation
            .split_once(':')
            .ok_or("expectation without ':'")?;
        let value = value.trim();
        let game = self.engine.game();
        match what.trim() {
            "san" => {
                let sans = game.sans().join(" ");
                if sans != value {
                    return Err(format!("record is {sans:?}; events {:?}", self.events));
                }
            }
            "event" => {
                let (name, text) = value.split_once(' ').unwrap_or((value, ""));
                let found = self.events[self.cursor..]
                    .iter()
                    .position(|e| e.name() == name && e.to_string().contains(text.trim()));
                match found {
                    Some(i) => self.cursor += i + 1,
                    None => {
                        return Err(format!(
                            "no {name} event with {text:?} in {:?}",
                            self.events[self.cursor..]
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                        ));
                    }
                }
            }
            "no event" => {
                if let Some(e) = self.events[self.cursor..]
                    .iter()
                    .find(|e| e.name() == value)
                {
                    return Err(format!("unexpected {e:?}"));
                }
            }
            "result" => {
                let result = game.status().result_str();
                if result != value {
                    return Err(format!("result is {result}"));
                }
            }
            "fen" => {
                let fen = Fen::from_position(game.position(), EnPassantMode::Legal).to_string();
                if fen != value {
                    return Err(format!("position is {fen}"));
                }
            }
            "pgn" => {
                let pgn = write_pgn(game);
                if !pgn.contains(value) {
                    return Err(format!("PGN lacks {value:?}:\n{pgn}"));
                }
            }
            "replaced pgn" => {
                let pgn = self.replaced.last().ok_or("no game was replaced")?;
                if !pgn.contains(value) {
                    return Err(format!("the replaced game's PGN lacks {value:?}:\n{pgn}"));
                }
            }
            "rotated" => {
                let want = value == "true";
                if self.engine.is_rotated() != want {
                    return Err(format!("rotated is {}", self.engine.is_rotated()));
                }
            }
            other => return Err(format!("unknown expectation {other:?}")),
        }
        Ok(())
    }

    /// The hardware index of a chess square on this board.
    fn index(&self, square: &str) -> Result<usize, String> {
        let bytes = square.as_bytes();
        let [file @ b'a'..=b'h', rank @ b'1'..=b'8'] = bytes[..] else {
            return Err(format!("bad square {square}"));
        };
        let index = usize::from(b'8' - rank) * 8 + usize::from(file - b'a');
        Ok(if self.rotated { 63 - index } else { index })
    }
}

fn piece_code(c: char) -> Result<u8, String> {
    "PRNBKQprnbkq"
        .find(c)
        .map(|i| i as u8 + 1)
        .ok_or(format!("bad piece {c}"))
}

fn duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = match text.strip_suffix("ms") {
        Some(n) => (n, 0.001),
        None => (
            text.strip_suffix('s')
                .ok_or(format!("bad duration {text}"))?,
            1.0,
        ),
    };
    let value: f64 = number.parse().map_err(|_| format!("bad duration {text}"))?;
    Ok(Duration::from_secs_f64(value * unit))
}

/// The scenario files, only those whose name contains `only` if given.
fn scenario_files(only: Option<&str>) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scenarios");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .filter(|p| {
            only.is_none_or(|only| {
                p.file_name()
                    .is_some_and(|name| name.to_string_lossy().contains(only))
            })
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_scenario_file_passes() {
    let only = std::env::var("SCENARIO").ok();
    let files = scenario_files(only.as_deref());
    assert!(
        if only.is_some() {
            !files.is_empty()
        } else {
            files.len() >= 30
        },
        "only {} scenario files",
        files.len()
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let text = fs::read_to_string(path).unwrap_or_default();
            run(&text)
                .err()
                .map(|e| format!("{}: {e}", path.file_name().unwrap_or_default().display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn runner_fails_on_wrong_expectations() {
    let base = "+100ms lift e2\n+100ms place e4 P\nwait 300ms\n";
    assert_eq!(run(&format!("{base}expect san: e4\n")), Ok(()));
    assert!(run(&format!("{base}expect san: d4\n")).is_err());
    assert!(run(&format!("{base}expect event: touch-move\n")).is_err());
    assert!(run(&format!("{base}expect no event: move\n")).is_err());
    assert!(run("+100ms lift z9\n").is_err());
    assert!(run("mode: blitz\nwait 1s\n").is_err());
}
