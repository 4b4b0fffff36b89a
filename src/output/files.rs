//! `--pgn-dir`: the round's games as files relays already read (the layout of DGT
//! LiveChess output): `games.pgn` with every board's current game in board order, and
//! `game-N.pgn` for board N. Each file is rewritten atomically (temp file + rename) when
//! it changes, so a reader never sees half a file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::hub::Hub;

/// Keeps the files in `dir` current until the hub goes away.
pub async fn keep_pgn_dir(hub: Arc<Hub>, dir: PathBuf) {
    let mut changes = hub.pgn_changes();
    let mut written: HashMap<PathBuf, String> = HashMap::new();
    loop {
        let games = hub.round_games();
        let mut files: Vec<(PathBuf, String)> = games
            .iter()
            .enumerate()
            .map(|(i, game)| (dir.join(format!("game-{}.pgn", i + 1)), game.clone()))
            .collect();
        files.push((dir.join("games.pgn"), games.concat()));
        files.retain(|(path, text)| written.get(path) != Some(text));
        let target = dir.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            std::fs::create_dir_all(&target)?;
            for (path, text) in &files {
                write_atomically(path, text)?;
            }
            Ok::<_, std::io::Error>(files)
        })
        .await;
        match outcome {
            Ok(Ok(files)) => written.extend(files),
            Ok(Err(e)) => tracing::error!(dir = %dir.display(), "cannot write PGN files: {e}"),
            Err(e) => tracing::error!("PGN file writer failed: {e}"),
        }
        if changes.changed().await.is_err() {
            return;
        }
    }
}

/// Writes `text` to `path` through a temporary file in the same directory and a rename.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
