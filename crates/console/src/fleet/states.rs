//! Writing firmware states into the fleet database: the one place that binds a state's columns,
//! for scans, first scans and rollouts alike.

use dcs_api::model::FirmwareState;
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{to_ms, FleetDb, Result, Scope};

/// This computer's clock in ms since the epoch, in SQL: when a state was first seen (`seen_at`).
pub(crate) const NOW_MS: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// Writes states in one transaction, touching only rows that differ from what the database
/// holds (an unchanged state costs one lookup). Answers how many states were new or changed.
pub fn write_page(db: &FleetDb, scope: Scope, items: &[FirmwareState]) -> Result<u32> {
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    let changed = write_states(&tx, scope, items)?;
    tx.commit()?;
    Ok(changed)
}

/// Writes states inside the caller's transaction (what [`write_page`] does in its own), so a
/// caller can record them together with what they mean to it.
pub(crate) fn write_states(tx: &rusqlite::Transaction<'_>, scope: Scope, items: &[FirmwareState]) -> Result<u32> {
    let mut changed = 0u32;
    {
        let mut upsert = tx.prepare_cached(&format!(
            "INSERT INTO states (scope, module_id, device_id, spec_id, client_id, project_id, current, target,
                                 target_at, status, details, status_at, seen_at)
              VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, {NOW_MS})
             ON CONFLICT (scope, module_id, device_id) DO UPDATE SET
                 spec_id = excluded.spec_id, client_id = excluded.client_id, project_id = excluded.project_id,
                 current = excluded.current, target = excluded.target, target_at = excluded.target_at,
                 status = excluded.status, details = excluded.details, status_at = excluded.status_at
             WHERE states.current IS NOT excluded.current OR states.target IS NOT excluded.target
                OR states.status IS NOT excluded.status OR states.status_at IS NOT excluded.status_at
                OR states.target_at IS NOT excluded.target_at OR states.details IS NOT excluded.details
                OR states.spec_id IS NOT excluded.spec_id OR states.client_id IS NOT excluded.client_id
                OR states.project_id IS NOT excluded.project_id"
        ))?;
        for s in items {
            changed += upsert.execute(rusqlite::params_from_iter(state_values(scope, s)))? as u32;
        }
    }
    Ok(changed)
}

/// A state's values for the twelve columns `INSERT INTO states (scope, module_id, device_id,
/// spec_id, client_id, project_id, current, target, target_at, status, details, status_at)`
/// lists: every writer of states binds these.
pub(super) fn state_values(scope: Scope, s: &FirmwareState) -> [ToSqlOutput<'_>; 12] {
    fn text(t: Option<&str>) -> ToSqlOutput<'_> {
        t.map_or(ToSqlOutput::Owned(Value::Null), |t| ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())))
    }
    let null = || ToSqlOutput::Owned(Value::Null);
    let uuid = |u: Option<Uuid>| u.map_or_else(null, |u| ToSqlOutput::Owned(Value::Text(u.to_string())));
    let ms = |t: Option<OffsetDateTime>| t.map_or_else(null, |t| ToSqlOutput::Owned(Value::Integer(to_ms(t))));
    [
        ToSqlOutput::Owned(Value::Integer(scope.0)),
        uuid(Some(s.module_id)),
        uuid(Some(s.device_id)),
        uuid(s.device_specification_id),
        uuid(s.client_id),
        uuid(s.project_id),
        text(s.current_firmware_version.as_deref()),
        text(s.target_firmware_version.as_deref()),
        ms(s.target_firmware_version_modified_at),
        text(s.firmware_update_status.as_ref().map(|st| st.as_str())),
        text(s.firmware_update_status_details.as_deref()),
        ms(s.firmware_update_status_modified_at),
    ]
}
