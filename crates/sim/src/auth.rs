//! API keys, token issue and verification, scopes and the reseller security context
//! (reference sections 5.1 to 5.5).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::ApiError;
use crate::SimState;

/// Header a reseller sends to act in a customer's environment (section 5.4).
pub const SECURITY_CONTEXT: &str = "service-security-context";
/// Header of the deprecated sub-customer mode (section 4.5).
pub const X_CLIENT_ID: &str = dcs_model::beta::X_CLIENT_ID;
/// Issuer written into the simulator's tokens.
const ISSUER: &str = "dcs-simulator";

/// An API key of the demo data set. Debug never prints the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct DemoKey {
    pub key_id: String,
    pub secret: String,
    pub client_id: Uuid,
}

impl std::fmt::Debug for DemoKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoKey")
            .field("key_id", &self.key_id)
            .field("secret", &"***")
            .field("client_id", &self.client_id)
            .finish()
    }
}

/// Claims of the simulator's JWT access tokens.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Claims {
    pub iss: String,
    /// The client (tenant) the key belongs to.
    pub sub: String,
    pub aud: String,
    /// The API key the token was issued to.
    pub azp: String,
    pub scope: String,
    /// Whether the key carries the firmware authorization of section 5.2.
    pub fw: bool,
    /// Whether the key carries the customer-management add-on (section 5.4 rule 4, A-72).
    #[serde(default)]
    pub cm: bool,
    pub iat: u64,
    pub exp: u64,
    pub jti: String,
}

pub(crate) fn issue_token(
    state: &SimState,
    key: &crate::store::ApiKeyRow,
    now: u64,
    lifetime: u64,
) -> Result<String, ApiError> {
    let claims = Claims {
        iss: ISSUER.to_owned(),
        sub: key.client_id.to_string(),
        aud: dcs_model::SERVICE_AUDIENCE.to_owned(),
        azp: key.key_id.clone(),
        scope: key.scopes.join(" "),
        fw: key.firmware_authorized,
        cm: key.customer_management,
        iat: now,
        exp: now.saturating_add(lifetime),
        jti: Uuid::new_v4().to_string(),
    };
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(&state.signing_key))
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("could not sign a token: {e}")))
}

/// Who is calling, after the token and the security context have been checked.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// The client whose data this request reads and writes: the key's own client, or the
    /// customer named in the security-context header or the deprecated `x-client-id` header.
    pub client: Uuid,
    /// The API key's own client, whatever the request acts for.
    pub own: Uuid,
    /// The API key the token was issued to (`azp`).
    pub key_id: String,
    /// `principal/<uuid>` of the API key, for `createdBy` and `modifiedBy`.
    pub principal: String,
    scopes: Vec<String>,
    firmware: bool,
    /// The key's customer-management add-on (section 5.4 rule 4, A-72).
    pub customer_management: bool,
}

/// What a request acting for a customer is refused with when the key lacks the add-on.
pub(crate) fn no_customer_management(customer: Uuid) -> ApiError {
    ApiError::forbidden(format!(
        "the API key has no customer-management add-on, which acting for customer {customer} needs (section 5.4); \
         request the add-on for the account"
    ))
}

impl Caller {
    /// Refuses with 403 unless the token carries `scope`.
    pub fn require(&self, scope: &str) -> Result<(), ApiError> {
        if self.scopes.iter().any(|s| s == scope) {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!("the token lacks the scope `{scope}` this operation requires")))
        }
    }

    /// Refuses with 403 unless the key has the firmware authorization (section 5.2).
    pub fn require_firmware(&self, scope: &str) -> Result<(), ApiError> {
        if !self.firmware {
            return Err(ApiError::forbidden(
                "the API key has no firmware authorization; request it from the operator (section 5.2)",
            ));
        }
        self.require(scope)
    }
}

impl FromRequestParts<Arc<SimState>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<SimState>) -> Result<Self, Self::Rejection> {
        // The beta API (`/api/...`) answers a bad token with a 302 to the token endpoint
        // (section 4.5, simulator assumption); the new API with a 401 (section 7).
        let beta = is_beta_path(parts.uri.path());
        let refuse = |detail: &str| {
            if beta {
                ApiError::found(TOKEN_PATH, detail)
            } else {
                ApiError::unauthorized(detail)
            }
        };
        let value = parts
            .headers
            .get(header::AUTHORIZATION)
            .ok_or_else(|| refuse("no Authorization header; send `Authorization: Bearer <token>`"))?;
        let value = value.to_str().map_err(|_| refuse("the Authorization header is not readable text"))?;
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .ok_or_else(|| refuse("the Authorization header is not of the form `Bearer <token>`"))?;

        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[dcs_model::SERVICE_AUDIENCE]);
        validation.set_issuer(&[ISSUER]);
        validation.leeway = 0;
        let claims = jsonwebtoken::decode::<Claims>(token, &DecodingKey::from_secret(&state.signing_key), &validation)
            .map_err(|e| {
                use jsonwebtoken::errors::ErrorKind;
                match e.kind() {
                    ErrorKind::ExpiredSignature => refuse("the access token has expired; request a new one"),
                    ErrorKind::InvalidSignature => refuse("the access token was not issued by this service"),
                    _ => refuse("the access token is malformed"),
                }
            })?
            .claims;
        let own = Uuid::parse_str(&claims.sub).map_err(|_| refuse("the access token is malformed"))?;
        let client = acting_client(parts, state, own, &claims.azp, claims.cm)?;
        let principal = format!("principal/{}", Uuid::new_v5(&Uuid::NAMESPACE_OID, claims.azp.as_bytes()));
        Ok(Caller {
            client,
            own,
            key_id: claims.azp,
            principal,
            scopes: claims.scope.split_whitespace().map(str::to_owned).collect(),
            firmware: claims.fw,
            customer_management: claims.cm,
        })
    }
}

/// Path of the token endpoint, where the beta API redirects a caller without a valid token.
pub const TOKEN_PATH: &str = "/api/v3/idp/oidc/token";

/// Whether `path` belongs to the deprecated beta API (`/api/...`, section 9).
pub(crate) fn is_beta_path(path: &str) -> bool {
    path.starts_with("/api/")
}

/// The client the request acts for: the key's own, or a customer named by the reseller
/// header (section 5.4) or by the deprecated `x-client-id` header (section 4.5). At most one
/// of the two may be sent.
fn acting_client(parts: &Parts, state: &SimState, own: Uuid, key_id: &str, add_on: bool) -> Result<Uuid, ApiError> {
    let context = parts.headers.contains_key(SECURITY_CONTEXT);
    let legacy = parts.headers.contains_key(X_CLIENT_ID);
    match (context, legacy) {
        (true, true) => Err(ApiError::invalid(
            X_CLIENT_ID,
            "send either `x-client-id` (deprecated) or `Service-Security-Context`, not both",
        )),
        (false, true) => legacy_client(parts, state, own, key_id, add_on),
        _ => security_context(parts, state, own, add_on),
    }
}

/// Checks the deprecated `x-client-id` header: the customer must be one the API key made the
/// context-switch call for.
fn legacy_client(parts: &Parts, state: &SimState, own: Uuid, key_id: &str, add_on: bool) -> Result<Uuid, ApiError> {
    let mut values = parts.headers.get_all(X_CLIENT_ID).iter();
    let Some(value) = values.next() else { return Ok(own) };
    if values.next().is_some() {
        return Err(ApiError::invalid(X_CLIENT_ID, "only one x-client-id header per request is supported"));
    }
    let customer = value
        .to_str()
        .ok()
        .and_then(|v| Uuid::parse_str(v.trim()).ok())
        .ok_or_else(|| ApiError::invalid(X_CLIENT_ID, "must be the customer's UUID"))?;
    if !add_on {
        return Err(no_customer_management(customer));
    }
    if state.store.has_context_switch(key_id, own, customer)? {
        Ok(customer)
    } else {
        Err(ApiError::forbidden(format!(
            "the API key has no access to customer {customer} through x-client-id; make the context switch first \
             (GET /api/v1/lifecycle/clients/{customer}/context-switch), or use Service-Security-Context"
        )))
    }
}
/// Checks the reseller header, if any, and returns the client the request acts for.
fn security_context(parts: &Parts, state: &SimState, own: Uuid, add_on: bool) -> Result<Uuid, ApiError> {
    let mut values = parts.headers.get_all(SECURITY_CONTEXT).iter();
    let Some(value) = values.next() else { return Ok(own) };
    if values.next().is_some() {
        return Err(ApiError::invalid(
            "Service-Security-Context",
            "only one security-context header per request is supported",
        ));
    }
    let customer = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("client:uuid:"))
        .and_then(|id| Uuid::parse_str(id).ok())
        .ok_or_else(|| {
            ApiError::invalid("Service-Security-Context", "must be of the form `client:uuid:<customer uuid>`")
        })?;
    // The header is well formed: acting for anyone needs the add-on first (section 5.4 rule 4).
    if !add_on {
        return Err(no_customer_management(customer));
    }
    let row = state.store.client(customer)?;
    match row {
        Some(c) if c.reseller_id == Some(own) => Ok(customer),
        _ => Err(ApiError::forbidden(format!("the caller is not authorized as reseller for customer {customer}"))),
    }
}
