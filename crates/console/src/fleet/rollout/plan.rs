//! A rollout plan as the operator writes it, and what its preview answers (pure data and the cut
//! into waves).

use serde::{Deserialize, Serialize};

use super::budget::WaveBudget;
use super::schedule::Schedule;
use super::versions::{Downgrade, RunningVersion};
use crate::fleet::query::{DeviceQuery, Selection};
use crate::FieldError;

/// Which devices a rollout is for.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", tag = "kind")]
#[allow(clippy::large_enum_variant, reason = "one value per plan, read once from the UI or the command line")]
pub enum DeviceChoice {
    /// Every device with a state of the module.
    All,
    /// The device table's rows matching a query (the module is the rollout's), optionally only
    /// those selected.
    Query { query: DeviceQuery, selection: Option<Selection> },
    /// A pasted list of device ids in any of the seven forms, separated by commas, spaces or lines.
    List { text: String },
}

/// A rollout as the operator plans it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RolloutPlan {
    pub module_id: String,
    pub version: String,
    pub devices: DeviceChoice,
    /// Cumulative percentages of the devices, rising, the last 100.
    pub waves: Vec<f64>,
    /// Percent of a wave's devices that must succeed before the next wave starts.
    pub success_threshold: f64,
    /// Percent of failed devices (of the started waves) above which the rollout pauses.
    pub error_threshold: f64,
    /// When waves may start (a start time, maintenance windows, time between waves); none: as
    /// soon as the thresholds allow.
    #[serde(default)]
    pub schedule: Option<Schedule>,
    /// Each wave after the first waits for the operator's "Continue" (`dcs rollout continue`).
    #[serde(default)]
    pub approval: bool,
    /// Minutes without any change in the wave under way after which the rollout warns, naming
    /// the devices that did not move (0: never; none: [`DEFAULT_HANG_MINUTES`]).
    #[serde(default)]
    pub hang_minutes: Option<u32>,
    /// Failed devices retried (target set again) after a delay, up to a number of times, for
    /// the reasons that qualify; none: never.
    #[serde(default)]
    pub retry: Option<RetryPolicy>,
    /// Devices the choice takes in that appear after the start (their state first seen by a
    /// later refresh): left out, or added to the wave under way or the next one. Only for all
    /// devices of the module or a filter: a pasted list is fixed.
    #[serde(default)]
    pub late: LateDevices,
}

/// Where devices that appear after a rollout started go.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum LateDevices {
    /// Left out: the rollout keeps the devices it started with.
    #[default]
    None,
    /// Into the wave under way (their targets set at the next step).
    Current,
    /// Into the next wave (the last wave's into the last).
    Next,
}

impl LateDevices {
    pub fn as_str(self) -> &'static str {
        match self {
            LateDevices::None => "none",
            LateDevices::Current => "current",
            LateDevices::Next => "next",
        }
    }

    pub fn parse(s: &str) -> LateDevices {
        match s {
            "current" => LateDevices::Current,
            "next" => LateDevices::Next,
            _ => LateDevices::None,
        }
    }
}

/// The hang warning's default: two hours without a change in the wave under way.
pub const DEFAULT_HANG_MINUTES: u32 = 120;
/// The longest silence a plan may wait for before warning: a week.
pub const MAX_HANG_MINUTES: u32 = 7 * 24 * 60;

/// When a wave can start at the earliest under the plan's schedule.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct WaveEarliest {
    pub wave: u32,
    /// RFC 3339, UTC.
    pub at: String,
    /// The same instant in the schedule's time zone (`Mon 2026-11-30 22:00 CET`).
    pub local: String,
    /// The schedule makes it wait (a start ahead, the time between waves or a closed window).
    pub waits: bool,
}

/// What a plan would do, before it is started.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PlanPreview {
    pub problems: Vec<FieldError>,
    pub module_name: String,
    /// Devices the rollout would update.
    pub devices: u32,
    /// Devices of the choice left out because they already run the version.
    pub already_on_version: u32,
    /// Devices of the choice with an update to another version under way (it is replaced).
    pub updating_elsewhere: u32,
    /// Devices of the choice left out because a running or paused rollout of the module has
    /// them (two rollouts never target the same device).
    pub in_other_rollouts: u32,
    /// Those rollouts' ids, with how many of the chosen devices each has, most first.
    pub other_rollouts: Vec<(String, u32)>,
    /// When each wave can start at the earliest under the schedule, every wave succeeding at
    /// once (empty without a schedule).
    pub calendar: Vec<WaveEarliest>,
    /// Devices per wave.
    pub wave_sizes: Vec<u32>,
    /// What each wave tolerates before the rollout stops going on (same rules as [`advance`](super::advance)).
    pub wave_budgets: Vec<WaveBudget>,
    /// The target is older than what some of the devices to update run.
    pub downgrade: Option<Downgrade>,
    /// The current versions of the chosen devices (those that report one), with how many run
    /// each, most first: what the app compares the target with to call it a downgrade (the
    /// order of versions is the app's, not the service's, which states none).
    pub running: Vec<RunningVersion>,
}

/// Cuts `n` devices into waves at the cumulative percentages `waves` (each at least one device
/// while devices remain).
pub fn wave_sizes(n: usize, waves: &[f64]) -> Vec<u32> {
    let mut sizes = Vec::with_capacity(waves.len());
    let mut taken = 0usize;
    for (i, w) in waves.iter().enumerate() {
        let end = if i + 1 == waves.len() { n } else { ((w / 100.0) * n as f64).ceil() as usize };
        let end = end.max(taken + 1).min(n);
        sizes.push((end - taken) as u32);
        taken = end;
    }
    sizes
}

/// When failed devices are retried.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct RetryPolicy {
    /// How many times a device's target is set again after it failed (1 to 10).
    pub times: u32,
    /// Minutes after a failure before its retry (0 to 1,440).
    pub delay_minutes: u32,
    /// Failures whose reason contains one of these (case-insensitive) are never retried: those
    /// a retry cannot mend (for example "signature", "incompatible", "not enough free flash").
    pub never_for: Vec<String>,
}

pub const MAX_RETRIES: u32 = 10;
pub const MAX_RETRY_DELAY_MINUTES: u32 = 24 * 60;

impl RetryPolicy {
    /// Every rule the policy breaks, each naming its field (`retry.times`).
    pub fn check(&self) -> Vec<FieldError> {
        let mut problems = Vec::new();
        if !(1..=MAX_RETRIES).contains(&self.times) {
            problems
                .push(FieldError::new("retry.times", format!("must be from 1 to {MAX_RETRIES}, got {}", self.times)));
        }
        if self.delay_minutes > MAX_RETRY_DELAY_MINUTES {
            problems.push(FieldError::new(
                "retry.delayMinutes",
                format!("must be from 0 to {MAX_RETRY_DELAY_MINUTES} minutes (a day), got {}", self.delay_minutes),
            ));
        }
        if self.never_for.len() > 20 {
            problems.push(FieldError::new("retry.neverFor", "at most 20 reasons"));
        } else if let Some(w) = self.never_for.iter().find(|w| w.trim().is_empty() || w.chars().count() > 200) {
            problems.push(FieldError::new(
                "retry.neverFor",
                format!("each reason is 1 to 200 characters of the failure's details, got `{w}`"),
            ));
        }
        problems
    }

    /// Whether a failure with these details may be retried.
    pub fn qualifies(&self, details: Option<&str>) -> bool {
        let d = details.unwrap_or("").to_lowercase();
        !self.never_for.iter().any(|w| d.contains(&w.trim().to_lowercase()))
    }
}
