//! One page at a time on every list, firmware-state filters the service may ignore, a module's
//! detail, the beta actuator downlink, and the fields a refusal names: against `dcs sim`, and
//! against a small hand-made service that ignores every filter beyond `clientId`.

mod common;

use std::net::SocketAddr;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use common::{dcs, run_config, s, stderr, Sim};
use serde_json::{json, Value};

fn demo_secret() -> String {
    let out = dcs().args(["sim", "demo-key", "--seed", "31", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["clientSecret"].as_str().unwrap().to_owned()
}

fn against(url: &str, secret: &str, args: &[&str]) -> Output {
    let mut c: Command = dcs();
    c.args(["--base-url", url, "--client-id", "sim-reseller"]).args(args).env("DCS_CLIENT_SECRET", secret);
    c.output().unwrap()
}

fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn every_list_gives_one_page_with_next_and_prev_cursors_or_every_page() {
    let sim = Sim::start(&run_config(), &["--seed", "31", "--devices-per-client", "20"]);
    let secret = demo_secret();
    let run = |args: &[&str]| against(&sim.url, &secret, args);

    let all = json_of(&run(&["--json", "firmware", "modules", "list"]));
    let all = all.as_array().expect("every page: an array").clone();
    assert!(all.len() >= 3, "the demo data set has modules");

    // One page of two, then the next one from its cursor, then back with `prev`.
    let first = json_of(&run(&["--json", "firmware", "modules", "list", "--limit", "2", "--sort", "id"]));
    assert_eq!(first["items"].as_array().unwrap().len(), 2);
    assert!(first["prev"].is_null(), "the first page has no prev: {first}");
    let next = s(&first["next"]).to_owned();
    let second = json_of(&run(&["--json", "firmware", "modules", "list", "--cursor", &next]));
    assert_ne!(second["items"][0]["id"], first["items"][0]["id"]);
    let prev = s(&second["prev"]).to_owned();
    let back = json_of(&run(&["--json", "firmware", "modules", "list", "--cursor", &prev]));
    assert_eq!(back["items"], first["items"], "a prev link leads back to the first page");

    // For people: the table, then how to get the neighbours.
    let text = run(&["firmware", "modules", "list", "--cursor", &next]);
    let text = String::from_utf8(text.stdout).unwrap();
    let last = text.lines().last().unwrap();
    assert!(last.contains("previous page: --cursor '") && last.contains(&prev), "{text}");

    // --all with --limit follows every page.
    let paged = json_of(&run(&["--json", "firmware", "modules", "list", "--all", "--limit", "2"]));
    assert_eq!(paged.as_array().unwrap().len(), all.len());

    // The same options on the other lists.
    for list in [
        &["firmware", "packages", "list"][..],
        &["firmware", "states", "list"],
        &["downlinks", "list"],
        &["downlinks", "lora", "list"],
        &["bindings", "mqtt", "list"],
    ] {
        let mut args = vec!["--json"];
        args.extend_from_slice(list);
        args.extend(["--limit", "1"]);
        let page = json_of(&run(&args));
        assert!(page["items"].as_array().is_some_and(|i| i.len() <= 1), "{list:?}: {page}");
        assert!(page.get("next").is_some() && page.get("prev").is_some(), "{list:?}: {page}");
    }

    // A cursor that is neither a link nor a cursor of this service: the service's refusal.
    let bad = run(&["firmware", "modules", "list", "--cursor", ""]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("cursor"), "{}", stderr(&bad));
}

#[test]
fn state_filters_honoured_by_the_simulator_need_no_second_look() {
    let sim = Sim::start(&run_config(), &["--seed", "31", "--devices-per-client", "20"]);
    let secret = demo_secret();
    let states = json_of(&against(&sim.url, &secret, &["--json", "firmware", "states", "list"]));
    let module = s(&states[0]["moduleId"]).to_owned();
    let out = against(&sim.url, &secret, &["--json", "firmware", "states", "list", "--module-id", &module]);
    let only = json_of(&out);
    assert!(!only.as_array().unwrap().is_empty());
    assert!(only.as_array().unwrap().iter().all(|s| s["moduleId"] == module.as_str()));
    assert!(!stderr(&out).contains("ignored"), "{}", stderr(&out));
}

/// What the hand-made service was asked.
#[derive(Default)]
struct Seen {
    queries: Vec<String>,
    beta: Vec<(String, Value)>,
}

type Shared = Arc<Mutex<Seen>>;

const MODULE: &str = "3f0e8f4c-5b1a-4d2e-9c8b-7a6f5e4d3c2b";
const OTHER: &str = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const SPEC: &str = "5c1e0000-0000-4000-8000-000000000001";

fn state(device: u32, module: &str, status: &str) -> Value {
    json!({"deviceId": format!("00000000-0000-4000-8000-{device:012}"), "moduleId": module, "firmwareUpdateStatus": status})
}

/// States, ignoring every filter: two pages of two, linked by relative `next`/`prev` links.
async fn states(State(seen): State<Shared>, RawQuery(q): RawQuery) -> Json<Value> {
    let q = q.unwrap_or_default();
    seen.lock().unwrap().queries.push(q.clone());
    if q.contains("cursor=p2") {
        Json(json!({"items": [state(3, MODULE, "FAILED"), state(4, OTHER, "FAILED")], "prev": "states?cursor=p1"}))
    } else {
        Json(json!({"items": [state(1, MODULE, "PENDING"), state(2, OTHER, "FAILED")], "next": "states?cursor=p2"}))
    }
}

async fn module(Path(id): Path<String>) -> Json<Value> {
    Json(json!({
        "id": id, "name": "Modem", "firmwareVersionAttributeName": "modem_fw", "deviceSpecificationId": SPEC,
        "createdAt": "2026-01-02T03:04:05Z", "createdBy": "alice", "modifiedBy": "bob",
        "hardwareRevision": "C2"
    }))
}

/// Packages, ignoring the module filter.
async fn packages() -> Json<Value> {
    let p = |id: &str, module: &str, v: &str| json!({"id": id, "moduleId": module, "deviceSpecificationId": SPEC, "firmwareVersion": v});
    Json(json!({"items": [
        p("9b2d0000-0000-4000-8000-000000000001", MODULE, "1.4.0"),
        p("9b2d0000-0000-4000-8000-000000000002", OTHER, "7.7.7")
    ]}))
}

/// Refuses every package with two named fields.
async fn create_package() -> impl IntoResponse {
    let problem = json!({
        "type": "about:blank", "title": "Bad Request", "status": 400, "detail": "the package is invalid",
        "invalidParams": [
            {"name": "firmwareVersion", "reason": "already exists for this module"},
            {"name": "description", "reason": "contains a forbidden word"}
        ]
    });
    (StatusCode::BAD_REQUEST, [("content-type", "application/problem+json")], problem.to_string())
}

async fn beta(State(seen): State<Shared>, RawQuery(q): RawQuery, Json(body): Json<Value>) -> Json<Value> {
    seen.lock().unwrap().beta.push((q.unwrap_or_default(), body));
    Json(json!({"accepted": 1, "shapeNotShown": true}))
}

/// The hand-made service on a free port, in a runtime of its own.
fn hand_made() -> (String, Shared, tokio::runtime::Runtime) {
    let seen = Shared::default();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let app = Router::new()
        .route(
            "/api/v3/idp/oidc/token",
            post(|| async { Json(json!({"access_token": "t", "token_type": "Bearer", "expires_in": 3600})) }),
        )
        .route("/firmware/states", get(states))
        .route("/firmware/modules/{id}", get(module))
        .route("/firmware/packages", get(packages).post(create_package))
        .route("/api/actuator/downlinks", post(beta))
        .with_state(seen.clone());
    let listener = rt.block_on(tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen, rt)
}

#[test]
fn a_service_that_ignores_state_filters_is_caught_and_the_states_are_filtered_here() {
    let (url, seen, _rt) = hand_made();
    let run = |args: &[&str]| against(&url, "secret", args);

    let out = run(&["--json", "firmware", "states", "list", "--module-id", MODULE, "--status", "FAILED"]);
    let kept = json_of(&out);
    assert_eq!(kept.as_array().unwrap().len(), 1, "only the state matching both filters, across both pages: {kept}");
    assert_eq!(kept[0]["deviceId"], "00000000-0000-4000-8000-000000000003");
    let note = stderr(&out);
    assert!(
        note.contains("ignored the filters moduleId, firmwareUpdateStatus") && note.contains("filtered here"),
        "{note}"
    );
    let asked = seen.lock().unwrap().queries.first().cloned().unwrap();
    assert!(asked.contains(&format!("moduleId={MODULE}")), "the opt-in filters were sent: {asked}");

    // --filter-here sends only the documented clientId.
    seen.lock().unwrap().queries.clear();
    let owner = "0f4c2a1e-7d0b-4c55-9a8e-3b1d2c4e5f60";
    let out = run(&[
        "--json",
        "firmware",
        "states",
        "list",
        "--module-id",
        MODULE,
        "--client-id-filter",
        owner,
        "--filter-here",
        "--limit",
        "2",
    ]);
    let page = json_of(&out);
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert!(stderr(&out).contains("filtered here, not on the service: moduleId"), "{}", stderr(&out));
    let asked = seen.lock().unwrap().queries[0].clone();
    assert!(asked.contains("clientId=") && !asked.contains("moduleId"), "{asked}");

    // Relative next/prev links of one page resolve against the list.
    let next = s(&page["next"]).to_owned();
    assert!(next.starts_with(&url) && next.ends_with("/firmware/states?cursor=p2"), "{next}");
    let second = json_of(&run(&["--json", "firmware", "states", "list", "--cursor", &next]));
    assert!(s(&second["prev"]).ends_with("/firmware/states?cursor=p1"), "{second}");
    assert!(second["next"].is_null());
}

#[test]
fn a_modules_detail_shows_its_audit_and_unknown_members_and_only_its_packages() {
    let (url, _seen, _rt) = hand_made();
    let out = against(&url, "secret", &["firmware", "modules", "show", MODULE]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    for want in ["Modem", "modem_fw", "by alice", "by bob", "hardwareRevision", "\"C2\"", "1.4.0"] {
        assert!(text.contains(want), "{want} in:\n{text}");
    }
    assert!(!text.contains("7.7.7"), "a package of another module the service sent along is left out:\n{text}");

    let v = json_of(&against(&url, "secret", &["--json", "firmware", "modules", "get", MODULE]));
    assert_eq!(v["module"]["hardwareRevision"], "C2");
    assert_eq!(v["packages"].as_array().unwrap().len(), 1);
}

#[test]
fn every_field_a_refusal_names_is_printed_on_its_own_line() {
    let (url, _seen, _rt) = hand_made();
    let out = against(
        &url,
        "secret",
        &[
            "firmware",
            "packages",
            "create",
            "--device-specification-id",
            SPEC,
            "--module-id",
            MODULE,
            "--firmware-version",
            "1.4.0",
        ],
    );
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    let lines: Vec<String> = stderr(&out).lines().map(str::to_owned).collect();
    assert!(lines.contains(&"  firmwareVersion: already exists for this module".to_owned()), "{lines:?}");
    assert!(lines.contains(&"  description: contains a forbidden word".to_owned()), "{lines:?}");
}

#[test]
fn the_beta_actuator_downlink_sends_senml_records_and_prints_the_answer_as_it_came() {
    let (url, seen, _rt) = hand_made();
    let run = |args: &[&str]| against(&url, "secret", args);
    let sent = run(&[
        "downlinks",
        "beta",
        "send",
        "--device",
        "deveui:70B3D57ED0000001",
        "--port",
        "5",
        "--hex",
        "0a0b",
        "--hex",
        "ff",
        "--external-reference",
        "batch-7",
    ]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    assert!(stderr(&sent).contains("deprecated"), "{}", stderr(&sent));
    let answer: Value = serde_json::from_slice(&sent.stdout).unwrap();
    assert_eq!(answer["shapeNotShown"], true);
    let (query, body) = seen.lock().unwrap().beta.pop().unwrap();
    assert!(query.contains("port=5") && query.contains("externalReference=batch-7"), "{query}");
    let records = body.as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["n"], "payloadHex");
    assert_eq!(records[1]["vs"], "ff");
    assert!(s(&records[0]["bn"]).starts_with("urn:dev:deveui:"), "{body}");

    // The reference's rules, checked before anything is sent.
    for (args, field) in [
        (vec!["--device", "imei:350000000000001", "--port", "5", "--hex", "00"], "device"),
        (vec!["--device", "deveui:70b3d57ed0000001", "--port", "5", "--hex", "0g"], "hex"),
        (vec!["--device", "deveui:70b3d57ed0000001", "--port", "-1", "--hex", "00"], "port"),
        (
            vec![
                "--device",
                "deveui:70b3d57ed0000001",
                "--device",
                "deveui:70b3d57ed0000002",
                "--port",
                "5",
                "--hex",
                "00",
                "--hex",
                "01",
                "--hex",
                "02",
            ],
            "device",
        ),
    ] {
        let mut all = vec!["downlinks", "beta", "send"];
        all.extend(args);
        let out = run(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(&format!("{field}:")), "{all:?}: {}", stderr(&out));
    }
    assert!(seen.lock().unwrap().beta.is_empty(), "nothing was sent for a refused command");
}

#[test]
fn the_beta_actuator_downlink_reaches_the_simulator() {
    let sim = Sim::start(&run_config(), &["--seed", "31", "--devices-per-client", "20"]);
    let local = dcs_sim::Simulator::new(dcs_sim::SimOptions { seed: 31, devices_per_client: 20, ..Default::default() })
        .unwrap();
    let owner = local.demo_key().client_id;
    let devices = local.store().beta_devices(owner, None, "id", true, 0, 10_000).unwrap().0;
    let eui = devices.iter().find_map(|d| d.deveui.clone()).expect("a LoRa device");
    let device = format!("deveui:{eui}");
    let out = against(
        &sim.url,
        &demo_secret(),
        &["--json", "downlinks", "beta", "send", "--device", &device, "--port", "3", "--hex", "01"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!answer.is_null(), "the simulator's answer, as it came: {answer}");
}
