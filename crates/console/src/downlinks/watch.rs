//! The statuses the console has seen a downlink in: the service only gives the current status,
//! so the timeline is what this process observed, kept in memory per profile and customer,
//! bounded, and gone when the app closes. Also the service's clock as the UI counts from it.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use dcs_api::model::timestamp::format_millis;
use dcs_api::model::Timestamp;
use serde::Serialize;

use super::{DownlinkKind, DownlinkView};

/// One status the console saw a downlink in, and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    pub status: String,
    pub retry_count: Option<u32>,
    /// When the console first saw it so (this computer's clock, UTC).
    pub seen_at: String,
    /// The service's `modifiedAt` at that moment (the service's clock).
    pub modified_at: Option<String>,
}

type WatchKey = (String, DownlinkKind, String);
/// What each downlink was seen as, and the order the downlinks were first seen in.
type Seen = (HashMap<WatchKey, Vec<Observation>>, VecDeque<WatchKey>);

/// The statuses seen per downlink, in memory. Keyed by scope (profile and customer), kind and
/// id, so two customers' downlinks never mix. Bounded: the oldest downlinks are forgotten past
/// [`Watch::MAX_DOWNLINKS`], and a downlink keeps its first and latest observations past
/// [`Watch::MAX_OBSERVATIONS`].
#[derive(Default)]
pub struct Watch {
    inner: Mutex<Seen>,
}

impl Watch {
    pub const MAX_DOWNLINKS: usize = 2000;
    pub const MAX_OBSERVATIONS: usize = 32;

    pub fn new() -> Watch {
        Watch::default()
    }

    /// Records `view` as seen at `seen_at` (a new entry only when its status or retry count
    /// changed) and returns everything seen of it so far, oldest first.
    pub fn observe(&self, scope: &str, view: &DownlinkView, seen_at: Timestamp) -> Vec<Observation> {
        let key = (scope.to_owned(), view.kind, view.id.clone());
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (map, order) = &mut *guard;
        if !map.contains_key(&key) {
            if map.len() >= Self::MAX_DOWNLINKS {
                if let Some(old) = order.pop_front() {
                    map.remove(&old);
                }
            }
            order.push_back(key.clone());
        }
        let seen = map.entry(key).or_default();
        let changed = seen.last().is_none_or(|l| l.status != view.status || l.retry_count != view.retry_count);
        if changed {
            if seen.len() >= Self::MAX_OBSERVATIONS {
                seen.remove(1);
            }
            seen.push(Observation {
                status: view.status.clone(),
                retry_count: view.retry_count,
                seen_at: format_millis(seen_at),
                modified_at: view.modified_at.clone(),
            });
        }
        seen.clone()
    }

    /// Everything seen of a downlink, oldest first.
    pub fn observed(&self, scope: &str, kind: DownlinkKind, id: &str) -> Vec<Observation> {
        let guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        guard.0.get(&(scope.to_owned(), kind, id.to_owned())).cloned().unwrap_or_default()
    }
}

/// The service's clock as the console estimates it: `now` when the answer was made, and how
/// many service seconds pass per real second (1 for a real service; the embedded simulator's
/// speed). The UI counts down from it without asking again.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ServiceClock {
    pub now: String,
    pub rate: f64,
}

impl ServiceClock {
    /// A real service: this computer's clock.
    pub fn wall() -> ServiceClock {
        ServiceClock { now: format_millis(time::OffsetDateTime::now_utc()), rate: 1.0 }
    }
}

/// One downlink with what the console saw of it, for the detail view and its timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DownlinkDetail {
    pub downlink: DownlinkView,
    /// Statuses the console saw it in, oldest first (only while it was shown).
    pub observed: Vec<Observation>,
    pub clock: ServiceClock,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use time::macros::datetime;

    fn view(status: &str, retry_count: u32) -> DownlinkView {
        let raw = json!({"id": "d1", "networkId": "n", "status": status, "retryCount": retry_count,
                         "modifiedAt": "2026-01-05T08:00:00Z"});
        DownlinkView::actuator(&serde_json::from_value(raw.clone()).unwrap(), raw)
    }

    #[test]
    fn the_watch_keeps_each_change_once_per_scope() {
        let w = Watch::new();
        let t = datetime!(2026-01-05 09:00 UTC);
        w.observe("p|", &view("PENDING", 0), t);
        w.observe("p|", &view("PENDING", 0), t + time::Duration::seconds(1));
        w.observe("p|", &view("EXECUTING", 0), t + time::Duration::seconds(2));
        w.observe("p|", &view("RETRY", 1), t + time::Duration::seconds(3));
        let seen = w.observe("p|", &view("RETRY", 1), t + time::Duration::seconds(4));
        let statuses: Vec<&str> = seen.iter().map(|o| o.status.as_str()).collect();
        assert_eq!(statuses, ["PENDING", "EXECUTING", "RETRY"]);
        assert_eq!(seen[0].seen_at, "2026-01-05T09:00:00.000Z");
        assert_eq!(seen[2].retry_count, Some(1));
        assert!(w.observed("other|", DownlinkKind::Actuator, "d1").is_empty(), "another customer's scope");
        assert!(w.observed("p|", DownlinkKind::Lora, "d1").is_empty(), "another kind");
        assert_eq!(w.observed("p|", DownlinkKind::Actuator, "d1"), seen);
    }

    #[test]
    fn the_watch_is_bounded() {
        let w = Watch::new();
        let t = datetime!(2026-01-05 09:00 UTC);
        for i in 0..(Watch::MAX_OBSERVATIONS as u32 + 5) {
            w.observe("s", &view("RETRY", i), t);
        }
        let seen = w.observed("s", DownlinkKind::Actuator, "d1");
        assert_eq!(seen.len(), Watch::MAX_OBSERVATIONS);
        assert_eq!(seen[0].retry_count, Some(0), "the first observation stays");
        for i in 0..Watch::MAX_DOWNLINKS + 1 {
            let mut v = view("PENDING", 0);
            v.id = format!("x{i}");
            w.observe("s", &v, t);
        }
        assert!(w.observed("s", DownlinkKind::Actuator, "d1").is_empty(), "the oldest downlink is forgotten");
        assert_eq!(w.observed("s", DownlinkKind::Actuator, &format!("x{}", Watch::MAX_DOWNLINKS)).len(), 1);
    }
}
