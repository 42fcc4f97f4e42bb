//! What the desktop notifications say, and which the operator wants: a rollout's wave started
//! (the wave before it finished), a rollout paused by a threshold or completed, a downlink the
//! console sent reaching a final status, an upload finished while the window was not focused.
//! Each names the item it opens when clicked (a [`Link`]). The app shows them (the OS's
//! notification service); the choice is kept in the fleet database's settings.

use serde::{Deserialize, Serialize};

use crate::downlinks::DownlinkView;
use crate::fleet::rollout::{HoldKind, RolloutView, StepOutcome};
use crate::fleet::FleetDb;
use crate::links::{Link, LinkKind};

/// Which notifications are raised (all, unless the operator turned some off).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct NoticeSettings {
    /// A wave started (the one before it finished).
    pub waves: bool,
    /// A rollout paused by a threshold, or completed.
    pub rollouts: bool,
    /// A downlink sent from the console reached a final status.
    pub downlinks: bool,
    /// An upload finished while the window was not focused.
    pub uploads: bool,
}

impl Default for NoticeSettings {
    fn default() -> NoticeSettings {
        NoticeSettings { waves: true, rollouts: true, downlinks: true, uploads: true }
    }
}

const SETTING: &str = "notifications";

impl NoticeSettings {
    /// As kept in `db`; the defaults when none is kept or it cannot be read.
    pub fn load(db: &FleetDb) -> NoticeSettings {
        db.setting(SETTING).ok().flatten().and_then(|v| serde_json::from_str(&v).ok()).unwrap_or_default()
    }

    pub fn save(&self, db: &FleetDb) -> crate::fleet::Result<()> {
        db.set_setting(SETTING, &serde_json::to_string(self).expect("flags serialise"))
    }

    pub fn allows(&self, topic: Topic) -> bool {
        match topic {
            Topic::Wave => self.waves,
            Topic::Rollout => self.rollouts,
            Topic::Downlink => self.downlinks,
            Topic::Upload => self.uploads,
        }
    }
}

/// What a notice is about (the setting that allows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    Wave,
    Rollout,
    Downlink,
    Upload,
}

/// A notification to raise.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub topic: Topic,
    pub summary: String,
    pub body: String,
    /// What clicking it opens.
    pub open: Link,
}

/// The notice of a rollout's move, or none (nothing to tell).
pub fn of_rollout(view: &RolloutView, outcome: &StepOutcome) -> Option<Notice> {
    let name = format!("{} {}", view.module_name, view.version);
    let open = Link { kind: LinkKind::Rollout, id: view.id.clone() };
    let waves = view.waves.len();
    let (topic, summary, body) = match outcome {
        StepOutcome::Waiting | StepOutcome::Elsewhere { .. } => return None,
        StepOutcome::WaveStarted { wave, set, refused } => {
            let n = wave + 1;
            let before = match wave.checked_sub(1).and_then(|w| view.waves.get(w as usize)) {
                Some(w) => format!("Wave {wave} finished: {} succeeded, {} failed. ", w.succeeded, w.failed),
                None => String::new(),
            };
            let refused = if *refused > 0 { format!(", {refused} refused") } else { String::new() };
            (
                Topic::Wave,
                format!("Rollout of {name}: wave {n} of {waves} started"),
                format!("{before}{set} targets set{refused}."),
            )
        }
        StepOutcome::Paused { reason } => (Topic::Rollout, format!("Rollout of {name} paused"), reason.clone()),
        StepOutcome::Retrying { sent: 0, .. } => return None,
        StepOutcome::Retrying { sent, .. } => (
            Topic::Wave,
            format!("Rollout of {name}: {sent} failed device{} retried", if *sent == 1 { "" } else { "s" }),
            format!("Their target {} was set again.", view.version),
        ),
        StepOutcome::Joined { wave, devices } => (
            Topic::Wave,
            format!(
                "Rollout of {name}: {devices} new device{} joined wave {}",
                if *devices == 1 { "" } else { "s" },
                wave + 1
            ),
            if *wave as i32 == view.current_wave {
                format!("They appeared after the start; their target {} was set.", view.version)
            } else {
                "They appeared after the start; their targets are set when the wave starts.".to_owned()
            },
        ),
        StepOutcome::Hanging { warning } => (
            Topic::Rollout,
            format!(
                "Rollout of {name}: wave {} has not moved for {} minute{}",
                warning.wave + 1,
                warning.minutes,
                if warning.minutes == 1 { "" } else { "s" }
            ),
            warning.message.clone(),
        ),
        StepOutcome::Held { hold } => (
            Topic::Rollout,
            match hold.kind {
                HoldKind::Approval => format!("Rollout of {name}: wave {} waits for approval", hold.wave + 1),
                _ => format!("Rollout of {name}: wave {} waits for its schedule", hold.wave + 1),
            },
            hold.message.clone(),
        ),
        StepOutcome::Completed => (
            Topic::Rollout,
            format!("Rollout of {name} completed"),
            format!("{} of {} devices succeeded, {} failed.", view.total.succeeded, view.total.size, view.total.failed),
        ),
    };
    Some(Notice { topic, summary, body, open })
}

/// The notice of a sent downlink that reached a final status.
pub fn of_downlink(d: &DownlinkView) -> Notice {
    let why = d.failure_reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
    Notice {
        topic: Topic::Downlink,
        summary: format!("{} downlink {}", d.kind.label(), d.status),
        body: format!("To {}{why}: {}", d.device, d.status_explanation),
        open: Link { kind: LinkKind::Downlink, id: d.id.clone() },
    }
}

/// The notice of a finished upload of `what` (a firmware file, release notes) to a package.
pub fn of_upload(package: uuid::Uuid, what: &str, name: &str) -> Notice {
    Notice {
        topic: Topic::Upload,
        summary: format!("Upload finished: {name}"),
        body: format!("The {what} was uploaded to package {package}."),
        open: Link { kind: LinkKind::Package, id: package.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::ScopeKey;

    #[test]
    fn settings_default_to_all_and_are_kept_and_a_bad_stored_value_is_the_default() {
        let db = FleetDb::in_memory().unwrap();
        let _ = db.scope(&ScopeKey { profile: "p".into(), base_url: "http://x".into(), customer: None }).unwrap();
        assert_eq!(NoticeSettings::load(&db), NoticeSettings::default());
        let s = NoticeSettings { waves: false, ..Default::default() };
        s.save(&db).unwrap();
        assert_eq!(NoticeSettings::load(&db), s);
        assert!(!s.allows(Topic::Wave) && s.allows(Topic::Rollout));
        db.set_setting(SETTING, "{not json").unwrap();
        assert_eq!(NoticeSettings::load(&db), NoticeSettings::default());
        // A setting kept by a later version with a member this one lacks, and one missing.
        db.set_setting(SETTING, r#"{"waves": false, "tray": true}"#).unwrap();
        assert_eq!(NoticeSettings::load(&db), NoticeSettings { waves: false, ..Default::default() });
    }
}
