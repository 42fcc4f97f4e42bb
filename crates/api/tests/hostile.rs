//! The client against a hand-made hostile service (axum): absurd token lifetimes, page links
//! that loop, refusals counted request by request, and answers no service should give (slow,
//! cut short, endless, of the wrong type, with absurd numbers or headers, redirecting in
//! circles). Each case ends with the client's one error, its code and words naming what went
//! wrong, within a bound of time (the clients here have short timeouts, [`test_limits`]) and,
//! for the large ones, of memory (the process's peak resident memory, [`peak_growth`]).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use dcs_api::firmware::{ModuleFilter, NewPackage};
use dcs_api::{Client, Error, ErrorCode, Limits, RetryPolicy};
use futures::{stream, StreamExt, TryStreamExt};
use serde_json::{json, Value};
use url::Url;
use uuid::Uuid;

mod common;

#[derive(Default)]
struct Hostile {
    /// `expires_in` of every token answer.
    expires_in: AtomicU64,
    /// Status every `POST /firmware/packages` is answered with.
    post_status: AtomicU64,
    /// `POST /firmware/packages` requests seen.
    posts: AtomicUsize,
    /// `GET /firmware/modules` requests seen.
    pages: AtomicUsize,
}

type Shared = Arc<Hostile>;

async fn token(State(h): State<Shared>) -> Json<Value> {
    Json(json!({"access_token": "t", "token_type": "Bearer", "expires_in": h.expires_in.load(Ordering::SeqCst)}))
}

/// `GET /firmware/modules`: a first page whose `next` leads to `cursor=a`, whose `next` leads
/// to `cursor=b`, whose `next` leads back to `cursor=a` (a loop of two); `cursor=self` names
/// itself. Gives up after 1000 pages, so a client that loops fails the test instead of hanging.
async fn modules(State(h): State<Shared>, Query(q): Query<Vec<(String, String)>>) -> Response {
    if h.pages.fetch_add(1, Ordering::SeqCst) > 1000 {
        return StatusCode::GONE.into_response();
    }
    let cursor = q.iter().find(|(k, _)| k == "cursor").map(|(_, v)| v.as_str());
    let next = match cursor {
        None => "modules?cursor=a",
        Some("a") => "modules?cursor=b",
        Some("b") => "modules?cursor=a",
        Some(_) => "modules?cursor=self",
    };
    Json(json!({"items": [], "next": next})).into_response()
}

async fn create_package(State(h): State<Shared>) -> Response {
    h.posts.fetch_add(1, Ordering::SeqCst);
    let status = StatusCode::from_u16(h.post_status.load(Ordering::SeqCst) as u16).unwrap();
    let problem = json!({"type": "about:blank", "title": "refused", "status": status.as_u16()});
    (status, [("content-type", "application/problem+json"), ("retry-after", "0")], problem.to_string()).into_response()
}

async fn serve() -> (Client, Shared) {
    let h = Shared::default();
    h.expires_in.store(3600, Ordering::SeqCst);
    let app = Router::new()
        .route("/api/v3/idp/oidc/token", post(token))
        .route("/firmware/modules", get(modules))
        .route("/firmware/packages", post(create_package))
        .with_state(h.clone());
    let base = common::serve(app).await;
    (common::client_at(&base, "key", "secret"), h)
}

/// An `expires_in` no clock can hold (2^64 - 1 seconds) is not a panic: the token is used, and
/// kept no longer than a day.
#[tokio::test]
async fn an_absurd_token_lifetime_is_used_without_panicking() {
    let (c, h) = serve().await;
    h.expires_in.store(u64::MAX, Ordering::SeqCst);
    let (page, _) = c.firmware().modules_page(&ModuleFilter::default()).await.unwrap();
    assert!(page.items.is_empty());
    let check = c.test_credentials().await.unwrap();
    assert_eq!(check.expires_in, u32::MAX);
}

/// A `next` link leading back to a page already read ends the listing with a protocol error
/// naming the link, instead of reading the same pages forever.
#[tokio::test]
async fn a_next_link_to_a_page_already_read_stops_the_listing() {
    let (c, h) = serve().await;
    let err = c.firmware().modules(&ModuleFilter::default()).unwrap().try_collect::<Vec<_>>().await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol, "{err}");
    assert!(err.to_string().contains("cursor=a"), "{err}");
    assert!(err.to_string().contains("already"), "{err}");
    assert_eq!(h.pages.load(Ordering::SeqCst), 3, "the first page, a and b; not a again");
}

/// A 429 says the request was not processed: a POST answered 429 is sent again after
/// `Retry-After`, at most `max_rate_limit_waits` times (8: nine requests in all), and the call
/// ends with the 429. A POST answered 503 or 500 is never sent again (it may have been
/// processed).
#[tokio::test]
async fn a_post_is_repeated_only_after_a_429_and_a_bounded_number_of_times() {
    let (c, h) = serve().await;
    let new = NewPackage::new(Uuid::nil(), Uuid::nil(), "1.0.0");

    h.post_status.store(429, Ordering::SeqCst);
    let err = c.firmware().create_package(&new).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::RateLimited, "{err}");
    assert_eq!(h.posts.load(Ordering::SeqCst), 1 + dcs_api::RetryPolicy::default().max_rate_limit_waits as usize);
    assert_eq!(h.posts.load(Ordering::SeqCst), 9);

    for status in [503, 500, 502, 504] {
        h.posts.store(0, Ordering::SeqCst);
        h.post_status.store(status, Ordering::SeqCst);
        let err = c.firmware().create_package(&new).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::Server, "{err}");
        assert_eq!(h.posts.load(Ordering::SeqCst), 1, "a POST answered {status} is not repeated");
    }

    // A refusal (4xx other than 408/429) is never repeated either.
    for status in [400, 404, 409, 413, 414] {
        h.posts.store(0, Ordering::SeqCst);
        h.post_status.store(status, Ordering::SeqCst);
        let err = c.firmware().create_package(&new).await.unwrap_err();
        assert!(matches!(err, dcs_api::Error::Api { status: s, .. } if s == status as u16), "{err:?}");
        assert_eq!(h.posts.load(Ordering::SeqCst), 1, "a POST answered {status} is not repeated");
    }
}

/// The identity platform answers the token request with a redirect to another origin (307 and
/// 308 keep the method and the body, the client secret in it): it is not followed, the other
/// origin hears nothing, and the error says what happened.
#[tokio::test]
async fn a_redirect_of_the_token_request_to_another_origin_is_not_followed() {
    let trap = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let trap_url = format!("http://{}/steal", trap.local_addr().unwrap());
    let heard = Arc::new(AtomicUsize::new(0));
    let h2 = heard.clone();
    tokio::spawn(async move {
        while let Ok((_s, _)) = trap.accept().await {
            h2.fetch_add(1, Ordering::SeqCst);
        }
    });
    for status in [StatusCode::TEMPORARY_REDIRECT, StatusCode::PERMANENT_REDIRECT, StatusCode::MOVED_PERMANENTLY] {
        let to = trap_url.clone();
        let app = Router::new().route(
            "/api/v3/idp/oidc/token",
            post(move || {
                let to = to.clone();
                async move { (status, [("location", to)]).into_response() }
            }),
        );
        let base = common::serve(app).await;
        let c = common::client_at(&base, "key", "the-secret");
        let err = c.test_credentials().await.unwrap_err();
        assert!(err.to_string().contains(&status.as_u16().to_string()), "{status}: {err}");
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(heard.load(Ordering::SeqCst), 0, "the other origin was reached");
}

// ---- Answers no service should give. ----

/// The production limits ([`Limits::default`]: 16 MiB answers) with short timeouts, so that a
/// case that waits ends in seconds: 1 s to connect, 1.5 s without a byte, 2.5 s in all.
fn test_limits() -> Limits {
    Limits {
        connect_timeout: Duration::from_secs(1),
        read_timeout: Duration::from_millis(1500),
        answer_timeout: Duration::from_millis(2500),
        ..Limits::default()
    }
}

async fn plain_token() -> Json<Value> {
    Json(json!({"access_token": "t", "token_type": "Bearer", "expires_in": 3600}))
}

/// Serves `app` behind a well-behaved token endpoint; answers its base URL and a client with
/// [`test_limits`] and no retries.
async fn hostile(app: Router) -> (String, Client) {
    let base = common::serve(app.route("/api/v3/idp/oidc/token", post(plain_token))).await;
    let mut cfg = common::config_at(&base, "key", "secret");
    cfg.limits = test_limits();
    cfg.retry = RetryPolicy::none();
    (base.clone(), Client::new(cfg).unwrap())
}

/// A hostile service answering every request but the token's with `handler`.
async fn answering<H: axum::handler::Handler<T, ()>, T: 'static>(handler: H) -> Client {
    hostile(Router::new().fallback(handler)).await.1
}

/// Runs `f`, which must end (with the client's error) within `bound`; answers its output.
async fn within<T>(bound: Duration, f: impl Future<Output = T>) -> T {
    let started = Instant::now();
    let out = tokio::time::timeout(bound + Duration::from_secs(5), f).await.expect("the client never gave up");
    let took = started.elapsed();
    assert!(took <= bound, "took {took:?}, over the bound of {bound:?}");
    eprintln!("(took {took:?})");
    out
}

/// Asserts the error's code and that its message says each of `words`.
fn assert_error(err: &Error, code: ErrorCode, words: &[&str]) {
    assert_eq!(err.code(), code, "{err}");
    for w in words {
        assert!(err.to_string().contains(w), "`{w}` not in: {err}");
    }
}

/// One of this process's memory figures of /proc/self/status, in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The cases measured for memory run one at a time (the peak is the whole process's).
static MEASURED: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Runs `f` and answers its output with how far the process's peak resident memory (VmHWM)
/// rose over the resident memory when it started, in MiB. The peak is reset first (writing 5
/// to /proc/self/clear_refs); the in-process hostile server's own buffers count too.
async fn peak_growth<T>(f: impl Future<Output = T>) -> (T, u64) {
    let _alone = MEASURED.lock().await;
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting the peak resident memory");
    let before = status_kib("VmRSS:");
    let out = f.await;
    let grown = status_kib("VmHWM:").saturating_sub(before) / 1024;
    eprintln!("(peak resident memory grew by {grown} MiB)");
    (out, grown)
}

const MEMORY_BOUND_MIB: u64 = 64;

fn json_with(content_type: &'static str, body: impl Into<Body>) -> Response {
    ([("content-type", content_type)], body.into()).into_response()
}

/// A body of these chunks, then, a moment later (the head and chunks sent), the connection
/// closed without the body's end.
fn cut_after(parts: Vec<&'static [u8]>) -> Body {
    let parts = stream::iter(parts.into_iter().map(|p| Ok(Bytes::from_static(p))));
    let cut = stream::once(async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Err(std::io::Error::other("cut"))
    });
    Body::from_stream(parts.chain(cut))
}

/// Headers at once, then one byte a second for ever: the answer timeout ends it (each byte
/// comes well within the read timeout).
#[tokio::test]
async fn a_body_of_one_byte_a_second_ends_at_the_answer_timeout() {
    let c = answering(|| async {
        let drip = stream::unfold(false, |started| async move {
            if started {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            let part: &'static [u8] = if started { b" " } else { b"{\"items\": [" };
            Some((Ok::<_, std::io::Error>(Bytes::from_static(part)), true))
        });
        json_with("application/json", Body::from_stream(drip))
    })
    .await;
    let err = within(Duration::from_secs(4), c.firmware().modules_page(&ModuleFilter::default())).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["did not arrive in full within 2500 ms", "answer timeout"]);
}

/// A service that takes the request and never answers: no answer within the answer timeout.
#[tokio::test]
async fn a_service_that_never_answers_ends_at_the_answer_timeout() {
    let c = answering(std::future::pending::<Response>).await;
    let err = within(Duration::from_secs(4), c.firmware().modules_page(&ModuleFilter::default())).await.unwrap_err();
    assert_error(&err, ErrorCode::Network, &["could not reach", "no answer within 2500 ms"]);
}

/// A body that starts and then stops: no byte for the read timeout ends it.
#[tokio::test]
async fn a_body_that_stops_half_way_ends_at_the_read_timeout() {
    let c = answering(|| async {
        let stuck = stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(b"{\"items\": [")) })
            .chain(stream::pending());
        json_with("application/json", Body::from_stream(stuck))
    })
    .await;
    let err = within(Duration::from_secs(3), c.firmware().modules_page(&ModuleFilter::default())).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["stopped arriving", "no byte for 1500 ms after 11 bytes"]);
}

/// `Content-Length: 100`, 16 bytes, then the connection closes: cut short. A GET is sent
/// again (the next answer may be whole) as the retry policy says, then the error is reported.
#[tokio::test]
async fn an_answer_shorter_than_its_content_length_is_cut_short() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    let (base, _) = hostile(Router::new().fallback(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async {
            let body = cut_after(vec![b"{\"items\": [{\"id\""]);
            ([("content-type", "application/json"), ("content-length", "100")], body).into_response()
        }
    }))
    .await;
    let mut cfg = common::config_at(&base, "key", "secret");
    cfg.limits = test_limits();
    cfg.retry = RetryPolicy { base_delay: Duration::from_millis(10), ..RetryPolicy::default() };
    let c = Client::new(cfg).unwrap();
    let err = within(Duration::from_secs(2), c.firmware().modules_page(&ModuleFilter::default())).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["answer was cut short", "after 16 bytes of the 100 announced"]);
    assert_eq!(seen.load(Ordering::SeqCst), 4, "sent 4 times in all, as the retry policy says");
}

/// A chunked answer that ends mid-object, without its last chunk: cut short.
#[tokio::test]
async fn a_chunked_answer_cut_mid_object_is_cut_short() {
    let c = answering(|| async {
        let body = cut_after(vec![b"{\"items\": [", b"{\"id\": \"00000000-"]);
        json_with("application/json", body)
    })
    .await;
    let err = within(Duration::from_secs(2), c.firmware().modules_page(&ModuleFilter::default())).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["answer was cut short", "before the answer's end"]);
}

/// The reference says only that answers are JSON: a page is read whatever its content type
/// (`text/plain`, none) and with a byte-order mark. An HTML page with a 200 (a proxy's login
/// page) is named as such; a problem document with a 200 is a refusal, not data.
#[tokio::test]
async fn content_types_are_read_tolerantly_but_html_and_problems_are_named() {
    let page = r#"{"items": []}"#;
    for (content_type, body) in [
        ("text/plain", page.to_owned()),
        ("application/octet-stream", page.to_owned()),
        ("application/json", format!("\u{feff}{page}")),
        ("application/json; charset=utf-8", page.to_owned()),
    ] {
        let c = answering(move || async move { json_with(content_type, body) }).await;
        let (got, next) = c.firmware().modules_page(&ModuleFilter::default()).await.expect(content_type);
        assert!(got.items.is_empty() && next.is_none());
    }

    let c = answering(|| async {
        json_with("text/html", "<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>...</body></html>")
    })
    .await;
    let err = c.firmware().modules_page(&ModuleFilter::default()).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["an HTML or XML page, not JSON", "<!DOCTYPE html>"]);

    let c = answering(|| async { json_with("application/json", "items: none") }).await;
    let err = c.firmware().modules_page(&ModuleFilter::default()).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["not JSON", "items: none"]);

    let c = answering(|| async {
        let problem = json!({"type": "about:blank", "title": "Forbidden", "status": 403, "detail": "no access"});
        json_with("application/problem+json", problem.to_string())
    })
    .await;
    let err = c.firmware().modules_page(&ModuleFilter::default()).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["answered 200 with a problem document", "Forbidden: no access"]);
    let err = c.downlinks().get("d-1").await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["problem document"]);
}

const MODULE: &str = r#""name": "m", "firmwareVersionAttributeName": "fw", "deviceSpecificationId": "00000000-0000-0000-0000-000000000002""#;

/// Numbers past any integer in a page: where the client has a field of its own, an error
/// (never a wrap-around); in members it keeps as sent, the value as JSON reads it (2^64 as the
/// nearest double, never wrapped); a number past any double (1e400) is not JSON it can read.
#[tokio::test]
async fn huge_numbers_in_a_page_are_refused_or_kept_never_wrapped() {
    let answer = |body: String| answering(move || async move { json_with("application/json", body) });

    let kept = format!(
        r#"{{"items": [{{"id": "00000000-0000-0000-0000-000000000001", {MODULE}, "count": 18446744073709551616, "total": 18446744073709551615, "size": -1}}]}}"#
    );
    let c = answer(kept).await;
    let (page, _) = c.firmware().modules_page(&ModuleFilter::default()).await.unwrap();
    let extra = &page.items[0].extra;
    assert_eq!(extra["count"].as_f64(), Some(18446744073709551616.0));
    assert_eq!(extra["count"].as_u64(), None, "not wrapped to a small integer");
    assert_eq!(extra["total"].as_u64(), Some(u64::MAX));
    assert_eq!(extra["size"].as_i64(), Some(-1));

    let id = format!(r#"{{"items": [{{"id": 18446744073709551616, {MODULE}}}]}}"#);
    let err = answer(id).await.firmware().modules_page(&ModuleFilter::default()).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["not of the shape expected", "expected a formatted UUID"]);

    let beyond = format!(r#"{{"items": [{{"id": "00000000-0000-0000-0000-000000000001", {MODULE}, "size": 1e400}}]}}"#);
    let err = answer(beyond).await.firmware().modules_page(&ModuleFilter::default()).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["not JSON", "number out of range"]);

    // The beta page's totals and sizes are the client's own integers.
    for (member, value, words) in [
        ("totalElements", "18446744073709551616", "expected u64"),
        ("size", "-5", "expected u64"),
        ("number", "1e400", "number out of range"),
    ] {
        let body = format!(r#"{{"content": [], "last": true, "{member}": {value}}}"#);
        let err = answer(body).await.beta().devices(&Default::default()).await.unwrap_err();
        assert_error(&err, ErrorCode::Protocol, &[words]);
    }
    let body = r#"{"content": [], "last": true, "totalElements": 18446744073709551615, "totalPages": 0}"#.to_owned();
    let page = answer(body).await.beta().devices(&Default::default()).await.unwrap();
    assert_eq!(page.total_elements, u64::MAX, "kept as sent");
}

/// The same in a single object: a downlink's `retryCount` past its 32 bits, negative, or past
/// any double; a token's `expires_in` likewise.
#[tokio::test]
async fn huge_numbers_in_a_single_object_are_refused_never_wrapped() {
    for (value, words) in [("4294967296", "expected u32"), ("-1", "expected u32"), ("1e400", "number out of range")] {
        let body = format!(r#"{{"id": "d-1", "status": "PENDING", "retryCount": {value}}}"#);
        let c = answering(move || async move { json_with("application/json", body) }).await;
        let err = c.downlinks().get("d-1").await.unwrap_err();
        assert_error(&err, ErrorCode::Protocol, &[words]);
    }
    for (value, words) in
        [("18446744073709551616", "expected u64"), ("-3600", "expected u64"), ("1e400", "out of range")]
    {
        let body = format!(r#"{{"access_token": "t", "token_type": "Bearer", "expires_in": {value}}}"#);
        let base = common::serve(
            Router::new()
                .route("/api/v3/idp/oidc/token", post(move || async move { json_with("application/json", body) })),
        )
        .await;
        let err = common::client_at(&base, "key", "secret").test_credentials().await.unwrap_err();
        assert_error(&err, ErrorCode::Protocol, &["token response", words]);
    }
}

/// A page that never ends (a JSON array streamed for ever, no length): the client stops at
/// its cap of 16 MiB with an error naming it, and memory stays bounded.
#[tokio::test]
async fn an_endless_answer_stops_at_the_size_cap_in_bounded_memory() {
    let c = answering(|| async {
        let item = Bytes::from(r#"{"id": "00000000-0000-0000-0000-000000000001", "name": "m"},"#.repeat(1024));
        let endless = stream::once(async { Ok(Bytes::from_static(b"{\"items\": [")) })
            .chain(stream::repeat(item).map(Ok::<_, std::io::Error>));
        json_with("application/json", Body::from_stream(endless))
    })
    .await;
    let (err, grown) =
        peak_growth(within(Duration::from_secs(5), c.firmware().modules_page(&ModuleFilter::default()))).await;
    let err = err.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["answer is too large", "more than", "16777216 bytes"]);
    assert!(grown < MEMORY_BOUND_MIB, "peak resident memory grew by {grown} MiB");
}

/// An answer announcing 1 GB is refused on its headers, before its body is read.
#[tokio::test]
async fn an_answer_announcing_a_gigabyte_is_refused_before_it_is_read() {
    let c = answering(|| async {
        let zeros = stream::repeat(Bytes::from(vec![b' '; 64 * 1024])).map(Ok::<_, std::io::Error>);
        ([("content-type", "application/json"), ("content-length", "1000000000")], Body::from_stream(zeros))
            .into_response()
    })
    .await;
    let (err, grown) =
        peak_growth(within(Duration::from_secs(2), c.firmware().modules_page(&ModuleFilter::default()))).await;
    let err = err.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["answer is too large: 1000000000 bytes announced"]);
    assert!(grown < MEMORY_BOUND_MIB, "peak resident memory grew by {grown} MiB");
}

/// 10 MB of headers, in one header or in 20,000: the HTTP stack reads at most about 400 KiB of
/// them (and 100 headers); the error says so, is not retried, and memory stays bounded.
#[tokio::test]
async fn ten_megabytes_of_headers_are_refused_in_bounded_memory() {
    for many in [false, true] {
        let c = answering(move || async move {
            let mut res = json_with("application/json", r#"{"items": []}"#);
            let h = res.headers_mut();
            if many {
                let value = HeaderValue::from_str(&"v".repeat(512)).unwrap();
                for i in 0..20_000 {
                    h.insert(HeaderName::try_from(format!("x-hostile-{i}")).unwrap(), value.clone());
                }
            } else {
                h.insert("x-hostile", HeaderValue::from_str(&"v".repeat(10 * 1024 * 1024)).unwrap());
            }
            res
        })
        .await;
        let (err, grown) =
            peak_growth(within(Duration::from_secs(4), c.firmware().modules_page(&ModuleFilter::default()))).await;
        let err = err.unwrap_err();
        eprintln!("{err:?}");
        assert_error(&err, ErrorCode::Protocol, &["could not be read as HTTP", "message head is too large"]);
        assert!(grown < MEMORY_BOUND_MIB, "peak resident memory grew by {grown} MiB");
    }
}

/// `/r/{status}/self` redirects to itself, `/r/{status}/a` and `b` to each other, `/r/{status}/away`
/// to `away` (another origin).
async fn redirecting(away: String, uri: Uri) -> Response {
    let parts: Vec<&str> = uri.path().split('/').collect();
    let (status, to) = (parts[2].parse::<u16>().unwrap(), parts[3]);
    let location = match to {
        "self" => uri.path().to_owned(),
        "a" => format!("/r/{status}/b"),
        "b" => format!("/r/{status}/a"),
        _ => away,
    };
    (StatusCode::from_u16(status).unwrap(), [("location", location)]).into_response()
}

/// Redirects of an ordinary GET: in circles (to itself, between two paths) they are followed
/// at most 10 times, then stopped with a protocol error saying so; a redirect to another origin
/// is not followed (the other origin hears nothing), a protocol error naming where it led; a
/// 302 is not followed either: the beta API's refusal of a token, unauthorized, naming it too.
#[tokio::test]
async fn redirect_loops_and_redirects_away_end_with_a_clear_error() {
    let trap = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let away = format!("http://{}/steal", trap.local_addr().unwrap());
    let heard = Arc::new(AtomicUsize::new(0));
    let h2 = heard.clone();
    tokio::spawn(async move {
        while let Ok((_s, _)) = trap.accept().await {
            h2.fetch_add(1, Ordering::SeqCst);
        }
    });
    let to = away.clone();
    let (base, c) = hostile(Router::new().fallback(move |uri: Uri| redirecting(to.clone(), uri))).await;
    let get = |path: String| {
        let c = c.clone();
        let url = Url::parse(&format!("{base}{path}")).unwrap();
        async move { within(Duration::from_secs(2), c.firmware().modules_page_at(&url)).await.unwrap_err() }
    };
    for status in [301, 307, 308] {
        for shape in ["self", "a"] {
            let err = get(format!("/r/{status}/{shape}")).await;
            assert_error(&err, ErrorCode::Protocol, &["redirects did not end", "more than 10"]);
        }
        let err = get(format!("/r/{status}/away")).await;
        assert_error(
            &err,
            ErrorCode::Protocol,
            &[&format!("answered {status}, a redirect to {away}"), "does not follow"],
        );
    }
    // A 302 is the beta API's answer to a bad token (reference 4.5), whatever it points to.
    for shape in ["self", "a", "away"] {
        let err = get(format!("/r/302/{shape}")).await;
        assert_error(&err, ErrorCode::Unauthorized, &["302 Found: a redirect to", "not followed"]);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(heard.load(Ordering::SeqCst), 0, "the other origin was reached");
}

/// The beta listing pages by number until a page says `last`: a service that never does and
/// answers the same devices again (A, B, A...) is stopped at the first page bringing nothing
/// new, instead of being read for ever.
#[tokio::test]
async fn a_beta_listing_answering_the_same_pages_again_stops() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    let c = answering(move |Query(q): Query<Vec<(String, String)>>| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move {
            let page: u32 = q.iter().find(|(k, _)| k == "currentPage").map_or(0, |(_, v)| v.parse().unwrap());
            let device = format!("00000000-0000-0000-0001-00000000000{}", page % 2);
            let body =
                json!({"content": [{"uuid": device, "name": "d", "deviceSpecificationUUID": device}], "last": false});
            json_with("application/json", body.to_string())
        }
    })
    .await;
    let err = within(Duration::from_secs(2), c.beta().all_devices(&Default::default())).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["page 2 of the device listing brings only devices already listed"]);
    assert_eq!(seen.load(Ordering::SeqCst), 3, "pages 0, 1 and 2");
}

/// A download streams to disk whatever its size, but a service that never answers it, or stops
/// sending half-way, ends it at the read timeout, and no partial file is left.
#[tokio::test]
async fn a_download_that_stalls_ends_at_the_read_timeout_and_leaves_no_part_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("fw.bin");
    let package = Uuid::nil();

    let c = answering(std::future::pending::<Response>).await;
    let err =
        within(Duration::from_secs(3), c.firmware().download_firmware_file(package, &target, &Default::default()))
            .await
            .unwrap_err();
    assert_error(
        &err,
        ErrorCode::Network,
        &["could not reach", "no answer within 1500 ms (the client's read timeout)"],
    );

    let c = answering(|| async {
        let stuck =
            stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(b"0123456789")) }).chain(stream::pending());
        ([("content-type", "application/octet-stream"), ("content-length", "100")], Body::from_stream(stuck))
            .into_response()
    })
    .await;
    let err =
        within(Duration::from_secs(3), c.firmware().download_firmware_file(package, &target, &Default::default()))
            .await
            .unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["stopped arriving", "no byte for 1500 ms after 10 bytes"]);

    let c = answering(|| async {
        ([("content-type", "application/octet-stream"), ("content-length", "100")], cut_after(vec![b"0123456789"]))
            .into_response()
    })
    .await;
    let err = c.firmware().download_firmware_file(package, &target, &Default::default()).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["answer was cut short", "after 10 bytes of the 100 announced"]);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A token HTTP cannot carry in a header (a line break in it) is a protocol error naming it,
/// not "could not reach" after four attempts; the service's refusal with a 1 MB `detail` is
/// shown cut to its start.
#[tokio::test]
async fn a_token_no_header_can_carry_and_a_huge_refusal_are_named_briefly() {
    let app = Router::new().route(
        "/api/v3/idp/oidc/token",
        post(|| async {
            Json(json!({"access_token": "t\r\nx-injected: 1", "token_type": "Bearer", "expires_in": 3600}))
        }),
    );
    let base = common::serve(app).await;
    let err = within(
        Duration::from_secs(1),
        common::client_at(&base, "key", "secret").firmware().modules_page(&ModuleFilter::default()),
    )
    .await
    .unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["could not be made", "access token"]);

    let c = answering(|| async {
        let problem =
            json!({"type": "about:blank", "title": "Bad Request", "status": 400, "detail": "x".repeat(1 << 20)});
        (StatusCode::BAD_REQUEST, [("content-type", "application/problem+json")], problem.to_string()).into_response()
    })
    .await;
    let err = c.firmware().modules_page(&ModuleFilter::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadRequest);
    assert_eq!(err.problem().unwrap().detail.as_ref().unwrap().len(), 1 << 20, "the document is kept whole");
    assert!(err.to_string().len() < 2100, "the message is cut: {} characters", err.to_string().len());
    assert!(err.to_string().ends_with("… (1048576 characters in all)"), "{}", &err.to_string()[2000..]);
}

/// A document from another server (the app's update manifest, `answer::get_document`) is read
/// with the same bounds as the service's answers: an endless one stops at the size cap in
/// bounded memory, a stalled one at the read timeout; redirects in circles end; a 204 is
/// nothing to give, another status or an HTML page is named as such.
#[tokio::test]
async fn a_document_from_another_server_is_read_within_the_same_bounds() {
    let app = Router::new()
        .route("/latest.json", get(|| async { Json(json!({"version": "9.9.9"})) }))
        .route("/none", get(|| async { StatusCode::NO_CONTENT }))
        .route("/gone", get(|| async { StatusCode::GONE }))
        .route("/html", get(|| async { ([("content-type", "text/html")], "<html>login</html>") }))
        .route("/moved", get(|| async { (StatusCode::FOUND, [("location", "/latest.json")]) }))
        .route("/circle", get(|| async { (StatusCode::FOUND, [("location", "/circle")]) }))
        .route(
            "/endless",
            get(|| async {
                let start = stream::once(async { Ok(Bytes::from_static(b"{\"notes\": \"")) });
                Body::from_stream(
                    start.chain(stream::repeat(Bytes::from(vec![b'a'; 64 * 1024])).map(Ok::<_, std::io::Error>)),
                )
            }),
        )
        .route(
            "/stalls",
            get(|| async {
                let start = stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(b"{\"version\": ")) });
                Body::from_stream(start.chain(stream::pending()))
            }),
        );
    let base = common::serve(app).await;
    let at = |p: &str| Url::parse(&format!("{base}{p}")).unwrap();
    let limits = Limits { max_answer: 1024 * 1024, ..test_limits() };
    let get = |p: &str| {
        let (url, limits) = (at(p), limits.clone());
        async move { dcs_api::answer::get_document(&url, &limits).await }
    };

    assert_eq!(get("/latest.json").await.unwrap(), Some(json!({"version": "9.9.9"})));
    assert_eq!(get("/moved").await.unwrap(), Some(json!({"version": "9.9.9"})), "a redirect is followed");
    assert_eq!(get("/none").await.unwrap(), None);
    assert_error(&get("/gone").await.unwrap_err(), ErrorCode::Protocol, &["answered 410 Gone", "/gone"]);
    assert_error(&get("/html").await.unwrap_err(), ErrorCode::Protocol, &["HTML", "not JSON"]);
    assert_error(
        &get("/circle").await.unwrap_err(),
        ErrorCode::Protocol,
        &["redirects were not followed", "at most 5"],
    );
    let (err, grown) = peak_growth(within(Duration::from_secs(5), get("/endless"))).await;
    assert_error(&err.unwrap_err(), ErrorCode::Protocol, &["too large", "1048576 bytes"]);
    assert!(grown < 64, "grew by {grown} MiB");
    let err = within(Duration::from_secs(4), get("/stalls")).await.unwrap_err();
    assert_error(&err, ErrorCode::Protocol, &["stopped arriving"]);
}
