//! The simulator every client integration test talks to: the variant named by
//! `DCS_SIM_VARIANT` (`reference` when unset, `alt` for the second pass of
//! `scripts/test-session.sh`), so one test proves the client against two plausible services.
//! Each test file has `mod common;` and starts its simulators only through [`start`] or
//! [`simulator`], its hand-made services through [`serve`], and builds its clients through
//! [`client`], [`key_client`], [`client_at`] or [`config_at`].
#![allow(dead_code)]

use std::net::SocketAddr;

use dcs_api::{Client, ClientConfig, Secret};
use dcs_sim::{DemoKey, RunningSim, SimOptions, Simulator, Variant};

/// The variant these tests run against.
pub fn variant() -> Variant {
    Variant::from_env().unwrap_or_else(|e| panic!("{e}"))
}

/// Whether the tests run against the alt variant (for the few assertions of a choice the
/// variants make differently: each branch asserts its own variant's behaviour).
pub fn alt() -> bool {
    variant().is_alt()
}

/// A simulator with `opts`, playing the variant of [`variant`], not yet listening.
pub fn simulator(opts: SimOptions) -> Simulator {
    Simulator::new(SimOptions { variant: variant(), ..opts }).unwrap()
}

/// A simulator with `opts` serving on a free loopback port.
pub async fn start(opts: SimOptions) -> (Simulator, RunningSim) {
    let sim = simulator(opts);
    let running = sim.spawn(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    (sim, running)
}

/// A module held by the simulator as the running variant answers it: the alt variant leaves
/// out the optional `clientId`, `createdBy` and `modifiedBy` and adds `_links` and `tenantId`
/// (kept by the client among the unknown members).
pub fn as_answered(sim: &Simulator, mut m: dcs_api::model::FirmwareModule) -> dcs_api::model::FirmwareModule {
    if alt() {
        m.client_id = None;
        m.created_by = None;
        m.modified_by = None;
        m.extra
            .insert("_links".into(), serde_json::json!({ "self": { "href": format!("/firmware/modules/{}", m.id) } }));
        m.extra.insert("tenantId".into(), sim.tenant_id().into());
    }
    m
}

/// Serves a hand-made service `app` on a free loopback port; answers its base URL.
pub async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// The configuration of a client of the service at `base` (its token endpoint at the same
/// base) with the key `key_id` and `secret`.
pub fn config_at(base: &str, key_id: &str, secret: &str) -> ClientConfig {
    ClientConfig::new(base, base, key_id, Secret::new(secret)).unwrap()
}

/// A client of the service at `base` (its token endpoint at the same base) with the key
/// `key_id` and `secret`.
pub fn client_at(base: &str, key_id: &str, secret: &str) -> Client {
    Client::new(config_at(base, key_id, secret)).unwrap()
}

/// A client of a running simulator with the key `key_id` and `secret`.
pub fn client(running: &RunningSim, key_id: &str, secret: &str) -> Client {
    client_at(&running.base_url(), key_id, secret)
}

/// The configuration of a client of a running simulator with one of its keys.
pub fn key_config(running: &RunningSim, key: &DemoKey) -> ClientConfig {
    let base = running.base_url();
    ClientConfig::new(&base, &base, &key.key_id, Secret::new(key.secret.clone())).unwrap()
}

/// A client of a running simulator with one of its keys.
pub fn key_client(running: &RunningSim, key: &DemoKey) -> Client {
    Client::new(key_config(running, key)).unwrap()
}
