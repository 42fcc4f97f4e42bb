//! The simulator's own control endpoints under `/_sim/` (not part of the service): state
//! inspection, reset, clock speed and faults, and for tests the set-target count of each
//! device (`GET /_sim/target-sets?module=<id>`). No token needed; the simulator listens on
//! loopback unless told otherwise.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::faults::Faults;
use crate::paging::QueryParams;
use crate::routes::uuid_path;
use crate::SimState;

pub(crate) async fn info(State(state): State<Arc<SimState>>) -> Result<Json<Value>, ApiError> {
    let reseller = crate::seed::reseller_id(state.opts.seed);
    let customers: Vec<Value> = state
        .store
        .clients()?
        .into_iter()
        .filter(|c| c.reseller_id == Some(reseller))
        .map(|c| json!({ "id": c.id, "name": c.name }))
        .collect();
    Ok(Json(json!({
        "seed": state.opts.seed,
        "variant": state.opts.variant.as_str(),
        "speed": state.clock.speed(),
        "now": crate::store::ts(state.clock.now()),
        "devicesPerClient": state.opts.devices_per_client,
        "demoClientId": crate::seed::demo_reseller_key(state.opts.seed).key_id,
        "faults": state.faults.get(),
        "tokensIssued": state.tokens_issued.load(std::sync::atomic::Ordering::Relaxed),
        "resellerId": reseller,
        "customers": customers,
        "dueSteps": state.store.due_count(state.clock.now())?,
    })))
}

pub(crate) async fn reset(State(state): State<Arc<SimState>>) -> Result<StatusCode, ApiError> {
    let st = state.clone();
    tokio::task::spawn_blocking(move || st.reset())
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn set_clock(
    State(state): State<Arc<SimState>>,
    Json(body): Json<Value>,
) -> Result<Json<Value>, ApiError> {
    let speed = body.get("speed").and_then(Value::as_f64).unwrap_or(f64::NAN);
    state.clock.set_speed(speed).map_err(|rule| ApiError::invalid("speed", rule))?;
    Ok(Json(json!({ "speed": speed, "now": crate::store::ts(state.clock.now()) })))
}

pub(crate) async fn get_faults(State(state): State<Arc<SimState>>) -> Json<Faults> {
    Json(state.faults.get())
}

pub(crate) async fn set_faults(
    State(state): State<Arc<SimState>>,
    body: axum::body::Bytes,
) -> Result<Json<Faults>, ApiError> {
    let faults: Faults = serde_json::from_slice(&body).map_err(|e| ApiError::invalid("body", e.to_string()))?;
    faults.check().map_err(|e| {
        let (name, reason) = e.split_once(": ").unwrap_or(("body", &e));
        ApiError::invalid(name, reason)
    })?;
    state.faults.set(faults.clone());
    Ok(Json(faults))
}

pub(crate) async fn step(State(state): State<Arc<SimState>>) -> Result<Json<Value>, ApiError> {
    let st = state.clone();
    let changed = tokio::task::spawn_blocking(move || -> Result<usize, crate::store::StoreError> {
        Ok(crate::engine::step(&st)? + crate::engine::step_downlinks(&st)?)
    })
    .await
    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    Ok(Json(json!({ "changed": changed })))
}

/// `GET /_sim/target-sets?module=<id>`: `{"<deviceId>": n}` for every firmware state of the
/// module (any client), n the set-target calls that reached it, a reset of the target and the
/// same target again included; `{}` for an unknown module. A test aid (a rollout must set each
/// device's target exactly once), in no answer of the API; the data file has it as
/// `firmware_states.target_sets`.
pub(crate) async fn target_sets(
    State(state): State<Arc<SimState>>,
    RawQuery(raw): RawQuery,
) -> Result<Json<std::collections::BTreeMap<uuid::Uuid, u64>>, ApiError> {
    let query = QueryParams::from_query(raw.as_deref());
    let module = query.one("module")?.ok_or_else(|| ApiError::invalid("module", "is required"))?;
    Ok(Json(state.store.target_sets(uuid_path("module", module)?)?))
}
