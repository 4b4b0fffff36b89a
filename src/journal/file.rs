//! A board's journal file: finding it, reading it back (cutting off a torn tail), and
//! appending to it.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use nix::fcntl::{Flock, FlockArg};

use super::format::{self, Entry, HEADER};

/// Why a journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Reading, creating or writing the file failed.
    #[error("journal {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// Another process (a second daemon) has the journal open.
    #[error(
        "{path} is in use by another process; is another boardcast running with this --journal directory?"
    )]
    Busy {
        /// The file.
        path: PathBuf,
    },
    /// The file exists but is something else; it is left alone.
    #[error(
        "{path} exists and is not a boardcast journal; move it away or choose another --journal directory"
    )]
    Foreign {
        /// The file.
        path: PathBuf,
    },
}

/// An open journal, positioned at its end.
#[derive(Debug)]
pub struct JournalFile {
    /// Locked for this process while open: two daemons appending would interleave.
    file: Flock<File>,
    path: PathBuf,
}

/// A journal opened for a board: the file to append to and what it held.
#[derive(Debug)]
pub struct Opened {
    /// The file, ready for appending.
    pub file: JournalFile,
    /// How many good records it held (each was handed to the caller as it was read).
    pub records: usize,
    /// How long ago it was last written to (zero for a new file).
    pub idle: Duration,
}

/// The journal's file name for board `id` on `port`: the board number and the port path
/// with everything but letters and digits turned into `-`, so that the same board on the
/// same port finds its journal again and two boards never share one.
pub fn file_name(id: usize, port: &Path) -> String {
    let mut name = String::new();
    for c in port.to_string_lossy().chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_end_matches('-');
    format!("board-{id}-{name}.journal")
}

/// Opens (or creates) board `id`'s journal in `dir` and reads it back, handing each good
/// record to `each`, oldest first. A damaged end is cut off so appending goes on from the
/// last good record; if good records followed the damage, the whole file is first copied
/// next to it (`….damaged-MILLIS`) so nothing is destroyed.
pub fn open(
    dir: &Path,
    id: usize,
    port: &Path,
    each: impl FnMut(Entry),
) -> Result<Opened, JournalError> {
    open_named(dir, &file_name(id, port), each)
}

/// Opens (or creates) the journal `name` in `dir`, as [`open`] does: for a board whose
/// journal is found by something other than its number and port (a bus board's, by its
/// serial number).
pub fn open_named(dir: &Path, name: &str, each: impl FnMut(Entry)) -> Result<Opened, JournalError> {
    let path = dir.join(name);
    let io_error = |source| JournalError::Io {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io_error)?;
    let existed = path.exists();
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(io_error)?;
    let mut file = Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map_err(|_| JournalError::Busy { path: path.clone() })?;
    let idle = if existed {
        let modified = file.metadata().and_then(|m| m.modified());
        modified
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .unwrap_or_default()
    } else {
        Duration::ZERO
    };
    // A torn header is a file that was being created; anything else is not ours.
    let header = format!("{HEADER}\n");
    let mut reader = BufReader::new(File::open(&path).map_err(io_error)?);
    let mut start = Vec::new();
    (&mut reader)
        .take(header.len() as u64)
        .read_to_end(&mut start)
        .map_err(io_error)?;
    if !header.as_bytes().starts_with(&start) {
        return Err(JournalError::Foreign { path });
    }
    reader.rewind().map_err(io_error)?;
    let scanned = format::scan(reader, each).map_err(io_error)?;
    let mut good_len = scanned.len;
    if let Some(damage) = &scanned.damage {
        good_len = damage.offset;
        if damage.records_after > 0 {
            let stamp = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0);
            let copy = path.with_extension(format!("journal.damaged-{stamp}"));
            std::fs::copy(&path, &copy).map_err(io_error)?;
            tracing::error!(
                journal = %path.display(),
                "line {}: {}; {} later records cannot be replayed and are dropped (the whole file is kept as {})",
                damage.line,
                damage.reason,
                damage.records_after,
                copy.display()
            );
        } else {
            tracing::warn!(
                journal = %path.display(),
                "line {}: {}; ignoring the incomplete end ({} bytes) and appending after the last good record",
                damage.line,
                damage.reason,
                scanned.len - damage.offset
            );
        }
    }
    if good_len < scanned.len {
        file.set_len(good_len as u64).map_err(io_error)?;
    }
    if good_len < header.len() {
        file.set_len(0).map_err(io_error)?;
        file.write_all(header.as_bytes()).map_err(io_error)?;
        file.sync_all().map_err(io_error)?;
        // The new file's name must survive a power loss too.
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_error)?;
    } else if good_len < scanned.len {
        file.sync_all().map_err(io_error)?;
    }
    Ok(Opened {
        file: JournalFile { file, path },
        records: scanned.records,
        idle,
    })
}

impl JournalFile {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record. It is handed to the OS at once (one write), so a crash of the
    /// daemon loses nothing; only `sync` makes it survive a power loss.
    pub fn append(&mut self, entry: &Entry) -> io::Result<()> {
        self.file.write_all(format::encode(entry).as_bytes())
    }

    /// Appends a comment line (`#` first), which a replay skips.
    pub fn append_comment(&mut self, comment: &str) -> io::Result<()> {
        debug_assert!(comment.starts_with('#') && !comment.contains('\n'));
        self.file.write_all(format!("{comment}\n").as_bytes())
    }

    /// Makes everything appended so far durable.
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::format::Record;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("boardcast-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// Opens a journal and collects the records it held.
    fn open_all(dir: &Path, id: usize, port: &Path) -> Result<(Opened, Vec<Entry>), JournalError> {
        let mut entries = Vec::new();
        let opened = open(dir, id, port, |entry| entries.push(entry))?;
        assert_eq!(opened.records, entries.len());
        Ok((opened, entries))
    }

    fn tick(ms: u64) -> Entry {
        Entry {
            at: Duration::from_millis(ms),
            record: Record::Tick,
        }
    }

    #[test]
    fn names_are_safe_and_distinct() {
        assert_eq!(
            file_name(1, Path::new("/dev/ttyACM0")),
            "board-1-dev-ttyACM0.journal"
        );
        assert_eq!(
            file_name(12, Path::new("/dev/serial/by-id/usb-DGT_e-Board_3.1-if00")),
            "board-12-dev-serial-by-id-usb-DGT-e-Board-3-1-if00.journal"
        );
        assert_ne!(
            file_name(1, Path::new("/dev/pts/3")),
            file_name(2, Path::new("/dev/pts/3"))
        );
    }

    #[test]
    fn appends_survive_reopening_and_a_torn_tail_is_cut_off() {
        let dir = scratch("reopen");
        let port = Path::new("/dev/pts/9");
        let (mut opened, entries) = open_all(&dir, 1, port).expect("new journal");
        assert!(entries.is_empty());
        opened.file.append(&tick(5)).unwrap();
        opened.file.append(&tick(6)).unwrap();
        opened.file.sync().unwrap();
        let path = opened.file.path().to_path_buf();
        drop(opened);
        // Power loss in the middle of the next record.
        let torn = format::encode(&tick(7));
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&torn.as_bytes()[..torn.len() / 2]).unwrap();
        drop(file);

        let (mut opened, entries) = open_all(&dir, 1, port).expect("reopened");
        assert_eq!(entries, vec![tick(5), tick(6)]);
        opened.file.append(&tick(8)).unwrap();
        drop(opened);
        let (_, entries) = open_all(&dir, 1, port).expect("reopened again");
        assert_eq!(entries, vec![tick(5), tick(6), tick(8)]);
        let copies = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(copies, 1, "a torn tail needs no copy");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn damage_in_the_middle_keeps_a_copy() {
        let dir = scratch("middle");
        let port = Path::new("/dev/pts/9");
        let (mut opened, _) = open_all(&dir, 2, port).expect("new journal");
        for ms in 1..=3 {
            opened.file.append(&tick(ms)).unwrap();
        }
        let path = opened.file.path().to_path_buf();
        drop(opened);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replacen(" 2000 t", " 2000 x", 1)).unwrap();
        let (_, entries) = open_all(&dir, 2, port).expect("reopened");
        assert_eq!(entries, vec![tick(1)]);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            2,
            "damaged copy kept"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_journal_in_use_is_refused() {
        let dir = scratch("busy");
        let port = Path::new("/dev/pts/9");
        let first = open_all(&dir, 4, port).expect("first");
        assert!(matches!(
            open_all(&dir, 4, port),
            Err(JournalError::Busy { .. })
        ));
        drop(first);
        open_all(&dir, 4, port).expect("free again");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_foreign_file_is_left_alone() {
        let dir = scratch("foreign");
        std::fs::create_dir_all(&dir).unwrap();
        let port = Path::new("/dev/pts/9");
        let path = dir.join(file_name(3, port));
        std::fs::write(&path, "precious\n").unwrap();
        assert!(matches!(
            open_all(&dir, 3, port),
            Err(JournalError::Foreign { .. })
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious\n");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
