//! Stored recordings of hard cases replay to the game the live daemon recorded: each
//! directory under `tests/data/recordings` is a case (adding one adds a case), holding
//! the raw traffic of one daemon run (`connection-N.rec`, one per connection to the
//! board) and the movetext it gave (`expected.pgn`). Unlike the scenario scripts, these
//! go through the byte decoder and the link's losses as `boardcast replay` runs them.
//!
//! The recordings are made by the real daemon against the simulated board, never edited
//! by hand; `recording_cases.rs` makes them again (see tests/data/recordings/README.md).

use std::path::{Path, PathBuf};

use crate::harness::boardcast;

/// Where the cases are.
pub const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/recordings");
/// A case's expected movetext, in its directory.
pub const EXPECTED: &str = "expected.pgn";

/// The files of `dir` ending in `.rec`, in name order: for a case, its connections in the
/// order they were made; for a daemon's `--record` directory, the same (the names carry
/// the time each was started).
pub fn recordings_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rec"))
        .collect();
    files.sort();
    files
}

/// `boardcast replay FILES`, which must succeed: the PGN it prints.
pub fn replay(files: &[PathBuf]) -> String {
    let output = boardcast()
        .arg("replay")
        .args(files)
        .output()
        .expect("replay runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "replay of {files:?} failed:\n{stderr}"
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

/// The movetext of every game in `pgn`: the moves, their remarks and the result, without
/// the tag pairs (they say nothing about what the board was read as).
pub fn movetext(pgn: &str) -> String {
    pgn.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('['))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every case directory, by name.
fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(CASES)
        .expect("tests/data/recordings")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// What is wrong with one case, if anything: its replay differs from its expected
/// movetext, or two replays differ from each other (a replay must be deterministic).
fn check(case: &Path) -> Option<String> {
    let name = case.file_name().expect("name").to_string_lossy();
    let files = recordings_in(case);
    if files.is_empty() {
        return Some(format!("{name}: no .rec file"));
    }
    let expected = std::fs::read_to_string(case.join(EXPECTED))
        .unwrap_or_else(|e| panic!("{name}/{EXPECTED}: {e}"));
    let expected = movetext(&expected);
    let first = movetext(&replay(&files));
    let second = movetext(&replay(&files));
    if first != second {
        return Some(format!(
            "{name}: two replays differ\n--- first\n{first}\n--- second\n{second}"
        ));
    }
    (first != expected).then(|| {
        format!("{name}: replay differs from {EXPECTED}\n--- expected\n{expected}\n--- replayed\n{first}")
    })
}

#[test]
fn every_stored_recording_replays_to_its_game() {
    let cases = cases();
    assert!(!cases.is_empty(), "no case under {CASES}");
    // Every case is checked before failing, so one run shows every case that broke.
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c)).collect();
    assert!(
        failures.is_empty(),
        "{} of {} recordings:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
