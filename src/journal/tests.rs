//! A journalled core survives being dropped without warning (as in `kill -9`): reopening
//! its journal brings back every game and move, and play goes on.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use boardcast_protocol::{Message, RawBoard, SquareIndex};

use super::*;

const PORT: &str = "/dev/pts/77";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("boardcast-jcore-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A board and the caller's clock, as the worker has them.
struct Hand {
    board: RawBoard,
    now: Duration,
}

impl Hand {
    /// Connects: the board sends its dump.
    fn start(core: &mut JournaledCore, board: RawBoard) -> Hand {
        let hand = Hand {
            board,
            now: Duration::from_millis(5),
        };
        core.on_message(&Message::BoardDump(board), hand.now);
        hand
    }

    fn square(name: &str) -> SquareIndex {
        let bytes = name.as_bytes();
        let (file, rank) = (bytes[0] - b'a', bytes[1] - b'1');
        SquareIndex::new((7 - rank) * 8 + file).expect("a square")
    }

    fn set(&mut self, core: &mut JournaledCore, name: &str, code: u8) {
        let square = Self::square(name);
        self.board.set(square, code);
        self.now += Duration::from_millis(150);
        core.on_message(&Message::FieldUpdate { square, code }, self.now);
        self.run_timers(core);
    }

    /// Moves a piece from `from` to `to` (a capture when `to` is occupied).
    fn play(&mut self, core: &mut JournaledCore, from: &str, to: &str) {
        let code = self.board.get(Self::square(from));
        if self.board.get(Self::square(to)) != 0 {
            self.set(core, to, 0);
        }
        self.set(core, from, 0);
        self.set(core, to, code);
        self.now += Duration::from_secs(1);
        self.run_timers(core);
    }

    fn run_timers(&mut self, core: &mut JournaledCore) {
        while let Some(due) = core.next_deadline().filter(|d| *d <= self.now) {
            core.tick(self.now.max(due));
            if core.next_deadline() == Some(due) {
                break;
            }
        }
    }
}

fn open(dir: &Path) -> JournaledCore {
    JournaledCore::open(EngineConfig::default(), Some(dir), 1, Path::new(PORT))
}

fn moves(core: &JournaledCore) -> Vec<String> {
    core.game_status().moves
}

#[test]
fn a_dropped_core_comes_back_from_its_journal_and_plays_on() {
    let dir = scratch("plays-on");
    let mut core = open(&dir);
    let mut hand = Hand::start(&mut core, RawBoard::start_position());
    core.apply(
        BoardCommand::SetTags(vec![("White".into(), "Ann".into())]),
        hand.now,
    )
    .expect("tags");
    for (from, to) in [("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6")] {
        hand.play(&mut core, from, to);
    }
    assert_eq!(moves(&core), ["e4", "e5", "Nf3", "Nc6"]);
    let before = core.game_status();
    drop(core);

    let mut core = open(&dir);
    assert_eq!(core.game_status(), before, "restored exactly");
    assert!(core.game_status().pgn.contains("[White \"Ann\"]"));
    // The new daemon's clock starts again at zero; the core's runs on.
    let mut hand = Hand {
        board: hand.board,
        now: Duration::from_millis(1),
    };
    core.on_message(&Message::BoardDump(hand.board), hand.now);
    hand.play(&mut core, "f1", "b5");
    assert_eq!(moves(&core), ["e4", "e5", "Nf3", "Nc6", "Bb5"]);
    drop(core);

    let core = open(&dir);
    assert_eq!(moves(&core), ["e4", "e5", "Nf3", "Nc6", "Bb5"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_amendment_comes_back_from_the_journal() {
    let dir = scratch("amend");
    let mut core = open(&dir);
    let mut hand = Hand::start(&mut core, RawBoard::start_position());
    for (from, to) in [("e2", "e4"), ("e7", "e5")] {
        hand.play(&mut core, from, to);
    }
    // Read after lost updates: 1... e6 (not e5) 2. Nf3 Nc6 3. Bb5 a6, past what the
    // engine explains from e5.
    let mut board = RawBoard::start_position();
    for (from, to) in [
        ("e2", "e4"),
        ("e7", "e6"),
        ("g1", "f3"),
        ("b8", "c6"),
        ("f1", "b5"),
        ("a7", "a6"),
    ] {
        let code = board.get(Hand::square(from));
        board.set(Hand::square(from), 0);
        board.set(Hand::square(to), code);
    }
    hand.now += Duration::from_secs(10);
    core.on_message(&Message::BoardDump(board), hand.now);
    hand.now += Duration::from_secs(1);
    hand.run_timers(&mut core);
    assert_eq!(moves(&core), ["e4", "e5"]);
    let amended = ["e6", "Nf3", "Nc6", "Bb5", "a6"].map(String::from).to_vec();
    core.apply(
        BoardCommand::Amend {
            from: 2,
            moves: amended,
        },
        hand.now,
    )
    .expect("the board follows from the amended moves");
    assert_eq!(moves(&core), ["e4", "e6", "Nf3", "Nc6", "Bb5", "a6"]);
    let before = core.game_status();
    drop(core);

    let core = open(&dir);
    assert_eq!(core.game_status(), before, "restored exactly");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn finished_games_come_back_for_publishing() {
    let dir = scratch("finished");
    let mut core = open(&dir);
    let mut hand = Hand::start(&mut core, RawBoard::start_position());
    // Fool's mate, then the pieces go back for the next game.
    for (from, to) in [("f2", "f3"), ("e7", "e5"), ("g2", "g4"), ("d8", "h4")] {
        hand.play(&mut core, from, to);
    }
    assert_eq!(core.game_status().result, "0-1");
    // Not in takeback order, which would retract the moves instead.
    for (from, to) in [("f3", "f2"), ("g4", "g2"), ("e5", "e7"), ("h4", "d8")] {
        hand.play(&mut core, from, to);
    }
    hand.play(&mut core, "d2", "d4");
    let published = core.take_finished_games();
    assert_eq!(published.len(), 1, "{published:?}");
    assert_eq!(moves(&core), ["d4"]);
    drop(core);

    let mut core = open(&dir);
    let restored = core.take_finished_games();
    assert_eq!(restored, published);
    assert!(restored[0].contains("Qh4#"), "{}", restored[0]);
    assert_eq!(moves(&core), ["d4"]);
    // The same games, offline, as `boardcast replay FILE.journal` prints them.
    let text = std::fs::read_to_string(dir.join(file::file_name(1, Path::new(PORT)))).unwrap();
    let pgn = replay(text.as_bytes(), EngineConfig::default()).unwrap();
    assert_eq!(pgn, format!("{}{}", published[0], core.game_status().pgn));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_torn_last_record_is_ignored_and_appending_goes_on() {
    let dir = scratch("torn");
    let mut core = open(&dir);
    let mut hand = Hand::start(&mut core, RawBoard::start_position());
    hand.play(&mut core, "e2", "e4");
    drop(core);
    let path = dir.join(file::file_name(1, Path::new(PORT)));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"1a2b3c4d 99999999 m 8e00").unwrap();
    drop(file);

    let mut core = open(&dir);
    assert_eq!(moves(&core), ["e4"]);
    hand.now = Duration::from_millis(1);
    hand.play(&mut core, "c7", "c5");
    drop(core);
    let core = open(&dir);
    assert_eq!(moves(&core), ["e4", "c5"]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("99999999"), "torn tail cut off");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn replay_reports_a_journal_it_does_not_reproduce() {
    let dir = scratch("diverged");
    let mut core = open(&dir);
    let mut hand = Hand::start(&mut core, RawBoard::start_position());
    hand.play(&mut core, "e2", "e4");
    drop(core);
    let path = dir.join(file::file_name(1, Path::new(PORT)));
    let mut rebuilder = Rebuilder::new(EngineConfig::default());
    file::open(&dir, 1, Path::new(PORT), |mut entry| {
        if let Record::Committed(text) = &mut entry.record {
            *text = text.replace("e4", "d4");
        }
        rebuilder.feed(entry);
    })
    .unwrap();
    let rebuilt = rebuilder.finish();
    let (index, journalled, replayed) = rebuilt.diverged.expect("divergence found");
    assert_eq!((index, journalled.as_str()), (0, "ply 1: d4"));
    assert_eq!(replayed, "ply 1: e4");
    assert!(path.exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_restored_occupancy_board_holds_no_piece_through_the_downtime() {
    let dir = scratch("held-through-restart");
    let config = EngineConfig {
        occupancy_only: true,
        ..EngineConfig::default()
    };
    let open = || JournaledCore::open(config.clone(), Some(&dir), 1, Path::new(PORT));
    let mut core = open();
    let mut hand = Hand::start(&mut core, RawBoard::start_position());
    for (from, to) in [("e2", "e4"), ("d7", "d5")] {
        hand.play(&mut core, from, to);
    }
    // The e-pawn lifted (exd5 swapped within a scan would look the same), then a crash.
    hand.set(&mut core, "e4", 0);
    hand.now += Duration::from_secs(1);
    hand.run_timers(&mut core);
    assert!(core.next_deadline().is_some(), "the hold window runs");
    drop(core);

    // The new daemon waits longer than the hold window for the port: nothing was read
    // meanwhile, so the piece was not seen held and no capture is made up.
    let mut core = open();
    core.tick(config.hold * 2);
    assert_eq!(moves(&core), ["e4", "d5"]);
    drop(core);
    assert_eq!(
        moves(&open()),
        ["e4", "d5"],
        "the restart is journalled in its place"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_rest_heard_is_journalled_once_and_restored() {
    let dir = scratch("rest-heard");
    let mut core = open(&dir);
    let mut hand = Hand::start(&mut core, RawBoard::start_position());
    hand.play(&mut core, "e2", "e4");
    // Keep-alive answers while the board rests on e4: only the first is news.
    for _ in 0..3 {
        core.heard(hand.now, hand.now);
        hand.now += Duration::from_secs(1);
    }
    drop(core);
    let path = dir.join(file::file_name(1, Path::new(PORT)));
    let text = std::fs::read_to_string(&path).unwrap();
    let heard = text.lines().filter(|l| l.split(' ').nth(2) == Some("h"));
    assert_eq!(heard.count(), 1, "{text}");
    // The restored core knows the rest was heard: hearing it again is no news.
    let mut core = open(&dir);
    core.heard(Duration::from_millis(1), Duration::from_millis(1));
    drop(core);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.ends_with(" r") || l.contains(" h "))
            .count(),
        2
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn each_daemon_names_its_engine_settings_and_a_replay_takes_the_last() {
    let dir = scratch("settings");
    let tournament = EngineConfig {
        mode: crate::inference::Mode::Tournament,
        ..EngineConfig::default()
    };
    let mut core = JournaledCore::open(tournament.clone(), Some(&dir), 1, Path::new(PORT));
    let mut hand = Hand::start(&mut core, RawBoard::start_position());
    hand.play(&mut core, "e2", "e4");
    drop(core);
    let path = dir.join(file::file_name(1, Path::new(PORT)));
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(EngineSettings::read(&text), Ok(Some(tournament)), "{text}");
    // Restarted with other options: the journal restores with them, and says so.
    let mut core = open(&dir);
    assert_eq!(moves(&core), ["e4"]);
    core.on_message(&Message::BoardDump(hand.board), hand.now);
    drop(core);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("\n# engine ").count(), 2, "{text}");
    assert_eq!(
        EngineSettings::read(&text),
        Ok(Some(EngineConfig::default()))
    );
    // A journal written before the settings were named restores and replays as ever.
    let old: String = text
        .lines()
        .filter(|l| !l.starts_with("# engine "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, &old).unwrap();
    assert_eq!(EngineSettings::read(&old), Ok(None));
    assert!(
        replay(old.as_bytes(), EngineConfig::default())
            .unwrap()
            .contains("1. e4")
    );
    assert_eq!(moves(&open(&dir)), ["e4"]);
    std::fs::remove_dir_all(dir).unwrap();
}
