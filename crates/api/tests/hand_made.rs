//! The client against a tiny hand-made service (axum), for answers and refusals the simulator
//! does not make: a smaller largest page size, answers missing members or carrying new ones,
//! another shape where the reference shows none.

use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use dcs_api::firmware::StateFilter;
use dcs_api::Client;
use futures::TryStreamExt;
use serde_json::{json, Value};

mod common;

/// Everything the fake service was asked: the `limit` of each list request (`None`: absent).
#[derive(Default)]
struct Seen {
    limits: Vec<Option<u32>>,
}

type Shared = Arc<Mutex<Seen>>;

const STATES: usize = 230;
const MAX_LIMIT: u32 = 100;
const DEFAULT_LIMIT: u32 = 50;

fn state(i: usize) -> Value {
    json!({
        "moduleId": format!("00000000-0000-0000-0000-{:012}", 1),
        "deviceId": format!("00000000-0000-0000-0001-{i:012}"),
        "currentFirmwareVersion": "1.0",
        // Members this version does not know, and a time without an offset.
        "rolloutRing": "canary",
        "firmwareUpdateStatusModifiedAt": "2026-01-02T03:04:05"
    })
}

/// `GET /firmware/states`: refuses `limit` over 100 (a `400` naming it), pages by an offset
/// cursor that carries the page size.
async fn states(State(seen): State<Shared>, Query(q): Query<Vec<(String, String)>>) -> Response {
    let get = |name: &str| q.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let (offset, size) = match get("cursor") {
        Some(c) => {
            let (o, s) = c.split_once('-').unwrap();
            (o.parse::<usize>().unwrap(), s.parse::<u32>().unwrap())
        }
        None => {
            let limit = get("limit").map(|l| l.parse::<u32>().unwrap());
            seen.lock().unwrap().limits.push(limit);
            if let Some(l) = limit.filter(|l| *l > MAX_LIMIT) {
                let problem = json!({
                    "type": "about:blank", "title": "Bad Request", "status": 400,
                    "detail": format!("limit {l} is over the maximum page size"),
                    "invalidParams": [{"name": "limit", "reason": "must be 1 to 100"}]
                });
                return (StatusCode::BAD_REQUEST, [("content-type", "application/problem+json")], problem.to_string())
                    .into_response();
            }
            (0, limit.unwrap_or(DEFAULT_LIMIT))
        }
    };
    let end = (offset + size as usize).min(STATES);
    let items: Vec<Value> = (offset..end).map(state).collect();
    let mut page = json!({"items": items});
    if end < STATES {
        page["next"] = json!(format!("states?cursor={end}-{size}"));
    }
    Json(page).into_response()
}

async fn token() -> Json<Value> {
    Json(json!({"access_token": "t", "token_type": "Bearer", "expires_in": 3600}))
}

/// A context switch answered in a shape of its own (the reference shows none).
async fn context_switch(Path(_id): Path<String>) -> Json<Value> {
    Json(json!({"status": "SWITCHED", "validUntil": null}))
}

/// A beta page missing most members, with `sort` as an object.
async fn beta_devices() -> Response {
    let page = json!({
        "content": [{"uuid": "00000000-0000-0000-0001-000000000001", "name": "a",
                     "deviceSpecificationUUID": "00000000-0000-0000-0000-000000000002"}],
        "sort": {"sorted": true, "unsorted": false, "empty": false},
        "pageable": "INSTANCE"
    });
    ([("content-type", dcs_api::model::beta::DEVICE_V1_MEDIA_TYPE)], page.to_string()).into_response()
}

async fn serve() -> (String, Shared) {
    let seen = Shared::default();
    let app = Router::new()
        .route("/api/v3/idp/oidc/token", post(token))
        .route("/firmware/states", get(states))
        .route("/api/v1/lifecycle/clients/{id}/context-switch", get(context_switch))
        .route("/api/devices", get(beta_devices))
        .with_state(seen.clone());
    (common::serve(app).await, seen)
}

fn client(base: &str) -> Client {
    common::client_at(base, "key", "secret")
}

#[tokio::test]
async fn a_limit_the_service_refuses_is_asked_again_and_remembered() {
    let (base, seen) = serve().await;
    let c = client(&base);
    let big = StateFilter { limit: Some(1000), ..Default::default() };

    // Every state arrives although 1000 is refused: the first page is asked again without a
    // limit (the service's default, 50) and the cursors carry on from there.
    let all: Vec<_> = c.firmware().states(&big).unwrap().try_collect().await.unwrap();
    assert_eq!(all.len(), STATES);
    assert_eq!(seen.lock().unwrap().limits, [Some(1000), None]);
    // Read tolerantly: members kept, a time without offset read as UTC.
    assert_eq!(all[0].extra["rolloutRing"], "canary");
    assert_eq!(all[0].firmware_update_status_modified_at, Some(time::macros::datetime!(2026-01-02 03:04:05 UTC)));

    // The client (and its clones) remember: the next list asks straight away for the size the
    // service was seen to give (a full default page, 50), not for 1000 again.
    let (page, next) = c.clone().firmware().states_page(&big).await.unwrap();
    assert_eq!((page.items.len(), next.is_some()), (50, true));
    assert_eq!(seen.lock().unwrap().limits[2..], [Some(50)]);

    // A smaller size is still asked as given, and sizes accepted above the default are used.
    let (page, _) = c.firmware().states_page(&StateFilter { limit: Some(80), ..Default::default() }).await.unwrap();
    assert_eq!(page.items.len(), 80);
    let (page, _) = c.firmware().states_page(&big).await.unwrap();
    assert_eq!(page.items.len(), 80);
    assert_eq!(seen.lock().unwrap().limits[3..], [Some(80), Some(80)]);

    // Another client has learnt nothing yet.
    let fresh = client(&base);
    fresh.firmware().states_page(&big).await.unwrap();
    assert_eq!(seen.lock().unwrap().limits[5..], [Some(1000), None]);
}

#[tokio::test]
async fn a_limit_over_the_maximum_falls_back_once_and_only_a_refusal_naming_limit_counts() {
    let (base, seen) = serve().await;
    // 101 is refused and no smaller size is known: asked again without a limit, once.
    let c = client(&base);
    let (page, _) = c.firmware().states_page(&StateFilter { limit: Some(101), ..Default::default() }).await.unwrap();
    assert_eq!(page.items.len(), DEFAULT_LIMIT as usize);
    assert_eq!(seen.lock().unwrap().limits, [Some(101), None]);
    let other = dcs_api::Error::Api {
        status: 400,
        problem: Box::new(dcs_api::model::Problem::new(400, "Bad Request", "sort field unknown: limitless")),
    };
    assert!(!dcs_api::paging::refuses_limit(&other), "a word containing `limit` is not `limit`");
}

#[tokio::test]
async fn answers_of_other_shapes_are_kept() {
    let (base, _) = serve().await;
    let c = client(&base);
    let switched = c.beta().context_switch(uuid::Uuid::nil()).await.unwrap();
    assert_eq!(switched, json!({"status": "SWITCHED", "validUntil": null}));
    assert!(!dcs_api::model::beta::switch_refused(&switched), "a success status grants the switch");

    let page = c.beta().devices(&Default::default()).await.unwrap();
    assert_eq!(page.content.len(), 1);
    assert!(!page.is_last(), "no `last`: go on until an empty page");
    assert_eq!(page.sort, dcs_api::model::BetaSort::Other(json!({"sorted": true, "unsorted": false, "empty": false})));
    assert_eq!(page.extra["pageable"], "INSTANCE");
}
