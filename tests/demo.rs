//! README's first command: the demo plays the bundled game on a simulated board and the
//! terminal shows the board and the game as it is played.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::harness::{Running, boardcast};

#[test]
fn the_demo_shows_the_live_game() {
    let mut cmd = boardcast();
    cmd.args(["demo", "--plain", "--no-http", "--speed", "2"])
        .stdout(Stdio::piped());
    let mut demo = Running::start(cmd);
    let stdout = demo.child.stdout.take().expect("stdout");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut tags, mut board, mut moves) = (false, false, false);
    while !(tags && board && moves) && Instant::now() < deadline {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(1)) else {
            continue;
        };
        tags |= line.contains(r#"[White "Abdusattorov,Nodirbek"]"#);
        board |= line.trim_start().starts_with("8  r n b q k b n r");
        moves |= line.starts_with("1. e4 c5 2. Nf3");
    }
    assert!(
        tags && board && moves,
        "tags {tags}, board {board}, moves {moves}\n{}",
        demo.stderr_so_far()
    );
    assert!(demo.is_running());
}
