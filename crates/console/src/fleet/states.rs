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
/// [`HISTORY_KEPT`] kept), and its counts are moved in memory ([`Tally`]) and written with
/// the states. So the counts and the history change in the transaction that changes the states,
/// and no trigger on the states makes SQLite journal each statement's pages.
/// Writes the states a set-target call answered, but not over newer ones: another process (a
/// driver waiting for the rollout's lease, the app) may have read the device since the call was
/// answered, and its state (later by the service's clock, in its status or target time) is kept.
/// Otherwise an answer's PENDING overwrote a SUCCEEDED that no incremental refresh reads again
/// (it is behind the watermark), and the rollout waited for it for ever.
pub(crate) fn write_answers(tx: &rusqlite::Transaction<'_>, scope: Scope, items: &[FirmwareState]) -> Result<u32> {
    let mut stored = tx.prepare_cached(
        "SELECT status_at, target_at FROM states WHERE scope = ?1 AND module_id = ?2 AND device_id = ?3",
    )?;
    let mut newer = Vec::with_capacity(items.len());
    for s in items {
        let held: Option<(Option<i64>, Option<i64>)> = stored
            .query_row(rusqlite::params![scope.0, s.module_id.to_string(), s.device_id.to_string()], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let later = |held: Option<i64>, answered: Option<OffsetDateTime>| match (held, answered) {
            (Some(h), Some(a)) => h > to_ms(a),
            _ => false,
        };
        let stale = held.is_some_and(|(status_at, target_at)| {
            later(status_at, s.firmware_update_status_modified_at)
                || later(target_at, s.target_firmware_version_modified_at)
        });
        if !stale {
            newer.push(s.clone());
        }
    }
    write_states(tx, scope, &newer)
}

pub(crate) fn write_states(tx: &rusqlite::Transaction<'_>, scope: Scope, items: &[FirmwareState]) -> Result<u32> {
    let now = now_ms();
    let all: Vec<_> = items.iter().map(|s| state_values(scope, s)).collect();
    // What each state written was before (none if it was new); unchanged states are left out.
    let mut written: Vec<(usize, Option<Held>)> = Vec::new();
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
        for (i, values) in all.iter().enumerate() {
            let new = columns(values);
            let old = held.query_row(rusqlite::params_from_iter(&values[..3]), read_held).optional()?;
            match &old {
                Some(old) if refs(old) == new => continue,
                Some(old) => {
                    update.execute(rusqlite::params_from_iter(values))?;
                    let [_, _, _, current, target, target_at, status, details, status_at] = old;
                    if HISTORY_COLUMNS.iter().any(|&i| ValueRef::from(&old[i]) != new[i]) {
                        let key = &values[..3];
                        left.execute(rusqlite::params![
                            key[0], key[1], key[2], current, target, status, details, status_at, target_at, now
                        ])?;
                        trim.execute(rusqlite::params![key[0], key[1], key[2], HISTORY_KEPT as i64])?;
                    }
                }
                None => {
                    insert.execute(rusqlite::params_from_iter(values))?;
                }
            }
            written.push((i, old));
        }
    }
    let mut tally = Tally::default();
    for (i, old) in &written {
        tally.moved(module(&all[*i]), old.as_ref().map(refs), Some(columns(&all[*i])));
    }
    tally.write(tx, scope)?;
    Ok(written.len() as u32)
}

/// Forgets the states of `scope` at these (module, device) keys, with their history and counts,
/// in one transaction: how a full scan forgets the states the service no longer lists. Answers
/// how many were there.
pub fn remove_states(db: &FleetDb, scope: Scope, keys: &[(Uuid, Uuid)]) -> Result<u32> {
    let mut conn = db.conn();
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Each state removed, with its module.
    let mut removed: Vec<(String, Held)> = Vec::new();
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
                removed.push((module, old));
            }
        }
    }
    let mut tally = Tally::default();
    for (module, old) in &removed {
        tally.moved(module, Some(refs(old)), None);
    }
    tally.write(&tx, scope)?;
    tx.commit()?;
    Ok(removed.len() as u32)
}

/// The columns of a state besides its key, in the order [`state_values`] binds them from the
/// fourth on.
const HELD_COLUMNS: &str = "spec_id, client_id, project_id, current, target, target_at, status, details, status_at";

/// The columns (indexes into [`HELD_COLUMNS`]) whose change leaves what the state was in the
/// history: its version, target, status and details (`current`, `target`, `status`, `details`).
const HISTORY_COLUMNS: [usize; 4] = [3, 4, 6, 7];

/// A state's columns besides its key ([`HELD_COLUMNS`]), as the database held them.
type Held = [Value; 9];

fn read_held(r: &rusqlite::Row<'_>) -> rusqlite::Result<Held> {
    let mut out: Held = std::array::from_fn(|_| Value::Null);
    for (i, v) in out.iter_mut().enumerate() {
        *v = r.get(i)?;
    }
    Ok(out)
}

/// A state's columns besides its key ([`HELD_COLUMNS`]), borrowed: from what the database held
/// ([`refs`]) or from what is about to be written ([`columns`]), so that the two compare and
/// are counted ([`Tally`]) alike.
pub(super) type Columns<'a> = [ValueRef<'a>; 9];

fn refs(held: &Held) -> Columns<'_> {
    std::array::from_fn(|i| ValueRef::from(&held[i]))
}

/// The columns of a state's values ([`state_values`]) besides its key.
pub(super) fn columns<'a>(values: &'a [ToSqlOutput<'_>; 12]) -> Columns<'a> {
    std::array::from_fn(|i| match &values[3 + i] {
        ToSqlOutput::Borrowed(r) => *r,
        ToSqlOutput::Owned(v) => v.into(),
        _ => ValueRef::Null,
    })
}

/// The module of a state's values ([`state_values`]), as its text.
pub(super) fn module<'a>(values: &'a [ToSqlOutput<'_>; 12]) -> &'a str {
    match &values[1] {
        ToSqlOutput::Owned(Value::Text(m)) => m,
        _ => unreachable!("state_values binds the module as a text"),
    }
}

/// The groupings' names in `state_counts` (`dim`), as `COUNTED` (mod.rs) lists them.
const DIMS: [&str; 2] = ["g", "o"];

/// A state's values in one grouping: k1 to k4 in `state_counts`, `None` for a value absent
/// (written as the empty blob, as `recount_sql` counts it).
type Grouping<'a> = [Option<&'a str>; 4];

/// A state's two groupings ([`DIMS`]), as `COUNTED` (mod.rs) groups in SQL: `g` by current
/// version, target, status and (for failed states) details; `o` by specification and owner.
fn groupings<'a>(c: &Columns<'a>) -> [Grouping<'a>; 2] {
    // Only texts and nulls are written to these columns (state_values).
    fn text(v: ValueRef<'_>) -> Option<&str> {
        match v {
            ValueRef::Text(t) => std::str::from_utf8(t).ok(),
            _ => None,
        }
    }
    let [spec, client, _project, current, target, _target_at, status, details, _status_at] = *c;
    let details = if text(status) == Some("FAILED") { text(details) } else { Some("") };
    [[text(current), text(target), text(status), details], [text(spec), text(client), Some(""), Some("")]]
}

/// The hash of the tallies' maps: keyed by values the service sent, so seeded at random as the
/// standard one is, but several times faster on a state's short texts (a first scan of a
/// million states tallies each).
pub(super) type Hasher = foldhash::fast::RandomState;

/// Counts moved by states written, keyed by values borrowed from those states: a state counts
/// once in each grouping of `COUNTED`, and these are its groupings, computed from its columns
/// here instead of in SQL. What every writer of states tallies with, before writing the counts
/// with the states ([`Tally::write`]) or keeping them past its states ([`Counts`]).
#[derive(Default)]
pub(super) struct Tally<'a>(HashMap<(u8, &'a str, Grouping<'a>), i64, Hasher>);

impl<'a> Tally<'a> {
    /// Moves the counts of a state of `module` from what it was (`old`, none if it is new) to
    /// what it is (`new`, none if it is gone): only the groupings whose values differ.
    pub(super) fn moved(&mut self, module: &'a str, old: Option<Columns<'a>>, new: Option<Columns<'a>>) {
        self.moved_by(module, old, new, 1);
    }

    /// As [`Tally::moved`], for `n` states alike.
    pub(super) fn moved_by(&mut self, module: &'a str, old: Option<Columns<'a>>, new: Option<Columns<'a>>, n: i64) {
        let (old, new) = (old.as_ref().map(groupings), new.as_ref().map(groupings));
        for g in 0..2 {
            let (from, to) = (old.map(|o| o[g]), new.map(|n| n[g]));
            if from == to {
                continue;
            }
            for (key, by) in [(from, -n), (to, n)] {
                if let Some(key) = key {
                    *self.0.entry((g as u8, module, key)).or_default() += by;
                }
            }
        }
    }

    /// Adds the counts moved to `state_counts` in `scope`.
    pub(super) fn write(self, tx: &rusqlite::Connection, scope: Scope) -> Result<()> {
        write_counts(tx, scope, self.0.iter().map(|((g, m, k), n)| (*g, *m, *k, *n)))
    }
}

/// Counts moved, kept past the states they were tallied from: a first scan's (first_counts.rs).
#[derive(Default)]
pub(super) struct Counts(HashMap<(u8, String, [Option<String>; 4]), i64, Hasher>);

impl Counts {
    pub(super) fn add(&mut self, tally: Tally<'_>) {
        for ((g, module, k), n) in tally.0 {
            *self.0.entry((g, module.to_owned(), k.map(|v| v.map(str::to_owned)))).or_default() += n;
        }
    }

    /// Adds the counts to `state_counts` in `scope`.
    pub(super) fn write(&self, tx: &rusqlite::Connection, scope: Scope) -> Result<()> {
        write_counts(
            tx,
            scope,
            self.0.iter().map(|((g, m, k), n)| (*g, m.as_str(), k.each_ref().map(Option::as_deref), *n)),
        )
    }
}

/// Adds counts moved to `state_counts` (a count that reaches zero is deleted by its trigger):
/// the grouping (its index in [`DIMS`]), module, the grouping's values and how far each count moved.
fn write_counts<'a>(
    tx: &rusqlite::Connection,
    scope: Scope,
    moved: impl Iterator<Item = (u8, &'a str, Grouping<'a>, i64)>,
) -> Result<()> {
    let mut upsert = tx.prepare_cached(
        "INSERT INTO state_counts (scope, module_id, dim, k1, k2, k3, k4, n) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT DO UPDATE SET n = n + excluded.n",
    )?;
    let value = |v: Option<&'a str>| ToSqlOutput::Borrowed(v.map_or(ValueRef::Blob(&[]), ValueRef::from));
    for (g, module, [k1, k2, k3, k4], n) in moved {
        if n != 0 {
            upsert.execute(rusqlite::params![
                scope.0,
                module,
                DIMS[usize::from(g)],
                value(k1),
                value(k2),
                value(k3),
                value(k4),
                n
            ])?;
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{from_ms, ScopeKey};
    use dcs_api::model::UpdateStatus as FirmwareUpdateStatus;

    fn state(device: Uuid, module: Uuid, status: FirmwareUpdateStatus, status_at: i64) -> FirmwareState {
        let mut s: FirmwareState =
            serde_json::from_value(serde_json::json!({"moduleId": module, "deviceId": device})).unwrap();
        s.target_firmware_version = Some("2.0.0".into());
        s.target_firmware_version_modified_at = Some(from_ms(1_000));
        s.firmware_update_status = Some(status);
        s.firmware_update_status_modified_at = Some(from_ms(status_at));
        s
    }

    fn status(db: &FleetDb, scope: Scope, device: Uuid) -> Option<String> {
        db.conn()
            .query_row(
                "SELECT status FROM states WHERE scope = ?1 AND device_id = ?2",
                (scope.0, device.to_string()),
                |r| r.get(0),
            )
            .unwrap()
    }

    /// A set-target answer older than what a refresh has read since (another process's, as the
    /// service's clock says) is not written over it; a newer one, or one for a device not held,
    /// is.
    #[test]
    fn an_answer_older_than_the_state_held_is_not_written_over_it() {
        let db = FleetDb::in_memory().unwrap();
        let scope = db.scope(&ScopeKey::new("t", "http://t", None)).unwrap();
        let (device, other, module) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let write = |f: fn(&rusqlite::Transaction<'_>, Scope, &[FirmwareState]) -> Result<u32>, s: FirmwareState| {
            let mut conn = db.conn();
            let tx = conn.transaction().unwrap();
            f(&tx, scope, &[s]).unwrap();
            tx.commit().unwrap();
        };
        write(write_states, state(device, module, FirmwareUpdateStatus::Succeeded, 5_000));
        write(write_answers, state(device, module, FirmwareUpdateStatus::Pending, 2_000));
        assert_eq!(status(&db, scope, device).as_deref(), Some("SUCCEEDED"), "the older answer was written over");
        write(write_answers, state(device, module, FirmwareUpdateStatus::Pending, 9_000));
        assert_eq!(status(&db, scope, device).as_deref(), Some("PENDING"));
        write(write_answers, state(other, module, FirmwareUpdateStatus::Pending, 1));
        assert_eq!(status(&db, scope, other).as_deref(), Some("PENDING"));
    }
}
