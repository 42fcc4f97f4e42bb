//! The step that moves a running rollout on after each refresh: the current wave judged from the
//! states the database holds (pure), then a pause, the completion, a wait or the next wave.

use dcs_api::Client;
use serde::Serialize;
use uuid::Uuid;

use super::budget::pct;
use super::hold::{HangWarning, Hold, HoldKind};
use super::late;
use super::lease::{self, Driver, DriverView, Lease};
use super::retry;
use super::schedule::Gate;
use super::store::{
    claim_wave, load_known, mark_sending, move_key, record_hang, record_hold, record_move, record_sets, set_state,
    unmoved, wave_started, Claim, RolloutState, Row,
};
use super::targets::{set_targets, NO_OPERATION};
use super::view::{total, wave_views, WaveView};
use super::PARALLEL_SETS;
use crate::fleet::{ms_to_text, now_ms, FleetDb, FleetError, Result, Scope};
use crate::set_target::{self, SetTarget};

/// What one step did to a rollout.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum StepOutcome {
    /// Nothing to do yet.
    Waiting,
    /// A wave started (its index) with this many targets set and refused (also a wave whose
    /// start a crash interrupted, resumed: the rest of its targets).
    WaveStarted {
        wave: u32,
        set: u32,
        refused: u32,
    },
    Paused {
        reason: String,
    },
    /// The next wave is held back (by the schedule, or for approval): said once, when the hold
    /// begins or changes.
    Held {
        hold: Hold,
    },
    /// Failed devices were scheduled for a retry, or retried (their target set again).
    Retrying {
        scheduled: u32,
        sent: u32,
    },
    /// Devices that appeared after the start joined wave `wave` (their targets set at once when
    /// it is under way).
    Joined {
        wave: u32,
        devices: u32,
    },
    /// The wave under way has seen no change for the plan's time: said once per stillness.
    Hanging {
        warning: HangWarning,
    },
    Completed,
    /// Another driver holds the rollout's lease and moves it on; this step changed nothing.
    Elsewhere {
        driver: DriverView,
    },
}

/// Moves one running rollout on as `driver`, from the states the database holds now (refresh
/// first): the driver takes or renews the rollout's lease first ([`lease`](super::lease)), and
/// when another driver holds it, answers [`StepOutcome::Elsewhere`] and changes nothing. A
/// wave's targets are set with the profile's set-target operation `op`; without one the
/// rollout pauses, saying why, instead of starting a wave.
pub async fn advance(
    client: &Client,
    op: Option<&SetTarget>,
    db: &FleetDb,
    id: &str,
    driver: &Driver,
) -> Result<StepOutcome> {
    advance_at(client, op, db, id, driver, now_ms()).await
}

/// [`advance`] as at `now_ms` (the schedule's clock; tests run it fast). The lease's own times
/// are always the wall clock's.
pub async fn advance_at(
    client: &Client,
    op: Option<&SetTarget>,
    db: &FleetDb,
    id: &str,
    driver: &Driver,
    now_ms: i64,
) -> Result<StepOutcome> {
    if load_running(db, id)?.is_none() {
        return Ok(StepOutcome::Waiting);
    }
    let lease = match lease::acquire(db, id, driver, crate::fleet::now_ms())? {
        Ok(lease) => lease,
        Err(driver) => return Ok(StepOutcome::Elsewhere { driver }),
    };
    let outcome = advance_leased(client, op, db, id, &lease, now_ms).await?;
    lease::stepped(db, &lease)?;
    Ok(outcome)
}

/// The step under a lease held.
async fn advance_leased(
    client: &Client,
    op: Option<&SetTarget>,
    db: &FleetDb,
    id: &str,
    lease: &Lease,
    now_ms: i64,
) -> Result<StepOutcome> {
    let Some((scope, row, mut waves)) = load_running(db, id)? else {
        return Ok(StepOutcome::Waiting);
    };
    let mut retried = None;
    if let (Some(_), Some(op)) = (&row.retry, op) {
        let t = retry::tick(client, op, db, scope, &row, lease, now_ms).await?;
        if t.scheduled + t.sent > 0 {
            waves = wave_views(&db.conn(), scope, &row)?;
            retried = Some(StepOutcome::Retrying { scheduled: t.scheduled, sent: t.sent });
        }
    }
    if let Some((wave, devices)) = late::take_in(client, db, scope, &row, now_ms).await? {
        if wave as i32 == row.current {
            // The wave is under way: their targets now, as the rest of it was sent.
            if let StepOutcome::Paused { reason } =
                start_wave(client, op, db, scope, &row, wave, Claim::TakeIn, lease, now_ms).await?
            {
                return Ok(StepOutcome::Paused { reason });
            }
        }
        return Ok(StepOutcome::Joined { wave, devices });
    }
    let outcome = step_on(client, op, db, scope, &row, &waves, lease, now_ms).await?;
    // Retries are news when nothing else is.
    Ok(match (outcome, retried) {
        (StepOutcome::Waiting, Some(r)) => r,
        (o, _) => o,
    })
}

/// The step proper, once retries are done: judge the wave under way and act.
#[allow(clippy::too_many_arguments, reason = "the step's own context, passed down once")]
async fn step_on(
    client: &Client,
    op: Option<&SetTarget>,
    db: &FleetDb,
    scope: Scope,
    row: &Row,
    waves: &[WaveView],
    lease: &Lease,
    now_ms: i64,
) -> Result<StepOutcome> {
    let id = row.id.as_str();
    match judge(row, waves) {
        Verdict::Wait => watch_hang(db, scope, row, now_ms),
        Verdict::Pause(reason) => pause_for(db, id, reason),
        Verdict::Complete(reason) => {
            let conn = db.conn();
            set_state(&conn, id, RolloutState::Completed, Some(&reason), &format!("Completed: {reason}"))?;
            Ok(StepOutcome::Completed)
        }
        Verdict::StartNext => {
            let next = (row.current + 1) as u32;
            match hold_for(row, waves, next, now_ms) {
                Ok(Some(hold)) => held(db, row, hold),
                Ok(None) => start_wave(client, op, db, scope, row, next, Claim::Start, lease, now_ms).await,
                Err(reason) => pause_for(db, id, reason),
            }
        }
        Verdict::ResumeStart => {
            start_wave(client, op, db, scope, row, row.current as u32, Claim::Resume, lease, now_ms).await
        }
    }
}

/// What holds wave `next` back at `now_ms`: the operator's approval (asked first: a wave
/// approved outside its window then waits for it), then the schedule. An error is a schedule
/// that no longer reads (a time zone gone from the system's database): the rollout pauses.
fn hold_for(row: &Row, waves: &[WaveView], next: u32, now_ms: i64) -> std::result::Result<Option<Hold>, String> {
    let size = waves.get(next as usize).map_or(0, |w| w.size);
    if row.approval && next > 0 && row.approved < next as i32 {
        let prev = &waves[next as usize - 1];
        return Ok(Some(Hold {
            kind: HoldKind::Approval,
            wave: next,
            until: None,
            until_local: None,
            message: format!(
                "Wave {} ({size} devices) waits for approval. Wave {}: {} of {} updated ({:.1}%), {} failed, {} replaced or cancelled, {} refused, {} updating",
                next + 1,
                next,
                prev.succeeded,
                prev.size,
                pct(prev.succeeded, prev.size),
                prev.failed,
                prev.replaced,
                prev.refused,
                prev.updating
            ),
        }));
    }
    let Some(schedule) = &row.schedule else { return Ok(None) };
    let calendar = schedule.check(row.created).map_err(|problems| {
        let p = problems.first().map(|p| format!("{}: {}", p.field, p.rule)).unwrap_or_default();
        format!("the schedule no longer reads ({p})")
    })?;
    let last_start = if next > 0 { row.wave_started } else { None };
    let Some(gate) = calendar.gate(now_ms, last_start) else { return Ok(None) };
    let until = gate.until_ms();
    let local = calendar.local_text(until);
    let (kind, why) = match gate {
        Gate::Start(_) => (HoldKind::Start, "the rollout is scheduled to start then".to_owned()),
        Gate::Gap(_) => {
            (HoldKind::Gap, format!("waves start at least {} minutes apart", schedule.minutes_between_waves))
        }
        Gate::Window(_) => (HoldKind::Window, "no maintenance window is open".to_owned()),
    };
    Ok(Some(Hold {
        kind,
        wave: next,
        until: Some(ms_to_text(until)),
        message: format!("Wave {} ({size} devices) waits until {local}: {why}", next + 1),
        until_local: Some(local),
    }))
}

/// Notes whether the wave under way moved since the last step; when it has not for the plan's
/// time, warns once, naming the devices that did not move (the warning is cleared by the next
/// change).
fn watch_hang(db: &FleetDb, scope: Scope, row: &Row, now_ms: i64) -> Result<StepOutcome> {
    // Never warned (0 minutes): the wave's key is not even read.
    if row.current < 0 || row.hang_minutes == 0 {
        return Ok(StepOutcome::Waiting);
    }
    let wave = row.current as u32;
    let key = move_key(db, scope, row, wave)?;
    if row.move_key.as_deref() != Some(key.as_str()) {
        record_move(db, &row.id, &key, now_ms)?;
        return Ok(StepOutcome::Waiting);
    }
    let since = row.last_move.or(row.wave_started).unwrap_or(now_ms);
    let minutes = row.hang_minutes;
    if row.hang.is_some() || now_ms - since < minutes as i64 * 60_000 {
        return Ok(StepOutcome::Waiting);
    }
    let (devices, sample) = unmoved(db, scope, row, wave)?;
    if devices == 0 {
        return Ok(StepOutcome::Waiting);
    }
    let more = if devices as usize > sample.len() {
        format!(" and {} more", devices as usize - sample.len())
    } else {
        String::new()
    };
    let warning = HangWarning {
        wave,
        since: ms_to_text(since),
        minutes,
        devices,
        message: format!(
            "Wave {} has seen no change for {}: {devices} devices did not move ({}{more})",
            wave + 1,
            if minutes == 1 { "a minute".to_owned() } else { format!("{minutes} minutes") },
            sample.join(", ")
        ),
        sample,
    };
    record_hang(db, &row.id, &warning, now_ms)?;
    Ok(StepOutcome::Hanging { warning })
}

/// Records a hold; said as an outcome only when it begins or changes.
fn held(db: &FleetDb, row: &Row, hold: Hold) -> Result<StepOutcome> {
    if row.hold.as_ref() == Some(&hold) {
        return Ok(StepOutcome::Waiting);
    }
    record_hold(db, &row.id, &hold)?;
    Ok(StepOutcome::Held { hold })
}

/// What the states say a running rollout must do.
#[derive(Debug, PartialEq)]
enum Verdict {
    Wait,
    Pause(String),
    Complete(String),
    StartNext,
    /// The current wave has devices whose target was never recorded as set or refused: its
    /// start was interrupted (a crash, a lost connection), so it goes on.
    ResumeStart,
}

/// The rollout with its waves, if it is running.
fn load_running(db: &FleetDb, id: &str) -> Result<Option<(Scope, Row, Vec<WaveView>)>> {
    let conn = db.conn();
    let (scope, row) = load_known(&conn, id)?;
    if row.state != RolloutState::Running {
        return Ok(None);
    }
    let waves = wave_views(&conn, scope, &row)?;
    Ok(Some((scope, row, waves)))
}

/// Judges the wave under way: pause when the error threshold is passed or the wave ended short
/// of the success threshold; wait while it has not met it; complete after the last wave once
/// every device is final; otherwise start the next wave (also before the first).
fn judge(row: &Row, waves: &[WaveView]) -> Verdict {
    if row.current < 0 {
        return Verdict::StartNext;
    }
    if let Some(reason) = error_threshold_passed(row, waves) {
        return Verdict::Pause(reason);
    }
    let wave = &waves[row.current as usize];
    if wave.set + wave.refused < wave.size {
        return Verdict::ResumeStart;
    }
    let success = pct(wave.succeeded, wave.size);
    let last = row.current as usize + 1 == waves.len();
    if success < row.success {
        if wave.finished() >= wave.size {
            return Verdict::Pause(format!(
                "wave {} ended with {} of {} devices updated ({:.1}%), below the {}% success threshold",
                row.current + 1,
                wave.succeeded,
                wave.size,
                success,
                row.success
            ));
        }
        return Verdict::Wait;
    }
    if last {
        let t = total(waves);
        if t.finished() >= t.size {
            return Verdict::Complete(format!(
                "{} of {} devices updated to {}, {} failed, {} replaced or cancelled, {} refused",
                t.succeeded, t.size, row.version, t.failed, t.replaced, t.refused
            ));
        }
        return Verdict::Wait;
    }
    Verdict::StartNext
}

/// Why the rollout must pause for failures: the failed share of the started waves' devices
/// passes the error threshold.
fn error_threshold_passed(row: &Row, waves: &[WaveView]) -> Option<String> {
    let started = &waves[..=(row.current as usize).min(waves.len() - 1)];
    let size: u32 = started.iter().map(|w| w.size).sum();
    let failed: u32 = started.iter().map(|w| w.failed + w.refused).sum();
    (failed > 0 && size > 0 && pct(failed, size) > row.error).then(|| {
        format!(
            "error threshold passed: {failed} of {size} devices of the started waves failed ({:.1}% > {}%)",
            pct(failed, size),
            row.error
        )
    })
}

/// Pauses the rollout, saying why.
fn pause_for(db: &FleetDb, id: &str, reason: String) -> Result<StepOutcome> {
    let conn = db.conn();
    set_state(&conn, id, RolloutState::Paused, Some(&reason), &format!("Paused: {reason}"))?;
    Ok(StepOutcome::Paused { reason })
}

/// Starts wave `wave` (or resumes its start): sets the target of each of its devices with `op`
/// (pausing instead when there is no operation, or it needs a package the service does not
/// list), a slice at a time, each slice marked as being sent before its requests go out and its
/// answers recorded as they come, so a crash loses at most the answers of one slice.
#[allow(clippy::too_many_arguments, reason = "the step's own context, passed down once")]
async fn start_wave(
    client: &Client,
    op: Option<&SetTarget>,
    db: &FleetDb,
    scope: Scope,
    row: &Row,
    wave: u32,
    claim: Claim,
    lease: &Lease,
    now_ms: i64,
) -> Result<StepOutcome> {
    let id = row.id.as_str();
    let Some(op) = op else {
        return pause_for(db, id, NO_OPERATION.to_owned());
    };
    let module: Uuid = row.module_id.parse().map_err(|_| FleetError::invalid("moduleId", "is not a UUID"))?;
    let package = if op.uses_package() {
        match set_target::package_of(client, module, &row.version).await? {
            Some(p) => Some(p),
            None => {
                return pause_for(
                    db,
                    id,
                    format!(
                        "the service lists no package {} of the module, whose id the set-target operation needs",
                        row.version
                    ),
                )
            }
        }
    } else {
        None
    };
    let to_send = claim_wave(db, scope, row, wave, claim, now_ms)?;
    for slice in to_send.chunks(SLICE) {
        // Refused, nothing of the slice sent, once the lease is another's or the rollout stopped.
        mark_sending(db, id, slice, lease)?;
        let (results, skipped) = set_targets(client, op, slice, module, Some(&row.version), package, Some(lease)).await;
        record_sets(db, scope, id, &results)?;
        if skipped > 0 {
            return Err(lease.lost(&format!("its lease ran out with {skipped} targets of the slice unsent")));
        }
    }
    let (set, refused) = wave_started(db, id, wave, &row.version)?;
    Ok(StepOutcome::WaveStarted { wave, set, refused })
}

/// Targets sent between two records of a wave's start: what a crash can leave in doubt.
const SLICE: usize = PARALLEL_SETS * 8;
