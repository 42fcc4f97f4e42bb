//! Rollouts in waves, run by the console: the service only sets a target version per device, so
//! the plan, its waves and thresholds live here, in the fleet database, and a step
//! ([`advance`]) moves each running rollout on after every refresh of the states.
//!
//! The rules (after hawkBit's groups and AWS IoT Jobs' rollout rates and abort criteria):
//!
//! - The devices are shuffled once and cut into waves by cumulative percentages (for example
//!   1, 10, 50, 100): wave `i` holds the devices from `w[i-1]%` to `w[i]%` of the list, at
//!   least one each. Devices that already run the version are left out.
//! - A wave starts by setting every device's target. The next wave starts once the share of the
//!   current wave's devices that **succeeded** reaches the success threshold.
//! - A wave's start interrupted (a crash, a kill) is resumed by the next step: each target is
//!   recorded as being sent before its request and as set after, so only the requests under way
//!   are in doubt, and the refreshed states tell whether they reached the service. Each target
//!   is set once.
//! - The rollout **pauses** when the share of failed devices among all devices of the started
//!   waves passes the error threshold (0%: at the first failure; a target the service refused
//!   counts as failed), or when a wave ends (every device final) short of the success threshold.
//! - Pausing stops new waves; updates under way go on. Resuming may change the thresholds.
//!   Aborting stops the rollout for good and, if asked, resets the targets of the devices whose
//!   update has not finished (the service then cancels it).
//! - A device whose target was changed by someone else counts as **replaced**: final, not a
//!   success.
//!
//! One file a concern: `plan` the plan and what a preview answers, `budget` the threshold
//! arithmetic, `versions` the order of versions and downgrades (these three pure), `preview` a
//! plan checked against the fleet and the service, `store` the SQL of rollouts, `view` what the
//! dashboard reads, `step` the step that moves a rollout on, `control` the operator's pause,
//! resume, approve and abort, `targets` the set-target calls that step and abort share,
//! `schedule` when waves may start (pure), `hold` what holds a wave back or warns of one that
//! stopped moving (pure data), and `retry` the retries of failed devices.

mod budget;
mod control;
mod hold;
mod late;
pub mod lease;
mod plan;
pub(crate) mod preview;
pub mod rehearse;
pub mod report;
mod retry;
pub mod schedule;
mod step;
mod store;
pub(crate) mod targets;
mod versions;
mod view;

pub use budget::{failures_before_pause, needed, wave_budgets, WaveBudget};
pub use control::{abort, approve, pause, resume};
pub use hold::{HangWarning, Hold, HoldKind};
pub use lease::{Driver, DriverKind, DriverView};
pub use plan::{
    wave_sizes, DeviceChoice, LateDevices, PlanPreview, RetryPolicy, RolloutPlan, WaveEarliest, DEFAULT_HANG_MINUTES,
    MAX_RETRIES, MAX_RETRY_DELAY_MINUTES,
};
pub use preview::{check_shape, preview, resolve};
pub use rehearse::{rehearse, ModelRule, Rehearsal, RehearsalEnd, WaveRehearsal};
pub use schedule::{Schedule, Window};
pub use step::{advance, advance_at, StepOutcome};
pub use store::{counts, create, running, running_scopes, scope_of, unfinished, RolloutCounts, RolloutState};
pub use targets::NO_OPERATION;
pub use versions::{compare_versions, downgrade_of, Downgrade, RunningVersion};
pub use view::{get, list, ErrorBudget, RolloutEvent, RolloutView, WaveView};

/// Targets set at the same time when a wave starts.
pub const PARALLEL_SETS: usize = 8;
