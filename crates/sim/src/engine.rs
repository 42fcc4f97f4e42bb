//! The simulated devices: every few hundred milliseconds, each firmware update whose next step
//! is due moves on (`PENDING` -> `DOWNLOADING` -> `INSTALLING` -> `SUCCEEDED`, or `FAILED`
//! with details). Outcomes depend only on the seed, the device, the module and the attempt,
//! so a run is reproducible.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use time::Duration;

use crate::seed::FAILURES;
use crate::store::firmware::AppliedStep;
use crate::store::StoreError;
use crate::SimState;

/// Real time between two passes.
const TICK: StdDuration = StdDuration::from_millis(250);
/// Most steps applied in one pass (the rest wait for the next).
const BATCH: u64 = 5000;

pub(crate) async fn run(state: Arc<SimState>) {
    let mut interval = tokio::time::interval(TICK);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let st = state.clone();
        match tokio::task::spawn_blocking(move || step(&st)).await {
            Ok(Err(e)) => tracing::error!(error = %e, "device simulation step failed"),
            Err(e) => tracing::error!(error = %e, "device simulation panicked"),
            Ok(Ok(_)) => {}
        }
    }
}

/// Applies every step due now; returns how many.
pub(crate) fn step(state: &SimState) -> Result<usize, StoreError> {
    let now = state.clock.now();
    let due = state.store.due_steps(now, BATCH)?;
    let seed = state.opts.seed;
    let steps: Vec<AppliedStep> = due
        .into_iter()
        .map(|d| {
            let mut rng = ChaCha8Rng::seed_from_u64(
                seed ^ (d.device_id.as_u128() as u64) ^ (d.module_id.as_u128() >> 64) as u64 ^ (d.attempts as u64) << 56,
            );
            rng.set_stream(match d.status.as_str() {
                "PENDING" => 1u64,
                "DOWNLOADING" => 2,
                _ => 3,
            });
            // One device in ten is flaky: its updates fail far more often.
            let flaky = d.device_id.as_u128() % 10 == 0;
            let fail_rate = if flaky { 0.35 } else { 0.03 };
            let secs = |lo: i64, hi: i64, rng: &mut ChaCha8Rng| Duration::seconds(rng.gen_range(lo..hi));
            let base = AppliedStep {
                device_id: d.device_id,
                module_id: d.module_id,
                status: "",
                details: None,
                at: now,
                next_step_at: None,
                new_current: None,
                attempt: 0,
            };
            match d.status.as_str() {
                // The device wakes up, learns of its target and starts downloading.
                "PENDING" => AppliedStep { status: "DOWNLOADING", next_step_at: Some(now + secs(60, 600, &mut rng)), ..base },
                "DOWNLOADING" if rng.gen_bool(fail_rate / 2.0) => AppliedStep {
                    status: "FAILED",
                    details: Some(FAILURES[0].to_owned()),
                    attempt: 1,
                    ..base
                },
                "DOWNLOADING" => AppliedStep { status: "INSTALLING", next_step_at: Some(now + secs(30, 180, &mut rng)), ..base },
                _ if rng.gen_bool(fail_rate) => AppliedStep {
                    status: "FAILED",
                    details: Some(FAILURES[rng.gen_range(1..FAILURES.len())].to_owned()),
                    attempt: 1,
                    ..base
                },
                _ => AppliedStep { status: "SUCCEEDED", new_current: d.target.clone(), attempt: 1, ..base },
            }
        })
        .collect();
    let n = steps.len();
    if n > 0 {
        state.store.apply_steps(&steps)?;
    }
    Ok(n)
}
