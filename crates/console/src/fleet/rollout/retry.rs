//! Retries of failed devices: a device of a started wave whose update failed, for a reason the
//! operator did not exclude, gets its target set again after a delay, up to the plan's number
//! of times. Counted per device (`rollout_devices.retries`).
//!
//! The rules:
//!
//! - A failure is a state `FAILED` with the rollout's target. It is **new** when the device has
//!   not been retried, or its status changed after the failure last retried (its
//!   `firmwareUpdateStatusModifiedAt` is later): a retry's own answer, or the old `FAILED` read
//!   again before the device reports, is never taken for a second failure. A service that gives
//!   no status time therefore gets one retry per device.
//! - A new failure whose reason (the state's details) contains none of the excluded words
//!   (case-insensitive) is scheduled `delayMinutes` later, while the device has retries left.
//! - Until its retry is sent and the device reports again, the device counts as **retrying**,
//!   not failed: it neither passes the error threshold nor ends the wave. A retry the service
//!   refuses ends the device's retries; it then counts as failed.
//! - Setting the same target again is taken to start the update over. The reference is silent
//!   on a repeated target; the simulator does so. A service that ignores it leaves the
//!   device failed once its retries are used.

use rusqlite::params;
use uuid::Uuid;

use super::lease::{check_and_renew, Lease};
use super::plan::RetryPolicy;
use super::store::{event, Row};
use super::targets::{set_targets, SetResult};
use crate::fleet::{FleetDb, Result, Scope};
use crate::set_target::SetTarget;

/// What one retry tick did.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Tick {
    pub scheduled: u32,
    pub sent: u32,
}

/// Schedules the rollout's new qualifying failures and sends the retries that are due at
/// `now` under `lease`, recording each (the states answered written back). Nothing without the
/// plan's retry policy.
pub(super) async fn tick(
    client: &dcs_api::Client,
    op: &SetTarget,
    db: &FleetDb,
    scope: Scope,
    row: &Row,
    lease: &Lease,
    now: i64,
) -> Result<Tick> {
    let Some(policy) = &row.retry else { return Ok(Tick::default()) };
    let scheduled = schedule(db, scope, row, policy, now)?;
    let due: Vec<Uuid> = {
        let conn = db.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT device_id FROM rollout_devices WHERE rollout = ?1 AND retry_due IS NOT NULL AND retry_due <= ?2",
        )?;
        let rows = stmt.query_map(params![row.id, now], |r| r.get::<_, String>(0))?;
        rows.filter_map(|r| r.ok()?.parse().ok()).collect()
    };
    if due.is_empty() {
        return Ok(Tick { scheduled, sent: 0 });
    }
    let module: Uuid =
        row.module_id.parse().map_err(|_| crate::fleet::FleetError::invalid("moduleId", "is not a UUID"))?;
    let package = if op.uses_package() {
        match crate::set_target::package_of(client, module, &row.version).await? {
            Some(p) => Some(p),
            // The next wave's start pauses the rollout, saying why; the retries wait.
            None => return Ok(Tick { scheduled, sent: 0 }),
        }
    } else {
        None
    };
    // The lease checked and renewed (the rollout still running, still this driver's) before
    // any retry goes out, as before a wave's slice.
    {
        let mut conn = db.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        check_and_renew(&tx, lease)?;
        tx.commit()?;
    }
    let (results, skipped) = set_targets(client, op, &due, module, Some(&row.version), package, Some(lease)).await;
    record(db, scope, row, &results, now)?;
    if skipped > 0 {
        return Err(lease.lost(&format!("its lease ran out with {skipped} retries unsent")));
    }
    Ok(Tick { scheduled, sent: results.len() as u32 })
}

/// Schedules the new failures that qualify; answers how many.
fn schedule(db: &FleetDb, scope: Scope, row: &Row, policy: &RetryPolicy, now: i64) -> Result<u32> {
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    let candidates: Vec<(String, Option<String>, i64, i64)> = {
        let mut stmt = tx.prepare_cached(
            "SELECT d.device_id, s.details, coalesce(s.status_at, 0), coalesce(d.retries, 0)
             FROM rollout_devices d
             JOIN states s ON s.scope = ?2 AND s.module_id = ?3 AND s.device_id = d.device_id
             WHERE d.rollout = ?1 AND d.set_at IS NOT NULL AND d.retry_due IS NULL AND d.retry_error IS NULL
               AND s.target IS ?4 AND s.status = 'FAILED' AND coalesce(d.retries, 0) < ?5
               AND (d.retry_of IS NULL OR coalesce(s.status_at, 0) > d.retry_of)",
        )?;
        let rows = stmt.query_map(params![row.id, scope.0, row.module_id, row.version, policy.times], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let due = now + policy.delay_minutes as i64 * 60_000;
    let mut n = 0u32;
    let mut first_reason = None;
    {
        let mut mark = tx.prepare_cached(
            "UPDATE rollout_devices SET retry_due = ?3, retry_of = ?4, last_failure = ?5 WHERE rollout = ?1 AND device_id = ?2",
        )?;
        let mut skip = tx.prepare_cached(
            "UPDATE rollout_devices SET retry_of = ?3, last_failure = ?4 WHERE rollout = ?1 AND device_id = ?2",
        )?;
        for (device, details, status_at, _) in &candidates {
            if policy.qualifies(details.as_deref()) {
                mark.execute(params![row.id, device, due, status_at, details])?;
                first_reason.get_or_insert_with(|| details.clone().unwrap_or_default());
                n += 1;
            } else {
                // Not to be retried: remembered as seen, so it is not looked at again.
                skip.execute(params![row.id, device, status_at, details])?;
            }
        }
    }
    if n > 0 {
        event(
            &tx,
            &row.id,
            now,
            &format!(
                "{n} failed device{} to be retried {} (for example: {})",
                if n == 1 { "" } else { "s" },
                if policy.delay_minutes == 0 {
                    "now".to_owned()
                } else {
                    format!("in {} minutes", policy.delay_minutes)
                },
                first_reason.unwrap_or_default()
            ),
        )?;
    }
    tx.commit()?;
    Ok(n)
}

/// Records the retries sent: the states answered, each device's count, refusals.
fn record(db: &FleetDb, scope: Scope, row: &Row, results: &[SetResult], now: i64) -> Result<()> {
    let states: Vec<_> = results.iter().filter_map(|(_, r)| r.as_ref().ok().cloned().flatten()).collect();
    let mut conn = db.conn();
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    crate::fleet::states::write_answers(&tx, scope, &states)?;
    let mut refused = 0;
    {
        let mut ok = tx.prepare_cached(
            "UPDATE rollout_devices SET retries = coalesce(retries, 0) + 1, retry_due = NULL, retried_at = ?3
             WHERE rollout = ?1 AND device_id = ?2",
        )?;
        let mut err = tx.prepare_cached(
            "UPDATE rollout_devices SET retries = coalesce(retries, 0) + 1, retry_due = NULL, retried_at = ?3, retry_error = ?4
             WHERE rollout = ?1 AND device_id = ?2",
        )?;
        for (device, result) in results {
            match result {
                Ok(_) => ok.execute(params![row.id, device.to_string(), now])?,
                Err(e) => {
                    refused += 1;
                    err.execute(params![row.id, device.to_string(), now, e.to_string()])?
                }
            };
        }
    }
    let sent = results.len() - refused;
    let mut message =
        format!("Retried {sent} failed device{}: target {} set again", if sent == 1 { "" } else { "s" }, row.version);
    if refused > 0 {
        message.push_str(&format!("; {refused} refused by the service (no further retry)"));
    }
    event(&tx, &row.id, now, &message)?;
    tx.commit()?;
    Ok(())
}

/// SQL: a failed device of the rollout that counts as retrying (its retry scheduled, or sent
/// and the device not heard from since). `d` is `rollout_devices`, `s` its state.
pub(super) const RETRYING: &str = "(d.retry_due IS NOT NULL OR (d.retried_at IS NOT NULL AND d.retry_error IS NULL \
     AND coalesce(s.status_at, 0) <= coalesce(d.retry_of, 0)))";

#[cfg(test)]
mod tests {
    use super::super::plan::{RetryPolicy, MAX_RETRY_DELAY_MINUTES};

    #[test]
    fn a_policy_names_each_broken_field_and_matches_reasons_without_case() {
        let p = RetryPolicy { times: 2, delay_minutes: 5, never_for: vec!["Signature".into(), " flash ".into()] };
        assert!(p.check().is_empty());
        assert!(!p.qualifies(Some("image rejected: signature verification failed")));
        assert!(!p.qualifies(Some("not enough free FLASH for the image")));
        assert!(p.qualifies(Some("download interrupted: connection lost")));
        assert!(p.qualifies(None));
        let bad = RetryPolicy { times: 0, delay_minutes: MAX_RETRY_DELAY_MINUTES + 1, never_for: vec!["".into()] };
        let fields: Vec<String> = bad.check().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["retry.times", "retry.delayMinutes", "retry.neverFor"]);
        assert_eq!(RetryPolicy { times: 11, ..p }.check()[0].field, "retry.times");
    }
}
