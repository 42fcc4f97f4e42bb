//! Writing firmware states into the fleet database: the one place that binds a state's columns,
//! for scans, first scans and rollouts alike.

use std::collections::HashMap;

use dcs_api::model::FirmwareState;
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::OptionalExtension;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{now_ms, to_ms, FleetDb, Result, Scope, HISTORY_KEPT};

/// This computer's clock in ms since the epoch, in SQL: when a state was first seen (`seen_at`).
pub(crate) const NOW_MS: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// Writes states in one transaction, touching only rows that differ from what the database
/// holds (an unchanged state costs one lookup). Answers how many states were new or changed.
pub fn write_page(db: &FleetDb, scope: Scope, items: &[FirmwareState]) -> Result<u32> {
    let mut conn = db.conn();
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let changed = write_states(&tx, scope, items)?;
    tx.commit()?;
    Ok(changed)
}

/// Writes states inside the caller's transaction (what [`write_page`] does in its own), so a
/// caller can record them together with what they mean to it. The transaction must be
/// IMMEDIATE: each state is read before it is written, and a transaction that began by reading
/// cannot write once another connection has written meanwhile (SQLITE_BUSY_SNAPSHOT).
///
/// Each state is read, then inserted or updated only if it differs in a column; a state updated
/// in its version, target, status or details leaves what it was in the history (the newest
/// [`HISTORY_KEPT`] kept), and its counts are moved in memory ([`CountChanges`]) and written with
/// the states. So the counts and the history change in the transaction that changes the states,
/// and no trigger on the states makes SQLite journal each statement's pages.
pub(crate) fn write_states(tx: &rusqlite::Transaction<'_>, scope: Scope, items: &[FirmwareState]) -> Result<u32> {
    let mut changed = 0u32;
    let mut counts = CountChanges::default();
    let now = now_ms();
    {
        let mut left = tx.prepare_cached(
            "INSERT INTO state_history (scope, module_id, device_id, current, target, status, details, status_at,
                                        target_at, left_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        let mut trim = tx.prepare_cached(
            "DELETE FROM state_history
              WHERE scope = ?1 AND device_id = ?3 AND module_id = ?2
                AND id <= (SELECT id FROM state_history WHERE scope = ?1 AND device_id = ?3 AND module_id = ?2
                            ORDER BY id DESC LIMIT 1 OFFSET ?4)",
        )?;
        let mut held = tx.prepare_cached(&format!(
            "SELECT {HELD_COLUMNS} FROM states WHERE scope = ?1 AND module_id = ?2 AND device_id = ?3"
        ))?;
        let mut insert = tx.prepare_cached(&format!(
            "INSERT INTO states (scope, module_id, device_id, spec_id, client_id, project_id, current, target,
                                 target_at, status, details, status_at, seen_at)
              VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, {NOW_MS})"
        ))?;
        let mut update = tx.prepare_cached(
            "UPDATE states SET spec_id = ?4, client_id = ?5, project_id = ?6, current = ?7, target = ?8,
                               target_at = ?9, status = ?10, details = ?11, status_at = ?12
              WHERE scope = ?1 AND module_id = ?2 AND device_id = ?3",
        )?;
        for s in items {
            let values = state_values(scope, s);
            let new: Held = std::array::from_fn(|i| owned(&values[3 + i]));
            let old = held.query_row(rusqlite::params_from_iter(&values[..3]), read_held).optional()?;
            let module = s.module_id.to_string();
            match old {
                Some(old) if old == new => continue,
                Some(old) => {
                    update.execute(rusqlite::params_from_iter(&values))?;
                    counts.moved(scope, &module, Some(&old), Some(&new));
                    let [_, _, _, current, target, target_at, status, details, status_at] = &old;
                    if [3, 4, 6, 7].iter().any(|&i| old[i] != new[i]) {
                        let key = &values[..3];
                        left.execute(rusqlite::params![
                            key[0], key[1], key[2], current, target, status, details, status_at, target_at, now
                        ])?;
                        trim.execute(rusqlite::params![key[0], key[1], key[2], HISTORY_KEPT as i64])?;
                    }
                }
                None => {
                    insert.execute(rusqlite::params_from_iter(&values))?;
                    counts.moved(scope, &module, None, Some(&new));
                }
            }
            changed += 1;
        }
    }
    counts.write(tx)?;
    Ok(changed)
}

/// Forgets the states of `scope` at these (module, device) keys, with their history and counts,
/// in one transaction: how a full scan forgets the states the service no longer lists. Answers
/// how many were there.
pub fn remove_states(db: &FleetDb, scope: Scope, keys: &[(Uuid, Uuid)]) -> Result<u32> {
    let mut conn = db.conn();
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut counts = CountChanges::default();
    let mut removed = 0;
    {
        let mut history =
            tx.prepare_cached("DELETE FROM state_history WHERE scope = ?1 AND module_id = ?2 AND device_id = ?3")?;
        let mut delete = tx.prepare_cached(&format!(
            "DELETE FROM states WHERE scope = ?1 AND module_id = ?2 AND device_id = ?3 RETURNING {HELD_COLUMNS}"
        ))?;
        for (module, device) in keys {
            let module = module.to_string();
            let key = rusqlite::params![scope.0, module, device.to_string()];
            let old = delete.query_row(key, read_held).optional()?;
            history.execute(key)?;
            if let Some(old) = old {
                counts.moved(scope, &module, Some(&old), None);
                removed += 1;
            }
        }
    }
    counts.write(&tx)?;
    tx.commit()?;
    Ok(removed)
}

/// The columns of a state besides its key, in the order [`state_values`] binds them from the
/// fourth on.
const HELD_COLUMNS: &str = "spec_id, client_id, project_id, current, target, target_at, status, details, status_at";

/// A state's columns besides its key ([`HELD_COLUMNS`]), as held or as about to be written.
type Held = [Value; 9];

fn read_held(r: &rusqlite::Row<'_>) -> rusqlite::Result<Held> {
    let mut out: Held = std::array::from_fn(|_| Value::Null);
    for (i, v) in out.iter_mut().enumerate() {
        *v = r.get(i)?;
    }
    Ok(out)
}

fn owned(v: &ToSqlOutput<'_>) -> Value {
    match v {
        ToSqlOutput::Borrowed(r) => (*r).into(),
        ToSqlOutput::Owned(v) => v.clone(),
        _ => Value::Null,
    }
}

/// A state's two groupings ([`CountKey`]), borrowed from its columns.
fn groupings(held: &Held) -> [(&'static str, [Option<&str>; 4]); 2] {
    // Only texts and nulls are written to these columns (state_values).
    fn text(v: &Value) -> Option<&str> {
        match v {
            Value::Text(t) => Some(t.as_str()),
            _ => None,
        }
    }
    let [spec, client, _project, current, target, _target_at, status, details, _status_at] = held;
    let details = if text(status) == Some("FAILED") { text(details) } else { Some("") };
    [("g", [text(current), text(target), text(status), details]), ("o", [text(spec), text(client), Some(""), Some("")])]
}

/// A count's key in `state_counts` besides the scope and module: the grouping (`dim`) and its
/// four values, `None` for a value absent (written as the empty blob, as `recount_sql` counts it).
type CountKey = (&'static str, [Option<String>; 4]);

/// Changes to `state_counts` gathered while states are written, and written with them in one
/// upsert per count that moved: a state counts once in each grouping of `COUNTED` (mod.rs), and
/// these are those groupings, computed from a state's columns here instead of in SQL.
#[derive(Default)]
struct CountChanges(HashMap<(i64, String, CountKey), i64>);

impl CountChanges {
    /// Moves the counts of a state of `module` in `scope` from what it was (`old`, none if it is
    /// new) to what it is (`new`, none if it is gone): only the groupings whose values differ.
    fn moved(&mut self, scope: Scope, module: &str, old: Option<&Held>, new: Option<&Held>) {
        let (old, new) = (old.map(groupings), new.map(groupings));
        for g in 0..2 {
            let (from, to) = (old.as_ref().map(|o| &o[g]), new.as_ref().map(|n| &n[g]));
            if from == to {
                continue;
            }
            for (key, by) in [(from, -1), (to, 1)] {
                if let Some((dim, values)) = key {
                    let values = values.map(|v| v.map(str::to_owned));
                    *self.0.entry((scope.0, module.to_owned(), (dim, values))).or_default() += by;
                }
            }
        }
    }

    /// Adds the changes to `state_counts` (a count that reaches zero is deleted by its trigger).
    fn write(self, tx: &rusqlite::Transaction<'_>) -> Result<()> {
        let mut upsert = tx.prepare_cached(
            "INSERT INTO state_counts (scope, module_id, dim, k1, k2, k3, k4, n) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT DO UPDATE SET n = n + excluded.n",
        )?;
        let value = |v: Option<String>| v.map_or(Value::Blob(Vec::new()), Value::Text);
        for ((scope, module, (dim, [k1, k2, k3, k4])), n) in self.0 {
            if n != 0 {
                upsert.execute(rusqlite::params![scope, module, dim, value(k1), value(k2), value(k3), value(k4), n])?;
            }
        }
        Ok(())
    }
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
