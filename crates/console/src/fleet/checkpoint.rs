//! The fleet database's checkpoints, on a thread of their own.
//!
//! In WAL mode SQLite copies the log back into the database (a checkpoint) from the connection
//! whose commit took the log past 1,000 pages, inside that commit, and syncs the file. A refresh
//! or a scan, which commits a batch of pages at a time, paid for every checkpoint of what it
//! wrote while it wrote: at a million states a refresh after 1 % changed spent half of its 1.1 to
//! 1.2 s there (copying the same interior pages again at each checkpoint, and waiting on the
//! disk's sync), a full scan 1 to 2 s of its 12 (issue 19). Here the writing connection's
//! commits only tell a [`Checkpointer`] how long the log is, and a connection of its own copies
//! it back while the writer goes on: `PASSIVE`, so it never waits for, or holds up, a reader or
//! the writer. Past a longer log the writer checkpoints as well (what the thread has not yet
//! copied), so that the log starts again from its beginning and stays bounded. The last
//! connection closed checkpoints what is left, as SQLite does.

use std::ffi::{c_char, c_int, c_void};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use rusqlite::{ffi, Connection};

/// The log's length, in pages, past which a commit asks for a checkpoint: SQLite's own default.
const PAGES: c_int = 1000;

/// The log's length past which the writer's commit checkpoints as well, as SQLite's does. The
/// log starts again from its beginning only when a write begins with all of it copied back,
/// which a writer that never pauses (a scan) never lets the thread see: a scan of 330k states
/// grew it to 135 MiB, more than the database. The thread has copied most of it by then, so the
/// writer's share is what came since. 16,000 pages (62.5 MiB): at a million states a refresh
/// after 1 % changed writes about 15,000, and a limit of 4,000 gave back most of what the
/// thread saves it; a full scan of a million peaked at 78 MiB of log (14 MiB before).
const WRITER_PAGES: c_int = 16 * PAGES;

#[derive(Default)]
struct State {
    /// A commit left the log past [`PAGES`] since the last checkpoint began.
    asked: bool,
    stop: bool,
    /// Checkpoints run (tests).
    done: u64,
    /// Tests hold the checkpoints back to see that the writer no longer does them.
    #[cfg(test)]
    held: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// [`WRITER_PAGES`], unless a test set a shorter limit.
    writer_pages: c_int,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The thread that checkpoints one database file, and the hook that asks it to.
pub(super) struct Checkpointer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// The writing connection's handle, and the hook's strong count of `shared`.
    hooked: (*mut ffi::sqlite3, *const Shared),
}

// The raw pointers are only handed back to SQLite (to unhook) and to `Arc::from_raw`, from
// whichever thread drops the checkpointer: the connection they belong to is behind a mutex.
unsafe impl Send for Checkpointer {}
unsafe impl Sync for Checkpointer {}

/// Called by SQLite after each commit of the hooked connection, with the log's length in pages:
/// wakes the thread, and past [`WRITER_PAGES`] checkpoints too (inside the writer's commit, as
/// SQLite's own hook does; a checkpoint the thread is running makes it return at once, and the
/// next commit tries again).
unsafe extern "C" fn committed(arg: *mut c_void, db: *mut ffi::sqlite3, _name: *const c_char, pages: c_int) -> c_int {
    // SAFETY: `arg` is the strong count `start_with` leaked, released only once unhooked.
    let shared = unsafe { &*(arg as *const Shared) };
    if pages >= PAGES {
        shared.state().asked = true;
        shared.wake.notify_one();
    }
    if pages >= shared.writer_pages {
        // SAFETY: `db` is the connection committing, open for the call's length.
        let rc = unsafe {
            ffi::sqlite3_wal_checkpoint_v2(
                db,
                std::ptr::null(),
                ffi::SQLITE_CHECKPOINT_PASSIVE,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK && rc != ffi::SQLITE_BUSY {
            tracing::warn!("the fleet database's checkpoint failed: {}", ffi::code_to_str(rc));
        }
    }
    ffi::SQLITE_OK
}

impl Checkpointer {
    /// Starts the thread, with a connection of its own to the database at `path`, and makes
    /// `conn`'s commits ask it instead of checkpointing themselves (a WAL hook replaces SQLite's
    /// automatic checkpoints). `conn` must outlive the checkpointer: it is unhooked when dropped.
    pub(super) fn start(path: &Path, conn: &Connection) -> super::Result<Checkpointer> {
        Self::start_with(path, conn, WRITER_PAGES)
    }

    fn start_with(path: &Path, conn: &Connection, writer_pages: c_int) -> super::Result<Checkpointer> {
        let own = Connection::open(path)?;
        let shared = Arc::new(Shared { writer_pages, ..Default::default() });
        let on_thread = shared.clone();
        let thread =
            std::thread::Builder::new()
                .name("fleet-checkpoint".into())
                .spawn(move || run(&own, &on_thread))
                .map_err(|e| super::FleetError::Internal(format!("the fleet database's checkpoint thread: {e}")))?;
        let arg = Arc::into_raw(shared.clone());
        // SAFETY: the handle is valid while `conn` is open, which outlives this checkpointer
        // (FleetDb drops it first); `arg` stays valid until `drop` takes it back.
        let db = unsafe {
            let db = conn.handle();
            ffi::sqlite3_wal_hook(db, Some(committed), arg as *mut c_void);
            db
        };
        Ok(Checkpointer { shared, thread: Some(thread), hooked: (db, arg) })
    }

    /// Checkpoints run so far.
    #[cfg(test)]
    fn done(&self) -> u64 {
        self.shared.state().done
    }

    #[cfg(test)]
    fn hold(&self, held: bool) {
        self.shared.state().held = held;
        self.shared.wake.notify_one();
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        let (db, arg) = self.hooked;
        // SAFETY: `db` is still open (see `start_with`); once unhooked SQLite no longer holds
        // `arg`, so its strong count can be released.
        unsafe {
            ffi::sqlite3_wal_hook(db, None, std::ptr::null_mut());
            drop(Arc::from_raw(arg));
        }
        self.shared.state().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread: a `PASSIVE` checkpoint each time a commit asked for one, until stopped. A
/// checkpoint that fails (the disk full) is asked again by the next commit, and what it left is
/// checkpointed by the last connection to close.
fn run(conn: &Connection, shared: &Shared) {
    loop {
        {
            let mut state = shared.state();
            loop {
                #[cfg(test)]
                let ready = state.asked && !state.held;
                #[cfg(not(test))]
                let ready = state.asked;
                if state.stop {
                    return;
                }
                if ready {
                    break;
                }
                state = shared.wake.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            state.asked = false;
        }
        if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!("the fleet database's checkpoint failed: {e}");
        }
        shared.state().done += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The database's size in pages as its file says (the header's bytes 28 to 31): what has
    /// been checkpointed into it, not what the log holds.
    fn pages_in_file(path: &Path) -> u32 {
        let bytes = std::fs::read(path).unwrap();
        u32::from_be_bytes(bytes[28..32].try_into().unwrap())
    }

    fn open(path: &Path) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch("CREATE TABLE t (x BLOB)").unwrap();
        conn
    }

    /// Commits of 400 pages of 4 KiB each, `batches` times.
    fn write(conn: &Connection, batches: usize) {
        for _ in 0..batches {
            conn.execute_batch(
                "BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
                 INSERT INTO t SELECT randomblob(3000) FROM n; COMMIT;",
            )
            .unwrap();
        }
    }

    fn until(what: &str, mut done: impl FnMut() -> bool) {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !done() {
            assert!(std::time::Instant::now() < end, "{what} did not happen within 20 s");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    #[test]
    fn the_writers_commits_leave_the_checkpoints_to_the_checkpointers_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.sqlite");
        // Without the checkpointer, the commit that takes the log past 1,000 pages checkpoints it.
        {
            let conn = open(&path);
            write(&conn, 3);
            assert!(pages_in_file(&path) > PAGES as u32, "SQLite's own writer checkpoints");
        }
        std::fs::remove_file(&path).unwrap();
        let conn = open(&path);
        let checkpointer = Checkpointer::start(&path, &conn).unwrap();
        checkpointer.hold(true);
        let before = pages_in_file(&path);
        write(&conn, 3);
        assert_eq!(pages_in_file(&path), before, "the writer's commits checkpointed nothing");
        let rows: i64 = conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 1200, "what the log holds is read as written");
        checkpointer.hold(false);
        until("the checkpoint", || checkpointer.done() >= 1);
        assert!(pages_in_file(&path) > PAGES as u32, "the thread copied the log back");
        drop(checkpointer);
        drop(conn);
        assert!(!dir.path().join("fleet.sqlite-wal").exists(), "the last connection closed checkpointed the rest");
        let conn = Connection::open(&path).unwrap();
        let rows: i64 = conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 1200);
    }

    #[test]
    fn past_its_limit_the_log_is_checkpointed_by_the_writer_too_and_starts_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.sqlite");
        let conn = open(&path);
        // A shorter limit than the database's, for a short test.
        let limit = 4 * PAGES;
        let checkpointer = Checkpointer::start_with(&path, &conn, limit).unwrap();
        checkpointer.hold(true);
        let wal = dir.path().join("fleet.sqlite-wal");
        let mut longest = 0;
        for _ in 0..30 {
            write(&conn, 1);
            longest = longest.max(std::fs::metadata(&wal).unwrap().len());
        }
        assert!(pages_in_file(&path) > limit as u32, "the writer checkpointed past the limit");
        // A frame is a page and its 24-byte header; the log starts again after the first
        // checkpoint past the limit, so it never holds much more than the limit and a commit.
        let frames = longest / (4096 + 24);
        assert!(frames < (limit + 2 * 400) as u64, "the log grew to {frames} pages");
        assert_eq!(checkpointer.done(), 0, "the thread was held");
    }
}
