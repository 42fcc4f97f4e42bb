//! Reading the service's answers, bounded: how long the client waits and how much it reads
//! ([`Limits`]), what it calls an answer that breaks off, stalls, grows without end or carries
//! headers no server sends, and how a body is read as JSON.
//!
//! Every answer the client keeps in memory (the request loop's, the token request's, a refused
//! transfer's) is read by [`read`]: at most [`Limits::max_answer`] bytes, within
//! [`Limits::answer_timeout`], and no longer than [`Limits::read_timeout`] without a byte.
//! Streamed downloads go to disk whatever their size, but stall after
//! [`Limits::read_timeout`] without a byte too. Failures are the client's one [`Error`]:
//!
//! - nothing answered (no connection, or no answer before the timeout): `network`, "could not
//!   reach {url}: ...", retried for GET, PUT and DELETE;
//! - an answer that breaks off (the connection closed before its announced or chunked end) or
//!   stalls: `protocol`, "the service's answer was cut short ..." or "... stopped arriving",
//!   also retried for GET, PUT and DELETE (the next attempt may get it whole);
//! - an answer too large (announced or read past [`Limits::max_answer`]), headers over the HTTP
//!   stack's bound (about 400 KiB, or 100 headers), a body that is not JSON, a request that
//!   cannot be made (an access token with a line break): `protocol`, never retried (the same
//!   would happen again).
//!
//! JSON is read tolerantly where the reference is silent (it says only "responses are JSON"):
//! whatever the `Content-Type` (`text/plain` too), a leading UTF-8 byte-order mark skipped
//! (RFC 8259 lets a reader ignore it). Not tolerated: a success whose `Content-Type` is
//! `application/problem+json` (the reference's media type of errors: a refusal in a 2xx), and a
//! body that is not JSON (an HTML login page of a proxy, say), which is named as such.

use std::time::Duration;

use serde::de::DeserializeOwned;
use url::Url;

use crate::error::{Error, Result};

/// How long the client waits and how much of an answer it reads. The defaults are the
/// production values; tests shorten them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest wait for a connection (TCP and TLS) to be set up: 10 s.
    pub connect_timeout: Duration,
    /// Longest wait without a byte of an answer (its headers or its body), streamed downloads
    /// included: 30 s. Not applied to an upload's own answer (the service may read a large
    /// file for long before answering); an upload can be cancelled.
    pub read_timeout: Duration,
    /// Longest one request of the request loop or the token request takes, from sending it to
    /// the last byte of its answer: 60 s (a page of 1,000 items is well under a megabyte).
    /// Streamed transfers are not bounded in total (a firmware file may take minutes).
    pub answer_timeout: Duration,
    /// Largest answer body read into memory: 16 MiB (the largest page of the simulator is
    /// under 2 MiB). Downloads stream to disk and are not bounded.
    pub max_answer: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            answer_timeout: Duration::from_secs(60),
            max_answer: 16 * 1024 * 1024,
        }
    }
}

/// A failure to get an answer, and whether sending the request again may help.
pub(crate) struct Failure {
    pub error: Error,
    /// The connection failed or the answer broke off: another attempt may succeed.
    pub transient: bool,
}

impl From<Failure> for Error {
    fn from(f: Failure) -> Error {
        f.error
    }
}

/// Human words for a duration of the limits: `2 s`, `250 ms`.
fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

fn protocol(url: &Url, reason: String) -> Error {
    Error::Protocol { url: url.to_string(), reason }
}

/// The HTTP stack's refusal of an answer's head (status line and headers), when that is why
/// there is no answer: too large (over its buffer of about 400 KiB, or over 100 headers) or
/// not HTTP.
fn unreadable_head(source: &reqwest::Error) -> Option<&hyper::Error> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(source);
    while let Some(c) = cause {
        if let Some(h) = c.downcast_ref::<hyper::Error>().filter(|h| h.is_parse()) {
            return Some(h);
        }
        cause = c.source();
    }
    None
}

/// The innermost cause of an error, the one that says what happened ("Connection refused").
fn root_cause(source: &(dyn std::error::Error + 'static)) -> String {
    let mut last = source;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string()
}

/// A request that got no answer (no status line and headers).
pub(crate) fn not_answered(url: &Url, source: reqwest::Error, limits: &Limits) -> Failure {
    if let Some(head) = unreadable_head(&source) {
        let reason = format!(
            "the service's answer could not be read as HTTP: {head} (the client reads at most about 400 KiB of headers, and 100 headers)"
        );
        return Failure { error: protocol(url, reason), transient: false };
    }
    if source.is_builder() {
        // Nothing was sent: a header value HTTP cannot carry, and the only one that comes
        // from outside is the access token the identity platform gave.
        let reason = format!(
            "the request could not be made ({}): the access token the identity platform gave has characters HTTP cannot carry in a header",
            root_cause(&source)
        );
        return Failure { error: protocol(url, reason), transient: false };
    }
    if source.is_redirect() {
        let reason =
            "the service's redirects did not end (more than 10 in a row: a loop?); the client stopped following them"
                .to_owned();
        return Failure { error: protocol(url, reason), transient: false };
    }
    let reason = if source.is_timeout() {
        if source.is_connect() {
            format!("no connection within {} (the client's connect timeout)", secs(limits.connect_timeout))
        } else {
            format!("no answer within {} (the client's answer timeout)", secs(limits.answer_timeout))
        }
    } else {
        root_cause(&source)
    };
    Failure { error: Error::network(url, reason, Some(source)), transient: true }
}

/// Where a redirect leads, for a message (its start).
fn location(headers: &reqwest::header::HeaderMap) -> String {
    let to = headers.get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("no Location");
    to.chars().take(300).filter(|c| !c.is_control()).collect()
}

/// A redirect of the API the client does not follow (see [`crate::client`]: a 302, or one to
/// another origin), reported with where it led. A 302 is the beta API's "access token
/// incorrect or without access to the service" (reference 4.5, wherever it points): the
/// service's refusal, code `unauthorized`. Any other is [`not_followed`].
pub(crate) fn redirected(url: &Url, status: u16, headers: &reqwest::header::HeaderMap) -> Error {
    if status == 302 {
        let to = location(headers);
        let detail = format!(
            "a redirect to {to}, not followed: the beta API's answer to an access token that is incorrect or without access to the service"
        );
        return Error::Api { status, problem: Box::new(dcs_model::Problem::new(302, "Found", detail)) };
    }
    not_followed(url, status, headers)
}

/// A redirect the client does not follow, as a protocol error naming where it led.
pub(crate) fn not_followed(url: &Url, status: u16, headers: &reqwest::header::HeaderMap) -> Error {
    let to = location(headers);
    protocol(
        url,
        format!("the service answered {status}, a redirect to {to}, which the client does not follow (it follows only 301, 303, 307 and 308 within the service's origin)"),
    )
}

/// No answer (no status line and headers) within `within`, the client's `which` timeout.
pub(crate) fn no_answer(url: &Url, within: Duration, which: &str) -> Error {
    Error::network(url, format!("no answer within {} (the client's {which} timeout)", secs(within)), None)
}

/// An answer whose body broke off or stalled after `received` bytes.
pub(crate) fn cut_short(
    url: &Url,
    source: &reqwest::Error,
    received: u64,
    announced: Option<u64>,
    limits: &Limits,
) -> Error {
    broke_off(url, source, received as usize, announced, limits).error
}

fn broke_off(url: &Url, source: &reqwest::Error, received: usize, announced: Option<u64>, limits: &Limits) -> Failure {
    let of = announced.map(|n| format!(" of the {n} announced")).unwrap_or_default();
    let reason = if source.is_timeout() {
        format!(
            "the service's answer did not arrive in full within {} (the client's answer timeout; {received} bytes{of} received)",
            secs(limits.answer_timeout)
        )
    } else {
        format!(
            "the service's answer was cut short: the connection ended after {received} bytes{of}, before the answer's end ({})",
            root_cause(source)
        )
    };
    Failure { error: protocol(url, reason), transient: true }
}

fn too_large(url: &Url, limits: &Limits, size: String) -> Failure {
    let reason = format!(
        "the service's answer is too large: {size}, over the {} bytes the client reads into memory",
        limits.max_answer
    );
    Failure { error: protocol(url, reason), transient: false }
}

/// The body of an answer, read whole into memory: refused when it is announced or turns out
/// larger than [`Limits::max_answer`], when it stalls for [`Limits::read_timeout`], or when it
/// breaks off. (The total time is bounded by the request's own timeout, set by the caller.)
pub(crate) async fn read(mut res: reqwest::Response, url: &Url, limits: &Limits) -> Result<Vec<u8>, Failure> {
    let announced = res.content_length();
    if let Some(n) = announced.filter(|n| *n > limits.max_answer as u64) {
        return Err(too_large(url, limits, format!("{n} bytes announced")));
    }
    // Never reserve more than is announced nor more than the cap (a page is usually small).
    let mut body = Vec::with_capacity(announced.map_or(8 * 1024, |n| n as usize).min(limits.max_answer));
    loop {
        let chunk = match tokio::time::timeout(limits.read_timeout, res.chunk()).await {
            Ok(Ok(Some(chunk))) => chunk,
            Ok(Ok(None)) => return Ok(body),
            Ok(Err(source)) => return Err(broke_off(url, &source, body.len(), announced, limits)),
            Err(_) => return Err(stalled(url, body.len(), limits)),
        };
        if body.len() + chunk.len() > limits.max_answer {
            return Err(too_large(url, limits, format!("more than {} bytes read, and more coming", body.len())));
        }
        body.extend_from_slice(&chunk);
    }
}

/// An answer of which no byte came for [`Limits::read_timeout`] after `received` bytes.
pub(crate) fn stalled(url: &Url, received: usize, limits: &Limits) -> Failure {
    let reason = format!(
        "the service's answer stopped arriving: no byte for {} after {received} bytes (the client's read timeout)",
        secs(limits.read_timeout)
    );
    Failure { error: protocol(url, reason), transient: true }
}

/// A body read as JSON (see the module: tolerant of the content type and a byte-order mark).
/// A body that is not JSON is named as such, with its start, so an HTML page reads as one.
pub(crate) fn json<T: DeserializeOwned>(url: &Url, body: &[u8]) -> Result<T> {
    serde_json::from_slice(strip_bom(body)).map_err(|e| protocol(url, not_readable(body, &e)))
}

/// The body without a leading UTF-8 byte-order mark.
pub(crate) fn strip_bom(body: &[u8]) -> &[u8] {
    body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body)
}

/// Why a body could not be read as the JSON expected: not JSON at all (with the start of it),
/// or JSON of another shape (serde's words: the member and the line).
fn not_readable(body: &[u8], e: &serde_json::Error) -> String {
    let text = String::from_utf8_lossy(strip_bom(body));
    let start: String = text.trim_start().chars().take(60).filter(|c| !c.is_control()).collect();
    if body.iter().all(u8::is_ascii_whitespace) {
        "the answer is empty where JSON was expected".into()
    } else if start.starts_with('<') {
        format!("the answer is an HTML or XML page, not JSON (a proxy's or a login page?), starting `{start}`")
    } else if e.is_syntax() || e.is_eof() {
        format!("the answer is not JSON ({e}), starting `{start}`")
    } else {
        format!("the answer is not of the shape expected: {e}")
    }
}

/// A success whose `Content-Type` is the reference's media type of errors: the service's
/// refusal sent with a 2xx, reported with its title and detail instead of being read as data.
pub(crate) fn problem_in_success(
    url: &Url,
    status: u16,
    headers: &reqwest::header::HeaderMap,
    body: &[u8],
) -> Result<()> {
    let problem_type = headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().to_ascii_lowercase().starts_with("application/problem+json"));
    if !problem_type {
        return Ok(());
    }
    let problem = serde_json::from_slice::<dcs_model::Problem>(strip_bom(body)).ok();
    let what = problem
        .map(|p| match (p.title, p.detail) {
            (t, Some(d)) => format!("{}: {d}", t.unwrap_or_default()),
            (t, None) => t.unwrap_or_default(),
        })
        .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(200).collect());
    Err(protocol(url, format!("the service answered {status} with a problem document (application/problem+json), a refusal, not data: {what}")))
}

/// The most redirects [`get_document`] follows.
const DOCUMENT_REDIRECTS: usize = 5;

/// A JSON document from a server other than the service (the app's update manifest), read
/// as the service's answers are: at most [`Limits::max_answer`] bytes, within
/// [`Limits::answer_timeout`], no stall longer than [`Limits::read_timeout`], JSON tolerant of
/// its content type and a byte-order mark. `None` when the server answers 204 (nothing to
/// give). Redirects are followed up to 5 times, never from `https` to `http`; no credential is
/// sent. Any other status is a refusal naming it.
pub async fn get_document(url: &Url, limits: &Limits) -> Result<Option<serde_json::Value>> {
    let http = reqwest::Client::builder()
        .user_agent(concat!("dcs-console/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let downgrade =
                attempt.previous().iter().any(|u| u.scheme() == "https") && attempt.url().scheme() != "https";
            if downgrade {
                attempt.error("a redirect from https to an address without it")
            } else if attempt.previous().len() > DOCUMENT_REDIRECTS {
                attempt.error("too many redirects")
            } else {
                attempt.follow()
            }
        }))
        .connect_timeout(limits.connect_timeout)
        .timeout(limits.answer_timeout)
        .build()
        .map_err(|source| Error::network(url, "the HTTP client could not be set up", Some(source)))?;
    let res =
        http.get(url.clone()).header(reqwest::header::ACCEPT, "application/json").send().await.map_err(|source| {
            match source.is_redirect() {
                true => protocol(
                    url,
                    format!(
                        "its redirects were not followed: {} (at most {DOCUMENT_REDIRECTS}, never from https to http)",
                        root_cause(&source)
                    ),
                ),
                false => not_answered(url, source, limits).error,
            }
        })?;
    let status = res.status();
    if status == reqwest::StatusCode::NO_CONTENT {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(protocol(url, format!("the server answered {status}, not the document")));
    }
    let body = read(res, url, limits).await?;
    json(url, &body).map(Some)
}
