//! Stuck devices: a target set and not reached (the current version differs), and a status
//! (else a target) older than the module's threshold ([`compare::stuck_hours`]). The dashboard
//! flags them with what to do: roll out to only them again, or reset their targets.
//!
//! The definition needs no list of the service's update statuses (the reference shows none):
//! a failed device short of its target counts as stuck as much as one waiting.

use dcs_api::Client;
use rusqlite::params;
use serde::Serialize;
use uuid::Uuid;

use super::compare;
use super::query::{Count, DeviceQuery, NO_STATUS};
use super::rollout::preview::query_ids;
use super::rollout::targets::{apply_sets, set_targets, NO_OPERATION};
use super::{ms_to_text, FleetDb, FleetError, Result, Scope};
use crate::set_target::SetTarget;

/// A module's stuck devices.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct StuckSummary {
    pub module_id: String,
    /// The module's threshold.
    pub hours: f64,
    /// Statuses older than this are stuck (now minus the threshold): the device table's
    /// `stuckBefore`, so the table, the rollout and the reset see the same devices.
    pub before: String,
    pub devices: u32,
    /// By status ("none": no status), the most first.
    pub by_status: Vec<Count>,
    /// By the target they do not reach, the most first.
    pub by_target: Vec<Count>,
    /// The oldest status among them.
    pub oldest: Option<String>,
}

/// The stuck devices of a module at `now` (ms).
pub fn summary(db: &FleetDb, scope: Scope, module_id: &str, now: i64) -> Result<StuckSummary> {
    let hours = compare::stuck_hours(db, module_id)?;
    let before = now - (hours * 3_600_000.0) as i64;
    let conn = db.conn();
    let mut stmt = conn.prepare_cached(
        "SELECT status, target, count(*), min(COALESCE(status_at, target_at)) FROM states
         WHERE scope = ?1 AND module_id = ?2 AND target IS NOT NULL AND current IS NOT target
           AND COALESCE(status_at, target_at) < ?3
         GROUP BY 1, 2",
    )?;
    let rows = stmt
        .query_map(params![scope.0, module_id, before], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)? as u32,
                r.get::<_, i64>(3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut status = std::collections::BTreeMap::<String, u32>::new();
    let mut target = std::collections::BTreeMap::<String, u32>::new();
    let (mut devices, mut oldest) = (0u32, None::<i64>);
    for (s, t, n, at) in rows {
        *status.entry(s.unwrap_or_else(|| NO_STATUS.to_owned())).or_default() += n;
        *target.entry(t).or_default() += n;
        devices += n;
        oldest = Some(oldest.map_or(at, |o| o.min(at)));
    }
    let sorted = |m: std::collections::BTreeMap<String, u32>| {
        let mut v: Vec<Count> = m.into_iter().map(|(k, n)| Count { label: k.clone(), key: k, count: n }).collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then(a.key.cmp(&b.key)));
        v
    };
    Ok(StuckSummary {
        module_id: module_id.to_owned(),
        hours,
        before: ms_to_text(before),
        devices,
        by_status: sorted(status),
        by_target: sorted(target),
        oldest: oldest.map(ms_to_text),
    })
}

/// What resetting targets did.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ResetOutcome {
    pub reset: u32,
    /// `<device>: <why>` for each device the service refused or did not answer, at most 20.
    pub failures: Vec<String>,
    pub failed: u32,
}

/// Resets the targets of the module's devices that `query` names (the stuck ones, as the
/// dashboard asks), with the profile's set-target operation; `expected` is how many the operator
/// confirmed: when the query now names another number, nothing is sent (the fleet changed since
/// the confirmation). States the service answers are kept.
pub async fn reset_targets(
    client: &Client,
    op: Option<&SetTarget>,
    db: &FleetDb,
    scope: Scope,
    module_id: &str,
    query: &DeviceQuery,
    expected: u32,
) -> Result<ResetOutcome> {
    let op = op.ok_or_else(|| FleetError::invalid("setTarget", NO_OPERATION))?;
    let module: Uuid =
        module_id.trim().parse().map_err(|_| FleetError::invalid("moduleId", "must be a module's UUID"))?;
    let devices = query_ids(client, db, scope, &module.to_string(), query, None).await?;
    if devices.is_empty() {
        return Err(FleetError::invalid("devices", "the choice holds no device of this module"));
    }
    if devices.len() as u32 != expected {
        return Err(FleetError::Conflict(format!(
            "the choice now holds {} devices, not the {expected} confirmed (the fleet changed since); look again and confirm",
            devices.len()
        )));
    }
    let (reset, mut failures) =
        apply_sets(db, scope, set_targets(client, op, &devices, module, None, None, None).await.0)?;
    let failed = failures.len() as u32;
    failures.truncate(20);
    Ok(ResetOutcome { reset, failures, failed })
}
