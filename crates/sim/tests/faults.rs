//! Fault injection per request (`X-Sim-Fault`) and per run (`/_sim/faults`), and the control
//! endpoints, over real HTTP.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dcs_sim::faults::Faults;
use dcs_sim::{RunningSim, SimOptions, Simulator};
use reqwest::StatusCode;
use serde_json::{json, Value};

const AUDIENCE: &str = "4dc82561-f65f-523g-dek9-6c79ec314f02";

async fn start() -> (Simulator, RunningSim, reqwest::Client, String) {
    let sim = Simulator::new(SimOptions { devices_per_client: 20, ..Default::default() }).unwrap();
    let running = sim.spawn(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let http = reqwest::Client::new();
    let token = fetch_token(&sim, &http, &running.base_url(), None).await.0;
    (sim, running, http, token)
}

async fn fetch_token(sim: &Simulator, http: &reqwest::Client, base: &str, fault: Option<&str>) -> (String, u64) {
    let key = sim.demo_key();
    let mut req = http
        .post(format!("{base}/api/v3/idp/oidc/token"))
        .json(&json!({"grant_type": "client_credentials", "audience": AUDIENCE, "client_id": key.key_id, "client_secret": key.secret}));
    if let Some(f) = fault {
        req = req.header("X-Sim-Fault", f);
    }
    let body: Value = req.send().await.unwrap().json().await.unwrap();
    (body["access_token"].as_str().unwrap().to_owned(), body["expires_in"].as_u64().unwrap())
}

#[tokio::test]
async fn per_request_directives() {
    let (sim, running, http, token) = start().await;
    let url = format!("{}/firmware/modules", running.base_url());
    let get = |fault: &'static str| http.get(&url).bearer_auth(&token).header("X-Sim-Fault", fault).send();

    let res = get("status=503").await.unwrap();
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(res.headers()["content-type"], "application/problem+json");

    let res = get("status=429, retry-after=3").await.unwrap();
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(res.headers()["retry-after"], "3");

    let started = Instant::now();
    assert_eq!(get("latency=300").await.unwrap().status(), StatusCode::OK);
    assert!(started.elapsed() >= Duration::from_millis(300));

    let err = get("drop").await.unwrap_err();
    assert!(err.is_request() || err.is_connect() || err.to_string().contains("connection"), "{err}");

    assert_eq!(get("error-rate=1").await.unwrap().status().as_u16() / 100, 5);

    let res = get("explode").await.unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let p: Value = res.json().await.unwrap();
    assert_eq!(p["invalidParams"][0]["name"], "X-Sim-Fault");

    // A token that lives one second.
    let (short, expires_in) = fetch_token(&sim, &http, &running.base_url(), Some("token-lifetime=1")).await;
    assert_eq!(expires_in, 1);
    assert_eq!(http.get(&url).bearer_auth(&short).send().await.unwrap().status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(http.get(&url).bearer_auth(&short).send().await.unwrap().status(), StatusCode::UNAUTHORIZED);
    // The simulator still serves after all that.
    assert_eq!(http.get(&url).bearer_auth(&token).send().await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn per_run_faults_and_control_endpoints() {
    let (sim, running, http, token) = start().await;
    let base = running.base_url();
    let url = format!("{base}/firmware/modules");

    // A rate limit: a burst above it gets 429s with Retry-After.
    let res = http.put(format!("{base}/_sim/faults")).json(&json!({"rateLimit": 5})).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let mut limited = 0;
    for _ in 0..20 {
        let res = http.get(&url).bearer_auth(&token).send().await.unwrap();
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            assert!(res.headers()["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);
            limited += 1;
        }
    }
    assert!(limited >= 10, "{limited} of 20 limited");

    // Every request a 5xx; the control endpoints are never affected.
    sim.set_faults(Faults { error_rate: 1.0, ..Default::default() });
    assert_eq!(http.get(&url).bearer_auth(&token).send().await.unwrap().status().as_u16() / 100, 5);
    let info: Value = http.get(format!("{base}/_sim/info")).send().await.unwrap().json().await.unwrap();
    assert_eq!(info["faults"]["errorRate"], 1.0);
    let names: Vec<&str> = info["customers"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 3, "the demo reseller's customers are listed: {names:?}");
    let res = http.put(format!("{base}/_sim/faults")).json(&json!({"errorRate": 2})).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let res = http.put(format!("{base}/_sim/faults")).json(&json!({"colour": 1})).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    http.put(format!("{base}/_sim/faults")).json(&json!({})).send().await.unwrap();
    assert_eq!(http.get(&url).bearer_auth(&token).send().await.unwrap().status(), StatusCode::OK);

    // Clock speed, and a reset that brings back the seed.
    let res: Value =
        http.put(format!("{base}/_sim/clock")).json(&json!({"speed": 120})).send().await.unwrap().json().await.unwrap();
    assert_eq!(res["speed"], 120.0);
    assert_eq!(
        http.put(format!("{base}/_sim/clock")).json(&json!({"speed": 0})).send().await.unwrap().status(),
        StatusCode::BAD_REQUEST
    );
    let module: Value =
        http.get(format!("{url}?limit=1")).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
    let m = &module["items"][0];
    let created = http
        .post(format!("{base}/firmware/packages"))
        .bearer_auth(&token)
        .json(&json!({"deviceSpecificationId": m["deviceSpecificationId"], "moduleId": m["id"], "firmwareVersion": "8.8.8"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let id = created.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
    assert_eq!(http.post(format!("{base}/_sim/reset")).send().await.unwrap().status(), StatusCode::NO_CONTENT);
    let gone = http.get(format!("{base}/firmware/packages/{id}")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

/// A speed the clock cannot run at (not finite, 0 or less, or above a million) is a 400 naming
/// `speed`, and the clock goes on at its speed: reading it never panics and the speed can be
/// set back.
#[tokio::test]
async fn an_absurd_clock_speed_is_refused_and_changes_nothing() {
    let (_sim, running, http, _token) = start().await;
    let base = running.base_url();
    for speed in [json!(1e308), json!(2_000_000), json!(-1), json!("fast")] {
        let res = http.put(format!("{base}/_sim/clock")).json(&json!({ "speed": speed })).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{speed}");
        assert_eq!(res.headers()["content-type"], "application/problem+json");
        let p: Value = res.json().await.unwrap();
        assert_eq!(p["invalidParams"][0]["name"], "speed", "{p}");
        let state: Value = http.get(format!("{base}/_sim/info")).send().await.unwrap().json().await.unwrap();
        assert_eq!(state["speed"], 1.0, "{speed}");
    }
    let res = http.put(format!("{base}/_sim/clock")).json(&json!({"speed": 1_000_000})).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let res = http.put(format!("{base}/_sim/clock")).json(&json!({"speed": 2})).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
}

/// A token lifetime no token can have (`X-Sim-Fault: token-lifetime=<u64::MAX>`) is a 400
/// naming the directive, not a panic.
#[tokio::test]
async fn an_absurd_token_lifetime_directive_is_refused() {
    let (sim, running, http, _token) = start().await;
    let key = sim.demo_key();
    let res = http
        .post(format!("{}/api/v3/idp/oidc/token", running.base_url()))
        .header("X-Sim-Fault", "token-lifetime=18446744073709551615")
        .json(&json!({"grant_type": "client_credentials", "audience": AUDIENCE, "client_id": key.key_id, "client_secret": key.secret}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let p: Value = res.json().await.unwrap();
    assert_eq!(p["invalidParams"][0]["name"], "X-Sim-Fault", "{p}");
    assert!(p["detail"].as_str().unwrap().contains("token-lifetime"), "{p}");
}

/// Options the simulator cannot run with are refused when it is created, naming the setting.
#[test]
fn options_it_cannot_run_with_are_refused() {
    for (opts, name) in [
        (SimOptions { speed: f64::INFINITY, ..Default::default() }, "speed"),
        (SimOptions { speed: 1e308, ..Default::default() }, "speed"),
        (SimOptions { token_lifetime: Duration::from_secs(u64::MAX), ..Default::default() }, "tokenLifetime"),
        (SimOptions { devices_per_client: 0, ..Default::default() }, "devicesPerClient"),
    ] {
        let err = Simulator::new(opts).err().expect("refused").to_string();
        assert!(err.starts_with(&format!("{name}: ")), "{err}");
    }
}
