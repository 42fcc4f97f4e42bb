//! The simulator's state: one SQLite database (in memory here; a file comes with persistence).
//!
//! Timestamps are stored as fixed-width RFC 3339 UTC text (`2026-01-05T10:00:00.000Z`), so the
//! text order is the time order and SQL can sort and filter on them directly.

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
    firmware_authorized INTEGER NOT NULL
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
"#;

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
}

/// The filters and window of a module listing.
#[derive(Debug, Clone, Default)]
pub struct ModuleQuery {
    pub owner: Uuid,
    pub id: Option<Uuid>,
    pub device_specification_id: Option<Uuid>,
    pub client_id: Option<Uuid>,
    /// `ORDER BY` terms, already checked against the allowed columns; empty means the
    /// default order, `createdAt` ascending. `id` always breaks ties.
    pub order_by: Vec<(&'static str, bool)>,
    pub offset: u64,
    pub limit: u64,
}

pub struct Store {
    conn: Mutex<Connection>,
}

pub(crate) fn ts(t: OffsetDateTime) -> String {
    // Fixed width and always UTC, so text order is time order.
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

fn parse_ts(column: &'static str, s: String) -> Result<OffsetDateTime, StoreError> {
    OffsetDateTime::parse(&s, &Rfc3339).map_err(|_| StoreError::Malformed { column, value: s })
}

fn parse_uuid(column: &'static str, s: String) -> Result<Uuid, StoreError> {
    Uuid::parse_str(&s).map_err(|_| StoreError::Malformed { column, value: s })
}

impl Store {
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store { conn: Mutex::new(conn) })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
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
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?))
        })?;
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
                "SELECT key_id, secret, client_id, scopes, service_granted, firmware_authorized
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
                    ))
                },
            )
            .optional()?;
        row.map(|(key_id, secret, client, scopes, service_granted, firmware_authorized)| {
            Ok(ApiKeyRow {
                key_id,
                secret,
                client_id: parse_uuid("api_keys.client_id", client)?,
                scopes: scopes.split_whitespace().map(str::to_owned).collect(),
                service_granted,
                firmware_authorized,
            })
        })
        .transpose()
    }

    /// Modules owned by `q.owner`, filtered, ordered and windowed. Returns up to `q.limit` rows.
    pub fn list_modules(&self, q: &ModuleQuery) -> Result<Vec<FirmwareModule>, StoreError> {
        let mut sql = String::from(
            "SELECT id, client_id, device_specification_id, name, firmware_version_attribute_name,
                    created_at, created_by, modified_at, modified_by
             FROM firmware_modules WHERE client_id = ?1",
        );
        let mut args: Vec<String> = vec![q.owner.to_string()];
        if let Some(id) = q.id {
            args.push(id.to_string());
            sql.push_str(&format!(" AND id = ?{}", args.len()));
        }
        if let Some(spec) = q.device_specification_id {
            args.push(spec.to_string());
            sql.push_str(&format!(" AND device_specification_id = ?{}", args.len()));
        }
        if let Some(client) = q.client_id {
            args.push(client.to_string());
            sql.push_str(&format!(" AND client_id = ?{}", args.len()));
        }
        sql.push_str(" ORDER BY ");
        if q.order_by.is_empty() {
            sql.push_str("created_at ASC, ");
        }
        for (column, desc) in &q.order_by {
            sql.push_str(column);
            sql.push_str(if *desc { " DESC, " } else { " ASC, " });
        }
        sql.push_str("id ASC");
        sql.push_str(&format!(" LIMIT {} OFFSET {}", q.limit, q.offset));

        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
                r.get::<_, String>(8)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, client, spec, name, attr, created_at, created_by, modified_at, modified_by) = row?;
            out.push(FirmwareModule {
                id: parse_uuid("firmware_modules.id", id)?,
                name,
                firmware_version_attribute_name: attr,
                device_specification_id: parse_uuid("firmware_modules.device_specification_id", spec)?,
                client_id: Some(parse_uuid("firmware_modules.client_id", client)?),
                created_at: Some(parse_ts("firmware_modules.created_at", created_at)?),
                created_by: Some(created_by),
                modified_at: Some(parse_ts("firmware_modules.modified_at", modified_at)?),
                modified_by: Some(modified_by),
            });
        }
        Ok(out)
    }

    /// One module, if it exists and belongs to `owner`.
    pub fn module(&self, owner: Uuid, id: Uuid) -> Result<Option<FirmwareModule>, StoreError> {
        let found = self.list_modules(&ModuleQuery { owner, id: Some(id), limit: 1, ..Default::default() })?;
        Ok(found.into_iter().next())
    }
}

/// Inserts used by the seed; kept here so all SQL lives in one file.
pub(crate) mod insert {
    use super::*;

    pub fn client(tx: &rusqlite::Transaction<'_>, c: &ClientRow) -> Result<(), StoreError> {
        tx.execute(
            "INSERT INTO clients (id, name, reseller_id) VALUES (?1, ?2, ?3)",
            params![c.id.to_string(), c.name, c.reseller_id.map(|r| r.to_string())],
        )?;
        Ok(())
    }

    pub fn api_key(tx: &rusqlite::Transaction<'_>, k: &ApiKeyRow) -> Result<(), StoreError> {
        tx.execute(
            "INSERT INTO api_keys (key_id, secret, client_id, scopes, service_granted, firmware_authorized)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                k.key_id,
                k.secret,
                k.client_id.to_string(),
                k.scopes.join(" "),
                k.service_granted,
                k.firmware_authorized
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
}
