//! The deprecated beta API (reference section 4.5): the paged device listing and the
//! context-switch call of the deprecated sub-customer mode (`x-client-id`, checked in
//! [`crate::auth`]). `POST /api/actuator/downlinks` belongs with the downlinks and is not here.
//!
//! A missing, invalid or expired token on these paths is a 302 to the token endpoint, not a
//! 401; the [`Caller`] extractor decides that from the path.

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use dcs_model::beta::{params, DEVICE_V1_MEDIA_TYPE};
use dcs_model::{BetaDevice, BetaDevicePage, BetaSortOrder, ContextSwitch};
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::paging::QueryParams;
use crate::store::devices::{DeviceRow, BETA_SORT};
use crate::SimState;

/// Largest `pageSize` (the reference does not show one; the simulator's choice, as A-13).
pub const MAX_PAGE_SIZE: u64 = 1000;
/// Largest `currentPage`: the beta API's page numbers are 32-bit signed integers.
pub const MAX_PAGE: u64 = i32::MAX as u64;

/// Whether an `Accept` header lists `media` (parameters such as `;charset=` and case ignored).
/// Wildcards do not count: the beta API wants its media type named.
fn accepts(headers: &HeaderMap, media: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|item| item.split(';').next().unwrap_or("").trim())
        .any(|item| item.eq_ignore_ascii_case(media))
}

pub(crate) fn require_accept(headers: &HeaderMap, media: &str) -> Result<(), ApiError> {
    if accepts(headers, media) {
        Ok(())
    } else {
        Err(ApiError::invalid("Accept", format!("this operation requires `Accept: {media}`")))
    }
}

/// An integer query parameter within `min..=max`, or its default.
fn int_param(query: &QueryParams, name: &str, default: u64, min: u64, max: u64) -> Result<u64, ApiError> {
    match query.one(name)? {
        None => Ok(default),
        Some(v) => match v.trim().parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(ApiError::invalid(name, format!("must be an integer from {min} to {max}"))),
        },
    }
}

/// A device of the listing. Its network identifier (not in the reference's list of members) is
/// a member of its own: `imei` or `devEui`, bare.
fn beta_device(d: DeviceRow) -> BetaDevice {
    let mut extra = serde_json::Map::new();
    if let Some(eui) = &d.deveui {
        extra.insert("devEui".to_owned(), serde_json::Value::String(eui.clone()));
    } else if let Some(imei) = &d.imei {
        extra.insert("imei".to_owned(), serde_json::Value::String(imei.clone()));
    }
    BetaDevice {
        uuid: d.id,
        name: d.name,
        description: Some(d.description),
        metadata: d.metadata,
        device_specification_uuid: d.device_specification_id,
        barcode: Some(d.barcode),
        extra,
    }
}

/// `GET /api/devices`: the caller's devices by page number, with totals.
pub(crate) async fn list_devices(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    require_accept(&headers, DEVICE_V1_MEDIA_TYPE)?;
    caller.require("device.read")?;
    let query = QueryParams::from_query(raw.as_deref());
    let page = int_param(&query, params::CURRENT_PAGE, 0, 0, MAX_PAGE)?;
    let size = int_param(&query, params::PAGE_SIZE, params::DEFAULT_PAGE_SIZE.into(), 1, MAX_PAGE_SIZE)?;
    let search = query.one(params::SEARCH)?.filter(|s| !s.is_empty());
    let sort_by = query.one(params::SORT_BY)?.unwrap_or(params::DEFAULT_SORT_BY);
    let column = BETA_SORT.iter().find(|(name, _)| *name == sort_by).map(|(_, c)| *c).ok_or_else(|| {
        let allowed: Vec<&str> = BETA_SORT.iter().map(|(n, _)| *n).collect();
        ApiError::invalid(params::SORT_BY, format!("unknown field `{sort_by}`; allowed: {}", allowed.join(", ")))
    })?;
    let order = query.one(params::SORT_ORDER)?.unwrap_or(params::DEFAULT_SORT_ORDER);
    let ascending = if order.eq_ignore_ascii_case("ASC") {
        true
    } else if order.eq_ignore_ascii_case("DESC") {
        false
    } else {
        return Err(ApiError::invalid(params::SORT_ORDER, "must be ASC or DESC"));
    };

    let (rows, total) = state.store.beta_devices(caller.client, search, column, ascending, page, size)?;
    let content = rows.into_iter().map(beta_device).collect();
    let body = BetaDevicePage::new(content, total, page, size, vec![BetaSortOrder::new(sort_by, ascending)]);
    let mut res = Json(body).into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(DEVICE_V1_MEDIA_TYPE));
    Ok(res)
}

/// `GET /api/v1/lifecycle/clients/{clientId}/context-switch`: lets the calling API key act for
/// one of its client's customers with `x-client-id`. Idempotent.
pub(crate) async fn context_switch(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    headers: HeaderMap,
    Path(client_id): Path<String>,
) -> Result<Json<ContextSwitch>, ApiError> {
    require_accept(&headers, "application/json")?;
    // The reference lists both headers on this GET, though it has no body.
    crate::routes::require_json_content_type(&headers)?;
    let customer = Uuid::parse_str(&client_id).map_err(|_| ApiError::invalid("clientId", "must be a UUID"))?;
    if !caller.customer_management() {
        return Err(crate::auth::no_customer_management(customer));
    }
    // Always on behalf of the key's own client, whatever x-client-id says.
    match state.store.client(customer)? {
        Some(c) if c.reseller_id == Some(caller.own()) => {}
        _ => {
            return Err(ApiError::forbidden(format!("the API key's client is not the reseller of customer {customer}")))
        }
    }
    state.store.grant_context_switch(caller.key_id(), customer, state.clock.now())?;
    Ok(Json(ContextSwitch { client_id: customer, granted: true }))
}
