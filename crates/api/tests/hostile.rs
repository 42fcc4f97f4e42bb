//! The client against a hand-made hostile service (axum): absurd token lifetimes, page links
//! that loop, and refusals counted request by request.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use dcs_api::firmware::{ModuleFilter, NewPackage};
use dcs_api::{Client, ErrorCode};
use futures::TryStreamExt;
use serde_json::{json, Value};
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
