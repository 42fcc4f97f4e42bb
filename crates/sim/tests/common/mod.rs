//! What every simulator test starts with: a simulator on a free loopback port and a token of
//! its demo reseller. Each test file uses the parts it needs.
#![allow(dead_code)]

use std::net::SocketAddr;

use dcs_sim::{RunningSim, SimOptions, Simulator};
use serde_json::{json, Value};

pub const AUDIENCE: &str = "4dc82561-f65f-523g-dek9-6c79ec314f02";

pub struct Env {
    pub sim: Simulator,
    pub running: RunningSim,
    pub base: String,
    pub http: reqwest::Client,
    pub token: String,
}

/// A simulator with `opts`, serving over HTTP, and the demo reseller's token.
pub async fn start(opts: SimOptions) -> Env {
    let sim = Simulator::new(opts).unwrap();
    let running = sim.spawn(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let base = running.base_url();
    // Never follows redirects, so the beta API's 302s are seen as they are.
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let token = demo_token(&sim, &http, &base).await;
    Env { sim, running, base, http, token }
}

/// A token for the demo reseller's key.
pub async fn demo_token(sim: &Simulator, http: &reqwest::Client, base: &str) -> String {
    let key = sim.demo_key();
    token_for(http, base, &key.key_id, &key.secret).await
}

/// A token for any API key of the simulator.
pub async fn token_for(http: &reqwest::Client, base: &str, id: &str, secret: &str) -> String {
    let res = http
        .post(format!("{base}/api/v3/idp/oidc/token"))
        .json(&json!({"grant_type": "client_credentials", "audience": AUDIENCE, "client_id": id, "client_secret": secret}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), reqwest::StatusCode::OK, "token for {id}");
    let body: Value = res.json().await.unwrap();
    body["access_token"].as_str().expect("a token").to_owned()
}

pub fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
