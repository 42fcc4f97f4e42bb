//! Two moments of a module's fleet compared: per device, the state it had at each (from the
//! states and the history of their changes, `state_history`), what happened between (moved
//! forward, went back, failed, stayed stuck, changed otherwise, nothing), and the matrix of
//! from-status x to-status with counts. The app keeps the last comparison's devices
//! (`compared`), so that a cell opens the device table filtered to exactly those devices.
//!
//! What a moment's state is: a device's state at `t` is the one it left first after `t` (the
//! oldest history row with `left_at > t`), or, when it has not changed since, the state held now.
//! A device first seen after `t` was not there (`new`); one whose kept history (the newest
//! [`HISTORY_KEPT`] changes) does not reach back to `t` is `unknown`. A device the service
//! stopped listing is gone from the states with its history, so it is not counted.
//!
//! Stuck: a device with a target it has not reached (current version differs), whose state did
//! not change between the two moments, and whose status is older than the threshold at the
//! second moment. This needs no list of the service's statuses (the reference shows none).

use std::collections::BTreeMap;

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::rollout::compare_versions;
use super::{ms_to_text, now_ms, to_ms, FleetDb, FleetError, Result, Scope, HISTORY_KEPT, NO_STATUS};
use crate::filters::parse_time;

/// The longest stuck threshold accepted: ten years, in hours.
pub const MAX_STUCK_HOURS: f64 = 87_600.0;
/// The stuck threshold when none was chosen for a module.
pub const DEFAULT_STUCK_HOURS: f64 = 24.0;
/// The from-status of a device not yet seen at the first moment.
pub const NOT_SEEN: &str = "(not seen)";
/// The from-status of a device whose kept history does not reach back to the first moment.
pub const NOT_KEPT: &str = "(not kept)";

/// What is compared: a module between two moments (RFC 3339, or `2026-01-05 08:00` in UTC;
/// `to` absent: now), with the stuck threshold in hours.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CompareRequest {
    pub module_id: String,
    pub from: String,
    pub to: Option<String>,
    pub stuck_hours: f64,
}

/// What happened to a device between the two moments.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum Movement {
    /// Its current version rose (in the console's order of versions), or it reported one for the
    /// first time.
    Forward,
    /// Its current version fell.
    Back,
    /// It failed (its status became FAILED) without its version changing.
    Failed,
    /// Nothing changed, it has not reached its target, and its status is older than the threshold.
    Stuck,
    /// Something else changed (a target set, a status moved on).
    Changed,
    Unchanged,
    /// First seen after the first moment.
    New,
    /// Its kept history does not reach back to the first moment.
    Unknown,
}

impl Movement {
    pub const ALL: [Movement; 8] = [
        Movement::Forward,
        Movement::Back,
        Movement::Failed,
        Movement::Stuck,
        Movement::Changed,
        Movement::Unchanged,
        Movement::New,
        Movement::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Movement::Forward => "forward",
            Movement::Back => "back",
            Movement::Failed => "failed",
            Movement::Stuck => "stuck",
            Movement::Changed => "changed",
            Movement::Unchanged => "unchanged",
            Movement::New => "new",
            Movement::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MovementCount {
    pub movement: Movement,
    pub count: u32,
}

/// One cell of the matrix: the devices that were in `from_status` at the first moment and in
/// `to_status` at the second ("none": no status; [`NOT_SEEN`], [`NOT_KEPT`]).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CompareCell {
    pub from_status: String,
    pub to_status: String,
    pub count: u32,
}

/// A comparison of two moments of one module.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub module_id: String,
    pub module_name: String,
    pub from: String,
    pub to: String,
    pub stuck_hours: f64,
    /// Devices there at the second moment.
    pub devices: u32,
    /// Every movement, in [`Movement::ALL`]'s order, zero counts included.
    pub movements: Vec<MovementCount>,
    /// The rows and columns of the matrix, the most devices first.
    pub from_statuses: Vec<String>,
    pub to_statuses: Vec<String>,
    /// The cells with devices.
    pub cells: Vec<CompareCell>,
    /// The module's first snapshot: the history starts there.
    pub history_starts: String,
}

/// A device's state as compared.
#[derive(Debug, Clone, PartialEq, Default)]
struct Seen {
    current: Option<String>,
    target: Option<String>,
    status: Option<String>,
    details: Option<String>,
    status_at: Option<i64>,
    target_at: Option<i64>,
}

impl Seen {
    fn status_key(&self) -> String {
        self.status.clone().unwrap_or_else(|| NO_STATUS.to_owned())
    }
}

/// The request's moments in ms, checked: `from` before `to`, neither later than now, the
/// threshold a positive number of hours; the first rule broken is named by its field.
fn moments(req: &CompareRequest, now: i64) -> Result<(i64, i64)> {
    let from = parse_time("from", Some(&req.from))?
        .ok_or_else(|| FleetError::invalid("from", "is required: the first moment to compare"))?;
    let to = match parse_time("to", req.to.as_deref())? {
        Some(t) => to_ms(t),
        None => now,
    };
    let from = to_ms(from);
    if to > now {
        return Err(FleetError::invalid("to", "must not be later than now"));
    }
    if from >= to {
        return Err(FleetError::invalid("from", "must be earlier than `to`"));
    }
    check_hours(req.stuck_hours)?;
    Ok((from, to))
}

/// The stuck threshold's rule, named as `stuckHours`: hours above 0, at most [`MAX_STUCK_HOURS`].
pub fn check_hours(hours: f64) -> Result<f64> {
    if hours.is_finite() && hours > 0.0 && hours <= MAX_STUCK_HOURS {
        Ok(hours)
    } else {
        Err(FleetError::invalid("stuckHours", format!("must be a number of hours above 0, at most {MAX_STUCK_HOURS}")))
    }
}

/// What happened to one device, from its states at the two moments (`before` `None`: not seen).
fn movement(before: Option<&Seen>, after: &Seen, to: i64, stuck_ms: i64) -> Movement {
    let Some(before) = before else { return Movement::New };
    match (&before.current, &after.current) {
        (Some(a), Some(b)) if a != b => match compare_versions(b, a) {
            std::cmp::Ordering::Greater => return Movement::Forward,
            std::cmp::Ordering::Less => return Movement::Back,
            std::cmp::Ordering::Equal => {}
        },
        (None, Some(_)) => return Movement::Forward,
        _ => {}
    }
    if before == after {
        let reached = after.target.is_none() || after.current == after.target;
        let since = after.status_at.or(after.target_at);
        return match since {
            Some(at) if !reached && to - at > stuck_ms => Movement::Stuck,
            _ => Movement::Unchanged,
        };
    }
    if after.status.as_deref() == Some("FAILED") {
        return Movement::Failed;
    }
    Movement::Changed
}

/// Compares two moments of a module. With `keep`, each device's cell and movement replace the
/// scope's last comparison (what [`ComparedCell`] filters the device table by).
pub fn compare(db: &FleetDb, scope: Scope, req: &CompareRequest, keep: bool) -> Result<Comparison> {
    let now = now_ms();
    let (from, to) = moments(req, now)?;
    let stuck_ms = (req.stuck_hours * 3_600_000.0) as i64;
    let module = req.module_id.trim();
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    let first: Option<i64> = tx.query_row(
        "SELECT min(taken_at) FROM snapshots WHERE scope = ?1 AND module_id = ?2",
        params![scope.0, module],
        |r| r.get(0),
    )?;
    let Some(first) = first else {
        return Err(FleetError::invalid("moduleId", format!("no history of module {module} is kept; scan first")));
    };
    if from < first {
        return Err(FleetError::invalid(
            "from",
            format!("must not be earlier than {}, when this module's history starts", ms_to_text(first)),
        ));
    }
    let module_name: String = tx
        .query_row("SELECT name FROM modules WHERE scope = ?1 AND module_id = ?2", params![scope.0, module], |r| {
            r.get(0)
        })
        .optional()?
        .unwrap_or_else(|| module.to_owned());

    if keep {
        tx.execute("DELETE FROM compared WHERE scope = ?1", [scope.0])?;
    }
    let mut movements: BTreeMap<Movement, u32> = Movement::ALL.iter().map(|m| (*m, 0)).collect();
    let mut cells: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut devices = 0u32;
    {
        // The module's states and the changes after `from`, both in device order, walked side
        // by side: memory stays the same whatever the number of devices.
        let mut states = tx.prepare(
            "SELECT device_id, current, target, status, details, status_at, target_at, seen_at
             FROM states WHERE scope = ?1 AND module_id = ?2 ORDER BY device_id",
        )?;
        let mut history = tx.prepare(
            "SELECT device_id, left_at, current, target, status, details, status_at, target_at
             FROM state_history WHERE scope = ?1 AND module_id = ?2 AND left_at > ?3 ORDER BY device_id, id",
        )?;
        // How many changes a device keeps and the oldest: whether its history was cut.
        let mut kept = tx.prepare_cached(
            "SELECT count(*), min(left_at) FROM state_history WHERE scope = ?1 AND device_id = ?2 AND module_id = ?3",
        )?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO compared (scope, module_id, device_id, from_status, to_status, movement)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let seen = |r: &rusqlite::Row<'_>, at: usize| -> rusqlite::Result<Seen> {
            Ok(Seen {
                current: r.get(at)?,
                target: r.get(at + 1)?,
                status: r.get(at + 2)?,
                details: r.get(at + 3)?,
                status_at: r.get(at + 4)?,
                target_at: r.get(at + 5)?,
            })
        };
        let mut changes = history.query(params![scope.0, module, from])?;
        let next_change = |changes: &mut rusqlite::Rows<'_>| -> rusqlite::Result<Option<(String, i64, Seen)>> {
            match changes.next()? {
                Some(r) => Ok(Some((r.get(0)?, r.get(1)?, seen(r, 2)?))),
                None => Ok(None),
            }
        };
        let mut change = next_change(&mut changes)?;
        let mut rows = states.query(params![scope.0, module])?;
        while let Some(r) = rows.next()? {
            let device: String = r.get(0)?;
            let seen_at: Option<i64> = r.get(7)?;
            let now_state = seen(r, 1)?;
            // This device's changes after `from`: the first is its state then, the first after
            // `to` its state at `to` (none: its state now).
            while change.as_ref().is_some_and(|(d, _, _)| *d < device) {
                change = next_change(&mut changes)?;
            }
            let (mut at_from, mut at_to) = (None::<Seen>, None::<Seen>);
            while let Some((d, left_at, state)) = change.take() {
                if d != device {
                    change = Some((d, left_at, state));
                    break;
                }
                if at_to.is_none() && left_at > to {
                    at_to = Some(state.clone());
                }
                if at_from.is_none() {
                    at_from = Some(state);
                }
                change = next_change(&mut changes)?;
            }
            if seen_at.is_some_and(|s| s > to) {
                continue; // not there at the second moment
            }
            let cut = match at_from {
                Some(_) => {
                    let (n, oldest): (i64, Option<i64>) =
                        kept.query_row(params![scope.0, device, module], |r| Ok((r.get(0)?, r.get(1)?)))?;
                    n as usize >= HISTORY_KEPT && oldest.is_some_and(|o| o > from)
                }
                None => false,
            };
            let after = at_to.unwrap_or_else(|| now_state.clone());
            let before = at_from.unwrap_or(now_state);
            let (m, from_status) = if seen_at.is_some_and(|s| s > from) {
                (Movement::New, NOT_SEEN.to_owned())
            } else if cut {
                (Movement::Unknown, NOT_KEPT.to_owned())
            } else {
                (movement(Some(&before), &after, to, stuck_ms), before.status_key())
            };
            let to_status = after.status_key();
            devices += 1;
            *movements.entry(m).or_default() += 1;
            if keep {
                insert.execute(params![scope.0, module, device, from_status, to_status, m.as_str()])?;
            }
            *cells.entry((from_status, to_status)).or_default() += 1;
        }
    }
    tx.commit()?;

    let ordered = |side: fn(&(String, String)) -> &String| -> Vec<String> {
        let mut totals: BTreeMap<&String, u32> = BTreeMap::new();
        for (k, n) in &cells {
            *totals.entry(side(k)).or_default() += n;
        }
        let mut v: Vec<(&String, u32)> = totals.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v.into_iter().map(|(k, _)| k.clone()).collect()
    };
    let from_statuses = ordered(|k| &k.0);
    let to_statuses = ordered(|k| &k.1);
    Ok(Comparison {
        module_id: module.to_owned(),
        module_name,
        from: ms_to_text(from),
        to: ms_to_text(to),
        stuck_hours: req.stuck_hours,
        devices,
        movements: Movement::ALL.iter().map(|m| MovementCount { movement: *m, count: movements[m] }).collect(),
        from_statuses,
        to_statuses,
        cells: cells
            .into_iter()
            .map(|((from_status, to_status), count)| CompareCell { from_status, to_status, count })
            .collect(),
        history_starts: ms_to_text(first),
    })
}

/// The device table's filter to the devices of the last comparison kept: a cell (either status
/// or both) and/or a movement.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct ComparedCell {
    pub from_status: Option<String>,
    pub to_status: Option<String>,
    pub movement: Option<Movement>,
}

impl ComparedCell {
    /// The condition on `s` (the states) and its arguments.
    pub(crate) fn condition(&self) -> (String, Vec<rusqlite::types::Value>) {
        use rusqlite::types::Value;
        let mut sql = String::from(
            " AND EXISTS (SELECT 1 FROM compared c WHERE c.scope = s.scope AND c.module_id = s.module_id
                          AND c.device_id = s.device_id",
        );
        let mut args = Vec::new();
        for (column, value) in [
            ("c.from_status", self.from_status.clone()),
            ("c.to_status", self.to_status.clone()),
            ("c.movement", self.movement.map(|m| m.as_str().to_owned())),
        ] {
            if let Some(v) = value {
                sql.push_str(&format!(" AND {column} = ?"));
                args.push(Value::Text(v));
            }
        }
        sql.push(')');
        (sql, args)
    }
}

/// The stuck threshold of a module (hours), as set or [`DEFAULT_STUCK_HOURS`].
pub fn stuck_hours(db: &FleetDb, module_id: &str) -> Result<f64> {
    Ok(db
        .setting(&format!("stuck-hours:{module_id}"))?
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|h| check_hours(*h).is_ok())
        .unwrap_or(DEFAULT_STUCK_HOURS))
}

/// Sets a module's stuck threshold.
pub fn set_stuck_hours(db: &FleetDb, module_id: &str, hours: f64) -> Result<()> {
    check_hours(hours)?;
    if module_id.trim().is_empty() || module_id.len() > 100 {
        return Err(FleetError::invalid("moduleId", "must be a module id"));
    }
    db.set_setting(&format!("stuck-hours:{module_id}"), &hours.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(current: &str, target: Option<&str>, status: Option<&str>, status_at: i64) -> Seen {
        Seen {
            current: Some(current.into()),
            target: target.map(Into::into),
            status: status.map(Into::into),
            details: None,
            status_at: Some(status_at),
            target_at: None,
        }
    }

    #[test]
    fn each_kind_of_change_is_named() {
        let h = 3_600_000;
        let old = seen("1.0.0", Some("1.1.0"), Some("DOWNLOADING"), 0);
        assert_eq!(
            movement(Some(&old), &seen("1.1.0", Some("1.1.0"), Some("SUCCEEDED"), h), 10 * h, h),
            Movement::Forward
        );
        assert_eq!(
            movement(Some(&old), &seen("0.9.0", Some("1.1.0"), Some("SUCCEEDED"), h), 10 * h, h),
            Movement::Back
        );
        // 1.10.0 is after 1.9.0 (not by text)
        let nine = seen("1.9.0", None, None, 0);
        assert_eq!(movement(Some(&nine), &seen("1.10.0", None, None, 0), h, h), Movement::Forward);
        assert_eq!(movement(Some(&old), &seen("1.0.0", Some("1.1.0"), Some("FAILED"), h), 10 * h, h), Movement::Failed);
        assert_eq!(
            movement(Some(&old), &seen("1.0.0", Some("1.1.0"), Some("INSTALLING"), h), 10 * h, h),
            Movement::Changed
        );
        // Unchanged and older than the threshold, target not reached: stuck; younger: unchanged.
        assert_eq!(movement(Some(&old), &old, 2 * h + 1, 2 * h), Movement::Stuck);
        assert_eq!(movement(Some(&old), &old, 2 * h, 2 * h), Movement::Unchanged);
        // Reached its target, or none: never stuck.
        let done = seen("1.1.0", Some("1.1.0"), Some("SUCCEEDED"), 0);
        assert_eq!(movement(Some(&done), &done, 100 * h, h), Movement::Unchanged);
        let idle = seen("1.1.0", None, None, 0);
        assert_eq!(movement(Some(&idle), &idle, 100 * h, h), Movement::Unchanged);
        assert_eq!(movement(None, &done, h, h), Movement::New);
    }

    #[test]
    fn moments_are_checked_and_the_broken_rule_named() {
        let now = to_ms(time::macros::datetime!(2026-11-27 12:00 UTC));
        let req = |from: &str, to: Option<&str>, hours: f64| CompareRequest {
            module_id: "m".into(),
            from: from.into(),
            to: to.map(Into::into),
            stuck_hours: hours,
        };
        let field = |r: Result<(i64, i64)>| match r {
            Err(FleetError::Invalid(f)) => f[0].field.clone(),
            other => panic!("{other:?}"),
        };
        assert!(moments(&req("2026-11-27T10:00:00Z", None, 24.0), now).is_ok());
        assert_eq!(field(moments(&req("", None, 24.0), now)), "from");
        assert_eq!(field(moments(&req("yesterday", None, 24.0), now)), "from");
        assert_eq!(field(moments(&req("2026-11-27T11:00:00Z", Some("2026-11-27T10:00:00Z"), 24.0), now)), "from");
        assert_eq!(field(moments(&req("2026-11-27T10:00:00Z", Some("2026-11-28T10:00:00Z"), 24.0), now)), "to");
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e9] {
            assert_eq!(field(moments(&req("2026-11-27T10:00:00Z", None, bad), now)), "stuckHours");
        }
    }

    mod on_a_database {
        use super::super::*;
        use crate::fleet::query::{self, DeviceQuery};
        use crate::fleet::states::write_page;
        use crate::fleet::ScopeKey;
        use dcs_api::model::FirmwareState;
        use serde_json::json;
        use uuid::Uuid;

        const MODULE: Uuid = Uuid::from_u128(9);

        fn state(device: u128, current: &str, target: Option<&str>, status: Option<&str>, at: &str) -> FirmwareState {
            serde_json::from_value(json!({
                "moduleId": MODULE, "deviceId": Uuid::from_u128(device), "currentFirmwareVersion": current,
                "targetFirmwareVersion": target, "firmwareUpdateStatus": status,
                "firmwareUpdateStatusModifiedAt": at,
            }))
            .unwrap()
        }

        fn pause() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }

        #[test]
        fn two_moments_are_told_apart_device_by_device_and_a_cell_opens_its_devices() {
            let db = FleetDb::in_memory().unwrap();
            let scope = db.scope(&ScopeKey::new("p", "http://x", None)).unwrap();
            let old = "2026-01-01T00:00:00Z";
            let recent = dcs_api::model::timestamp::format_millis(time::OffsetDateTime::now_utc());
            write_page(
                &db,
                scope,
                &[
                    state(1, "1.0.0", Some("1.1.0"), Some("DOWNLOADING"), &recent),
                    state(2, "1.0.0", Some("1.1.0"), Some("DOWNLOADING"), &recent),
                    state(3, "1.0.0", Some("1.1.0"), Some("DOWNLOADING"), old),
                    state(4, "1.0.0", None, None, old),
                    state(5, "1.2.0", Some("1.0.0"), Some("DOWNLOADING"), &recent),
                ],
            )
            .unwrap();
            let m = MODULE.to_string();
            let req = |from: i64, to: i64| CompareRequest {
                module_id: m.clone(),
                from: ms_to_text(from),
                to: Some(ms_to_text(to)),
                stuck_hours: 24.0,
            };
            pause();
            // No history yet before the first snapshot: refused, naming `from`.
            let t0 = now_ms();
            pause();
            query::snapshot(&db, scope, now_ms()).unwrap();
            pause();
            match compare(&db, scope, &req(t0, now_ms()), false) {
                Err(FleetError::Invalid(f)) => assert_eq!(f[0].field, "from"),
                other => panic!("{other:?}"),
            }
            pause();
            let t1 = now_ms();
            pause();
            write_page(
                &db,
                scope,
                &[
                    state(1, "1.1.0", Some("1.1.0"), Some("SUCCEEDED"), &recent),
                    state(2, "1.0.0", Some("1.1.0"), Some("FAILED"), &recent),
                    state(5, "1.0.0", Some("1.0.0"), Some("SUCCEEDED"), &recent),
                    state(6, "1.0.0", None, None, old),
                ],
            )
            .unwrap();
            pause();
            let t2 = now_ms();
            pause();
            // After the second moment device 1 goes back: the comparison still sees 1.1.0 at t2.
            write_page(&db, scope, &[state(1, "1.0.0", Some("1.0.0"), Some("SUCCEEDED"), &recent)]).unwrap();

            let c = compare(&db, scope, &req(t1, t2), true).unwrap();
            let count = |mv: Movement| c.movements.iter().find(|x| x.movement == mv).unwrap().count;
            assert_eq!(c.devices, 6);
            assert_eq!(count(Movement::Forward), 1, "{c:?}");
            assert_eq!(count(Movement::Back), 1);
            assert_eq!(count(Movement::Failed), 1);
            assert_eq!(count(Movement::Stuck), 1, "device 3: old status, target not reached");
            assert_eq!(count(Movement::Unchanged), 1, "device 4: no target");
            assert_eq!(count(Movement::New), 1);
            let cell =
                |f: &str, t: &str| c.cells.iter().find(|x| x.from_status == f && x.to_status == t).map(|x| x.count);
            assert_eq!(cell("DOWNLOADING", "SUCCEEDED"), Some(2));
            assert_eq!(cell("DOWNLOADING", "FAILED"), Some(1));
            assert_eq!(cell("DOWNLOADING", "DOWNLOADING"), Some(1));
            assert_eq!(cell(NOT_SEEN, "none"), Some(1));
            assert_eq!(c.from_statuses[0], "DOWNLOADING");

            // A cell opens exactly its devices; a movement too; with another filter both apply.
            let q = |cell: ComparedCell| DeviceQuery { compared: Some(cell), ..Default::default() };
            let forward = q(ComparedCell { movement: Some(Movement::Forward), ..Default::default() });
            let rows = query::rows(&db, scope, &forward, None, 0, 10).unwrap();
            assert_eq!(
                rows.iter().map(|r| r.device_id.clone()).collect::<Vec<_>>(),
                vec![Uuid::from_u128(1).to_string()]
            );
            let to_succeeded = q(ComparedCell {
                from_status: Some("DOWNLOADING".into()),
                to_status: Some("SUCCEEDED".into()),
                movement: None,
            });
            assert_eq!(query::count(&db, scope, &to_succeeded, None).unwrap(), 2);
            let mut with_version = to_succeeded.clone();
            with_version.version = Some("1.0.0".into());
            assert_eq!(query::count(&db, scope, &with_version, None).unwrap(), 2, "devices 1 and 5 run 1.0.0 now");

            // Comparing without keeping leaves the kept devices as they were.
            let again = compare(&db, scope, &req(t1, now_ms()), false).unwrap();
            assert_ne!(again, c);
            assert_eq!(query::count(&db, scope, &forward, None).unwrap(), 1);

            // The stuck filter of the device table sees device 3 (and device 2, failed short of
            // its target but with a recent status, is not stuck yet).
            let stuck = DeviceQuery { stuck_before: Some(ms_to_text(now_ms() - 3_600_000)), ..Default::default() };
            let rows = query::rows(&db, scope, &stuck, None, 0, 10).unwrap();
            assert_eq!(
                rows.iter().map(|r| r.device_id.clone()).collect::<Vec<_>>(),
                vec![Uuid::from_u128(3).to_string()]
            );
            let summary = crate::fleet::stuck::summary(&db, scope, &m, now_ms()).unwrap();
            assert_eq!((summary.devices, summary.by_status[0].key.as_str()), (1, "DOWNLOADING"));
            assert_eq!(summary.by_target[0].key, "1.1.0");
        }

        #[test]
        fn a_history_that_does_not_reach_back_is_unknown_not_guessed() {
            let db = FleetDb::in_memory().unwrap();
            let scope = db.scope(&ScopeKey::new("p", "http://x", None)).unwrap();
            let at = "2026-11-01T00:00:00Z";
            write_page(&db, scope, &[state(1, "1.0.0", None, None, at), state(2, "1.0.0", None, None, at)]).unwrap();
            query::snapshot(&db, scope, now_ms()).unwrap();
            pause();
            let t1 = now_ms();
            pause();
            for i in 0..(HISTORY_KEPT + 2) {
                write_page(&db, scope, &[state(1, &format!("1.0.{}", i + 1), None, None, at)]).unwrap();
            }
            let req =
                CompareRequest { module_id: MODULE.to_string(), from: ms_to_text(t1), to: None, stuck_hours: 1.0 };
            let c = compare(&db, scope, &req, false).unwrap();
            let count = |mv: Movement| c.movements.iter().find(|x| x.movement == mv).unwrap().count;
            assert_eq!((count(Movement::Unknown), count(Movement::Unchanged), count(Movement::Forward)), (1, 1, 0));
            assert!(c.cells.iter().any(|x| x.from_status == NOT_KEPT));
        }

        #[test]
        fn the_stuck_threshold_is_kept_per_module_and_checked() {
            let db = FleetDb::in_memory().unwrap();
            assert_eq!(stuck_hours(&db, "m").unwrap(), DEFAULT_STUCK_HOURS);
            set_stuck_hours(&db, "m", 6.5).unwrap();
            assert_eq!((stuck_hours(&db, "m").unwrap(), stuck_hours(&db, "n").unwrap()), (6.5, DEFAULT_STUCK_HOURS));
            for bad in [0.0, -2.0, f64::NAN, 1e12] {
                assert!(
                    matches!(set_stuck_hours(&db, "m", bad), Err(FleetError::Invalid(f)) if f[0].field == "stuckHours")
                );
            }
            assert_eq!(stuck_hours(&db, "m").unwrap(), 6.5, "a refused value changes nothing");
        }
    }
}
