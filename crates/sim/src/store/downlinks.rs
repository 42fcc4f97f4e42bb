//! SQL of downlinks, actuator-style and connection-specific, in one table told apart by `kind`.

use rusqlite::{params, OptionalExtension, Row};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::query::{Select, TimeWindow, Window};
use super::{parse_ts, parse_uuid, ts, Store, StoreError};

/// A stored downlink.
#[derive(Debug, Clone)]
pub struct DownlinkRow {
    pub id: Uuid,
    pub kind: String,
    pub client_id: Uuid,
    pub device_id: Uuid,
    pub device_ref: String,
    pub network_id: String,
    pub external_reference: Option<String>,
    pub status: String,
    pub body: Value,
    pub message: Option<Value>,
    pub retry_limit: i64,
    pub retry_count: i64,
    pub feedback_timeout: String,
    pub dry_run: bool,
    pub last_failure_reason: Option<String>,
    pub cancel: i64,
    pub next_step_at: Option<OffsetDateTime>,
    pub deadline_at: OffsetDateTime,
    pub created_at: OffsetDateTime,
    pub modified_at: OffsetDateTime,
}

const COLUMNS: &str = "SELECT id, kind, client_id, device_id, device_ref, network_id, external_reference, status, body,
        message, retry_limit, retry_count, feedback_timeout, dry_run, last_failure_reason, cancel, next_step_at,
        deadline_at, created_at, modified_at FROM downlinks";

fn row_from(r: &Row<'_>) -> rusqlite::Result<Result<DownlinkRow, StoreError>> {
    let id: String = r.get(0)?;
    let kind: String = r.get(1)?;
    let client: String = r.get(2)?;
    let device: String = r.get(3)?;
    let device_ref: String = r.get(4)?;
    let network_id: String = r.get(5)?;
    let external_reference: Option<String> = r.get(6)?;
    let status: String = r.get(7)?;
    let body: String = r.get(8)?;
    let message: Option<String> = r.get(9)?;
    let retry_limit: i64 = r.get(10)?;
    let retry_count: i64 = r.get(11)?;
    let feedback_timeout: String = r.get(12)?;
    let dry_run: bool = r.get(13)?;
    let last_failure_reason: Option<String> = r.get(14)?;
    let cancel: i64 = r.get(15)?;
    let next: Option<String> = r.get(16)?;
    let deadline: String = r.get(17)?;
    let created: String = r.get(18)?;
    let modified: String = r.get(19)?;
    Ok((|| {
        Ok(DownlinkRow {
            id: parse_uuid("downlinks.id", id)?,
            kind,
            client_id: parse_uuid("downlinks.client_id", client)?,
            device_id: parse_uuid("downlinks.device_id", device)?,
            device_ref,
            network_id,
            external_reference,
            status,
            body: serde_json::from_str(&body).unwrap_or(Value::Null),
            message: message.and_then(|m| serde_json::from_str(&m).ok()),
            retry_limit,
            retry_count,
            feedback_timeout,
            dry_run,
            last_failure_reason,
            cancel,
            next_step_at: next.map(|n| parse_ts("downlinks.next_step_at", n)).transpose()?,
            deadline_at: parse_ts("downlinks.deadline_at", deadline)?,
            created_at: parse_ts("downlinks.created_at", created)?,
            modified_at: parse_ts("downlinks.modified_at", modified)?,
        })
    })())
}

/// Filters of a downlink listing.
#[derive(Debug, Clone, Default)]
pub struct DownlinkQuery {
    pub owner: Uuid,
    pub kind: String,
    pub device_id: Option<Uuid>,
    /// SMS: the `deviceId` as sent, matched exactly.
    pub device_ref: Option<String>,
    pub status: Option<String>,
    /// Actuator `q`: the external reference exactly, network id or message partially.
    pub q: Option<String>,
    pub time: TimeWindow,
    pub window: Window,
}

/// A status change computed by the simulation.
#[derive(Debug, Clone)]
pub struct DownlinkChange {
    pub id: Uuid,
    pub status: String,
    pub retry_count: i64,
    pub last_failure_reason: Option<String>,
    pub next_step_at: Option<OffsetDateTime>,
    pub at: OffsetDateTime,
}

/// Inserts a seeded downlink inside the seed's transaction.
pub(crate) fn insert_in(tx: &rusqlite::Transaction<'_>, d: &DownlinkRow) -> Result<(), StoreError> {
    tx.prepare_cached(INSERT)?.execute(params![
        d.id.to_string(),
        d.kind,
        d.client_id.to_string(),
        d.device_id.to_string(),
        d.device_ref,
        d.network_id,
        d.external_reference,
        d.status,
        d.body.to_string(),
        d.message.as_ref().map(Value::to_string),
        d.retry_limit,
        d.retry_count,
        d.feedback_timeout,
        d.dry_run,
        d.last_failure_reason,
        d.cancel,
        d.next_step_at.map(ts),
        ts(d.deadline_at),
        ts(d.created_at),
        ts(d.modified_at)
    ])?;
    Ok(())
}

const INSERT: &str =
    "INSERT INTO downlinks (id, kind, client_id, device_id, device_ref, network_id, external_reference,
        status, body, message, retry_limit, retry_count, feedback_timeout, dry_run, last_failure_reason, cancel,
        next_step_at, deadline_at, created_at, modified_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)";

impl Store {
    /// Inserts a downlink; `false` when its external reference is taken.
    pub fn insert_downlink(&self, d: &DownlinkRow) -> Result<bool, StoreError> {
        let res = self.with_tx(|tx| insert_in(tx, d));
        match res {
            Ok(_) => Ok(true),
            Err(StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)))
                if e.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    pub fn downlink(&self, owner: Uuid, kind: &str, id: Uuid) -> Result<Option<DownlinkRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{COLUMNS} WHERE id = ?1 AND client_id = ?2 AND kind = ?3"))?;
        stmt.query_row(params![id.to_string(), owner.to_string(), kind], row_from).optional()?.transpose()
    }

    pub fn list_downlinks(&self, q: &DownlinkQuery) -> Result<Vec<DownlinkRow>, StoreError> {
        let mut select = Select::new(COLUMNS)
            .eq("client_id", q.owner.to_string())
            .eq("kind", q.kind.clone())
            .eq_opt("device_id", q.device_id.map(|d| d.to_string()))
            .eq_opt("device_ref", q.device_ref.clone())
            .eq_opt("status", q.status.clone())
            .time_window(&q.time);
        if let Some(text) = &q.q {
            // instr() is case-sensitive, as the reference asks.
            select = select.cond(
                "(external_reference = ? OR instr(network_id, ?) > 0 OR instr(COALESCE(message, ''), ?) > 0)",
                vec![text.clone().into(), text.clone().into(), text.clone().into()],
            );
        }
        let w = &q.window;
        let sql = select.sql(&w.order_by, "created_at ASC", "id ASC", w.limit, w.offset);
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(select.args.iter()), row_from)?;
        rows.map(|r| r?).collect()
    }

    /// Downlinks not yet final on `device` of this kind, oldest first (for queue eviction).
    pub fn queued_downlinks(&self, device: Uuid, kind: &str) -> Result<Vec<Uuid>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT id FROM downlinks WHERE device_id = ?1 AND kind = ?2 AND status = 'PENDING'
             ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map(params![device.to_string(), kind], |r| r.get::<_, String>(0))?;
        rows.map(|r| parse_uuid("downlinks.id", r?)).collect()
    }

    /// Asks for a cancellation, carried out by the next simulation step.
    pub fn request_cancel(&self, id: Uuid, forced: bool, now: OffsetDateTime) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE downlinks SET cancel = ?1, next_step_at = ?2 WHERE id = ?3",
            params![if forced { 2 } else { 1 }, ts(now), id.to_string()],
        )?;
        Ok(())
    }

    /// Downlinks with a step or a deadline due at `now`.
    pub fn due_downlinks(&self, now: OffsetDateTime, limit: u64) -> Result<Vec<DownlinkRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "{COLUMNS} WHERE next_step_at IS NOT NULL AND next_step_at <= ?1 ORDER BY next_step_at LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![ts(now), limit as i64], row_from)?;
        rows.map(|r| r?).collect()
    }

    pub fn apply_downlink_changes(&self, changes: &[DownlinkChange]) -> Result<(), StoreError> {
        self.with_tx(|tx| {
            let mut stmt = tx.prepare_cached(
                "UPDATE downlinks SET status = ?1, retry_count = ?2, last_failure_reason = ?3, next_step_at = ?4,
                     modified_at = ?5, cancel = 0
                 WHERE id = ?6",
            )?;
            for c in changes {
                stmt.execute(params![
                    c.status,
                    c.retry_count,
                    c.last_failure_reason,
                    c.next_step_at.map(ts),
                    ts(c.at),
                    c.id.to_string()
                ])?;
            }
            Ok(())
        })
    }
}
