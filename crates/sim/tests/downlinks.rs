//! Downlinks over real HTTP: bodies checked field by field, statuses moving on the simulated
//! clock, cancellation, eviction, filters.

use std::time::Duration;

use dcs_sim::store::devices::DeviceRow;
use dcs_sim::SimOptions;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

mod common;
use common::{urlencode, Env};

async fn env(speed: f64) -> Env {
    common::start(SimOptions { devices_per_client: 60, speed, ..Default::default() }).await
}

impl Env {
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base)).bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }
    fn device(&self, connection: &str) -> DeviceRow {
        let owner = self.sim.demo_key().client_id;
        let (devices, _) = self.sim.store().beta_devices(owner, None, "name", true, 0, 1000).unwrap();
        devices.into_iter().find(|d| d.connection == connection).unwrap()
    }
    /// Polls until the downlink's status is one of `finals`.
    async fn until(&self, path: &str, finals: &[&str]) -> Value {
        for _ in 0..100 {
            let (_, d) = self.call(Method::GET, path, None).await;
            if finals.contains(&d["status"].as_str().unwrap_or_default()) {
                return d;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{path} never reached {finals:?}");
    }
}

#[tokio::test]
async fn actuator_downlinks_check_each_field_and_run_to_a_final_status() {
    let e = env(10_000.0).await;
    let d = e.device("lora").network_id();
    for method in [
        json!({"type": "setProperty", "deviceId": d, "property": "reportingInterval", "value": 900}),
        json!({"type": "invokeCommand", "deviceId": d, "command": "reboot", "parameters": {"delay": 5}}),
        json!({"type": "senml", "deviceId": d, "records": [{"n": "led", "vb": true}]}),
        json!({"type": "payloadHex", "deviceId": d, "payloadHex": "01AF", "port": 10}),
    ] {
        let (status, created) = e
            .call(
                Method::POST,
                "/downlinks",
                Some(json!({"method": method, "retryLimit": 2, "feedbackTimeout": "PT15M"})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        assert_eq!(created["networkId"], d.as_str());
        assert_eq!(created["status"], "PENDING");
        // `message` is a string holding the SenML JSON array (section 2.6).
        let text = created["message"].as_str().unwrap_or_else(|| panic!("message is not a string: {created}"));
        let records: Value = serde_json::from_str(text).unwrap();
        assert_eq!(records[0]["bn"], d.as_str(), "{created}");
        assert_eq!(created["feedbackTimeout"], "PT15M");
        let done = e.until(&format!("/downlinks/{}", created["id"].as_str().unwrap()), &["DELIVERED", "FAILED"]).await;
        assert!(done["retryCount"].as_i64().unwrap() <= 2);
    }

    for (body, field) in [
        (json!({}), "method"),
        (json!({"method": {"type": "teleport", "deviceId": d}}), "method.type"),
        (json!({"method": {"type": "setProperty", "deviceId": "imei:1"}}), "method.deviceId"),
        (json!({"method": {"type": "setProperty", "deviceId": d}}), "method.property"),
        (json!({"method": {"type": "payloadHex", "deviceId": d, "payloadHex": "ABC"}}), "method.payloadHex"),
        (json!({"method": {"type": "senml", "deviceId": d, "records": []}}), "method.records"),
        (
            json!({"method": {"type": "setProperty", "deviceId": d, "property": "x", "value": 1}, "feedbackTimeout": "PT9M"}),
            "feedbackTimeout",
        ),
        (
            json!({"method": {"type": "setProperty", "deviceId": d, "property": "x", "value": 1}, "feedbackTimeout": "10 minutes"}),
            "feedbackTimeout",
        ),
        (
            json!({"method": {"type": "setProperty", "deviceId": d, "property": "x", "value": 1}, "retryLimit": 11}),
            "retryLimit",
        ),
        (
            json!({"method": {"type": "setProperty", "deviceId": d, "property": "x", "value": 1}, "dryRun": "yes"}),
            "dryRun",
        ),
    ] {
        let (status, p) = e.call(Method::POST, "/downlinks", Some(body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{p}");
        assert_eq!(p["invalidParams"][0]["name"], field, "{p}");
    }

    // externalReference is unique per client.
    let body = json!({"method": {"type": "setProperty", "deviceId": d, "property": "x", "value": 1}, "externalReference": "order-77"});
    assert_eq!(e.call(Method::POST, "/downlinks", Some(body.clone())).await.0, StatusCode::CREATED);
    assert_eq!(e.call(Method::POST, "/downlinks", Some(body)).await.0, StatusCode::CONFLICT);
    // q finds it by the reference exactly, and by part of the network id.
    let (_, by_ref) = e.call(Method::GET, "/downlinks?q=order-77", None).await;
    assert_eq!(by_ref["items"].as_array().unwrap().len(), 1);
    let (_, by_part) = e.call(Method::GET, &format!("/downlinks?q={}&limit=1000", &d[d.len() - 9..]), None).await;
    assert!(!by_part["items"].as_array().unwrap().is_empty());
    assert!(by_part["items"].as_array().unwrap().iter().all(|x| x["networkId"] == d.as_str()));
    assert_eq!(
        e.call(Method::GET, "/downlinks?q=order-7", None).await.1["items"].as_array().unwrap().len(),
        0,
        "the reference matches exactly"
    );
    // ...and by part of the message text (a string holding the SenML array).
    let body = json!({"method": {"type": "setProperty", "deviceId": d, "property": "brightnessLevelQ", "value": 3}});
    assert_eq!(e.call(Method::POST, "/downlinks", Some(body)).await.0, StatusCode::CREATED);
    let (_, by_message) = e.call(Method::GET, "/downlinks?q=%22n%22%3A%22brightnessLevel", None).await;
    let items = by_message["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{by_message}");
    assert!(items[0]["message"].as_str().unwrap().contains("\"n\":\"brightnessLevelQ\""), "{by_message}");

    // A dry run is delivered without the device.
    let (_, dry) = e
        .call(
            Method::POST,
            "/downlinks",
            Some(
                json!({"method": {"type": "setProperty", "deviceId": d, "property": "x", "value": 1}, "dryRun": true}),
            ),
        )
        .await;
    let done = e.until(&format!("/downlinks/{}", dry["id"].as_str().unwrap()), &["DELIVERED", "FAILED"]).await;
    assert_eq!(done["status"], "DELIVERED");
    assert_eq!(e.call(Method::GET, "/downlinks/not-a-known-id", None).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn cancellation_needs_forced_once_a_downlink_is_on_its_way() {
    // Slow clock: steps happen only when the test says.
    let e = env(0.001).await;
    let d = e.device("mqtt").network_id();
    let (_, created) = e
        .call(
            Method::POST,
            "/downlinks",
            Some(json!({"method": {"type": "invokeCommand", "deviceId": d, "command": "reboot"}})),
        )
        .await;
    let path = format!("/downlinks/{}", created["id"].as_str().unwrap());
    assert_eq!(e.call(Method::DELETE, &format!("{path}?forced=maybe"), None).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(e.call(Method::DELETE, &path, None).await.0, StatusCode::ACCEPTED);
    e.sim.step().unwrap();
    let (_, after) = e.call(Method::GET, &path, None).await;
    assert_eq!(after["status"], "CANCELLED");
    assert_eq!(
        e.call(Method::DELETE, &path, None).await.0,
        StatusCode::CONFLICT,
        "final downlinks cannot be cancelled"
    );

    // A seeded downlink already executing: refused without forced, cancelled with it.
    let (_, list) = e.call(Method::GET, "/downlinks?limit=1000", None).await;
    let executing =
        list["items"].as_array().unwrap().iter().find(|x| x["status"] == "SENT_TO_CARRIER").unwrap().clone();
    let path = format!("/downlinks/{}", executing["id"].as_str().unwrap());
    let (status, p) = e.call(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(p["detail"].as_str().unwrap().contains("forced=true"));
    assert_eq!(e.call(Method::DELETE, &format!("{path}?forced=true"), None).await.0, StatusCode::ACCEPTED);
    e.sim.step().unwrap();
    assert_eq!(e.call(Method::GET, &path, None).await.1["status"], "CANCELLED");
}

#[tokio::test]
async fn connection_specific_downlinks_per_kind() {
    let e = env(10_000.0).await;
    let lora = e.device("lora");
    let mqtt = e.device("mqtt");
    let sms = e.device("sms");
    let http = e.device("http");
    let cases = [
        (
            "lora",
            json!({"deviceId": format!("deveui:{}", lora.deveui.clone().unwrap()), "feedbackTimeout": "PT10M", "payloadHex": "0102", "fPort": 5, "retryLimit": 3}),
        ),
        (
            "mqtt",
            json!({"deviceId": mqtt.network_id(), "feedbackTimeout": "PT10M", "topic": "cmd/led", "payload": "on", "dryRun": true}),
        ),
        ("sms", json!({"deviceId": sms.id.to_string(), "feedbackTimeout": "PT1H", "text": "PING"})),
        (
            "http",
            json!({"deviceId": http.id.to_string(), "feedbackTimeout": "PT10M", "message": {"senml": [{"n": "led", "vb": true}]}}),
        ),
    ];
    for (kind, body) in cases {
        let (status, created) = e.call(Method::POST, &format!("/{kind}/downlinks"), Some(body.clone())).await;
        assert_eq!(status, StatusCode::CREATED, "{kind}: {created}");
        assert_eq!(created["status"], "PENDING");
        assert_eq!(created["deviceId"], body["deviceId"], "the device as given");
        if kind == "sms" {
            assert!(created["iccId"].as_str().unwrap().starts_with("8944"));
        }
        let done = e.until(&format!("/{kind}/downlinks/{}", created["id"].as_str().unwrap()), &["DONE"]).await;
        if kind == "mqtt" {
            assert!(done.get("lastFailureReason").is_none(), "a dry run succeeds: {done}");
        }
        // The list filters by device in any id form and by status.
        let (status, listed) = e
            .call(
                Method::GET,
                &format!("/{kind}/downlinks?deviceId={}&status=DONE&limit=1000", url(&body["deviceId"])),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{listed}");
        assert!(listed["items"].as_array().unwrap().iter().any(|x| x["id"] == created["id"]));
    }

    // Field checks name the field.
    for (kind, body, field) in [
        ("lora", json!({"deviceId": lora.network_id(), "payloadHex": "01"}), "feedbackTimeout"),
        ("lora", json!({"deviceId": lora.network_id(), "feedbackTimeout": "PT10M", "payloadHex": "0"}), "payloadHex"),
        (
            "lora",
            json!({"deviceId": lora.network_id(), "feedbackTimeout": "PT10M", "payloadHex": "01", "fPort": 0}),
            "fPort",
        ),
        ("lora", json!({"deviceId": mqtt.network_id(), "feedbackTimeout": "PT10M", "payloadHex": "01"}), "deviceId"),
        (
            "mqtt",
            json!({"deviceId": mqtt.network_id(), "feedbackTimeout": "PT10M", "topic": "a/#", "payload": "x"}),
            "topic",
        ),
        (
            "sms",
            json!({"deviceId": format!("urn:dev:imei:{}:", sms.imei.clone().unwrap()), "feedbackTimeout": "PT10M", "text": "x"}),
            "deviceId",
        ),
        ("http", json!({"deviceId": http.id.to_string(), "feedbackTimeout": "PT10M", "message": {}}), "message"),
    ] {
        let (status, p) = e.call(Method::POST, &format!("/{kind}/downlinks"), Some(body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{kind}: {p}");
        assert_eq!(p["invalidParams"][0]["name"], field, "{kind}: {p}");
    }
    assert_eq!(e.call(Method::GET, "/lora/downlinks?status=BUSY", None).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(
        e.call(Method::GET, "/mqtt/downlinks?status=BUSY", None).await.0,
        StatusCode::OK,
        "a free string on mqtt"
    );
    assert_eq!(e.call(Method::GET, "/lora/downlinks/not-a-uuid", None).await.0, StatusCode::BAD_REQUEST);
}

fn url(v: &Value) -> String {
    urlencode(v.as_str().unwrap())
}

#[tokio::test]
async fn a_full_queue_evicts_the_oldest_and_seeded_data_has_every_status() {
    let e = env(0.001).await;
    let lora = e.device("lora");
    let mut ids = Vec::new();
    for i in 0..11 {
        let body = json!({"deviceId": lora.network_id(), "feedbackTimeout": "PT10M", "payloadHex": format!("{i:02x}")});
        let (status, created) = e.call(Method::POST, "/lora/downlinks", Some(body)).await;
        assert_eq!(status, StatusCode::CREATED);
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    // The queue holds ten waiting downlinks; the oldest ones were evicted to make room.
    let dev = url(&json!(lora.network_id()));
    let (_, pending) =
        e.call(Method::GET, &format!("/lora/downlinks?deviceId={dev}&status=PENDING&limit=1000"), None).await;
    let pending: Vec<&str> = pending["items"].as_array().unwrap().iter().map(|x| x["id"].as_str().unwrap()).collect();
    assert_eq!(pending.len(), 10);
    assert!(pending.contains(&ids[10].as_str()), "the newest is queued");
    let (_, done) = e.call(Method::GET, &format!("/lora/downlinks?deviceId={dev}&status=DONE&limit=1000"), None).await;
    assert!(done["items"].as_array().unwrap().iter().any(|x| x["lastFailureReason"] == "EVICTED"));

    // MQTT knows no eviction (its failure reasons in section 2.7 have no EVICTED): an
    // eleventh waiting downlink leaves the other ten queued.
    let mqtt = e.device("mqtt");
    let mut mqtt_ids = Vec::new();
    for i in 0..11 {
        let body = json!({"deviceId": mqtt.network_id(), "feedbackTimeout": "PT10M", "topic": "cmd", "payload": format!("{i}")});
        let (status, created) = e.call(Method::POST, "/mqtt/downlinks", Some(body)).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        mqtt_ids.push(created["id"].as_str().unwrap().to_owned());
    }
    for id in &mqtt_ids {
        let (_, d) = e.call(Method::GET, &format!("/mqtt/downlinks/{id}"), None).await;
        assert_eq!(d["status"], "PENDING", "{d}");
        assert!(d.get("lastFailureReason").is_none(), "{d}");
    }
    let (_, all_mqtt) = e.call(Method::GET, "/mqtt/downlinks?limit=1000", None).await;
    assert!(all_mqtt["items"].as_array().unwrap().iter().all(|x| x["lastFailureReason"] != "EVICTED"), "{all_mqtt}");

    let (_, all) = e.call(Method::GET, "/downlinks?limit=1000", None).await;
    let statuses: std::collections::HashSet<String> =
        all["items"].as_array().unwrap().iter().map(|x| x["status"].as_str().unwrap().to_owned()).collect();
    for s in ["PENDING", "EXECUTING", "SENT_TO_CARRIER", "CANCELLED", "RETRY", "DELIVERED", "FAILED"] {
        assert!(statuses.contains(s), "seeded actuator downlinks include {s}: {statuses:?}");
    }
    for kind in ["http", "lora", "mqtt", "sms"] {
        let (_, page) = e.call(Method::GET, &format!("/{kind}/downlinks?status=DONE&limit=1000"), None).await;
        let reasons: Vec<&str> =
            page["items"].as_array().unwrap().iter().filter_map(|x| x["lastFailureReason"].as_str()).collect();
        assert!(reasons.contains(&"CANCELLED"), "{kind}: {reasons:?}");
    }
}

#[tokio::test]
async fn the_beta_actuator_endpoint_takes_senml_records() {
    let e = env(10_000.0).await;
    let lora = e.device("lora");
    let urn = lora.network_id();
    let post = |query: &str, accept: &str, body: Value| {
        e.http
            .post(format!("{}/api/actuator/downlinks{query}", e.base))
            .bearer_auth(&e.token)
            .header("Accept", accept.to_owned())
            .json(&body)
            .send()
    };
    const MEDIA: &str = "application/vnd.service.actuator.v1.response+json";
    let res = post("?port=10&externalReference=beta-1", MEDIA, json!([{"bn": urn, "n": "payloadHex", "vs": "0A0B"}]))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    assert_eq!(res.headers()["content-type"], MEDIA);
    let created: Value = res.json().await.unwrap();
    assert_eq!(created[0]["networkId"], urn.as_str());
    assert_eq!(created[0]["externalReference"], "beta-1");
    assert_eq!(created[0]["method"]["port"], 10);
    // It is an ordinary actuator downlink afterwards.
    let path = format!("/downlinks/{}", created[0]["id"].as_str().unwrap());
    assert_eq!(e.call(Method::GET, &path, None).await.0, StatusCode::OK);

    for (query, accept, body, field) in [
        ("?port=10", "application/json", json!([{"bn": urn, "n": "payloadHex", "vs": "0A"}]), "Accept"),
        ("", MEDIA, json!([{"bn": urn, "n": "payloadHex", "vs": "0A"}]), "port"),
        ("?port=300", MEDIA, json!([{"bn": urn, "n": "payloadHex", "vs": "0A"}]), "port"),
        ("?port=10", MEDIA, json!({"bn": urn}), "body"),
        ("?port=10", MEDIA, json!([{"bn": "urn:dev:imei:123456789012345:", "n": "payloadHex", "vs": "0A"}]), "[0].bn"),
        ("?port=10", MEDIA, json!([{"bn": urn, "n": "temperature", "vs": "0A"}]), "[0].n"),
        ("?port=10", MEDIA, json!([{"bn": urn, "n": "payloadHex", "vs": "XYZ"}]), "[0].vs"),
    ] {
        let res = post(query, accept, body).await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{field}");
        let p: Value = res.json().await.unwrap();
        assert_eq!(p["invalidParams"][0]["name"], field, "{p}");
    }
    let res = post("?port=10&externalReference=beta-1", MEDIA, json!([{"bn": urn, "n": "payloadHex", "vs": "0A"}]))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CONFLICT);
}

/// Found by the contract test: a `feedbackTimeout` whose deadline lies past year 9999 made the
/// handler panic (the connection closed without an answer). The reference sets no maximum, so
/// the downlink is accepted and simply never times out.
#[tokio::test]
async fn a_feedback_timeout_past_year_9999_is_accepted_not_a_crash() {
    let e = env(1.0).await;
    let mqtt = e.device("mqtt");
    let (status, d) = e
        .call(
            Method::POST,
            "/mqtt/downlinks",
            Some(json!({"deviceId": mqtt.id.to_string(), "feedbackTimeout": "P3000000D", "topic": "t/1", "payload": "x"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{d}");
    assert_eq!(d["feedbackTimeout"], "P3000000D");
    let (status, _) = e.call(Method::GET, &format!("/mqtt/downlinks/{}", d["id"].as_str().unwrap()), None).await;
    assert_eq!(status, StatusCode::OK);

    let lora = e.device("lora");
    let method = json!({"type": "payloadHex", "deviceId": lora.id.to_string(), "payloadHex": "01"});
    let (status, d) = e
        .call(Method::POST, "/downlinks", Some(json!({"method": method, "feedbackTimeout": "P999999999999DT23H"})))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{d}");
}

/// Found by the contract test: a time filter that is valid RFC 3339 but past the last instant
/// in UTC (`9999-12-31T23:59:59-01:00`) made the list panic. It stands for "after everything".
#[tokio::test]
async fn time_filters_past_year_9999_in_utc_are_answered() {
    let e = env(1.0).await;
    let late = "9999-12-31T23:59:59-01:00";
    for path in ["/downlinks", "/lora/downlinks", "/firmware/states"] {
        let (status, page) = e.call(Method::GET, &format!("{path}?limit=1&createdBefore={late}"), None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {page}");
        assert_eq!(page["items"].as_array().unwrap().len(), 1, "{path}: everything is before it");
        let (status, page) = e.call(Method::GET, &format!("{path}?modifiedSince={late}"), None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {page}");
        assert!(page["items"].as_array().unwrap().is_empty(), "{path}: nothing is after it");
    }
}
