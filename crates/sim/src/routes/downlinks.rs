//! Downlinks: actuator-style on `/downlinks` (section 4.2) and connection-specific on
//! `/{http,lora,mqtt,sms,digitalmatter}/downlinks` (section 4.3). Statuses move on the
//! simulated clock (engine.rs). Request shapes the reference does not show are assumptions
//!

use std::sync::Arc;
use std::time::Duration as StdDuration;

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::Json;
use dcs_model::downlinks::{
    ActuatorDownlink, ConnectionDownlink, ConnectionDownlinkStatus, DownlinkStatus, FailureReason,
};
use dcs_model::duration::{format_duration, parse_feedback_timeout};
use dcs_model::{DeviceId, Page};
use rand::Rng;
use serde_json::{json, Map, Value};
use time::Duration;
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::paging::{PageRequest, TIME_FILTERS};
use crate::routes::{json_body, names, ListRequest};
use crate::store::devices::DeviceRow;
use crate::store::downlinks::{DownlinkQuery, DownlinkRow};
use crate::SimState;

/// The four `method` variants of actuator downlinks (assumption A-23).
pub const METHOD_TYPES: &[&str] = &["setProperty", "invokeCommand", "senml", "payloadHex"];
/// Most retries a downlink may ask for (not shown in the reference; assumption A-26).
const MAX_RETRY_LIMIT: i64 = 10;
/// `feedbackTimeout` when an actuator downlink gives none (assumption A-26).
const DEFAULT_FEEDBACK_TIMEOUT: StdDuration = StdDuration::from_secs(3600);
/// Downlinks a device's queue holds per kind before the oldest is evicted (assumption A-28).
const QUEUE_LIMIT: usize = 10;
/// Kinds whose queue evicts. MQTT does not: `EVICTED` is not among its failure reasons in the
/// reference (section 2.7), so its waiting downlinks stay until sent, cancelled or timed out.
const EVICTING_KINDS: &[&str] = &["http", "lora", "sms", "digitalmatter"];

const ACTUATOR_SORT: &[(&str, &str)] = &[
    ("createdAt", "created_at"),
    ("modifiedAt", "modified_at"),
    ("status", "status"),
    ("externalReference", "external_reference"),
    ("networkId", "network_id"),
];
const CONNECTION_SORT: &[(&str, &str)] =
    &[("createdAt", "created_at"), ("modifiedAt", "modified_at"), ("status", "status"), ("deviceId", "device_ref")];

/// A stored count (0 to the retry limit) as the answer's `u32`.
fn count(n: i64) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

/// The actuator downlink as the API shows it (section 2.6, plus the retry and timeout fields
/// the simulator also returns, assumption A-27).
fn actuator_answer(d: &DownlinkRow) -> ActuatorDownlink {
    ActuatorDownlink {
        id: Some(d.id.to_string()),
        network_id: d.network_id.clone(),
        external_reference: d.external_reference.clone(),
        status: DownlinkStatus::from(d.status.as_str()),
        // A string holding the SenML JSON array (section 2.6), not the array itself.
        message: d.message.as_ref().map(|m| Value::String(m.to_string())),
        created_at: Some(d.created_at),
        modified_at: Some(d.modified_at),
        method: Some(d.body.get("method").cloned().unwrap_or(Value::Null)),
        retry_limit: Some(count(d.retry_limit)),
        retry_count: Some(count(d.retry_count)),
        feedback_timeout: Some(d.feedback_timeout.clone()),
        dry_run: Some(d.dry_run),
        last_failure_reason: d.last_failure_reason.as_deref().map(FailureReason::from),
        extra: Map::new(),
    }
}

/// A connection-specific downlink as the API shows it: the common fields, then the kind's
/// payload fields as stored from the body (assumption A-24).
fn connection_answer(d: &DownlinkRow) -> ConnectionDownlink {
    let retries = matches!(d.kind.as_str(), "lora" | "sms");
    let mut answer = ConnectionDownlink {
        id: Some(d.id.to_string()),
        status: Some(ConnectionDownlinkStatus::from(d.status.as_str())),
        device_id: d.device_ref.clone(),
        created_at: Some(d.created_at),
        modified_at: Some(d.modified_at),
        feedback_timeout: Some(d.feedback_timeout.clone()),
        dry_run: Some(d.dry_run),
        last_failure_reason: d.last_failure_reason.as_deref().map(FailureReason::from),
        retry_limit: retries.then(|| count(d.retry_limit)),
        retry_count: retries.then(|| count(d.retry_count)),
        icc_id: (d.kind == "sms").then(|| icc_id(d.device_id)),
        payload: Map::new(),
    };
    if let Value::Object(m) = &d.body {
        answer.set_payload(m.clone());
    }
    answer
}

/// The SIM card of a device, derived from its id (read-only `iccId`).
fn icc_id(device: Uuid) -> String {
    format!("8944{:015}", device.as_u128() % 1_000_000_000_000_000)
}

fn opt_bool(body: &Map<String, Value>, name: &str) -> Result<bool, ApiError> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ApiError::invalid(name, "must be true or false")),
    }
}

fn retry_limit(body: &Map<String, Value>) -> Result<i64, ApiError> {
    match body.get("retryLimit") {
        None | Some(Value::Null) => Ok(0),
        Some(v) => v.as_i64().filter(|n| (0..=MAX_RETRY_LIMIT).contains(n)).ok_or_else(|| {
            ApiError::invalid("retryLimit", format!("must be a whole number from 0 to {MAX_RETRY_LIMIT}"))
        }),
    }
}

fn feedback_timeout(body: &Map<String, Value>, default: Option<StdDuration>) -> Result<StdDuration, ApiError> {
    match body.get("feedbackTimeout") {
        None | Some(Value::Null) => default.ok_or_else(|| ApiError::invalid("feedbackTimeout", "is required")),
        Some(Value::String(s)) => {
            parse_feedback_timeout(s).map_err(|e| ApiError::invalid("feedbackTimeout", e.to_string()))
        }
        Some(_) => Err(ApiError::invalid("feedbackTimeout", "must be a duration string such as PT10M")),
    }
}

fn string<'a>(o: &'a Map<String, Value>, field: &str, path: &str) -> Result<&'a str, ApiError> {
    match o.get(field) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        None | Some(Value::Null) => Err(ApiError::invalid(path, "is required")),
        Some(_) => Err(ApiError::invalid(path, "must be a non-empty string")),
    }
}

fn hex_payload(s: &str, field: &str, max_bytes: usize) -> Result<(), ApiError> {
    if s.is_empty() || !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::invalid(field, "must be an even number of hex characters"));
    }
    if s.len() / 2 > max_bytes {
        return Err(ApiError::invalid(field, format!("must be at most {max_bytes} bytes")));
    }
    Ok(())
}

fn resolve_device(state: &SimState, caller: &Caller, raw: &str, field: &str) -> Result<DeviceRow, ApiError> {
    let id = DeviceId::parse(raw).map_err(|e| ApiError::invalid(field, e.to_string()))?;
    state
        .store
        .find_device(caller.client, &id)?
        .ok_or_else(|| ApiError::invalid(field, format!("no device {id} in this environment")))
}

/// Checks a `method` and returns the device it targets and the SenML message the encoder makes.
fn check_method(state: &SimState, caller: &Caller, method: &Value) -> Result<(DeviceRow, Value), ApiError> {
    let m = method.as_object().ok_or_else(|| ApiError::invalid("method", "must be an object with a `type`"))?;
    let kind = string(m, "type", "method.type")?;
    if !METHOD_TYPES.contains(&kind) {
        return Err(ApiError::invalid("method.type", format!("must be one of {}", METHOD_TYPES.join(", "))));
    }
    let device = resolve_device(state, caller, string(m, "deviceId", "method.deviceId")?, "method.deviceId")?;
    let bn = device.network_id();
    let message = match kind {
        "setProperty" => {
            let name = string(m, "property", "method.property")?;
            let value = m.get("value").ok_or_else(|| ApiError::invalid("method.value", "is required"))?;
            let mut rec = json!({"bn": bn, "n": name});
            match value {
                Value::Number(n) => rec["v"] = json!(n),
                Value::Bool(b) => rec["vb"] = json!(b),
                Value::String(s) => rec["vs"] = json!(s),
                _ => return Err(ApiError::invalid("method.value", "must be a number, a boolean or a string")),
            }
            json!([rec])
        }
        "invokeCommand" => {
            let command = string(m, "command", "method.command")?;
            let params = m.get("parameters").cloned().unwrap_or(json!({}));
            if !params.is_object() {
                return Err(ApiError::invalid("method.parameters", "must be an object"));
            }
            json!([{"bn": bn, "n": "command", "vs": command}, {"n": "parameters", "vs": params.to_string()}])
        }
        "senml" => {
            let records = m
                .get("records")
                .and_then(Value::as_array)
                .filter(|r| !r.is_empty())
                .ok_or_else(|| ApiError::invalid("method.records", "must be a non-empty array of SenML records"))?;
            let mut out = Vec::new();
            for (i, r) in records.iter().enumerate() {
                let mut r = r
                    .as_object()
                    .cloned()
                    .ok_or_else(|| ApiError::invalid("method.records", format!("record {i} must be an object")))?;
                if !r.contains_key("n") {
                    return Err(ApiError::invalid("method.records", format!("record {i} needs a name `n`")));
                }
                if i == 0 {
                    r.insert("bn".into(), json!(bn));
                }
                out.push(Value::Object(r));
            }
            Value::Array(out)
        }
        _ => {
            let hex = string(m, "payloadHex", "method.payloadHex")?;
            hex_payload(hex, "method.payloadHex", 242)?;
            if let Some(port) = m.get("port") {
                port.as_i64()
                    .filter(|p| (1..=223).contains(p))
                    .ok_or_else(|| ApiError::invalid("method.port", "must be 1 to 223"))?;
            }
            json!([{"bn": bn, "n": "payloadHex", "vs": hex.to_ascii_lowercase()}])
        }
    };
    Ok((device, message))
}

pub(crate) async fn create_actuator(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<ActuatorDownlink>), ApiError> {
    let body = json_body(&body)?;
    let method = body.get("method").ok_or_else(|| ApiError::invalid("method", "is required"))?;
    let (device, message) = check_method(&state, &caller, method)?;
    let external_reference = match body.get("externalReference") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if (1..=100).contains(&s.chars().count()) => Some(s.clone()),
        Some(_) => return Err(ApiError::invalid("externalReference", "must be a string of 1 to 100 characters")),
    };
    let row = new_row(
        &state,
        &caller,
        "actuator",
        &device,
        device.network_id(),
        json!({"method": method}),
        retry_limit(&body)?,
        feedback_timeout(&body, Some(DEFAULT_FEEDBACK_TIMEOUT))?,
        opt_bool(&body, "dryRun")?,
        external_reference.clone(),
        Some(message),
    );
    if !state.store.insert_downlink(&row)? {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "externalReference {} is already used by another downlink of this client",
                external_reference.unwrap_or_default()
            ),
        ));
    }
    Ok((StatusCode::CREATED, Json(actuator_answer(&row))))
}

#[allow(clippy::too_many_arguments)]
fn new_row(
    state: &SimState,
    caller: &Caller,
    kind: &str,
    device: &DeviceRow,
    device_ref: String,
    body: Value,
    retry_limit: i64,
    timeout: StdDuration,
    dry_run: bool,
    external_reference: Option<String>,
    message: Option<Value>,
) -> DownlinkRow {
    let now = state.clock.now();
    DownlinkRow {
        id: Uuid::new_v4(),
        kind: kind.to_owned(),
        client_id: caller.client,
        device_id: device.id,
        device_ref,
        network_id: device.network_id(),
        external_reference,
        status: "PENDING".to_owned(),
        body,
        message,
        retry_limit,
        retry_count: 0,
        feedback_timeout: format_duration(timeout),
        dry_run,
        last_failure_reason: None,
        cancel: 0,
        next_step_at: Some(now + Duration::seconds(rand::thread_rng().gen_range(1..8))),
        deadline_at: deadline(now, timeout),
        created_at: now,
        modified_at: now,
    }
}

/// When a downlink created at `now` runs out of feedback time. A timeout past the last
/// representable instant (`P3000000D`: valid, as the reference sets no maximum) means "never":
/// the deadline is the end of year 9999 rather than an overflow.
fn deadline(now: time::OffsetDateTime, timeout: StdDuration) -> time::OffsetDateTime {
    Duration::try_from(timeout)
        .ok()
        .and_then(|d| now.checked_add(d))
        .unwrap_or_else(|| time::PrimitiveDateTime::MAX.assume_utc())
}

/// Which family a connection-specific path is for: its first segment.
fn kind_of(uri: &Uri) -> String {
    uri.path().trim_start_matches('/').split('/').next().unwrap_or_default().to_owned()
}

/// Checks the kind's own fields (assumption A-24) and returns them to store.
fn connection_fields(kind: &str, body: &Map<String, Value>) -> Result<Value, ApiError> {
    let mut out = Map::new();
    match kind {
        "http" => {
            let m = body.get("message").and_then(Value::as_object).ok_or_else(|| {
                ApiError::invalid("message", "is required: an object with `senml` (records) or `payload` (base64)")
            })?;
            match (m.get("senml"), m.get("payload")) {
                (Some(Value::Array(r)), None) if !r.is_empty() => {}
                (None, Some(Value::String(p))) if !p.is_empty() => {
                    use base64::Engine;
                    base64::engine::general_purpose::STANDARD
                        .decode(p)
                        .map_err(|_| ApiError::invalid("message.payload", "must be base64"))?;
                }
                _ => {
                    return Err(ApiError::invalid(
                        "message",
                        "must have exactly one of `senml` (non-empty array) or `payload` (base64)",
                    ))
                }
            }
            out.insert("message".into(), Value::Object(m.clone()));
        }
        "lora" => {
            let hex = string(body, "payloadHex", "payloadHex")?;
            hex_payload(hex, "payloadHex", 242)?;
            let port = body.get("fPort").and_then(Value::as_i64).unwrap_or(1);
            if !(1..=223).contains(&port) {
                return Err(ApiError::invalid("fPort", "must be 1 to 223"));
            }
            let confirmed = match body.get("confirmed") {
                None | Some(Value::Null) => true,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(ApiError::invalid("confirmed", "must be true or false")),
            };
            out.insert("payloadHex".into(), json!(hex.to_ascii_lowercase()));
            out.insert("fPort".into(), json!(port));
            out.insert("confirmed".into(), json!(confirmed));
        }
        "mqtt" => {
            let topic = string(body, "topic", "topic")?;
            if topic.len() > 256 || topic.contains(['#', '+']) {
                return Err(ApiError::invalid("topic", "must be at most 256 characters without the wildcards # and +"));
            }
            let payload = string(body, "payload", "payload")?;
            let qos = body.get("qos").and_then(Value::as_i64).unwrap_or(1);
            if !(0..=2).contains(&qos) {
                return Err(ApiError::invalid("qos", "must be 0, 1 or 2"));
            }
            out.insert("topic".into(), json!(topic));
            out.insert("payload".into(), json!(payload));
            out.insert("qos".into(), json!(qos));
        }
        "sms" => match (body.get("text"), body.get("payloadHex")) {
            (Some(Value::String(t)), None) if (1..=160).contains(&t.chars().count()) => {
                out.insert("text".into(), json!(t));
            }
            (None, Some(Value::String(h))) => {
                hex_payload(h, "payloadHex", 140)?;
                out.insert("payloadHex".into(), json!(h.to_ascii_lowercase()));
            }
            _ => {
                return Err(ApiError::invalid(
                    "text",
                    "give exactly one of `text` (1 to 160 characters) or `payloadHex`",
                ))
            }
        },
        _ => {
            // digitalmatter: its fields are not shown; everything else is kept as sent.
            for (k, v) in body {
                if !matches!(k.as_str(), "deviceId" | "feedbackTimeout" | "dryRun" | "retryLimit" | "id" | "status") {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    Ok(Value::Object(out))
}

pub(crate) async fn create_connection(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    uri: Uri,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<ConnectionDownlink>), ApiError> {
    let kind = kind_of(&uri);
    let body = json_body(&body)?;
    let raw = string(&body, "deviceId", "deviceId")?;
    let device = if kind == "sms" {
        // A plain string on SMS, matched exactly against device UUIDs (assumption A-25).
        let id = Uuid::parse_str(raw).map_err(|_| ApiError::invalid("deviceId", "must be the device's UUID"))?;
        state
            .store
            .find_device(caller.client, &DeviceId::Uuid(id))?
            .filter(|d| d.id.to_string() == raw)
            .ok_or_else(|| ApiError::invalid("deviceId", format!("no device {raw} in this environment")))?
    } else {
        resolve_device(&state, &caller, raw, "deviceId")?
    };
    let wanted = match kind.as_str() {
        "lora" => Some("lora"),
        "sms" => Some("sms"),
        "mqtt" => Some("mqtt"),
        "http" => Some("http"),
        _ => None,
    };
    if let Some(w) = wanted {
        if device.connection != w {
            return Err(ApiError::invalid(
                "deviceId",
                format!("device {} connects over {}, not {w}", device.id, device.connection),
            ));
        }
    }
    let fields = connection_fields(&kind, &body)?;
    let retries = if matches!(kind.as_str(), "lora" | "sms") { retry_limit(&body)? } else { 0 };
    let row = new_row(
        &state,
        &caller,
        &kind,
        &device,
        raw.to_owned(),
        fields,
        retries,
        feedback_timeout(&body, None)?,
        opt_bool(&body, "dryRun")?,
        None,
        None,
    );
    // A full queue drops its oldest waiting downlink (EVICTED), on the kinds that know eviction.
    let queued = if EVICTING_KINDS.contains(&kind.as_str()) {
        state.store.queued_downlinks(device.id, &kind)?
    } else {
        Vec::new()
    };
    if queued.len() >= QUEUE_LIMIT {
        let now = state.clock.now();
        state.store.apply_downlink_changes(&[crate::store::downlinks::DownlinkChange {
            id: queued[0],
            status: "DONE".into(),
            retry_count: 0,
            last_failure_reason: Some("EVICTED".into()),
            next_step_at: None,
            at: now,
        }])?;
    }
    state.store.insert_downlink(&row)?;
    Ok((StatusCode::CREATED, Json(connection_answer(&row))))
}

pub(crate) async fn list_actuator(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    req: ListRequest,
) -> Result<Json<Page<ActuatorDownlink>>, ApiError> {
    let mut filters = vec!["q"];
    filters.extend_from_slice(TIME_FILTERS);
    let pr = PageRequest::from_params(&req.query, &filters, &names(ACTUATOR_SORT))?;
    if pr.filter("q") == Some("") {
        return Err(ApiError::invalid("q", "must be at least 1 character"));
    }
    let query = DownlinkQuery {
        owner: caller.client,
        kind: "actuator".into(),
        q: pr.filter("q").map(str::to_owned),
        time: pr.time_window()?,
        window: pr.window(ACTUATOR_SORT),
        ..Default::default()
    };
    let rows = state.store.list_downlinks(&query)?;
    Ok(Json(pr.page(rows.iter().map(actuator_answer).collect(), &req.base, "/downlinks")))
}

pub(crate) async fn list_connection(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    uri: Uri,
    req: ListRequest,
) -> Result<Json<Page<ConnectionDownlink>>, ApiError> {
    let kind = kind_of(&uri);
    let mut filters = vec!["deviceId", "status"];
    filters.extend_from_slice(TIME_FILTERS);
    let pr = PageRequest::from_params(&req.query, &filters, &names(CONNECTION_SORT))?;
    let status = pr.filter("status").map(str::to_owned);
    if let Some(s) = &status {
        // An enumeration on http and lora; a free string on sms and mqtt (section 4.3).
        if matches!(kind.as_str(), "http" | "lora") && !["PENDING", "EXECUTING", "DONE"].contains(&s.as_str()) {
            return Err(ApiError::invalid("status", "must be one of PENDING, EXECUTING, DONE"));
        }
    }
    let (mut device_id, mut device_ref) = (None, None);
    if let Some(raw) = pr.filter("deviceId") {
        if kind == "sms" {
            Uuid::parse_str(raw).map_err(|_| ApiError::invalid("deviceId", "must be a UUID"))?;
            device_ref = Some(raw.to_owned());
        } else {
            let id = DeviceId::parse(raw).map_err(|e| ApiError::invalid("deviceId", e.to_string()))?;
            device_id = Some(state.store.find_device(caller.client, &id)?.map(|d| d.id).unwrap_or_else(Uuid::nil));
        }
    }
    let query = DownlinkQuery {
        owner: caller.client,
        kind: kind.clone(),
        device_id,
        device_ref,
        status,
        q: None,
        time: pr.time_window()?,
        window: pr.window(CONNECTION_SORT),
    };
    let rows = state.store.list_downlinks(&query)?;
    Ok(Json(pr.page(rows.iter().map(connection_answer).collect(), &req.base, &format!("/{kind}/downlinks"))))
}

fn find(state: &SimState, caller: &Caller, kind: &str, raw: &str) -> Result<DownlinkRow, ApiError> {
    let id = match Uuid::parse_str(raw) {
        Ok(id) => id,
        // Actuator ids are plain strings: an id that is not ours is simply not found.
        Err(_) if kind == "actuator" => return Err(ApiError::not_found(format!("no downlink {raw}"))),
        Err(_) => return Err(ApiError::invalid("downlinkId", "must be a UUID")),
    };
    state.store.downlink(caller.client, kind, id)?.ok_or_else(|| ApiError::not_found(format!("no downlink {id}")))
}

pub(crate) async fn get_actuator(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<ActuatorDownlink>, ApiError> {
    Ok(Json(actuator_answer(&find(&state, &caller, "actuator", &id)?)))
}

pub(crate) async fn get_connection(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    uri: Uri,
    Path(id): Path<String>,
) -> Result<Json<ConnectionDownlink>, ApiError> {
    let kind = kind_of(&uri);
    Ok(Json(connection_answer(&find(&state, &caller, &kind, &id)?)))
}

fn forced(req: &ListRequest) -> Result<bool, ApiError> {
    match req.query.one("forced")? {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(_) => Err(ApiError::invalid("forced", "must be true or false")),
    }
}

/// Cancellation (assumption A-29): accepted at once while queued; while executing only when
/// forced; a final downlink cannot be cancelled (409).
async fn cancel(
    state: &SimState,
    caller: &Caller,
    kind: &str,
    id: &str,
    req: &ListRequest,
) -> Result<StatusCode, ApiError> {
    let forced = forced(req)?;
    let d = find(state, caller, kind, id)?;
    let is_final = if kind == "actuator" {
        matches!(d.status.as_str(), "DELIVERED" | "FAILED" | "CANCELLED")
    } else {
        d.status == "DONE"
    };
    if is_final {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("downlink {} is already {}; nothing to cancel", d.id, d.status),
        ));
    }
    let queued = matches!(d.status.as_str(), "PENDING" | "RETRY");
    if !queued && !forced {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "downlink {} is {} and may already be on its way; cancel with forced=true to stop it anyway",
                d.id, d.status
            ),
        ));
    }
    state.store.request_cancel(d.id, forced, state.clock.now())?;
    Ok(StatusCode::ACCEPTED)
}

pub(crate) async fn cancel_actuator(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(id): Path<String>,
    req: ListRequest,
) -> Result<StatusCode, ApiError> {
    cancel(&state, &caller, "actuator", &id, &req).await
}

pub(crate) async fn cancel_connection(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    uri: Uri,
    Path(id): Path<String>,
    req: ListRequest,
) -> Result<StatusCode, ApiError> {
    let kind = kind_of(&uri);
    cancel(&state, &caller, &kind, &id, &req).await
}

/// Media type the beta actuator endpoint answers with and asks for in `Accept`.
const BETA_ACTUATOR_MEDIA: &str = "application/vnd.service.actuator.v1.response+json";

/// `POST /api/actuator/downlinks` (deprecated beta API, section 4.5): a JSON array of SenML
/// records, each `{"bn": "urn:dev:deveui:<16 hex>:", "n": "payloadHex", "vs": "<hex>"}`, with
/// `port` (LoRa FPort) and an optional `externalReference` in the query. Each record becomes
/// an actuator downlink of the `payloadHex` variant; the answer (not shown in the reference) is
/// `201` with the array of created downlinks (assumption A-55).
pub(crate) async fn create_beta_actuator(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    headers: axum::http::HeaderMap,
    req: ListRequest,
    body: axum::body::Bytes,
) -> Result<(StatusCode, [(axum::http::HeaderName, &'static str); 1], Json<Vec<ActuatorDownlink>>), ApiError> {
    crate::routes::beta::require_accept(&headers, BETA_ACTUATOR_MEDIA)?;
    crate::routes::require_json_content_type(&headers)?;
    let port = req
        .query
        .one("port")?
        .ok_or_else(|| ApiError::invalid("port", "is required (the LoRa FPort, 1 to 223)"))?
        .parse::<i64>()
        .ok()
        .filter(|p| (1..=223).contains(p))
        .ok_or_else(|| ApiError::invalid("port", "must be a whole number from 1 to 223"))?;
    let reference = req.query.one("externalReference")?.map(str::to_owned);
    if reference.as_deref().is_some_and(|r| r.is_empty() || r.chars().count() > 100) {
        return Err(ApiError::invalid("externalReference", "must be 1 to 100 characters"));
    }
    let records = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Array(r)) if !r.is_empty() => r,
        _ => return Err(ApiError::invalid("body", "must be a non-empty JSON array of SenML records")),
    };
    if reference.is_some() && records.len() > 1 {
        return Err(ApiError::invalid("externalReference", "names one downlink: send one record with it"));
    }
    // Check every record before creating anything.
    let mut planned = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let field = |f: &str| format!("[{i}].{f}");
        let r = r.as_object().ok_or_else(|| ApiError::invalid(&format!("[{i}]"), "must be a SenML record object"))?;
        let bn = r.get("bn").and_then(Value::as_str).ok_or_else(|| ApiError::invalid(&field("bn"), "is required"))?;
        match DeviceId::parse(bn) {
            Ok(DeviceId::DevEui { urn: true, .. }) => {}
            _ => return Err(ApiError::invalid(&field("bn"), "must be a DevEUI device URN, urn:dev:deveui:<16 hex>:")),
        }
        if r.get("n").and_then(Value::as_str) != Some("payloadHex") {
            return Err(ApiError::invalid(&field("n"), "must be `payloadHex`"));
        }
        let vs = r.get("vs").and_then(Value::as_str).ok_or_else(|| ApiError::invalid(&field("vs"), "is required"))?;
        hex_payload(vs, &field("vs"), 242)?;
        let method = json!({"type": "payloadHex", "deviceId": bn, "payloadHex": vs, "port": port});
        let (device, message) = check_method(&state, &caller, &method).map_err(|mut e| {
            if let Some(p) = e.invalid_params.first_mut() {
                p.name = field("bn");
                e.detail = format!("{}: {}", p.name, p.reason);
            }
            e
        })?;
        planned.push((device, method, message));
    }
    let mut created = Vec::new();
    for (device, method, message) in planned {
        let row = new_row(
            &state,
            &caller,
            "actuator",
            &device,
            device.network_id(),
            json!({"method": method}),
            0,
            DEFAULT_FEEDBACK_TIMEOUT,
            false,
            reference.clone(),
            Some(message),
        );
        if !state.store.insert_downlink(&row)? {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "externalReference is already used by another downlink of this client",
            ));
        }
        created.push(actuator_answer(&row));
    }
    Ok((StatusCode::CREATED, [(axum::http::header::CONTENT_TYPE, BETA_ACTUATOR_MEDIA)], Json(created)))
}
