//! `Content-Type: application/json` where the reference lists it: the token request (5.3), the
//! context switch and the beta actuator POST (4.5). Anything else is a 400 naming
//! `Content-Type` that changes nothing; media parameters such as `; charset=utf-8` are fine.

use dcs_sim::SimOptions;
use reqwest::StatusCode;
use serde_json::{json, Value};

mod common;
use common::{Env, AUDIENCE};

async fn env() -> Env {
    common::start(SimOptions { devices_per_client: 40, ..Default::default() }).await
}

/// The `Content-Type` values each check is tried with: `None` sends no header.
const REFUSED: &[Option<&str>] =
    &[None, Some("text/plain"), Some("application/x-www-form-urlencoded"), Some("application/jsonx")];
const ACCEPTED: &[&str] = &["application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"];

async fn refused_naming_content_type(res: reqwest::Response, what: &str) {
    assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{what}");
    let p: Value = res.json().await.unwrap();
    assert_eq!(p["invalidParams"][0]["name"], "Content-Type", "{what}: {p}");
    assert!(p["detail"].as_str().unwrap().contains("application/json"), "{what}: {p}");
}

#[tokio::test]
async fn the_token_request_needs_a_json_content_type() {
    let e = env().await;
    let key = e.sim.demo_key();
    let body = json!({"grant_type": "client_credentials", "audience": AUDIENCE, "client_id": key.key_id, "client_secret": key.secret})
        .to_string();
    let url = format!("{}/api/v3/idp/oidc/token", e.base);
    for ct in REFUSED {
        let mut req = e.http.post(&url).body(body.clone());
        if let Some(ct) = ct {
            req = req.header("Content-Type", *ct);
        }
        refused_naming_content_type(req.send().await.unwrap(), &format!("token with {ct:?}")).await;
    }
    for ct in ACCEPTED {
        let res = e.http.post(&url).header("Content-Type", *ct).body(body.clone()).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "token with {ct}");
    }
}

#[tokio::test]
async fn the_context_switch_needs_a_json_content_type_though_it_has_no_body() {
    let e = env().await;
    let reseller = e.sim.demo_key().client_id;
    let customer = e.sim.store().clients().unwrap().into_iter().find(|c| c.reseller_id == Some(reseller)).unwrap().id;
    let url = format!("{}/api/v1/lifecycle/clients/{customer}/context-switch", e.base);
    for ct in REFUSED {
        let mut req = e.http.get(&url).bearer_auth(&e.token).header("Accept", "application/json");
        if let Some(ct) = ct {
            req = req.header("Content-Type", *ct);
        }
        refused_naming_content_type(req.send().await.unwrap(), &format!("context switch with {ct:?}")).await;
    }
    assert_eq!(e.sim.store().context_switch_grants().unwrap(), 0, "a refused switch grants nothing");
    for ct in ACCEPTED {
        let res = e
            .http
            .get(&url)
            .bearer_auth(&e.token)
            .header("Accept", "application/json")
            .header("Content-Type", *ct)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK, "context switch with {ct}");
    }
}

#[tokio::test]
async fn the_beta_actuator_post_needs_a_json_content_type() {
    const MEDIA: &str = "application/vnd.service.actuator.v1.response+json";
    let e = env().await;
    let owner = e.sim.demo_key().client_id;
    let (devices, _) = e.sim.store().beta_devices(owner, None, "name", true, 0, 1000).unwrap();
    let urn = devices.into_iter().find(|d| d.connection == "lora").unwrap().network_id();
    let body = json!([{"bn": urn, "n": "payloadHex", "vs": "0A0B"}]).to_string();
    let url = format!("{}/api/actuator/downlinks?port=10", e.base);
    let before = count(&e).await;
    for ct in REFUSED {
        let mut req = e.http.post(&url).bearer_auth(&e.token).header("Accept", MEDIA).body(body.clone());
        if let Some(ct) = ct {
            req = req.header("Content-Type", *ct);
        }
        refused_naming_content_type(req.send().await.unwrap(), &format!("beta actuator with {ct:?}")).await;
    }
    assert_eq!(count(&e).await, before, "a refused request creates nothing");
    for ct in ACCEPTED {
        let res = e
            .http
            .post(&url)
            .bearer_auth(&e.token)
            .header("Accept", MEDIA)
            .header("Content-Type", *ct)
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::CREATED, "beta actuator with {ct}");
    }
    assert_eq!(count(&e).await, before + ACCEPTED.len());
}

async fn count(e: &Env) -> usize {
    let res = e.http.get(format!("{}/downlinks?limit=1000", e.base)).bearer_auth(&e.token).send().await.unwrap();
    res.json::<Value>().await.unwrap()["items"].as_array().unwrap().len()
}
