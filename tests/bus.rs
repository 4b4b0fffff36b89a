//! End to end, bus mode: the real daemon reads a chain of simulated boards on ONE
//! pseudo-terminal (`run --bus`), each board playing a different real game, with
//! corrupted checksums injected; one more board on the chain goes silent mid-game.
//! Bus boards are journalled and survive a kill like single boards, carry their clocks'
//! times, share one board numbering with `--port` and `--auto` boards and the config
//! file, and a recording of the line replays to every board's game.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::games::{decided_result, expected_sans};
use crate::harness::{Running, boardcast, moves, poll, read_status, scratch};
use crate::http_harness::{Daemon, TOKEN, send_json};
use crate::record::sans;
use boardcast_simulator::{
    BusBoardConfig, BusPty, ClockConfig, Identity, Plug, Script, SimConfig, Source,
    spawn_bus_on_pty, spawn_on_pty, spawn_on_pty_with,
};

/// Share of replies sent with a corrupted checksum.
const FAULTS: f64 = 0.1;

/// Short real games (24 to 40 plies), in corpus order.
fn short_games(count: usize) -> Vec<Script> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/twic1599_1000k.pgn");
    let text = std::fs::read_to_string(path).expect("corpus");
    Script::parse_pgn(&text)
        .expect("corpus parses")
        .into_iter()
        .filter(|g| (24..=40).contains(&g.moves().len()))
        .take(count)
        .collect()
}

fn serial(i: usize) -> String {
    format!("{:05}", 1025 + i)
}

/// The status of the board with this serial number.
fn board<'a>(status: &'a serde_json::Value, serial: &str) -> Option<&'a serde_json::Value> {
    status["boards"]
        .as_array()?
        .iter()
        .find(|b| b["serial"] == serial)
}

#[test]
fn a_chain_of_boards_on_one_port_is_recorded_exactly_and_a_silent_board_stops_no_other() {
    let games = short_games(4);
    assert_eq!(games.len(), 4);
    let silent = 3;
    let configs = games
        .iter()
        .enumerate()
        .map(|(i, script)| {
            let sim = SimConfig {
                seed: 500 + i as u64,
                speed: 2.0,
                ..SimConfig::default()
            };
            BusBoardConfig {
                checksum_faults: FAULTS,
                silent_after: (i == silent).then_some(Duration::from_secs(8)),
                ..BusBoardConfig::new(sim, serial(i), script.clone())
            }
        })
        .collect();
    let chain = spawn_bus_on_pty(configs).expect("simulated chain");
    let dir = scratch("bus");
    let status = dir.join("status.json");
    let mut cmd = boardcast();
    cmd.env("RUST_LOG", "debug")
        .arg("run")
        .arg("--no-http")
        .arg("--bus")
        .arg(chain.path())
        .arg("--status-file")
        .arg(&status);
    let mut daemon = Running::start(cmd);

    // Every board is found and numbered 1 to 4 (in serial order: they all answer the
    // first ping).
    let found = poll(Duration::from_secs(20), || {
        let s = read_status(&status)?;
        let serials: Vec<String> = s["boards"]
            .as_array()?
            .iter()
            .filter_map(|b| b["serial"].as_str().map(String::from))
            .collect();
        (serials.len() == 4).then_some(serials)
    });
    assert_eq!(
        found,
        Some((0..4).map(serial).collect::<Vec<_>>()),
        "{}",
        daemon.stderr_so_far()
    );

    // The silent board is reported not responding while the others are still playing.
    let reported = poll(Duration::from_secs(30), || {
        let s = read_status(&status)?;
        let gone = board(&s, &serial(silent))?["connection"] == "not_responding";
        let others_playing = (0..3)
            .all(|i| board(&s, &serial(i)).is_some_and(|b| b["connection"] == "responding"))
            && !(0..3).all(|i| chain.board_finished(i));
        (gone && others_playing).then_some(())
    });
    assert!(
        reported.is_some(),
        "silent board not reported while the others play:\n{}",
        daemon.stderr_so_far()
    );

    let finished = poll(Duration::from_secs(300), || {
        (0..3).all(|i| chain.board_finished(i)).then_some(())
    });
    assert!(finished.is_some(), "games did not finish");
    let mut failures = Vec::new();
    for (i, script) in games.iter().enumerate().take(3) {
        let want = expected_sans(script);
        let result = decided_result(script);
        let exact = poll(Duration::from_secs(10), || {
            let s = read_status(&status)?;
            let b = board(&s, &serial(i))?;
            (moves(b) == want && b["game"]["result"] == result).then_some(())
        });
        if exact.is_none() {
            let s = read_status(&status).unwrap_or_default();
            let got = board(&s, &serial(i)).map(moves).unwrap_or_default();
            failures.push(format!(
                "board {}: want {want:?} ({result}), got {got:?}",
                serial(i)
            ));
        }
    }
    let s = read_status(&status).expect("status");
    let quiet = board(&s, &serial(silent)).expect("silent board");
    assert_eq!(quiet["connection"], "not_responding");
    // What it recorded before it went silent is the start of its game.
    let want = expected_sans(&games[silent]);
    let got = moves(quiet);
    assert!(got.len() < want.len() && want.starts_with(&got), "{got:?}");
    assert!(
        (0..3)
            .all(|i| board(&s, &serial(i)).is_some_and(|b| b["garbage_bytes"].as_u64() > Some(0))),
        "no checksum error was injected"
    );
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.join("\n"),
        daemon.stderr_so_far()
    );
    assert!(!daemon.stderr_so_far().contains("panicked"));
    chain.stop();
}

/// Two real openings (Sicilian Najdorf, Queen's Gambit Declined), 16 plies each.
const OPENINGS: [[&str; 16]; 2] = [
    [
        "e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "Be3", "e5", "Nb3",
        "Be6", "f3", "Be7",
    ],
    [
        "d4", "Nf6", "c4", "e6", "Nc3", "d5", "cxd5", "exd5", "Bg5", "Be7", "e3", "O-O", "Bd3",
        "Nbd7", "Qc2", "Re8",
    ],
];

/// A chain of boards with serial numbers `serials`, board i playing `OPENINGS[i % 2]`;
/// the boards listed in `clocks` have a DGT clock (White on the right).
fn chain_of(serials: &[&str], clocks: &[usize]) -> BusPty {
    spawn_bus_on_pty(configs_of(serials, clocks)).expect("simulated chain")
}

/// The boards of `chain_of`.
fn configs_of(serials: &[&str], clocks: &[usize]) -> Vec<BusBoardConfig> {
    serials
        .iter()
        .enumerate()
        .map(|(i, serial)| {
            let sim = SimConfig {
                seed: 700 + i as u64,
                speed: 2.0,
                clock: clocks.contains(&i).then(|| ClockConfig {
                    initial: Duration::from_secs(600),
                    increment: Duration::from_secs(5),
                    white_on_left: false,
                    ..ClockConfig::default()
                }),
                ..SimConfig::default()
            };
            let script = Script::from_fen_and_san(None, &OPENINGS[i % 2]).expect("opening");
            BusBoardConfig {
                checksum_faults: FAULTS,
                ..BusBoardConfig::new(sim, *serial, script)
            }
        })
        .collect()
}

/// Whether `got` is the start of `game`.
fn is_start_of(game: &[&str], got: &[String]) -> bool {
    got.len() <= game.len() && got.iter().zip(game).all(|(a, b)| a == b)
}

/// The `[%clk]` times in a board's PGN.
fn clocks(board: &serde_json::Value) -> Vec<String> {
    let pgn = board["game"]["pgn"].as_str().unwrap_or_default();
    pgn.split("[%clk ")
        .skip(1)
        .filter_map(|s| s.split(']').next().map(String::from))
        .collect()
}

/// A daemon on bus `chain` with `args`, writing its status to `status`.
fn run_bus(chain: &BusPty, status: &Path, args: &[&std::ffi::OsStr]) -> Running {
    let mut cmd = boardcast();
    cmd.args(["run", "--no-http", "--status-file"])
        .arg(status)
        .arg("--bus")
        .arg(chain.path())
        .args(args);
    Running::start(cmd)
}

fn kill(running: &mut Running) {
    // SIGKILL: no handler runs, nothing is flushed or closed.
    running.child.kill().expect("SIGKILL");
    running.child.wait().expect("reaped");
}

#[test]
fn bus_boards_come_back_from_their_journals_after_a_kill_with_their_clock_times() {
    let serials = ["01025", "01026"];
    let chain = chain_of(&serials, &[0]);
    let dir = scratch("bus-journal");
    let journal = dir.join("journal");
    let args = ["--journal".as_ref(), journal.as_os_str()];
    let first_status = dir.join("first.json");
    let mut first = run_bus(&chain, &first_status, &args);
    let before = poll(Duration::from_secs(120), || {
        let s = read_status(&first_status)?;
        let boards: Vec<serde_json::Value> = serials
            .iter()
            .map(|serial| board(&s, serial).cloned())
            .collect::<Option<_>>()?;
        boards.iter().all(|b| moves(b).len() >= 6).then_some(boards)
    })
    .unwrap_or_else(|| panic!("no 6 moves on each board:\n{}", first.stderr_so_far()));
    kill(&mut first);
    for (i, b) in before.iter().enumerate() {
        assert!(
            is_start_of(&OPENINGS[i], &moves(b)),
            "{}: {:?}",
            serials[i],
            moves(b)
        );
    }
    let clocks_before = clocks(&before[0]);
    assert!(
        !clocks_before.is_empty(),
        "the clock was read: {}",
        before[0]["game"]["pgn"]
    );

    // The games go on while the daemon restarts; each board finds its journal by its
    // serial number.
    let second_status = dir.join("second.json");
    let mut second = run_bus(&chain, &second_status, &args);
    let restored = poll(Duration::from_secs(30), || {
        let s = read_status(&second_status)?;
        serials
            .iter()
            .map(|serial| board(&s, serial).cloned())
            .collect::<Option<Vec<_>>>()
    })
    .unwrap_or_else(|| panic!("boards not found again:\n{}", second.stderr_so_far()));
    for (i, b) in restored.iter().enumerate() {
        let (had, got) = (moves(&before[i]), moves(b));
        assert!(
            got.len() >= had.len() && is_start_of(&OPENINGS[i], &got),
            "{}: restored {got:?}, had {had:?}",
            serials[i]
        );
    }
    assert_eq!(
        clocks(&restored[0]).get(..clocks_before.len()),
        Some(&clocks_before[..]),
        "clock times restored"
    );
    second
        .wait_for_stderr("restored", Duration::from_secs(10))
        .expect("restore logged");

    poll(Duration::from_secs(240), || {
        chain.is_finished().then_some(())
    })
    .unwrap_or_else(|| panic!("games did not finish:\n{}", second.stderr_so_far()));
    for (i, serial) in serials.iter().enumerate() {
        let done = poll(Duration::from_secs(15), || {
            let s = read_status(&second_status)?;
            let b = board(&s, serial)?.clone();
            (moves(&b) == OPENINGS[i]).then_some(b)
        });
        let b = done.unwrap_or_else(|| {
            let s = read_status(&second_status).unwrap_or_default();
            panic!(
                "{serial}: {:?}\n{}",
                board(&s, serial).map(moves),
                second.stderr_so_far()
            )
        });
        // Each move made while the daemon ran has its clock time; the board without a
        // clock has none.
        let times = clocks(&b);
        if i == 0 {
            assert!(times.len() > clocks_before.len(), "{}", b["game"]["pgn"]);
        } else {
            assert!(times.is_empty(), "{}", b["game"]["pgn"]);
        }
    }
    let journals: Vec<String> = std::fs::read_dir(&journal)
        .expect("journal dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        journals.contains(&"bus-board-01025.journal".to_string()),
        "{journals:?}"
    );
    // Each board's rests were heard and journalled (`h` records, after the line's
    // checksum and time), as a single board's are: a restart knows the last move read
    // whole was no slide cut off.
    for serial in serials {
        let text = std::fs::read_to_string(journal.join(format!("bus-board-{serial}.journal")))
            .expect("bus journal");
        assert!(
            text.lines()
                .any(|line| line.split_whitespace().nth(2) == Some("h")),
            "{serial}: no rest heard in its journal"
        );
        // The board's time goes on from the restart (`r`) as the daemon found it again:
        // the time taken to find it on the line does not count twice in the time it
        // went unread (its first input follows at once, not a ping window later).
        let time = |line: &str| -> Option<u64> { line.split(' ').nth(1)?.parse().ok() };
        let records: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        let restart = records
            .iter()
            .position(|l| l.split(' ').nth(2) == Some("r"))
            .expect("a restart record");
        let gap = time(records[restart + 1]).zip(time(records[restart]));
        assert!(
            gap.is_some_and(|(next, r)| next - r < 1_000_000),
            "{serial}: {:?}",
            &records[restart..restart + 2]
        );
    }
    assert!(!second.stderr_so_far().contains("panicked"));
}

/// The SAN moves of each board's section in `boardcast replay`'s output of a bus
/// recording, by serial number.
fn replayed_boards(output: &str) -> Vec<(String, Vec<String>)> {
    output
        .split("% bus board ")
        .skip(1)
        .map(|section| {
            let (serial, pgn) = section.split_once('\n').expect("serial line");
            (serial.to_string(), sans(pgn))
        })
        .collect()
}

fn single_board(serial: &str, moves: &[&str], plug: Plug) -> boardcast_simulator::PtyBoard {
    let config = SimConfig {
        seed: 41,
        speed: 2.0,
        identity: Some(Identity {
            serial: serial.into(),
            ..Identity::new(false)
        }),
        ..SimConfig::default()
    };
    let script = Script::from_fen_and_san(None, moves).expect("script");
    match plug.link {
        Some(_) => spawn_on_pty_with(config, Source::Script(script), plug),
        None => spawn_on_pty(config, Source::Script(script)),
    }
    .expect("board")
}

#[test]
fn bus_port_and_auto_boards_share_one_numbering_and_the_bus_recording_replays() {
    let dir = scratch("bus-mixed");
    let chain = chain_of(&["01025", "01026"], &[]);
    let by_port = single_board("30001", &OPENINGS[0][..8], Plug::default());
    let plugged = single_board(
        "30002",
        &OPENINGS[1][..8],
        Plug {
            link: Some(dir.join("dgt-auto")),
            ..Plug::default()
        },
    );
    let config = dir.join("round.toml");
    let mut toml = String::from("event = \"Bus Open\"\nround = \"7\"\n");
    for n in 1..=4 {
        toml.push_str(&format!("[[board]]\nwhite = \"W{n}\"\n"));
    }
    std::fs::write(&config, toml).expect("config");
    let recordings = dir.join("rec");
    let status = dir.join("status.json");
    let mut cmd = boardcast();
    cmd.args(["run", "--no-http", "--auto", "--status-file"])
        .arg(&status)
        .arg("--config")
        .arg(&config)
        .arg("--record")
        .arg(&recordings)
        .args(["--silence-timeout", "4"])
        .arg("--scan")
        .arg(dir.join("dgt-*"))
        .arg("--port")
        .arg(by_port.path())
        .arg("--bus")
        .arg(chain.path());
    let mut daemon = Running::start(cmd);

    // Four boards from one allocator: the --port board is 1, the others 2 to 4 in the
    // order they were found, each once; each is tagged with its own number.
    let numbered = poll(Duration::from_secs(30), || {
        let s = read_status(&status)?;
        let boards = s["boards"].as_array()?.clone();
        let tagged = boards.len() == 4
            && boards.iter().all(|b| {
                let id = b["id"].as_u64().unwrap_or(0);
                let pgn = b["game"]["pgn"].as_str().unwrap_or_default();
                pgn.contains(&format!("[Round \"7.{id}\"]"))
                    && pgn.contains(&format!("[White \"W{id}\"]"))
                    && pgn.contains("[Event \"Bus Open\"]")
            });
        tagged.then_some(boards)
    })
    .unwrap_or_else(|| panic!("{:?}\n{}", read_status(&status), daemon.stderr_so_far()));
    let ids: Vec<u64> = numbered.iter().filter_map(|b| b["id"].as_u64()).collect();
    assert_eq!(ids, [1, 2, 3, 4]);
    assert_eq!(numbered[0]["serial"], "30001");
    let mut serials: Vec<&str> = numbered[1..]
        .iter()
        .filter_map(|b| b["serial"].as_str())
        .collect();
    serials.sort_unstable();
    assert_eq!(serials, ["01025", "01026", "30002"]);

    poll(Duration::from_secs(240), || {
        (chain.is_finished() && by_port.is_finished() && plugged.is_finished()).then_some(())
    })
    .unwrap_or_else(|| panic!("games did not finish:\n{}", daemon.stderr_so_far()));
    let live = poll(Duration::from_secs(15), || {
        let s = read_status(&status)?;
        let all: Vec<Vec<String>> = ["30001", "30002", "01025", "01026"]
            .iter()
            .map(|serial| board(&s, serial).map(moves))
            .collect::<Option<_>>()?;
        (all[0] == OPENINGS[0][..8]
            && all[1] == OPENINGS[1][..8]
            && all[2] == OPENINGS[0]
            && all[3] == OPENINGS[1])
            .then_some(all)
    });
    assert!(
        live.is_some(),
        "{:?}\n{}",
        read_status(&status),
        daemon.stderr_so_far()
    );
    drop(daemon);

    // One recording for the bus line (besides one per single board); its replay gives
    // each bus board's game, in the order the boards were found.
    let bus_recordings: Vec<PathBuf> = std::fs::read_dir(&recordings)
        .expect("recordings")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("bus-"))
        })
        .collect();
    assert_eq!(bus_recordings.len(), 1, "{bus_recordings:?}");
    // It keeps the session timing the line ran with, for the replay's session.
    let recorded = std::fs::read_to_string(&bus_recordings[0]).expect("bus recording");
    assert!(
        recorded
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("# link silence-timeout-ms 4000 ")),
        "{:?}",
        recorded.lines().take(2).collect::<Vec<_>>()
    );
    let output = boardcast()
        .arg("replay")
        .arg(&bus_recordings[0])
        .output()
        .expect("replay runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).expect("utf-8");
    let want: Vec<(String, Vec<String>)> = [("01025", 0), ("01026", 1)]
        .iter()
        .map(|(serial, i)| (serial.to_string(), OPENINGS[*i].map(String::from).to_vec()))
        .collect();
    assert_eq!(replayed_boards(&text), want, "{text}");
}

#[test]
fn bus_boards_listed_by_serial_in_the_config_take_their_numbers_and_players() {
    let dir = scratch("bus-config");
    let chain = chain_of(&["01025", "01026", "01027"], &[]);
    let config = dir.join("round.toml");
    // Board 1 is the second on the chain; board 2 is written without leading zeros.
    std::fs::write(
        &config,
        "round = \"5\"\n[[board]]\nserial = \"01026\"\nwhite = \"Ann\"\n\
         [[board]]\nserial = \"1025\"\nwhite = \"Bob\"\n",
    )
    .expect("config");
    let status = dir.join("status.json");
    let scan = dir.join("none-*");
    let mut daemon = run_bus(
        &chain,
        &status,
        &[
            "--config".as_ref(),
            config.as_os_str(),
            "--scan".as_ref(),
            scan.as_os_str(),
        ],
    );
    let placed = poll(Duration::from_secs(30), || {
        let s = read_status(&status)?;
        let boards = s["boards"].as_array()?.clone();
        let tags = |i: usize, white: &str| {
            let pgn = boards[i]["game"]["pgn"].as_str().unwrap_or_default();
            pgn.contains(&format!("[Round \"5.{}\"]", i + 1))
                && pgn.contains(&format!("[White \"{white}\"]"))
        };
        let responding = boards.iter().all(|b| b["connection"] == "responding");
        (boards.len() == 3 && tags(0, "Ann") && tags(1, "Bob") && tags(2, "?") && responding)
            .then_some(boards)
    })
    .unwrap_or_else(|| panic!("{:?}\n{}", read_status(&status), daemon.stderr_so_far()));
    let serials: Vec<&str> = placed.iter().filter_map(|b| b["serial"].as_str()).collect();
    assert_eq!(serials, ["01026", "01025", "01027"]);
    chain.stop();
}

#[test]
fn a_bus_board_switched_on_late_is_tagged_from_the_round_as_it_stands() {
    let dir = scratch("bus-late");
    let mut configs = configs_of(&["01025", "01026", "01027"], &[]);
    configs[2].switched_on_at = Some(Duration::from_secs(3));
    let chain = spawn_bus_on_pty(configs).expect("simulated chain");
    let status = dir.join("status.json");
    let bus = chain.path().display().to_string();
    let status_arg = status.display().to_string();
    let mut daemon = Daemon::start(&[], &["--bus", &bus, "--status-file", &status_arg]);
    let round_tag = |id: usize| {
        let s = read_status(&status)?;
        let pgn = s["boards"].as_array()?.get(id - 1)?["game"]["pgn"]
            .as_str()?
            .to_string();
        let start = pgn.find("[Round \"")? + 8;
        Some(pgn[start..].split('"').next()?.to_string())
    };
    poll(Duration::from_secs(20), || {
        (round_tag(1)? == "1.1" && round_tag(2)? == "1.2").then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "{:?}\n{}",
            read_status(&status),
            daemon.running.stderr_so_far()
        )
    });
    // The arbiter corrects the round before the third board is switched on.
    let (code, body) = send_json(
        "PUT",
        &format!("{}/api/round", daemon.base),
        Some(TOKEN),
        &serde_json::json!({"round": "9"}),
    );
    assert_eq!(code, 200, "{body}");
    let late = poll(Duration::from_secs(30), || {
        let s = read_status(&status)?;
        let third = s["boards"].as_array()?.get(2)?.clone();
        (third["serial"] == "01027" && round_tag(3)? == "9.3").then_some(())
    });
    assert!(
        late.is_some(),
        "board 3 tagged {:?}\n{}",
        round_tag(3),
        daemon.running.stderr_so_far()
    );
    assert_eq!(round_tag(1).as_deref(), Some("9.1"));
}
