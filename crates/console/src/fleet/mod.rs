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
//! - [`rollout`]: plans in waves with success and error thresholds, and the step that moves them.

pub mod query;
pub mod rollout;
pub mod scan;
pub mod service;

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
    PRIMARY KEY (scope, module_id, device_id)
) WITHOUT ROWID;
-- One secondary index: the device table's default order over every module. The overview's
-- counts read one module's rows through the primary key; every extra index would cost each
-- of the 100,000 inserts of a first scan.
CREATE INDEX IF NOT EXISTS states_device_order ON states (scope, device_id, module_id);
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
";

/// Columns added after a database may have been made without them: (table, column, type).
const ADDED_COLUMNS: &[(&str, &str, &str)] = &[
    ("scopes", "since_support", "TEXT"),
    ("scopes", "since_checked_at", "INTEGER"),
    ("scopes", "sort_support", "TEXT"),
    ("scopes", "sort_checked_at", "INTEGER"),
    ("rollout_devices", "sending_at", "INTEGER"),
    // The incremental refresh's overlap, measured in the service's clock (scan.rs).
    ("scopes", "overlap", "INTEGER"),
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
    conn: Mutex<Connection>,
    /// Scope ids by key, once looked up (asked on every command).
    scopes: Mutex<std::collections::HashMap<String, Scope>>,
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

    /// A database in memory (tests and benchmarks of the queries).
    pub fn in_memory() -> Result<FleetDb> {
        Self::init(Connection::open_in_memory()?, None)
    }

    fn init(conn: Connection, path: Option<PathBuf>) -> Result<FleetDb> {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // 64 MiB of page cache (100,000 states are about 50 MiB) and temporary tables in memory.
        conn.pragma_update(None, "cache_size", -65536)?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        add_missing_columns(&conn)?;
        Ok(FleetDb { conn: Mutex::new(conn), scopes: Default::default(), path })
    }

    /// The default file: `fleet.sqlite` in the console's data folder.
    pub fn default_path() -> Option<PathBuf> {
        crate::app_data_dir().map(|d| d.join("fleet.sqlite"))
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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
        let states: i64 =
            self.conn().query_row("SELECT count(*) FROM states WHERE scope = ?1", [scope.0], |r| r.get(0))?;
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
