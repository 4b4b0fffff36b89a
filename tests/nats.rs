//! NATS end to end: real nats-server (Debian's package) with JetStream, real daemons
//! (`run --nats`) on simulated boards, and a relay (`boardcast relay`) started late:
//! subjects and the stream's last PGN per board, the relay's API, PGN and SSE, two
//! bridges feeding one relay, and a NATS outage in the middle of a game.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use async_nats::jetstream;

use crate::harness::{Running, boardcast, poll, scratch};
use crate::http_harness::{Daemon, Sim, TOKEN, is_move, sans, send_json};

const WAIT: Duration = Duration::from_secs(30);

/// A nats-server with JetStream on a loopback port, storing in `store`.
struct NatsServer {
    _running: Running,
    port: u16,
}

impl NatsServer {
    fn start(store: &Path, port: u16) -> NatsServer {
        NatsServer::start_with(store, port, &[])
    }

    /// Like `start`, with more nats-server options (e.g. `--auth TOKEN`).
    fn start_with(store: &Path, port: u16, extra: &[&str]) -> NatsServer {
        let binary = ["/usr/sbin/nats-server", "/usr/bin/nats-server"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap_or("nats-server");
        let mut cmd = Command::new(binary);
        cmd.args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(store)
            .args(extra);
        let mut running = Running::start(cmd);
        running
            .wait_for_stderr("Server is ready", WAIT)
            .unwrap_or_else(|| panic!("nats-server did not start:\n{}", running.stderr_so_far()));
        NatsServer {
            _running: running,
            port,
        }
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

fn relay(url: &str) -> Daemon {
    Daemon::attach(Running::start(relay_command(url, &[], "info")))
}

/// `boardcast relay --nats URL` with `env` set and `RUST_LOG` at `log`.
fn relay_command(url: &str, env: &[(&str, &str)], log: &str) -> Command {
    let mut cmd = boardcast();
    cmd.env("RUST_LOG", log).envs(env.iter().copied()).args([
        "relay",
        "--nats",
        url,
        "--http",
        "127.0.0.1:0",
    ]);
    cmd
}

/// A bridge for the board at `port`, publishing to `url` with `env` set, logging
/// everything.
fn tracing_bridge(port: &str, url: &str, env: &[(&str, &str)]) -> Daemon {
    let mut cmd = boardcast();
    cmd.env("RUST_LOG", "trace")
        .envs(env.iter().copied())
        .args(["run", "--http", "127.0.0.1:0", "--token", TOKEN])
        .args(["--port", port, "--nats", url]);
    Daemon::attach(Running::start(cmd))
}

/// The last message the stream keeps on `subject`, as text.
fn last_in_stream(url: &str, subject: &str) -> Option<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let client = async_nats::connect(url).await.ok()?;
        let stream = jetstream::new(client).get_stream("BOARDCAST").await.ok()?;
        let message = stream.get_last_raw_message_by_subject(subject).await.ok()?;
        String::from_utf8(message.payload.to_vec()).ok()
    })
}

fn config(dir: &Path, event: &str) -> PathBuf {
    let path = dir.join(format!("{}.toml", event.len()));
    std::fs::write(
        &path,
        format!("event = \"{event}\"\nround = \"5\"\n\n[[board]]\nwhite = \"Alpha, Ann\"\n"),
    )
    .expect("config");
    path
}

/// A bridge for one board, numbered `first` in the round of `config`.
fn bridge(sim: &Sim, nats: &NatsServer, config: &Path, first: &str) -> Daemon {
    Daemon::start(
        &[&sim.path],
        &[
            "--nats",
            &nats.url(),
            "--nats-first-board",
            first,
            "--config",
            &config.display().to_string(),
        ],
    )
}

fn move_on_board(event: &serde_json::Value, board: u64, ply: u64) -> bool {
    is_move(event, ply) && event["board"] == board
}

#[test]
fn relays_behind_a_load_balancer_agree_on_board_numbers_and_event_ids() {
    let dir = scratch("nats-two-relays");
    let nats = NatsServer::start(&dir.join("store"), free_port());
    let config = config(&dir, "Hall");
    let mut sims = [Sim::stepped(5), Sim::stepped(6)];
    // Board 2's bridge comes first: the early relay sees board 2 before board 1.
    let mut second = bridge(&sims[1], &nats, &config, "2");
    let moves2 = vec![sims[1].step()];
    second.wait_json("/api/boards/1", WAIT, |b| sans(b) == moves2);
    let mut early = relay(&nats.url());
    early.wait_json("/api/boards/2", WAIT, |b| sans(b) == moves2);
    let mut first = bridge(&sims[0], &nats, &config, "1");
    let mut moves1 = vec![sims[0].step()];
    first.wait_json("/api/boards/1", WAIT, |b| sans(b) == moves1);
    let mut late = relay(&nats.url());
    for relay in [&mut early, &mut late] {
        let boards = relay.wait_json("/api/boards", WAIT, |b| {
            b.as_array()
                .is_some_and(|a| a.len() == 2 && sans(&a[0]) == moves1 && sans(&a[1]) == moves2)
        });
        assert_eq!(boards[0]["serial"], first.json("/api/boards/1")["serial"]);
        assert_eq!(boards[1]["serial"], second.json("/api/boards/1")["serial"]);
    }

    // The next move has the same event id on both relays.
    let streams = [
        early.sse("/api/events", None),
        late.sse("/api/events", None),
    ];
    moves1.push(sims[0].step());
    let ids: Vec<u64> = streams
        .iter()
        .map(|stream| {
            stream
                .until(WAIT, |e| move_on_board(e, 1, 2))
                .last()
                .unwrap()
                .0
        })
        .collect();
    assert_eq!(ids[0], ids[1], "the same move, different ids");

    // A client that saw it on the early relay resumes on the late one with exactly what
    // followed on the early one: no snapshot, same events, same ids.
    moves1.push(sims[0].step());
    let on_early: Vec<u64> = streams[0]
        .until(WAIT, |e| move_on_board(e, 1, 3))
        .iter()
        .map(|(id, _)| *id)
        .collect();
    let resumed = late.sse("/api/events", Some(ids[0]));
    let on_late = resumed.until(WAIT, |e| move_on_board(e, 1, 3));
    assert!(
        on_late.iter().all(|(_, e)| e["type"] != "snapshot"),
        "{on_late:?}"
    );
    let on_late: Vec<u64> = on_late.iter().map(|(id, _)| *id).collect();
    assert_eq!(on_late, on_early);
    for relay in [&mut early, &mut late] {
        assert!(!relay.running.stderr_so_far().contains("panicked"));
    }
}

#[test]
fn a_late_relay_serves_two_bridges_from_nats() {
    let dir = scratch("nats-relay");
    let nats = NatsServer::start(&dir.join("store"), free_port());
    let config = config(&dir, "Test Open");
    let mut sims = [Sim::stepped(3), Sim::stepped(4)];
    // Two bridges, one board each: the second is board 2 of the same round.
    let mut bridges = [
        Daemon::start(
            &[&sims[0].path],
            &[
                "--nats",
                &nats.url(),
                "--config",
                &config.display().to_string(),
            ],
        ),
        Daemon::start(
            &[&sims[1].path],
            &[
                "--nats",
                &nats.url(),
                "--nats-first-board",
                "2",
                "--config",
                &config.display().to_string(),
            ],
        ),
    ];
    let mut played = vec![Vec::new(), Vec::new()];
    for _ in 0..3 {
        for (sim, moves) in sims.iter_mut().zip(&mut played) {
            moves.push(sim.step());
        }
    }
    for (bridge, moves) in bridges.iter_mut().zip(&played) {
        bridge.wait_json("/api/boards/1", WAIT, |b| sans(b) == *moves);
    }

    // The stream keeps each board's current PGN under its subject (the event name's
    // space mapped to %20).
    for (number, bridge) in [(1, &bridges[0]), (2, &bridges[1])] {
        let subject = format!("boardcast.Test%20Open.5.{number}.pgn");
        let pgn = bridge.get("/api/boards/1/pgn").2;
        poll(WAIT, || {
            (last_in_stream(&nats.url(), &subject)? == pgn).then_some(())
        })
        .unwrap_or_else(|| panic!("{subject} never held the PGN:\n{pgn}"));
    }

    // A relay started now gets the state at once, in board order.
    let mut relay = relay(&nats.url());
    let boards = relay.wait_json("/api/boards", WAIT, |b| {
        b.as_array().is_some_and(|a| a.len() == 2)
    });
    assert_eq!(sans(&boards[0]), played[0], "{boards}");
    assert_eq!(sans(&boards[1]), played[1], "{boards}");
    assert_eq!(boards[0]["id"], 1);
    assert_eq!(boards[1]["id"], 2);
    assert_eq!(boards[0]["white"], "Alpha, Ann");
    assert_eq!(boards[0]["round"], "5.1");
    let (status, kind, pgn) = relay.get("/api/boards/1/pgn");
    assert_eq!((status, kind.as_str()), (200, "application/x-chess-pgn"));
    assert_eq!(pgn, bridges[0].get("/api/boards/1/pgn").2);
    let round = relay.get("/games.pgn").2;
    let expected = format!(
        "{}{}",
        bridges[0].get("/games.pgn").2,
        bridges[1].get("/games.pgn").2
    );
    assert_eq!(round, expected);

    // Live: the relay's SSE carries the next moves of both bridges.
    let stream = relay.sse("/api/events", None);
    let (_, snapshot) = stream.next(WAIT).expect("snapshot");
    assert_eq!(snapshot["type"], "snapshot", "{snapshot}");
    let next = sims[1].step();
    let events = stream.until(WAIT, |e| is_move(e, 4));
    let (_, event) = events.last().expect("event");
    assert_eq!(event["board"], 2, "{event}");
    assert_eq!(event["san"], next.as_str());
    assert_eq!(event["state"]["moves"].as_array().map(Vec::len), Some(4));

    // The relay is read-only: game data belongs to the bridge.
    let url = format!("{}/api/boards/1/result", relay.base);
    let (status, body) = send_json(
        "POST",
        &url,
        Some("any"),
        &serde_json::json!({"result": "1-0"}),
    );
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("relay"), "{body}");
    assert!(!relay.running.stderr_so_far().contains("panicked"));
}

#[test]
fn a_nats_outage_loses_nothing() {
    let dir = scratch("nats-outage");
    let store = dir.join("store");
    let port = free_port();
    let nats = NatsServer::start(&store, port);
    let url = nats.url();
    let mut sim = Sim::stepped(5);
    let mut bridge = Daemon::start(&[&sim.path], &["--nats", &url]);
    let mut relay = relay(&url);
    let mut played = Vec::new();
    for _ in 0..2 {
        played.push(sim.step());
    }
    relay.wait_json("/api/boards", WAIT, |b| {
        b.as_array().is_some_and(|a| a.len() == 1) && sans(&b[0]) == played
    });

    // NATS goes away mid-game: the board keeps recording.
    drop(nats);
    for _ in 0..3 {
        played.push(sim.step());
    }
    bridge.wait_json("/api/boards/1", WAIT, |b| sans(b) == played);
    assert!(bridge.running.is_running());

    // Back on the same port and store: the bridge republishes, the relay catches up.
    let nats = NatsServer::start(&store, port);
    relay.wait_json("/api/boards/1", WAIT, |b| sans(b) == played);
    let pgn = bridge.get("/api/boards/1/pgn").2;
    assert_eq!(relay.get("/api/boards/1/pgn").2, pgn);
    // The default event "?" is %3F in the subject.
    let subject = "boardcast.%3F.1.1.pgn";
    poll(WAIT, || {
        (last_in_stream(&nats.url(), subject)? == pgn).then_some(())
    })
    .unwrap_or_else(|| panic!("{subject} never held the PGN after the outage"));
    // And it goes on live.
    played.push(sim.step());
    relay.wait_json("/api/boards/1", WAIT, |b| sans(b) == played);
    assert!(
        bridge
            .running
            .wait_for_stderr("NATS: disconnected", Duration::from_secs(1))
            .is_some()
    );
}

/// A `--nats` URL that can never work (unparsable, a scheme NATS does not speak, no
/// host) stops `run` and `relay` at once with an error naming the flag (exit code 2,
/// as for any bad option); a valid URL whose server is not up yet is waited for: the
/// board records meanwhile and everything is published once the server comes.
#[test]
fn a_bad_nats_url_stops_at_start_and_a_missing_server_is_waited_for() {
    for url in [
        "http://127.0.0.1:4222",
        "nats://127.0.0.1:99999",
        "nats://exa mple:4222",
        "nats://",
        "nats://127.0.0.1:4222,",
        "ws://127.0.0.1:4222",
    ] {
        for command in [
            &["run", "--port", "/dev/null", "--nats", url][..],
            &["relay", "--nats", url][..],
        ] {
            let mut cmd = boardcast();
            cmd.args(command);
            let mut running = Running::start(cmd);
            let code = running.wait_exit(WAIT);
            let stderr = running.stderr_so_far();
            assert_eq!(code, Some(2), "{command:?}: {stderr}");
            assert!(stderr.contains("--nats"), "{command:?}: {stderr}");
        }
    }

    let dir = scratch("nats-late");
    let port = free_port();
    let url = format!("nats://127.0.0.1:{port}");
    let mut sim = Sim::stepped(5);
    // Two addresses, the first of them never up: either will do.
    let both = format!("nats://127.0.0.1:{},{url}", free_port());
    let mut bridge = Daemon::start(&[&sim.path], &["--nats", &both]);
    let played = vec![sim.step(), sim.step()];
    bridge.wait_json("/api/boards/1", WAIT, |b| sans(b) == played);
    assert!(bridge.running.is_running());
    let nats = NatsServer::start(&dir.join("store"), port);
    let pgn = bridge.get("/api/boards/1/pgn").2;
    let subject = "boardcast.%3F.1.1.pgn";
    poll(WAIT, || {
        (last_in_stream(&nats.url(), subject)? == pgn).then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "{subject} never held the PGN once the server came:\n{}",
            bridge.running.stderr_so_far()
        )
    });
}

/// NATS credentials typed on `run`'s command line with no `--nats` server are a usage
/// error naming the option, not silently ignored; in the environment they are left for
/// whatever needs them (here the run goes on to its port, which is no serial device).
#[test]
fn nats_credentials_without_a_server_are_refused_on_the_command_line() {
    let run = ["run", "--port", "/dev/null", "--no-http"];
    for (flags, named) in [
        (&["--nats-token", "t"][..], "--nats-token"),
        (
            &["--nats-user", "u", "--nats-password", "p"][..],
            "--nats-user",
        ),
    ] {
        let mut cmd = boardcast();
        cmd.args(run).args(flags);
        let mut running = Running::start(cmd);
        let code = running.wait_exit(WAIT);
        let stderr = running.stderr_so_far();
        assert_eq!(code, Some(2), "{flags:?}: {stderr}");
        let message = format!("{named} is only used with --nats");
        assert!(stderr.contains(&message), "{flags:?}: {stderr}");
    }
    let mut cmd = boardcast();
    cmd.args(run).env("BOARDCAST_NATS_TOKEN", "t");
    let mut running = Running::start(cmd);
    let code = running.wait_exit(WAIT);
    let stderr = running.stderr_so_far();
    assert_eq!(code, Some(5), "{stderr}");
    assert!(!stderr.contains("only used with --nats"), "{stderr}");
}

/// Every way to give NATS credentials works against a server that requires them, for
/// bridge and relay alike (a move reaches the relay), and with everything logged
/// (`RUST_LOG=trace`, async-nats included) the secret never reaches either log: a
/// password in the URL (percent-encoded, as URLs need) and in the environment, a token
/// in the URL and in the environment.
#[test]
fn nats_credentials_log_in_and_never_reach_the_log() {
    const PASSWORD: &str = "pw-Secret:42@x";
    const PASSWORD_IN_URL: &str = "pw-Secret%3A42%40x";
    const TOKEN_SECRET: &str = "tok-Secret-0123456789";
    let secrets = [PASSWORD, PASSWORD_IN_URL, TOKEN_SECRET];
    let dir = scratch("nats-credentials");
    log_in_quietly(
        &dir.join("user"),
        &["--user", "bridge", "--pass", PASSWORD],
        |port| Login {
            bridge_url: format!("nats://127.0.0.1:{port}"),
            bridge_env: vec![
                ("BOARDCAST_NATS_USER", "bridge"),
                ("BOARDCAST_NATS_PASSWORD", PASSWORD),
            ],
            relay_url: format!("nats://bridge:{PASSWORD_IN_URL}@127.0.0.1:{port}"),
            relay_env: vec![],
        },
        &secrets,
    );
    log_in_quietly(
        &dir.join("token"),
        &["--auth", TOKEN_SECRET],
        |port| Login {
            bridge_url: format!("nats://{TOKEN_SECRET}@127.0.0.1:{port}"),
            bridge_env: vec![],
            relay_url: format!("nats://127.0.0.1:{port}"),
            relay_env: vec![("BOARDCAST_NATS_TOKEN", TOKEN_SECRET)],
        },
        &secrets,
    );
}

/// How a bridge and a relay are told to log in to NATS.
struct Login {
    bridge_url: String,
    bridge_env: Vec<(&'static str, &'static str)>,
    relay_url: String,
    relay_env: Vec<(&'static str, &'static str)>,
}

/// Starts a nats-server storing in `store` with `server_args` and a bridge and relay
/// logging in as `login` says for the server's port; a move reaches the relay, and
/// neither log holds any of `secrets`.
fn log_in_quietly(
    store: &Path,
    server_args: &[&str],
    login: impl Fn(u16) -> Login,
    secrets: &[&str],
) {
    let port = free_port();
    let _nats = NatsServer::start_with(store, port, server_args);
    let login = login(port);
    let mut sim = Sim::stepped(5);
    let mut bridge = tracing_bridge(&sim.path, &login.bridge_url, &login.bridge_env);
    let relay_command = relay_command(&login.relay_url, &login.relay_env, "trace");
    let mut relay = Daemon::attach(Running::start(relay_command));
    let played = vec![sim.step()];
    relay.wait_json("/api/boards", WAIT, |b| {
        b.as_array().is_some_and(|a| a.len() == 1) && sans(&b[0]) == played
    });
    for (name, running) in [
        ("bridge", &mut bridge.running),
        ("relay", &mut relay.running),
    ] {
        let log = running.stderr_so_far();
        assert!(log.contains("TRACE"), "{name}: the log runs at trace level");
        for secret in secrets {
            assert!(!log.contains(secret), "{name}: {secret} in the log:\n{log}");
        }
    }
}

/// Wrong credentials: the bridge says so in its log and keeps recording (async-nats
/// retries), the relay stops with an error naming the server; neither shows the
/// secret or panics.
#[test]
fn wrong_nats_credentials_are_reported_without_the_secret() {
    const WRONG: &str = "wrong-Secret-9876";
    let dir = scratch("nats-wrong-credentials");
    let nats = NatsServer::start_with(&dir.join("store"), free_port(), &["--auth", "right"]);
    let mut sim = Sim::stepped(5);
    let mut bridge = tracing_bridge(&sim.path, &nats.url(), &[("BOARDCAST_NATS_TOKEN", WRONG)]);
    bridge
        .running
        .wait_for_stderr("authorization violation; retrying", WAIT)
        .unwrap_or_else(|| panic!("no error logged:\n{}", bridge.running.stderr_so_far()));
    let played = vec![sim.step()];
    bridge.wait_json("/api/boards/1", WAIT, |b| sans(b) == played);
    let log = bridge.running.stderr_so_far();
    assert!(!log.contains(WRONG) && !log.contains("panicked"), "{log}");

    let url = format!("nats://user:{WRONG}@127.0.0.1:{}", nats.port);
    let mut relay = Running::start(relay_command(&url, &[], "trace"));
    assert_eq!(relay.wait_exit(WAIT), Some(1));
    let log = relay.stderr_so_far();
    let shown = format!("boardcast: NATS nats://***@127.0.0.1:{}: ", nats.port);
    assert!(
        log.contains(&shown) && log.contains("authorization violation"),
        "{log}"
    );
    assert!(!log.contains(WRONG) && !log.contains("panicked"), "{log}");
}
