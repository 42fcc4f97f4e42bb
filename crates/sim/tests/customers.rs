//! Per-customer API keys, a customer of no reseller, and the customer-management add-on
//! (reference section 5.4), over real HTTP: who sees what, and who may act for whom.

use std::collections::BTreeSet;

use dcs_sim::seed::{demo_keys, unrelated_customer, DemoKeyInfo};
use dcs_sim::SimOptions;
use reqwest::StatusCode;
use serde_json::Value;
use uuid::Uuid;

mod common;
use common::{token_for, Env};

async fn env() -> Env {
    common::start(SimOptions { devices_per_client: 30, ..Default::default() }).await
}

/// The demo key of the client named `name` (its own key, not one of the refusal keys).
fn key_of(name: &str) -> DemoKeyInfo {
    demo_keys(1).into_iter().find(|k| k.client_name == name).unwrap_or_else(|| panic!("no key for {name}"))
}

/// What each list shows, by identity: `id`, the state's device and module, the beta device's
/// `uuid`. Every list a customer has data in.
const LISTS: &[&str] = &[
    "/firmware/modules",
    "/firmware/packages",
    "/firmware/states",
    "/downlinks",
    "/lora/downlinks",
    "/http/downlinks",
    "/mqtt/downlinks",
    "/sms/downlinks",
    "/lora/bindings",
    "/http/bindings",
    "/mqtt/bindings",
    "/api/devices",
];

impl Env {
    async fn get(&self, token: &str, path: &str, ctx: Option<Uuid>) -> (StatusCode, Value) {
        let sep = if path.contains('?') { '&' } else { '?' };
        let url = if path == "/api/devices" {
            format!("{}{path}?pageSize=1000", self.base)
        } else {
            format!("{}{path}{sep}limit=1000", self.base)
        };
        let mut req = self
            .http
            .get(url)
            .bearer_auth(token)
            .header("Accept", "application/json, application/vnd.service.device.v1.response+json");
        if let Some(c) = ctx {
            req = req.header("Service-Security-Context", format!("client:uuid:{c}"));
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// The identities a list shows to `token` (acting for `ctx`); the list must answer 200
    /// on one page.
    async fn seen(&self, token: &str, path: &str, ctx: Option<Uuid>) -> BTreeSet<String> {
        let (status, page) = self.get(token, path, ctx).await;
        assert_eq!(status, StatusCode::OK, "{path}: {page}");
        assert!(page.get("next").is_none(), "{path}: one page holds it all");
        let items = page.get("items").or_else(|| page.get("content")).and_then(Value::as_array).unwrap();
        items
            .iter()
            .map(|x| match (x.get("id"), x.get("uuid")) {
                (Some(id), _) => id.as_str().unwrap().to_owned(),
                (None, Some(uuid)) => uuid.as_str().unwrap().to_owned(),
                _ => format!("{}/{}", x["deviceId"].as_str().unwrap(), x["moduleId"].as_str().unwrap()),
            })
            .collect()
    }

    async fn token_of(&self, key: &DemoKeyInfo) -> String {
        token_for(&self.http, &self.base, &key.key.key_id, &key.key.secret).await
    }
}

async fn refused(e: &Env, token: &str, path: &str, ctx: Uuid) -> Value {
    let (status, p) = e.get(token, path, Some(ctx)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{path} for {ctx}: {p}");
    p
}

/// The deprecated context switch (reference 4.5) to `customer` with `token`.
async fn context_switch(e: &Env, token: &str, customer: Uuid) -> reqwest::Response {
    e.http
        .get(format!("{}/api/v1/lifecycle/clients/{customer}/context-switch", e.base))
        .bearer_auth(token)
        .header("Accept", "application/json")
        .header("Content-Type", "application/json")
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn each_customer_key_sees_its_own_data_and_none_of_anothers() {
    let e = env().await;
    let reseller = key_of("Acme IoT Reseller");
    let reseller_token = e.token_of(&reseller).await;
    let customers = ["Northwind Utilities", "Contoso Logistics", "Fabrikam Farms"];

    let mut everything: Vec<(String, &str, BTreeSet<String>)> = Vec::new();
    for name in customers {
        let key = key_of(name);
        assert_eq!(e.sim.store().client(key.key.client_id).unwrap().unwrap().name, name);
        let token = e.token_of(&key).await;
        for path in LISTS {
            let own = e.seen(&token, path, None).await;
            // Exactly what the reseller sees with the header for this customer...
            let via_reseller = e.seen(&reseller_token, path, Some(key.key.client_id)).await;
            assert_eq!(own, via_reseller, "{name} {path}");
            // ...and never without it.
            let reseller_own = e.seen(&reseller_token, path, None).await;
            assert!(
                own.is_disjoint(&reseller_own),
                "{name} {path}: the reseller's own data shows only with the header"
            );
            everything.push((name.to_owned(), path, own));
        }
        // The seeded data gives every customer something in the main lists.
        for path in ["/firmware/modules", "/firmware/states", "/downlinks", "/api/devices"] {
            assert!(!e.seen(&token, path, None).await.is_empty(), "{name} {path}");
        }
        // A customer's key is no reseller: acting for another customer, or for itself through
        // the header, is refused.
        for other in customers.iter().map(|n| key_of(n).key.client_id) {
            refused(&e, &token, "/firmware/modules", other).await;
        }
    }
    // No identity is shown to two customers.
    for (i, (a, path, seen_a)) in everything.iter().enumerate() {
        for (b, path_b, seen_b) in &everything[i + 1..] {
            if path == path_b {
                assert!(seen_a.is_disjoint(seen_b), "{a} and {b} share items of {path}");
            }
        }
    }

    // A customer's downlink, module and binding are not found through another customer's key.
    let northwind = e.token_of(&key_of("Northwind Utilities")).await;
    let contoso = e.token_of(&key_of("Contoso Logistics")).await;
    for list in ["/downlinks", "/firmware/modules", "/mqtt/bindings", "/lora/downlinks"] {
        let Some(id) = e.seen(&northwind, list, None).await.into_iter().next() else { continue };
        let (status, _) = e.get(&northwind, &format!("{list}/{id}"), None).await;
        assert_eq!(status, StatusCode::OK, "{list}/{id} for its owner");
        let (status, body) = e.get(&contoso, &format!("{list}/{id}"), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{list}/{id} for another customer: {body}");
    }
}

#[tokio::test]
async fn the_unrelated_customer_is_no_ones_customer_and_acts_for_no_one() {
    let e = env().await;
    let (unrelated_id, unrelated_name) = unrelated_customer(1);
    let row = e.sim.store().client(unrelated_id).unwrap().expect("the unrelated customer is seeded");
    assert_eq!((row.name.as_str(), row.reseller_id), (unrelated_name, None));

    let own_key = key_of(unrelated_name);
    assert_eq!(own_key.key.client_id, unrelated_id);
    let token = e.token_of(&own_key).await;
    let reseller_token = e.token_of(&key_of("Acme IoT Reseller")).await;
    let northwind = key_of("Northwind Utilities").key.client_id;

    // Its own data: modules, states, downlinks and bindings of its own.
    let (_, modules) = e.get(&token, "/firmware/modules", None).await;
    let modules = modules["items"].as_array().unwrap();
    assert!(!modules.is_empty());
    assert!(modules.iter().all(|m| m["clientId"] == unrelated_id.to_string()));
    for path in LISTS {
        let mine = e.seen(&token, path, None).await;
        if ["/firmware/modules", "/firmware/states", "/downlinks", "/api/devices"].contains(path) {
            assert!(!mine.is_empty(), "{path}");
        }
        // The reseller never sees any of it, with or without a header for its customers.
        assert!(mine.is_disjoint(&e.seen(&reseller_token, path, None).await), "{path}");
        assert!(mine.is_disjoint(&e.seen(&reseller_token, path, Some(northwind)).await), "{path}");
    }

    // The reseller may not act for it: 403 as "not your customer", on the new and the beta API.
    let p = refused(&e, &reseller_token, "/firmware/modules", unrelated_id).await;
    assert!(p["detail"].as_str().unwrap().contains("reseller"), "{p}");
    refused(&e, &reseller_token, "/api/devices", unrelated_id).await;
    let switch = context_switch(&e, &reseller_token, unrelated_id).await;
    assert_eq!(switch.status(), StatusCode::FORBIDDEN);

    // Its key may not act for Northwind (nor for itself through the header).
    for target in [northwind, unrelated_id] {
        let p = refused(&e, &token, "/firmware/states", target).await;
        assert!(p["detail"].as_str().unwrap().contains("reseller"), "{p}");
    }
}

#[tokio::test]
async fn a_key_without_the_customer_management_add_on_cannot_act_for_customers() {
    let e = env().await;
    let keys = demo_keys(1);
    let without = keys.iter().find(|k| k.key.key_id == "sim-no-customer-management").expect("the key is listed");
    let reseller = &keys[0];
    assert_eq!(without.key.client_id, reseller.key.client_id, "a key of the demo reseller");
    let token = e.token_of(without).await;
    let northwind = key_of("Northwind Utilities").key.client_id;

    // Its own environment works as for the reseller's main key.
    let reseller_token = e.token_of(reseller).await;
    assert_eq!(
        e.seen(&token, "/firmware/modules", None).await,
        e.seen(&reseller_token, "/firmware/modules", None).await
    );

    // Acting for its own customer is refused, naming the add-on; the main key may.
    for path in ["/firmware/modules", "/downlinks", "/api/devices"] {
        let p = refused(&e, &token, path, northwind).await;
        assert!(p["detail"].as_str().unwrap().contains("customer-management add-on"), "{path}: {p}");
        let (status, _) = e.get(&reseller_token, path, Some(northwind)).await;
        assert_eq!(status, StatusCode::OK, "{path}");
    }
    // So is the deprecated way in: no context switch, so no x-client-id.
    let switch = context_switch(&e, &token, northwind).await;
    assert_eq!(switch.status(), StatusCode::FORBIDDEN);
    let p: Value = switch.json().await.unwrap();
    assert!(p["detail"].as_str().unwrap().contains("customer-management add-on"), "{p}");
    assert_eq!(e.sim.store().context_switch_grants().unwrap(), 0, "a refused switch grants nothing");
    let legacy = e
        .http
        .get(format!("{}/firmware/modules", e.base))
        .bearer_auth(&token)
        .header("x-client-id", northwind.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(legacy.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn every_listed_demo_key_is_a_key_of_the_simulator() {
    let e = env().await;
    let keys = demo_keys(1);
    assert_eq!(keys[0].key, e.sim.demo_key(), "the reseller's key comes first");
    let mut ids = BTreeSet::new();
    for k in &keys {
        assert!(ids.insert(k.key.key_id.clone()), "{} listed twice", k.key.key_id);
        let client =
            e.sim.store().client(k.key.client_id).unwrap().unwrap_or_else(|| panic!("{}: no client", k.key.key_id));
        assert_eq!(client.name, k.client_name, "{}", k.key.key_id);
        let res = e
            .http
            .post(format!("{}/api/v3/idp/oidc/token", e.base))
            .json(&serde_json::json!({"grant_type": "client_credentials", "audience": common::AUDIENCE,
                                      "client_id": k.key.key_id, "client_secret": k.key.secret}))
            .send()
            .await
            .unwrap();
        let expected = if k.key.key_id == "sim-no-service" { StatusCode::UNAUTHORIZED } else { StatusCode::OK };
        assert_eq!(res.status(), expected, "{}", k.key.key_id);
    }
    for name in ["Northwind Utilities", "Contoso Logistics", "Fabrikam Farms", "Tailspin Toys"] {
        assert!(keys.iter().any(|k| k.client_name == name && !k.key.key_id.contains("no-")), "{name} has a key");
    }
}

/// A data file written before the add-on existed: its keys keep acting for customers.
#[test]
fn a_data_file_from_before_the_add_on_keeps_its_keys_able_to_act_for_customers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE clients (id TEXT PRIMARY KEY, name TEXT NOT NULL, reseller_id TEXT REFERENCES clients(id));
             CREATE TABLE api_keys (key_id TEXT PRIMARY KEY, secret TEXT NOT NULL, client_id TEXT NOT NULL REFERENCES clients(id),
                 scopes TEXT NOT NULL, service_granted INTEGER NOT NULL, firmware_authorized INTEGER NOT NULL);
             INSERT INTO clients VALUES ('7c9e6679-7425-40de-944b-e07fc1f90ae7', 'Old Reseller', NULL);
             INSERT INTO api_keys VALUES ('old-key', 's3cret', '7c9e6679-7425-40de-944b-e07fc1f90ae7', 'device.read', 1, 1);",
        )
        .unwrap();
    }
    let store = dcs_sim::Store::open(&path).unwrap();
    let key = store.api_key("old-key").unwrap().unwrap();
    assert!(key.customer_management, "keys of an old file had the capability");
    drop(store);
    // Opening it again does not try to add the column twice.
    let store = dcs_sim::Store::open(&path).unwrap();
    assert!(store.api_key("old-key").unwrap().unwrap().customer_management);
}
