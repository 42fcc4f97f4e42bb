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
    let http = reqwest::Client::new();
    let token = demo_token(&sim, &http, &base).await;
    Env { sim, running, base, http, token }
}

/// A token for the demo reseller's key.
pub async fn demo_token(sim: &Simulator, http: &reqwest::Client, base: &str) -> String {
    let key = sim.demo_key();
    let body: Value = http
        .post(format!("{base}/api/v3/idp/oidc/token"))
        .json(&json!({"grant_type": "client_credentials", "audience": AUDIENCE, "client_id": key.key_id, "client_secret": key.secret}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    body["access_token"].as_str().expect("a token").to_owned()
}

pub fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
