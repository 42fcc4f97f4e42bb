//! The alt variant (`dcs sim --variant alt`): another plausible service.
//!
//! Everything the reference leaves "not shown" that a client could depend on is answered
//! another way here; each flip is an "A-n (alt)" entry of `docs/simulator-assumptions.md`.
//! Most flips are made in one place, this layer around the reference router: it moves the
//! set-target operation, and rewrites answers (links, optional members, extra members, enum
//! values, timestamps, error envelopes). The few that need the state's inside knowledge are in
//! the handlers, keyed on [`crate::Variant`] (page size and relative links in `ListRequest`,
//! firmware-state parameters in `list_states`, kept binding secrets in bindings' `update`).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Map, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::auth::{is_beta_path, TOKEN_PATH};
use crate::error::ApiError;
use crate::store::bindings::BindingRow;
use crate::{SimState, Variant};

/// Largest request body the set-target rewrite reads (the operation takes a tiny JSON object).
const BODY_LIMIT: usize = 64 * 1024;
/// How long (simulated) a new firmware target is `QUEUED` before it is `PENDING` (A-37 (alt)).
const QUEUED_FOR: time::Duration = time::Duration::seconds(5);
/// How long (simulated) a new actuator downlink is `ACCEPTED` before it is `PENDING` (A-30 (alt)).
const ACCEPTED_FOR: time::Duration = time::Duration::seconds(1);

/// The reference router with the alt variant's rewrites around it (before routing, so that a
/// moved operation reaches its handler).
pub(crate) fn wrap(state: Arc<SimState>, inner: Router) -> Router {
    let svc = tower::Layer::layer(&axum::middleware::from_fn_with_state(state, rewrite), inner);
    Router::new().fallback_service(svc)
}

/// A-61 (alt): secrets are never returned, so a full-replacement `PUT` without one keeps the
/// stored one.
pub(crate) fn keep_secrets(body: &mut Map<String, Value>, current: &BindingRow) {
    for (name, stored) in
        [("appKey", &current.app_key), ("password", &current.password), ("sharedSecret", &current.shared_secret)]
    {
        if let (None | Some(Value::Null), Some(stored)) = (body.get(name), stored) {
            body.insert(name.to_owned(), Value::String(stored.clone()));
        }
    }
}

/// What kind of resource an answer holds, from the request path.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Area {
    States,
    Bindings { lora: bool },
    ActuatorDownlinks,
    Other,
}

fn area_of(path: &str, set_target: bool) -> Area {
    if set_target || path.starts_with("/firmware/states") {
        Area::States
    } else if path.starts_with("/downlinks") {
        Area::ActuatorDownlinks
    } else if ["/lora/bindings", "/http/bindings", "/mqtt/bindings"].iter().any(|p| path.starts_with(p)) {
        Area::Bindings { lora: path.starts_with("/lora/") }
    } else {
        Area::Other
    }
}

async fn rewrite(State(state): State<Arc<SimState>>, mut req: Request, next: Next) -> Response {
    let uri = req.uri().clone();
    let path = uri.path().to_owned();
    if path.starts_with("/_sim/") || path == "/openapi.yaml" {
        return next.run(req).await;
    }
    req.extensions_mut().insert(Variant::Alt);
    let method = req.method().clone();
    let had_auth = req.headers().contains_key(header::AUTHORIZATION);
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost").to_owned();
    let segments: Vec<&str> = path.split('/').collect();

    // A-38 (alt): the set-target operation is `PUT /firmware/devices/{d}/modules/{m}/target`
    // with `{"version": ...}`; the reference variant's place does not exist.
    if path.strip_prefix("/firmware/states/").is_some_and(|rest| !rest.is_empty()) {
        return ApiError::not_found("no such operation in this API").render(&uri);
    }
    let mut set_target = false;
    if let ["", "firmware", "devices", device, "modules", module, "target"] = segments.as_slice() {
        if method != Method::PUT {
            return ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "this path does not accept that method").render(&uri);
        }
        let inner =
            format!("/firmware/states/{device}/{module}{}", uri.query().map(|q| format!("?{q}")).unwrap_or_default());
        let (mut parts, body) = req.into_parts();
        let bytes = match axum::body::to_bytes(body, BODY_LIMIT).await {
            Ok(b) => b,
            Err(_) => return ApiError::invalid("body", format!("must be at most {BODY_LIMIT} bytes")).render(&uri),
        };
        // Not an object: passed on as it is, so the handler refuses it after the token check.
        let bytes = match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(mut m)) => {
                m.remove("targetFirmwareVersion");
                if let Some(v) = m.remove("version") {
                    m.insert("targetFirmwareVersion".to_owned(), v);
                }
                Bytes::from(serde_json::to_vec(&Value::Object(m)).unwrap_or_default())
            }
            _ => bytes,
        };
        parts.uri = inner.parse().unwrap_or(uri.clone());
        parts.headers.remove(header::CONTENT_LENGTH);
        req = Request::from_parts(parts, Body::from(bytes));
        set_target = true;
    }

    let res = next.run(req).await;
    let status = res.status();

    if path == TOKEN_PATH {
        return token_answer(res).await;
    }
    if is_beta_path(&path) {
        if status == StatusCode::FOUND {
            return login_redirect(&host, &uri);
        }
        if path.ends_with("/context-switch") && status == StatusCode::OK {
            // A-53 (alt): the grant is made; the answer has no content.
            return StatusCode::NO_CONTENT.into_response();
        }
        return json_answer(res, |v| {
            if let Value::Object(m) = v {
                m.insert("tenantId".to_owned(), Value::String(tenant_id(&state)));
                // A-51 (alt): a device's network identifier is in its metadata, as a URN.
                if let Some(Value::Array(devices)) = m.get_mut("content") {
                    devices.iter_mut().filter_map(Value::as_object_mut).for_each(network_id_in_metadata);
                }
            }
            timestamps(v);
        })
        .await;
    }
    if status == StatusCode::UNAUTHORIZED {
        return unauthorized(had_auth);
    }
    let is_downlink =
        matches!(segments.as_slice(), ["", "downlinks", _]) || matches!(segments.as_slice(), ["", _, "downlinks", _]);
    if method == Method::DELETE && is_downlink && status == StatusCode::CONFLICT {
        // A-29 (alt): every cancellation is accepted; one that cannot apply (a final or an
        // executing downlink without `forced`) changes nothing, as its status shows afterwards.
        return StatusCode::ACCEPTED.into_response();
    }
    if set_target && is_problem(&res) {
        return problem_answer(res, rename_target_field).await;
    }
    let area = area_of(&path, set_target);
    let now = state.clock.now();
    let tenant = tenant_id(&state);
    let self_href = if method == Method::POST { None } else { Some(path.clone()) };
    let list_path = path.clone();
    json_answer(res, move |v| {
        let Value::Object(top) = v else { return };
        if let Some(Value::Array(items)) = top.get_mut("items") {
            for item in items {
                if let Value::Object(m) = item {
                    let href = m.get("id").and_then(Value::as_str).map(|id| format!("{list_path}/{id}"));
                    resource(m, area, now, &tenant, href);
                }
            }
            top.insert("_links".to_owned(), json!({ "self": { "href": list_path } }));
        } else {
            let href =
                self_href.or_else(|| top.get("id").and_then(Value::as_str).map(|id| format!("{list_path}/{id}")));
            resource(top, area, now, &tenant, href);
        }
        timestamps(v);
    })
    .await
}

/// A-51 (alt): the device's `imei` or `devEui` member moves into its metadata as `networkId`,
/// in the URN shape of a downlink's `networkId`.
fn network_id_in_metadata(d: &mut Map<String, Value>) {
    let urn = match (d.remove("imei"), d.remove("devEui")) {
        (_, Some(Value::String(eui))) => format!("urn:dev:deveui:{eui}:"),
        (Some(Value::String(imei)), _) => format!("urn:dev:imei:{imei}:"),
        _ => return,
    };
    if let Some(Value::Object(meta)) = d.get_mut("metadata") {
        meta.insert("networkId".to_owned(), Value::String(urn));
    }
}

/// One resource of an answer: optional members left out, the alt enum values, extra members.
fn resource(m: &mut Map<String, Value>, area: Area, now: OffsetDateTime, tenant: &str, href: Option<String>) {
    for name in ["createdBy", "modifiedBy", "clientId", "projectId"] {
        m.remove(name);
    }
    if let Some(Value::Object(embedded)) = m.get_mut("_embedded") {
        for (name, member) in embedded.iter_mut() {
            if let Value::Object(e) = member {
                e.remove("createdBy");
                e.remove("modifiedBy");
                // A device specification's `clientId` is required (section 2.3): kept.
                if name != "deviceSpecification" {
                    e.remove("clientId");
                }
            }
        }
    }
    let younger_than = |m: &Map<String, Value>, field: &str, age: time::Duration| {
        m.get(field)
            .and_then(Value::as_str)
            .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
            .is_some_and(|t| now - t < age)
    };
    let mut links = Map::new();
    match area {
        Area::States => {
            m.remove("deviceSpecificationId");
            m.remove("firmwareUpdateStatusDetails");
            if m.get("firmwareUpdateStatus").and_then(Value::as_str) == Some("PENDING")
                && younger_than(m, "firmwareUpdateStatusModifiedAt", QUEUED_FOR)
            {
                m.insert("firmwareUpdateStatus".to_owned(), Value::String("QUEUED".to_owned()));
            }
            if let (Some(d), Some(mo)) =
                (m.get("deviceId").and_then(Value::as_str), m.get("moduleId").and_then(Value::as_str))
            {
                links.insert(
                    "target".to_owned(),
                    json!({ "href": format!("/firmware/devices/{d}/modules/{mo}/target") }),
                );
            }
        }
        Area::Bindings { lora } => {
            for secret in ["appKey", "password", "sharedSecret"] {
                m.remove(secret);
            }
            if lora && m.get("status").and_then(Value::as_str) == Some("INVENTORY") {
                m.remove("status");
            }
        }
        Area::ActuatorDownlinks => {
            if m.get("status").and_then(Value::as_str) == Some("PENDING") && younger_than(m, "createdAt", ACCEPTED_FOR)
            {
                m.insert("status".to_owned(), Value::String("ACCEPTED".to_owned()));
            }
        }
        Area::Other => {}
    }
    if area != Area::States {
        if let Some(href) = href {
            links.insert("self".to_owned(), json!({ "href": href }));
        }
    }
    m.insert("_links".to_owned(), Value::Object(links));
    m.insert("tenantId".to_owned(), Value::String(tenant.to_owned()));
}

/// Every `...At` member written with a `+00:00` offset and no fractional seconds.
fn timestamps(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, member) in m.iter_mut() {
                match member {
                    Value::String(s) if k.ends_with("At") => {
                        if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
                            *s = offset_form(t);
                        }
                    }
                    other => timestamps(other),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(timestamps),
        _ => {}
    }
}

fn offset_form(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}+00:00",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// The tenant every answer names (an extra member no client needs).
pub(crate) fn tenant_id(state: &SimState) -> String {
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, format!("dcs-sim-tenant-{}", state.opts.seed).as_bytes()).to_string()
}

fn content_type(res: &Response) -> &str {
    res.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("")
}

fn is_problem(res: &Response) -> bool {
    content_type(res).starts_with(dcs_model::problem::PROBLEM_JSON)
}

/// A JSON answer (`application/json` only) changed by `f`; any other answer as it is.
async fn json_answer(res: Response, f: impl FnOnce(&mut Value)) -> Response {
    if !content_type(&res).starts_with("application/json") {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let bytes = match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut v) => {
            f(&mut v);
            Bytes::from(serde_json::to_vec(&v).unwrap_or_default())
        }
        Err(_) => bytes,
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(bytes))
}

/// A problem document changed by `f`.
async fn problem_answer(res: Response, f: impl FnOnce(&mut Map<String, Value>)) -> Response {
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let bytes = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(mut m)) => {
            f(&mut m);
            Bytes::from(serde_json::to_vec(&m).unwrap_or_default())
        }
        _ => bytes,
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(bytes))
}

/// The set-target body's member is `version` here: errors name it so.
fn rename_target_field(m: &mut Map<String, Value>) {
    if let Some(Value::String(d)) = m.get_mut("detail") {
        *d = d.replace("targetFirmwareVersion", "version");
    }
    if let Some(Value::Array(params)) = m.get_mut("invalidParams") {
        for p in params {
            if p.get("name").and_then(Value::as_str) == Some("targetFirmwareVersion") {
                p["name"] = Value::String("version".to_owned());
            }
        }
    }
}

/// A-2 (alt): token errors in the OAuth 2.0 shape (RFC 6749 section 5.2), `application/json`;
/// a token gets the identity platform's extra members.
async fn token_answer(res: Response) -> Response {
    let status = res.status();
    if status.is_success() {
        return json_answer(res, |v| {
            if let Value::Object(m) = v {
                m.insert("refresh_expires_in".to_owned(), json!(0));
                m.insert("not-before-policy".to_owned(), json!(0));
            }
        })
        .await;
    }
    if !is_problem(&res) {
        return res;
    }
    let (parts, body) = res.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    let problem: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let detail = problem.get("detail").and_then(Value::as_str).unwrap_or("").to_owned();
    let error = match status {
        StatusCode::UNAUTHORIZED => "invalid_client",
        StatusCode::BAD_REQUEST => "invalid_request",
        _ => "server_error",
    };
    let mut out = (status, axum::Json(json!({ "error": error, "error_description": detail }))).into_response();
    if let Some(retry) = parts.headers.get(header::RETRY_AFTER) {
        out.headers_mut().insert(header::RETRY_AFTER, retry.clone());
    }
    out
}

/// A-5 (alt): a `401` with `WWW-Authenticate` (RFC 6750): without credentials an empty body,
/// with a bad token a problem document holding only `status` and `title`.
fn unauthorized(had_auth: bool) -> Response {
    if !had_auth {
        let mut out = StatusCode::UNAUTHORIZED.into_response();
        out.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"dcs\""));
        return out;
    }
    let body = serde_json::to_vec(&json!({ "status": 401, "title": "Unauthorized" })).unwrap_or_default();
    let mut out = (StatusCode::UNAUTHORIZED, body).into_response();
    out.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(dcs_model::problem::PROBLEM_JSON));
    out.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"dcs\", error=\"invalid_token\""));
    out
}

/// A-46 (alt): the beta API sends a bad token to an absolute login page, with no body.
fn login_redirect(host: &str, uri: &Uri) -> Response {
    let back: String = url::form_urlencoded::byte_serialize(uri.to_string().as_bytes()).collect();
    let location = format!("http://{host}/idp/login?redirect_uri={back}");
    let mut out = StatusCode::FOUND.into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        out.headers_mut().insert(header::LOCATION, v);
    }
    out
}
