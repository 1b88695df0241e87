//! One process per database file. SQLite lets several processes share a file, but the kit's
//! start-up recovery ends the tasks a previous process left running, so a second process on
//! the same file would fail the first one's live tasks. A store therefore holds an exclusive
//! advisory lock on `FILE-lock` for as long as it lives; every store of one process on one
//! file shares it, and a store of another process is refused at open with a clear error.
//! Several processes on one database is what the PostgreSQL store is for.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use fs4::{FileExt, TryLockError};

use super::super::StoreError;

/// The lock on one database file, held while any store of this process has it open.
pub(super) struct ProcessLock {
    /// Closing the file releases the lock.
    _file: File,
}

/// The locks this process holds, by database file.
fn held() -> &'static Mutex<HashMap<PathBuf, Weak<ProcessLock>>> {
    static HELD: std::sync::OnceLock<Mutex<HashMap<PathBuf, Weak<ProcessLock>>>> =
        std::sync::OnceLock::new();
    HELD.get_or_init(Mutex::default)
}

/// The database file as one path whichever way it was named (the file may not exist yet).
fn canonical(db: &Path) -> PathBuf {
    let dir = match db.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    match db.file_name() {
        Some(name) => dir.join(name),
        None => dir,
    }
}

/// Lock `db` for this process (or share this process's lock on it).
pub(super) fn lock(db: &Path) -> Result<Arc<ProcessLock>, StoreError> {
    let db = canonical(db);
    let mut held = held().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(lock) = held.get(&db).and_then(Weak::upgrade) {
        return Ok(lock);
    }
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push("-lock");
    let path = db.with_file_name(name);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| {
            StoreError::Backend(format!(
                "could not open the lock file {}: {e}",
                path.display()
            ))
        })?;
    // Through the trait: newer toolchains' inherent `File::try_lock` would shadow it.
    match FileExt::try_lock(&file) {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            return Err(StoreError::Backend(format!(
                "the SQLite store {} {} (it holds {}): a SQLite file serves one process; stop \
                 the other one, give this one its own file, or use a store made for several \
                 processes (PostgreSQL)",
                db.display(),
                crate::store::SQLITE_IN_USE,
                path.display()
            )));
        }
        Err(TryLockError::Error(e)) => {
            return Err(StoreError::Backend(format!(
                "could not lock {}: {e}",
                path.display()
            )));
        }
    }
    let lock = Arc::new(ProcessLock { _file: file });
    held.retain(|_, l| l.strong_count() > 0);
    held.insert(db, Arc::downgrade(&lock));
    Ok(lock)
}
