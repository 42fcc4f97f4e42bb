//! The identity platform's token exchange (reference section 5.3).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use dcs_model::{TokenResponse, SERVICE_AUDIENCE};
use serde_json::Value;

use crate::auth::issue_token;
use crate::error::ApiError;
use crate::SimState;

/// Message of the identity platform for an unknown key id or a wrong secret.
pub const WRONG_KEY: &str = "Feature user does not exist anymore";
/// Message of the identity platform for a key the service was not added to.
pub const NO_SERVICE: &str = "Feature service does not exist anymore";

pub(crate) async fn token(
    State(state): State<Arc<SimState>>,
    faults: Option<axum::Extension<crate::faults::RequestFaults>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Result<Json<TokenResponse>, ApiError> {
    crate::routes::require_json_content_type(&headers)?;
    let body: Value = serde_json::from_slice(&body).map_err(|_| {
        ApiError::invalid("body", "must be a JSON object with grant_type, audience, client_id, client_secret")
    })?;
    let field = |name: &str| -> Result<String, ApiError> {
        match body.get(name) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
            Some(_) => Err(ApiError::invalid(name, "must be a non-empty string")),
            None => Err(ApiError::invalid(name, "is required")),
        }
    };
    let grant_type = field("grant_type")?;
    let audience = field("audience")?;
    let client_id = field("client_id")?;
    let client_secret = field("client_secret")?;
    if grant_type != "client_credentials" {
        return Err(ApiError::invalid("grant_type", "must be `client_credentials`"));
    }
    if audience != SERVICE_AUDIENCE {
        return Err(ApiError::invalid("audience", format!("must be the service's application id {SERVICE_AUDIENCE}")));
    }
    let key = state.store.api_key(&client_id)?;
    let key = match key {
        Some(k) if constant_time_eq(k.secret.as_bytes(), client_secret.as_bytes()) => k,
        _ => return Err(ApiError::unauthorized(WRONG_KEY)),
    };
    if !key.service_granted {
        return Err(ApiError::unauthorized(NO_SERVICE));
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    // A short lifetime for this one token, if the request asks for it (fault injection).
    let lifetime = faults.and_then(|f| f.token_lifetime).unwrap_or(state.opts.token_lifetime.as_secs());
    let access_token = issue_token(&state, &key, now, lifetime)?;
    state.tokens_issued.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(Json(TokenResponse { access_token, token_type: "Bearer".to_owned(), expires_in: lifetime }))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
