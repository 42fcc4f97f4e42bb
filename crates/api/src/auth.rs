//! Access tokens: fetched by exchanging the API key (section 5.3), cached, and renewed ahead
//! of expiry. Concurrent callers share one fetch: the cache lock is held while fetching.

use std::time::{Duration, Instant};

use dcs_model::{TokenRequest, TokenResponse};
use serde::Serialize;
use tokio::sync::Mutex;
use url::Url;

use crate::error::{Error, Result};
use crate::Secret;

/// Identity platform message for a wrong key id or secret.
const WRONG_KEY: &str = "Feature user does not exist anymore";
/// Identity platform message for a key without the service.
const NO_SERVICE: &str = "Feature service does not exist anymore";

#[derive(Clone)]
struct Cached {
    token: Secret,
    renew_at: Instant,
}

#[derive(Default)]
pub(crate) struct TokenCache {
    slot: Mutex<Option<Cached>>,
}

/// The longest a token is kept before it is fetched again, whatever its `expires_in`.
const MAX_KEPT: Duration = Duration::from_secs(24 * 3600);

/// When to renew a token of `lifetime`: a tenth of its life early, at least 5 s, at most 5 min.
fn renew_margin(lifetime: Duration) -> Duration {
    (lifetime / 10).clamp(Duration::from_secs(5), Duration::from_secs(300)).min(lifetime / 2)
}

/// How long a token answered with `expires_in` (seconds) is used before it is renewed: ahead
/// of its expiry, and at most a day whatever `expires_in` says (a hostile 2^64 - 1 overflows
/// any clock; fetching a token again early is always safe).
pub fn renew_after(expires_in: u64) -> Duration {
    let lifetime = Duration::from_secs(expires_in).min(MAX_KEPT);
    lifetime - renew_margin(lifetime)
}

pub(crate) struct Credentials<'a> {
    pub token_url: &'a Url,
    pub audience: &'a str,
    pub client_id: &'a str,
    pub client_secret: &'a Secret,
    /// How long to wait for the answer and how much of it to read.
    pub limits: &'a crate::answer::Limits,
}

impl TokenCache {
    /// A valid token, fetching a new one if none is cached or the cached one is about to expire.
    pub async fn get(&self, http: &reqwest::Client, creds: &Credentials<'_>) -> Result<Secret> {
        let mut slot = self.slot.lock().await;
        if let Some(c) = slot.as_ref() {
            if Instant::now() < c.renew_at {
                return Ok(c.token.clone());
            }
        }
        let fetched = fetch(http, creds).await?;
        let cached = Cached {
            renew_at: Instant::now() + renew_after(fetched.expires_in),
            token: Secret::new(fetched.access_token),
        };
        *slot = Some(cached.clone());
        Ok(cached.token)
    }

    /// Forgets `rejected` (after a 401), unless another caller already replaced it.
    pub async fn invalidate(&self, rejected: &Secret) {
        let mut slot = self.slot.lock().await;
        if slot.as_ref().is_some_and(|c| &c.token == rejected) {
            *slot = None;
        }
    }
}

/// What a fresh token says, for a "test connection" button: never the token itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct TokenCheck {
    /// `token_type` of the answer (`Bearer`).
    pub token_type: String,
    /// `expires_in` of the answer, in seconds (capped at `u32::MAX`, some 136 years).
    pub expires_in: u32,
    /// The token's `scope` claim split into scopes, when the token is a JWT that carries one
    /// (read for display only, not verified: the service verifies it).
    pub scopes: Option<Vec<String>>,
    /// The token's `sub` claim (the tenant), when readable.
    pub subject: Option<String>,
}

/// Exchanges the key for a new token (bypassing the cache) and reports what it says.
pub(crate) async fn check(http: &reqwest::Client, creds: &Credentials<'_>) -> Result<TokenCheck> {
    Ok(TokenCheck::of(&fetch(http, creds).await?))
}

impl TokenCheck {
    /// What a token answer says; its JWT claims are read, not verified.
    pub fn of(answer: &TokenResponse) -> TokenCheck {
        let claims = jwt_claims(&answer.access_token);
        let claim = |name: &str| claims.as_ref().and_then(|c| c.get(name)).and_then(|v| v.as_str()).map(str::to_owned);
        TokenCheck {
            token_type: answer.token_type.clone(),
            expires_in: u32::try_from(answer.expires_in).unwrap_or(u32::MAX),
            scopes: claim("scope").map(|s| s.split_whitespace().map(str::to_owned).collect()),
            subject: claim("sub"),
        }
    }
}

/// The payload of a JWT, decoded without verification; `None` for anything else.
fn jwt_claims(token: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    use base64::Engine;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    serde_json::from_slice(&bytes).ok()
}

async fn fetch(http: &reqwest::Client, creds: &Credentials<'_>) -> Result<TokenResponse> {
    let url = creds.token_url.as_str().to_owned();
    let limits = creds.limits;
    let body = TokenRequest {
        grant_type: "client_credentials".to_owned(),
        audience: creds.audience.to_owned(),
        client_id: creds.client_id.to_owned(),
        client_secret: creds.client_secret.expose().to_owned(),
    };
    let res = http
        .post(creds.token_url.clone())
        .json(&body)
        .timeout(limits.answer_timeout)
        .send()
        .await
        .map_err(|e| crate::answer::not_answered(creds.token_url, e, limits))?;
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = crate::answer::read(res, creds.token_url, limits).await?;
    if status.is_success() {
        crate::answer::problem_in_success(creds.token_url, status.as_u16(), &headers, &bytes)?;
        return crate::answer::json(creds.token_url, &bytes).map_err(|e| match e {
            Error::Protocol { reason, .. } => Error::Protocol { url, reason: format!("token response: {reason}") },
            other => other,
        });
    }
    if status.is_redirection() {
        return Err(crate::answer::not_followed(creds.token_url, status.as_u16(), &headers));
    }
    // The identity platform's two documented messages may come in any member of the body.
    let text = String::from_utf8_lossy(&bytes);
    if text.contains(WRONG_KEY) {
        return Err(Error::WrongCredentials { message: WRONG_KEY.to_owned() });
    }
    if text.contains(NO_SERVICE) {
        return Err(Error::ServiceNotGranted { message: NO_SERVICE.to_owned() });
    }
    Err(Error::from_answer(status.as_u16(), &bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_claims_of_a_jwt_and_nothing_of_other_tokens() {
        use base64::Engine;
        let enc = |v: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        let jwt = format!("{}.{}.sig", enc(r#"{"alg":"HS256"}"#), enc(r#"{"sub":"t-1","scope":"a b"}"#));
        let claims = jwt_claims(&jwt).unwrap();
        assert_eq!(claims["scope"], "a b");
        assert!(jwt_claims("opaque-token").is_none());
        assert!(jwt_claims("a.!!!.c").is_none());
    }

    #[test]
    fn renews_ahead_of_expiry_but_never_immediately() {
        assert_eq!(renew_margin(Duration::from_secs(3600)), Duration::from_secs(300));
        assert_eq!(renew_margin(Duration::from_secs(120)), Duration::from_secs(12));
        assert_eq!(renew_margin(Duration::from_secs(6)), Duration::from_secs(3));
    }
}
