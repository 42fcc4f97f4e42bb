//! An edit starts from the binding as the service holds it: a full-replacement `PUT` sends back
//! the members this version does not know. Against a hand-made service (axum), as the simulator
//! adds no such members.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use dcs_api::model::BindingKind;
use dcs_api::{Client, ClientConfig, Secret};
use dcs_console::bindings::{self, BindingDraft};
use serde_json::{json, Value};

const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

type Puts = Arc<Mutex<Vec<Value>>>;

async fn token() -> Json<Value> {
    Json(json!({"access_token": "t", "token_type": "Bearer", "expires_in": 3600}))
}

/// The binding as this service holds it: no `createdBy` and friends, two members this version
/// does not know, and a time without offset.
async fn read(Path(id): Path<String>) -> Json<Value> {
    Json(json!({
        "id": id, "deviceId": "00000000-0000-0000-0001-000000000001", "type": "http-senml",
        "sharedSecret": "stored secret", "tlsProfile": {"minVersion": "1.3"}, "uplinkQuota": 500,
        "createdAt": "2026-01-02T03:04:05"
    }))
}

async fn replace(State(puts): State<Puts>, Path(id): Path<String>, Json(body): Json<Value>) -> Json<Value> {
    puts.lock().unwrap().push(body.clone());
    let mut answer = body;
    answer["id"] = json!(id);
    Json(answer)
}

async fn serve() -> (Client, Puts) {
    let puts = Puts::default();
    let app = Router::new()
        .route("/api/v3/idp/oidc/token", post(token))
        .route("/http/bindings/{id}", get(read).put(replace))
        .with_state(puts.clone());
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let base = format!("http://{addr}");
    (Client::new(ClientConfig::new(&base, &base, "key", Secret::new("secret")).unwrap()).unwrap(), puts)
}

fn draft(secret: Option<&str>) -> BindingDraft {
    serde_json::from_value(json!({
        "kind": "http", "deviceId": "imei:350000000000001", "applicationServerId": null,
        "type": "http-streamline", "secret": secret
    }))
    .unwrap()
}

#[tokio::test]
async fn an_edit_sends_back_the_members_this_version_does_not_know() {
    let (client, puts) = serve().await;
    let id = ID.parse().unwrap();
    let updated = bindings::update(&client, id, &draft(None)).await.unwrap();
    assert_eq!(updated.binding_type.as_deref(), Some("http-streamline"));

    let body = puts.lock().unwrap().pop().expect("a PUT was sent");
    assert_eq!(body["tlsProfile"], json!({"minVersion": "1.3"}), "{body}");
    assert_eq!(body["uplinkQuota"], 500, "{body}");
    assert_eq!(body["sharedSecret"], "stored secret", "no secret typed: the stored one is kept");
    assert_eq!(body["type"], "http-streamline", "the draft's fields win");
    assert_eq!(body["deviceId"], "imei:350000000000001");
    assert!(body.get("createdAt").is_none() && body.get("id").is_none(), "read-only members are not sent: {body}");

    // A typed secret is sent as typed (its rule is the service's), the unknown members still go back.
    bindings::update(&client, id, &draft(Some("short"))).await.unwrap();
    let body = puts.lock().unwrap().pop().unwrap();
    assert_eq!((body["sharedSecret"].as_str(), body["uplinkQuota"].as_i64()), (Some("short"), Some(500)));

    // A bad field is named before anything is asked.
    let mut bad = draft(None);
    bad.device_id = "imei:12".into();
    let err = bindings::update(&client, id, &bad).await.unwrap_err();
    assert!(err.to_string().starts_with("deviceId:"), "{err}");
    assert!(puts.lock().unwrap().is_empty());
    assert_eq!(
        bindings::get(&client, BindingKind::Http, id).await.unwrap().created_at.as_deref(),
        Some("2026-01-02T03:04:05Z")
    );
}
