//! Downlinks as the console shows and composes them, for the app and anything else above the
//! client:
//!
//! - one row shape ([`DownlinkView`]) for every kind, actuator or connection-specific, with the
//!   words that explain its status, failure reason and what a cancellation would do, and its
//!   feedback deadline (`createdAt + feedbackTimeout`);
//! - the statuses the console has seen a downlink in ([`Watch`]): the service only gives the
//!   current status, so the timeline is what this process observed, kept in memory per
//!   profile and customer, bounded, and gone when the app closes;
//! - drafts of a form, as typed ([`ActuatorDraft`], [`ConnectionDraft`]), turned into the
//!   client's builders. Every rule is the client's (or the model's): a preview gathers the
//!   rule each field breaks by asking the client about that field alone, and shows the body
//!   exactly as [`NewDownlink::to_json`] / [`NewConnectionDownlink::to_json`] make it;
//! - listing, reading, sending and cancelling through the client.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use dcs_api::downlinks::{
    ConnectionDownlinkFilter, ConnectionKind, DownlinkFilter, DownlinkMethod, NewConnectionDownlink, NewDownlink,
    ACTUATOR_SORT_FIELDS, CONNECTION_SORT_FIELDS,
};
use dcs_api::model::downlinks::{
    ActuatorDownlink, ConnectionDownlink, ConnectionDownlinkStatus, DownlinkStatus, FailureReason,
};
use dcs_api::model::duration::{parse_duration, parse_feedback_timeout};
use dcs_api::model::timestamp::format_millis;
use dcs_api::model::{DeviceId, Timestamp};
use dcs_api::{Client, Error, Raw, TimeFilter};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::FieldError;

// ---------------------------------------------------------------------------------------------
// Kinds

/// The downlink families: actuator-style (`/downlinks`) and the connection-specific ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum DownlinkKind {
    Actuator,
    Http,
    Lora,
    Mqtt,
    Sms,
    Digitalmatter,
}

impl DownlinkKind {
    pub const ALL: [DownlinkKind; 6] = [
        DownlinkKind::Actuator,
        DownlinkKind::Http,
        DownlinkKind::Lora,
        DownlinkKind::Mqtt,
        DownlinkKind::Sms,
        DownlinkKind::Digitalmatter,
    ];

    /// The client's connection kind; `None` for actuator downlinks.
    pub fn connection(self) -> Option<ConnectionKind> {
        match self {
            DownlinkKind::Actuator => None,
            DownlinkKind::Http => Some(ConnectionKind::Http),
            DownlinkKind::Lora => Some(ConnectionKind::Lora),
            DownlinkKind::Mqtt => Some(ConnectionKind::Mqtt),
            DownlinkKind::Sms => Some(ConnectionKind::Sms),
            DownlinkKind::Digitalmatter => Some(ConnectionKind::DigitalMatter),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            DownlinkKind::Actuator => "Actuator",
            DownlinkKind::Http => "HTTP",
            DownlinkKind::Lora => "LoRa",
            DownlinkKind::Mqtt => "MQTT",
            DownlinkKind::Sms => "SMS",
            DownlinkKind::Digitalmatter => "Digital Matter",
        }
    }

    /// Fields its list sorts by (the client's lists, A-36).
    pub fn sort_fields(self) -> &'static [&'static str] {
        match self {
            DownlinkKind::Actuator => ACTUATOR_SORT_FIELDS,
            _ => CONNECTION_SORT_FIELDS,
        }
    }

    /// Its name in paths and files: `actuator`, `http`, `lora`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            DownlinkKind::Actuator => "actuator",
            DownlinkKind::Http => "http",
            DownlinkKind::Lora => "lora",
            DownlinkKind::Mqtt => "mqtt",
            DownlinkKind::Sms => "sms",
            DownlinkKind::Digitalmatter => "digitalmatter",
        }
    }

    /// Whether its downlinks carry `retryLimit` (actuator, LoRa and SMS: sections 2.6, 2.7).
    pub fn has_retries(self) -> bool {
        matches!(self, DownlinkKind::Actuator | DownlinkKind::Lora | DownlinkKind::Sms)
    }
}

/// What the UI needs to know of a kind to show its list and filters.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct KindInfo {
    pub kind: DownlinkKind,
    pub label: String,
    pub sort_fields: Vec<String>,
    /// The known statuses (the `status` filter of the connection kinds offers them).
    pub statuses: Vec<String>,
    /// The `status` filter takes any string (SMS, MQTT), not only the known values (HTTP, LoRa).
    pub free_status: bool,
    /// The list filters of the kind, by query parameter name (sections 4.2, 4.3).
    pub filters: Vec<String>,
    pub retries: bool,
}

pub fn kinds() -> Vec<KindInfo> {
    const TIME: [&str; 4] = ["createdBefore", "createdSince", "modifiedBefore", "modifiedSince"];
    DownlinkKind::ALL
        .into_iter()
        .map(|kind| {
            let (statuses, first): (&[&str], &[&str]) = match kind {
                DownlinkKind::Actuator => (DownlinkStatus::KNOWN, &["q"]),
                _ => (ConnectionDownlinkStatus::KNOWN, &["deviceId", "status"]),
            };
            KindInfo {
                kind,
                label: kind.label().to_owned(),
                sort_fields: kind.sort_fields().iter().map(|s| s.to_string()).collect(),
                statuses: statuses.iter().map(|s| s.to_string()).collect(),
                free_status: matches!(kind, DownlinkKind::Sms | DownlinkKind::Mqtt),
                filters: first.iter().chain(TIME.iter()).map(|s| s.to_string()).collect(),
                retries: kind.has_retries(),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Rows

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

// ---------------------------------------------------------------------------------------------
// What the console has seen

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

// ---------------------------------------------------------------------------------------------
// Drafts: what a form holds, as typed

/// The four `method` variants of the simulator (A-23), or raw JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum MethodVariant {
    #[default]
    SetProperty,
    InvokeCommand,
    Senml,
    PayloadHex,
    Raw,
}

/// How the text of a `setProperty` value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum ValueType {
    #[default]
    Number,
    Boolean,
    String,
}

/// The `method` of an actuator downlink as typed. Only the fields of `variant` are used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct MethodDraft {
    pub variant: MethodVariant,
    /// Any of the seven id forms.
    pub device_id: String,
    pub property: String,
    pub value: String,
    pub value_type: ValueType,
    pub command: String,
    /// A JSON object, or empty for none.
    pub parameters: String,
    /// A JSON array of SenML records.
    pub records: String,
    pub payload_hex: String,
    /// LoRa port 1-223, or empty.
    pub port: String,
    /// The whole `method` as a JSON object (variant `raw`).
    pub raw: String,
}

/// An actuator downlink as typed in the composer. Empty text means "not given".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct ActuatorDraft {
    pub method: MethodDraft,
    pub retry_limit: String,
    pub feedback_timeout: String,
    pub external_reference: String,
    pub dry_run: bool,
}

/// Which payload an SMS or HTTP downlink carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum PayloadMode {
    /// SMS: `text`.
    #[default]
    Text,
    /// SMS: `payloadHex`; HTTP: `message.payload` (the bytes typed in hex, sent base64).
    Hex,
    /// HTTP: `message.senml`.
    Senml,
}

/// A connection-specific downlink as typed (payload fields per A-24). Only the fields of
/// `kind` are used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct ConnectionDraft {
    pub kind: DownlinkKind,
    /// Any id form; on SMS the device's UUID.
    pub device_id: String,
    pub feedback_timeout: String,
    pub dry_run: bool,
    pub retry_limit: String,
    pub mode: PayloadMode,
    /// LoRa, SMS (mode hex), HTTP (mode hex).
    pub payload_hex: String,
    pub f_port: String,
    pub confirmed: bool,
    pub topic: String,
    pub payload: String,
    pub qos: String,
    pub text: String,
    /// HTTP: a JSON array of SenML records.
    pub senml: String,
    /// Digital Matter: a JSON object of the fields to send.
    pub fields: String,
}

impl Default for ConnectionDraft {
    fn default() -> Self {
        ConnectionDraft {
            kind: DownlinkKind::Lora,
            device_id: String::new(),
            feedback_timeout: String::new(),
            dry_run: true,
            retry_limit: String::new(),
            mode: PayloadMode::default(),
            payload_hex: String::new(),
            f_port: String::new(),
            confirmed: true,
            topic: String::new(),
            payload: String::new(),
            qos: String::new(),
            text: String::new(),
            senml: String::new(),
            fields: String::new(),
        }
    }
}

/// What the composer shows before sending: every rule broken (field and rule), or the exact
/// body the client will send and what sending it does, in sentences.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DownlinkPreview {
    pub errors: Vec<FieldError>,
    /// The request body, pretty-printed; only when no rule is broken.
    pub body: Option<String>,
    pub effect: Vec<String>,
}

/// A device id that passes every id check, standing in while the real one is still wrong, so
/// the other fields can be checked on their own.
const STAND_IN_DEVICE: &str = "imei:000000000000000";

fn field(field: &str, rule: impl Into<String>) -> FieldError {
    FieldError { field: field.to_owned(), rule: rule.into() }
}

/// The client's refusal as a field error.
fn field_of(e: Error) -> FieldError {
    match e {
        Error::InvalidInput { field, rule } => FieldError { field, rule },
        other => field("body", other.to_string()),
    }
}

fn optional(s: &str) -> Option<&str> {
    Some(s.trim()).filter(|s| !s.is_empty())
}

/// A whole number typed in `name`, or `None` when empty.
fn whole<T: TryFrom<u64>>(name: &str, s: &str) -> Result<Option<T>, FieldError> {
    let Some(s) = optional(s) else { return Ok(None) };
    let n: u64 = s.parse().map_err(|_| field(name, "must be a whole number"))?;
    T::try_from(n).map(Some).map_err(|_| field(name, format!("{n} is too large")))
}

fn json_text(name: &str, s: &str, want: &str) -> Result<Value, FieldError> {
    let v: Value = serde_json::from_str(s).map_err(|e| field(name, format!("must be {want} in JSON: {e}")))?;
    Ok(v)
}

fn json_object(name: &str, s: &str) -> Result<Map<String, Value>, FieldError> {
    match json_text(name, s, "an object")? {
        Value::Object(m) => Ok(m),
        _ => Err(field(name, "must be a JSON object, e.g. {\"key\": 1}")),
    }
}

fn json_array(name: &str, s: &str) -> Result<Vec<Value>, FieldError> {
    match json_text(name, s, "an array")? {
        Value::Array(a) => Ok(a),
        _ => Err(field(name, "must be a JSON array, e.g. [{\"n\": \"temp\", \"v\": 21}]")),
    }
}

/// Bytes typed as hex (the HTTP payload; the client sends them base64-encoded).
fn hex_bytes(name: &str, s: &str) -> Result<Vec<u8>, FieldError> {
    let s = s.trim();
    if s.is_empty() || !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(field(name, "must be an even number of hex characters"));
    }
    Ok((0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("checked hex")).collect())
}

impl MethodDraft {
    /// The client's method for this draft, aimed at `device`.
    fn build(&self, device: &str) -> Result<DownlinkMethod, FieldError> {
        Ok(match self.variant {
            MethodVariant::SetProperty => {
                let value = match self.value_type {
                    ValueType::Number => {
                        let n: serde_json::Number = self
                            .value
                            .trim()
                            .parse()
                            .map_err(|_| field("method.value", "must be a number, e.g. 60 or 2.5"))?;
                        Value::Number(n)
                    }
                    ValueType::Boolean => match self.value.trim() {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        _ => return Err(field("method.value", "must be true or false")),
                    },
                    ValueType::String => Value::String(self.value.clone()),
                };
                DownlinkMethod::set_property(device, self.property.trim(), value)
            }
            MethodVariant::InvokeCommand => {
                let params = match optional(&self.parameters) {
                    None => None,
                    Some(p) => Some(json_object("method.parameters", p)?),
                };
                DownlinkMethod::invoke_command(device, self.command.trim(), params)
            }
            MethodVariant::Senml => DownlinkMethod::senml(device, json_array("method.records", &self.records)?),
            MethodVariant::PayloadHex => {
                DownlinkMethod::payload_hex(device, self.payload_hex.trim(), whole::<u8>("method.port", &self.port)?)
            }
            MethodVariant::Raw => DownlinkMethod::Raw(Value::Object(json_object("method", &self.raw)?)),
        })
    }
}

impl ActuatorDraft {
    /// The client's builder for this draft.
    pub fn new_downlink(&self) -> Result<NewDownlink, FieldError> {
        let mut d = NewDownlink::new(self.method.build(self.method.device_id.trim())?);
        if let Some(n) = whole::<u32>("retryLimit", &self.retry_limit)? {
            d = d.retry_limit(n);
        }
        if let Some(t) = optional(&self.feedback_timeout) {
            d = d.feedback_timeout(t);
        }
        if !self.external_reference.is_empty() {
            d = d.external_reference(&self.external_reference);
        }
        Ok(d.dry_run(self.dry_run))
    }

    /// Every rule the draft breaks, each field checked by the client on its own; and the body.
    pub fn preview(&self) -> DownlinkPreview {
        let mut errors = Vec::new();
        let m = &self.method;
        if m.variant != MethodVariant::Raw {
            if let Err(e) = check_device_id(&m.device_id, None).into_result() {
                errors.push(FieldError { field: "method.deviceId".into(), rule: e.rule });
            }
        }
        // The method's own fields, with a device that passes so they are judged on their own.
        if let Err(e) = m.build(STAND_IN_DEVICE).and_then(|method| method.to_json().map_err(field_of)) {
            errors.push(e);
        }
        let probe = || NewDownlink::new(DownlinkMethod::Raw(Value::Object(Map::new())));
        match whole::<u32>("retryLimit", &self.retry_limit) {
            Err(e) => errors.push(e),
            Ok(Some(n)) => errors.extend(probe().retry_limit(n).to_json().err().map(field_of)),
            Ok(None) => {}
        }
        if let Some(t) = optional(&self.feedback_timeout) {
            errors.extend(probe().feedback_timeout(t).to_json().err().map(field_of));
        }
        if !self.external_reference.is_empty() {
            errors.extend(probe().external_reference(&self.external_reference).to_json().err().map(field_of));
        }
        finish(errors, || self.new_downlink().and_then(|d| d.to_json().map_err(field_of)), |b| self.effect(b))
    }

    fn effect(&self, body: &Value) -> Vec<String> {
        let m = &body["method"];
        let device = spoken_id(m["deviceId"].as_str().unwrap_or("the device named in the method"));
        let mut out = vec![match self.method.variant {
            MethodVariant::SetProperty => {
                format!("Sets property {} to {} on device {device}.", m["property"], m["value"])
            }
            MethodVariant::InvokeCommand => {
                let n = m["parameters"].as_object().map_or(0, Map::len);
                format!("Invokes command {} with {n} parameter{} on device {device}.", m["command"], plural(n))
            }
            MethodVariant::Senml => {
                let n = m["records"].as_array().map_or(0, Vec::len);
                format!("Sends {n} SenML record{} to device {device}.", plural(n))
            }
            MethodVariant::PayloadHex => {
                let bytes = m["payloadHex"].as_str().map_or(0, |h| h.len() / 2);
                let port = m.get("port").map(|p| format!(" on LoRa port {p}")).unwrap_or_default();
                format!("Sends a payload of {bytes} byte{}{port} to device {device}.", plural(bytes))
            }
            MethodVariant::Raw => {
                format!("Sends the method as written (type {}).", m.get("type").unwrap_or(&Value::Null))
            }
        }];
        out.push("The encoder configured for the device translates it into the device's own format.".into());
        out.extend(common_effect(body, "the service's default (1 hour in the simulator)"));
        out.push(if self.dry_run {
            "Dry run: the service checks and stores it, and it never reaches the device.".into()
        } else {
            "It is queued for the device.".into()
        });
        out
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The end of both previews: the field errors found, or else the body the client builds from the
/// whole draft (which may still name one) with what sending it would do.
fn finish(
    errors: Vec<FieldError>,
    body: impl FnOnce() -> Result<Value, FieldError>,
    effect: impl FnOnce(&Value) -> Vec<String>,
) -> DownlinkPreview {
    if !errors.is_empty() {
        return DownlinkPreview { errors, body: None, effect: Vec::new() };
    }
    match body() {
        Err(e) => DownlinkPreview { errors: vec![e], body: None, effect: Vec::new() },
        Ok(body) => DownlinkPreview { errors, effect: effect(&body), body: Some(pretty(&body)) },
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// Retries and feedback time, in words.
fn common_effect(body: &Value, default_timeout: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(n) = body.get("retryLimit").and_then(Value::as_u64) {
        out.push(if n == 0 {
            "No retries.".to_owned()
        } else {
            format!("Retried up to {n} time{}.", plural(n as usize))
        });
    }
    match body.get("feedbackTimeout").and_then(Value::as_str) {
        Some(t) => out.push(format!("The service waits {} ({t}) for feedback before giving up.", humanize(t))),
        None => out.push(format!("Feedback timeout: {default_timeout}.")),
    }
    out
}

/// `PT1H30M` as `1 h 30 min`.
pub fn humanize(iso: &str) -> String {
    let Ok(d) = parse_duration(iso) else { return iso.to_owned() };
    let s = d.as_secs();
    let parts = [(s / 86_400, "d"), (s / 3600 % 24, "h"), (s / 60 % 60, "min"), (s % 60, "s")];
    let words: Vec<String> = parts.iter().filter(|(n, _)| *n > 0).map(|(n, u)| format!("{n} {u}")).collect();
    if words.is_empty() {
        "0 s".into()
    } else {
        words.join(" ")
    }
}

impl ConnectionDraft {
    fn connection_kind(&self) -> Result<ConnectionKind, FieldError> {
        self.kind.connection().ok_or_else(|| field("kind", "actuator downlinks have their own composer"))
    }

    /// The client's builder of the kind, aimed at `device` with `timeout`.
    fn build(&self, device: &str, timeout: &str) -> Result<NewConnectionDownlink, FieldError> {
        let mut d = match self.connection_kind()? {
            ConnectionKind::Lora => {
                let mut d = NewConnectionDownlink::lora(device, timeout, self.payload_hex.trim());
                if let Some(p) = whole::<u8>("fPort", &self.f_port)? {
                    d = d.f_port(p);
                }
                d.confirmed(self.confirmed)
            }
            ConnectionKind::Mqtt => {
                let mut d = NewConnectionDownlink::mqtt(device, timeout, &self.topic, &self.payload);
                if let Some(q) = whole::<u8>("qos", &self.qos)? {
                    d = d.qos(q);
                }
                d
            }
            ConnectionKind::Sms => match self.mode {
                PayloadMode::Hex => NewConnectionDownlink::sms_hex(device, timeout, self.payload_hex.trim()),
                _ => NewConnectionDownlink::sms_text(device, timeout, &self.text),
            },
            ConnectionKind::Http => match self.mode {
                PayloadMode::Hex => NewConnectionDownlink::http_payload(
                    device,
                    timeout,
                    &hex_bytes("message.payload", &self.payload_hex)?,
                ),
                _ => NewConnectionDownlink::http_senml(device, timeout, json_array("message.senml", &self.senml)?),
            },
            ConnectionKind::DigitalMatter => {
                let fields = match optional(&self.fields) {
                    None => Map::new(),
                    Some(f) => json_object("fields", f)?,
                };
                NewConnectionDownlink::digitalmatter(device, timeout, fields)
            }
        };
        if self.kind.has_retries() {
            if let Some(n) = whole::<u32>("retryLimit", &self.retry_limit)? {
                d = d.retry_limit(n);
            }
        }
        Ok(d.dry_run(self.dry_run))
    }

    /// The client's builder for this draft.
    pub fn new_downlink(&self) -> Result<NewConnectionDownlink, FieldError> {
        self.build(self.device_id.trim(), self.feedback_timeout.trim())
    }

    /// Every rule the draft breaks, each field checked on its own; and the body.
    pub fn preview(&self) -> DownlinkPreview {
        let kind = match self.connection_kind() {
            Ok(k) => k,
            Err(e) => return DownlinkPreview { errors: vec![e], ..Default::default() },
        };
        let mut errors = Vec::new();
        if let Err(e) = check_device_id(&self.device_id, Some(kind.as_str())).into_result() {
            errors.push(e);
        }
        match optional(&self.feedback_timeout) {
            None => errors.push(field(
                "feedbackTimeout",
                "is required on connection-specific downlinks, e.g. PT1H (at least PT10M)",
            )),
            Some(t) => {
                if let Err(e) = parse_feedback_timeout(t) {
                    errors.push(field("feedbackTimeout", e.to_string()));
                }
            }
        }
        let stand_in = if kind == ConnectionKind::Sms { Uuid::nil().to_string() } else { STAND_IN_DEVICE.to_owned() };
        if let Err(e) = self.build(&stand_in, "PT1H").and_then(|d| d.to_json().map_err(field_of)) {
            errors.push(e);
        }
        finish(errors, || self.new_downlink().and_then(|d| d.to_json().map_err(field_of)), |b| self.effect(b))
    }

    fn effect(&self, body: &Value) -> Vec<String> {
        let device = spoken_id(body["deviceId"].as_str().unwrap_or_default());
        let s = |k: &str| body.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let mut out = vec![match self.kind {
            DownlinkKind::Lora => {
                let bytes = s("payloadHex").len() / 2;
                let port = body.get("fPort").map(|p| p.to_string()).unwrap_or_else(|| "1 (the default)".into());
                let ack = if body["confirmed"] == Value::Bool(false) {
                    "unconfirmed"
                } else {
                    "confirmed (the device must acknowledge it)"
                };
                format!(
                    "Sends the LoRa payload {} ({bytes} byte{}) on FPort {port}, {ack}, to device {device}.",
                    s("payloadHex"),
                    plural(bytes)
                )
            }
            DownlinkKind::Mqtt => {
                let qos = body.get("qos").map(|q| q.to_string()).unwrap_or_else(|| "1 (the default)".into());
                format!(
                    "Publishes {} character{} to topic {} with QoS {qos} for device {device}.",
                    s("payload").chars().count(),
                    plural(s("payload").chars().count()),
                    s("topic")
                )
            }
            DownlinkKind::Sms if body.get("text").is_some() => {
                format!("Sends the text message \"{}\" by SMS to device {device}.", s("text"))
            }
            DownlinkKind::Sms => {
                let bytes = s("payloadHex").len() / 2;
                format!("Sends a binary SMS of {bytes} byte{} to device {device}.", plural(bytes))
            }
            DownlinkKind::Http => match body["message"].get("senml").and_then(Value::as_array) {
                Some(r) => format!("Sends {} SenML record{} over HTTP to device {device}.", r.len(), plural(r.len())),
                None => "Sends a binary payload (base64 in the body) over HTTP to device ".to_owned() + device + ".",
            },
            _ => {
                let names: Vec<&str> = body
                    .as_object()
                    .map(|o| {
                        o.keys()
                            .map(String::as_str)
                            .filter(|k| !matches!(*k, "deviceId" | "feedbackTimeout" | "dryRun" | "retryLimit"))
                            .collect()
                    })
                    .unwrap_or_default();
                let list = if names.is_empty() { "no further fields".to_owned() } else { names.join(", ") };
                format!("Sends a Digital Matter downlink with {list} to device {device}.")
            }
        }];
        out.push("It bypasses the encoder: the payload reaches the device exactly as written.".into());
        out.extend(common_effect(body, "required"));
        out.push(if self.dry_run {
            "Dry run: the service checks and stores it and behaves as if it was delivered; nothing reaches the device.".into()
        } else {
            "Not a dry run: the device receives it and acts on it; a wrong payload can disrupt the device, for example by \
             disabling its communication."
                .into()
        });
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Device ids

/// A device id as typed, checked: its normalised form and what form it is, or the rule it breaks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeviceIdCheck {
    pub normalized: Option<String>,
    /// e.g. "IMEI device URN".
    pub form: Option<String>,
    pub error: Option<FieldError>,
}

impl DeviceIdCheck {
    fn into_result(self) -> Result<String, FieldError> {
        match (self.error, self.normalized) {
            (Some(e), _) => Err(e),
            (None, Some(n)) => Ok(n),
            (None, None) => Err(field("deviceId", "is required")),
        }
    }
}

/// The name of a device id's form, as the reference's table names it (section 1).
pub fn describe_device_id(id: &DeviceId) -> &'static str {
    match id {
        DeviceId::Uuid(_) => "device UUID",
        DeviceId::Imei { urn: false, .. } => "IMEI device id",
        DeviceId::Imei { urn: true, .. } => "IMEI device URN",
        DeviceId::DevEui { urn: false, .. } => "LoRaWAN DevEUI device id",
        DeviceId::DevEui { urn: true, .. } => "DevEUI device URN",
        DeviceId::DvnUuid { urn: false, .. } => "DVNUUID device id",
        DeviceId::DvnUuid { urn: true, .. } => "DVNUUID device URN",
    }
}

/// Checks a device id as typed, for the use `kind` names (`sms` wants the device's UUID; a
/// connection or binding kind, an actuator downlink or `None` take any of the seven forms).
pub fn check_device_id(input: &str, kind: Option<&str>) -> DeviceIdCheck {
    let err = |rule: String| DeviceIdCheck { error: Some(field("deviceId", rule)), ..Default::default() };
    if input.trim().is_empty() {
        return err("is required: pick a device or paste its id".into());
    }
    let connection = match kind.filter(|k| !k.is_empty() && *k != "actuator") {
        None => None,
        Some(k) => match ConnectionKind::parse(k) {
            Some(c) => Some(c),
            None => {
                return DeviceIdCheck {
                    error: Some(field("kind", format!("unknown kind `{k}`"))),
                    ..Default::default()
                }
            }
        },
    };
    if let Some(c) = connection {
        if let Err(e) = dcs_api::downlinks::connection_device_id(c, input.trim()) {
            return DeviceIdCheck { error: Some(field_of(e)), ..Default::default() };
        }
        // On SMS a plain string, sent (and matched) exactly as given (section 1).
        if c == ConnectionKind::Sms {
            let form = DeviceId::parse(input).map(|id| describe_device_id(&id)).unwrap_or("a plain string (SMS)");
            return DeviceIdCheck {
                normalized: Some(input.trim().to_owned()),
                form: Some(form.to_owned()),
                error: None,
            };
        }
    }
    match DeviceId::parse(input) {
        Ok(id) => DeviceIdCheck {
            normalized: Some(id.to_string()),
            form: Some(describe_device_id(&id).to_owned()),
            error: None,
        },
        Err(e) => err(e.to_string()),
    }
}

// ---------------------------------------------------------------------------------------------
// Lists and calls

/// Which page of which kind's downlinks to fetch: the first one for these filters (as typed;
/// empty is none), or the one a `next` link of an earlier page points to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DownlinkPageRequest {
    pub kind: DownlinkKind,
    pub next: Option<String>,
    pub sort: Option<String>,
    /// Actuator only: `externalReference` exactly, `networkId` and `message` partially.
    pub q: Option<String>,
    /// Connection kinds only.
    pub device_id: Option<String>,
    /// Connection kinds only.
    pub status: Option<String>,
    pub created_before: Option<String>,
    pub created_since: Option<String>,
    pub modified_before: Option<String>,
    pub modified_since: Option<String>,
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DownlinkPage {
    pub items: Vec<DownlinkView>,
    /// Pass back as `next` for the following page; absent on the last page.
    pub next: Option<String>,
}

impl DownlinkPageRequest {
    fn time(&self) -> Result<TimeFilter, FieldError> {
        crate::filters::time_filter(
            self.created_before.as_deref(),
            self.created_since.as_deref(),
            self.modified_before.as_deref(),
            self.modified_since.as_deref(),
        )
    }

    fn text(v: &Option<String>) -> Option<String> {
        v.as_deref().and_then(optional).map(str::to_owned)
    }

    pub fn actuator_filter(&self) -> Result<DownlinkFilter, FieldError> {
        for (name, v) in [("deviceId", &self.device_id), ("status", &self.status)] {
            if Self::text(v).is_some() {
                return Err(field(
                    name,
                    "is a filter of the connection-specific lists; search actuator downlinks with q",
                ));
            }
        }
        Ok(DownlinkFilter {
            q: Self::text(&self.q),
            time: self.time()?,
            sort: Self::text(&self.sort),
            limit: self.limit,
        })
    }

    pub fn connection_filter(&self) -> Result<ConnectionDownlinkFilter, FieldError> {
        if Self::text(&self.q).is_some() {
            return Err(field("q", "only actuator downlinks are searched by text; filter by device or status here"));
        }
        Ok(ConnectionDownlinkFilter {
            device_id: Self::text(&self.device_id),
            status: Self::text(&self.status).map(|s| ConnectionDownlinkStatus::from(s.as_str())),
            time: self.time()?,
            sort: Self::text(&self.sort),
            limit: self.limit,
        })
    }
}

fn page_link(link: &str) -> Result<url::Url, FieldError> {
    url::Url::parse(link).map_err(|_| field("next", "must be a page link"))
}

fn actuator_view(d: Raw<ActuatorDownlink>) -> DownlinkView {
    DownlinkView::actuator(&d.value, d.raw)
}

fn connection_view(kind: DownlinkKind, d: Raw<ConnectionDownlink>) -> DownlinkView {
    DownlinkView::connection(kind, &d.value, d.raw)
}

/// One page of a kind's downlinks.
pub async fn list(client: &Client, req: &DownlinkPageRequest) -> Result<DownlinkPage, Error> {
    let downlinks = client.downlinks();
    match req.kind.connection() {
        None => {
            let (page, next) = match &req.next {
                Some(link) => downlinks.page_at(&page_link(link)?).await?,
                None => downlinks.page(&req.actuator_filter()?).await?,
            };
            Ok(DownlinkPage {
                items: page.items.into_iter().map(actuator_view).collect(),
                next: next.map(String::from),
            })
        }
        Some(c) => {
            let area = downlinks.connection(c);
            let (page, next) = match &req.next {
                Some(link) => area.page_at(&page_link(link)?).await?,
                None => area.page(&req.connection_filter()?).await?,
            };
            let items = page.items.into_iter().map(|d| connection_view(req.kind, d)).collect();
            Ok(DownlinkPage { items, next: next.map(String::from) })
        }
    }
}

/// The id of a connection-specific downlink: a UUID on the four documented kinds (section
/// 4.3), any identifier on the digital-matter family (not shown).
fn connection_id(kind: DownlinkKind, id: &str) -> Result<String, FieldError> {
    let id = id.trim();
    if kind != DownlinkKind::Digitalmatter && Uuid::parse_str(id).is_err() {
        return Err(field("downlinkId", "must be a UUID"));
    }
    Ok(id.to_owned())
}

/// One downlink as the service holds it now.
pub async fn get(client: &Client, kind: DownlinkKind, id: &str) -> Result<DownlinkView, Error> {
    let downlinks = client.downlinks();
    match kind.connection() {
        None => Ok(actuator_view(downlinks.get(id).await?)),
        Some(c) => Ok(connection_view(kind, downlinks.connection(c).get(&connection_id(kind, id)?).await?)),
    }
}

/// Sends an actuator downlink (never repeated after a failure: it creates one).
pub async fn send_actuator(client: &Client, draft: &ActuatorDraft) -> Result<DownlinkView, Error> {
    let new = draft.new_downlink()?;
    Ok(actuator_view(client.downlinks().create(&new).await?))
}

/// Sends a connection-specific downlink of the draft's kind.
pub async fn send_connection(client: &Client, draft: &ConnectionDraft) -> Result<DownlinkView, Error> {
    let new = draft.new_downlink()?;
    let kind = new.kind();
    Ok(connection_view(draft.kind, client.downlinks().connection(kind).create(&new).await?))
}

/// Asks for a cancellation (202: carried out by the service later).
pub async fn cancel(client: &Client, kind: DownlinkKind, id: &str, forced: bool) -> Result<(), Error> {
    let downlinks = client.downlinks();
    match kind.connection() {
        None => downlinks.cancel(id, forced).await,
        Some(c) => downlinks.connection(c).cancel(&connection_id(kind, id)?, forced).await,
    }
}

/// A device id in a sentence: a URN without its optional trailing `:` (section 1), so
/// "to device urn:dev:imei:…:." does not end in a stray colon.
pub fn spoken_id(id: &str) -> &str {
    let t = id.trim();
    if t.len() > 8 && t[..8].eq_ignore_ascii_case("urn:dev:") {
        t.strip_suffix(':').unwrap_or(t)
    } else {
        t
    }
}

/// One downlink of a bulk cancellation; `forced` also stops one being sent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CancelItem {
    pub kind: DownlinkKind,
    pub id: String,
    pub forced: bool,
}

/// Asks for the cancellation of each item, one after the other; each has its outcome (a refusal
/// does not stop the others).
pub async fn cancel_many(client: &Client, items: &[CancelItem]) -> Result<Vec<crate::bulk::ItemOutcome>, FieldError> {
    crate::bulk::check_items(items)?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(crate::bulk::ItemOutcome::of(&item.id, cancel(client, item.kind, &item.id, item.forced).await));
    }
    Ok(out)
}

/// Most rows one CSV export writes.
pub const MAX_EXPORT_ROWS: u32 = 1_000_000;

/// The columns of a downlink list's CSV.
pub const CSV_HEADER: [&str; 16] = [
    "id",
    "kind",
    "status",
    "deviceId",
    "deviceName",
    "deviceUuid",
    "imei",
    "devEui",
    "externalReference",
    "failureReason",
    "retryCount",
    "retryLimit",
    "dryRun",
    "feedbackTimeout",
    "createdAt",
    "modifiedAt",
];

/// One downlink as a CSV row, its device named by `device`.
pub fn csv_row(d: &DownlinkView, device: &crate::devices::DeviceLabel) -> Vec<String> {
    let o = |v: &Option<String>| v.clone().unwrap_or_default();
    let n = |v: Option<u32>| v.map(|n| n.to_string()).unwrap_or_default();
    vec![
        d.id.clone(),
        d.kind.as_str().to_owned(),
        d.status.clone(),
        d.device.clone(),
        o(&device.name),
        device.uuid.map(|u| u.to_string()).unwrap_or_default(),
        o(&device.imei),
        o(&device.dev_eui),
        o(&d.external_reference),
        o(&d.failure_reason),
        n(d.retry_count),
        n(d.retry_limit),
        d.dry_run.map(|b| b.to_string()).unwrap_or_default(),
        o(&d.feedback_timeout),
        o(&d.created_at),
        o(&d.modified_at),
    ]
}

/// Writes every downlink the request's filters and sort give (every page) to `path` as CSV,
/// each device named from `names`; answers the number of rows.
pub async fn export_csv(
    client: &Client,
    req: &DownlinkPageRequest,
    names: &crate::devices::Directory,
    path: &std::path::Path,
) -> Result<u32, Error> {
    let mut req = DownlinkPageRequest { next: None, ..req.clone() };
    let mut file = crate::csv_file::CsvFile::create(path, &CSV_HEADER)?;
    loop {
        let page = list(client, &req).await?;
        for d in &page.items {
            if file.rows() >= MAX_EXPORT_ROWS {
                return Err(Error::InvalidInput {
                    field: "filters".into(),
                    rule: format!("match more than {MAX_EXPORT_ROWS} downlinks; narrow them"),
                });
            }
            file.row(csv_row(d, &names.label(&d.device)))?;
        }
        match page.next {
            Some(next) => req.next = Some(next),
            None => break,
        }
    }
    file.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use time::macros::datetime;

    fn set_property(device: &str) -> ActuatorDraft {
        ActuatorDraft {
            method: MethodDraft {
                variant: MethodVariant::SetProperty,
                device_id: device.into(),
                property: "reportingInterval".into(),
                value: "60".into(),
                ..Default::default()
            },
            retry_limit: "2".into(),
            feedback_timeout: "PT15M".into(),
            external_reference: "ref-1".into(),
            dry_run: false,
        }
    }

    fn fields(p: &DownlinkPreview) -> Vec<&str> {
        p.errors.iter().map(|e| e.field.as_str()).collect()
    }

    #[test]
    fn a_sentence_names_a_urn_without_its_trailing_colon() {
        assert_eq!(spoken_id("urn:dev:imei:350000000000001:"), "urn:dev:imei:350000000000001");
        assert_eq!(spoken_id("imei:350000000000001"), "imei:350000000000001");
        let d = ConnectionDraft {
            device_id: "urn:dev:deveui:70b3d57ed0000001:".into(),
            payload_hex: "0a".into(),
            feedback_timeout: "PT1H".into(),
            ..Default::default()
        };
        let p = d.preview();
        assert!(p.effect.iter().any(|e| e.ends_with("to device urn:dev:deveui:70b3d57ed0000001.")), "{:?}", p.effect);
    }

    #[test]
    fn the_preview_is_the_clients_body() {
        let draft = set_property("IMEI:350000000000001");
        let p = draft.preview();
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        let body: Value = serde_json::from_str(p.body.as_deref().unwrap()).unwrap();
        assert_eq!(body, draft.new_downlink().unwrap().to_json().unwrap());
        assert_eq!(
            body,
            json!({"method": {"type": "setProperty", "deviceId": "IMEI:350000000000001", "property": "reportingInterval", "value": 60},
                   "retryLimit": 2, "feedbackTimeout": "PT15M", "externalReference": "ref-1", "dryRun": false})
        );
        assert!(
            p.effect[0].contains("reportingInterval") && p.effect.iter().any(|s| s.contains("15 min")),
            "{:?}",
            p.effect
        );
    }

    #[test]
    fn every_broken_field_is_named_on_its_own() {
        let mut d = set_property("");
        d.feedback_timeout = "PT5M".into();
        d.retry_limit = "-1".into();
        d.method.value = "sixty".into();
        // The length of externalReference is not shown (A-27 is the simulator's): not refused.
        d.external_reference = "x".repeat(101);
        let p = d.preview();
        assert_eq!(fields(&p), ["method.deviceId", "method.value", "retryLimit", "feedbackTimeout"]);
        assert!(p.body.is_none());
        let ft = &p.errors[3].rule;
        assert!(ft.contains("at least 10 minutes"), "{ft}");

        // A bad feedback timeout alone: only it is named.
        let mut d = set_property("deveui:70b3d57ed0000001");
        d.feedback_timeout = "5 minutes".into();
        assert_eq!(fields(&d.preview()), ["feedbackTimeout"]);
    }

    #[test]
    fn method_variants_are_read_from_text() {
        let mut d = set_property("imei:350000000000001");
        d.method.value_type = ValueType::Boolean;
        d.method.value = "true".into();
        assert_eq!(d.new_downlink().unwrap().to_json().unwrap()["method"]["value"], json!(true));
        d.method.value_type = ValueType::String;
        d.method.value = "on".into();
        assert_eq!(d.new_downlink().unwrap().to_json().unwrap()["method"]["value"], json!("on"));

        d.method.variant = MethodVariant::InvokeCommand;
        d.method.command = "reboot".into();
        d.method.parameters = "[1]".into();
        assert_eq!(fields(&d.preview()), ["method.parameters"]);
        d.method.parameters = r#"{"delay": 5}"#.into();
        assert_eq!(d.new_downlink().unwrap().to_json().unwrap()["method"]["parameters"], json!({"delay": 5}));

        d.method.variant = MethodVariant::Senml;
        d.method.records = r#"[{"v": 1}]"#.into();
        assert_eq!(fields(&d.preview()), ["method.records"]);

        d.method.variant = MethodVariant::PayloadHex;
        d.method.payload_hex = "0a0b".into();
        d.method.port = "0".into();
        assert_eq!(fields(&d.preview()), ["method.port"]);
        d.method.port = "5".into();
        assert!(d.preview().effect[0].contains("2 bytes on LoRa port 5"));

        d.method.variant = MethodVariant::Raw;
        d.method.raw = "not json".into();
        assert_eq!(fields(&d.preview()), ["method"]);
        d.method.raw = r#"{"type": "custom", "deviceId": "whatever"}"#.into();
        assert!(d.preview().errors.is_empty(), "raw JSON is sent as given");
    }

    fn lora(device: &str) -> ConnectionDraft {
        ConnectionDraft {
            kind: DownlinkKind::Lora,
            device_id: device.into(),
            feedback_timeout: "PT30M".into(),
            payload_hex: "0a0b".into(),
            f_port: "2".into(),
            retry_limit: "1".into(),
            ..Default::default()
        }
    }

    #[test]
    fn connection_drafts_use_the_builders_and_default_to_dry_run() {
        let d = lora("deveui:70b3d57ed0000001");
        assert!(d.dry_run && d.confirmed, "dry run and confirmed unless unticked");
        let p = d.preview();
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        let body: Value = serde_json::from_str(p.body.as_deref().unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"deviceId": "deveui:70b3d57ed0000001", "feedbackTimeout": "PT30M", "payloadHex": "0a0b", "fPort": 2,
                   "confirmed": true, "retryLimit": 1, "dryRun": true})
        );
        assert!(p.effect.iter().any(|s| s.starts_with("Dry run")), "{:?}", p.effect);
        assert!(p.effect.iter().any(|s| s.contains("bypasses the encoder")));

        let mut bad = lora("imei:1");
        bad.feedback_timeout = String::new();
        bad.f_port = "300".into();
        assert_eq!(fields(&bad.preview()), ["deviceId", "feedbackTimeout", "fPort"]);

        // On SMS the deviceId is a plain string (section 1): the simulator's UUID rule (A-25) is
        // its own to answer.
        let sms = ConnectionDraft {
            kind: DownlinkKind::Sms,
            device_id: "imei:350000000000001".into(),
            text: "hi".into(),
            feedback_timeout: "PT1H".into(),
            ..Default::default()
        };
        assert!(fields(&sms.preview()).is_empty(), "{:?}", sms.preview().errors);
        let sms = ConnectionDraft { device_id: "  ".into(), ..sms };
        assert_eq!(fields(&sms.preview()), ["deviceId"]);

        let http = ConnectionDraft {
            kind: DownlinkKind::Http,
            device_id: "imei:350000000000001".into(),
            feedback_timeout: "PT1H".into(),
            mode: PayloadMode::Hex,
            payload_hex: "666f6f".into(),
            dry_run: false,
            ..Default::default()
        };
        let body: Value = serde_json::from_str(&http.preview().body.unwrap()).unwrap();
        assert_eq!(body["message"], json!({"payload": "Zm9v"}));
        assert!(http.preview().effect.last().unwrap().contains("disrupt"));

        let mqtt = ConnectionDraft {
            kind: DownlinkKind::Mqtt,
            device_id: "imei:350000000000001".into(),
            feedback_timeout: "PT1H".into(),
            topic: "a/#".into(),
            payload: "x".into(),
            retry_limit: "3".into(),
            ..Default::default()
        };
        assert_eq!(fields(&mqtt.preview()), ["topic"], "retryLimit is not offered on MQTT, so not sent");

        let dm = ConnectionDraft {
            kind: DownlinkKind::Digitalmatter,
            device_id: "imei:350000000000001".into(),
            feedback_timeout: "PT1H".into(),
            fields: r#"{"deviceId": "x"}"#.into(),
            ..Default::default()
        };
        assert_eq!(fields(&dm.preview()), ["deviceId"], "the builder's own fields are refused among the extra ones");

        let actuator = ConnectionDraft { kind: DownlinkKind::Actuator, ..Default::default() };
        assert_eq!(fields(&actuator.preview()), ["kind"]);
    }

    #[test]
    fn device_ids_are_checked_for_their_use() {
        let c = check_device_id(" URN:DEV:IMEI:350000000000001 ", None);
        assert_eq!(c.normalized.as_deref(), Some("urn:dev:imei:350000000000001:"));
        assert_eq!(c.form.as_deref(), Some("IMEI device URN"));
        assert!(check_device_id("deveui:70b3d57ed000000", Some("lora")).error.unwrap().rule.contains("16 hex"));
        // SMS: a plain string, kept exactly as typed (the filter matches it exactly).
        let sms = check_device_id("sim-card-7", Some("sms"));
        assert_eq!((sms.normalized.as_deref(), sms.error), (Some("sim-card-7"), None));
        let u = "0F8FAD5B-D9CB-469F-A165-70867728950E";
        assert_eq!(check_device_id(u, Some("sms")).normalized.as_deref(), Some(u));
        assert_eq!(check_device_id("", None).error.unwrap().rule, "is required: pick a device or paste its id");
        assert_eq!(check_device_id("imei:350000000000001", Some("carrier-pigeon")).error.unwrap().field, "kind");
        assert!(check_device_id("imei:350000000000001", Some("actuator")).error.is_none());
    }

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

    #[test]
    fn list_filters_belong_to_their_kind() {
        let req = |kind| DownlinkPageRequest {
            kind,
            next: None,
            sort: Some("-createdAt".into()),
            q: None,
            device_id: None,
            status: None,
            created_before: None,
            created_since: Some("2026-01-05".into()),
            modified_before: None,
            modified_since: None,
            limit: None,
        };
        let a = req(DownlinkKind::Actuator);
        assert_eq!(a.actuator_filter().unwrap().time.created_since, Some(datetime!(2026-01-05 00:00 UTC)));
        assert_eq!(
            DownlinkPageRequest { status: Some("DONE".into()), ..a.clone() }.actuator_filter().unwrap_err().field,
            "status"
        );
        let c = DownlinkPageRequest { q: Some("ref".into()), ..req(DownlinkKind::Lora) };
        assert_eq!(c.connection_filter().unwrap_err().field, "q");
        let c =
            DownlinkPageRequest { status: Some(" EXECUTING ".into()), q: Some("".into()), ..req(DownlinkKind::Sms) };
        assert_eq!(c.connection_filter().unwrap().status, Some(ConnectionDownlinkStatus::Executing));
    }

    #[test]
    fn kinds_name_their_sort_fields_and_filters() {
        let all = kinds();
        assert_eq!(all.len(), 6);
        assert_eq!(all[0].sort_fields, ACTUATOR_SORT_FIELDS);
        assert_eq!(all[0].filters[0], "q");
        let sms = all.iter().find(|k| k.kind == DownlinkKind::Sms).unwrap();
        assert!(sms.free_status && sms.retries && sms.filters.contains(&"deviceId".to_owned()));
        let lora = all.iter().find(|k| k.kind == DownlinkKind::Lora).unwrap();
        assert!(!lora.free_status);
        assert_eq!(lora.statuses, ["PENDING", "EXECUTING", "DONE"]);
        assert_eq!(humanize("PT1H30M"), "1 h 30 min");
        assert_eq!(humanize("P1DT5S"), "1 d 5 s");
    }
}
