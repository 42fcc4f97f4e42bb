//! The simulator's state: one SQLite database, in a file (kept across restarts) or in a
//! temporary file removed with the store (never in memory: a million firmware states take about
//! a gigabyte, which the OS's page cache holds instead of the simulator's heap). Uploaded files are
//! streamed to a folder beside it, never held whole in memory.
//!
//! Timestamps are stored as fixed-width RFC 3339 UTC text (`2026-01-05T10:00:00.000Z`), so the
//! text order is the time order and SQL can sort and filter on them directly.
//!
//! The SQL of each area lives in its own module: [`firmware`], [`devices`], [`downlinks`],
//! [`bindings`], [`grants`].

pub mod bindings;
pub mod devices;
pub mod downlinks;
pub mod firmware;
pub mod grants;
pub mod query;
mod scratch;

pub use scratch::remove_this_process_folders;

pub use firmware::ModuleQuery;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use dcs_model::FirmwareModule;
use rusqlite::{params, Connection, OptionalExtension};
use thiserror::Error;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use uuid::Uuid;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("simulator database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("simulator database holds a malformed value in {column}: {value}")]
    Malformed { column: &'static str, value: String },
    #[error("simulator file storage: {0}")]
    Io(#[from] std::io::Error),
    /// Options the simulator cannot run with ([`crate::SimOptions::check`]): `<setting>: <rule>`.
    #[error("{0}")]
    Options(String),
}

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS clients (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    reseller_id TEXT REFERENCES clients(id)
);
CREATE TABLE IF NOT EXISTS api_keys (
    key_id              TEXT PRIMARY KEY,
    secret              TEXT NOT NULL,
    client_id           TEXT NOT NULL REFERENCES clients(id),
    scopes              TEXT NOT NULL,
    service_granted     INTEGER NOT NULL,
    firmware_authorized INTEGER NOT NULL,
    -- The customer-management add-on (section 5.4 rule 4, A-72).
    customer_management INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS device_specifications (
    id         TEXT PRIMARY KEY,
    client_id  TEXT NOT NULL REFERENCES clients(id),
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS firmware_modules (
    id                                TEXT PRIMARY KEY,
    client_id                         TEXT NOT NULL REFERENCES clients(id),
    device_specification_id           TEXT NOT NULL REFERENCES device_specifications(id),
    name                              TEXT NOT NULL,
    firmware_version_attribute_name   TEXT NOT NULL,
    created_at                        TEXT NOT NULL,
    created_by                        TEXT NOT NULL,
    modified_at                       TEXT NOT NULL,
    modified_by                       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS firmware_modules_client ON firmware_modules(client_id, created_at, id);
CREATE TABLE IF NOT EXISTS firmware_packages (
    id                      TEXT PRIMARY KEY,
    client_id               TEXT NOT NULL REFERENCES clients(id),
    device_specification_id TEXT NOT NULL REFERENCES device_specifications(id),
    module_id               TEXT NOT NULL REFERENCES firmware_modules(id),
    firmware_version        TEXT NOT NULL,
    description             TEXT,
    created_at              TEXT NOT NULL,
    created_by              TEXT NOT NULL,
    modified_at             TEXT NOT NULL,
    modified_by             TEXT NOT NULL,
    UNIQUE (module_id, firmware_version)
);
CREATE INDEX IF NOT EXISTS firmware_packages_client ON firmware_packages(client_id, created_at, id);
CREATE TABLE IF NOT EXISTS firmware_files (
    package_id   TEXT NOT NULL REFERENCES firmware_packages(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL CHECK (kind IN ('firmware', 'release-notes')),
    name         TEXT NOT NULL,
    content_type TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    size         INTEGER NOT NULL,
    -- Uploaded files live on disk (path relative to the files folder); seeded ones inline.
    path         TEXT,
    content      BLOB,
    created_at   TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    modified_at  TEXT NOT NULL,
    modified_by  TEXT NOT NULL,
    PRIMARY KEY (package_id, kind)
);
CREATE TABLE IF NOT EXISTS devices (
    id                      TEXT PRIMARY KEY,
    client_id               TEXT NOT NULL REFERENCES clients(id),
    device_specification_id TEXT NOT NULL REFERENCES device_specifications(id),
    project_id              TEXT NOT NULL,
    name                    TEXT NOT NULL,
    description             TEXT NOT NULL,
    barcode                 TEXT NOT NULL,
    connection              TEXT NOT NULL CHECK (connection IN ('lora', 'http', 'mqtt', 'sms')),
    imei                    TEXT UNIQUE,
    deveui                  TEXT UNIQUE,
    metadata                TEXT NOT NULL,
    created_at              TEXT NOT NULL,
    modified_at             TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS devices_client ON devices(client_id, name);
CREATE TABLE IF NOT EXISTS firmware_states (
    device_id                TEXT NOT NULL REFERENCES devices(id),
    module_id                TEXT NOT NULL REFERENCES firmware_modules(id),
    client_id                TEXT NOT NULL,
    device_specification_id  TEXT NOT NULL,
    project_id               TEXT NOT NULL,
    current_version          TEXT,
    target_version           TEXT,
    target_modified_at       TEXT,
    status                   TEXT,
    status_details           TEXT,
    status_modified_at       TEXT,
    created_at               TEXT NOT NULL,
    modified_at              TEXT NOT NULL,
    -- When the simulated device takes its next update step (simulated time), if updating.
    next_step_at             TEXT,
    -- Updates this device has attempted: varies the outcome of each attempt.
    attempts                 INTEGER NOT NULL DEFAULT 0,
    -- Set-target calls that reached this state (a target set or reset, the same one again
    -- included): a test aid, in no answer of the API (`GET /_sim/target-sets`).
    target_sets              INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (device_id, module_id)
);
CREATE INDEX IF NOT EXISTS firmware_states_client ON firmware_states(client_id, device_id, module_id);
-- Keyset pages in the default order, and by modification time (A-259), each read through one
-- (`firmware_states_modified`, of data files before it, lacked the key).
DROP INDEX IF EXISTS firmware_states_modified;
CREATE INDEX IF NOT EXISTS firmware_states_changed ON firmware_states(client_id, modified_at, device_id, module_id);
CREATE INDEX IF NOT EXISTS firmware_states_due ON firmware_states(next_step_at) WHERE next_step_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS downlinks (
    id                  TEXT PRIMARY KEY,
    -- 'actuator', or the connection kind: 'http', 'lora', 'mqtt', 'sms', 'digitalmatter'.
    kind                TEXT NOT NULL,
    client_id           TEXT NOT NULL REFERENCES clients(id),
    device_id           TEXT NOT NULL,
    -- The device as the caller named it, echoed back as `deviceId`.
    device_ref          TEXT NOT NULL,
    network_id          TEXT NOT NULL,
    external_reference  TEXT,
    status              TEXT NOT NULL,
    -- The kind's own request fields (method, message, payload...), as sent.
    body                TEXT NOT NULL,
    message             TEXT,
    retry_limit         INTEGER NOT NULL DEFAULT 0,
    retry_count         INTEGER NOT NULL DEFAULT 0,
    feedback_timeout    TEXT NOT NULL,
    dry_run             INTEGER NOT NULL DEFAULT 0,
    last_failure_reason TEXT,
    -- 0 none, 1 cancel requested, 2 forced cancel requested.
    cancel              INTEGER NOT NULL DEFAULT 0,
    next_step_at        TEXT,
    deadline_at         TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    modified_at         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS downlinks_list ON downlinks(client_id, kind, created_at, id);
CREATE INDEX IF NOT EXISTS downlinks_due ON downlinks(next_step_at) WHERE next_step_at IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS downlinks_reference ON downlinks(client_id, external_reference)
    WHERE kind = 'actuator' AND external_reference IS NOT NULL;
-- Deprecated sub-customer mode (section 4.5): API keys that made the context-switch call for
-- a customer, and so may act for it with `x-client-id`.
CREATE TABLE IF NOT EXISTS context_switch_grants (
    key_id      TEXT NOT NULL REFERENCES api_keys(key_id),
    customer_id TEXT NOT NULL REFERENCES clients(id),
    granted_at  TEXT NOT NULL,
    PRIMARY KEY (key_id, customer_id)
);
-- Connector bindings of the three kinds in one table; the columns of the other kinds are NULL.
CREATE TABLE IF NOT EXISTS connector_bindings (
    id                    TEXT PRIMARY KEY,
    kind                  TEXT NOT NULL CHECK (kind IN ('lora', 'http', 'mqtt')),
    client_id             TEXT NOT NULL REFERENCES clients(id),
    device_id             TEXT NOT NULL REFERENCES devices(id),
    -- lora
    status                TEXT,
    application_server_id TEXT UNIQUE,
    app_key               TEXT,
    -- When the current keys were set: the simulated device joins some minutes later.
    join_from             TEXT,
    -- mqtt
    username              TEXT,
    password              TEXT,
    -- http
    http_type             TEXT,
    shared_secret         TEXT,
    created_at            TEXT NOT NULL,
    created_by            TEXT NOT NULL,
    modified_at           TEXT NOT NULL,
    modified_by           TEXT NOT NULL,
    UNIQUE (kind, device_id)
);
CREATE INDEX IF NOT EXISTS connector_bindings_client ON connector_bindings(client_id, kind, created_at, id);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"#;

/// Columns added to [`SCHEMA`] after data files were written with it: table, column, definition.
const ADDED_COLUMNS: &[(&str, &str, &str)] = &[
    ("api_keys", "customer_management", "INTEGER NOT NULL DEFAULT 1"),
    ("firmware_states", "target_sets", "INTEGER NOT NULL DEFAULT 0"),
];

/// A client (tenant) of the service. A reseller's customers point to it by `reseller_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRow {
    pub id: Uuid,
    pub name: String,
    pub reseller_id: Option<Uuid>,
}

/// An API key: client id + secret, with what the identity platform granted it (section 5.2).
#[derive(Debug, Clone)]
pub struct ApiKeyRow {
    pub key_id: String,
    pub secret: String,
    pub client_id: Uuid,
    pub scopes: Vec<String>,
    pub service_granted: bool,
    pub firmware_authorized: bool,
    /// The customer-management add-on: acting for a customer (section 5.4 rule 4, A-72).
    pub customer_management: bool,
}

pub struct Store {
    conn: Mutex<Connection>,
    /// Connections that only read, for the listings, once reads are shared
    /// ([`Store::share_reads`]): requests read side by side, and while the devices' engine writes.
    readers: Readers,
    files: FilesDir,
}

/// The read-only connections of a store's file: opened as requests need them, idle ones kept.
pub(crate) struct Readers {
    path: PathBuf,
    shared: std::sync::atomic::AtomicBool,
    idle: Mutex<Vec<Connection>>,
}

/// Most idle read connections kept (one a request being served; more are opened when needed and
/// closed after).
const IDLE_READERS: usize = 8;

/// Page cache of a read connection (KiB): the listings read few pages, the OS's cache has them.
/// SQLite's default; 8 MiB served the lists no faster (`bench/sim-http.sh`, `bench/sim-scale.sh`),
/// and the app's demo simulator held its writer's 8 MiB at idle.
const READER_CACHE_KIB: i64 = 2048;

/// A connection to read with: one of the store's read connections, or the store's own
/// connection while reads are not shared.
pub(crate) enum Reader<'a> {
    Own(MutexGuard<'a, Connection>),
    Pooled(Option<Connection>, &'a Readers),
}

impl std::ops::Deref for Reader<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        match self {
            Reader::Own(guard) => guard,
            Reader::Pooled(conn, _) => conn.as_ref().expect("a read connection until dropped"),
        }
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        if let Reader::Pooled(conn, readers) = self {
            let mut idle = readers.idle.lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < IDLE_READERS {
                idle.extend(conn.take());
            }
        }
    }
}

/// Where uploaded files go: beside the database file, or a folder of the temporary store's
/// folder (removed with it, database included).
enum FilesDir {
    Kept(PathBuf),
    Temporary { _dir: scratch::Scratch, files: PathBuf },
}

impl Readers {
    fn new(path: PathBuf, shared: bool) -> Readers {
        Readers { path, shared: shared.into(), idle: Mutex::new(Vec::new()) }
    }
}

impl FilesDir {
    fn path(&self) -> &Path {
        match self {
            FilesDir::Kept(p) => p,
            FilesDir::Temporary { files, .. } => files,
        }
    }
}

/// Hands the heap's free pages back to the OS: memory the process let go of in a burst (the
/// seed's page cache) stays in the allocator's arenas otherwise, counted in its resident memory.
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of glibc's own arenas; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Pages SQLite caches on the store's own connection while a data set is written
/// ([`Store::replace_all`]; KiB when negative): the seed's random-key inserts into a
/// million-row table stay in memory, while the simulator's peak RSS stays far below 1 GiB.
/// Otherwise it caches as much as a reader ([`READER_CACHE_KIB`]): the devices' engine writes
/// a few pages at a time, and the OS's cache holds the file's pages anyway. A seed's cache kept
/// held the whole data set a second time for as long as the simulator ran (`dcs sim` with the
/// demo data set: 28 MiB of anonymous memory after seeding, 8 MiB with the cache let go; the
/// app, whose fleet database's cache size left room for them, 20 MB of SQLite's pages at idle).
const SEED_CACHE_KIB: i64 = 131_072;

/// Secondary indexes of the bulk-seeded tables: dropped before the seed writes its rows and
/// made again after it ([`SCHEMA`] creates them), since sorting once is far cheaper than
/// inserting a million rows in random order into each.
const BULK_INDEXES: &[&str] = &[
    "firmware_states_client",
    "firmware_states_changed",
    "firmware_states_due",
    "devices_client",
    "connector_bindings_client",
];

pub fn ts(t: OffsetDateTime) -> String {
    // Fixed width and always UTC, so text order is time order; the downlink answers use it too.
    dcs_model::timestamp::format_millis(t)
}

pub(crate) fn parse_ts(column: &'static str, s: String) -> Result<OffsetDateTime, StoreError> {
    OffsetDateTime::parse(&s, &Rfc3339).map_err(|_| StoreError::Malformed { column, value: s })
}

pub(crate) fn parse_uuid(column: &'static str, s: String) -> Result<Uuid, StoreError> {
    Uuid::parse_str(&s).map_err(|_| StoreError::Malformed { column, value: s })
}

impl Store {
    /// A store in a temporary folder (the system's, `TMPDIR`), removed with the store, or by
    /// the next temporary store if this process is killed ([`scratch`]). Nothing is kept
    /// across a crash, so writes are not synced; and its rollback journal (not a WAL) writes
    /// the seed's new pages once, into the database, where a WAL writes them twice.
    pub fn open_temporary() -> Result<Store, StoreError> {
        let dir = scratch::Scratch::create_in(&std::env::temp_dir())?;
        let conn = Connection::open(dir.path().join("sim.sqlite"))?;
        conn.pragma_update(None, "synchronous", "OFF")?;
        // No other connection ever opens it: holding the file's lock for good spares each
        // statement the lock, unlock and change-counter read a shared file needs.
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE")?;
        Self::prepare(&conn)?;
        let files = dir.path().join("files");
        std::fs::create_dir_all(&files)?;
        let readers = Readers::new(dir.path().join("sim.sqlite"), false);
        Ok(Store { conn: Mutex::new(conn), readers, files: FilesDir::Temporary { _dir: dir, files } })
    }

    /// Opens (or creates) the database in `path`; uploaded files go to `<path>.files/`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Self::prepare(&conn)?;
        let mut files = path.as_os_str().to_owned();
        files.push(".files");
        let files = PathBuf::from(files);
        std::fs::create_dir_all(&files)?;
        // A WAL in the default locking mode: read connections can be used at once.
        let readers = Readers::new(path.to_owned(), true);
        Ok(Store { conn: Mutex::new(conn), readers, files: FilesDir::Kept(files) })
    }

    fn prepare(conn: &Connection) -> Result<(), StoreError> {
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "cache_size", -READER_CACHE_KIB)?;
        conn.execute_batch(SCHEMA)?;
        // A data file written before a column existed gets it with its default: every key had
        // the add-on then, and no set-target was counted.
        for (table, column, definition) in ADDED_COLUMNS {
            let has: bool = conn.query_row(
                "SELECT COUNT(*) > 0 FROM pragma_table_info(?1) WHERE name = ?2",
                [table, column],
                |r| r.get(0),
            )?;
            if !has {
                conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {definition}"))?;
            }
        }
        Ok(())
    }

    /// The folder uploaded files are streamed into.
    pub fn files_dir(&self) -> &Path {
        self.files.path()
    }

    /// Whether the demo data set has been written (a reopened file keeps its data).
    pub fn is_seeded(&self) -> Result<bool, StoreError> {
        Ok(self.meta("seed")?.is_some())
    }

    /// The latest time the state was changed at (simulated clock), if anything was: a restarted
    /// simulator's clock goes on from there rather than jumping back to the wall clock.
    pub fn latest_change(&self) -> Result<Option<OffsetDateTime>, StoreError> {
        let latest: Option<String> = self.conn().query_row(
            "SELECT max(t) FROM (SELECT max(modified_at) AS t FROM firmware_states
                                 UNION ALL SELECT max(modified_at) FROM downlinks
                                 UNION ALL SELECT max(modified_at) FROM connector_bindings
                                 UNION ALL SELECT max(modified_at) FROM firmware_packages)",
            [],
            |r| r.get(0),
        )?;
        latest.map(|t| parse_ts("modified_at", t)).transpose()
    }

    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self.conn().query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional()?)
    }

    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.with_tx(|tx| insert::meta(tx, key, value))
    }

    /// Replaces the whole state with what `write` puts into the emptied tables, in one
    /// transaction: a crash or an error at any moment leaves the old state or the new one,
    /// never a mix (so `write` also sets the `seed` meta that marks a data file as seeded).
    /// Uploaded files are removed after the commit: the new state refers to none of them, and
    /// those a crash leaves behind are removed by the next replacement.
    pub(crate) fn replace_all(
        &self,
        write: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        // The seed writes consistent rows: checking each reference (two index lookups a state)
        // only slows a million inserts down. Off outside a transaction only, so set here.
        {
            let conn = self.conn();
            conn.pragma_update(None, "foreign_keys", "OFF")?;
            conn.pragma_update(None, "cache_size", -SEED_CACHE_KIB)?;
        }
        let replaced = self.with_tx(|tx| {
            // Children before parents, so the foreign keys hold after each statement.
            tx.execute_batch(
                "DELETE FROM context_switch_grants; DELETE FROM connector_bindings; DELETE FROM downlinks;
                 DELETE FROM firmware_states; DELETE FROM devices; DELETE FROM firmware_files;
                 DELETE FROM firmware_packages; DELETE FROM firmware_modules; DELETE FROM device_specifications;
                 DELETE FROM api_keys; DELETE FROM clients; DELETE FROM meta;",
            )?;
            for index in BULK_INDEXES {
                tx.execute_batch(&format!("DROP INDEX IF EXISTS {index}"))?;
            }
            write(tx)?;
            tx.execute_batch(SCHEMA)?;
            Ok(())
        });
        // Lowering the size takes the seed's share out of the process's page budget, and the
        // pages go: all of them, since the budget is shared by every connection in the process
        // (the bundled SQLite's SQLITE_ENABLE_MEMORY_MANAGEMENT), and another one's room would
        // keep them otherwise.
        {
            let conn = self.conn();
            conn.pragma_update(None, "foreign_keys", "ON")?;
            conn.pragma_update(None, "cache_size", -READER_CACHE_KIB)?;
            conn.release_memory()?;
        }
        give_back_freed_memory();
        replaced?;
        for entry in std::fs::read_dir(self.files_dir())? {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                std::fs::remove_file(entry.path())?;
            }
        }
        Ok(())
    }

    /// Lets the listings read through connections of their own ([`Store::reader`]). A temporary
    /// store is written with a rollback journal and its lock held for good (the fastest way to
    /// seed it); this gives the lock up and switches it to a WAL, where readers and the writer
    /// do not wait for one another. Called once its data set is seeded.
    pub fn share_reads(&self) -> Result<(), StoreError> {
        if self.readers.shared.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(());
        }
        let conn = self.conn();
        conn.pragma_update(None, "locking_mode", "NORMAL")?;
        // The exclusive lock is let go at the next access.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))?;
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Options(format!("the store's journal stayed {mode}, not a WAL")));
        }
        self.readers.shared.store(true, std::sync::atomic::Ordering::Release);
        Ok(())
    }

    /// A connection to read with: a read-only one of the store's file once reads are shared (it
    /// sees every transaction committed before it started reading), else the store's own.
    pub(crate) fn reader(&self) -> Result<Reader<'_>, StoreError> {
        if !self.readers.shared.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(Reader::Own(self.conn()));
        }
        let idle = self.readers.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => {
                use rusqlite::OpenFlags;
                let conn = Connection::open_with_flags(
                    &self.readers.path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                conn.pragma_update(None, "cache_size", -READER_CACHE_KIB)?;
                conn.busy_timeout(std::time::Duration::from_secs(5))?;
                conn
            }
        };
        Ok(Reader::Pooled(Some(conn), &self.readers))
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written (each call is one
        // statement or one transaction), so a poisoned lock is safe to keep using.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn with_tx<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    pub fn client(&self, id: Uuid) -> Result<Option<ClientRow>, StoreError> {
        let row = self
            .conn()
            .query_row("SELECT id, name, reseller_id FROM clients WHERE id = ?1", [id.to_string()], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?))
            })
            .optional()?;
        row.map(|(id, name, reseller)| {
            Ok(ClientRow {
                id: parse_uuid("clients.id", id)?,
                name,
                reseller_id: reseller.map(|r| parse_uuid("clients.reseller_id", r)).transpose()?,
            })
        })
        .transpose()
    }

    /// All clients, resellers first, each group by name.
    pub fn clients(&self) -> Result<Vec<ClientRow>, StoreError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare("SELECT id, name, reseller_id FROM clients ORDER BY reseller_id IS NOT NULL, name")?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, name, reseller) = row?;
            out.push(ClientRow {
                id: parse_uuid("clients.id", id)?,
                name,
                reseller_id: reseller.map(|r| parse_uuid("clients.reseller_id", r)).transpose()?,
            });
        }
        Ok(out)
    }

    pub fn api_key(&self, key_id: &str) -> Result<Option<ApiKeyRow>, StoreError> {
        let row = self
            .conn()
            .query_row(
                "SELECT key_id, secret, client_id, scopes, service_granted, firmware_authorized, customer_management
                 FROM api_keys WHERE key_id = ?1",
                [key_id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, bool>(4)?,
                        r.get::<_, bool>(5)?,
                        r.get::<_, bool>(6)?,
                    ))
                },
            )
            .optional()?;
        row.map(|(key_id, secret, client, scopes, service_granted, firmware_authorized, customer_management)| {
            Ok(ApiKeyRow {
                key_id,
                secret,
                client_id: parse_uuid("api_keys.client_id", client)?,
                scopes: scopes.split_whitespace().map(str::to_owned).collect(),
                service_granted,
                firmware_authorized,
                customer_management,
            })
        })
        .transpose()
    }
}

/// Inserts used by the seed; kept here so all SQL lives in one file.
pub(crate) mod insert {
    use super::*;

    pub fn meta(tx: &rusqlite::Transaction<'_>, key: &str, value: &str) -> Result<(), StoreError> {
        tx.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [key, value],
        )?;
        Ok(())
    }

    pub fn client(tx: &rusqlite::Transaction<'_>, c: &ClientRow) -> Result<(), StoreError> {
        tx.execute(
            "INSERT INTO clients (id, name, reseller_id) VALUES (?1, ?2, ?3)",
            params![c.id.to_string(), c.name, c.reseller_id.map(|r| r.to_string())],
        )?;
        Ok(())
    }

    pub fn api_key(tx: &rusqlite::Transaction<'_>, k: &ApiKeyRow) -> Result<(), StoreError> {
        tx.execute(
            "INSERT INTO api_keys (key_id, secret, client_id, scopes, service_granted, firmware_authorized, customer_management)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                k.key_id,
                k.secret,
                k.client_id.to_string(),
                k.scopes.join(" "),
                k.service_granted,
                k.firmware_authorized,
                k.customer_management
            ],
        )?;
        Ok(())
    }

    pub fn device_specification(
        tx: &rusqlite::Transaction<'_>,
        id: Uuid,
        client: Uuid,
        name: &str,
        created_at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        tx.execute(
            "INSERT INTO device_specifications (id, client_id, name, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![id.to_string(), client.to_string(), name, ts(created_at)],
        )?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub fn package(
        tx: &rusqlite::Transaction<'_>,
        id: Uuid,
        client: Uuid,
        spec: Uuid,
        module: Uuid,
        version: &str,
        description: Option<&str>,
        at: OffsetDateTime,
        by: &str,
    ) -> Result<(), StoreError> {
        tx.prepare_cached(
            "INSERT INTO firmware_packages (id, client_id, device_specification_id, module_id, firmware_version,
                 description, created_at, created_by, modified_at, modified_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?7, ?8)",
        )?
        .execute(params![
            id.to_string(),
            client.to_string(),
            spec.to_string(),
            module.to_string(),
            version,
            description,
            ts(at),
            by
        ])?;
        Ok(())
    }

    /// A seeded file, stored inline.
    #[allow(clippy::too_many_arguments)]
    pub fn inline_file(
        tx: &rusqlite::Transaction<'_>,
        package: Uuid,
        kind: &str,
        name: &str,
        content_type: &str,
        content: &[u8],
        at: OffsetDateTime,
        by: &str,
    ) -> Result<(), StoreError> {
        use sha2::Digest;
        let sha = hex::encode(sha2::Sha256::digest(content));
        tx.prepare_cached(
            "INSERT INTO firmware_files (package_id, kind, name, content_type, sha256, size, path, content,
                 created_at, created_by, modified_at, modified_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8, ?9, ?8, ?9)",
        )?
        .execute(params![
            package.to_string(),
            kind,
            name,
            content_type,
            sha,
            content.len() as i64,
            content,
            ts(at),
            by
        ])?;
        Ok(())
    }

    pub fn device(
        tx: &rusqlite::Transaction<'_>,
        d: &super::devices::DeviceRow,
        at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        tx.prepare_cached(
            "INSERT INTO devices (id, client_id, device_specification_id, project_id, name, description, barcode,
                 connection, imei, deveui, metadata, created_at, modified_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12)",
        )?
        .execute(params![
            d.id.to_string(),
            d.client_id.to_string(),
            d.device_specification_id.to_string(),
            d.project_id.to_string(),
            d.name,
            d.description,
            d.barcode,
            d.connection,
            d.imei,
            d.deveui,
            d.metadata.to_string(),
            ts(at)
        ])?;
        Ok(())
    }

    /// The device's columns a state repeats.
    #[derive(Debug, Clone, Copy)]
    pub struct StateDevice {
        pub id: Uuid,
        pub client_id: Uuid,
        pub device_specification_id: Uuid,
        pub project_id: Uuid,
    }

    impl From<&super::devices::DeviceRow> for StateDevice {
        fn from(d: &super::devices::DeviceRow) -> Self {
            StateDevice {
                id: d.id,
                client_id: d.client_id,
                device_specification_id: d.device_specification_id,
                project_id: d.project_id,
            }
        }
    }

    /// A seeded firmware state.
    pub struct SeedState<'a> {
        pub device: StateDevice,
        pub module: Uuid,
        pub current: Option<&'a str>,
        pub target: Option<&'a str>,
        pub status: Option<&'a str>,
        pub details: Option<&'a str>,
        pub created: OffsetDateTime,
        pub modified: OffsetDateTime,
        pub next_step_at: Option<OffsetDateTime>,
    }

    pub fn state(tx: &rusqlite::Transaction<'_>, s: &SeedState<'_>) -> Result<(), StoreError> {
        let d = &s.device;
        let touched = s.target.map(|_| ts(s.modified));
        tx.prepare_cached(
            "INSERT INTO firmware_states (device_id, module_id, client_id, device_specification_id, project_id,
                 current_version, target_version, target_modified_at, status, status_details, status_modified_at,
                 created_at, modified_at, next_step_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?
        .execute(params![
            d.id.to_string(),
            s.module.to_string(),
            d.client_id.to_string(),
            d.device_specification_id.to_string(),
            d.project_id.to_string(),
            s.current,
            s.target,
            touched,
            s.status,
            s.details,
            s.status.map(|_| ts(s.modified)),
            ts(s.created),
            ts(s.modified),
            s.next_step_at.map(ts)
        ])?;
        Ok(())
    }

    pub fn module(tx: &rusqlite::Transaction<'_>, m: &FirmwareModule) -> Result<(), StoreError> {
        let created = m.created_at.expect("seeded modules carry createdAt");
        let modified = m.modified_at.unwrap_or(created);
        tx.execute(
            "INSERT INTO firmware_modules (id, client_id, device_specification_id, name,
                 firmware_version_attribute_name, created_at, created_by, modified_at, modified_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                m.id.to_string(),
                m.client_id.expect("seeded modules carry clientId").to_string(),
                m.device_specification_id.to_string(),
                m.name,
                m.firmware_version_attribute_name,
                ts(created),
                m.created_by.clone().unwrap_or_default(),
                ts(modified),
                m.modified_by.clone().unwrap_or_default(),
            ],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_fixed_width_utc_and_sort_as_text() {
        let a = time::macros::datetime!(2026-01-05 10:00:00.5 +02:00);
        let b = time::macros::datetime!(2026-01-05 09:00:01 UTC);
        assert_eq!(ts(a), "2026-01-05T08:00:00.500Z");
        assert!(ts(a) < ts(b));
        assert_eq!(parse_ts("t", ts(a)).unwrap(), a);
    }

    /// Bytes of page cache the connection holds (SQLITE_DBSTATUS_CACHE_USED).
    fn cache_used(conn: &Connection) -> i64 {
        let (mut used, mut highest) = (0, 0);
        // SAFETY: the handle is the live connection's; the status call only reads its counters.
        let rc = unsafe {
            rusqlite::ffi::sqlite3_db_status(
                conn.handle(),
                rusqlite::ffi::SQLITE_DBSTATUS_CACHE_USED,
                &mut used,
                &mut highest,
                0,
            )
        };
        assert_eq!(rc, rusqlite::ffi::SQLITE_OK);
        i64::from(used)
    }

    /// SQLite's pages of every connection in the process share one budget, the sum of their
    /// cache sizes (the bundled build's SQLITE_ENABLE_MEMORY_MANAGEMENT): a seed's pages stayed
    /// for as long as another connection's cache size made room for them (the app: its fleet
    /// database's 16 MiB kept 20 MB of the demo data set's pages at idle).
    #[test]
    fn the_seeds_page_cache_is_let_go_once_its_data_set_is_written() {
        let roomy = Connection::open_in_memory().unwrap();
        roomy.pragma_update(None, "cache_size", -262_144).unwrap();
        let dir = tempfile::tempdir().unwrap();
        // A temporary store (`dcs sim`), and a kept file in WAL mode (the app's demo data set).
        for store in [Store::open_temporary().unwrap(), Store::open(&dir.path().join("kept.sqlite")).unwrap()] {
            seeds_let_their_page_cache_go(&store);
        }
        drop(roomy);
    }

    fn seeds_let_their_page_cache_go(store: &Store) {
        let reader_cache = READER_CACHE_KIB * 1024;
        for seed in [1, 2] {
            // The first seed, then a reset's.
            crate::seed::seed(store, seed, 3000, time::OffsetDateTime::now_utc()).unwrap();
            let size: i64 = store
                .conn()
                .query_row("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size", [], |r| r.get(0))
                .unwrap();
            assert!(size > 2 * reader_cache, "a data set of {size} bytes: too small to tell");
            let kept = cache_used(&store.conn());
            // A page's allocation is a little more than the page: a tenth over the size asked.
            assert!(kept <= reader_cache + reader_cache / 10, "{kept} bytes of cache kept after seeding {size} bytes");
        }
    }
}
