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

/// What a verified access token says of its API key: the same for every request that sends it.
#[derive(Debug)]
pub(crate) struct TokenKey {
    /// The API key's own client (`sub`).
    own: Uuid,
    /// The API key the token was issued to (`azp`).
    key_id: String,
    /// `principal/<uuid>` of the API key, for `createdBy` and `modifiedBy`.
    principal: String,
    scopes: Vec<String>,
    firmware: bool,
    /// The key's customer-management add-on (section 5.4 rule 4, A-72).
    customer_management: bool,
    /// When the token expires (`exp`, seconds since the epoch).
    expires: u64,
}

/// Who is calling, after the token and the security context have been checked.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// The client whose data this request reads and writes: the key's own client, or the
    /// customer named in the security-context header or the deprecated `x-client-id` header.
    pub client: Uuid,
    key: Arc<TokenKey>,
}

/// What a request acting for a customer is refused with when the key lacks the add-on.
pub(crate) fn no_customer_management(customer: Uuid) -> ApiError {
    ApiError::forbidden(format!(
        "the API key has no customer-management add-on, which acting for customer {customer} needs (section 5.4); \
         request the add-on for the account"
    ))
}

impl Caller {
    /// The API key's own client, whatever the request acts for.
    pub fn own(&self) -> Uuid {
        self.key.own
    }

    /// The API key the token was issued to (`azp`).
    pub fn key_id(&self) -> &str {
        &self.key.key_id
    }

    /// `principal/<uuid>` of the API key, for `createdBy` and `modifiedBy`.
    pub fn principal(&self) -> &str {
        &self.key.principal
    }

    /// Whether the key has the customer-management add-on (section 5.4 rule 4, A-72).
    pub fn customer_management(&self) -> bool {
        self.key.customer_management
    }

    /// Refuses with 403 unless the token carries `scope`.
    pub fn require(&self, scope: &str) -> Result<(), ApiError> {
        if self.key.scopes.iter().any(|s| s == scope) {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!("the token lacks the scope `{scope}` this operation requires")))
        }
    }

    /// Refuses with 403 unless the key has the firmware authorization (section 5.2).
    pub fn require_firmware(&self, scope: &str) -> Result<(), ApiError> {
        if !self.key.firmware {
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

        let key = state.tokens.verify(token, &state.signing_key).map_err(|e| refuse(e.detail()))?;
        let client = acting_client(parts, state, key.own, &key.key_id, key.customer_management)?;
        Ok(Caller { client, key })
    }
}

/// Why a token is refused, in the words of the answer's `detail`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenRefused {
    Expired,
    NotOurs,
    Malformed,
}

impl TokenRefused {
    fn detail(self) -> &'static str {
        match self {
            TokenRefused::Expired => "the access token has expired; request a new one",
            TokenRefused::NotOurs => "the access token was not issued by this service",
            TokenRefused::Malformed => "the access token is malformed",
        }
    }
}

/// The access tokens this simulator has verified, each with what it says of its key. A client
/// sends one token with every request until it expires (a full scan of a million states: 20,000
/// requests), and checking its signature and reading its claims each time was 7 % of a
/// states page's time. Only a token whose signature and claims were checked is kept; its expiry
/// is checked again on every use, as the first check did. At most [`VerifiedTokens::KEPT`]
/// are kept: a full set starts again empty (tokens that come back are verified again).
#[derive(Default)]
pub(crate) struct VerifiedTokens(std::sync::Mutex<std::collections::HashMap<Box<str>, Arc<TokenKey>>>);

impl VerifiedTokens {
    pub(crate) const KEPT: usize = 4096;

    /// What `token` says of its key, if this simulator signed it with `signing_key`, its claims
    /// are ours and it has not expired (now, by this computer's clock, as the token's `exp`).
    pub(crate) fn verify(&self, token: &str, signing_key: &[u8]) -> Result<Arc<TokenKey>, TokenRefused> {
        self.verify_at(token, signing_key, jsonwebtoken::get_current_timestamp())
    }

    /// [`VerifiedTokens::verify`] at `now` (seconds since the epoch) for the expiry of a kept
    /// token (one not kept yet is checked by `jsonwebtoken`, at its own now).
    fn verify_at(&self, token: &str, signing_key: &[u8], now: u64) -> Result<Arc<TokenKey>, TokenRefused> {
        let known = self.0.lock().unwrap_or_else(|e| e.into_inner()).get(token).cloned();
        let key = match known {
            Some(key) => key,
            None => {
                let key = Arc::new(decode(token, signing_key)?);
                let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() >= Self::KEPT {
                    kept.clear();
                }
                kept.insert(token.into(), key.clone());
                key
            }
        };
        // As `jsonwebtoken` checks `exp` with no leeway: expired once `exp` is past.
        if key.expires < now {
            return Err(TokenRefused::Expired);
        }
        Ok(key)
    }

    /// How many tokens are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

/// Checks `token`'s signature and claims (issuer, audience, expiry) and reads what it says of
/// its key.
fn decode(token: &str, signing_key: &[u8]) -> Result<TokenKey, TokenRefused> {
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_audience(&[dcs_model::SERVICE_AUDIENCE]);
    validation.set_issuer(&[ISSUER]);
    validation.leeway = 0;
    let claims = jsonwebtoken::decode::<Claims>(token, &DecodingKey::from_secret(signing_key), &validation)
        .map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            match e.kind() {
                ErrorKind::ExpiredSignature => TokenRefused::Expired,
                ErrorKind::InvalidSignature => TokenRefused::NotOurs,
                _ => TokenRefused::Malformed,
            }
        })?
        .claims;
    let own = Uuid::parse_str(&claims.sub).map_err(|_| TokenRefused::Malformed)?;
    Ok(TokenKey {
        own,
        principal: format!("principal/{}", Uuid::new_v5(&Uuid::NAMESPACE_OID, claims.azp.as_bytes())),
        key_id: claims.azp,
        scopes: claims.scope.split_whitespace().map(str::to_owned).collect(),
        firmware: claims.fw,
        customer_management: claims.cm,
        expires: claims.exp,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn token(key: &[u8], azp: &str, exp: u64) -> String {
        let claims = Claims {
            iss: ISSUER.to_owned(),
            sub: Uuid::from_u128(7).to_string(),
            aud: dcs_model::SERVICE_AUDIENCE.to_owned(),
            azp: azp.to_owned(),
            scope: "device.read firmware.read".to_owned(),
            fw: true,
            cm: false,
            iat: 0,
            exp,
            jti: Uuid::new_v4().to_string(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(key)).unwrap()
    }

    #[test]
    fn a_token_is_verified_once_and_its_expiry_checked_on_every_use() {
        let tokens = VerifiedTokens::default();
        let exp = jsonwebtoken::get_current_timestamp() + 600;
        let t = token(b"ours", "key-1", exp);
        let key = tokens.verify(&t, b"ours").unwrap();
        assert_eq!((key.own, key.key_id.as_str(), key.firmware), (Uuid::from_u128(7), "key-1", true));
        assert_eq!(key.scopes, ["device.read", "firmware.read"]);
        assert_eq!(tokens.len(), 1);
        // The same token again is the same verified key, not a second entry.
        assert!(Arc::ptr_eq(&key, &tokens.verify(&t, b"ours").unwrap()));
        assert_eq!(tokens.len(), 1);
        // Kept, it still expires: valid through its `exp`, expired after it.
        assert!(tokens.verify_at(&t, b"ours", exp).is_ok());
        assert_eq!(tokens.verify_at(&t, b"ours", exp + 1).unwrap_err(), TokenRefused::Expired);
    }

    #[test]
    fn only_tokens_that_verify_are_kept_and_never_more_than_the_limit() {
        let tokens = VerifiedTokens::default();
        let exp = jsonwebtoken::get_current_timestamp() + 600;
        assert_eq!(tokens.verify(&token(b"theirs", "k", exp), b"ours").unwrap_err(), TokenRefused::NotOurs);
        assert_eq!(tokens.verify("not.a.jwt", b"ours").unwrap_err(), TokenRefused::Malformed);
        assert_eq!(tokens.verify(&token(b"ours", "k", 1), b"ours").unwrap_err(), TokenRefused::Expired);
        assert_eq!(tokens.len(), 0);
        // A token of ours refused by another simulator's key, even once it is kept here.
        let t = token(b"ours", "k", exp);
        tokens.verify(&t, b"ours").unwrap();
        let other = VerifiedTokens::default();
        assert_eq!(other.verify(&t, b"another").unwrap_err(), TokenRefused::NotOurs);
        for n in 0..VerifiedTokens::KEPT + 10 {
            tokens.verify(&token(b"ours", &format!("key-{n}"), exp), b"ours").unwrap();
            assert!(tokens.len() <= VerifiedTokens::KEPT);
        }
    }
}
