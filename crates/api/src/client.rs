//! The client: configuration, the authenticated request path, and error mapping.

use std::sync::Arc;
use std::time::Instant;

use reqwest::{Method, RequestBuilder, StatusCode};
use serde::de::DeserializeOwned;
use url::Url;
use uuid::Uuid;

use crate::answer::{self, Limits};
use crate::auth::{Credentials, TokenCache};
use crate::error::{Error, Result};
use crate::page_sizes::PageSizes;
use crate::retry::{self, RetryPolicy};
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
    /// Deprecated sub-customer mode (section 4.5): send `x-client-id: <customer>` on every
    /// call. Needs a context switch first; cannot be combined with `customer`.
    pub x_client_id: Option<Uuid>,
    /// When and how failed requests are sent again.
    pub retry: RetryPolicy,
    /// How long the client waits for an answer and how much of it it reads.
    pub limits: Limits,
    /// Where writes are recorded before they are sent ([`crate::audit`]); none by default.
    pub audit: Option<Arc<dyn crate::audit::WriteAudit>>,
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
            x_client_id: None,
            retry: RetryPolicy::default(),
            limits: Limits::default(),
            audit: None,
        })
    }
}

/// Whether `url` names this computer (`localhost`, 127.0.0.0/8, `::1`).
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Why an address may not carry an API key's secret and tokens, if it may not: a scheme other
/// than https, except plain http to this computer (`localhost`, 127.0.0.0/8, `::1`: the
/// simulator), where nothing crosses a network.
pub fn insecure_address(url: &Url) -> Option<&'static str> {
    match url.scheme() {
        "https" => None,
        "http" => {
            (!is_loopback(url)).then_some("must use https: plain http is only for this computer (localhost, 127.0.0.1, ::1), as secrets and tokens would cross the network unencrypted")
        }
        _ => Some("must use http or https"),
    }
}

/// Parses a base address and makes sure it ends in `/`, so relative paths join under it.
fn parse_base(field: &str, s: &str) -> Result<Url> {
    let mut url = Url::parse(s).map_err(|e| Error::invalid(field, format!("must be an absolute http(s) URL ({e})")))?;
    if let Some(rule) = insecure_address(&url) {
        return Err(Error::invalid(field, rule));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

impl Client {
    /// A request with the bearer token and the customer context of the configuration (the
    /// reseller header, or the deprecated `x-client-id`).
    fn authorized(&self, method: Method, url: Url, token: &Secret) -> RequestBuilder {
        let mut req = self.inner.http.request(method, url).bearer_auth(token.expose());
        if let Some(customer) = self.inner.config.customer {
            req = req.header("Service-Security-Context", format!("client:uuid:{customer}"));
        }
        if let Some(customer) = self.inner.config.x_client_id {
            req = req.header(dcs_model::beta::X_CLIENT_ID, customer.to_string());
        }
        req
    }
}

struct Inner {
    http: reqwest::Client,
    config: ClientConfig,
    token_url: Url,
    tokens: TokenCache,
    /// What this client learnt of the service's page sizes ([`crate::page_sizes`]).
    page_sizes: std::sync::Mutex<PageSizes>,
    /// Learnt when the service refused a checksum sent after the file ([`crate::files`]).
    checksum_first: std::sync::atomic::AtomicBool,
}

/// Asked right before each attempt of a request goes out, after its audit record and its token
/// were had (either may wait): `Err(why)` stops the request unsent, as cancelled. A rollout's
/// driver gates its set-target calls on its lease (dcs-console's `rollout::lease`), so that a
/// process stopped or asleep anywhere before the send sends nothing once its lease ran out.
pub type Gate = Arc<dyn Fn() -> std::result::Result<(), String> + Send + Sync>;

/// A cheap-to-clone handle; clones share the connection pool and the token cache.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    gate: Option<Gate>,
}

impl Client {
    /// This client (sharing its connections and tokens) with every request asked `gate` right
    /// before each attempt goes out ([`Gate`]).
    pub fn gated(&self, gate: Gate) -> Client {
        Client { inner: self.inner.clone(), gate: Some(gate) }
    }

    pub fn new(config: ClientConfig) -> Result<Client> {
        if config.customer.is_some() && config.x_client_id.is_some() {
            return Err(Error::invalid(
                "x-client-id",
                "cannot be combined with the reseller customer (Service-Security-Context); choose one",
            ));
        }
        let mut http = reqwest::Client::builder();
        // Plain http is allowed to this computer because nothing crosses a network
        // (`insecure_address`); a proxy from the environment (HTTP_PROXY, ALL_PROXY) would carry
        // the token request, the client secret in clear, across one. A loopback service is
        // reached directly.
        if is_loopback(&config.base_url) && is_loopback(&config.auth_url) {
            http = http.no_proxy();
        }
        let http = http
            .user_agent(concat!("dcs-console/", env!("CARGO_PKG_VERSION")))
            // The beta API answers a bad token with a 302 ("access token incorrect", section
            // 4.5): not a page to follow but a 401 in disguise (handled in the request loop),
            // wherever its `Location` points (not shown: the token endpoint, a login page...).
            // Nor is a redirect to another origin followed: a 307/308 would send the token
            // request's body, the client secret, there. The request loop reports a redirect it
            // gets back as an error naming where it led (`answer::redirected`); one followed
            // 10 times in a row (a loop) ends with a protocol error.
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let from = attempt.previous().first().map(|u| u.origin());
                if attempt.status() == reqwest::StatusCode::FOUND || from.is_some_and(|o| o != attempt.url().origin()) {
                    attempt.stop()
                } else if attempt.previous().len() >= 10 {
                    attempt.error("too many redirects")
                } else {
                    attempt.follow()
                }
            }))
            .connect_timeout(config.limits.connect_timeout)
            .build()
            .map_err(|source| Error::network(&config.base_url, "the HTTP client could not be set up", Some(source)))?;
        let token_url =
            config.auth_url.join("api/v3/idp/oidc/token").map_err(|e| Error::invalid("auth URL", e.to_string()))?;
        Ok(Client {
            gate: None,
            inner: Arc::new(Inner {
                http,
                config,
                token_url,
                tokens: TokenCache::default(),
                page_sizes: Default::default(),
                checksum_first: Default::default(),
            }),
        })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// The page sizes this client learnt (shared by its clones).
    pub(crate) fn page_sizes(&self) -> std::sync::MutexGuard<'_, PageSizes> {
        self.inner.page_sizes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether uploads send the checksum before the file (learnt, shared by its clones).
    pub(crate) fn checksum_first(&self) -> &std::sync::atomic::AtomicBool {
        &self.inner.checksum_first
    }

    /// Fetches (or reuses) an access token: the cheapest way to check a profile works.
    pub async fn check_auth(&self) -> Result<()> {
        self.token().await.map(|_| ())
    }

    /// Exchanges the key for a new token, whatever is cached, and reports what the token says
    /// (type, lifetime, scopes): the "test connection" of a profile. The token is not kept.
    pub async fn test_credentials(&self) -> Result<crate::auth::TokenCheck> {
        let c = &self.inner.config;
        let creds = Credentials {
            token_url: &self.inner.token_url,
            audience: &c.audience,
            client_id: &c.client_id,
            client_secret: &c.client_secret,
            limits: &c.limits,
        };
        crate::auth::check(&self.inner.http, &creds).await
    }

    async fn token(&self) -> Result<Secret> {
        let c = &self.inner.config;
        let creds = Credentials {
            token_url: &self.inner.token_url,
            audience: &c.audience,
            client_id: &c.client_id,
            client_secret: &c.client_secret,
            limits: &c.limits,
        };
        self.inner.tokens.get(&self.inner.http, &creds).await
    }

    /// Resolves an API path (written without a leading `/`) under the base URL, so a base URL
    /// with a path prefix keeps its prefix.
    pub(crate) fn url(&self, path: &str) -> Result<Url> {
        self.inner.config.base_url.join(path.trim_start_matches('/')).map_err(|e| Error::invalid("path", e.to_string()))
    }

    /// Sends an authenticated JSON request and decodes the answer. On a 401 the token is
    /// renewed once and the request sent once more.
    pub(crate) async fn get_json<T: DeserializeOwned>(&self, url: Url) -> Result<T> {
        let body = self.send(Method::GET, url.clone()).await?;
        answer::json(&url, &body)
    }

    async fn send(&self, method: Method, url: Url) -> Result<Vec<u8>> {
        self.send_request(RequestSpec::new(method, url)).await
    }

    /// The request loop: one authenticated request, sent again as the retry policy allows.
    ///
    /// - 401 (and the beta API's 302): the token is renewed once and the request sent again.
    /// - 429: waits for `Retry-After` and sends again, whatever the method (not processed).
    /// - connection error, an answer cut short or stalled ([`crate::answer`]), 502/503/504: sent
    ///   again with backoff, but only GET, PUT and DELETE;
    ///   a POST is never repeated (it may have been processed).
    pub(crate) async fn send_request(&self, spec: RequestSpec) -> Result<Vec<u8>> {
        use tracing::Instrument;
        // One span per request: method, path, final status, retries, duration (never the token).
        let span = tracing::info_span!(
            "request",
            method = %spec.method,
            path = %spec.url.path(),
            status = tracing::field::Empty,
            retries = tracing::field::Empty,
            duration_ms = tracing::field::Empty,
        );
        let started = Instant::now();
        // A write is recorded before it goes out, and completed with what came of it.
        let audit = self.inner.config.audit.as_ref().filter(|_| crate::audit::writes(&spec.method));
        let ticket = match audit {
            Some(audit) => Some(audit.begin(&crate::audit::Write {
                method: spec.method.as_str(),
                url: &spec.url,
                body: spec.body.as_deref(),
                file: None,
            })?),
            None => None,
        };
        let out = self.request_loop(spec).instrument(span.clone()).await;
        if let (Some(audit), Some(ticket)) = (audit, ticket) {
            let outcome = match &out {
                Ok((status, _)) => crate::audit::Outcome::Done { status: status.as_u16(), sha256: None },
                Err(e) => crate::audit::Outcome::Failed(e),
            };
            audit.end(ticket, &outcome);
        }
        span.record("duration_ms", started.elapsed().as_millis() as u64);
        tracing::debug!(parent: &span, ok = out.is_ok(), "request finished");
        out.map(|(_, body)| body)
    }

    /// Where writes are recorded, if anywhere.
    pub(crate) fn audit(&self) -> Option<&Arc<dyn crate::audit::WriteAudit>> {
        self.inner.config.audit.as_ref()
    }

    async fn request_loop(&self, spec: RequestSpec) -> Result<(StatusCode, Vec<u8>)> {
        let RequestSpec { method, url, body, accept, json_content_type } = spec;
        check_length(&url)?;
        // The bearer token goes only to the configured service, never to a host a link names.
        if url.origin() != self.inner.config.base_url.origin() {
            return Err(Error::Protocol {
                url: url.to_string(),
                reason: "the link leads away from the service's base URL; refusing to send the token there".into(),
            });
        }
        let policy = &self.inner.config.retry;
        let idempotent = RetryPolicy::is_idempotent(&method);
        let first_sent = Instant::now();
        let mut renewed = false;
        let mut attempt: u32 = 1; // attempts made for connection errors and 5xx
        let mut rate_limit_waits: u32 = 0;
        // Whether a further backoff retry is allowed (count and total time), and its delay.
        let backoff = |attempt: u32| -> Option<std::time::Duration> {
            if attempt >= policy.max_attempts {
                return None;
            }
            let delay = policy.backoff(attempt);
            (first_sent.elapsed() + delay <= policy.max_total).then_some(delay)
        };
        loop {
            let token = match self.token().await {
                Ok(t) => t,
                // Fetching a token creates nothing: a transient failure may be retried.
                Err(e)
                    if matches!(
                        e.code(),
                        crate::ErrorCode::Network | crate::ErrorCode::Server | crate::ErrorCode::RateLimited
                    ) =>
                {
                    match backoff(attempt) {
                        Some(delay) => {
                            tracing::warn!(%method, path = url.path(), attempt, reason = %e, delay_ms = delay.as_millis() as u64, "retrying: token request failed");
                            tokio::time::sleep(delay).await;
                            attempt += 1;
                            continue;
                        }
                        None => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            };
            if let Some(gate) = &self.gate {
                gate().map_err(|why| Error::Cancelled { what: format!("{method} {} ({why})", url.path()) })?;
            }
            let started = Instant::now();
            let mut req = self.authorized(method.clone(), url.clone(), &token);
            if let Some(accept) = accept {
                req = req.header(reqwest::header::ACCEPT, accept);
            }
            if let Some(body) = &body {
                req = req.header(reqwest::header::CONTENT_TYPE, "application/json").body(body.clone());
            } else if json_content_type {
                req = req.header(reqwest::header::CONTENT_TYPE, "application/json");
            }
            let limits = &self.inner.config.limits;
            let sent = async {
                let res = req
                    .timeout(limits.answer_timeout)
                    .send()
                    .await
                    .map_err(|e| answer::not_answered(&url, e, limits))?;
                let status = res.status();
                let headers = res.headers().clone();
                let bytes = answer::read(res, &url, limits).await?;
                Ok::<_, answer::Failure>((status, headers, bytes))
            }
            .await;
            let (status, headers, bytes) = match sent {
                Ok(answer) => answer,
                Err(failure) => {
                    if idempotent && failure.transient {
                        if let Some(delay) = backoff(attempt) {
                            tracing::warn!(%method, path = url.path(), attempt, reason = %failure.error, delay_ms = delay.as_millis() as u64, "retrying: connection error or broken answer");
                            tokio::time::sleep(delay).await;
                            attempt += 1;
                            continue;
                        }
                    }
                    return Err(failure.error);
                }
            };
            tracing::debug!(%method, path = url.path(), status = status.as_u16(), elapsed_ms = started.elapsed().as_millis() as u64, "answer");
            let span = tracing::Span::current();
            span.record("status", status.as_u16());
            span.record("retries", (attempt - 1) + rate_limit_waits + u32::from(renewed));
            let beta_bad_token = status == StatusCode::FOUND
                && headers
                    .get(reqwest::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .is_some_and(|l| l.ends_with("/api/v3/idp/oidc/token"));
            if (status == StatusCode::UNAUTHORIZED || beta_bad_token) && !renewed {
                tracing::info!(%method, path = url.path(), status = status.as_u16(), "token refused; renewing it and sending again");
                self.inner.tokens.invalidate(&token).await;
                renewed = true;
                continue;
            }
            if status == StatusCode::TOO_MANY_REQUESTS && rate_limit_waits < policy.max_rate_limit_waits {
                let wait = retry::retry_after(&headers).unwrap_or(std::time::Duration::from_secs(1));
                if wait <= policy.max_retry_after {
                    rate_limit_waits += 1;
                    tracing::warn!(%method, path = url.path(), attempt = rate_limit_waits, reason = "429 rate limited", wait_s = wait.as_secs(), "retrying after Retry-After");
                    tokio::time::sleep(wait).await;
                    continue;
                }
            }
            if idempotent && policy.retries_status(status.as_u16()) {
                if let Some(delay) = backoff(attempt) {
                    tracing::warn!(%method, path = url.path(), attempt, reason = status.as_u16(), delay_ms = delay.as_millis() as u64, "retrying: server error");
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                    continue;
                }
            }
            if status.is_redirection() {
                return Err(answer::redirected(&url, status.as_u16(), &headers));
            }
            if !status.is_success() {
                return Err(Error::from_answer(status.as_u16(), &bytes));
            }
            answer::problem_in_success(&url, status.as_u16(), &headers, &bytes)?;
            return Ok((status, bytes));
        }
    }
}

/// The longest address the client sends. Servers refuse far shorter ones (the simulator at
/// 8 KiB, with a 414 the caller gets as the service's refusal); past 64 KiB an address cannot
/// even be sent (the HTTP stack refuses it, which used to read as "could not reach").
pub const MAX_URL: usize = 32 * 1024;

/// Refuses an address longer than [`MAX_URL`] before anything is sent.
fn check_length(url: &Url) -> Result<()> {
    let n = url.as_str().len();
    if n > MAX_URL {
        return Err(Error::invalid(
            "request",
            format!("the address would be {n} characters long, over the {MAX_URL} the client sends; search or filter with less text"),
        ));
    }
    Ok(())
}

// ---- Streamed requests (firmware-file uploads and downloads). ----
//
// Kept apart from the request loop above: a streamed upload body can be sent only once, so
// these requests are never retried; downloads renew the token once on a 401.

impl Client {
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
        check_length(&url)?;
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
            let req = self.authorized(method.clone(), url.clone(), &token);
            let res = self.send_streamed_once(&method, &url, body(req)).await?;
            let status = res.status();
            tracing::debug!(%method, path = url.path(), status = status.as_u16(), elapsed_ms = started.elapsed().as_millis() as u64, "streamed request");
            if status.is_success() {
                return Ok(res);
            }
            let answer = answer::read(res, &url, &self.inner.config.limits).await?;
            if status == StatusCode::UNAUTHORIZED {
                self.inner.tokens.invalidate(&token).await;
                if !renewed {
                    renewed = true;
                    continue;
                }
            }
            return Err(Error::from_answer(status.as_u16(), &answer));
        }
    }
}

impl Client {
    /// Sends a streamed request. A download's answer must begin within the read timeout; an
    /// upload's is awaited however long the service takes to read the file (the caller can
    /// cancel it).
    async fn send_streamed_once(&self, method: &Method, url: &Url, req: RequestBuilder) -> Result<reqwest::Response> {
        let limits = &self.inner.config.limits;
        let sent = req.send();
        let res = if *method == Method::GET {
            match tokio::time::timeout(limits.read_timeout, sent).await {
                Ok(res) => res,
                Err(_) => return Err(answer::no_answer(url, limits.read_timeout, "read")),
            }
        } else {
            sent.await
        };
        res.map_err(|e| answer::not_answered(url, e, limits).error)
    }

    pub(crate) fn limits(&self) -> &Limits {
        &self.inner.config.limits
    }
}

/// One request for the loop: method, URL, an optional JSON body and an optional `Accept`.
pub(crate) struct RequestSpec {
    pub method: Method,
    pub url: Url,
    pub body: Option<Vec<u8>>,
    pub accept: Option<&'static str>,
    /// Sends `Content-Type: application/json` even without a body (a request with a body
    /// always has it): the context switch lists that header on a GET (reference 4.5).
    pub json_content_type: bool,
}

impl RequestSpec {
    pub fn new(method: Method, url: Url) -> RequestSpec {
        RequestSpec { method, url, body: None, accept: None, json_content_type: false }
    }
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
        // Plain http only to this computer, for the API and the identity platform alike.
        for (base, auth) in [("http://dcs.example.com", "https://a"), ("https://h.example", "http://10.0.0.5:8080")] {
            let e = ClientConfig::new(base, auth, "k", Secret::new("s")).expect_err("refused");
            assert!(e.to_string().contains("must use https"), "{e}");
        }
        for local in ["http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:2", "http://127.3.4.5"] {
            assert!(ClientConfig::new(local, local, "k", Secret::new("s")).is_ok(), "{local}");
        }
        assert!(ClientConfig::new("not a url", "https://a", "k", Secret::new("s")).is_err());
    }
}
