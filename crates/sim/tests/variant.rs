//! The alt variant over real HTTP: one test per flip ("A-n (alt)" in
//! docs/simulator-assumptions.md), each asserting the alt answer and, beside it, that the
//! reference variant still answers as its A-n entry says.

use std::time::Duration;

use dcs_sim::{SimOptions, Variant};
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

mod common;
use common::Env;

async fn env(variant: Variant) -> Env {
    env_with(variant, 1.0).await
}

async fn env_with(variant: Variant, speed: f64) -> Env {
    common::start(SimOptions { devices_per_client: 30, speed, variant, ..Default::default() }).await
}

/// An answer: status, headers, body text.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    text: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text))
    }
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }
}

impl Env {
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Answer {
        let mut req = self.http.request(method, format!("{}{path}", self.base)).bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        answer(req).await
    }
    async fn get(&self, path: &str) -> Value {
        let a = self.call(Method::GET, path, None).await;
        assert_eq!(a.status, StatusCode::OK, "GET {path}: {}", a.text);
        a.json()
    }
    async fn step(&self) {
        self.sim.step().unwrap();
    }
}

async fn answer(req: reqwest::RequestBuilder) -> Answer {
    let res = req.send().await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    Answer { status, headers, text: res.text().await.unwrap() }
}

fn items(page: &Value) -> Vec<Value> {
    page["items"].as_array().expect("a page").clone()
}

#[tokio::test]
async fn sim_info_names_the_variant_and_the_control_endpoints_are_unchanged() {
    for variant in [Variant::Reference, Variant::Alt] {
        let e = env(variant).await;
        let info: Value = e.http.get(format!("{}/_sim/info", e.base)).send().await.unwrap().json().await.unwrap();
        assert_eq!(info["variant"], variant.as_str());
        assert_eq!(info["seed"], 1, "{info}");
        let res = e.http.post(format!("{}/_sim/step", e.base)).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert!(res.json::<Value>().await.unwrap()["changed"].is_u64());
    }
}

#[tokio::test]
async fn next_and_prev_links_are_relative_in_alt_absolute_in_reference() {
    let reference = env(Variant::Reference).await;
    let page = reference.get("/firmware/states?limit=2").await;
    assert!(
        page["next"].as_str().unwrap().starts_with(&format!("{}/firmware/states?cursor=", reference.base)),
        "{page}"
    );

    let alt = env(Variant::Alt).await;
    let page = alt.get("/firmware/states?limit=2").await;
    let next = page["next"].as_str().unwrap();
    assert!(next.starts_with("/firmware/states?cursor="), "A-12 (alt): {next}");
    assert!(page.get("prev").is_none());
    // Resolved against the base URL, the link fetches the next page, whose `prev` is relative too.
    let second = alt.get(next).await;
    assert_eq!(items(&second).len(), 2);
    assert_ne!(items(&second)[0], items(&page)[0]);
    assert!(second["prev"].as_str().unwrap().starts_with("/firmware/states?cursor="), "{second}");
}

#[tokio::test]
async fn the_largest_page_is_100_in_alt_and_1000_in_reference() {
    let reference = env(Variant::Reference).await;
    for limit in [101, 1000] {
        assert_eq!(
            reference.call(Method::GET, &format!("/firmware/states?limit={limit}"), None).await.status,
            StatusCode::OK
        );
    }
    assert_eq!(reference.call(Method::GET, "/firmware/states?limit=1001", None).await.status, StatusCode::BAD_REQUEST);

    let alt = common::start(SimOptions { devices_per_client: 100, variant: Variant::Alt, ..Default::default() }).await;
    let page = alt.get("/firmware/states?limit=100").await;
    assert_eq!(items(&page).len(), 100, "a full page of 100");
    assert!(page["next"].is_string());
    for path in [
        "/firmware/states?limit=101",
        "/firmware/modules?limit=1000",
        "/lora/bindings?limit=500",
        "/downlinks?limit=101",
    ] {
        let a = alt.call(Method::GET, path, None).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{path}: {}", a.text);
        let p = a.json();
        assert_eq!(p["invalidParams"][0]["name"], "limit", "{p}");
        assert!(p["detail"].as_str().unwrap().contains("1 to 100"), "{p}");
    }
}

/// The first downlink of `kind`'s list (`/downlinks` or `/{kind}/downlinks`) whose status is `status`.
async fn downlink_with(e: &Env, list: &str, status: &str) -> String {
    let mut path = format!("{list}?limit=100");
    loop {
        let page = e.get(&path).await;
        if let Some(d) = items(&page).into_iter().find(|d| d["status"] == status) {
            return d["id"].as_str().unwrap().to_owned();
        }
        match page["next"].as_str() {
            Some(next) => path = next.strip_prefix(&e.base).unwrap_or(next).to_owned(),
            None => panic!("no {status} downlink in {list}"),
        }
    }
}

#[tokio::test]
async fn every_cancellation_is_202_in_alt_and_the_status_tells_the_outcome() {
    let reference = env(Variant::Reference).await;
    let delivered = downlink_with(&reference, "/downlinks", "DELIVERED").await;
    assert_eq!(
        reference.call(Method::DELETE, &format!("/downlinks/{delivered}"), None).await.status,
        StatusCode::CONFLICT
    );
    let executing = downlink_with(&reference, "/lora/downlinks", "EXECUTING").await;
    assert_eq!(
        reference.call(Method::DELETE, &format!("/lora/downlinks/{executing}"), None).await.status,
        StatusCode::CONFLICT
    );

    let alt = env(Variant::Alt).await;
    // A final one: accepted, and stays as it was.
    for (list, final_status) in [("/downlinks", "DELIVERED"), ("/downlinks", "FAILED"), ("/lora/downlinks", "DONE")] {
        let id = downlink_with(&alt, list, final_status).await;
        let before = alt.get(&format!("{list}/{id}")).await;
        let a = alt.call(Method::DELETE, &format!("{list}/{id}"), None).await;
        assert_eq!((a.status, a.text.as_str()), (StatusCode::ACCEPTED, ""), "{list}/{id}");
        alt.step().await;
        let after = alt.get(&format!("{list}/{id}")).await;
        assert_eq!(after["status"], final_status);
        assert_eq!(after["lastFailureReason"], before["lastFailureReason"]);
    }
    // An executing one without `forced`: accepted, and goes on; with `forced`: cancelled.
    for (list, cancelled) in [("/downlinks", "CANCELLED"), ("/lora/downlinks", "DONE")] {
        let id = downlink_with(&alt, list, "EXECUTING").await;
        assert_eq!(alt.call(Method::DELETE, &format!("{list}/{id}"), None).await.status, StatusCode::ACCEPTED);
        alt.step().await;
        assert_eq!(alt.get(&format!("{list}/{id}")).await["status"], "EXECUTING", "{list}: not forced, not cancelled");
        assert_eq!(
            alt.call(Method::DELETE, &format!("{list}/{id}?forced=true"), None).await.status,
            StatusCode::ACCEPTED
        );
        alt.step().await;
        let after = alt.get(&format!("{list}/{id}")).await;
        assert_eq!(after["status"], cancelled, "{list}: {after}");
        assert_eq!(after["lastFailureReason"], "CANCELLED");
    }
    // Unknown ids and bad `forced` values are still refused.
    let a = alt.call(Method::DELETE, &format!("/lora/downlinks/{}", uuid::Uuid::new_v4()), None).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    let id = downlink_with(&alt, "/lora/downlinks", "DONE").await;
    let a = alt.call(Method::DELETE, &format!("/lora/downlinks/{id}?forced=yes"), None).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn optional_members_are_left_out_in_alt() {
    let reference = env(Variant::Reference).await;
    let alt = env(Variant::Alt).await;

    let module = &items(&reference.get("/firmware/modules?limit=1").await)[0];
    for name in ["createdBy", "modifiedBy", "clientId"] {
        assert!(module.get(name).is_some(), "reference module has {name}: {module}");
    }
    let module = &items(&alt.get("/firmware/modules?limit=1").await)[0];
    for name in ["createdBy", "modifiedBy", "clientId"] {
        assert!(module.get(name).is_none(), "alt module has no {name}: {module}");
    }
    for required in ["id", "name", "firmwareVersionAttributeName", "deviceSpecificationId"] {
        assert!(module.get(required).is_some(), "alt module keeps {required}: {module}");
    }
    // A package's embedded device specification keeps its required `clientId` (section 2.3).
    let package = &items(&alt.get("/firmware/packages?limit=1&embed=deviceSpecification,module").await)[0];
    assert!(package.get("clientId").is_none(), "{package}");
    assert!(package["_embedded"]["deviceSpecification"]["clientId"].is_string(), "{package}");
    assert!(package["_embedded"]["module"].get("clientId").is_none(), "{package}");

    let failed = &items(&reference.get("/firmware/states?firmwareUpdateStatus=FAILED&limit=1").await)[0];
    for name in ["deviceSpecificationId", "clientId", "projectId", "firmwareUpdateStatusDetails"] {
        assert!(failed.get(name).is_some(), "reference state has {name}: {failed}");
    }
    let failed = &items(&alt.get("/firmware/states?firmwareUpdateStatus=FAILED&limit=1").await)[0];
    assert_eq!(failed["firmwareUpdateStatus"], "FAILED");
    for name in ["deviceSpecificationId", "clientId", "projectId", "firmwareUpdateStatusDetails"] {
        assert!(failed.get(name).is_none(), "alt state has no {name}: {failed}");
    }

    // Bindings: no secrets, no createdBy/modifiedBy, LoRa `status` only once it is not INVENTORY.
    for (path, secret) in
        [("/lora/bindings", "appKey"), ("/mqtt/bindings", "password"), ("/http/bindings", "sharedSecret")]
    {
        let b = &items(&reference.get(&format!("{path}?limit=1")).await)[0];
        assert!(b[secret].is_string() && b["createdBy"].is_string(), "reference {path}: {b}");
        let page = alt.get(&format!("{path}?limit=100")).await;
        for b in items(&page) {
            assert!(
                b.get(secret).is_none() && b.get("createdBy").is_none() && b.get("modifiedBy").is_none(),
                "alt {path}: {b}"
            );
            assert!(b["id"].is_string() && b["deviceId"].is_string());
        }
        let one = alt.get(&format!("{path}/{}", items(&page)[0]["id"].as_str().unwrap())).await;
        assert!(one.get(secret).is_none(), "alt {path}/id: {one}");
    }
    let lora = items(&alt.get("/lora/bindings?limit=100").await);
    let statuses: Vec<Option<&str>> = lora.iter().map(|b| b.get("status").and_then(Value::as_str)).collect();
    assert!(statuses.contains(&None), "INVENTORY bindings show no status: {statuses:?}");
    assert!(statuses.iter().all(|s| *s != Some("INVENTORY")), "{statuses:?}");
    let reference_lora = items(&reference.get("/lora/bindings?limit=100").await);
    assert!(reference_lora.iter().any(|b| b["status"] == "INVENTORY"));
}

#[tokio::test]
async fn a_binding_put_without_its_secret_keeps_the_stored_one_in_alt() {
    for variant in [Variant::Reference, Variant::Alt] {
        let e = env(variant).await;
        let b = &items(&e.get("/mqtt/bindings?limit=1").await)[0];
        let id = b["id"].as_str().unwrap();
        let owner = e.sim.demo_key().client_id;
        let stored = |e: &Env| {
            e.sim.store().binding(owner, dcs_model::BindingKind::Mqtt, id.parse().unwrap()).unwrap().unwrap().password
        };
        let before = stored(&e);
        assert!(before.is_some());
        // The answer as it came, sent back (in alt: without the password it never showed).
        let body = json!({ "deviceId": b["deviceId"] });
        let a = e.call(Method::PUT, &format!("/mqtt/bindings/{id}"), Some(body)).await;
        match variant {
            Variant::Reference => {
                assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.text);
                assert_eq!(a.json()["invalidParams"][0]["name"], "password");
            }
            Variant::Alt => {
                assert_eq!(a.status, StatusCode::OK, "{}", a.text);
                assert!(a.json().get("password").is_none());
                assert_eq!(stored(&e), before, "the stored password is kept");
                // A new one given is checked and stored.
                let weak = e
                    .call(
                        Method::PUT,
                        &format!("/mqtt/bindings/{id}"),
                        Some(json!({"deviceId": b["deviceId"], "password": "short"})),
                    )
                    .await;
                assert_eq!(weak.status, StatusCode::BAD_REQUEST);
                assert_eq!(weak.json()["invalidParams"][0]["name"], "password");
                let new = "Another-Password-0123456789";
                let a = e
                    .call(
                        Method::PUT,
                        &format!("/mqtt/bindings/{id}"),
                        Some(json!({"deviceId": b["deviceId"], "password": new})),
                    )
                    .await;
                assert_eq!(a.status, StatusCode::OK, "{}", a.text);
                assert_eq!(stored(&e).as_deref(), Some(new));
            }
        }
    }
}

#[tokio::test]
async fn alt_answers_carry_extra_members() {
    let reference = env(Variant::Reference).await;
    let page = reference.get("/firmware/modules?limit=2").await;
    assert!(page.get("_links").is_none() && items(&page)[0].get("tenantId").is_none(), "{page}");

    let alt = env(Variant::Alt).await;
    let page = alt.get("/firmware/modules?limit=2").await;
    assert_eq!(page["_links"]["self"]["href"], "/firmware/modules", "{page}");
    let module = &items(&page)[0];
    let id = module["id"].as_str().unwrap();
    assert_eq!(module["_links"]["self"]["href"], format!("/firmware/modules/{id}"));
    let tenant = module["tenantId"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(tenant).is_ok());
    let one = alt.get(&format!("/firmware/modules/{id}")).await;
    assert_eq!(
        (one["tenantId"].as_str(), one["_links"]["self"]["href"].as_str()),
        (Some(tenant), Some(format!("/firmware/modules/{id}").as_str()))
    );
    let state = &items(&alt.get("/firmware/states?limit=1").await)[0];
    assert_eq!(
        state["_links"]["target"]["href"],
        format!(
            "/firmware/devices/{}/modules/{}/target",
            state["deviceId"].as_str().unwrap(),
            state["moduleId"].as_str().unwrap()
        )
    );
    for path in ["/downlinks?limit=1", "/lora/downlinks?limit=1", "/lora/bindings?limit=1"] {
        let item = &items(&alt.get(path).await)[0];
        assert_eq!(item["tenantId"], tenant, "{path}: {item}");
    }
    // The token answer too.
    let key = alt.sim.demo_key();
    let token: Value = alt
        .http
        .post(format!("{}/api/v3/idp/oidc/token", alt.base))
        .json(&json!({"grant_type": "client_credentials", "audience": common::AUDIENCE, "client_id": key.key_id, "client_secret": key.secret}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(token["access_token"].is_string() && token["not-before-policy"] == 0, "{token}");
}

/// The first module of the first state and the oldest version of that module (with its file).
async fn target_for(e: &Env) -> (String, String, String) {
    let state = &items(&e.get("/firmware/states?limit=1&firmwareUpdateStatus=SUCCEEDED").await)[0];
    let (device, module) =
        (state["deviceId"].as_str().unwrap().to_owned(), state["moduleId"].as_str().unwrap().to_owned());
    let packages = items(&e.get(&format!("/firmware/packages?moduleId={module}&limit=100")).await);
    let version = packages
        .iter()
        .filter(|p| p["firmwareFileName"].is_string())
        .map(|p| p["firmwareVersion"].as_str().unwrap())
        .find(|v| Some(*v) != state["currentFirmwareVersion"].as_str())
        .expect("a package with a file to move to")
        .to_owned();
    (device, module, version)
}

#[tokio::test]
async fn alt_shows_queued_before_pending_and_accepted_before_pending() {
    let reference = env(Variant::Reference).await;
    let (device, module, version) = target_for(&reference).await;
    let a = reference
        .call(
            Method::PUT,
            &format!("/firmware/states/{device}/{module}"),
            Some(json!({"targetFirmwareVersion": version})),
        )
        .await;
    assert_eq!(a.json()["firmwareUpdateStatus"], "PENDING", "{}", a.text);

    let alt = env(Variant::Alt).await;
    let (device, module, version) = target_for(&alt).await;
    let a = alt
        .call(
            Method::PUT,
            &format!("/firmware/devices/{device}/modules/{module}/target"),
            Some(json!({"version": version})),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    assert_eq!(a.json()["firmwareUpdateStatus"], "QUEUED", "A-37 (alt): {}", a.text);
    // Five simulated seconds later (the device is told 10 to 120 s after), it is PENDING.
    alt.sim.set_speed(20.0).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let path = format!("/firmware/states?deviceId={device}&moduleId={module}");
    let now = &items(&alt.get(&path).await)[0];
    assert_eq!(now["firmwareUpdateStatus"], "PENDING", "{now}");
    alt.sim.set_speed(1.0).unwrap();

    // Actuator downlinks: ACCEPTED for their first simulated second, then PENDING (A-30 (alt)).
    let network_id = alt.get("/downlinks?limit=1").await["items"][0]["networkId"].as_str().unwrap().to_owned();
    let body = json!({"method": {"type": "senml", "deviceId": network_id, "records": [{"n": "led", "vb": true}]}, "feedbackTimeout": "PT15M"});
    let created = reference.call(Method::POST, "/downlinks", Some(body.clone())).await;
    assert_eq!(created.json()["status"], "PENDING", "{}", created.text);
    let created = alt.call(Method::POST, "/downlinks", Some(body)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let created = created.json();
    assert_eq!(created["status"], "ACCEPTED", "{created}");
    let id = created["id"].as_str().unwrap();
    assert_eq!(alt.get(&format!("/downlinks/{id}")).await["status"], "ACCEPTED");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let later = alt.get(&format!("/downlinks/{id}")).await;
    assert!(["PENDING", "EXECUTING"].contains(&later["status"].as_str().unwrap()), "{later}");
}

fn is_offset_form(t: &str) -> bool {
    let b = t.as_bytes();
    t.len() == 25
        && t.ends_with("+00:00")
        && b[10] == b'T'
        && b[19] == b'+'
        && time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).is_ok()
}

#[tokio::test]
async fn alt_timestamps_have_an_offset_and_no_fraction() {
    let reference = env(Variant::Reference).await;
    let module = &items(&reference.get("/firmware/modules?limit=1").await)[0];
    let t = module["createdAt"].as_str().unwrap();
    assert!(t.ends_with('Z'), "{t}");

    let alt = env(Variant::Alt).await;
    for (path, fields) in [
        ("/firmware/modules?limit=5", &["createdAt", "modifiedAt"][..]),
        (
            "/firmware/states?limit=5&firmwareUpdateStatus=SUCCEEDED",
            &["firmwareUpdateStatusModifiedAt", "targetFirmwareVersionModifiedAt"][..],
        ),
        ("/downlinks?limit=5", &["createdAt", "modifiedAt"][..]),
        ("/lora/bindings?limit=5", &["createdAt", "modifiedAt"][..]),
    ] {
        for item in items(&alt.get(path).await) {
            for f in fields {
                if let Some(t) = item.get(*f) {
                    assert!(is_offset_form(t.as_str().unwrap()), "{path} {f}: {t}");
                }
            }
            assert!(item.get("createdAt").or(item.get("firmwareUpdateStatusModifiedAt")).is_some(), "{path}: {item}");
        }
    }
}

#[tokio::test]
async fn the_beta_api_redirects_a_bad_token_to_an_absolute_login_page_in_alt() {
    for variant in [Variant::Reference, Variant::Alt] {
        let e = env(variant).await;
        let a = answer(
            e.http
                .get(format!("{}/api/devices?page=1", e.base))
                .header("Accept", "application/vnd.service.device.v1+json"),
        )
        .await;
        assert_eq!(a.status, StatusCode::FOUND, "{}", a.text);
        match variant {
            Variant::Reference => assert_eq!(a.header("location"), "/api/v3/idp/oidc/token"),
            Variant::Alt => {
                let host = e.base.strip_prefix("http://").unwrap();
                assert_eq!(
                    a.header("location"),
                    format!("http://{host}/idp/login?redirect_uri=%2Fapi%2Fdevices%3Fpage%3D1")
                );
                assert_eq!(a.text, "");
            }
        }
        // The new API is unaffected: a 401.
        let a = answer(e.http.get(format!("{}/firmware/modules", e.base))).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    }
}

#[tokio::test]
async fn alt_token_errors_are_oauth_json() {
    for variant in [Variant::Reference, Variant::Alt] {
        let e = env(variant).await;
        let key = e.sim.demo_key();
        let body = json!({"grant_type": "client_credentials", "audience": common::AUDIENCE, "client_id": key.key_id, "client_secret": "wrong"});
        let a = answer(e.http.post(format!("{}/api/v3/idp/oidc/token", e.base)).json(&body)).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED);
        let v = a.json();
        match variant {
            Variant::Reference => {
                assert_eq!(a.header("content-type"), "application/problem+json");
                assert_eq!(v["detail"], "Feature user does not exist anymore");
            }
            Variant::Alt => {
                assert_eq!(a.header("content-type"), "application/json");
                assert_eq!(
                    v,
                    json!({"error": "invalid_client", "error_description": "Feature user does not exist anymore"})
                );
            }
        }
        let a =
            answer(e.http.post(format!("{}/api/v3/idp/oidc/token", e.base)).json(&json!({"grant_type": "password"})))
                .await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        if variant == Variant::Alt {
            assert_eq!(a.json()["error"], "invalid_request", "{}", a.text);
        }
    }
}

#[tokio::test]
async fn the_alt_context_switch_answers_204_and_grants_the_customer() {
    for variant in [Variant::Reference, Variant::Alt] {
        let e = env(variant).await;
        let reseller = e.sim.demo_key().client_id;
        let customer =
            e.sim.store().clients().unwrap().into_iter().find(|c| c.reseller_id == Some(reseller)).unwrap().id;
        let a = answer(
            e.http
                .get(format!("{}/api/v1/lifecycle/clients/{customer}/context-switch", e.base))
                .bearer_auth(&e.token)
                .header("Accept", "application/json")
                .header("Content-Type", "application/json"),
        )
        .await;
        match variant {
            Variant::Reference => {
                assert_eq!(a.status, StatusCode::OK);
                assert_eq!(a.json()["granted"], true);
            }
            Variant::Alt => assert_eq!((a.status, a.text.as_str()), (StatusCode::NO_CONTENT, "")),
        }
        // The grant holds: the deprecated sub-customer mode now acts for the customer.
        let a = answer(
            e.http
                .get(format!("{}/firmware/modules", e.base))
                .bearer_auth(&e.token)
                .header("x-client-id", customer.to_string()),
        )
        .await;
        assert_eq!(a.status, StatusCode::OK, "{variant}: {}", a.text);
    }
}

#[tokio::test]
async fn alt_401s_carry_www_authenticate_and_a_bare_envelope() {
    let reference = env(Variant::Reference).await;
    let a = answer(reference.http.get(format!("{}/firmware/modules", reference.base)).bearer_auth("not.a.jwt")).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    assert!(a.json()["detail"].is_string());

    let alt = env(Variant::Alt).await;
    let a = answer(alt.http.get(format!("{}/firmware/modules", alt.base))).await;
    assert_eq!((a.status, a.text.as_str()), (StatusCode::UNAUTHORIZED, ""));
    assert!(a.header("www-authenticate").starts_with("Bearer"), "{:?}", a.headers);
    for path in ["/firmware/modules", "/lora/bindings", "/downlinks/x", "/firmware/devices/a/modules/b/target"] {
        let method = if path.ends_with("/target") { Method::PUT } else { Method::GET };
        let a = answer(alt.http.request(method, format!("{}{path}", alt.base)).bearer_auth("not.a.jwt")).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(a.header("content-type"), "application/problem+json");
        assert_eq!(a.json(), json!({"status": 401, "title": "Unauthorized"}), "{path}");
        assert!(a.header("www-authenticate").contains("error=\"invalid_token\""), "{:?}", a.headers);
    }
}

#[tokio::test]
async fn alt_firmware_states_have_no_modified_since_nor_modified_at_sort() {
    let far = "9999-01-01T00:00:00Z";
    let reference = env(Variant::Reference).await;
    assert!(items(&reference.get(&format!("/firmware/states?modifiedSince={far}")).await).is_empty());
    reference.get("/firmware/states?sort=-modifiedAt").await;

    let alt = env(Variant::Alt).await;
    let all = alt.get("/firmware/states?limit=20").await;
    let ignored = alt.get(&format!("/firmware/states?limit=20&modifiedSince={far}")).await;
    assert_eq!(items(&ignored).len(), 20, "A-41 (alt): modifiedSince is an unknown parameter");
    assert_eq!(items(&ignored)[0]["deviceId"], items(&all)[0]["deviceId"]);
    let a = alt.call(Method::GET, "/firmware/states?sort=-modifiedAt", None).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.text);
    assert_eq!(a.json()["invalidParams"][0]["name"], "sort");
    // Other sorts and time filters remain.
    alt.get("/firmware/states?sort=-firmwareUpdateStatusModifiedAt").await;
    assert!(items(&alt.get(&format!("/firmware/states?createdSince={far}")).await).is_empty());
}

#[tokio::test]
async fn alt_sets_a_target_at_another_place_with_another_body() {
    let reference = env(Variant::Reference).await;
    let (device, module, _) = target_for(&reference).await;
    let a = reference
        .call(
            Method::PUT,
            &format!("/firmware/devices/{device}/modules/{module}/target"),
            Some(json!({"version": "1.0.0"})),
        )
        .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);

    let alt = env(Variant::Alt).await;
    let (device, module, version) = target_for(&alt).await;
    let a = alt
        .call(
            Method::PUT,
            &format!("/firmware/states/{device}/{module}"),
            Some(json!({"targetFirmwareVersion": version})),
        )
        .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND, "the reference's place does not exist in alt");
    let path = format!("/firmware/devices/{device}/modules/{module}/target");
    let a = alt.call(Method::PUT, &path, Some(json!({"version": "99.0.0"}))).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    let p = a.json();
    assert_eq!(p["invalidParams"][0]["name"], "version", "{p}");
    assert!(!p["detail"].as_str().unwrap().contains("targetFirmwareVersion"), "{p}");
    // The reference's member is not this operation's: ignored.
    let a = alt.call(Method::PUT, &path, Some(json!({"version": version, "targetFirmwareVersion": "99.0.0"}))).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    let set = a.json();
    assert_eq!(set["targetFirmwareVersion"], version.as_str());
    assert_eq!(set["deviceId"], device.as_str());
    assert_eq!(alt.call(Method::GET, &path, None).await.status, StatusCode::METHOD_NOT_ALLOWED);
    let a = alt.call(Method::PUT, &path, Some(json!({"version": null}))).await;
    assert_eq!(a.status, StatusCode::OK);
    assert!(a.json().get("targetFirmwareVersion").is_none(), "{}", a.text);
    let a = alt
        .call(
            Method::PUT,
            &format!("/firmware/devices/{}/modules/{module}/target", uuid::Uuid::new_v4()),
            Some(json!({"version": version})),
        )
        .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    let a = alt.call(Method::PUT, &path, Some(json!(["not", "an", "object"]))).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert_eq!(a.json()["invalidParams"][0]["name"], "body");
}
