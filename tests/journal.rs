//! Crash safety end to end: the real daemon with `--journal` is killed with SIGKILL in
//! the middle of a game on a simulated board and started again with the same journal;
//! every game and move comes back and the live game goes on.

use std::io::{PipeWriter, Write};
use std::path::Path;
use std::time::Duration;

use boardcast_simulator::{ClockConfig, PtyBoard, Script, SimConfig, Source, spawn_on_pty};

use crate::harness::{Running, boardcast, file_in, played_by_hand, poll, read_status, scratch};
use crate::http_harness::{Daemon, sans};

/// The opening of Kasparov – Topalov, Wijk aan Zee 1999: castling both ways, captures,
/// a recapture on the same square.
const GAME: [&str; 32] = [
    "e4", "d6", "d4", "Nf6", "Nc3", "g6", "Be3", "Bg7", "Qd2", "c6", "f3", "b5", "Nge2", "Nbd7",
    "Bh6", "Bxh6", "Qxh6", "Bb7", "a3", "e5", "O-O-O", "Qe7", "Kb1", "a6", "Nc1", "O-O-O", "Nb3",
    "exd4", "Rxd4", "c5", "Rd1", "Nb6",
];

const WAIT: Duration = Duration::from_secs(30);

fn daemon(port: &Path, status: &Path, journal: &Path) -> Running {
    let mut cmd = boardcast();
    cmd.args(["run", "--no-http", "--status-file"])
        .arg(status)
        .arg("--journal")
        .arg(journal)
        .arg("--port")
        .arg(port);
    Running::start(cmd)
}

fn moves_in(status: &Path) -> Option<Vec<String>> {
    let game = read_status(status)?["boards"][0]["game"].clone();
    serde_json::from_value(game["moves"].clone()).ok()
}

/// The clock times written into the PGN, one per annotated move.
fn clocks_in(status: &Path) -> Vec<String> {
    let game = read_status(status).unwrap_or_default()["boards"][0]["game"].clone();
    let pgn = game["pgn"].as_str().unwrap_or_default().to_string();
    pgn.split("[%clk ")
        .skip(1)
        .filter_map(|s| s.split(']').next().map(String::from))
        .collect()
}

fn kill(running: &mut Running) {
    // `Child::kill` is SIGKILL: no handler runs, nothing is flushed or closed.
    running.child.kill().expect("SIGKILL");
    running.child.wait().expect("reaped");
}

#[test]
fn a_killed_daemon_restarts_with_every_move_and_the_game_goes_on() {
    let script = Script::from_fen_and_san(None, &GAME).expect("script");
    let config = SimConfig {
        seed: 5,
        speed: 2.0,
        clock: Some(ClockConfig {
            initial: Duration::from_secs(600),
            increment: Duration::from_secs(5),
            ..ClockConfig::default()
        }),
        ..SimConfig::default()
    };
    let board = spawn_on_pty(config, Source::Script(script)).expect("board");
    let dir = scratch("journal-kill");
    let journal = dir.join("journal");
    let first_status = dir.join("first.json");
    let mut first = daemon(board.path(), &first_status, &journal);
    let before = poll(Duration::from_secs(120), || {
        moves_in(&first_status).filter(|m| m.len() >= 12)
    })
    .unwrap_or_else(|| panic!("no 12 moves:\n{}", first.stderr_so_far()));
    let clocks_before = clocks_in(&first_status);
    kill(&mut first);
    assert_eq!(before, GAME[..before.len()], "before the crash");
    assert!(
        !clocks_before.is_empty(),
        "the clock was read before the crash"
    );

    // The simulated players go on while the daemon restarts.
    let second_status = dir.join("second.json");
    let mut second = daemon(board.path(), &second_status, &journal);
    // The first status the new daemon writes already holds the game: it is restored
    // from the journal before the port is read.
    let restored = poll(WAIT, || moves_in(&second_status))
        .unwrap_or_else(|| panic!("no status:\n{}", second.stderr_so_far()));
    assert!(
        restored.len() >= before.len() && restored == GAME[..restored.len()],
        "restored {restored:?}, had {before:?}"
    );
    let clocks_restored = clocks_in(&second_status);
    assert_eq!(
        clocks_restored.get(..clocks_before.len()),
        Some(&clocks_before[..]),
        "clock times restored"
    );
    second
        .wait_for_stderr("restored", WAIT)
        .expect("restore logged");

    poll(Duration::from_secs(180), || {
        board.is_finished().then_some(())
    })
    .unwrap_or_else(|| panic!("game did not finish:\n{}", second.stderr_so_far()));
    let last = poll(WAIT, || {
        moves_in(&second_status).filter(|m| m.len() == GAME.len())
    })
    .unwrap_or_else(|| {
        panic!(
            "game incomplete: {:?}\n{}",
            moves_in(&second_status),
            second.stderr_so_far()
        )
    });
    assert_eq!(last, GAME);
}

/// A simulated board that plays what the test writes: moves, or `lift e2` / `place e4 P`.
struct Hands {
    board: PtyBoard,
    input: PipeWriter,
}

impl Hands {
    fn start() -> Hands {
        let (config, source, input) = played_by_hand();
        let board = spawn_on_pty(config, source).expect("board");
        Hands { board, input }
    }

    /// Plays `moves` one after the other, each once the previous one is complete.
    fn play(&mut self, moves: &[&str]) {
        for line in moves {
            writeln!(self.input, "{line}").expect("to the board");
            let report = self
                .board
                .reports()
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("{line} not played"));
            assert_eq!(report.san.trim_end_matches(['+', '#']), *line);
        }
    }

    /// Raw sensor actions, spaced like a person's.
    fn act(&mut self, actions: &[&str]) {
        for line in actions {
            writeln!(self.input, "{line}").expect("to the board");
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

#[test]
fn finished_games_survive_a_kill_and_a_torn_journal_tail() {
    let mut hands = Hands::start();
    let port = hands.board.path().display().to_string();
    let dir = scratch("journal-games");
    let journal = dir.join("journal");
    let journal_arg = journal.display().to_string();
    let mut daemon = Daemon::start(&[&port], &["--journal", &journal_arg]);
    hands.play(&["f3", "e5", "g4", "Qh4"]);
    daemon.wait_json("/api/boards/1", WAIT, |b| b["result"] == "0-1");
    // The arbiter sets the pieces up again (not in takeback order, which would retract
    // the moves), and the next game starts.
    hands.act(&[
        "lift f3",
        "place f2 P",
        "lift g4",
        "place g2 P",
        "lift e5",
        "place e7 p",
        "lift h4",
        "place d8 q",
    ]);
    daemon.wait_json("/api/boards/1", WAIT, |b| b["result"] == "*");
    // The simulated players only know the first game's position, so the second one
    // is played square by square.
    hands.act(&["lift d2", "place d4 P", "lift d7", "place d5 p"]);
    daemon.wait_json("/api/boards/1", WAIT, |b| sans(b) == ["d4", "d5"]);
    kill(&mut daemon.running);

    // Power loss in the middle of writing a record.
    let file = file_in(&journal, "journal");
    let mut torn = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("journal");
    torn.write_all(b"0badc0de 987654321 m 8e00").expect("torn");
    drop(torn);

    let mut daemon = Daemon::start(&[&port], &["--journal", &journal_arg]);
    daemon
        .running
        .wait_for_stderr("torn write", WAIT)
        .expect("the torn tail is reported");
    let games = daemon.wait_json("/api/boards/1/games", WAIT, |g| {
        g.as_array().is_some_and(|a| a.len() == 2)
    });
    assert_eq!(games[0]["plies"], 4, "{games}");
    assert_eq!(games[1]["plies"], 2, "{games}");
    let (status, _, first) = daemon.get("/api/boards/1/games/1.pgn");
    assert_eq!(status, 200);
    assert!(first.contains("Qh4#") && first.contains("0-1"), "{first}");
    assert!(
        !std::fs::read_to_string(&file)
            .expect("journal")
            .contains("987654321"),
        "the torn record is cut off"
    );

    // The live game goes on where it was.
    hands.act(&["lift g1", "place f3 N"]);
    daemon.wait_json("/api/boards/1", WAIT, |b| sans(b) == ["d4", "d5", "Nf3"]);
}

/// The current game's PGN on one line (the movetext wraps).
fn live_pgn(daemon: &Daemon) -> String {
    let (status, _, pgn) = daemon.get("/api/boards/1/pgn");
    assert_eq!(status, 200, "{pgn}");
    pgn.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_move_made_and_taken_back_while_the_daemon_was_down_is_flagged() {
    let mut hands = Hands::start();
    let port = hands.board.path().display().to_string();
    let dir = scratch("journal-unread");
    let journal = dir.join("journal");
    let journal_arg = journal.display().to_string();
    let mut daemon = Daemon::start(&[&port], &["--journal", &journal_arg]);
    hands.play(&["e4", "e5"]);
    daemon.wait_json("/api/boards/1", WAIT, |b| sans(b) == ["e4", "e5"]);
    kill(&mut daemon.running);
    // Nf3 and back while nothing reads the board.
    hands.act(&["lift g1", "place f3 N", "lift f3", "place g1 N"]);
    std::thread::sleep(Duration::from_secs(2));
    let mut daemon = Daemon::start(&[&port], &["--journal", &journal_arg]);
    hands.play(&["Nf3", "Nc6"]);
    daemon.wait_json("/api/boards/1", WAIT, |b| {
        sans(b) == ["e4", "e5", "Nf3", "Nc6"]
    });
    let pgn = live_pgn(&daemon);
    let remark = pgn
        .split_once("1. e4 e5 {board not read for ")
        .map(|(_, after)| after.to_string())
        .unwrap_or_else(|| panic!("no remark after e5: {pgn}"));
    assert!(remark.contains("check the scoresheet} 2. Nf3 Nc6"), "{pgn}");
    // The restored game carries it as it was (a remark for this restart, if it took
    // long enough, would come after Nc6).
    kill(&mut daemon.running);
    let daemon = Daemon::start(&[&port], &["--journal", &journal_arg]);
    let movetext = |pgn: &str| {
        let from = pgn.find("1. e4").unwrap_or(0);
        let to = pgn.find("Nc6").map_or(pgn.len(), |at| at + 3);
        pgn[from..to].to_string()
    };
    let restored = poll(WAIT, || {
        let pgn = live_pgn(&daemon);
        pgn.contains("Nc6").then_some(pgn)
    })
    .expect("restored");
    assert_eq!(movetext(&restored), movetext(&pgn), "{restored}");
}
