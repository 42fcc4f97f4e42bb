//! The HTTP surface: one module per area of the reference.

mod admin;
mod auth;
mod beta;
mod bindings;
mod downlinks;
mod firmware;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use axum::Router;

use serde_json::Value;
use uuid::Uuid;

use crate::error::{render_problems, ApiError};
use crate::paging::{request_base, QueryParams};
use crate::SimState;

pub(crate) fn router(state: Arc<SimState>) -> Router {
    Router::new()
        .route("/api/v3/idp/oidc/token", post(auth::token))
        .route("/api/devices", get(beta::list_devices))
        .route("/api/actuator/downlinks", post(downlinks::create_beta_actuator))
        .route("/api/v1/lifecycle/clients/{client_id}/context-switch", get(beta::context_switch))
        .route("/firmware/modules", get(firmware::list_modules))
        .route("/firmware/modules/{module_id}", get(firmware::get_module))
        .route("/firmware/packages", get(firmware::list_packages).post(firmware::create_package))
        .route(
            "/firmware/packages/{package_id}",
            get(firmware::get_package).put(firmware::update_package).delete(firmware::delete_package),
        )
        .route(
            "/firmware/packages/{package_id}/firmware-file",
            get(firmware::download_file).post(firmware::upload_file).layer(DefaultBodyLimit::disable()),
        )
        .route(
            "/firmware/packages/{package_id}/release-notes-file",
            get(firmware::download_file)
                .post(firmware::upload_file)
                .delete(firmware::delete_release_notes)
                .layer(DefaultBodyLimit::disable()),
        )
        .route("/firmware/states", get(firmware::list_states))
        .route("/firmware/states/{device_id}/{module_id}", put(firmware::set_target))
        .route("/lora/bindings", get(bindings::list::<bindings::Lora>).post(bindings::create::<bindings::Lora>))
        .route(
            "/lora/bindings/{binding_id}",
            get(bindings::get::<bindings::Lora>)
                .put(bindings::update::<bindings::Lora>)
                .delete(bindings::delete::<bindings::Lora>),
        )
        .route("/http/bindings", get(bindings::list::<bindings::Http>).post(bindings::create::<bindings::Http>))
        .route(
            "/http/bindings/{binding_id}",
            get(bindings::get::<bindings::Http>)
                .put(bindings::update::<bindings::Http>)
                .delete(bindings::delete::<bindings::Http>),
        )
        .route("/mqtt/bindings", get(bindings::list::<bindings::Mqtt>).post(bindings::create::<bindings::Mqtt>))
        .route(
            "/mqtt/bindings/{binding_id}",
            get(bindings::get::<bindings::Mqtt>)
                .put(bindings::update::<bindings::Mqtt>)
                .delete(bindings::delete::<bindings::Mqtt>),
        )
        .route("/downlinks", get(downlinks::list_actuator).post(downlinks::create_actuator))
        .route("/downlinks/{id}", get(downlinks::get_actuator).delete(downlinks::cancel_actuator))
        .merge(connection_downlinks())
        // Faults reach the service's operations, never the simulator's own control endpoints.
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), crate::faults::inject))
        .route("/_sim/info", get(admin::info))
        .route("/_sim/reset", post(admin::reset))
        .route("/_sim/clock", put(admin::set_clock))
        .route("/_sim/faults", get(admin::get_faults).put(admin::set_faults))
        .route("/_sim/step", post(admin::step))
        .route("/_sim/target-sets", get(admin::target_sets))
        .route("/openapi.yaml", get(openapi))
        .fallback(|| async { ApiError::not_found("no such operation in this API") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "this path does not accept that method")
        })
        .layer(axum::middleware::from_fn(render_problems))
        .layer(axum::middleware::from_fn(crate::limits::enforce))
        .with_state(state)
}

/// The OpenAPI 3.1 document of the API as the simulator implements it.
pub const OPENAPI_YAML: &str = include_str!("../../openapi.yaml");

/// `GET /openapi.yaml`: the document, without a token and never faulted.
async fn openapi() -> impl axum::response::IntoResponse {
    ([(axum::http::header::CONTENT_TYPE, "application/yaml")], OPENAPI_YAML)
}

/// `/{kind}/downlinks` for each connection-specific family.
fn connection_downlinks() -> Router<Arc<SimState>> {
    let mut r = Router::new();
    for kind in dcs_model::downlinks::CONNECTION_KINDS {
        r = r
            .route(&format!("/{kind}/downlinks"), get(downlinks::list_connection).post(downlinks::create_connection))
            .route(
                &format!("/{kind}/downlinks/{{id}}"),
                get(downlinks::get_connection).delete(downlinks::cancel_connection),
            );
    }
    r
}

/// What every list handler needs from the request besides the caller: its query and base.
pub(crate) struct ListRequest {
    pub query: QueryParams,
    pub base: String,
}

impl<S: Send + Sync> FromRequestParts<S> for ListRequest {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        // Mounted under a prefix (a gateway, or a nested router), links keep the prefix.
        let original = parts.extensions.get::<axum::extract::OriginalUri>().map(|u| u.path().to_owned());
        let prefix = original
            .as_deref()
            .and_then(|o| o.strip_suffix(parts.uri.path()))
            .unwrap_or("")
            .trim_end_matches('/')
            .to_owned();
        // The alt variant (set by `crate::alt`) pages by 100 and links relatively.
        let variant = parts.extensions.get::<crate::Variant>().copied().unwrap_or_default();
        let base = if variant.is_alt() { prefix } else { format!("{}{prefix}", request_base(parts)) };
        Ok(ListRequest { query: QueryParams::from_query(parts.uri.query()).for_variant(variant), base })
    }
}

/// The field names of a sort allow-list.
pub(crate) fn names(columns: &[(&'static str, &'static str)]) -> Vec<&'static str> {
    columns.iter().map(|(n, _)| *n).collect()
}

/// A path segment that must be a UUID; a 400 naming `name` otherwise.
pub(crate) fn uuid_path(name: &str, value: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(value).map_err(|_| ApiError::invalid(name, "must be a UUID"))
}

/// Refuses with a 400 naming `Content-Type` unless the request says `Content-Type:
/// application/json` (media parameters such as `; charset=utf-8` and case ignored), as the
/// reference asks of the token request (5.3), the context switch and the beta actuator POST
/// (4.5). Assumptions.
pub(crate) fn require_json_content_type(headers: &axum::http::HeaderMap) -> Result<(), ApiError> {
    let mut values = headers.get_all(axum::http::header::CONTENT_TYPE).iter();
    let media = match (values.next(), values.next()) {
        (Some(v), None) => v.to_str().ok().and_then(|v| v.split(';').next()).map(str::trim),
        _ => None,
    };
    if media.is_some_and(|m| m.eq_ignore_ascii_case("application/json")) {
        Ok(())
    } else {
        Err(ApiError::invalid("Content-Type", "this operation requires `Content-Type: application/json`"))
    }
}

/// A request body that must be a JSON object.
pub(crate) fn json_body(body: &[u8]) -> Result<serde_json::Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(ApiError::invalid("body", "must be a JSON object")),
    }
}

/// An optional string member of a body; `null` counts as absent.
pub(crate) fn str_field<'a>(body: &'a serde_json::Map<String, Value>, name: &str) -> Result<Option<&'a str>, ApiError> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::invalid(name, "must be a string")),
    }
}
