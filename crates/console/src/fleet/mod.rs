//! The fleet as the rollout dashboard sees it: every firmware state of a scope (a profile's
//! service, acting as itself or for one customer) copied into a local SQLite database, refreshed
//! incrementally, summarised per module, kept as history over time, and rollouts in waves run
//! on top of it.
//!
//! - [`FleetDb`]: the database file (in the app's data folder) and its schema;
//! - [`scan`]: the full scan and the incremental refresh, page by page, with progress and
//!   cancellation, and what the service was seen to support for it (else full scans, said so);
//! - [`query`]: the overview of a module, the device table (filter, sort, windows of rows, CSV)
//!   and the history timeline;
//! - [`compare`]: two moments of a module's history compared, device by device;
//! - [`rollout`]: plans in waves with success and error thresholds, and the step that moves them.

mod checkpoint;
pub mod compare;
mod first_counts;
pub mod query;
pub mod rollout;
pub mod scan;
pub mod service;
pub(crate) mod states;
pub mod stuck;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

/// Errors of the fleet database and of the work above it: the console's one error (the old
/// name stays for callers).
pub type FleetError = crate::Error;

pub type Result<T> = std::result::Result<T, FleetError>;

/// Where a fleet was seen: the profile, the service's address and the customer acted for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScopeKey {
    pub profile: String,
    pub base_url: String,
    pub customer: Option<Uuid>,
}

/// Who runs an embedded simulator, whose scope is named by its seed instead of its address (it
/// listens on a new port every start): the app's (its data lives on between runs) and `dcs`'s
/// in-process one (it lives only as long as the command), kept apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddedBy {
    App,
    Cli,
}

impl EmbeddedBy {
    fn prefix(self) -> &'static str {
        match self {
            EmbeddedBy::App => "builtin-simulator:seed-",
            EmbeddedBy::Cli => "cli-embedded-simulator:seed-",
        }
    }
}

impl ScopeKey {
    /// The scope of `profile` at `base_url`, acting for `customer` (`None`: as itself).
    pub fn new(profile: &str, base_url: &str, customer: Option<Uuid>) -> ScopeKey {
        ScopeKey { profile: profile.to_owned(), base_url: base_url.to_owned(), customer }
    }

    /// The scope of an embedded simulator of `seed`, run by `by`.
    pub fn embedded(profile: &str, by: EmbeddedBy, seed: u64, customer: Option<Uuid>) -> ScopeKey {
        ScopeKey::new(profile, &format!("{}{seed}", by.prefix()), customer)
    }

    /// Whether this is the scope of a simulator run by `by`.
    pub fn is_embedded(&self, by: EmbeddedBy) -> bool {
        self.base_url.starts_with(by.prefix())
    }

    /// The scope as one string: the database's key, and the key of what is kept per scope in memory.
    pub fn key(&self) -> String {
        format!("{}|{}|{}", self.profile, self.base_url, self.customer.map(|c| c.to_string()).unwrap_or_default())
    }
}

/// The status key of a state that never had a target (no `firmwareUpdateStatus`).
pub const NO_STATUS: &str = "none";

/// States kept per device and module in the history (states.rs trims the older ones): what
/// the device page shows and how far back a comparison of two moments can see.
pub const HISTORY_KEPT: usize = 50;

/// One scope's row id in the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scope(pub i64);

/// What the database knows of a scope's scans.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ScopeInfo {
    /// States held.
    pub states: u32,
    /// When the last full scan finished (this computer's clock, RFC 3339).
    pub last_full_scan: Option<String>,
    /// When the last refresh (full or incremental) finished.
    pub last_refresh: Option<String>,
    /// The service time the next incremental refresh asks from (`modifiedSince`).
    pub watermark: Option<String>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS scopes (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    profile TEXT NOT NULL,
    base_url TEXT NOT NULL,
    customer TEXT,
    watermark INTEGER,
    last_full_at INTEGER,
    last_refresh_at INTEGER,
    since_support TEXT,
    since_checked_at INTEGER,
    sort_support TEXT,
    sort_checked_at INTEGER
);
CREATE TABLE IF NOT EXISTS states (
    scope INTEGER NOT NULL,
    module_id TEXT NOT NULL,
    device_id TEXT NOT NULL,
    spec_id TEXT,
    client_id TEXT,
    project_id TEXT,
    current TEXT,
    target TEXT,
    target_at INTEGER,
    status TEXT,
    details TEXT,
    status_at INTEGER,
    -- When this console first saw the state (this computer's clock, ms; absent: before it kept this).
    seen_at INTEGER,
    PRIMARY KEY (scope, module_id, device_id)
) WITHOUT ROWID;
-- The device table's orders: DEVICE_ORDER_INDEX and SORT_INDEXES (the module's order walks the
-- primary key a module at a time). Failed states by reason, for the latest failure of each
-- reason (a partial index: only failed states pay for it).
CREATE INDEX IF NOT EXISTS states_failed ON states (scope, module_id, details, target, status_at)
    WHERE status = 'FAILED';
CREATE TABLE IF NOT EXISTS modules (
    scope INTEGER NOT NULL,
    module_id TEXT NOT NULL,
    name TEXT NOT NULL,
    spec_id TEXT,
    PRIMARY KEY (scope, module_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS specs (
    scope INTEGER NOT NULL,
    spec_id TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (scope, spec_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS packages (
    scope INTEGER NOT NULL,
    module_id TEXT NOT NULL,
    version TEXT NOT NULL,
    has_file INTEGER NOT NULL,
    PRIMARY KEY (scope, module_id, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS snapshots (
    scope INTEGER NOT NULL,
    module_id TEXT NOT NULL,
    taken_at INTEGER NOT NULL,
    counts TEXT NOT NULL,
    PRIMARY KEY (scope, module_id, taken_at)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rollouts (
    id TEXT PRIMARY KEY,
    scope INTEGER NOT NULL,
    module_id TEXT NOT NULL,
    version TEXT NOT NULL,
    waves TEXT NOT NULL,
    success_threshold REAL NOT NULL,
    error_threshold REAL NOT NULL,
    selection TEXT NOT NULL,
    state TEXT NOT NULL,
    reason TEXT,
    current_wave INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS rollout_devices (
    rollout TEXT NOT NULL,
    device_id TEXT NOT NULL,
    wave INTEGER NOT NULL,
    previous_target TEXT,
    sending_at INTEGER,
    set_at INTEGER,
    error TEXT,
    PRIMARY KEY (rollout, device_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rollout_devices_by_device ON rollout_devices (device_id);
-- What a device's state was before each change this console saw (the device page's history):
-- the state it left, with when the console saw it leave (`left_at`, this computer's clock, ms).
-- Kept by the writer of states (states.rs) in the transaction that writes the change; the newest
-- 50 per device and module are kept (HISTORY_KEPT), newest by `id` (two changes may share a
-- millisecond). A device the service no longer lists loses its history with its state.
CREATE TABLE IF NOT EXISTS state_history (
    id INTEGER PRIMARY KEY,
    scope INTEGER NOT NULL,
    device_id TEXT NOT NULL,
    module_id TEXT NOT NULL,
    left_at INTEGER NOT NULL,
    current TEXT,
    target TEXT,
    status TEXT,
    details TEXT,
    status_at INTEGER,
    target_at INTEGER
);
CREATE INDEX IF NOT EXISTS state_history_by_device ON state_history (scope, device_id, module_id, id);
-- The devices of the scope's last comparison of two moments (compare.rs), what the device
-- table filters by when a cell of it is opened.
CREATE TABLE IF NOT EXISTS compared (
    scope INTEGER NOT NULL,
    module_id TEXT NOT NULL,
    device_id TEXT NOT NULL,
    from_status TEXT NOT NULL,
    to_status TEXT NOT NULL,
    movement TEXT NOT NULL,
    PRIMARY KEY (scope, module_id, device_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rollout_events (
    rollout TEXT NOT NULL,
    at INTEGER NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rollout_events_at ON rollout_events (rollout, at);
-- Who moves each rollout on (rollout/lease.rs): one driver at a time, its lease's expiry (this
-- computer's clock, ms) and the fencing number every target it sends is recorded with.
CREATE TABLE IF NOT EXISTS rollout_leases (
    rollout TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    kind TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    fence INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    renewed_at INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL,
    last_step_at INTEGER
) WITHOUT ROWID;
";

/// The states counted per scope, module and group of values, kept by the one writer of states
/// (states.rs) in the transaction that writes them (so a crash loses both or neither): what the
/// dashboard's aggregates read instead of every state. Two groupings ([`COUNTED`]), so that
/// writing a state moves two counts: `g` by current version (k1), target (k2), status (k3) and,
/// for failed states, details (k4); `o` by specification (k1) and owner (k2, client_id). A value
/// absent is kept as an empty blob `x''` (never equal to a text, so a version literally called
/// "none" stays apart); a count that falls to zero is deleted (its trigger).
///
/// Triggers on `states` kept them, and the history, until issue 19: at a million states the
/// counts' took a third of an incremental refresh's time after 1 % changed (two to four upserts
/// per state), and any trigger makes SQLite keep each statement's pages in a statement journal;
/// the writer's own tally is one upsert per count moved per batch.
const COUNTS_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS state_counts (
    scope INTEGER NOT NULL,
    module_id TEXT NOT NULL,
    dim TEXT NOT NULL,
    k1 NOT NULL,
    k2 NOT NULL,
    k3 NOT NULL,
    k4 NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (scope, dim, module_id, k1, k2, k3, k4)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS state_counts_zero AFTER UPDATE OF n ON state_counts WHEN new.n = 0 BEGIN
    DELETE FROM state_counts WHERE scope = new.scope AND module_id = new.module_id AND dim = new.dim
        AND k1 = new.k1 AND k2 = new.k2 AND k3 = new.k3 AND k4 = new.k4;
END;
";

/// The groupings counted: (dim, k1..k4), `{r}` standing for the row (`s` in a recount); states.rs
/// (Tally) computes the same keys from a state's columns.
const COUNTED: &[(&str, [&str; 4])] = &[
    (
        "g",
        [
            "COALESCE({r}.current, x'')",
            "COALESCE({r}.target, x'')",
            "COALESCE({r}.status, x'')",
            "CASE WHEN {r}.status = 'FAILED' THEN COALESCE({r}.details, x'') ELSE '' END",
        ],
    ),
    ("o", ["COALESCE({r}.spec_id, x'')", "COALESCE({r}.client_id, x'')", "''", "''"]),
];

/// The device table's orders by a column: one index per sortable column, each ending in the
/// device and module so that a window is a keyset range of one index in either direction (see
/// query::rows). The status time's index holds the status last: the table filtered by a status
/// (as the dashboard's cells open it) in the order of its time is read from the index alone, not
/// from the table row by row (a walk to the 146,000th of a million states: 2.0-2.5 s to 54-84 ms);
/// a status mostly changes with its time, which rewrites that entry anyway. The other indexes
/// leave it out: in them it would cost every status change three more index writes.
/// Made by [`ensure_index`] when an order or filter first needs one, not with the schema: every
/// index costs each written state a random insertion, and a first scan of a million states builds
/// only the indexes some screen has asked for. Name and columns.
const SORT_INDEXES: &[(&str, &str)] = &[
    ("states_by_current", "scope, current, device_id, module_id"),
    ("states_by_target", "scope, target, device_id, module_id"),
    ("states_by_status", "scope, status, device_id, module_id"),
    ("states_by_status_at", "scope, status_at, device_id, module_id, status"),
    ("states_by_target_at", "scope, target_at, device_id, module_id"),
];

/// The index of the device table's default order, made with the schema (a first scan drops it
/// until its end, as every other: scan::defer_indexes).
const DEVICE_ORDER_INDEX: (&str, &str) = ("states_device_order", "scope, device_id, module_id");

/// The statement that makes the index `name` on the states' `columns` if it is not there.
fn index_sql((name, columns): &(&str, &str)) -> String {
    format!("CREATE INDEX IF NOT EXISTS {name} ON states ({columns})")
}

/// Makes the device table's index `name` ([`SORT_INDEXES`], or the default order's) unless it is
/// there with its columns; one an older console made with other columns is made again. A window
/// asked for while a first scan has the indexes dropped (scan::defer_indexes) makes its index at
/// once; the scan then keeps that one up as it writes.
pub(crate) fn ensure_index(conn: &Connection, name: &str) -> rusqlite::Result<()> {
    let Some(index) = SORT_INDEXES.iter().chain([&DEVICE_ORDER_INDEX]).find(|(n, _)| *n == name) else {
        return Ok(());
    };
    let held: Option<String> = conn
        .prepare_cached("SELECT group_concat(name, ', ') FROM (SELECT name FROM pragma_index_info(?1) ORDER BY seqno)")?
        .query_row([name], |r| r.get(0))?;
    if held.as_deref() != Some(index.1) {
        if held.is_some() {
            conn.execute_batch(&format!("DROP INDEX {name}"))?;
        }
        conn.execute_batch(&index_sql(index))?;
    }
    Ok(())
}

/// Every count recounted from the states (GROUP BY): how `state_counts` is built for a database
/// made before it, and what tests compare it with.
pub(crate) fn recount_sql() -> String {
    COUNTED
        .iter()
        .map(|(dim, k)| {
            let k: Vec<String> = k.iter().map(|e| e.replace("{r}", "s")).collect();
            format!(
                "SELECT s.scope, s.module_id, '{dim}', {}, count(*) FROM states s GROUP BY 1, 2, 4, 5, 6, 7",
                k.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ")
}

/// The triggers on the states that kept the counts and the history before states.rs did (a
/// database made by an earlier console): dropped on open, what they kept kept.
const OLD_TRIGGERS: &[&str] = &[
    "state_counts_insert",
    "state_counts_delete",
    "state_counts_update",
    "state_history_update",
    "state_history_delete",
];

/// Creates the counts where missing or marked to be recounted ([`RECOUNT_PENDING`]), counting
/// the states already held, and drops the triggers that kept them and the history before
/// ([`OLD_TRIGGERS`]), in one transaction.
fn add_counts(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for name in OLD_TRIGGERS {
        tx.execute_batch(&format!("DROP TRIGGER IF EXISTS {name}"))?;
    }
    let present: bool =
        tx.query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'state_counts')", [], |r| r.get(0))?;
    let pending: bool =
        tx.query_row("SELECT EXISTS (SELECT 1 FROM settings WHERE key = ?1)", [RECOUNT_PENDING], |r| r.get(0))?;
    if !present || pending {
        tx.execute_batch(COUNTS_SCHEMA)?;
        tx.execute_batch(&format!(
            "DELETE FROM state_counts; INSERT INTO state_counts (scope, module_id, dim, k1, k2, k3, k4, n) {}",
            recount_sql()
        ))?;
        tx.execute("DELETE FROM settings WHERE key = ?1", [RECOUNT_PENDING])?;
    }
    tx.commit()
}

/// The setting that says the counts are to be recounted: a first scan, which inserts states
/// without counting them in `state_counts` (scan::defer_indexes), sets it as it begins and clears
/// it as it writes its own counts at its end; a database opened with it set (the scan crashed)
/// is recounted.
pub(crate) const RECOUNT_PENDING: &str = "counts.recount";

/// Columns added after a database may have been made without them: (table, column, type).
const ADDED_COLUMNS: &[(&str, &str, &str)] = &[
    ("scopes", "since_support", "TEXT"),
    ("scopes", "since_checked_at", "INTEGER"),
    ("scopes", "sort_support", "TEXT"),
    ("scopes", "sort_checked_at", "INTEGER"),
    ("rollout_devices", "sending_at", "INTEGER"),
    // The incremental refresh's overlap, measured in the service's clock (scan.rs).
    ("scopes", "overlap", "INTEGER"),
    // When a state was first seen (compare.rs: devices new since a moment).
    ("states", "seen_at", "INTEGER"),
    // Rollout schedules and approval between waves (rollout/schedule.rs, rollout/step.rs).
    ("rollouts", "schedule", "TEXT"),
    ("rollouts", "approval", "INTEGER"),
    ("rollouts", "approved_wave", "INTEGER"),
    ("rollouts", "hold", "TEXT"),
    ("rollouts", "wave_started_at", "INTEGER"),
    // A wave that stops moving is said (rollout/step.rs: the hang warning).
    ("rollouts", "hang_minutes", "INTEGER"),
    ("rollouts", "move_key", "TEXT"),
    ("rollouts", "last_move_at", "INTEGER"),
    ("rollouts", "hang", "TEXT"),
    // Retries of failed devices (rollout/retry.rs).
    ("rollouts", "retry", "TEXT"),
    ("rollout_devices", "retries", "INTEGER"),
    ("rollout_devices", "retry_due", "INTEGER"),
    ("rollout_devices", "retry_of", "INTEGER"),
    ("rollout_devices", "retried_at", "INTEGER"),
    ("rollout_devices", "retry_error", "TEXT"),
    ("rollout_devices", "last_failure", "TEXT"),
    // Devices that appear after the start (rollout/late.rs).
    ("rollouts", "late", "TEXT"),
    // The fencing number of the lease each target was sent under (rollout/lease.rs).
    ("rollout_devices", "sent_fence", "INTEGER"),
];

fn add_missing_columns(conn: &Connection) -> rusqlite::Result<()> {
    for (table, column, kind) in ADDED_COLUMNS {
        let present: bool = conn.query_row(
            "SELECT count(*) > 0 FROM pragma_table_info(?1) WHERE name = ?2",
            params![table, column],
            |r| r.get(0),
        )?;
        if !present {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
        }
    }
    Ok(())
}

/// The fleet database: one file, shared by every scope, used from one connection at a time.
pub struct FleetDb {
    /// Declared before `conn`, so dropped first: it is unhooked and its connection closed before
    /// `conn`, the last, closes and checkpoints what is left.
    _checkpointer: Option<checkpoint::Checkpointer>,
    conn: Mutex<Connection>,
    /// Scope ids by key, once looked up (asked on every command).
    scopes: Mutex<std::collections::HashMap<String, Scope>>,
    /// Positions of the device table's recent orders and filters (see query::rows).
    pub(crate) windows: Mutex<query::Positions>,
    /// Every count recounted at the end of a first scan, so far (scan::restore_indexes).
    pub(crate) recounts: std::sync::atomic::AtomicU64,
    path: Option<PathBuf>,
}

impl FleetDb {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<FleetDb> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| FleetError::Open { path: path.display().to_string(), reason: e.to_string() })?;
        }
        // Readable by this user only (SQLite gives its -wal and -shm files the same mode): it
        // holds the customers' fleets.
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let created = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path);
            if let Err(e) = created.as_ref().map(|_| ()) {
                if e.kind() != std::io::ErrorKind::AlreadyExists {
                    return Err(FleetError::Open { path: path.display().to_string(), reason: e.to_string() });
                }
            }
        }
        let conn = Connection::open(path)
            .map_err(|e| FleetError::Open { path: path.display().to_string(), reason: e.to_string() })?;
        Self::init(conn, Some(path.to_owned()))
    }

    /// How far apart the device table's positions lie at the least, and how many an order keeps
    /// at most (query::rows; 32 and 4,096 unless set): tests set them small to reach the
    /// positions' thinning with a few rows.
    #[doc(hidden)]
    pub fn set_positions_spacing(&self, every: u32, max_marks: usize) {
        self.windows.lock().unwrap_or_else(|p| p.into_inner()).respace(every.max(1), max_marks.max(2));
    }

    /// Runs `write` on the connection as bookkeeping: a write of nothing the device table reads
    /// (a scope's watermark and refresh times, the history's snapshots). The table's positions
    /// are kept across it (query::Positions), so a refresh that changed no state does not send
    /// the next deep window down its order again.
    pub(crate) fn bookkeeping<T>(&self, write: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let mut conn = self.conn();
        let before = conn.total_changes();
        let out = write(&mut conn);
        let written = conn.total_changes() - before;
        self.windows.lock().unwrap_or_else(|p| p.into_inner()).bookkeeping(written);
        out
    }

    /// How many first scans ended in a recount of every state (GROUP BY) rather than writing the
    /// counts they kept as they inserted (FirstCounts): what tests tell the two apart by.
    #[doc(hidden)]
    pub fn recounts(&self) -> u64 {
        self.recounts.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Rows the device table's walks for positions have stepped through so far (query::rows):
    /// what tests and the benchmark tell a walk's depth by.
    pub fn positions_walked(&self) -> u64 {
        self.windows.lock().unwrap_or_else(|p| p.into_inner()).stepped()
    }

    /// A database in memory (tests and benchmarks of the queries).
    pub fn in_memory() -> Result<FleetDb> {
        Self::init(Connection::open_in_memory()?, None)
    }

    fn init(conn: Connection, path: Option<PathBuf>) -> Result<FleetDb> {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // 16 MiB of page cache, and sorts that outgrow it (building an index at the end of a first
        // scan, an order without an index) spill to a temporary file, not to memory: at a million
        // states a first scan peaked at 196 MiB with 64 MiB of cache and its sorts in memory, at
        // 51 to 54 MiB this way, in the same time (issue 19; the OS's file cache keeps the
        // database's pages anyway).
        conn.pragma_update(None, "cache_size", -16384)?;
        conn.pragma_update(None, "temp_store", "FILE")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let mut conn = conn;
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(&index_sql(&DEVICE_ORDER_INDEX))?;
        add_missing_columns(&conn)?;
        add_counts(&mut conn)?;
        // A database in memory has no log to checkpoint.
        let checkpointer = path.as_deref().map(|path| checkpoint::Checkpointer::start(path, &conn)).transpose()?;
        Ok(FleetDb {
            _checkpointer: checkpointer,
            conn: Mutex::new(conn),
            scopes: Default::default(),
            windows: Default::default(),
            recounts: Default::default(),
            path,
        })
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The database's figures for a diagnostics bundle: its size, and each scope's profile,
    /// service, customer, counts and refresh times (no device's state, id or name).
    pub fn figures(&self) -> Result<serde_json::Value> {
        let conn = self.conn();
        let pragma = |name: &str| conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0));
        let (pages, page_size, free) = (pragma("page_count")?, pragma("page_size")?, pragma("freelist_count")?);
        let mut stmt = conn.prepare(
            "SELECT s.id, s.profile, s.base_url, s.customer, s.last_full_at, s.last_refresh_at, s.watermark,
                    s.since_support, s.sort_support,
                    (SELECT count(*) FROM states WHERE scope = s.id), (SELECT count(*) FROM rollouts WHERE scope = s.id)
             FROM scopes s ORDER BY s.id",
        )?;
        let scopes = stmt
            .query_map([], |r| {
                Ok(serde_json::json!({
                    "id": r.get::<_, i64>(0)?,
                    "profile": r.get::<_, String>(1)?,
                    "baseUrl": r.get::<_, String>(2)?,
                    "customer": r.get::<_, Option<String>>(3)?,
                    "lastFullAt": r.get::<_, Option<i64>>(4)?.map(ms_to_text),
                    "lastRefreshAt": r.get::<_, Option<i64>>(5)?.map(ms_to_text),
                    "watermark": r.get::<_, Option<i64>>(6)?.map(ms_to_text),
                    "modifiedSince": r.get::<_, Option<String>>(7)?,
                    "modifiedAtSort": r.get::<_, Option<String>>(8)?,
                    "states": r.get::<_, i64>(9)?,
                    "rollouts": r.get::<_, i64>(10)?,
                }))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(serde_json::json!({
            "path": self.path,
            "bytes": pages * page_size,
            "freeBytes": free * page_size,
            "scopes": scopes,
        }))
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Which version of the data `conn` sees: changes when this connection writes anything
    /// (its total of changed rows) or another connection commits (`data_version`). What the
    /// table's positions are kept against.
    pub(crate) fn generation(conn: &Connection) -> Result<(u64, i64)> {
        let other: i64 = conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
        Ok((conn.total_changes(), other))
    }

    /// Where the maintained counts differ from a recount of the states (empty when they agree):
    /// `scope module dim k1 k2 k3 k4 n` lines, `+` held only in the counts, `-` only in the recount.
    pub fn counts_differences(&self) -> Result<Vec<String>> {
        let conn = self.conn();
        let recount = recount_sql();
        let sql = format!(
            "SELECT '+', * FROM (SELECT scope, module_id, dim, k1, k2, k3, k4, n FROM state_counts
                                  EXCEPT SELECT * FROM ({recount}))
             UNION ALL SELECT '-', * FROM (SELECT * FROM ({recount})
                                  EXCEPT SELECT scope, module_id, dim, k1, k2, k3, k4, n FROM state_counts)"
        );
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map([], |r| {
            let v: Vec<String> = (0..9)
                .map(|i| match r.get_ref(i) {
                    Ok(rusqlite::types::ValueRef::Text(t)) => String::from_utf8_lossy(t).into_owned(),
                    Ok(rusqlite::types::ValueRef::Integer(n)) => n.to_string(),
                    Ok(rusqlite::types::ValueRef::Blob(_)) => "NULL".into(),
                    _ => "?".into(),
                })
                .collect();
            Ok(v.join(" "))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A setting kept with the fleet (the refresh interval), if set.
    pub fn setting(&self, key: &str) -> Result<Option<String>> {
        Ok(self.conn().query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| r.get(0)).optional()?)
    }

    pub fn set_setting(&self, key: &str, value: &str) -> Result<()> {
        self.conn().execute(
            "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }

    /// The scope's row, created on first use.
    pub fn scope(&self, key: &ScopeKey) -> Result<Scope> {
        let text = key.key();
        if let Some(s) = self.scopes.lock().unwrap_or_else(|p| p.into_inner()).get(&text) {
            return Ok(*s);
        }
        let conn = self.conn();
        conn.execute(
            "INSERT INTO scopes (key, profile, base_url, customer) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (key) DO NOTHING",
            params![text, key.profile, key.base_url, key.customer.map(|c| c.to_string())],
        )?;
        let id = conn.query_row("SELECT id FROM scopes WHERE key = ?1", [&text], |r| r.get(0))?;
        self.scopes.lock().unwrap_or_else(|p| p.into_inner()).insert(text, Scope(id));
        Ok(Scope(id))
    }

    /// The scope's row if it exists (never creates one).
    pub fn find_scope(&self, key: &ScopeKey) -> Result<Option<Scope>> {
        if let Some(s) = self.scopes.lock().unwrap_or_else(|p| p.into_inner()).get(&key.key()) {
            return Ok(Some(*s));
        }
        let conn = self.conn();
        Ok(conn.query_row("SELECT id FROM scopes WHERE key = ?1", [key.key()], |r| r.get(0)).optional()?.map(Scope))
    }

    /// The scope's key again (to connect to it without the user, e.g. to go on with a rollout).
    pub fn scope_key(&self, scope: Scope) -> Result<Option<ScopeKey>> {
        let conn = self.conn();
        let row = conn
            .query_row("SELECT profile, base_url, customer FROM scopes WHERE id = ?1", [scope.0], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?))
            })
            .optional()?;
        Ok(row.map(|(profile, base_url, customer)| ScopeKey {
            profile,
            base_url,
            customer: customer.and_then(|c| c.parse().ok()),
        }))
    }

    pub fn scope_info(&self, scope: Scope) -> Result<ScopeInfo> {
        let states: i64 = self.conn().query_row(
            "SELECT COALESCE(sum(n), 0) FROM state_counts WHERE scope = ?1 AND dim = 'g'",
            [scope.0],
            |r| r.get(0),
        )?;
        self.scope_info_with(scope, states as u32)
    }

    /// [`FleetDb::scope_info`] with the number of states given (counting them reads every row).
    pub fn scope_info_with(&self, scope: Scope, states: u32) -> Result<ScopeInfo> {
        let (watermark, full, refresh): (Option<i64>, Option<i64>, Option<i64>) = self.conn().query_row(
            "SELECT watermark, last_full_at, last_refresh_at FROM scopes WHERE id = ?1",
            [scope.0],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        Ok(ScopeInfo {
            states,
            last_full_scan: full.map(ms_to_text),
            last_refresh: refresh.map(ms_to_text),
            watermark: watermark.map(ms_to_text),
        })
    }
}

/// Milliseconds since the epoch, as kept in the database.
pub fn to_ms(t: OffsetDateTime) -> i64 {
    (t.unix_timestamp_nanos() / 1_000_000) as i64
}

pub fn from_ms(ms: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

pub fn ms_to_text(ms: i64) -> String {
    dcs_api::model::timestamp::format_millis(from_ms(ms))
}

pub fn now_ms() -> i64 {
    to_ms(OffsetDateTime::now_utc())
}

/// A count with thousands separated by commas (12,345), as the console writes counts in words.
pub fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
