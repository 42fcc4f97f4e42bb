//! What a running rollout says about its next wave and its wave under way: the hold that keeps
//! the next wave back (the schedule, the operator's approval) and the warning of a wave that
//! stopped moving. Pure data, stored on the rollout's row and shown by its view.

use serde::{Deserialize, Serialize};

/// What holds a running rollout's next wave back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum HoldKind {
    /// The schedule's start is ahead.
    Start,
    /// The least time between two waves' starts has not passed.
    Gap,
    /// No maintenance window is open.
    Window,
    /// The operator's "Continue" (approval between waves).
    Approval,
}

/// Why the next wave of a running rollout does not start yet, and until when.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Hold {
    pub kind: HoldKind,
    /// The wave held back (0-based).
    pub wave: u32,
    /// RFC 3339: when it may start (none for approval).
    pub until: Option<String>,
    /// The same in the schedule's time zone.
    pub until_local: Option<String>,
    /// What the event log says, with the previous wave's figures at that moment for approval.
    pub message: String,
}

/// A wave under way that has seen no change for the plan's time: the devices that did not move.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct HangWarning {
    /// The wave (0-based).
    pub wave: u32,
    /// RFC 3339: the last change seen.
    pub since: String,
    pub minutes: u32,
    /// Devices whose update under the rollout has not finished.
    pub devices: u32,
    /// The first ten of them.
    pub sample: Vec<String>,
    pub message: String,
}
