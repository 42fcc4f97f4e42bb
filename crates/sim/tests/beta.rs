//! The deprecated beta API over real HTTP: the paged device listing, its Accept and token
//! checks, the context switch and the deprecated `x-client-id` sub-customer mode.

use std::time::Duration;

use dcs_sim::{SimOptions, Simulator};
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use serde_json::{json, Value};
use uuid::Uuid;

mod common;
use common::{start as env_with, token_for as token_of, urlencode as url_encode, Env};

const DEVICE_V1: &str = "application/vnd.service.device.v1.response+json";
const TOKEN_PATH: &str = "/api/v3/idp/oidc/token";
const DEVICES: u64 = 40;

async fn env() -> Env {
    common::start(SimOptions { devices_per_client: DEVICES as u32, ..Default::default() }).await
}

impl Env {
    /// A GET with the demo token, the beta Accept header and any extra headers.
    async fn beta(&self, path: &str, extra: &[(&str, &str)]) -> (StatusCode, HeaderMap, Value) {
        let mut req =
            self.http.get(format!("{}{path}", self.base)).bearer_auth(&self.token).header("Accept", DEVICE_V1);
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        let headers = res.headers().clone();
        (status, headers, res.json().await.unwrap_or(Value::Null))
    }

    async fn devices(&self, query: &str) -> Value {
        let (status, headers, body) = self.beta(&format!("/api/devices{query}"), &[]).await;
        assert_eq!(status, StatusCode::OK, "{query}: {body}");
        assert_eq!(headers["content-type"], DEVICE_V1);
        body
    }

    async fn context_switch(&self, token: &str, client: &str) -> (StatusCode, Value) {
        let res = self
            .http
            .get(format!("{}/api/v1/lifecycle/clients/{client}/context-switch", self.base))
            .bearer_auth(token)
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .send()
            .await
            .unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    async fn modules(&self, extra: &[(&str, &str)]) -> (StatusCode, Value) {
        let mut req = self.http.get(format!("{}/firmware/modules?limit=1000", self.base)).bearer_auth(&self.token);
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    fn customers(&self) -> Vec<Uuid> {
        let reseller = self.sim.demo_key().client_id;
        self.sim
            .store()
            .clients()
            .unwrap()
            .into_iter()
            .filter(|c| c.reseller_id == Some(reseller))
            .map(|c| c.id)
            .collect()
    }
}

fn strings(page: &Value, field: &str) -> Vec<String> {
    page["content"].as_array().unwrap().iter().map(|d| d[field].as_str().unwrap().to_owned()).collect()
}

fn assert_paging(page: &Value, number: u64, size: u64, elements: u64, first: bool, last: bool) {
    assert_eq!(page["number"], number, "{page}");
    assert_eq!(page["size"], size);
    assert_eq!(page["numberOfElements"], elements);
    assert_eq!(page["content"].as_array().unwrap().len() as u64, elements);
    assert_eq!(page["totalElements"], DEVICES);
    assert_eq!(page["totalPages"], DEVICES.div_ceil(size));
    assert_eq!(page["first"], first);
    assert_eq!(page["last"], last);
}

#[tokio::test]
async fn devices_page_by_number_with_totals() {
    let e = env().await;

    // Defaults: page 0 of 20, by name ascending.
    let page = e.devices("").await;
    assert_paging(&page, 0, 20, 20, true, false);
    assert_eq!(
        page["sort"],
        json!([{"direction": "ASC", "property": "name", "ignoreCase": false, "nullHandling": "NATIVE", "ascending": true, "descending": false}])
    );
    let device = &page["content"][0];
    for field in ["uuid", "name", "description", "metadata", "deviceSpecificationUUID", "barcode"] {
        assert!(device.get(field).is_some(), "device lacks {field}: {device}");
    }
    assert!(device["metadata"].is_object());
    let typed: dcs_model::BetaDevicePage = serde_json::from_value(page.clone()).unwrap();
    assert_eq!(typed.content.len(), 20);

    // Everything at once, then the same list 15 at a time: 15 + 15 + 10.
    let all = e.devices("?pageSize=1000").await;
    assert_paging(&all, 0, 1000, DEVICES, true, true);
    let all_ids = strings(&all, "uuid");
    let p0 = e.devices("?pageSize=15&currentPage=0").await;
    assert_paging(&p0, 0, 15, 15, true, false);
    let p1 = e.devices("?pageSize=15&currentPage=1").await;
    assert_paging(&p1, 1, 15, 15, false, false);
    let p2 = e.devices("?pageSize=15&currentPage=2").await;
    assert_paging(&p2, 2, 15, 10, false, true);
    let paged: Vec<String> = [p0, p1, p2].iter().flat_map(|p| strings(p, "uuid")).collect();
    assert_eq!(paged, all_ids);

    // Exactly divisible: the second of two pages is the last.
    let p = e.devices("?pageSize=20&currentPage=1").await;
    assert_paging(&p, 1, 20, 20, false, true);
    // Past the end: an empty last page that keeps the page number asked for.
    let p = e.devices("?pageSize=15&currentPage=7").await;
    assert_paging(&p, 7, 15, 0, false, true);
    // One device a page.
    let p = e.devices("?pageSize=1&currentPage=39").await;
    assert_paging(&p, 39, 1, 1, false, true);
    assert_eq!(strings(&p, "uuid"), vec![all_ids[39].clone()]);
}

#[tokio::test]
async fn search_is_a_case_sensitive_partial_match_on_name_description_and_barcode() {
    let e = env().await;
    let all = e.devices("?pageSize=1000").await;
    let devices = all["content"].as_array().unwrap().clone();
    let matching = |needle: &str| -> Vec<String> {
        let mut ids: Vec<String> = devices
            .iter()
            .filter(|d| ["name", "description", "barcode"].iter().any(|f| d[*f].as_str().unwrap().contains(needle)))
            .map(|d| d["uuid"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    let env = &e;
    let search = |needle: &str| {
        let q = format!("?pageSize=1000&sortBy=uuid&search={}", url_encode(needle));
        async move { env.devices(&q).await }
    };

    // A word of a description (e.g. "Tracker", "Water", "Gateway").
    let word = devices[0]["description"].as_str().unwrap().split(' ').nth(1).unwrap().to_owned();
    let found = search(&word).await;
    assert_eq!(strings(&found, "uuid"), matching(&word));
    assert!(!matching(&word).is_empty());
    assert_eq!(found["totalElements"], matching(&word).len());
    // The same word in lower case is another search.
    let lower = word.to_lowercase();
    assert_ne!(lower, word);
    let found = search(&lower).await;
    assert_eq!(strings(&found, "uuid"), matching(&lower));
    assert!(matching(&lower).len() < matching(&word).len());

    // Part of a name, and a whole barcode.
    let name_part = &devices[3]["name"].as_str().unwrap()[..4];
    assert_eq!(strings(&search(name_part).await, "uuid"), matching(name_part));
    let barcode = devices[5]["barcode"].as_str().unwrap();
    let found = search(barcode).await;
    assert_eq!(strings(&found, "uuid"), vec![devices[5]["uuid"].as_str().unwrap().to_owned()]);

    // Nothing matches: an empty page that is both first and last.
    let none = search("no device has this").await;
    assert_eq!(none["totalElements"], 0);
    assert_eq!(none["totalPages"], 0);
    assert_eq!((none["first"].as_bool(), none["last"].as_bool()), (Some(true), Some(true)));
}

#[tokio::test]
async fn sorting_by_each_field_both_ways() {
    let e = env().await;
    for field in ["name", "uuid", "barcode", "description"] {
        let asc = e.devices(&format!("?pageSize=1000&sortBy={field}")).await;
        let values = strings(&asc, field);
        let mut sorted = values.clone();
        sorted.sort();
        assert_eq!(values, sorted, "sortBy={field} defaults to ascending");
        assert_eq!(asc["sort"][0]["property"], field);

        for order in ["DESC", "desc"] {
            let desc = e.devices(&format!("?pageSize=1000&sortBy={field}&sortOrder={order}")).await;
            let mut reversed = sorted.clone();
            reversed.reverse();
            assert_eq!(strings(&desc, field), reversed, "sortBy={field}&sortOrder={order}");
            assert_eq!(desc["sort"][0]["direction"], "DESC");
            assert_eq!(desc["sort"][0]["descending"], true);
            assert_eq!(desc["sort"][0]["ascending"], false);
        }
        let explicit = e.devices(&format!("?pageSize=1000&sortBy={field}&sortOrder=asc")).await;
        assert_eq!(strings(&explicit, field), sorted);
    }

    // Sorting applies before paging: the second page continues the first.
    let p0 = e.devices("?pageSize=7&sortBy=barcode&sortOrder=DESC").await;
    let p1 = e.devices("?pageSize=7&sortBy=barcode&sortOrder=DESC&currentPage=1").await;
    let all = e.devices("?pageSize=1000&sortBy=barcode&sortOrder=DESC").await;
    let both: Vec<String> = strings(&p0, "barcode").into_iter().chain(strings(&p1, "barcode")).collect();
    assert_eq!(both, strings(&all, "barcode")[..14].to_vec());
}

#[tokio::test]
async fn bad_query_parameters_are_400s_naming_the_parameter() {
    let e = env().await;
    for (query, name) in [
        ("sortBy=createdAt", "sortBy"),
        ("sortBy=Name", "sortBy"),
        ("sortOrder=UP", "sortOrder"),
        ("pageSize=0", "pageSize"),
        ("pageSize=1001", "pageSize"),
        ("pageSize=ten", "pageSize"),
        ("currentPage=-1", "currentPage"),
        ("currentPage=2147483648", "currentPage"),
        ("currentPage=1&currentPage=2", "currentPage"),
    ] {
        let (status, headers, body) = e.beta(&format!("/api/devices?{query}"), &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(headers["content-type"], "application/problem+json");
        assert_eq!(body["invalidParams"][0]["name"], name, "{query}: {body}");
    }
    // The largest page size is allowed.
    e.devices("?pageSize=1000&currentPage=2147483647").await;
}

#[tokio::test]
async fn the_beta_accept_header_is_required() {
    let e = env().await;
    let url = format!("{}/api/devices", e.base);
    let send = |accept: Option<&'static str>| {
        let mut req = e.http.get(&url).bearer_auth(&e.token);
        if let Some(a) = accept {
            req = req.header("Accept", a);
        }
        async move {
            let res = req.send().await.unwrap();
            let status = res.status();
            (status, res.json::<Value>().await.unwrap())
        }
    };
    for accept in [None, Some("application/json"), Some("*/*"), Some("application/vnd.service.device.v2.response+json")]
    {
        let (status, body) = send(accept).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{accept:?}");
        assert_eq!(body["invalidParams"][0]["name"], "Accept");
        assert!(body["detail"].as_str().unwrap().contains(DEVICE_V1));
    }
    for accept in [
        DEVICE_V1,
        "application/vnd.service.device.v1.response+json; charset=utf-8",
        "application/json, application/vnd.service.device.v1.response+json;q=0.9",
    ] {
        let (status, body) = send(Some(accept)).await;
        assert_eq!(status, StatusCode::OK, "{accept}: {body}");
    }
}

#[tokio::test]
async fn bad_tokens_are_302s_to_the_token_endpoint_on_beta_paths_only() {
    let e =
        env_with(SimOptions { devices_per_client: 10, token_lifetime: Duration::from_secs(1), ..Default::default() })
            .await;
    let customer = e.customers()[0];
    let beta_paths = ["/api/devices".to_owned(), format!("/api/v1/lifecycle/clients/{customer}/context-switch")];
    // A token of another simulator (another seed); `_e2` keeps that simulator running.
    let _e2 = env_with(SimOptions { seed: 2, devices_per_client: 10, ..Default::default() }).await;
    let other = _e2.token.clone();

    let get = |path: &str, auth: Option<String>| {
        let mut req =
            e.http.get(format!("{}{path}", e.base)).header("Accept", DEVICE_V1).header("Accept", "application/json");
        if let Some(a) = auth {
            req = req.header("Authorization", a);
        }
        req.send()
    };
    let assert_302 = |res: reqwest::Response, why: &str| {
        assert_eq!(res.status(), StatusCode::FOUND, "{why}");
        assert_eq!(res.headers()["location"], TOKEN_PATH, "{why}");
        assert_eq!(res.headers()["content-type"], "application/problem+json");
    };
    for path in &beta_paths {
        assert_302(get(path, None).await.unwrap(), "no token");
        assert_302(get(path, Some("Basic abc".into())).await.unwrap(), "not bearer");
        assert_302(get(path, Some("Bearer not.a.jwt".into())).await.unwrap(), "malformed");
        assert_302(get(path, Some(format!("Bearer {other}"))).await.unwrap(), "another simulator's token");
    }
    // The new API keeps its 401s.
    let res = get("/firmware/modules", None).await.unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(res.headers().get("location").is_none());
    let res = get("/firmware/modules", Some(format!("Bearer {other}"))).await.unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);

    // The same token works, then expires: 302 on the beta API, 401 on the new one.
    assert_eq!(get("/api/devices", Some(format!("Bearer {}", e.token))).await.unwrap().status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let res = get("/api/devices", Some(format!("Bearer {}", e.token))).await.unwrap();
    assert_302(res, "expired");
    let res = get("/firmware/modules", Some(format!("Bearer {}", e.token))).await.unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn context_switch_then_x_client_id_acts_for_the_customer_everywhere() {
    let e = env().await;
    let customers = e.customers();
    let (customer, other_customer) = (customers[0], customers[1]);
    let cid = customer.to_string();
    let own_ids = strings(&e.devices("?pageSize=1000").await, "uuid");

    // Before the context switch, x-client-id is refused and names the way out.
    let (status, _, body) = e.beta("/api/devices", &[("x-client-id", &cid)]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body["detail"].as_str().unwrap().contains("context switch"), "{body}");
    let (status, _) = e.modules(&[("x-client-id", &cid)]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // The switch; a second one changes nothing.
    for _ in 0..2 {
        let (status, body) = e.context_switch(&e.token, &cid).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body, json!({"clientId": cid, "granted": true}));
        let typed: dcs_model::ContextSwitch = serde_json::from_value(body).unwrap();
        assert_eq!(typed.client_id, customer);
    }
    assert_eq!(e.sim.store().context_switch_grants().unwrap(), 1);

    // The beta listing now shows the customer's devices, as the security context does.
    let (status, _, legacy) = e.beta("/api/devices?pageSize=1000", &[("x-client-id", &cid)]).await;
    assert_eq!(status, StatusCode::OK, "{legacy}");
    assert_eq!(legacy["totalElements"], DEVICES);
    let legacy_ids = strings(&legacy, "uuid");
    assert!(legacy_ids.iter().all(|id| !own_ids.contains(id)), "the customer's devices are not the reseller's");
    let context = format!("client:uuid:{cid}");
    let (status, _, modern) = e.beta("/api/devices?pageSize=1000", &[("Service-Security-Context", &context)]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(strings(&modern, "uuid"), legacy_ids);

    // And the new API too: the customer's firmware modules.
    let (status, legacy) = e.modules(&[("x-client-id", &cid)]).await;
    assert_eq!(status, StatusCode::OK, "{legacy}");
    let items = legacy["items"].as_array().unwrap();
    assert!(!items.is_empty());
    assert!(items.iter().all(|m| m["clientId"] == cid.as_str()));
    let (_, modern) = e.modules(&[("Service-Security-Context", &context)]).await;
    assert_eq!(legacy["items"], modern["items"]);
    let (_, own) = e.modules(&[]).await;
    assert_ne!(own["items"], legacy["items"]);

    // The grant is for that customer and that key only.
    let (status, _) = e.modules(&[("x-client-id", &other_customer.to_string())]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let key = e.sim.demo_key();
    let sibling = token_of(&e.http, &e.base, "sim-no-firmware", &format!("{}-no-firmware", key.secret)).await;
    let res = e
        .http
        .get(format!("{}/api/devices", e.base))
        .bearer_auth(&sibling)
        .header("Accept", DEVICE_V1)
        .header("x-client-id", &cid)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN, "another key of the same client has no grant");

    // A reset forgets the grants.
    e.sim.reset().unwrap();
    assert_eq!(e.sim.store().context_switch_grants().unwrap(), 0);
    let (status, _, _) = e.beta("/api/devices", &[("x-client-id", &cid)]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn context_switch_refusals() {
    let e = env().await;
    let customer = e.customers()[0].to_string();
    let reseller = e.sim.demo_key().client_id.to_string();

    // Not a customer of the key's client: the reseller itself, an unknown client, and a
    // customer of another reseller (another seed's data set).
    let stranger = {
        let other = Simulator::new(SimOptions { seed: 7, devices_per_client: 1, ..Default::default() }).unwrap();
        let reseller = other.demo_key().client_id;
        other.store().clients().unwrap().into_iter().find(|c| c.reseller_id == Some(reseller)).unwrap().id
    };
    for id in [reseller.clone(), Uuid::new_v4().to_string(), stranger.to_string()] {
        let (status, body) = e.context_switch(&e.token, &id).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{id}: {body}");
    }
    let (status, body) = e.context_switch(&e.token, "not-a-uuid").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["invalidParams"][0]["name"], "clientId");
    assert_eq!(e.sim.store().context_switch_grants().unwrap(), 0, "a refused switch grants nothing");

    // Accept must be JSON.
    let url = format!("{}/api/v1/lifecycle/clients/{customer}/context-switch", e.base);
    for accept in [None, Some("text/plain"), Some(DEVICE_V1)] {
        let mut req = e.http.get(&url).bearer_auth(&e.token).header("Content-Type", "application/json");
        if let Some(a) = accept {
            req = req.header("Accept", a);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{accept:?}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["invalidParams"][0]["name"], "Accept");
    }
}

#[tokio::test]
async fn x_client_id_misuse_is_refused() {
    let e = env().await;
    let customer = e.customers()[0].to_string();
    let (status, _) = e.context_switch(&e.token, &customer).await;
    assert_eq!(status, StatusCode::OK);
    let context = format!("client:uuid:{customer}");

    // Both headers, on the beta and the new API.
    let (status, _, body) =
        e.beta("/api/devices", &[("x-client-id", &customer), ("Service-Security-Context", &context)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["invalidParams"][0]["name"], "x-client-id");
    let (status, body) = e.modules(&[("x-client-id", &customer), ("Service-Security-Context", &context)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["invalidParams"][0]["name"], "x-client-id");

    // Malformed values.
    for bad in ["not-a-uuid", "client:uuid:0b6f0d0e-2f4c-4f55-9b3b-6f4f5d2c1a10", ""] {
        let (status, body) = e.modules(&[("x-client-id", bad)]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad:?}");
        assert_eq!(body["invalidParams"][0]["name"], "x-client-id");
    }

    // The header twice, even with the same value.
    let (status, _, body) = e.beta("/api/devices", &[("x-client-id", &customer), ("x-client-id", &customer)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["invalidParams"][0]["name"], "x-client-id");

    // The key's own client is not a customer: no switch to it, so x-client-id to it is a 403.
    let own = e.sim.demo_key().client_id.to_string();
    let (status, _, _) = e.beta("/api/devices", &[("x-client-id", &own)]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
