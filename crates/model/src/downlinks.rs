//! Downlink statuses and failure reasons (sections 2.6, 2.7, 3): enums of the known values
//! that keep any other value. Bodies whose shape the reference does not show (the actuator
//! `method` variants, payloads) stay JSON.
//!
//! The answer types are shared: the client reads them, the simulator writes its answers
//! through them, so the two cannot disagree on a member's name or shape.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Timestamp;

crate::known_values! {
    /// Status of an actuator-style downlink (`/downlinks`).
    DownlinkStatus {
        Pending => "PENDING",
        Executing => "EXECUTING",
        SentToCarrier => "SENT_TO_CARRIER",
        Cancelled => "CANCELLED",
        Retry => "RETRY",
        Delivered => "DELIVERED",
        Failed => "FAILED",
    }
}

impl DownlinkStatus {
    /// No further change will happen: a known final status. An unknown status is judged by
    /// [`ActuatorDownlink::is_final_at`], which knows when the downlink was made.
    pub fn is_final(&self) -> bool {
        matches!(self, Self::Cancelled | Self::Delivered | Self::Failed)
    }

    /// What the status means, in words for people (transitions: assumption A-30).
    pub fn explain(&self) -> &'static str {
        match self {
            Self::Pending => "waiting in the queue until the device can be reached",
            Self::Executing => "being sent to the device now",
            Self::SentToCarrier => "handed to the network operator, waiting for the device to confirm it",
            Self::Cancelled => "cancelled on request; it will not be delivered",
            Self::Retry => "the last attempt was not confirmed; it will be sent again",
            Self::Delivered => "the device received it",
            Self::Failed => "it could not be delivered; the failure reason says why",
            Self::Unknown(_) => "a status this version of the console does not know",
        }
    }
}

crate::known_values! {
    /// Status of an HTTP, LoRa, MQTT or SMS downlink.
    ConnectionDownlinkStatus {
        Pending => "PENDING",
        Executing => "EXECUTING",
        Done => "DONE",
    }
}

impl ConnectionDownlinkStatus {
    /// No further change will happen: `DONE`. An unknown status is judged by
    /// [`ConnectionDownlink::is_final_at`], which knows when the downlink was made.
    pub fn is_final(&self) -> bool {
        matches!(self, Self::Done)
    }

    /// What the status means, in words for people (transitions: assumption A-31).
    pub fn explain(&self) -> &'static str {
        match self {
            Self::Pending => "waiting in the queue until the device can be reached",
            Self::Executing => "being sent to the device now; failed attempts are retried in this status",
            Self::Done => "finished: delivered, unless a failure reason says otherwise",
            Self::Unknown(_) => "a status this version of the console does not know",
        }
    }
}

crate::known_values! {
    /// `lastFailureReason` of connection-specific downlinks: the union of every kind's values.
    FailureReason {
        Cancelled => "CANCELLED",
        Timeout => "TIMEOUT",
        Evicted => "EVICTED",
        FeedbackTimeout => "FEEDBACK_TIMEOUT",
        NotAcknowledgedByDevice => "NOT_ACKNOWLEDGED_BY_DEVICE",
        FailedToTransmitToDevice => "FAILED_TO_TRANSMIT_TO_DEVICE",
        FailedToEnqueueForTransmission => "FAILED_TO_ENQUEUE_FOR_TRANSMISSION",
        FailureToTransmitToDevice => "FAILURE_TO_TRANSMIT_TO_DEVICE",
        FailureToEnqueueForTransmission => "FAILURE_TO_ENQUEUE_FOR_TRANSMISSION",
    }
}

impl FailureReason {
    /// What the reason means, in words for people.
    pub fn explain(&self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled on request before it was delivered",
            Self::Timeout => "the device did not fetch it in time",
            Self::Evicted => "dropped from the device's queue to make room for newer downlinks",
            Self::FeedbackTimeout => "no feedback from the device before the feedback timeout",
            Self::NotAcknowledgedByDevice => "the device did not acknowledge it, retries used up",
            Self::FailedToTransmitToDevice | Self::FailureToTransmitToDevice => {
                "the network could not transmit it to the device"
            }
            Self::FailedToEnqueueForTransmission | Self::FailureToEnqueueForTransmission => {
                "the network refused to queue it for transmission"
            }
            Self::Unknown(_) => "a reason this version of the console does not know",
        }
    }
}

/// How long a downlink without a `feedbackTimeout` may run before a status this version does
/// not know is taken as final (see [`unknown_status_is_final`]).
pub const UNKNOWN_STATUS_DEFAULT_TIMEOUT: time::Duration = time::Duration::HOUR;

/// Whether a downlink in a status this version does not know has stopped changing, at `now`.
///
/// The reference lists the known statuses (section 3) but not their transitions, so an unknown
/// one may be a new final status or a new step on the way. The one bound it gives is the
/// `feedbackTimeout`: "time after which feedback is expected". So an unknown status is taken as
/// final once `createdAt + feedbackTimeout` has passed (one hour,
/// [`UNKNOWN_STATUS_DEFAULT_TIMEOUT`], when the downlink carries no readable timeout), and as
/// still running before that. A downlink that shows no `createdAt` (nor `modifiedAt`) gives no
/// time to wait from, so it is taken as final at once rather than watched forever.
pub fn unknown_status_is_final(created_at: Option<Timestamp>, feedback_timeout: Option<&str>, now: Timestamp) -> bool {
    let Some(start) = created_at else { return true };
    let timeout = feedback_timeout
        .and_then(|t| crate::duration::parse_duration(t).ok())
        .and_then(|d| time::Duration::try_from(d).ok())
        .unwrap_or(UNKNOWN_STATUS_DEFAULT_TIMEOUT);
    match start.checked_add(timeout) {
        Some(deadline) => now >= deadline,
        None => false,
    }
}

/// The connection-specific downlink families of section 4.3 (and the digital-matter one).
pub const CONNECTION_KINDS: &[&str] = &["http", "lora", "mqtt", "sms", "digitalmatter"];

/// An actuator-style downlink (section 2.6), plus the members the simulator also returns for
/// the console's timeline when present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ActuatorDownlink {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Required by the reference; an answer without it still reads (empty).
    #[serde(default)]
    pub network_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_reference: Option<String>,
    /// Required by the reference; an answer without it reads as an unknown, empty status.
    #[serde(default = "DownlinkStatus::missing")]
    pub status: DownlinkStatus,
    /// The SenML message the encoder made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::millis_option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub created_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::millis_option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub modified_at: Option<Timestamp>,
    /// One of the four variants (not shown; A-23), kept as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_count: Option<u32>,
    /// An ISO 8601 duration such as `PT1H`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure_reason: Option<FailureReason>,
    /// Members this version does not know, kept as sent.
    #[serde(flatten)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: Map<String, Value>,
}

impl DownlinkStatus {
    fn missing() -> Self {
        Self::Unknown(String::new())
    }
}

impl ActuatorDownlink {
    /// The SenML message as one line of JSON text. The reference (section 2.6) sends it as a
    /// string holding the JSON array; an answer that sends the array itself reads too. A string
    /// that is not JSON is shown as it came.
    pub fn message_text(&self) -> Option<String> {
        match self.message.as_ref()? {
            Value::String(s) => Some(match serde_json::from_str::<Value>(s) {
                Ok(v) => v.to_string(),
                Err(_) => s.clone(),
            }),
            other => Some(other.to_string()),
        }
    }

    /// No further change will happen, judged at `now`: a known final status, or an unknown
    /// status past its deadline ([`unknown_status_is_final`]).
    pub fn is_final_at(&self, now: Timestamp) -> bool {
        match &self.status {
            DownlinkStatus::Unknown(_) => {
                unknown_status_is_final(self.created_at.or(self.modified_at), self.feedback_timeout.as_deref(), now)
            }
            known => known.is_final(),
        }
    }
}

/// A connection-specific downlink: the common fields of section 2.7, and the kind's payload
/// fields (not shown by the reference; A-24) as JSON in [`payload`](Self::payload).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ConnectionDownlink {
    /// A UUID on the four documented kinds; kept as any string (the digital-matter family's
    /// fields are not shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ConnectionDownlinkStatus>,
    /// Any device-id form; on SMS a plain string. Required by the reference; an answer without
    /// it still reads (empty).
    #[serde(default)]
    pub device_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::millis_option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub created_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::millis_option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub modified_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure_reason: Option<FailureReason>,
    /// LoRa and SMS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_limit: Option<u32>,
    /// LoRa and SMS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_count: Option<u32>,
    /// SMS: the SIM card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icc_id: Option<String>,
    /// Every other member: the kind's payload (LoRa `payloadHex`, MQTT `topic`, HTTP `message`,
    /// ...) and anything the service adds. Set it with [`set_payload`](Self::set_payload).
    #[serde(flatten)]
    pub payload: Map<String, Value>,
}

impl ConnectionDownlink {
    /// No further change will happen, judged at `now`: `DONE`, or an unknown (or missing)
    /// status past its deadline ([`unknown_status_is_final`]).
    pub fn is_final_at(&self, now: Timestamp) -> bool {
        match &self.status {
            Some(ConnectionDownlinkStatus::Unknown(_)) | None => {
                unknown_status_is_final(self.created_at.or(self.modified_at), self.feedback_timeout.as_deref(), now)
            }
            Some(known) => known.is_final(),
        }
    }

    /// Sets the payload members, leaving out any a common field above already writes (so a
    /// member is never written twice, and the common fields win).
    pub fn set_payload(&mut self, mut members: Map<String, Value>) {
        self.payload = Map::new();
        if let Ok(Value::Object(common)) = serde_json::to_value(&*self) {
            members.retain(|k, _| !common.contains_key(k));
        }
        self.payload = members;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every known value has its own explanation, none of them the one for unknown values.
    fn explained<T: for<'a> From<&'a str>>(known: &[&str], explain: impl Fn(&T) -> &'static str) {
        let unknown = explain(&T::from("NOT_A_VALUE"));
        let mut seen = std::collections::HashSet::new();
        for k in known {
            let e = explain(&T::from(*k));
            assert!(!e.is_empty() && e != unknown, "{k}: {e}");
            assert!(e.chars().next().unwrap().is_lowercase() && !e.ends_with('.'), "{k}: fits after \"{k}: \"");
            seen.insert(e);
        }
        assert!(seen.len() >= known.len() - 2, "only the two spellings of the same reason may share words");
    }

    #[test]
    fn every_known_status_and_reason_is_explained() {
        explained::<DownlinkStatus>(DownlinkStatus::KNOWN, DownlinkStatus::explain);
        explained::<ConnectionDownlinkStatus>(ConnectionDownlinkStatus::KNOWN, ConnectionDownlinkStatus::explain);
        explained::<FailureReason>(FailureReason::KNOWN, FailureReason::explain);
        assert_eq!(
            FailureReason::from("FAILURE_TO_TRANSMIT_TO_DEVICE").explain(),
            FailureReason::FailedToTransmitToDevice.explain()
        );
    }

    #[test]
    fn actuator_answers_keep_their_shape() {
        let raw = json!({
            "id": "aef64ad1-d704-4c7c-8973-8fbad679074b", "networkId": "urn:dev:imei:350004000000001:",
            "status": "SENT_TO_CARRIER", "createdAt": "2026-01-25T13:42:00+02:00", "retryLimit": 3,
            "method": {"type": "setProperty"}, "lastFailureReason": "SOMETHING_NEW"
        });
        let d: ActuatorDownlink = serde_json::from_value(raw).unwrap();
        assert_eq!(d.status, DownlinkStatus::SentToCarrier);
        assert_eq!(d.last_failure_reason, Some(FailureReason::Unknown("SOMETHING_NEW".into())));
        let back = serde_json::to_value(&d).unwrap();
        assert_eq!(back["createdAt"], "2026-01-25T11:42:00.000Z", "written in UTC with milliseconds");
        assert!(back.get("externalReference").is_none() && back.get("modifiedAt").is_none(), "absent stays absent");
        assert_eq!(back["method"], json!({"type": "setProperty"}));
    }

    #[test]
    fn the_senml_message_reads_as_the_reference_string_and_as_an_array() {
        let base = json!({"networkId": "urn:dev:imei:350004000000001:", "status": "PENDING"});
        let with = |message: Value| {
            let mut raw = base.clone();
            raw["message"] = message;
            serde_json::from_value::<ActuatorDownlink>(raw).unwrap()
        };
        let as_string = with(json!("[{\"bn\": \"urn:dev:imei:350004000000001:\", \"n\": \"led\", \"vb\": true}]"));
        let as_array = with(json!([{"bn": "urn:dev:imei:350004000000001:", "n": "led", "vb": true}]));
        let text = as_string.message_text().unwrap();
        assert_eq!(text, as_array.message_text().unwrap(), "either shape shows the same records");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap()[0]["n"], "led");
        assert_eq!(with(json!("not json")).message_text().as_deref(), Some("not json"), "shown as it came");
        assert_eq!(serde_json::from_value::<ActuatorDownlink>(base).unwrap().message_text(), None);
    }

    #[test]
    fn connection_payload_members_are_flattened_and_never_repeat_a_common_field() {
        let raw = json!({
            "id": "9ecdd0c3-c84c-439f-9aec-9f2b404e5cf2", "deviceId": "deveui:70b3d57ed0000005", "status": "DONE",
            "payloadHex": "0100", "fPort": 10, "lastFailureReason": "EVICTED"
        });
        let d: ConnectionDownlink = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(d.payload.len(), 2, "{:?}", d.payload);
        assert_eq!(d.last_failure_reason, Some(FailureReason::Evicted));
        assert_eq!(serde_json::to_value(&d).unwrap(), raw);

        let mut d = ConnectionDownlink { payload: Map::new(), ..d };
        let body = json!({"deviceId": "other", "status": "FORGED", "topic": "a/b", "retryCount": 7});
        d.set_payload(body.as_object().unwrap().clone());
        let out = serde_json::to_value(&d).unwrap();
        assert_eq!(out["deviceId"], "deveui:70b3d57ed0000005");
        assert_eq!(out["status"], "DONE");
        assert_eq!(out["topic"], "a/b");
        assert_eq!(out["retryCount"], 7, "a member no common field writes is kept as sent");
        let text = serde_json::to_string(&d).unwrap();
        assert_eq!(text.matches("\"status\"").count(), 1);
    }

    #[test]
    fn an_unknown_status_is_final_only_once_its_feedback_deadline_has_passed() {
        use time::macros::datetime;
        let raw = json!({
            "id": "a", "networkId": "urn:dev:imei:350004000000001:", "status": "QUARANTINED",
            "createdAt": "2026-01-25T10:00:00Z", "feedbackTimeout": "PT30M"
        });
        let d: ActuatorDownlink = serde_json::from_value(raw).unwrap();
        assert!(
            !d.is_final_at(datetime!(2026-01-25 10:29:59 UTC)),
            "before createdAt + feedbackTimeout: keep watching"
        );
        assert!(d.is_final_at(datetime!(2026-01-25 10:30:00 UTC)), "at the deadline: final");
        // Without a feedbackTimeout the default of one hour applies.
        let d = ActuatorDownlink { feedback_timeout: None, ..d };
        assert!(!d.is_final_at(datetime!(2026-01-25 10:59:00 UTC)));
        assert!(d.is_final_at(datetime!(2026-01-25 11:00:00 UTC)));
        // Known statuses do not depend on the time.
        let pending = ActuatorDownlink { status: DownlinkStatus::Pending, ..d.clone() };
        assert!(!pending.is_final_at(datetime!(2030-01-01 00:00 UTC)));
        let delivered = ActuatorDownlink { status: DownlinkStatus::Delivered, ..d.clone() };
        assert!(delivered.is_final_at(datetime!(2000-01-01 00:00 UTC)));
        // No time to count from: final rather than watched forever.
        let undated = ActuatorDownlink { created_at: None, modified_at: None, ..d };
        assert!(undated.is_final_at(datetime!(2000-01-01 00:00 UTC)));

        let c: ConnectionDownlink = serde_json::from_value(json!({
            "id": "9ecdd0c3-c84c-439f-9aec-9f2b404e5cf2", "deviceId": "d", "status": "PAUSED",
            "createdAt": "2026-01-25T10:00:00Z", "feedbackTimeout": "P1D"
        }))
        .unwrap();
        assert!(!c.is_final_at(datetime!(2026-01-26 09:59:59 UTC)));
        assert!(c.is_final_at(datetime!(2026-01-26 10:00:00 UTC)));
        let executing = ConnectionDownlink { status: Some(ConnectionDownlinkStatus::Executing), ..c.clone() };
        assert!(!executing.is_final_at(datetime!(2030-01-01 00:00 UTC)));
        let done = ConnectionDownlink { status: Some(ConnectionDownlinkStatus::Done), ..c };
        assert!(done.is_final_at(datetime!(2000-01-01 00:00 UTC)));
    }

    #[test]
    fn answers_read_tolerantly() {
        // A digital-matter downlink whose id is not a UUID, a time without offset.
        let dm: ConnectionDownlink = serde_json::from_value(json!({
            "id": "dm-000123", "deviceId": "imei:350000000000001", "status": "PENDING",
            "createdAt": "2026-01-25T10:00:00", "gpsMode": 2
        }))
        .unwrap();
        assert_eq!(dm.id.as_deref(), Some("dm-000123"));
        assert_eq!(dm.created_at, Some(time::macros::datetime!(2026-01-25 10:00 UTC)));
        assert_eq!(dm.payload["gpsMode"], 2);
        // An actuator answer without its required members, and with members this version does not know.
        let a: ActuatorDownlink = serde_json::from_value(json!({"id": "x", "priority": "HIGH"})).unwrap();
        assert_eq!(a.status, DownlinkStatus::Unknown(String::new()));
        assert_eq!(a.network_id, "");
        assert_eq!(a.extra["priority"], "HIGH");
        assert_eq!(serde_json::to_value(&a).unwrap()["priority"], "HIGH");
    }
}
