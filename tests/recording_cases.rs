//! Makes the stored recordings under tests/data/recordings, one ignored test per case:
//! `cargo test --release --test integration recording_cases -- --ignored` (a case's name
//! after `recording_cases::` makes that one alone). Each runs the real daemon with
//! `--record` against the simulated board on a pseudo-terminal, checks that the live game
//! is the one the case is about and that its recording replays to that game, then
//! replaces the case's directory. Timings differ from run to run; the games must not.

use std::io::{BufReader, Write};
use std::path::Path;
use std::time::Duration;

use boardcast_simulator::{
    Noise, Plug, PlugEvent, PtyBoard, Script, SimConfig, Source, Style, StyleMix, spawn_on_pty_with,
};

use crate::harness::{Running, boardcast, moves, poll, read_status, scratch};
use crate::recordings::{CASES, EXPECTED, movetext, recordings_in, replay};

/// What the generator does, in order, once the daemon reads the board (a line sent to the
/// board is played after the script's moves).
enum Step {
    /// A line to the board: a move (played at once, with no think time) or `lift e2` /
    /// `place e4 P`.
    Play(&'static str),
    /// A pause, in milliseconds.
    Pause(u64),
    /// Wait until the board has been unplugged.
    Unplugged,
    /// Wait until the board is plugged in again and the daemon reads it; count the moves
    /// made meanwhile.
    Replugged,
}

/// One hard case.
struct Case {
    /// Its directory under tests/data/recordings.
    name: &'static str,
    /// The board's seed (handling times and choices).
    seed: u64,
    /// The handling styles to choose from (a move no style fits is handled its kind's
    /// default way); none: the realistic mix.
    styles: &'static [Style],
    noise: Noise,
    /// The human pace (2.0: every delay halved).
    speed: f64,
    /// Moves from the start position, with think times, as soon as the daemon reads.
    script: &'static [&'static str],
    /// Then these, once the daemon reads the board.
    steps: &'static [Step],
    /// Unplug the board after this ply, for this many milliseconds.
    unplug: Option<(u32, u64)>,
    /// Whether moves are made while the board is unplugged (between the steps
    /// `Unplugged` and `Replugged`); checked, as the gap's length alone cannot promise it.
    moves_while_unplugged: bool,
    /// The moves the live daemon must end with.
    want: &'static [&'static str],
    /// Text the live PGN must hold: the remark the case is about.
    remark: Option<&'static str>,
}

impl Case {
    /// A case's settings where it names none: noise-free, at twice a human pace.
    const DEFAULT: Case = Case {
        name: "",
        seed: 5,
        styles: &[],
        noise: Noise {
            flicker: 0.0,
            jadoube: 0.0,
            wrong_code: 0.0,
        },
        speed: 2.0,
        script: &[],
        steps: &[],
        unplug: None,
        moves_while_unplugged: false,
        want: &[],
        remark: None,
    };

    fn board(&self, link: &Path) -> (PtyBoard, std::io::PipeWriter) {
        let styles = if self.styles.is_empty() {
            StyleMix::realistic()
        } else {
            StyleMix::only(self.styles)
        };
        let config = SimConfig {
            seed: self.seed,
            styles,
            noise: self.noise,
            speed: self.speed,
            ..SimConfig::default()
        };
        let (lines, input) = std::io::pipe().expect("pipe");
        let script = Script::from_fen_and_san(None, self.script).expect("script");
        let source = Source::Interactive(script, Box::new(BufReader::new(lines)));
        let plug = Plug {
            link: Some(link.to_path_buf()),
            relink: None,
            unplug_after: self.unplug.map(|(ply, _)| ply).into_iter().collect(),
            unplugged_for: Duration::from_millis(self.unplug.map_or(0, |(_, ms)| ms)),
        };
        let board = spawn_on_pty_with(config, source, plug).expect("board");
        (board, input)
    }
}

fn board_status(status: &Path) -> serde_json::Value {
    read_status(status).map_or(serde_json::Value::Null, |s| s["boards"][0].clone())
}

fn responding(status: &Path, daemon: &mut Running) {
    poll(Duration::from_secs(30), || {
        (board_status(status)["connection"] == "responding").then_some(())
    })
    .unwrap_or_else(|| panic!("board not read:\n{}", daemon.stderr_so_far()));
}

/// Plays `case` to the real daemon, checks it, and writes its directory.
fn make(case: &Case) {
    let dir = scratch(&format!("recording-{}", case.name));
    let (link, status, recorded) = (dir.join("board"), dir.join("status.json"), dir.join("rec"));
    let (board, mut input) = case.board(&link);
    let mut cmd = boardcast();
    cmd.args(["run", "--no-http", "--status-file"])
        .arg(&status)
        .arg("--record")
        .arg(&recorded)
        .arg("--port")
        .arg(&link);
    let mut daemon = Running::start(cmd);
    let plug_wait = Duration::from_secs(120);
    responding(&status, &mut daemon);
    let mut moved_while_unplugged = 0;
    for step in case.steps {
        match step {
            Step::Play(line) => writeln!(input, "{line}").expect("to the board"),
            Step::Pause(ms) => std::thread::sleep(Duration::from_millis(*ms)),
            Step::Unplugged => {
                let event = board.plug_events().recv_timeout(plug_wait).ok();
                assert_eq!(event, Some(PlugEvent::Unplugged), "{}", case.name);
                // The moves before the unplug are reported before it.
                while board.reports().try_recv().is_ok() {}
            }
            Step::Replugged => {
                let event = board.plug_events().recv_timeout(plug_wait).ok();
                assert!(matches!(event, Some(PlugEvent::Replugged(_))), "{event:?}");
                responding(&status, &mut daemon);
                moved_while_unplugged = board.reports().try_iter().count();
            }
        }
    }
    assert_eq!(
        moved_while_unplugged > 0,
        case.moves_while_unplugged,
        "{}: {moved_while_unplugged} moves made while unplugged",
        case.name
    );
    // End of input: the board finishes once the last move is made.
    drop(input);
    let live = poll(Duration::from_secs(180), || {
        let json = board_status(&status);
        (board.is_finished() && moves(&json) == case.want).then_some(())
    });
    assert!(
        live.is_some(),
        "{}: want {:?}, live {:?}\n{}",
        case.name,
        case.want,
        moves(&board_status(&status)),
        daemon.stderr_so_far()
    );
    // A few keepalives after the last move, as a board left standing gives.
    std::thread::sleep(Duration::from_secs(2));
    let live_pgn = board_status(&status)["game"]["pgn"]
        .as_str()
        .expect("pgn")
        .to_string();
    drop(daemon);
    drop(board);

    let files = recordings_in(&recorded);
    if case.unplug.is_some() {
        assert!(files.len() >= 2, "one recording per connection: {files:?}");
    }
    let replayed = movetext(&replay(&files));
    assert_eq!(
        replayed,
        movetext(&live_pgn),
        "{}: replay against live",
        case.name
    );
    if let Some(remark) = case.remark {
        assert!(
            replayed.contains(remark),
            "{}: no {remark:?} in\n{replayed}",
            case.name
        );
    }
    write_case(case.name, &files, &replayed);
}

/// Replaces the case's directory: its recordings, renamed by connection, and its
/// movetext.
fn write_case(name: &str, files: &[std::path::PathBuf], movetext: &str) {
    let dir = Path::new(CASES).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("case directory");
    for (n, file) in files.iter().enumerate() {
        std::fs::copy(file, dir.join(format!("connection-{}.rec", n + 1))).expect("copy");
    }
    std::fs::write(dir.join(EXPECTED), format!("{movetext}\n")).expect("expected");
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn castling_rook_first_long_pause() {
    // The rook stands on f1 for seconds (a legal Rf1) before the king crosses.
    const MOVES: [&str; 7] = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "O-O"];
    make(&Case {
        name: "castling-rook-first-long-pause",
        seed: 4,
        styles: &[Style::Plain, Style::CastleRookFirst],
        script: &MOVES,
        want: &MOVES,
        remark: Some("touch-move"),
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn castling_rook_first_lifted_before_the_reply_settles() {
    // As above, but the rook is lifted within the settle window of Black's Bc5 (seed 3:
    // 200 ms after the bishop lands), before that move is recorded: the touch-move
    // remark came only once such a lift counted as White's first (787132f).
    const MOVES: [&str; 7] = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "O-O"];
    make(&Case {
        name: "castling-rook-first-lifted-before-the-reply-settles",
        seed: 3,
        styles: &[Style::Plain, Style::CastleRookFirst],
        script: &MOVES,
        want: &MOVES,
        remark: Some("touch-move"),
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn en_passant_captured_pawn_removed_last() {
    // exd6 stands as a pawn move to d6 beside the pawn it takes until that is removed.
    const MOVES: [&str; 5] = ["e4", "Nf6", "e5", "d5", "exd6"];
    make(&Case {
        name: "en-passant-captured-pawn-removed-last",
        styles: &[Style::Plain, Style::EpVictimLast],
        script: &MOVES,
        want: &MOVES,
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn promotion_pawn_stands_on_the_last_rank() {
    // The pawn stands on b8 (left free by 4... Nbd7) for seconds before the queen takes
    // its place.
    const MOVES: [&str; 9] = [
        "e4", "d5", "exd5", "c6", "dxc6", "Nf6", "cxb7", "Nbd7", "b8=Q",
    ];
    make(&Case {
        name: "promotion-pawn-stands-on-the-last-rank",
        styles: &[Style::Plain, Style::CaptureOwnFirst, Style::PromoteSwap],
        script: &MOVES,
        want: &MOVES,
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn under_promotion_with_capture() {
    // The pawn is lifted, the rook on a8 removed and a knight put there: the board never
    // shows the pawn on the last rank.
    const MOVES: [&str; 9] = [
        "e4", "d5", "exd5", "c6", "dxc6", "Nf6", "cxb7", "Nbd7", "bxa8=N",
    ];
    make(&Case {
        name: "under-promotion-with-capture",
        styles: &[Style::Plain, Style::CaptureOwnFirst, Style::PromoteDirect],
        script: &MOVES,
        want: &MOVES,
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn capture_swapped_in_one_scan() {
    // Both captures: the taker lifted, the taken removed and the taker placed within
    // one scan, so the board never shows a square emptied first.
    const MOVES: [&str; 6] = ["e4", "d5", "exd5", "Qxd5", "Nc3", "Qa5"];
    make(&Case {
        name: "capture-swapped-in-one-scan",
        styles: &[Style::Plain, Style::CaptureSwap],
        script: &MOVES,
        want: &MOVES,
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn fast_reply_before_the_move_settles() {
    // Each reply is begun a few tens of milliseconds after the move it answers lands.
    make(&Case {
        name: "fast-reply-before-the-move-settles",
        steps: &[
            Step::Play("e4"),
            Step::Play("e5"),
            Step::Pause(2000),
            Step::Play("Nf3"),
            Step::Play("Nc6"),
        ],
        want: &["e4", "e5", "Nf3", "Nc6"],
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn pieces_slid_across_squares() {
    // Bishop and queen are set down briefly on each square they pass: each such square
    // is a legal move for a moment. Ends in mate, so the game's result is in the PGN.
    const MOVES: [&str; 7] = ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"];
    make(&Case {
        name: "pieces-slid-across-squares",
        styles: &[Style::Plain, Style::Slide],
        script: &MOVES,
        want: &MOVES,
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn jadoube_flicker_and_wrong_codes() {
    // Pieces adjusted and put back, squares read empty for a scan, landed pieces read
    // once with another piece's code, in the realistic mix of handling styles.
    const MOVES: [&str; 8] = ["d4", "d5", "c4", "e6", "Nc3", "Nf6", "Bg5", "Be7"];
    make(&Case {
        name: "jadoube-flicker-and-wrong-codes",
        noise: Noise {
            flicker: 0.5,
            jadoube: 0.5,
            wrong_code: 0.3,
        },
        script: &MOVES,
        want: &MOVES,
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn takeback() {
    // Nf3 is put back on g1 (casual mode retracts it) and Nc3 played instead.
    make(&Case {
        name: "takeback",
        steps: &[
            Step::Play("e4"),
            Step::Pause(1500),
            Step::Play("e5"),
            Step::Pause(1500),
            Step::Play("Nf3"),
            Step::Pause(1500),
            Step::Play("lift f3"),
            Step::Pause(400),
            Step::Play("place g1 N"),
            Step::Pause(1500),
            // By hand: the board's own game still has Nf3 played.
            Step::Play("lift b1"),
            Step::Pause(400),
            Step::Play("place c3 N"),
        ],
        want: &["e4", "e5", "Nc3"],
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn unplugged_while_moves_are_made() {
    // Moves made while the board is off are found by the search from the dump read
    // when it is back. At a human pace, so the board rests between moves after it.
    const MOVES: [&str; 8] = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"];
    make(&Case {
        name: "unplugged-while-moves-are-made",
        seed: 7,
        speed: 1.0,
        script: &MOVES,
        steps: &[Step::Unplugged, Step::Replugged],
        unplug: Some((4, 6000)),
        moves_while_unplugged: true,
        want: &MOVES,
        ..Case::DEFAULT
    });
}

#[test]
#[ignore = "replaces tests/data/recordings; run with --ignored to regenerate"]
fn move_made_and_taken_back_while_unplugged() {
    // Nf3 and back while nothing is read leaves no trace on the board: the PGN says how
    // long it was not read.
    make(&Case {
        name: "move-made-and-taken-back-while-unplugged",
        seed: 9,
        steps: &[
            Step::Play("e4"),
            Step::Pause(300),
            Step::Play("e5"),
            Step::Unplugged,
            Step::Play("lift g1"),
            Step::Pause(300),
            Step::Play("place f3 N"),
            Step::Pause(300),
            Step::Play("lift f3"),
            Step::Pause(300),
            Step::Play("place g1 N"),
            Step::Replugged,
            Step::Play("Nf3"),
            Step::Pause(300),
            Step::Play("Nc6"),
        ],
        unplug: Some((2, 5000)),
        want: &["e4", "e5", "Nf3", "Nc6"],
        remark: Some("board not read for "),
        ..Case::DEFAULT
    });
}
