//! `GET /openapi.yaml`: the simulator serves its OpenAPI document, without a token and
//! untouched by fault injection, and every path the document lists is one the simulator serves.

use std::net::SocketAddr;

use dcs_sim::faults::Faults;
use dcs_sim::{SimOptions, Simulator};
use reqwest::StatusCode;
use serde_json::Value;

const NIL: &str = "00000000-0000-0000-0000-000000000000";

#[tokio::test]
async fn the_document_is_served_without_a_token_and_never_faulted() {
    let sim = Simulator::new(SimOptions { devices_per_client: 5, ..Default::default() }).unwrap();
    let running = sim.spawn(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let base = running.base_url();
    let http = reqwest::Client::new();

    let res = http.get(format!("{base}/openapi.yaml")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "application/yaml");
    let text = res.text().await.unwrap();
    assert!(text.starts_with("openapi: 3.1"), "{}", &text[..40.min(text.len())]);
    assert_eq!(text, include_str!("../openapi.yaml"));

    // Neither a per-request fault nor a run-wide error rate reaches it.
    let res = http.get(format!("{base}/openapi.yaml")).header("X-Sim-Fault", "status=503").send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    sim.set_faults(Faults { error_rate: 1.0, ..Default::default() });
    let res = http.get(format!("{base}/openapi.yaml")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
}

/// The paths of the document (the `  /...:` keys under `paths:`), with every parameter a nil
/// UUID: each must reach a route of the simulator, not the fallback's 404.
#[tokio::test]
async fn every_documented_path_is_served() {
    let sim = Simulator::new(SimOptions { devices_per_client: 5, ..Default::default() }).unwrap();
    let running = sim.spawn(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let base = running.base_url();
    let http = reqwest::Client::new();
    let doc = include_str!("../openapi.yaml");

    let paths: Vec<&str> = doc
        .lines()
        .filter(|l| l.starts_with("  /") && l.ends_with(':'))
        .map(|l| l.trim().trim_end_matches(':'))
        .collect();
    assert!(paths.len() >= 20, "{paths:?}");
    for path in paths {
        let concrete: String =
            path.split('/').map(|seg| if seg.starts_with('{') { NIL } else { seg }).collect::<Vec<_>>().join("/");
        // A path whose only operation is a PUT or POST answers 405 to an OPTIONS-less GET:
        // either way, it is a route, not the fallback.
        let res = http.get(format!("{base}{concrete}")).send().await.unwrap();
        if res.status() == StatusCode::NOT_FOUND {
            let body: Value = res.json().await.unwrap();
            assert_ne!(body["detail"], "no such operation in this API", "{path} is not served");
        }
    }
}
