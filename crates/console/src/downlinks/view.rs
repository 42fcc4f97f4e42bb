//! One row shape for every downlink kind, with the words that explain its status, failure
//! reason and what a cancellation would do, and its feedback deadline.

use dcs_api::model::downlinks::{
    ActuatorDownlink, ConnectionDownlink, ConnectionDownlinkStatus, DownlinkStatus, FailureReason,
};
use dcs_api::model::duration::parse_duration;
use dcs_api::model::timestamp::format_millis;
use dcs_api::model::Timestamp;
use serde::Serialize;
use serde_json::Value;

use super::DownlinkKind;

/// Where a downlink stands, for colour and icons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    InProgress,
    Delivered,
    Failed,
    Cancelled,
    /// A status this version does not know.
    Unknown,
}

/// Where a downlink stands for a cancellation (simulator assumption A-29).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum CancelState {
    /// Waiting in the queue: cancelled at once.
    Queued,
    /// On its way: cancelled only with `forced`.
    Executing,
    /// Nothing left to cancel: the service refuses (409) or accepts and leaves it as it is.
    Final,
    Unknown,
}

/// What a cancellation would do now, in words: without and with `forced`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CancelAdvice {
    pub state: CancelState,
    /// What a plain cancellation does.
    pub plain: String,
    /// What `forced` changes.
    pub forced: String,
}

impl CancelAdvice {
    fn new(kind: DownlinkKind, status: &str, is_final: bool) -> CancelAdvice {
        let queued = match kind {
            DownlinkKind::Actuator => matches!(status, "PENDING" | "RETRY"),
            _ => status == "PENDING",
        };
        let executing = match kind {
            DownlinkKind::Actuator => matches!(status, "EXECUTING" | "SENT_TO_CARRIER"),
            _ => status == "EXECUTING",
        };
        let (state, plain, forced) = if is_final {
            (
                CancelState::Final,
                format!(
                    "It is already {status}: there is nothing left to cancel. The service refuses (409 conflict) or \
                     accepts and leaves it {status}; the service's API documentation does not say which."
                ),
                "Forced changes nothing for a downlink that is final.".to_owned(),
            )
        } else if queued {
            (
                CancelState::Queued,
                format!("It is {status}, still waiting in the queue: the service cancels it at once."),
                "Forced is not needed while it waits in the queue; it changes nothing.".to_owned(),
            )
        } else if executing {
            (
                CancelState::Executing,
                format!(
                    "It is {status}, already on its way to the device: without forced the service refuses rather than \
                     stop it half-sent, with a 409 or by accepting and leaving it {status} (the service's API documentation does \
                     not say which); the status afterwards tells."
                ),
                "Forced stops it anyway, even though part of it may already have reached the device.".to_owned(),
            )
        } else {
            (
                CancelState::Unknown,
                format!(
                    "This console does not know the status {status}; the service decides whether it can be cancelled."
                ),
                "Forced asks the service to stop it even if it is already being sent.".to_owned(),
            )
        };
        CancelAdvice { state, plain, forced }
    }
}

/// A downlink of any kind as the console shows it: the service's answer (`body`, untouched)
/// and what the console derives from it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DownlinkView {
    pub kind: DownlinkKind,
    pub id: String,
    /// The target: `networkId` of an actuator downlink, `deviceId` of the others.
    pub device: String,
    pub external_reference: Option<String>,
    pub status: String,
    /// No further change will happen.
    pub is_final: bool,
    pub outcome: Outcome,
    pub status_explanation: String,
    pub failure_reason: Option<String>,
    pub failure_explanation: Option<String>,
    pub created_at: Option<String>,
    pub modified_at: Option<String>,
    pub retry_count: Option<u32>,
    pub retry_limit: Option<u32>,
    pub feedback_timeout: Option<String>,
    /// `createdAt + feedbackTimeout`: when the service stops waiting for feedback.
    pub deadline: Option<String>,
    pub dry_run: Option<bool>,
    pub cancel: CancelAdvice,
    /// The service's JSON, as received (to the UI: pretty-printed text).
    #[serde(serialize_with = "pretty_text")]
    #[cfg_attr(feature = "specta", specta(type = String))]
    pub body: Value,
}

fn pretty_text<S: serde::Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&pretty(v))
}

fn deadline(created: Option<Timestamp>, timeout: Option<&str>) -> Option<String> {
    let d = parse_duration(timeout?).ok()?;
    let d = time::Duration::try_from(d).ok()?;
    created?.checked_add(d).map(format_millis)
}

impl DownlinkView {
    /// The view of an actuator downlink now (this computer's clock; see [`Self::actuator_at`]).
    pub fn actuator(d: &ActuatorDownlink, body: Value) -> DownlinkView {
        Self::actuator_at(d, body, time::OffsetDateTime::now_utc())
    }

    /// The view at `now`: whether it is final is [`ActuatorDownlink::is_final_at`] (a status
    /// this version does not know is final once its feedback deadline has passed).
    pub fn actuator_at(d: &ActuatorDownlink, body: Value, now: Timestamp) -> DownlinkView {
        let status = d.status.as_str().to_owned();
        let is_final = d.is_final_at(now);
        let outcome = match &d.status {
            DownlinkStatus::Delivered => Outcome::Delivered,
            DownlinkStatus::Failed => Outcome::Failed,
            DownlinkStatus::Cancelled => Outcome::Cancelled,
            DownlinkStatus::Unknown(_) => Outcome::Unknown,
            _ => Outcome::InProgress,
        };
        DownlinkView {
            kind: DownlinkKind::Actuator,
            id: d.id.clone().unwrap_or_default(),
            device: d.network_id.clone(),
            external_reference: d.external_reference.clone(),
            // What a cancellation does depends on the status as known, not on the deadline.
            cancel: CancelAdvice::new(DownlinkKind::Actuator, &status, d.status.is_final()),
            status_explanation: d.status.explain().to_owned(),
            status,
            is_final,
            outcome,
            failure_reason: d.last_failure_reason.as_ref().map(|r| r.as_str().to_owned()),
            failure_explanation: d.last_failure_reason.as_ref().map(|r| FailureReason::explain(r).to_owned()),
            created_at: d.created_at.map(format_millis),
            modified_at: d.modified_at.map(format_millis),
            retry_count: d.retry_count,
            retry_limit: d.retry_limit,
            deadline: deadline(d.created_at, d.feedback_timeout.as_deref()),
            feedback_timeout: d.feedback_timeout.clone(),
            dry_run: d.dry_run,
            body,
        }
    }

    /// The view of a connection-specific downlink now (see [`Self::connection_at`]).
    pub fn connection(kind: DownlinkKind, d: &ConnectionDownlink, body: Value) -> DownlinkView {
        Self::connection_at(kind, d, body, time::OffsetDateTime::now_utc())
    }

    /// The view at `now`: whether it is final is [`ConnectionDownlink::is_final_at`].
    pub fn connection_at(kind: DownlinkKind, d: &ConnectionDownlink, body: Value, now: Timestamp) -> DownlinkView {
        let st = d.status.clone().unwrap_or_else(|| ConnectionDownlinkStatus::Unknown(String::new()));
        let status = if st.as_str().is_empty() { "(none)".to_owned() } else { st.as_str().to_owned() };
        let is_final = d.is_final_at(now);
        let outcome = match (&st, &d.last_failure_reason) {
            (ConnectionDownlinkStatus::Done, None) => Outcome::Delivered,
            (ConnectionDownlinkStatus::Done, Some(FailureReason::Cancelled)) => Outcome::Cancelled,
            (ConnectionDownlinkStatus::Done, Some(_)) => Outcome::Failed,
            (ConnectionDownlinkStatus::Unknown(_), _) => Outcome::Unknown,
            _ => Outcome::InProgress,
        };
        DownlinkView {
            kind,
            id: d.id.clone().unwrap_or_default(),
            device: d.device_id.clone(),
            external_reference: None,
            cancel: CancelAdvice::new(kind, &status, st.is_final()),
            status_explanation: st.explain().to_owned(),
            status,
            is_final,
            outcome,
            failure_reason: d.last_failure_reason.as_ref().map(|r| r.as_str().to_owned()),
            failure_explanation: d.last_failure_reason.as_ref().map(|r| r.explain().to_owned()),
            created_at: d.created_at.map(format_millis),
            modified_at: d.modified_at.map(format_millis),
            retry_count: d.retry_count,
            retry_limit: d.retry_limit,
            deadline: deadline(d.created_at, d.feedback_timeout.as_deref()),
            feedback_timeout: d.feedback_timeout.clone(),
            dry_run: d.dry_run,
            body,
        }
    }
}

pub(super) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::downlinks::listing::connection_id;
    use serde_json::json;

    /// The reference says only that a cancellation is accepted (202); whether a final or an
    /// executing one is refused with a 409 or accepted and left as it was is a simulator choice
    /// (A-29, flipped by the alt variant): the advice names both, never one as a fact.
    #[test]
    fn cancel_advice_does_not_promise_a_409() {
        for (status, is_final, state) in
            [("DELIVERED", true, CancelState::Final), ("EXECUTING", false, CancelState::Executing)]
        {
            let a = CancelAdvice::new(DownlinkKind::Actuator, status, is_final);
            assert_eq!(a.state, state);
            let accepted = [format!("accepting and leaving it {status}"), format!("accepts and leaves it {status}")];
            assert!(a.plain.contains("409") && accepted.iter().any(|w| a.plain.contains(w.as_str())), "{}", a.plain);
            assert!(a.plain.contains("the service's API documentation does not say"), "{}", a.plain);
        }
    }

    #[test]
    fn views_explain_statuses_reasons_and_cancellation() {
        let raw = json!({"id": "a", "networkId": "urn:dev:imei:350000000000001:", "status": "EXECUTING",
                         "createdAt": "2026-01-05T08:00:00Z", "feedbackTimeout": "PT15M", "retryLimit": 2, "retryCount": 1});
        let d: ActuatorDownlink = serde_json::from_value(raw.clone()).unwrap();
        let v = DownlinkView::actuator(&d, raw.clone());
        assert_eq!(v.deadline.as_deref(), Some("2026-01-05T08:15:00.000Z"));
        assert_eq!((v.outcome, v.is_final, v.cancel.state), (Outcome::InProgress, false, CancelState::Executing));
        assert_eq!(v.status_explanation, DownlinkStatus::Executing.explain());
        assert!(v.cancel.plain.contains("409") && v.cancel.forced.contains("anyway"));
        assert_eq!(v.body, raw);

        let raw = json!({"id": "9ecdd0c3-c84c-439f-9aec-9f2b404e5cf2", "deviceId": "deveui:70b3d57ed0000005",
                         "status": "DONE", "lastFailureReason": "EVICTED", "payloadHex": "01"});
        let d: ConnectionDownlink = serde_json::from_value(raw.clone()).unwrap();
        let v = DownlinkView::connection(DownlinkKind::Lora, &d, raw);
        assert_eq!((v.outcome, v.is_final, v.cancel.state), (Outcome::Failed, true, CancelState::Final));
        assert_eq!(v.failure_explanation.as_deref(), Some(FailureReason::Evicted.explain()));
        assert!(v.deadline.is_none(), "no createdAt, no deadline");

        for (status, reason, outcome, state) in [
            ("PENDING", None, Outcome::InProgress, CancelState::Queued),
            ("DONE", None, Outcome::Delivered, CancelState::Final),
            ("DONE", Some("CANCELLED"), Outcome::Cancelled, CancelState::Final),
            ("LOST", None, Outcome::Unknown, CancelState::Unknown),
        ] {
            let mut raw = json!({"deviceId": "imei:350000000000001", "status": status});
            if let Some(r) = reason {
                raw["lastFailureReason"] = json!(r);
            }
            let d: ConnectionDownlink = serde_json::from_value(raw.clone()).unwrap();
            let v = DownlinkView::connection(DownlinkKind::Mqtt, &d, raw);
            assert_eq!((v.outcome, v.cancel.state), (outcome, state), "{status}");
        }
        let retry: ActuatorDownlink = serde_json::from_value(json!({"networkId": "n", "status": "RETRY"})).unwrap();
        assert_eq!(DownlinkView::actuator(&retry, Value::Null).cancel.state, CancelState::Queued);
    }

    #[test]
    fn an_unknown_status_is_watched_until_its_feedback_deadline_then_final() {
        use time::macros::datetime;
        let raw = json!({"id": "a", "networkId": "n", "status": "ON_HOLD", "createdAt": "2026-01-05T08:00:00Z", "feedbackTimeout": "PT15M"});
        let d: ActuatorDownlink = serde_json::from_value(raw.clone()).unwrap();
        let before = DownlinkView::actuator_at(&d, raw.clone(), datetime!(2026-01-05 08:14:59 UTC));
        assert!(!before.is_final, "keep polling before createdAt + feedbackTimeout");
        let after = DownlinkView::actuator_at(&d, raw.clone(), datetime!(2026-01-05 08:15:00 UTC));
        assert!(after.is_final, "stop polling once the deadline has passed");
        assert_eq!(
            (after.outcome, after.cancel.state),
            (Outcome::Unknown, CancelState::Unknown),
            "the service still decides a cancellation"
        );

        let raw = json!({"id": "dm-7", "deviceId": "imei:350000000000001", "status": "PARKED", "createdAt": "2026-01-05T08:00:00"});
        let c: ConnectionDownlink = serde_json::from_value(raw.clone()).unwrap();
        assert!(
            !DownlinkView::connection_at(DownlinkKind::Digitalmatter, &c, raw.clone(), datetime!(2026-01-05 08:59 UTC))
                .is_final
        );
        let v = DownlinkView::connection_at(DownlinkKind::Digitalmatter, &c, raw, datetime!(2026-01-05 09:00 UTC));
        assert!(v.is_final, "no feedbackTimeout: one hour");
        assert_eq!(v.id, "dm-7");
        assert_eq!(connection_id(DownlinkKind::Digitalmatter, " dm-7 ").unwrap(), "dm-7");
        assert_eq!(connection_id(DownlinkKind::Lora, "dm-7").unwrap_err().field, "downlinkId");
    }
}
