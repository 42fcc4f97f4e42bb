//! Connector bindings (lora, http, mqtt) over real HTTP: the five operations of each kind, their
//! 400s, 404s and 409s, the LoRa network-server sync, and isolation between a reseller and its
//! customers.

use std::time::Duration;

use dcs_sim::store::bindings::join_delay;
use dcs_sim::store::devices::DeviceRow;
use dcs_sim::SimOptions;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

mod common;
use common::{start as env_with, urlencode, Env};

async fn env() -> Env {
    env_with(SimOptions { devices_per_client: 40, ..Default::default() }).await
}

impl Env {
    /// A request in the caller's own environment (`ctx` None) or a customer's.
    async fn call(&self, ctx: Option<Uuid>, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base)).bearer_auth(&self.token);
        if let Some(c) = ctx {
            req = req.header("Service-Security-Context", format!("client:uuid:{c}"));
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }
    async fn get(&self, ctx: Option<Uuid>, path: &str) -> (StatusCode, Value) {
        self.call(ctx, Method::GET, path, None).await
    }
    async fn send(&self, ctx: Option<Uuid>, method: Method, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(ctx, method, path, Some(body)).await
    }

    fn reseller(&self) -> Uuid {
        self.sim.demo_key().client_id
    }

    fn customers(&self) -> Vec<Uuid> {
        let owner = self.reseller();
        self.sim.store().clients().unwrap().into_iter().filter(|c| c.reseller_id == Some(owner)).map(|c| c.id).collect()
    }

    /// The environments to try: the reseller's own, then each customer's.
    fn environments(&self) -> Vec<(Option<Uuid>, Uuid)> {
        let mut out = vec![(None, self.reseller())];
        out.extend(self.customers().into_iter().map(|c| (Some(c), c)));
        out
    }

    fn devices(&self, client: Uuid, connection: &str) -> Vec<DeviceRow> {
        let (all, _) = self.sim.store().beta_devices(client, None, "name", true, 0, 10_000).unwrap();
        all.into_iter().filter(|d| d.connection == connection).collect()
    }

    /// Devices of `connection` in one environment without a binding, matching `pred`.
    async fn unbound_in(
        &self,
        ctx: Option<Uuid>,
        client: Uuid,
        connection: &str,
        pred: impl Fn(&DeviceRow) -> bool,
    ) -> Vec<DeviceRow> {
        let mut out = Vec::new();
        for d in self.devices(client, connection).into_iter().filter(|d| pred(d)) {
            let (status, page) = self.get(ctx, &format!("/{connection}/bindings?deviceId={}", d.id)).await;
            assert_eq!(status, StatusCode::OK, "{page}");
            if page["items"].as_array().unwrap().is_empty() {
                out.push(d);
            }
        }
        out
    }

    /// An environment holding at least `n` unbound devices of `connection` matching `pred`.
    async fn pick(
        &self,
        connection: &str,
        n: usize,
        pred: impl Fn(&DeviceRow) -> bool + Copy,
    ) -> (Option<Uuid>, Vec<DeviceRow>) {
        for (ctx, client) in self.environments() {
            let found = self.unbound_in(ctx, client, connection, pred).await;
            if found.len() >= n {
                return (ctx, found);
            }
        }
        panic!("no environment has {n} unbound {connection} devices");
    }
}

fn t(v: &Value) -> time::OffsetDateTime {
    time::OffsetDateTime::parse(v.as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap()
}

fn field(p: &Value) -> &str {
    p["invalidParams"][0]["name"].as_str().unwrap_or_else(|| panic!("a 400 naming a field: {p}"))
}

const APP_KEY: &str = "00112233445566778899AABBCCDDEEFF";

#[tokio::test]
async fn lora_bindings_lifecycle_and_refusals() {
    let e = env().await;
    let (ctx, devices) = e.pick("lora", 1, |_| true).await;
    let device = &devices[0];
    let eui = device.deveui.clone().unwrap();
    let eui_id = format!("deveui:{eui}");

    // Seeded bindings: both statuses, every one of a lora device.
    let (status, seeded) = e.get(ctx, "/lora/bindings?limit=1000").await;
    assert_eq!(status, StatusCode::OK, "{seeded}");
    let seeded = seeded["items"].as_array().unwrap().clone();
    assert!(!seeded.is_empty());
    assert!(seeded.iter().all(|b| b["status"] == "INVENTORY" || b["status"] == "ACTIVE"));
    assert!(seeded.iter().all(|b| b["applicationServerId"].as_str().unwrap().len() == 16));

    // Create, with the device given as an upper-case DevEUI id.
    let body = json!({"deviceId": format!("DevEUI:{}", eui.to_uppercase()), "applicationServerId": "A1B2C3D4E5F60718", "appKey": APP_KEY, "status": "ACTIVE"});
    let (status, created) = e.send(ctx, Method::POST, "/lora/bindings", body.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["deviceId"], device.id.to_string());
    assert_eq!(created["applicationServerId"], "a1b2c3d4e5f60718");
    assert_eq!(created["appKey"], APP_KEY.to_lowercase());
    assert_eq!(created["status"], "INVENTORY", "the status is the network server's, not the caller's");
    assert!(created["createdBy"].as_str().unwrap().starts_with("principal/"));
    assert_eq!(created["createdAt"], created["modifiedAt"]);

    let (status, got) = e.get(ctx, &format!("/lora/bindings/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got, created);

    // Filters: the device in its URN form, the time window, the sort.
    let urn = urlencode(&format!("urn:dev:deveui:{eui}:"));
    let (_, by_device) = e.get(ctx, &format!("/lora/bindings?deviceId={urn}")).await;
    assert_eq!(by_device["items"].as_array().unwrap().len(), 1);
    assert_eq!(by_device["items"][0]["id"], id.as_str());
    let at = urlencode(created["createdAt"].as_str().unwrap());
    let (_, since) = e.get(ctx, &format!("/lora/bindings?createdSince={at}&limit=1000")).await;
    assert!(since["items"].as_array().unwrap().iter().any(|b| b["id"] == id.as_str()));
    let (_, before) = e.get(ctx, &format!("/lora/bindings?createdBefore={at}&limit=1000")).await;
    assert!(!before["items"].as_array().unwrap().iter().any(|b| b["id"] == id.as_str()));
    let (_, newest) = e.get(ctx, "/lora/bindings?sort=-createdAt&limit=1").await;
    assert_eq!(newest["items"][0]["id"], id.as_str());
    assert!(newest["next"].is_string());
    let (_, nobody) = e.get(ctx, &format!("/lora/bindings?deviceId={}", Uuid::new_v4())).await;
    assert!(nobody["items"].as_array().unwrap().is_empty(), "an unknown device matches nothing");
    let (status, p) = e.get(ctx, "/lora/bindings?deviceId=deveui:123").await;
    assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "deviceId"));
    let (status, p) = e.get(ctx, "/lora/bindings?sort=appKey").await;
    assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "sort"));
    let (status, p) = e.get(ctx, "/lora/bindings?modifiedSince=last-week").await;
    assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "modifiedSince"));

    // 409: a second binding of the device, an application server id used elsewhere.
    let (status, p) = e
        .send(
            ctx,
            Method::POST,
            "/lora/bindings",
            json!({"deviceId": eui_id, "applicationServerId": "ffffffffffff0001", "appKey": APP_KEY}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{p}");
    let taken = seeded[0]["applicationServerId"].as_str().unwrap();
    let (status, p) = e
        .send(
            ctx,
            Method::PUT,
            &format!("/lora/bindings/{id}"),
            json!({"deviceId": eui_id, "applicationServerId": taken.to_uppercase(), "appKey": APP_KEY}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{p}");
    assert!(p["detail"].as_str().unwrap().contains("applicationServerId"));

    // 400s naming the field and the rule.
    let http_device = e.devices(ctx.unwrap_or(e.reseller()), "http").into_iter().next();
    let mut cases = vec![
        (json!({"applicationServerId": "a1b2c3d4e5f60719", "appKey": APP_KEY}), "deviceId", "required"),
        (
            json!({"deviceId": "deveui:xyz", "applicationServerId": "a1b2c3d4e5f60719", "appKey": APP_KEY}),
            "deviceId",
            "16 hex",
        ),
        (
            json!({"deviceId": Uuid::new_v4(), "applicationServerId": "a1b2c3d4e5f60719", "appKey": APP_KEY}),
            "deviceId",
            "environment",
        ),
        (json!({"deviceId": 42, "applicationServerId": "a1b2c3d4e5f60719", "appKey": APP_KEY}), "deviceId", "string"),
        (
            json!({"deviceId": eui_id, "applicationServerId": "a1b2c3d4e5f6071", "appKey": APP_KEY}),
            "applicationServerId",
            "16 hex",
        ),
        (json!({"deviceId": eui_id, "appKey": APP_KEY}), "applicationServerId", "required"),
        (
            json!({"deviceId": eui_id, "applicationServerId": "a1b2c3d4e5f60719", "appKey": "zz112233445566778899aabbccddeeff"}),
            "appKey",
            "32 hex",
        ),
        (json!({"deviceId": eui_id, "applicationServerId": "a1b2c3d4e5f60719"}), "appKey", "required"),
        (json!(["not", "an", "object"]), "body", "JSON object"),
    ];
    if let Some(d) = http_device {
        cases.push((
            json!({"deviceId": d.id, "applicationServerId": "a1b2c3d4e5f60719", "appKey": APP_KEY}),
            "deviceId",
            "lora device",
        ));
    }
    for (body, name, rule) in cases {
        let (status, p) = e.send(ctx, Method::PUT, &format!("/lora/bindings/{id}"), body.clone()).await;
        assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, name), "PUT {body}: {p}");
        assert!(p["invalidParams"][0]["reason"].as_str().unwrap().contains(rule), "{rule}: {p}");
        let (status, p) = e.send(ctx, Method::POST, "/lora/bindings", body.clone()).await;
        assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, name), "POST {body}: {p}");
    }

    // A full replacement with new keys: back to INVENTORY until the device joins again.
    let (status, put) = e.send(ctx, Method::PUT, &format!("/lora/bindings/{id}"), json!({"deviceId": device.id, "applicationServerId": "a1b2c3d4e5f60718", "appKey": "ffeeddccbbaa99887766554433221100"})).await;
    assert_eq!(status, StatusCode::OK, "{put}");
    assert_eq!(put["appKey"], "ffeeddccbbaa99887766554433221100");
    assert_eq!(put["createdAt"], created["createdAt"]);
    assert!(t(&put["modifiedAt"]) >= t(&created["modifiedAt"]));
    assert_eq!(put["status"], "INVENTORY");

    // Unknown ids are 404s, malformed ones 400s.
    let unknown = Uuid::new_v4();
    for method in [Method::GET, Method::DELETE] {
        let (status, _) = e.call(ctx, method.clone(), &format!("/lora/bindings/{unknown}"), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method}");
        let (status, p) = e.call(ctx, method.clone(), "/lora/bindings/not-a-uuid", None).await;
        assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "bindingId"), "{method}");
    }
    let (status, _) = e
        .send(
            ctx,
            Method::PUT,
            &format!("/lora/bindings/{unknown}"),
            json!({"deviceId": eui_id, "applicationServerId": "a1b2c3d4e5f60718", "appKey": APP_KEY}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, p) = e.get(ctx, &format!("/lora/bindings/{id}?sync=maybe")).await;
    assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "sync"));
    // A lora binding is not an http one.
    let (status, _) = e.get(ctx, &format!("/http/bindings/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (status, _) = e.call(ctx, Method::DELETE, &format!("/lora/bindings/{id}"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = e.get(ctx, &format!("/lora/bindings/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = e.call(ctx, Method::DELETE, &format!("/lora/bindings/{id}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // The device is free again, and the application server id with it.
    let (status, again) = e.send(ctx, Method::POST, "/lora/bindings", body).await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
}

#[tokio::test]
async fn http_bindings_lifecycle_type_filter_and_refusals() {
    let e = env().await;
    let (ctx, devices) = e.pick("http", 1, |_| true).await;
    let device = &devices[0];
    let imei_urn = format!("urn:dev:imei:{}", device.imei.as_deref().unwrap());

    let (_, seeded) = e.get(ctx, "/http/bindings?limit=1000").await;
    let seeded = seeded["items"].as_array().unwrap().clone();
    assert!(!seeded.is_empty());

    let secret = "s3cr3t-Shared.Key~0123";
    let (status, created) = e
        .send(
            ctx,
            Method::POST,
            "/http/bindings",
            json!({"deviceId": imei_urn, "type": "http-senml", "sharedSecret": secret}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["deviceId"], device.id.to_string());
    assert_eq!(created["type"], "http-senml");
    assert_eq!(created["sharedSecret"], secret);
    let (status, got) = e.get(ctx, &format!("/http/bindings/{id}")).await;
    assert_eq!((status, &got), (StatusCode::OK, &created));

    // The type filter.
    let (_, senml) = e.get(ctx, "/http/bindings?type=http-senml&limit=1000").await;
    let senml = senml["items"].as_array().unwrap();
    assert!(senml.iter().all(|b| b["type"] == "http-senml") && senml.iter().any(|b| b["id"] == id.as_str()));
    let (_, streamline) = e.get(ctx, "/http/bindings?type=http-streamline&limit=1000").await;
    let streamline = streamline["items"].as_array().unwrap();
    assert!(streamline.iter().all(|b| b["type"] == "http-streamline"));
    assert_eq!(senml.len() + streamline.len(), seeded.len() + 1);
    let (status, p) = e.get(ctx, "/http/bindings?type=http-json").await;
    assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "type"));
    let (_, by_device) =
        e.get(ctx, &format!("/http/bindings?deviceId=imei:{}&type=http-senml", device.imei.as_deref().unwrap())).await;
    assert_eq!(by_device["items"].as_array().unwrap().len(), 1);

    for (body, name) in [
        (json!({"deviceId": device.id, "sharedSecret": secret}), "type"),
        (json!({"deviceId": device.id, "type": "senml", "sharedSecret": secret}), "type"),
        (json!({"deviceId": device.id, "type": "http-senml"}), "sharedSecret"),
        (json!({"deviceId": device.id, "type": "http-senml", "sharedSecret": "short"}), "sharedSecret"),
        (json!({"deviceId": device.id, "type": "http-senml", "sharedSecret": "with a space in it!"}), "sharedSecret"),
        (json!({"deviceId": device.id, "type": "http-senml", "sharedSecret": "x".repeat(65)}), "sharedSecret"),
        (json!({"deviceId": "imei:12", "type": "http-senml", "sharedSecret": secret}), "deviceId"),
    ] {
        let (status, p) = e.send(ctx, Method::PUT, &format!("/http/bindings/{id}"), body.clone()).await;
        assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, name), "{body}: {p}");
    }
    let (status, p) = e
        .send(
            ctx,
            Method::POST,
            "/http/bindings",
            json!({"deviceId": device.id, "type": "http-streamline", "sharedSecret": secret}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{p}");

    let (status, put) = e
        .send(
            ctx,
            Method::PUT,
            &format!("/http/bindings/{id}"),
            json!({"deviceId": device.id, "type": "http-streamline", "sharedSecret": "another-secret-0123456789"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{put}");
    assert_eq!(put["type"], "http-streamline");
    assert_eq!(put["sharedSecret"], "another-secret-0123456789");
    assert_eq!(put["createdAt"], created["createdAt"]);

    let (status, _) = e.get(ctx, &format!("/http/bindings/{}", Uuid::new_v4())).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = e.call(ctx, Method::DELETE, &format!("/http/bindings/{id}"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = e.get(ctx, &format!("/http/bindings/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn mqtt_bindings_get_the_device_urn_as_username() {
    let e = env().await;
    let (ctx, devices) = e.pick("mqtt", 1, |_| true).await;
    let device = &devices[0];
    let imei = device.imei.clone().unwrap();
    let urn = format!("urn:dev:imei:{imei}:");

    let (_, seeded) = e.get(ctx, "/mqtt/bindings?limit=1000").await;
    let seeded = seeded["items"].as_array().unwrap().clone();
    assert!(!seeded.is_empty());
    assert!(seeded.iter().all(|b| b["username"].as_str().unwrap().starts_with("urn:dev:imei:")));
    assert!(seeded.iter().all(|b| dcs_model::validate::mqtt_password(b["password"].as_str().unwrap()).is_ok()));

    let password = "Very-Secret-Password-2026!";
    let (status, created) = e
        .send(
            ctx,
            Method::POST,
            "/mqtt/bindings",
            json!({"deviceId": format!("imei:{imei}"), "password": password, "username": "chosen-by-me"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["username"], urn.as_str(), "the username is the system's");
    assert_eq!(created["password"], password);

    let (_, by_name) = e.get(ctx, &format!("/mqtt/bindings?username={}", urlencode(&urn))).await;
    let items = by_name["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], id.as_str());
    let (_, prefix) = e.get(ctx, &format!("/mqtt/bindings?username={}", urlencode(&urn[..urn.len() - 1]))).await;
    assert!(prefix["items"].as_array().unwrap().is_empty(), "username matches exactly");

    for (pw, rule) in
        [("short1!A", "24"), ("alllowercaseandlongenough1!", "upper-case"), ("NoSpecialCharactersHere123", "special")]
    {
        let (status, p) =
            e.send(ctx, Method::POST, "/mqtt/bindings", json!({"deviceId": device.id, "password": pw})).await;
        assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "password"), "{p}");
        assert!(p["invalidParams"][0]["reason"].as_str().unwrap().contains(rule), "{p}");
    }
    let (status, p) = e.send(ctx, Method::POST, "/mqtt/bindings", json!({"deviceId": device.id})).await;
    assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "password"));
    let (status, _) = e.send(ctx, Method::POST, "/mqtt/bindings", json!({"deviceId": urn, "password": password})).await;
    assert_eq!(status, StatusCode::CONFLICT);

    let (status, put) = e
        .send(
            ctx,
            Method::PUT,
            &format!("/mqtt/bindings/{id}"),
            json!({"deviceId": device.id, "password": "Another-Secret-Password-99", "username": "ignored"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{put}");
    assert_eq!(put["password"], "Another-Secret-Password-99");
    assert_eq!(put["username"], urn.as_str());

    let (status, p) =
        e.send(ctx, Method::PUT, "/mqtt/bindings/42", json!({"deviceId": device.id, "password": password})).await;
    assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "bindingId"));
    let (status, _) = e.call(ctx, Method::DELETE, &format!("/mqtt/bindings/{id}"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, gone) = e.get(ctx, &format!("/mqtt/bindings?username={}", urlencode(&urn))).await;
    assert!(gone["items"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn lora_sync_activates_a_binding_once_its_device_has_joined() {
    // At speed 120 a simulated minute lasts half a second: every join happens within 2.5 s.
    let e = env_with(SimOptions { devices_per_client: 40, speed: 120.0, ..Default::default() }).await;
    let joins = |d: &DeviceRow| join_delay(d.deveui.as_deref().unwrap()).is_some();
    let (ctx, joining) = e.pick("lora", 1, joins).await;
    let client = match ctx {
        Some(c) => c,
        None => e.reseller(),
    };
    let never = e.unbound_in(ctx, client, "lora", |d| !joins(d)).await;

    let mut ids = Vec::new();
    for (i, d) in joining.iter().take(1).chain(never.iter().take(1)).enumerate() {
        let body =
            json!({"deviceId": d.id, "applicationServerId": format!("5e5e5e5e5e5e5e{i:02x}"), "appKey": APP_KEY});
        let (status, b) = e.send(ctx, Method::POST, "/lora/bindings", body).await;
        assert_eq!(status, StatusCode::CREATED, "{b}");
        ids.push(b["id"].as_str().unwrap().to_owned());
    }
    let joiner = &ids[0];
    let (_, b) = e.get(ctx, &format!("/lora/bindings/{joiner}?sync=true")).await;
    assert_eq!(b["status"], "INVENTORY", "no device joins within its first simulated minute");

    // Past the longest join delay (5 simulated minutes).
    tokio::time::sleep(Duration::from_millis(2_800)).await;
    let (_, plain) = e.get(ctx, &format!("/lora/bindings/{joiner}")).await;
    assert_eq!(plain["status"], "INVENTORY", "without sync the binding keeps its stored status");
    let (_, synced) = e.get(ctx, &format!("/lora/bindings/{joiner}?sync=true")).await;
    assert_eq!(synced["status"], "ACTIVE", "{synced}");
    assert!(t(&synced["modifiedAt"]) > t(&plain["modifiedAt"]));
    assert!(synced["modifiedBy"].as_str().unwrap().starts_with("principal/"));
    let (_, listed) = e.get(ctx, "/lora/bindings?limit=1000").await;
    assert!(listed["items"].as_array().unwrap().iter().any(|b| b["id"] == joiner.as_str() && b["status"] == "ACTIVE"));
    let (_, again) = e.get(ctx, &format!("/lora/bindings/{joiner}?sync=true")).await;
    assert_eq!(again, synced, "a second sync changes nothing");

    if let Some(stuck) = ids.get(1) {
        let (_, b) = e.get(ctx, &format!("/lora/bindings/{stuck}?sync=true")).await;
        assert_eq!(b["status"], "INVENTORY", "a device out of coverage never joins");
    }

    // The same keys again (in upper case): the status stays.
    let (status, same) = e
        .send(
            ctx,
            Method::PUT,
            &format!("/lora/bindings/{joiner}"),
            json!({"deviceId": joining[0].id, "applicationServerId": "5E5E5E5E5E5E5E00", "appKey": APP_KEY}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(same["status"], "ACTIVE", "{same}");
    // New keys: the device has to join again.
    let (_, put) = e.send(ctx, Method::PUT, &format!("/lora/bindings/{joiner}"), json!({"deviceId": joining[0].id, "applicationServerId": "5e5e5e5e5e5e5e00", "appKey": "ffeeddccbbaa99887766554433221100"})).await;
    assert_eq!(put["status"], "INVENTORY", "{put}");
    assert_eq!(same["createdAt"], put["createdAt"]);
}

#[tokio::test]
async fn a_reseller_and_its_customers_never_see_each_others_bindings() {
    let e = env().await;
    let reseller = e.reseller();
    let customer = e.customers()[0];
    let password = "Isolation-Test-Password-1";

    let own = e.unbound_in(None, reseller, "mqtt", |_| true).await;
    let theirs = e.unbound_in(Some(customer), customer, "mqtt", |_| true).await;
    assert!(!own.is_empty() && !theirs.is_empty(), "both have unbound mqtt devices");

    let (status, mine) =
        e.send(None, Method::POST, "/mqtt/bindings", json!({"deviceId": own[0].id, "password": password})).await;
    assert_eq!(status, StatusCode::CREATED, "{mine}");
    let mine = mine["id"].as_str().unwrap().to_owned();
    let (status, cust) = e
        .send(Some(customer), Method::POST, "/mqtt/bindings", json!({"deviceId": theirs[0].id, "password": password}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{cust}");
    let cust = cust["id"].as_str().unwrap().to_owned();

    // Each sees its own binding only.
    for (ctx, visible, hidden) in [(None, &mine, &cust), (Some(customer), &cust, &mine)] {
        let (status, _) = e.get(ctx, &format!("/mqtt/bindings/{visible}")).await;
        assert_eq!(status, StatusCode::OK);
        let (status, _) = e.get(ctx, &format!("/mqtt/bindings/{hidden}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = e
            .send(
                ctx,
                Method::PUT,
                &format!("/mqtt/bindings/{hidden}"),
                json!({"deviceId": own[0].id, "password": password}),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = e.call(ctx, Method::DELETE, &format!("/mqtt/bindings/{hidden}"), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, page) = e.get(ctx, "/mqtt/bindings?limit=1000").await;
        let items = page["items"].as_array().unwrap();
        assert!(items.iter().any(|b| b["id"] == visible.as_str()));
        assert!(!items.iter().any(|b| b["id"] == hidden.as_str()));
        let owner = ctx.unwrap_or(reseller);
        for b in items {
            let device: Uuid = b["deviceId"].as_str().unwrap().parse().unwrap();
            assert!(e.sim.store().find_device(owner, &dcs_model::DeviceId::Uuid(device)).unwrap().is_some(), "{b}");
        }
    }

    // Every kind's list is isolated, in every environment.
    for kind in ["lora", "http", "mqtt"] {
        let mut seen = std::collections::HashSet::new();
        for (ctx, _) in e.environments() {
            let (status, page) = e.get(ctx, &format!("/{kind}/bindings?limit=1000")).await;
            assert_eq!(status, StatusCode::OK);
            for b in page["items"].as_array().unwrap() {
                assert!(
                    seen.insert(b["id"].as_str().unwrap().to_owned()),
                    "{kind} binding listed in two environments: {b}"
                );
            }
        }
    }

    // A device of another environment cannot be bound, whichever form names it.
    let (status, p) = e
        .send(
            Some(customer),
            Method::POST,
            "/mqtt/bindings",
            json!({"deviceId": format!("imei:{}", own[0].imei.as_deref().unwrap()), "password": password}),
        )
        .await;
    assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "deviceId"), "{p}");
    let (_, filtered) = e.get(Some(customer), &format!("/mqtt/bindings?deviceId={}", own[0].id)).await;
    assert!(filtered["items"].as_array().unwrap().is_empty());

    // clientId narrows to the caller's own client; another client's id gives an empty page.
    let (_, by_own) = e.get(None, &format!("/mqtt/bindings?clientId={reseller}&limit=1000")).await;
    assert!(by_own["items"].as_array().unwrap().iter().any(|b| b["id"] == mine.as_str()));
    let (_, by_customer) = e.get(None, &format!("/mqtt/bindings?clientId={customer}")).await;
    assert!(by_customer["items"].as_array().unwrap().is_empty());
    let (status, p) = e.get(None, "/mqtt/bindings?clientId=acme").await;
    assert_eq!((status, field(&p)), (StatusCode::BAD_REQUEST, "clientId"));

    // No token: 401, as everywhere.
    let res = e.http.get(format!("{}/mqtt/bindings", e.base)).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn reset_restores_the_seeded_bindings() {
    let e = env().await;
    let (ctx, devices) = e.pick("mqtt", 1, |_| true).await;
    let (_, before) = e.get(ctx, "/mqtt/bindings?limit=1000").await;
    let (status, b) = e
        .send(
            ctx,
            Method::POST,
            "/mqtt/bindings",
            json!({"deviceId": devices[0].id, "password": "Reset-Test-Password-12345"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    e.sim.reset().unwrap();
    let (_, after) = e.get(ctx, "/mqtt/bindings?limit=1000").await;
    assert_eq!(before, after, "the same seed gives the same bindings");
}
