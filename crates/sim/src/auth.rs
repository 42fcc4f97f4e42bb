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
        iat: now,
        exp: now + lifetime,
        jti: Uuid::new_v4().to_string(),
    };
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(&state.signing_key))
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("could not sign a token: {e}")))
}

/// Who is calling, after the token and the security context have been checked.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// The client whose data this request reads and writes: the key's own client, or the
    /// customer named in the security-context header.
    pub client: Uuid,
    /// `principal/<uuid>` of the API key, for `createdBy` and `modifiedBy`.
    pub principal: String,
    scopes: Vec<String>,
    firmware: bool,
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
        let value = parts
            .headers
            .get(header::AUTHORIZATION)
            .ok_or_else(|| ApiError::unauthorized("no Authorization header; send `Authorization: Bearer <token>`"))?;
        let value = value
            .to_str()
            .map_err(|_| ApiError::unauthorized("the Authorization header is not readable text"))?;
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .ok_or_else(|| ApiError::unauthorized("the Authorization header is not of the form `Bearer <token>`"))?;

        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[dcs_model::SERVICE_AUDIENCE]);
        validation.set_issuer(&[ISSUER]);
        validation.leeway = 0;
        let claims = jsonwebtoken::decode::<Claims>(token, &DecodingKey::from_secret(&state.signing_key), &validation)
            .map_err(|e| {
                use jsonwebtoken::errors::ErrorKind;
                match e.kind() {
                    ErrorKind::ExpiredSignature => ApiError::unauthorized("the access token has expired; request a new one"),
                    ErrorKind::InvalidSignature => ApiError::unauthorized("the access token was not issued by this service"),
                    _ => ApiError::unauthorized("the access token is malformed"),
                }
            })?
            .claims;
        let own = Uuid::parse_str(&claims.sub).map_err(|_| ApiError::unauthorized("the access token is malformed"))?;
        let client = security_context(parts, state, own)?;
        let principal = format!("principal/{}", Uuid::new_v5(&Uuid::NAMESPACE_OID, claims.azp.as_bytes()));
        Ok(Caller {
            client,
            principal,
            scopes: claims.scope.split_whitespace().map(str::to_owned).collect(),
            firmware: claims.fw,
        })
    }
}

/// Checks the reseller header, if any, and returns the client the request acts for.
fn security_context(parts: &Parts, state: &SimState, own: Uuid) -> Result<Uuid, ApiError> {
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
    let row = state.store.client(customer)?;
    match row {
        Some(c) if c.reseller_id == Some(own) => Ok(customer),
        _ => Err(ApiError::forbidden(format!("the caller is not authorized as reseller for customer {customer}"))),
    }
}
