//! SQL of the connector bindings (reference sections 2.8 and 4.4): one table for the three
//! kinds, the columns of the other kinds left NULL.

use dcs_model::BindingKind;
use rusqlite::{params, OptionalExtension, Row};
use sha2::Digest;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::query::{Select, TimeWindow, Window};
use super::{parse_ts, parse_uuid, ts, Store, StoreError};

/// A stored binding of any kind.
#[derive(Debug, Clone, PartialEq)]
pub struct BindingRow {
    pub id: Uuid,
    pub kind: BindingKind,
    pub client_id: Uuid,
    /// The bound device's UUID.
    pub device_id: Uuid,
    /// LoRa: `INVENTORY` or `ACTIVE`.
    pub status: Option<String>,
    pub application_server_id: Option<String>,
    pub app_key: Option<String>,
    /// LoRa: when the current keys were set; the simulated device joins [`join_delay`] later.
    pub join_from: Option<OffsetDateTime>,
    pub username: Option<String>,
    pub password: Option<String>,
    pub http_type: Option<String>,
    pub shared_secret: Option<String>,
    pub created_at: OffsetDateTime,
    pub created_by: String,
    pub modified_at: OffsetDateTime,
    pub modified_by: String,
}

impl BindingRow {
    /// A binding with no kind-specific field set yet.
    pub fn new(kind: BindingKind, client_id: Uuid, device_id: Uuid, at: OffsetDateTime, by: &str) -> BindingRow {
        BindingRow {
            id: Uuid::new_v4(),
            kind,
            client_id,
            device_id,
            status: None,
            application_server_id: None,
            app_key: None,
            join_from: None,
            username: None,
            password: None,
            http_type: None,
            shared_secret: None,
            created_at: at,
            created_by: by.to_owned(),
            modified_at: at,
            modified_by: by.to_owned(),
        }
    }
}

/// Why a binding could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingConflict {
    /// The device already has a binding of this kind.
    Device,
    /// Another binding (of any client) has this LoRa application server id.
    ApplicationServerId,
}

/// How long after its keys are set the simulated LoRaWAN device joins the network, or `None`
/// for a device that never joins (out of coverage). Derived from the DevEUI: one device in four
/// never joins; the others join after 1 to 5 simulated minutes.
pub fn join_delay(deveui: &str) -> Option<Duration> {
    let h = sha2::Sha256::digest(deveui.to_ascii_lowercase().as_bytes());
    if h[0] % 4 == 0 {
        None
    } else {
        Some(Duration::minutes(1 + i64::from(h[1] % 5)))
    }
}

/// Filters of a binding listing.
#[derive(Debug, Clone)]
pub struct BindingQuery {
    pub owner: Uuid,
    pub kind: BindingKind,
    pub id: Option<Uuid>,
    pub client_id: Option<Uuid>,
    pub device_id: Option<Uuid>,
    pub http_type: Option<String>,
    pub username: Option<String>,
    pub time: TimeWindow,
    pub window: Window,
}

impl BindingQuery {
    pub fn new(owner: Uuid, kind: BindingKind) -> BindingQuery {
        BindingQuery {
            owner,
            kind,
            id: None,
            client_id: None,
            device_id: None,
            http_type: None,
            username: None,
            time: TimeWindow::default(),
            window: Window { limit: 1, ..Default::default() },
        }
    }
}

const BINDING_COLUMNS: &str =
    "SELECT id, kind, client_id, device_id, status, application_server_id, app_key, join_from,
        username, password, http_type, shared_secret, created_at, created_by, modified_at, modified_by
     FROM connector_bindings";

fn kind_from(s: &str) -> Result<BindingKind, StoreError> {
    BindingKind::ALL
        .into_iter()
        .find(|k| k.as_str() == s)
        .ok_or_else(|| StoreError::Malformed { column: "connector_bindings.kind", value: s.to_owned() })
}

fn binding_from(r: &Row<'_>) -> rusqlite::Result<Result<BindingRow, StoreError>> {
    let c: [Option<String>; 16] = [
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
        r.get(10)?,
        r.get(11)?,
        r.get(12)?,
        r.get(13)?,
        r.get(14)?,
        r.get(15)?,
    ];
    Ok((|| {
        let [id, kind, client, device, status, asid, app_key, join_from, username, password, http_type, secret, ca, cb, ma, mb] =
            c;
        Ok(BindingRow {
            id: parse_uuid("connector_bindings.id", id.unwrap_or_default())?,
            kind: kind_from(kind.as_deref().unwrap_or_default())?,
            client_id: parse_uuid("connector_bindings.client_id", client.unwrap_or_default())?,
            device_id: parse_uuid("connector_bindings.device_id", device.unwrap_or_default())?,
            status,
            application_server_id: asid,
            app_key,
            join_from: join_from.map(|s| parse_ts("connector_bindings.join_from", s)).transpose()?,
            username,
            password,
            http_type,
            shared_secret: secret,
            created_at: parse_ts("connector_bindings.created_at", ca.unwrap_or_default())?,
            created_by: cb.unwrap_or_default(),
            modified_at: parse_ts("connector_bindings.modified_at", ma.unwrap_or_default())?,
            modified_by: mb.unwrap_or_default(),
        })
    })())
}

/// Finds what a write of `b` would collide with, other than `b` itself.
fn conflict(tx: &rusqlite::Transaction<'_>, b: &BindingRow) -> Result<Option<BindingConflict>, StoreError> {
    let id = b.id.to_string();
    let taken: Option<String> = tx
        .query_row(
            "SELECT id FROM connector_bindings WHERE kind = ?1 AND device_id = ?2 AND id <> ?3",
            params![b.kind.as_str(), b.device_id.to_string(), id],
            |r| r.get(0),
        )
        .optional()?;
    if taken.is_some() {
        return Ok(Some(BindingConflict::Device));
    }
    if let Some(asid) = &b.application_server_id {
        let taken: Option<String> = tx
            .query_row(
                "SELECT id FROM connector_bindings WHERE application_server_id = ?1 AND id <> ?2",
                params![asid, id],
                |r| r.get(0),
            )
            .optional()?;
        if taken.is_some() {
            return Ok(Some(BindingConflict::ApplicationServerId));
        }
    }
    Ok(None)
}

/// Inserts a binding (the seed's, and the API's after its conflict check).
pub(crate) fn insert(tx: &rusqlite::Transaction<'_>, b: &BindingRow) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO connector_bindings (id, kind, client_id, device_id, status, application_server_id, app_key,
             join_from, username, password, http_type, shared_secret, created_at, created_by, modified_at, modified_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?
    .execute(params![
        b.id.to_string(),
        b.kind.as_str(),
        b.client_id.to_string(),
        b.device_id.to_string(),
        b.status,
        b.application_server_id,
        b.app_key,
        b.join_from.map(ts),
        b.username,
        b.password,
        b.http_type,
        b.shared_secret,
        ts(b.created_at),
        b.created_by,
        ts(b.modified_at),
        b.modified_by
    ])?;
    Ok(())
}

impl Store {
    /// Bindings of one kind owned by `q.owner`, filtered, ordered and windowed.
    pub fn list_bindings(&self, q: &BindingQuery) -> Result<Vec<BindingRow>, StoreError> {
        let select = Select::new(BINDING_COLUMNS)
            .eq("client_id", q.owner.to_string())
            .eq("kind", q.kind.as_str().to_owned())
            .eq_opt("id", q.id.map(|v| v.to_string()))
            .eq_opt("client_id", q.client_id.map(|v| v.to_string()))
            .eq_opt("device_id", q.device_id.map(|v| v.to_string()))
            .eq_opt("http_type", q.http_type.clone())
            .eq_opt("username", q.username.clone())
            .time_window(&q.time);
        let w = &q.window;
        let sql = select.sql(&w.order_by, "created_at ASC", "id ASC", w.limit, w.offset);
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(select.args.iter()), binding_from)?;
        rows.map(|r| r?).collect()
    }

    /// One binding of `kind`, if it exists and belongs to `owner`.
    pub fn binding(&self, owner: Uuid, kind: BindingKind, id: Uuid) -> Result<Option<BindingRow>, StoreError> {
        let q = BindingQuery { id: Some(id), ..BindingQuery::new(owner, kind) };
        Ok(self.list_bindings(&q)?.into_iter().next())
    }

    /// Inserts a new binding unless it collides with another.
    pub fn insert_binding(&self, b: &BindingRow) -> Result<Result<(), BindingConflict>, StoreError> {
        self.with_tx(|tx| {
            if let Some(c) = conflict(tx, b)? {
                return Ok(Err(c));
            }
            insert(tx, b)?;
            Ok(Ok(()))
        })
    }

    /// Replaces every field of the binding `b.id` of `b.client_id` but its creation, unless the
    /// new values collide with another binding. `Ok(Ok(false))` when there is no such binding.
    pub fn replace_binding(&self, b: &BindingRow) -> Result<Result<bool, BindingConflict>, StoreError> {
        self.with_tx(|tx| {
            if let Some(c) = conflict(tx, b)? {
                return Ok(Err(c));
            }
            let n = tx.execute(
                "UPDATE connector_bindings SET device_id = ?1, status = ?2, application_server_id = ?3, app_key = ?4,
                     join_from = ?5, username = ?6, password = ?7, http_type = ?8, shared_secret = ?9,
                     modified_at = ?10, modified_by = ?11
                 WHERE id = ?12 AND client_id = ?13 AND kind = ?14",
                params![
                    b.device_id.to_string(),
                    b.status,
                    b.application_server_id,
                    b.app_key,
                    b.join_from.map(ts),
                    b.username,
                    b.password,
                    b.http_type,
                    b.shared_secret,
                    ts(b.modified_at),
                    b.modified_by,
                    b.id.to_string(),
                    b.client_id.to_string(),
                    b.kind.as_str()
                ],
            )?;
            Ok(Ok(n == 1))
        })
    }

    /// Sets a LoRa binding's status (a sync from the network server).
    pub fn set_binding_status(
        &self,
        owner: Uuid,
        id: Uuid,
        status: &str,
        by: &str,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let n = self.conn().execute(
            "UPDATE connector_bindings SET status = ?1, modified_at = ?2, modified_by = ?3
             WHERE id = ?4 AND client_id = ?5 AND kind = 'lora'",
            params![status, ts(at), by, id.to_string(), owner.to_string()],
        )?;
        Ok(n == 1)
    }

    pub fn delete_binding(&self, owner: Uuid, kind: BindingKind, id: Uuid) -> Result<bool, StoreError> {
        let n = self.conn().execute(
            "DELETE FROM connector_bindings WHERE id = ?1 AND client_id = ?2 AND kind = ?3",
            params![id.to_string(), owner.to_string(), kind.as_str()],
        )?;
        Ok(n == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_delays_are_deterministic_and_some_devices_never_join() {
        let delays: Vec<Option<Duration>> = (0..200).map(|i| join_delay(&format!("70b3d57ed0{i:06x}"))).collect();
        assert_eq!(delays, (0..200).map(|i| join_delay(&format!("70B3D57ED0{i:06X}"))).collect::<Vec<_>>());
        assert!(delays.iter().any(Option::is_none));
        assert!(delays.iter().flatten().all(|d| (Duration::minutes(1)..=Duration::minutes(5)).contains(d)));
    }
}
