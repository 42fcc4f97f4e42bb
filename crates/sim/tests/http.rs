//! The simulator over real HTTP on a loopback port: auth, paging, problems, reseller context.

use std::net::SocketAddr;
use std::time::Duration;

use dcs_sim::{RunningSim, SimOptions, Simulator};
use reqwest::StatusCode;
use serde_json::{json, Value};

const AUDIENCE: &str = "4dc82561-f65f-523g-dek9-6c79ec314f02";

async fn start(opts: SimOptions) -> (Simulator, RunningSim, reqwest::Client) {
    let sim = Simulator::new(opts).unwrap();
    let running = sim.spawn(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    (sim, running, reqwest::Client::new())
}

async fn token_for(http: &reqwest::Client, base: &str, id: &str, secret: &str) -> reqwest::Response {
    http.post(format!("{base}/api/v3/idp/oidc/token"))
        .json(&json!({"grant_type": "client_credentials", "audience": AUDIENCE, "client_id": id, "client_secret": secret}))
        .send()
        .await
        .unwrap()
}

async fn demo_token(sim: &Simulator, http: &reqwest::Client, base: &str) -> String {
    let key = sim.demo_key();
    let res = token_for(http, base, &key.key_id, &key.secret).await;
    assert_eq!(res.status(), StatusCode::OK);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    let token = body["access_token"].as_str().unwrap().to_owned();
    assert_eq!(token.split('.').count(), 3, "a JWT has three dot-separated parts");
    token
}

async fn problem(res: reqwest::Response) -> (StatusCode, Value) {
    let status = res.status();
    assert_eq!(res.headers()["content-type"], "application/problem+json");
    (status, res.json().await.unwrap())
}

#[tokio::test]
async fn token_exchange_refuses_bad_requests_with_the_platforms_messages() {
    let (sim, running, http) = start(SimOptions::default()).await;
    let base = running.base_url();
    let key = sim.demo_key();

    let (status, body) = problem(token_for(&http, &base, &key.key_id, "wrong-secret").await).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["detail"], "Feature user does not exist anymore");

    let (status, body) =
        problem(token_for(&http, &base, "sim-no-service", &format!("{}-no-service", key.secret)).await).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["detail"], "Feature service does not exist anymore");

    let res = http
        .post(format!("{base}/api/v3/idp/oidc/token"))
        .json(&json!({"grant_type": "client_credentials", "audience": AUDIENCE, "client_id": key.key_id}))
        .send()
        .await
        .unwrap();
    let (status, body) = problem(res).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["invalidParams"][0]["name"], "client_secret");
    assert_eq!(body["instance"], "/api/v3/idp/oidc/token");
}

#[tokio::test]
async fn modules_page_through_opaque_cursors_with_next_and_prev() {
    let (sim, running, http) = start(SimOptions::default()).await;
    let base = running.base_url();
    let token = demo_token(&sim, &http, &base).await;

    // Everything in one page, as the reference for all others.
    let all: Value = http
        .get(format!("{base}/firmware/modules?limit=1000&sort=name"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let all_names: Vec<String> =
        all["items"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap().to_owned()).collect();
    assert!(all_names.len() >= 4, "the demo reseller has modules");
    assert!(all.get("next").is_none() && all.get("prev").is_none());
    let mut sorted = all_names.clone();
    sorted.sort();
    assert_eq!(all_names, sorted, "sort=name orders by name");

    // The same list two at a time, following next links only.
    let mut url = format!("{base}/firmware/modules?limit=2&sort=name");
    let mut names = Vec::new();
    let mut pages = 0;
    loop {
        let page: Value = http.get(&url).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
        pages += 1;
        assert_eq!(page.get("prev").is_some(), pages > 1, "prev only after the first page");
        names.extend(page["items"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap().to_owned()));
        match page.get("next").and_then(Value::as_str) {
            Some(next) => url = next.to_owned(),
            None => break,
        }
    }
    assert_eq!(names, all_names);
    assert_eq!(pages, all_names.len().div_ceil(2));

    // Descending sort reverses the order.
    let desc: Value = http
        .get(format!("{base}/firmware/modules?limit=1000&sort=-name"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let desc_names: Vec<&str> = desc["items"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(desc_names, all_names.iter().rev().map(String::as_str).collect::<Vec<_>>());
}

#[tokio::test]
async fn bad_list_parameters_are_400s_naming_the_parameter() {
    let (sim, running, http) = start(SimOptions::default()).await;
    let base = running.base_url();
    let token = demo_token(&sim, &http, &base).await;
    for (query, param) in [
        ("limit=0", "limit"),
        ("limit=abc", "limit"),
        ("limit=1001", "limit"),
        ("sort=colour", "sort"),
        ("sort=name,", "sort"),
        ("cursor=garbage", "cursor"),
        ("deviceSpecificationId=not-a-uuid", "deviceSpecificationId"),
    ] {
        let res = http.get(format!("{base}/firmware/modules?{query}")).bearer_auth(&token).send().await.unwrap();
        let (status, body) = problem(res).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(body["invalidParams"][0]["name"], param, "{query}: {body}");
        assert!(body["detail"].as_str().unwrap().starts_with(param), "{query}: {body}");
    }
}

#[tokio::test]
async fn tokens_are_required_checked_and_expire() {
    let (sim, running, http) = start(SimOptions { token_lifetime: Duration::from_secs(1), ..Default::default() }).await;
    let base = running.base_url();
    let url = format!("{base}/firmware/modules");

    let (status, body) = problem(http.get(&url).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body["detail"].as_str().unwrap().contains("Authorization"));

    let (status, _) = problem(http.get(&url).header("Authorization", "Basic abc").send().await.unwrap()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = problem(http.get(&url).bearer_auth("not.a.jwt").send().await.unwrap()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body["detail"].as_str().unwrap().contains("malformed"));

    let token = {
        let key = sim.demo_key();
        let body: Value = token_for(&http, &base, &key.key_id, &key.secret).await.json().await.unwrap();
        body["access_token"].as_str().unwrap().to_owned()
    };
    assert_eq!(http.get(&url).bearer_auth(&token).send().await.unwrap().status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (status, body) = problem(http.get(&url).bearer_auth(&token).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body["detail"].as_str().unwrap().contains("expired"));

    // A token signed by another simulator (another seed) is not accepted here.
    let (other, other_running, _) = start(SimOptions { seed: 2, ..Default::default() }).await;
    let foreign = demo_token(&other, &http, &other_running.base_url()).await;
    let (status, _) = problem(http.get(&url).bearer_auth(&foreign).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_key_without_firmware_authorization_gets_403() {
    let (sim, running, http) = start(SimOptions::default()).await;
    let base = running.base_url();
    let key = sim.demo_key();
    let body: Value =
        token_for(&http, &base, "sim-no-firmware", &format!("{}-no-firmware", key.secret)).await.json().await.unwrap();
    let token = body["access_token"].as_str().unwrap();
    let (status, body) =
        problem(http.get(format!("{base}/firmware/modules")).bearer_auth(token).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body["detail"].as_str().unwrap().contains("firmware authorization"));
}

#[tokio::test]
async fn reseller_context_switches_data_and_is_checked() {
    let (sim, running, http) = start(SimOptions::default()).await;
    let base = running.base_url();
    let token = demo_token(&sim, &http, &base).await;
    let url = format!("{base}/firmware/modules?limit=1000");
    let clients = sim.store().clients().unwrap();
    let reseller = sim.demo_key().client_id;
    let customers: Vec<_> = clients.iter().filter(|c| c.reseller_id == Some(reseller)).collect();
    assert!(customers.len() >= 3, "the demo reseller has at least three customers");

    let own: Value = http.get(&url).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
    for m in own["items"].as_array().unwrap() {
        assert_eq!(m["clientId"], reseller.to_string());
    }
    for c in &customers {
        let theirs: Value = http
            .get(&url)
            .bearer_auth(&token)
            .header("Service-Security-Context", format!("client:uuid:{}", c.id))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let items = theirs["items"].as_array().unwrap();
        assert!(!items.is_empty());
        for m in items {
            assert_eq!(m["clientId"], c.id.to_string(), "only the customer's own modules");
        }
    }

    let customer = customers[0].id;
    let res = http
        .get(&url)
        .bearer_auth(&token)
        .header("Service-Security-Context", format!("client:uuid:{customer}"))
        .header("Service-Security-Context", format!("client:uuid:{customer}"))
        .send()
        .await
        .unwrap();
    let (status, body) = problem(res).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["invalidParams"][0]["name"], "Service-Security-Context");

    let res = http
        .get(&url)
        .bearer_auth(&token)
        .header("Service-Security-Context", format!("customer:{customer}"))
        .send()
        .await
        .unwrap();
    assert_eq!(problem(res).await.0, StatusCode::BAD_REQUEST);

    let stranger = uuid::Uuid::new_v4();
    let res = http
        .get(&url)
        .bearer_auth(&token)
        .header("Service-Security-Context", format!("client:uuid:{stranger}"))
        .send()
        .await
        .unwrap();
    let (status, body) = problem(res).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body["detail"].as_str().unwrap().contains("reseller"));
}

#[tokio::test]
async fn the_same_seed_gives_the_same_data_and_another_seed_other_data() {
    let a = Simulator::new(SimOptions::default()).unwrap();
    let b = Simulator::new(SimOptions::default()).unwrap();
    let c = Simulator::new(SimOptions { seed: 42, ..Default::default() }).unwrap();
    let list = |s: &Simulator| {
        let owner = s.demo_key().client_id;
        s.store().list_modules(&dcs_sim::store::ModuleQuery { owner, limit: 1000, ..Default::default() }).unwrap()
    };
    assert_eq!(list(&a), list(&b));
    assert_eq!(a.demo_key(), b.demo_key());
    assert_ne!(list(&a).iter().map(|m| m.id).collect::<Vec<_>>(), list(&c).iter().map(|m| m.id).collect::<Vec<_>>());
}

#[test]
fn the_demo_customers_are_known_without_building_the_data_set() {
    for seed in [1, 7, 42] {
        let sim = Simulator::new(SimOptions { seed, devices_per_client: 1, ..Default::default() }).unwrap();
        let reseller = sim.demo_key().client_id;
        let mut held: Vec<(uuid::Uuid, String)> = sim
            .store()
            .clients()
            .unwrap()
            .into_iter()
            .filter(|c| c.reseller_id == Some(reseller))
            .map(|c| (c.id, c.name))
            .collect();
        let mut known: Vec<(uuid::Uuid, String)> =
            dcs_sim::seed::demo_customers(seed).into_iter().map(|(id, n)| (id, n.to_owned())).collect();
        held.sort();
        known.sort();
        assert_eq!(known, held, "seed {seed}");
    }
}

#[tokio::test]
async fn unknown_paths_and_methods_are_problems() {
    let (_sim, running, http) = start(SimOptions::default()).await;
    let base = running.base_url();
    let (status, _) = problem(http.get(format!("{base}/nope")).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = problem(http.delete(format!("{base}/firmware/modules")).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn a_key_without_a_scope_gets_403_naming_it() {
    let (sim, running, http) = start(SimOptions { devices_per_client: 10, ..Default::default() }).await;
    let base = running.base_url();
    let key = sim.demo_key();
    let body: Value =
        token_for(&http, &base, "sim-read-only", &format!("{}-read-only", key.secret)).await.json().await.unwrap();
    let token = body["access_token"].as_str().unwrap();
    let modules: Value = http
        .get(format!("{base}/firmware/modules?limit=1"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let m = &modules["items"][0];
    let res = http
        .post(format!("{base}/firmware/packages"))
        .bearer_auth(token)
        .json(&json!({"deviceSpecificationId": m["deviceSpecificationId"], "moduleId": m["id"], "firmwareVersion": "1.0.1"}))
        .send()
        .await
        .unwrap();
    let (status, body) = problem(res).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body["detail"].as_str().unwrap().contains("firmware.create"), "{body}");
}

/// Requests over the simulator's size limits are refused as problem documents naming the limit,
/// like every other refusal (hyper's own bare 414/431 only beyond 64 KiB of address or 400 KiB
/// of headers, which it reads before the simulator sees the request).
#[tokio::test]
async fn oversized_requests_are_refused_as_problem_documents() {
    let (sim, running, http) = start(SimOptions::default()).await;
    let base = running.base_url();
    let token = demo_token(&sim, &http, &base).await;

    let long = "a".repeat(20_000);
    let res = http.get(format!("{base}/api/devices?search={long}")).bearer_auth(&token).send().await.unwrap();
    let (status, body) = problem(res).await;
    assert_eq!(status, StatusCode::URI_TOO_LONG);
    assert!(body["detail"].as_str().unwrap().contains("8192"), "{body}");

    let res = http
        .get(format!("{base}/firmware/modules"))
        .bearer_auth(&token)
        .header("x-padding", "b".repeat(100_000))
        .send()
        .await
        .unwrap();
    let (status, body) = problem(res).await;
    assert_eq!(status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    assert!(body["detail"].as_str().unwrap().contains("65536"), "{body}");

    // A JSON body over the limit (axum answers it as plain text unless told otherwise).
    let big = json!({"description": "c".repeat(3_000_000)});
    let res = http.post(format!("{base}/firmware/packages")).bearer_auth(&token).json(&big).send().await.unwrap();
    let (status, body) = problem(res).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(body["detail"].as_str().unwrap().contains("bytes"), "{body}");
}

/// A token is good only at the simulator that issued it: the signing key is not derived from
/// the seed (public), so a second simulator with the same seed refuses the first one's token.
#[tokio::test]
async fn a_token_from_another_simulator_with_the_same_seed_is_refused() {
    let (sim_a, running_a, http) = start(SimOptions::default()).await;
    let (_sim_b, running_b, _) = start(SimOptions::default()).await;
    let token = demo_token(&sim_a, &http, &running_a.base_url()).await;
    let ok = http.get(format!("{}/firmware/modules", running_a.base_url())).bearer_auth(&token).send().await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let res = http.get(format!("{}/firmware/modules", running_b.base_url())).bearer_auth(&token).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}
