//! The client: configuration, the authenticated request path, and error mapping.

use std::sync::Arc;
use std::time::Instant;

use dcs_model::Problem;
use reqwest::{Method, RequestBuilder, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use url::Url;
use uuid::Uuid;

use crate::auth::{Credentials, TokenCache};
use crate::error::{Error, Result};
use crate::Secret;

/// Everything needed to talk to one service environment as one API key.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `{base_url}` of the reference; may carry a path prefix.
    pub base_url: Url,
    /// `{auth_url}`: the identity platform's address.
    pub auth_url: Url,
    pub audience: String,
    pub client_id: String,
    pub client_secret: Secret,
    /// Act in this customer's environment (reseller security context, section 5.4).
    pub customer: Option<Uuid>,
}

impl ClientConfig {
    pub fn new(base_url: &str, auth_url: &str, client_id: &str, client_secret: Secret) -> Result<ClientConfig> {
        Ok(ClientConfig {
            base_url: parse_base("base URL", base_url)?,
            auth_url: parse_base("auth URL", auth_url)?,
            audience: dcs_model::SERVICE_AUDIENCE.to_owned(),
            client_id: client_id.to_owned(),
            client_secret,
            customer: None,
        })
    }
}

/// Parses a base address and makes sure it ends in `/`, so relative paths join under it.
fn parse_base(field: &str, s: &str) -> Result<Url> {
    let mut url = Url::parse(s).map_err(|e| Error::invalid(field, format!("must be an absolute http(s) URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::invalid(field, "must use http or https"));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

struct Inner {
    http: reqwest::Client,
    config: ClientConfig,
    token_url: Url,
    tokens: TokenCache,
}

/// A cheap-to-clone handle; clones share the connection pool and the token cache.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Client> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("dcs-console/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|source| Error::Network { url: config.base_url.to_string(), source })?;
        let token_url = config
            .auth_url
            .join("api/v3/idp/oidc/token")
            .map_err(|e| Error::invalid("auth URL", e.to_string()))?;
        Ok(Client { inner: Arc::new(Inner { http, config, token_url, tokens: TokenCache::default() }) })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// Fetches (or reuses) an access token: the cheapest way to check a profile works.
    pub async fn check_auth(&self) -> Result<()> {
        self.token().await.map(|_| ())
    }

    async fn token(&self) -> Result<Secret> {
        let c = &self.inner.config;
        let creds = Credentials {
            token_url: &self.inner.token_url,
            audience: &c.audience,
            client_id: &c.client_id,
            client_secret: &c.client_secret,
        };
        self.inner.tokens.get(&self.inner.http, &creds).await
    }

    /// Resolves an API path (written without a leading `/`) under the base URL, so a base URL
    /// with a path prefix keeps its prefix.
    pub(crate) fn url(&self, path: &str) -> Result<Url> {
        self.inner
            .config
            .base_url
            .join(path.trim_start_matches('/'))
            .map_err(|e| Error::invalid("path", e.to_string()))
    }

    /// Sends an authenticated JSON request and decodes the answer. On a 401 the token is
    /// renewed once and the request sent once more.
    pub(crate) async fn get_json<T: DeserializeOwned>(&self, url: Url) -> Result<T> {
        let body = self.send(Method::GET, url.clone(), &no_body).await?;
        serde_json::from_slice(&body).map_err(|e| Error::Protocol { url: url.to_string(), reason: e.to_string() })
    }

    async fn send(&self, method: Method, url: Url, body: &BodyFn<'_>) -> Result<Vec<u8>> {
        // The bearer token goes only to the configured service, never to a host a link names.
        if url.origin() != self.inner.config.base_url.origin() {
            return Err(Error::Protocol {
                url: url.to_string(),
                reason: "the link leads away from the service's base URL; refusing to send the token there".into(),
            });
        }
        let mut renewed = false;
        loop {
            let token = self.token().await?;
            let started = Instant::now();
            let mut req = self.inner.http.request(method.clone(), url.clone()).bearer_auth(token.expose());
            if let Some(customer) = self.inner.config.customer {
                req = req.header("Service-Security-Context", format!("client:uuid:{customer}"));
            }
            req = body(req);
            let res = req.send().await.map_err(|source| Error::Network { url: url.to_string(), source })?;
            let status = res.status();
            tracing::debug!(%method, path = url.path(), status = status.as_u16(), elapsed_ms = started.elapsed().as_millis() as u64, "request");
            let body = res.bytes().await.map_err(|source| Error::Network { url: url.to_string(), source })?;
            if status == StatusCode::UNAUTHORIZED && !renewed {
                self.inner.tokens.invalidate(&token).await;
                renewed = true;
                continue;
            }
            if !status.is_success() {
                return Err(problem_error(status.as_u16(), &body));
            }
            return Ok(body.to_vec());
        }
    }
}

// ---- Requests with bodies and streamed answers (firmware writes, uploads, downloads). ----
//
// Kept apart from the request loop above: JSON bodies go through that loop with a body
// builder it calls on every attempt; streamed uploads and downloads use `send_streamed`.

/// Adds a body (or anything else) to a request; called once per attempt.
pub(crate) type BodyFn<'a> = dyn Fn(RequestBuilder) -> RequestBuilder + Send + Sync + 'a;

fn no_body(req: RequestBuilder) -> RequestBuilder {
    req
}

impl Client {
    /// Sends `body` as JSON with `method` and decodes the JSON answer.
    pub(crate) async fn send_json<B: Serialize + Sync, T: DeserializeOwned>(&self, method: Method, url: Url, body: &B) -> Result<T> {
        let answer = self.send(method, url.clone(), &|req: RequestBuilder| req.json(body)).await?;
        serde_json::from_slice(&answer).map_err(|e| Error::Protocol { url: url.to_string(), reason: e.to_string() })
    }

    /// `DELETE`, expecting no answer body worth reading.
    pub(crate) async fn delete(&self, url: Url) -> Result<()> {
        self.send(Method::DELETE, url, &no_body).await.map(|_| ())
    }

    /// One authenticated request whose successful answer is returned unread, so its body can be
    /// streamed. `body` is called once per attempt. On a 401 the token is renewed and the
    /// request sent once more only when `renew_on_401` is set: a streamed upload body can be
    /// sent only once, and an upload creates something, so it is never repeated.
    pub(crate) async fn send_streamed(
        &self,
        method: Method,
        url: Url,
        renew_on_401: bool,
        mut body: impl FnMut(RequestBuilder) -> RequestBuilder,
    ) -> Result<reqwest::Response> {
        if url.origin() != self.inner.config.base_url.origin() {
            return Err(Error::Protocol {
                url: url.to_string(),
                reason: "the link leads away from the service's base URL; refusing to send the token there".into(),
            });
        }
        let mut renewed = !renew_on_401;
        loop {
            let token = self.token().await?;
            let started = Instant::now();
            let mut req = self.inner.http.request(method.clone(), url.clone()).bearer_auth(token.expose());
            if let Some(customer) = self.inner.config.customer {
                req = req.header("Service-Security-Context", format!("client:uuid:{customer}"));
            }
            let res = body(req).send().await.map_err(|source| Error::Network { url: url.to_string(), source })?;
            let status = res.status();
            tracing::debug!(%method, path = url.path(), status = status.as_u16(), elapsed_ms = started.elapsed().as_millis() as u64, "streamed request");
            if status.is_success() {
                return Ok(res);
            }
            let answer = res.bytes().await.map_err(|source| Error::Network { url: url.to_string(), source })?;
            if status == StatusCode::UNAUTHORIZED {
                self.inner.tokens.invalidate(&token).await;
                if !renewed {
                    renewed = true;
                    continue;
                }
            }
            return Err(problem_error(status.as_u16(), &answer));
        }
    }
}

/// Builds the typed error of a failed answer, from its problem document when it has one.
pub(crate) fn problem_error(status: u16, body: &[u8]) -> Error {
    let problem = serde_json::from_slice::<Problem>(body).unwrap_or_else(|_| {
        let text = String::from_utf8_lossy(body);
        let reason = StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("Error");
        Problem::new(status, reason, text.chars().take(500).collect::<String>())
    });
    Error::Api { status, problem }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_get_a_trailing_slash_and_keep_their_prefix() {
        let cfg = ClientConfig::new("https://h.example/prefix", "https://auth.example", "k", Secret::new("s")).unwrap();
        assert_eq!(cfg.base_url.as_str(), "https://h.example/prefix/");
        let client = Client::new(cfg).unwrap();
        assert_eq!(client.url("firmware/modules").unwrap().as_str(), "https://h.example/prefix/firmware/modules");
        assert!(ClientConfig::new("ftp://x", "https://a", "k", Secret::new("s")).is_err());
        assert!(ClientConfig::new("not a url", "https://a", "k", Secret::new("s")).is_err());
    }
}
