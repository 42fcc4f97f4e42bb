//! The simulated devices: every few hundred milliseconds, each firmware update whose next step
//! is due moves on (`PENDING` -> `DOWNLOADING` -> `INSTALLING` -> `SUCCEEDED`, or `FAILED`
//! with details). Outcomes depend only on the seed, the device, the module and the attempt,
//! so a run is reproducible.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use time::Duration;

use crate::rehearsal::UpdateModel;
use crate::seed::FAILURES;
use crate::store::downlinks::{DownlinkChange, DownlinkRow};
use crate::store::firmware::{AppliedStep, DueStep};
use crate::store::StoreError;
use crate::SimState;
use time::OffsetDateTime;

/// Real time between two passes.
const TICK: StdDuration = StdDuration::from_millis(250);
/// Most steps applied in one transaction (the rest wait for the next).
const BATCH: u64 = 5000;
/// Most real time a pass spends on a backlog of full batches before it waits a tick.
const BACKLOG_TIME: StdDuration = StdDuration::from_millis(1000);

pub(crate) async fn run(state: Arc<SimState>) {
    let mut interval = tokio::time::interval(TICK);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let st = state.clone();
        match tokio::task::spawn_blocking(move || backlog(&st).and_then(|_| step_downlinks(&st))).await {
            Ok(Err(e)) => tracing::error!(error = %e, "device simulation step failed"),
            // The runtime is shutting down (the process ends): no error, and no more steps.
            Err(e) if e.is_cancelled() => return,
            Err(e) => tracing::error!(error = %e, "device simulation panicked"),
            Ok(Ok(_)) => {}
        }
    }
}

/// Applies the steps due, a batch per transaction, batch after batch for up to a second while
/// full batches come: a backlog (a data file reopened after its updates fell due, targets set
/// across a million states) is worked off in seconds rather than at one batch a tick, and the
/// store's lock is let go between batches, so requests are served meanwhile. Returns how many
/// steps were applied.
fn backlog(state: &SimState) -> Result<usize, StoreError> {
    let started = std::time::Instant::now();
    let mut total = 0;
    loop {
        let n = step(state)?;
        total += n;
        if n < BATCH as usize || started.elapsed() >= BACKLOG_TIME {
            return Ok(total);
        }
    }
}

/// Applies the steps due now, up to [`BATCH`], each at the time it was due (within the bounds
/// of [`crate::store::Store::settle_due`]); returns how many.
pub(crate) fn step(state: &SimState) -> Result<usize, StoreError> {
    let now = state.clock.now();
    let seed = state.opts.seed;
    let models = state.opts.models.as_deref();
    state.store.settle_due(now, state.started_at, BATCH, |d, at| {
        match models.and_then(|m| m.by_device.get(&d.device_id)) {
            Some(model) => modelled(seed, model, d, at),
            None => outcome(seed, d, at),
        }
    })
}

/// The random draws of one due step: the same seed, device, module, attempt and status always
/// draw the same.
fn draws(seed: u64, d: &DueStep) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(
        seed ^ (d.device_id.as_u128() as u64) ^ (d.module_id.as_u128() >> 64) as u64 ^ (d.attempts as u64) << 56,
    );
    rng.set_stream(match d.status.as_str() {
        "PENDING" => 1u64,
        "DOWNLOADING" => 2,
        _ => 3,
    });
    rng
}

/// [`outcome`] for a device with an update model (a rehearsal's): the download takes from the
/// moment the target is seen, half the failures happen while downloading, half while installing.
fn modelled(seed: u64, m: &UpdateModel, d: &DueStep, at: OffsetDateTime) -> AppliedStep {
    let mut rng = draws(seed, d);
    let fail = (m.fail_percent / 100.0).clamp(0.0, 1.0);
    let secs = |(lo, hi): (u32, u32), rng: &mut ChaCha8Rng| {
        Duration::seconds(if hi > lo { rng.gen_range(lo..=hi) } else { lo } as i64)
    };
    let base = AppliedStep { status: "", details: None, at, next_step_at: None, new_current: None, attempt: 0 };
    match d.status.as_str() {
        "PENDING" => {
            AppliedStep { status: "DOWNLOADING", next_step_at: Some(at + secs(m.download_secs, &mut rng)), ..base }
        }
        "DOWNLOADING" if rng.gen_bool(fail / 2.0) => {
            AppliedStep { status: "FAILED", details: Some(FAILURES[0].to_owned()), attempt: 1, ..base }
        }
        "DOWNLOADING" => {
            AppliedStep { status: "INSTALLING", next_step_at: Some(at + secs(m.install_secs, &mut rng)), ..base }
        }
        // Of the updates that did not fail while downloading, this share fails installing, so
        // that `fail` of them fail in all.
        _ if rng.gen_bool(if fail >= 1.0 { 1.0 } else { (fail / 2.0) / (1.0 - fail / 2.0) }) => AppliedStep {
            status: "FAILED",
            details: Some(FAILURES[rng.gen_range(1..FAILURES.len())].to_owned()),
            attempt: 1,
            ..base
        },
        _ => AppliedStep { status: "SUCCEEDED", new_current: d.target.clone(), attempt: 1, ..base },
    }
}

/// What one due step of an update does, happening at `at`: the next step is scheduled from
/// there, so a device's timeline does not depend on when the engine got round to it.
fn outcome(seed: u64, d: &DueStep, at: OffsetDateTime) -> AppliedStep {
    let mut rng = draws(seed, d);
    // One device in ten is flaky: its updates fail far more often.
    let flaky = d.device_id.as_u128().is_multiple_of(10);
    let fail_rate = if flaky { 0.35 } else { 0.03 };
    let secs = |lo: i64, hi: i64, rng: &mut ChaCha8Rng| Duration::seconds(rng.gen_range(lo..hi));
    let base = AppliedStep { status: "", details: None, at, next_step_at: None, new_current: None, attempt: 0 };
    match d.status.as_str() {
        // The device wakes up, learns of its target and starts downloading.
        "PENDING" => AppliedStep { status: "DOWNLOADING", next_step_at: Some(at + secs(60, 600, &mut rng)), ..base },
        "DOWNLOADING" if rng.gen_bool(fail_rate / 2.0) => {
            AppliedStep { status: "FAILED", details: Some(FAILURES[0].to_owned()), attempt: 1, ..base }
        }
        "DOWNLOADING" => AppliedStep { status: "INSTALLING", next_step_at: Some(at + secs(30, 180, &mut rng)), ..base },
        _ if rng.gen_bool(fail_rate) => AppliedStep {
            status: "FAILED",
            details: Some(FAILURES[rng.gen_range(1..FAILURES.len())].to_owned()),
            attempt: 1,
            ..base
        },
        _ => AppliedStep { status: "SUCCEEDED", new_current: d.target.clone(), attempt: 1, ..base },
    }
}

/// Moves every downlink whose step, cancellation or deadline is due. Returns how many changed.
/// Each event happens at its own simulated time, in order, even when the engine runs late (at
/// high speed one pass covers many simulated seconds): a step scheduled before the deadline
/// is taken before the deadline is checked.
pub(crate) fn step_downlinks(state: &SimState) -> Result<usize, StoreError> {
    let now = state.clock.now();
    let mut total = 0;
    // Chains of events that all fall in this pass, a bounded number of rounds.
    for _ in 0..16 {
        let due = state.store.due_downlinks(now, BATCH)?;
        if due.is_empty() {
            break;
        }
        let changes: Vec<DownlinkChange> =
            due.iter().map(|d| advance(state.opts.seed, d, d.next_step_at.unwrap_or(now).min(now))).collect();
        state.store.apply_downlink_changes(&changes)?;
        total += changes.len();
    }
    Ok(total)
}

fn is_final(kind: &str, status: &str) -> bool {
    if kind == "actuator" {
        matches!(status, "DELIVERED" | "FAILED" | "CANCELLED")
    } else {
        status == "DONE"
    }
}

/// One step of one downlink (simulator assumptions ).
fn advance(seed: u64, d: &DownlinkRow, now: OffsetDateTime) -> DownlinkChange {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (d.id.as_u128() as u64) ^ ((d.retry_count as u64) << 48));
    rng.set_stream(d.status.len() as u64);
    let flaky = d.device_id.as_u128().is_multiple_of(10);
    let success = if flaky { 0.4 } else { 0.85 };
    let later = |lo: i64, hi: i64, rng: &mut ChaCha8Rng| Some(now + Duration::seconds(rng.gen_range(lo..hi)));
    let mut c = DownlinkChange {
        id: d.id,
        status: d.status.clone(),
        retry_count: d.retry_count,
        last_failure_reason: d.last_failure_reason.clone(),
        next_step_at: None,
        at: now,
    };
    let actuator = d.kind == "actuator";
    let done = |c: &mut DownlinkChange, reason: Option<&str>| {
        c.status = "DONE".to_owned();
        c.last_failure_reason = reason.map(str::to_owned);
        c.next_step_at = None;
    };
    if is_final(&d.kind, &d.status) {
        return c;
    }
    // Cancellation: at once while queued; while executing only when forced.
    if d.cancel > 0 {
        let queued = matches!(d.status.as_str(), "PENDING" | "RETRY");
        if queued || d.cancel == 2 {
            if actuator {
                c.status = "CANCELLED".to_owned();
                c.last_failure_reason = Some("CANCELLED".to_owned());
            } else {
                done(&mut c, Some("CANCELLED"));
            }
            return c;
        }
    }
    if now >= d.deadline_at {
        if actuator {
            c.status = "FAILED".to_owned();
            c.last_failure_reason = Some("FEEDBACK_TIMEOUT".to_owned());
        } else {
            done(&mut c, Some(if d.kind == "http" { "TIMEOUT" } else { "FEEDBACK_TIMEOUT" }));
        }
        return c;
    }
    let wait_deadline = Some(d.deadline_at);
    if actuator {
        match d.status.as_str() {
            "PENDING" | "RETRY" => {
                c.status = "EXECUTING".to_owned();
                c.next_step_at = later(2, 10, &mut rng);
            }
            "EXECUTING" if d.dry_run => c.status = "DELIVERED".to_owned(),
            "EXECUTING" => {
                c.status = "SENT_TO_CARRIER".to_owned();
                c.next_step_at = later(5, 30, &mut rng);
            }
            _ if rng.gen_bool(success) => c.status = "DELIVERED".to_owned(),
            _ if d.retry_count < d.retry_limit => {
                c.status = "RETRY".to_owned();
                c.retry_count += 1;
                c.next_step_at = later(30, 90, &mut rng);
            }
            _ => {
                c.status = "FAILED".to_owned();
                c.last_failure_reason = Some("NOT_ACKNOWLEDGED_BY_DEVICE".to_owned());
            }
        }
        return c;
    }
    // A dry run never reaches the device or its network, so it cannot fail to be enqueued.
    match (d.kind.as_str(), d.status.as_str()) {
        ("lora", "PENDING") if !d.dry_run && rng.gen_bool(0.02) => {
            done(&mut c, Some("FAILED_TO_ENQUEUE_FOR_TRANSMISSION"))
        }
        ("sms", "PENDING") if !d.dry_run && rng.gen_bool(0.02) => {
            done(&mut c, Some("FAILURE_TO_ENQUEUE_FOR_TRANSMISSION"))
        }
        (_, "PENDING") => {
            c.status = "EXECUTING".to_owned();
            c.next_step_at = later(2, 20, &mut rng);
        }
        (_, _) if d.dry_run => done(&mut c, None),
        ("lora" | "sms", _) => {
            if rng.gen_bool(success) {
                done(&mut c, None);
            } else if rng.gen_bool(0.1) {
                done(
                    &mut c,
                    Some(if d.kind == "lora" {
                        "FAILED_TO_TRANSMIT_TO_DEVICE"
                    } else {
                        "FAILURE_TO_TRANSMIT_TO_DEVICE"
                    }),
                );
            } else if d.retry_count < d.retry_limit {
                c.retry_count += 1;
                c.next_step_at = later(20, 60, &mut rng);
            } else {
                done(&mut c, Some(if d.kind == "lora" { "NOT_ACKNOWLEDGED_BY_DEVICE" } else { "FEEDBACK_TIMEOUT" }));
            }
        }
        ("mqtt", _) if !rng.gen_bool(success) && rng.gen_bool(0.5) => {
            done(&mut c, Some("FAILED_TO_TRANSMIT_TO_DEVICE"))
        }
        // No delivery this time: nothing more happens until the deadline.
        (_, _) if !rng.gen_bool(success) => c.next_step_at = wait_deadline,
        (_, _) => done(&mut c, None),
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn pending(kind: &str, n: u128, dry_run: bool) -> DownlinkRow {
        let now = OffsetDateTime::UNIX_EPOCH;
        DownlinkRow {
            id: Uuid::from_u128(n),
            kind: kind.to_owned(),
            client_id: Uuid::nil(),
            device_id: Uuid::from_u128(n * 7 + 1),
            device_ref: String::new(),
            network_id: String::new(),
            external_reference: None,
            status: "PENDING".to_owned(),
            body: serde_json::Value::Null,
            message: None,
            retry_limit: 0,
            retry_count: 0,
            feedback_timeout: "PT30M".to_owned(),
            dry_run,
            last_failure_reason: None,
            cancel: 0,
            next_step_at: None,
            deadline_at: now + Duration::minutes(30),
            created_at: now,
            modified_at: now,
        }
    }

    /// a dry run succeeds without the device; it never fails to be enqueued, whatever its
    /// id draws (about 2 in 100 real LoRa and SMS downlinks do).
    #[test]
    fn a_dry_run_is_never_refused_by_the_network() {
        for kind in ["lora", "sms"] {
            let failed = |dry_run| {
                (0..2000u128)
                    .filter(|n| advance(1, &pending(kind, *n, dry_run), OffsetDateTime::UNIX_EPOCH).status == "DONE")
                    .count()
            };
            assert!(failed(false) > 0, "{kind}: real downlinks fail to be enqueued now and then");
            assert_eq!(failed(true), 0, "{kind}: a dry run was refused by the network");
        }
    }
}
