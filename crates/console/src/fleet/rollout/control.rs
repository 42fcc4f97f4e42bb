//! What the operator does to a rollout: pause it, resume it (with new thresholds), abort it
//! (resetting the targets of the updates under way).

use dcs_api::Client;
use rusqlite::params;
use uuid::Uuid;

use super::hold::HoldKind;
use super::store::{approve_wave, event, load_known, set_state, unfinished, RolloutState};
use super::targets::{apply_sets, set_targets, NO_OPERATION};
use super::view::{get, RolloutView};
use crate::fleet::{now_ms, FleetDb, FleetError, Result, Scope};
use crate::set_target::SetTarget;

/// Pauses a running rollout by hand.
pub fn pause(client: &Client, db: &FleetDb, id: &str) -> Result<RolloutView> {
    {
        let conn = db.conn();
        let (_, row) = load_known(&conn, id)?;
        if row.state != RolloutState::Running {
            return Err(FleetError::Conflict(format!("the rollout is {}, not running", row.state.as_str())));
        }
        set_state(&conn, id, RolloutState::Paused, Some("paused by the operator"), "Paused by the operator")?;
    }
    crate::audit::note(client, "rollout.pause", id, serde_json::json!({}))?;
    get(db, id)
}

/// Resumes a paused rollout, with new thresholds if given (the step then decides at once
/// whether it must pause again).
pub fn resume(
    client: &Client,
    db: &FleetDb,
    id: &str,
    success_threshold: Option<f64>,
    error_threshold: Option<f64>,
) -> Result<RolloutView> {
    {
        let conn = db.conn();
        let (_, row) = load_known(&conn, id)?;
        if row.state != RolloutState::Paused {
            return Err(FleetError::Conflict(format!("the rollout is {}, not paused", row.state.as_str())));
        }
        for (field, v) in [("successThreshold", success_threshold), ("errorThreshold", error_threshold)] {
            if let Some(v) = v {
                if !v.is_finite() || !(0.0..=100.0).contains(&v) || (field == "successThreshold" && v == 0.0) {
                    return Err(FleetError::invalid(
                        field,
                        format!("must be a percentage above 0 and at most 100, got {v}"),
                    ));
                }
            }
        }
        let success = success_threshold.unwrap_or(row.success);
        let error = error_threshold.unwrap_or(row.error);
        conn.execute(
            "UPDATE rollouts SET success_threshold = ?2, error_threshold = ?3 WHERE id = ?1",
            params![id, success, error],
        )?;
        let changed = if success != row.success || error != row.error {
            format!(" with thresholds success {success}%, error {error}%")
        } else {
            String::new()
        };
        set_state(&conn, id, RolloutState::Running, None, &format!("Resumed by the operator{changed}"))?;
        drop(conn);
        crate::audit::note(
            client,
            "rollout.resume",
            id,
            serde_json::json!({ "successThreshold": success, "errorThreshold": error }),
        )?;
    }
    get(db, id)
}

/// Lets the wave a running rollout holds for approval start (the operator's "Continue"; the
/// next step starts it, or holds it for the schedule). Refused, saying what the rollout does
/// instead, when it is not waiting for approval.
pub fn approve(client: &Client, db: &FleetDb, id: &str) -> Result<RolloutView> {
    let wave = {
        let conn = db.conn();
        let (_, row) = load_known(&conn, id)?;
        if row.state != RolloutState::Running {
            return Err(FleetError::Conflict(format!(
                "the rollout is {}, not waiting for approval{}",
                row.state.as_str(),
                if row.state == RolloutState::Paused { "; resume it first" } else { "" }
            )));
        }
        let Some(hold) = row.hold.filter(|h| h.kind == HoldKind::Approval) else {
            return Err(FleetError::Conflict(format!(
                "the rollout is not waiting for approval: wave {} of {} is under way{}",
                row.current + 1,
                row.waves.len(),
                if row.approval { "" } else { " (it was started without approval between waves)" }
            )));
        };
        approve_wave(&conn, id, hold.wave, &format!("Wave {} approved by the operator", hold.wave + 1))?;
        hold.wave
    };
    crate::audit::note(client, "rollout.continue", id, serde_json::json!({ "wave": wave + 1 }))?;
    get(db, id)
}

/// Aborts a rollout for good; with `reset_unfinished`, resets the target of every device whose
/// update has not finished (the service cancels those updates). Answers the view and the
/// number of targets reset.
///
/// Resetting needs the profile's set-target operation (`op`); without one nothing changes.
pub async fn abort(
    client: &Client,
    op: Option<&SetTarget>,
    db: &FleetDb,
    id: &str,
    reset_unfinished: bool,
) -> Result<(RolloutView, u32)> {
    let op = match (op, reset_unfinished) {
        (None, true) => return Err(FleetError::invalid("resetUnfinished", NO_OPERATION)),
        (op, _) => op,
    };
    let (scope, module_id) = stop(db, id)?;
    crate::audit::note(client, "rollout.abort", id, serde_json::json!({ "resetUnfinished": reset_unfinished }))?;
    let mut reset = 0u32;
    if reset_unfinished {
        let op = op.expect("checked above");
        reset = reset_targets(client, op, db, scope, id, &module_id).await?;
    }
    Ok((get(db, id)?, reset))
}

/// Marks a rollout that is still going as aborted (first, so no step starts a wave while the
/// targets are reset). Answers its scope and module.
fn stop(db: &FleetDb, id: &str) -> Result<(Scope, String)> {
    let conn = db.conn();
    let (scope, row) = load_known(&conn, id)?;
    if matches!(row.state, RolloutState::Completed | RolloutState::Aborted) {
        return Err(FleetError::Conflict(format!("the rollout is already {}", row.state.as_str())));
    }
    set_state(&conn, id, RolloutState::Aborted, Some("aborted by the operator"), "Aborted by the operator")?;
    // Whoever drove it sends nothing more for it.
    super::lease::revoke(&conn, id)?;
    Ok((scope, row.module_id))
}

/// Resets the targets of the rollout's unfinished devices, keeps the states the service answers
/// and records an event naming the first failures. Answers how many were reset.
async fn reset_targets(
    client: &Client,
    op: &SetTarget,
    db: &FleetDb,
    scope: Scope,
    id: &str,
    module_id: &str,
) -> Result<u32> {
    let devices = unfinished(db, id)?;
    let module: Uuid = module_id.parse().map_err(|_| FleetError::invalid("moduleId", "is not a UUID"))?;
    let (reset, failures) = apply_sets(db, scope, set_targets(client, op, &devices, module, None, None, None).await.0)?;
    let conn = db.conn();
    let mut message = format!("Reset the targets of {reset} devices whose update had not finished");
    if !failures.is_empty() {
        message.push_str(&format!(
            "; {} could not be reset ({})",
            failures.len(),
            failures.into_iter().take(3).collect::<Vec<_>>().join("; ")
        ));
    }
    event(&conn, id, now_ms(), &message)?;
    Ok(reset)
}
