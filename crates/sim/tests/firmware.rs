//! Firmware packages, files and states over real HTTP, and the simulated devices updating.

use std::time::Duration;

use dcs_sim::{SimOptions, Simulator};
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;
use serde_json::{json, Value};
use sha2::Digest;

mod common;
use common::{start as env_with, urlencode, Env};

async fn env() -> Env {
    env_with(SimOptions { devices_per_client: 40, ..Default::default() }).await
}

impl Env {
    async fn get(&self, path: &str) -> (StatusCode, Value) {
        let res = self.http.get(format!("{}{path}", self.base)).bearer_auth(&self.token).send().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }
    async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> (StatusCode, Value) {
        let res = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }
    async fn upload(
        &self,
        package: &str,
        kind: &str,
        name: &str,
        bytes: Vec<u8>,
        checksum: Option<String>,
    ) -> (StatusCode, Value) {
        let mut form = Form::new()
            .part("file", Part::bytes(bytes).file_name(name.to_owned()).mime_str("application/octet-stream").unwrap());
        if let Some(c) = checksum {
            form = form.text("checksum", c);
        }
        let res = self
            .http
            .post(format!("{}/firmware/packages/{package}/{kind}", self.base))
            .bearer_auth(&self.token)
            .multipart(form)
            .send()
            .await
            .unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }
    async fn first_module(&self) -> Value {
        self.get("/firmware/modules?limit=1").await.1["items"][0].clone()
    }
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(sha2::Sha256::digest(bytes))
}

#[tokio::test]
async fn package_lifecycle_with_the_single_file_rules() {
    let e = env().await;
    let module = e.first_module().await;
    let body = json!({"deviceSpecificationId": module["deviceSpecificationId"], "moduleId": module["id"], "firmwareVersion": "9.9.9", "description": "Field test build"});
    let (status, created) = e.send(reqwest::Method::POST, "/firmware/packages", body.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["firmwareVersion"], "9.9.9");
    assert!(created["createdBy"].as_str().unwrap().starts_with("principal/"));

    let (status, dup) = e.send(reqwest::Method::POST, "/firmware/packages", body).await;
    assert_eq!(status, StatusCode::CONFLICT, "{dup}");

    for (patch, field) in [
        (json!({"firmwareVersion": "9 9"}), "firmwareVersion"),
        (json!({"firmwareVersion": ""}), "firmwareVersion"),
        (json!({"description": "x".repeat(301)}), "description"),
        (json!({"moduleId": "nope"}), "moduleId"),
        (json!({"deviceSpecificationId": uuid::Uuid::new_v4()}), "deviceSpecificationId"),
    ] {
        let mut b = json!({"deviceSpecificationId": module["deviceSpecificationId"], "moduleId": module["id"], "firmwareVersion": "9.9.10"});
        for (k, v) in patch.as_object().unwrap() {
            b[k] = v.clone();
        }
        let (status, p) = e.send(reqwest::Method::POST, "/firmware/packages", b).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{p}");
        assert_eq!(p["invalidParams"][0]["name"], field, "{p}");
    }

    // Only the description changes; the fixed fields are refused if changed.
    let (status, updated) = e
        .send(
            reqwest::Method::PUT,
            &format!("/firmware/packages/{id}"),
            json!({"description": "Released to the field", "firmwareVersion": "9.9.9"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{updated}");
    assert_eq!(updated["description"], "Released to the field");
    let (status, p) =
        e.send(reqwest::Method::PUT, &format!("/firmware/packages/{id}"), json!({"firmwareVersion": "10.0"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(p["invalidParams"][0]["name"], "firmwareVersion");

    // Embedding the module and the specification.
    let (_, got) = e.get(&format!("/firmware/packages/{id}?embed=module&embed=deviceSpecification")).await;
    assert_eq!(got["_embedded"]["module"]["id"], module["id"]);
    assert_eq!(got["_embedded"]["deviceSpecification"]["id"], module["deviceSpecificationId"]);
    let (status, _) = e.get(&format!("/firmware/packages/{id}?embed=colour")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (_, listed) = e
        .get(&format!(
            "/firmware/packages?moduleId={}&embed=module,deviceSpecification&limit=1000",
            module["id"].as_str().unwrap()
        ))
        .await;
    let items = listed["items"].as_array().unwrap();
    assert!(items.iter().any(|p| p["id"] == id.as_str()));
    assert!(items.iter().all(|p| p["moduleId"] == module["id"] && p["_embedded"]["module"]["id"] == module["id"]));

    // The firmware file: once, verified, byte for byte.
    let image: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let (status, p) = e.upload(&id, "firmware-file", "fw-9.9.9.bin", image.clone(), Some("ab".repeat(32))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a wrong checksum is refused: {p}");
    assert_eq!(p["invalidParams"][0]["name"], "checksum");
    assert_eq!(e.get(&format!("/firmware/packages/{id}")).await.1.get("firmwareFileName"), None, "nothing stored");
    assert_eq!(std::fs::read_dir(e.sim.store().files_dir()).unwrap().count(), 0, "no partial file left");

    let (status, attrs) =
        e.upload(&id, "firmware-file", "fw-9.9.9.bin", image.clone(), Some(sha(&image).to_uppercase())).await;
    assert_eq!(status, StatusCode::OK, "{attrs}");
    assert_eq!(attrs["name"], "fw-9.9.9.bin");
    assert_eq!(attrs["fileType"], "FIRMWARE");
    assert_eq!(attrs["firmwarePackageId"], id.as_str());
    let (status, _) = e.upload(&id, "firmware-file", "other.bin", vec![1, 2, 3], None).await;
    assert_eq!(status, StatusCode::CONFLICT, "a firmware file is uploaded once");
    let res = e
        .http
        .get(format!("{}/firmware/packages/{id}/firmware-file", e.base))
        .bearer_auth(&e.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers()["content-disposition"].to_str().unwrap().contains("fw-9.9.9.bin"));
    assert_eq!(res.bytes().await.unwrap().to_vec(), image);
    let (status, p) = e.upload(&id, "firmware-file", "bad name!.bin", vec![1], None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{p}");

    // Release notes: replaced by each upload, downloadable, deletable.
    let (status, _) = e.upload(&id, "release-notes-file", "notes.md", b"# one".to_vec(), None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = e.upload(&id, "release-notes-file", "notes-v2.md", b"# two".to_vec(), Some(sha(b"# two"))).await;
    assert_eq!(status, StatusCode::OK);
    let notes = e
        .http
        .get(format!("{}/firmware/packages/{id}/release-notes-file", e.base))
        .bearer_auth(&e.token)
        .send()
        .await
        .unwrap();
    assert_eq!(notes.bytes().await.unwrap().as_ref(), b"# two");
    assert_eq!(e.get(&format!("/firmware/packages/{id}")).await.1["releaseNotesFileName"], "notes-v2.md");
    assert_eq!(std::fs::read_dir(e.sim.store().files_dir()).unwrap().count(), 2, "the replaced notes were removed");
    let del = |p: String| e.http.delete(format!("{}{p}", e.base)).bearer_auth(&e.token).send();
    assert_eq!(
        del(format!("/firmware/packages/{id}/release-notes-file")).await.unwrap().status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        del(format!("/firmware/packages/{id}/release-notes-file")).await.unwrap().status(),
        StatusCode::NOT_FOUND
    );

    // Deleting the package removes it and its stored file.
    assert_eq!(del(format!("/firmware/packages/{id}")).await.unwrap().status(), StatusCode::NO_CONTENT);
    assert_eq!(e.get(&format!("/firmware/packages/{id}")).await.0, StatusCode::NOT_FOUND);
    assert_eq!(std::fs::read_dir(e.sim.store().files_dir()).unwrap().count(), 0);
}

#[tokio::test]
async fn file_names_and_missing_parts_are_400s() {
    let e = env().await;
    let module = e.first_module().await;
    let (_, p) = e
        .send(reqwest::Method::POST, "/firmware/packages", json!({"deviceSpecificationId": module["deviceSpecificationId"], "moduleId": module["id"], "firmwareVersion": "7.0.0"}))
        .await;
    let id = p["id"].as_str().unwrap();
    let (status, body) = e.upload(id, "firmware-file", "bad name!.bin", vec![1], None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["invalidParams"][0]["name"], "file");
    let res = e
        .http
        .post(format!("{}/firmware/packages/{id}/firmware-file", e.base))
        .bearer_auth(&e.token)
        .multipart(Form::new().text("checksum", "00".repeat(32)))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let (status, body) = e.upload(id, "firmware-file", "a.bin", vec![1], Some("xyz".into())).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["invalidParams"][0]["name"], "checksum");
}

#[tokio::test]
async fn states_filter_by_any_device_id_form_and_updates_run_to_an_end() {
    let e = env_with(SimOptions { devices_per_client: 40, speed: 5_000.0, ..Default::default() }).await;
    let (status, page) = e.get("/firmware/states?limit=1000").await;
    assert_eq!(status, StatusCode::OK);
    let states = page["items"].as_array().unwrap().clone();
    assert!(states.len() >= 40, "every device has a state per module");
    let statuses: std::collections::HashSet<&str> =
        states.iter().filter_map(|s| s["firmwareUpdateStatus"].as_str()).collect();
    assert!(statuses.contains("SUCCEEDED") && statuses.contains("FAILED"), "{statuses:?}");

    // Filters: module, status, and the device in another id form.
    let module = states[0]["moduleId"].as_str().unwrap();
    let (_, by_module) = e.get(&format!("/firmware/states?moduleId={module}&limit=1000")).await;
    assert!(by_module["items"].as_array().unwrap().iter().all(|s| s["moduleId"] == module));
    let (_, failed) = e.get("/firmware/states?firmwareUpdateStatus=FAILED&limit=1000").await;
    assert!(failed["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["firmwareUpdateStatus"] == "FAILED" && s["firmwareUpdateStatusDetails"].is_string()));
    let owner = e.sim.demo_key().client_id;
    let device_id: uuid::Uuid = states[0]["deviceId"].as_str().unwrap().parse().unwrap();
    let device = e.sim.store().find_device(owner, &dcs_model::DeviceId::Uuid(device_id)).unwrap().unwrap();
    let other_form = match (&device.imei, &device.deveui) {
        (Some(imei), _) => format!("URN:DEV:IMEI:{imei}:"),
        (_, Some(eui)) => format!("DevEUI:{}", eui.to_uppercase()),
        _ => unreachable!(),
    };
    let (status, by_device) = e.get(&format!("/firmware/states?deviceId={}&limit=1000", urlencode(&other_form))).await;
    assert_eq!(status, StatusCode::OK, "{by_device}");
    let items = by_device["items"].as_array().unwrap();
    assert!(!items.is_empty() && items.iter().all(|s| s["deviceId"] == device_id.to_string()));
    let (status, bad) = e.get("/firmware/states?deviceId=imei:123").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(bad["invalidParams"][0]["name"], "deviceId");
    let (status, _) = e.get("/firmware/states?modifiedSince=yesterday").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // Set a target: the device moves through the statuses to an end.
    let (_, packages) = e.get(&format!("/firmware/packages?moduleId={module}&limit=1000&sort=-createdAt")).await;
    let oldest = packages["items"].as_array().unwrap().last().unwrap()["firmwareVersion"].as_str().unwrap().to_owned();
    let path = format!("/firmware/states/{other_form}/{module}");
    let (status, set) = e.send(reqwest::Method::PUT, &path, json!({"targetFirmwareVersion": oldest})).await;
    assert_eq!(status, StatusCode::OK, "{set}");
    assert_eq!(set["targetFirmwareVersion"], oldest.as_str());
    let mut seen = vec![set["firmwareUpdateStatus"].as_str().unwrap().to_owned()];
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (_, s) = e.get(&format!("/firmware/states?deviceId={device_id}&moduleId={module}")).await;
        let st = s["items"][0]["firmwareUpdateStatus"].as_str().unwrap().to_owned();
        if seen.last() != Some(&st) {
            seen.push(st.clone());
        }
        if st == "SUCCEEDED" {
            assert_eq!(s["items"][0]["currentFirmwareVersion"], oldest.as_str());
            break;
        }
        if st == "FAILED" {
            assert!(s["items"][0]["firmwareUpdateStatusDetails"].is_string());
            break;
        }
    }
    let last = seen.last().unwrap().as_str();
    assert!(last == "SUCCEEDED" || last == "FAILED", "the update ended: {seen:?}");
    if seen[0] == "PENDING" {
        assert!(seen.contains(&"DOWNLOADING".to_owned()), "{seen:?}");
    }

    // A version without a package, or a bad one, is refused; null resets the target.
    let (status, p) = e.send(reqwest::Method::PUT, &path, json!({"targetFirmwareVersion": "99.0.0"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(p["invalidParams"][0]["name"], "targetFirmwareVersion");
    let (status, reset) = e.send(reqwest::Method::PUT, &path, json!({"targetFirmwareVersion": null})).await;
    assert_eq!(status, StatusCode::OK);
    assert!(reset.get("targetFirmwareVersion").is_none(), "{reset}");
    let (status, _) =
        e.send(reqwest::Method::PUT, &format!("/firmware/states/{}/{module}", uuid::Uuid::new_v4()), json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_data_file_keeps_everything_across_restarts_and_reset_restores_the_seed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sim.db");
    let opts = SimOptions { devices_per_client: 20, data: Some(data.clone()), seed: 3, ..Default::default() };
    let id = {
        let e = env_with(opts.clone()).await;
        let module = e.first_module().await;
        let (_, p) = e
            .send(reqwest::Method::POST, "/firmware/packages", json!({"deviceSpecificationId": module["deviceSpecificationId"], "moduleId": module["id"], "firmwareVersion": "5.5.5"}))
            .await;
        let id = p["id"].as_str().unwrap().to_owned();
        let (status, _) = e.upload(&id, "firmware-file", "keep.bin", vec![42; 1000], None).await;
        assert_eq!(status, StatusCode::OK);
        id
    };
    // Started again on the same file, with another seed: the data file wins.
    let e = env_with(SimOptions { seed: 4, ..opts }).await;
    let (status, p) = e.get(&format!("/firmware/packages/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(p["firmwareFileName"], "keep.bin");
    let bytes = e
        .http
        .get(format!("{}/firmware/packages/{id}/firmware-file", e.base))
        .bearer_auth(&e.token)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(bytes.to_vec(), vec![42; 1000]);

    e.sim.reset().unwrap();
    assert_eq!(e.get(&format!("/firmware/packages/{id}")).await.0, StatusCode::NOT_FOUND);
    assert!(!e.get("/firmware/modules").await.1["items"].as_array().unwrap().is_empty(), "the seed is back");
}

#[tokio::test]
async fn a_restarted_simulator_goes_on_from_its_latest_time() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sim.db");
    // A fast clock runs far ahead of the wall clock, and stamps what changes with its time.
    let opts = SimOptions { devices_per_client: 10, data: Some(data.clone()), speed: 100_000.0, ..Default::default() };
    let latest = {
        let sim = Simulator::new(opts.clone()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(sim.step().unwrap() > 0, "seeded updates move");
        // Their later steps, each at its own simulated time (minutes after the start, A-260).
        while sim.step().unwrap() > 0 {}
        let latest = sim.store().latest_change().unwrap().unwrap();
        assert!(latest > time::OffsetDateTime::now_utc() + time::Duration::minutes(1), "ahead: {latest}");
        latest
    };
    let again = Simulator::new(SimOptions { speed: 1.0, ..opts }).unwrap();
    assert!(again.now() > latest, "{} should be after {latest}", again.now());
}

#[tokio::test]
async fn writes_for_a_customer_land_there_and_nowhere_else() {
    let e = env().await;
    let reseller = e.sim.demo_key().client_id;
    let customer = e.sim.store().clients().unwrap().into_iter().find(|c| c.reseller_id == Some(reseller)).unwrap().id;
    let ctx = format!("client:uuid:{customer}");
    let as_customer = |method: reqwest::Method, path: &str| {
        e.http
            .request(method, format!("{}{path}", e.base))
            .bearer_auth(&e.token)
            .header("Service-Security-Context", ctx.clone())
    };
    let module: Value =
        as_customer(reqwest::Method::GET, "/firmware/modules?limit=1").send().await.unwrap().json().await.unwrap();
    let m = &module["items"][0];
    assert_eq!(m["clientId"], customer.to_string());
    let res = as_customer(reqwest::Method::POST, "/firmware/packages")
        .json(&json!({"deviceSpecificationId": m["deviceSpecificationId"], "moduleId": m["id"], "firmwareVersion": "3.3.3"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let created: Value = res.json().await.unwrap();
    assert_eq!(created["clientId"], customer.to_string());
    let id = created["id"].as_str().unwrap();

    // The reseller itself, and another customer, see nothing of it and cannot change it.
    assert_eq!(e.get(&format!("/firmware/packages/{id}")).await.0, StatusCode::NOT_FOUND);
    let (status, _) =
        e.send(reqwest::Method::PUT, &format!("/firmware/packages/{id}"), json!({"description": "x"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let other =
        e.sim.store().clients().unwrap().into_iter().filter(|c| c.reseller_id == Some(reseller)).nth(1).unwrap().id;
    let res = e
        .http
        .get(format!("{}/firmware/packages/{id}", e.base))
        .bearer_auth(&e.token)
        .header("Service-Security-Context", format!("client:uuid:{other}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    // Using the reseller's module for a customer's package is refused too.
    let own = e.first_module().await;
    let res = as_customer(reqwest::Method::POST, "/firmware/packages")
        .json(&json!({"deviceSpecificationId": own["deviceSpecificationId"], "moduleId": own["id"], "firmwareVersion": "3.3.4"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);

    // A customer's device cannot be targeted from the reseller's own environment.
    let state: Value =
        as_customer(reqwest::Method::GET, "/firmware/states?limit=1").send().await.unwrap().json().await.unwrap();
    let s = &state["items"][0];
    let path = format!("/firmware/states/{}/{}", s["deviceId"].as_str().unwrap(), s["moduleId"].as_str().unwrap());
    assert_eq!(
        e.send(reqwest::Method::PUT, &path, json!({"targetFirmwareVersion": null})).await.0,
        StatusCode::NOT_FOUND
    );
    let (status, _) = e
        .send(
            reqwest::Method::POST,
            "/downlinks",
            json!({"method": {"type": "invokeCommand", "deviceId": s["deviceId"], "command": "reboot"}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "the device is not in the reseller's environment");
}

/// `GET /_sim/target-sets?module=<id>`: the set-target count of each device of the module.
async fn target_sets(e: &Env, module: &str) -> (StatusCode, Value) {
    let res = e.http.get(format!("{}/_sim/target-sets?module={module}", e.base)).send().await.unwrap();
    (res.status(), res.json().await.unwrap())
}

/// Every set-target call that reaches a state is counted for tests, in no answer of the API:
/// `GET /_sim/target-sets` and the data file's `firmware_states.target_sets` read it. The same
/// target again, on an update under way, starts it over.
#[tokio::test]
async fn set_target_calls_are_counted_for_tests_and_the_same_target_again_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sim.db");
    let e = env_with(SimOptions { devices_per_client: 40, data: Some(data.clone()), ..Default::default() }).await;
    let module = e.first_module().await["id"].as_str().unwrap().to_owned();
    let (_, packages) = e.get(&format!("/firmware/packages?moduleId={module}&limit=1000")).await;
    let version = packages["items"][0]["firmwareVersion"].as_str().unwrap().to_owned();
    let (_, states) = e.get(&format!("/firmware/states?moduleId={module}&limit=1000")).await;
    let states = states["items"].as_array().unwrap();
    let state = states.iter().find(|s| s["currentFirmwareVersion"] != version.as_str()).expect("a device not on it");
    let device = state["deviceId"].as_str().unwrap();

    let (status, before) = target_sets(&e, &module).await;
    assert_eq!(status, StatusCode::OK);
    let before = before.as_object().unwrap();
    assert_eq!(before.len(), states.len(), "every state of the module");
    assert!(before.values().all(|n| n == 0), "the seed sets none: {before:?}");

    let path = format!("/firmware/states/{device}/{module}");
    let (status, first) = e.send(reqwest::Method::PUT, &path, json!({"targetFirmwareVersion": version})).await;
    assert_eq!((status, first["firmwareUpdateStatus"].as_str()), (StatusCode::OK, Some("PENDING")), "{first}");
    assert_eq!(target_sets(&e, &module).await.1[device], 1);

    // The device is downloading when the same target comes again: its update starts over.
    let db = rusqlite::Connection::open(&data).unwrap();
    let under_way = "UPDATE firmware_states SET status = 'DOWNLOADING' WHERE device_id = ?1 AND module_id = ?2";
    assert_eq!(db.execute(under_way, [device, &module]).unwrap(), 1);
    let (status, again) = e.send(reqwest::Method::PUT, &path, json!({"targetFirmwareVersion": version})).await;
    assert_eq!((status, again["firmwareUpdateStatus"].as_str()), (StatusCode::OK, Some("PENDING")), "{again}");
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&again), keys(&first), "the answer has no count");

    let (_, after) = target_sets(&e, &module).await;
    assert_eq!(after[device], 2);
    assert_eq!(after.as_object().unwrap().values().filter_map(Value::as_u64).sum::<u64>(), 2, "no other device");
    let stored: u64 = db
        .query_row(
            "SELECT target_sets FROM firmware_states WHERE device_id = ?1 AND module_id = ?2",
            [device, &module],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, 2, "the data file has it too");

    for query in ["", "?module=nope"] {
        let res = e.http.get(format!("{}/_sim/target-sets{query}", e.base)).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{query}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["invalidParams"][0]["name"], "module", "{body}");
    }
}

/// A data file written before the count existed gets it, zero, and counts from then on.
#[test]
fn a_data_file_from_before_the_count_gets_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sim.db");
    let opts = SimOptions { devices_per_client: 5, data: Some(data.clone()), ..Default::default() };
    drop(Simulator::new(opts.clone()).unwrap());
    let db = rusqlite::Connection::open(&data).unwrap();
    db.execute_batch("ALTER TABLE firmware_states DROP COLUMN target_sets").unwrap();
    let (owner, device, module): (String, String, String) = db
        .query_row("SELECT client_id, device_id, module_id FROM firmware_states LIMIT 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    let [owner, device, module] = [owner, device, module].map(|id| uuid::Uuid::parse_str(&id).unwrap());

    let sim = Simulator::new(opts).unwrap();
    assert!(sim.store().target_sets(module).unwrap().values().all(|n| *n == 0));
    let now = sim.now();
    assert!(sim.store().set_target(owner, device, module, None, now, now).unwrap());
    assert_eq!(sim.store().target_sets(module).unwrap()[&device], 1);
}

/// a batch of due steps is stamped at each step's own due time, not at the one instant
/// the engine ran it, in due order; a step due before the client's latest change is stamped at
/// that change instead (never before a stamp a listing could already have shown), and
/// `modifiedSince` reads exactly the states stamped from its instant on.
#[tokio::test]
async fn each_step_of_a_batch_is_stamped_at_its_own_due_time() {
    use dcs_sim::store::firmware::StateQuery;
    use dcs_sim::store::query::{TimeWindow, Window};
    use time::Duration as Span;

    let sim = Simulator::new(SimOptions { devices_per_client: 10, speed: 1.0, ..Default::default() }).unwrap();
    // The seed's backlog first (its next steps are a minute or more away).
    while sim.step().unwrap() > 0 {}
    let owner = sim.demo_key().client_id;
    let query = |time: TimeWindow| StateQuery {
        owner,
        time,
        window: Window { limit: 1000, ..Default::default() },
        ..Default::default()
    };
    let states = sim.store().list_states(&query(TimeWindow::default())).unwrap();
    let picked: Vec<_> = states.iter().take(4).map(|s| (s.device_id, s.module_id)).collect();
    // Whole milliseconds: the store keeps times to the millisecond.
    let t0 = sim.now();
    let t0 = t0.replace_millisecond(t0.millisecond()).unwrap();
    let ms = |n: i64| t0 + Span::milliseconds(n);
    // Targets set at t0, due at +10, +30, +20 ms; a fourth set later, at +15, due at +40.
    for (&(device, module), (set, due)) in picked.iter().zip([(0, 10), (0, 30), (0, 20), (15, 40)]) {
        assert!(sim.store().set_target(owner, device, module, Some("9.9.9"), ms(set), ms(due)).unwrap());
    }
    while sim.now() < ms(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(sim.step().unwrap(), 4, "the four due steps, in one batch");
    let stamp = |(device, module): (uuid::Uuid, uuid::Uuid)| {
        let s = sim.store().state(owner, device, module).unwrap().unwrap();
        assert_eq!(s.firmware_update_status, Some(dcs_model::UpdateStatus::Downloading));
        s.firmware_update_status_modified_at.unwrap()
    };
    let stamps: Vec<_> = picked.iter().map(|p| stamp(*p)).collect();
    // The first was due before the fourth's target was set: stamped at that change.
    assert_eq!(stamps, vec![ms(15), ms(30), ms(20), ms(40)]);
    // modifiedSince from the third's stamp: the second, third and fourth, in time order.
    let since = TimeWindow { modified_since: Some(dcs_sim::store::ts(ms(20))), ..Default::default() };
    let mut q = query(since);
    q.window.order_by = vec![("modified_at", false), ("device_id", false), ("module_id", false)];
    let read: Vec<_> = sim.store().list_states(&q).unwrap().iter().map(|s| (s.device_id, s.module_id)).collect();
    assert_eq!(read, vec![picked[2], picked[1], picked[3]]);
}

/// the updates the seed leaves in progress are not due when the simulator starts (which
/// would stamp them all at its first instant): their next steps fall within the ten minutes after
/// the seeding, spread out, and each is stamped at its own time when it comes.
#[tokio::test]
async fn the_seeds_updates_in_progress_move_on_spread_over_the_minutes_after_it_starts() {
    use dcs_model::UpdateStatus;
    use dcs_sim::store::firmware::StateQuery;
    use dcs_sim::store::query::Window;

    let sim = Simulator::new(SimOptions { devices_per_client: 200, speed: 1200.0, ..Default::default() }).unwrap();
    let start = sim.now();
    assert_eq!(sim.store().due_count(start).unwrap(), 0, "no step of the seed is due when it starts");
    let owner = sim.demo_key().client_id;
    let states = || {
        let q = StateQuery { owner, window: Window { limit: 100_000, ..Default::default() }, ..Default::default() };
        sim.store().list_states(&q).unwrap()
    };
    let moving = |s: &dcs_model::FirmwareState| {
        matches!(
            s.firmware_update_status,
            Some(UpdateStatus::Pending | UpdateStatus::Downloading | UpdateStatus::Installing)
        )
    };
    let in_progress: Vec<_> = states().into_iter().filter(moving).map(|s| (s.device_id, s.module_id)).collect();
    assert!(in_progress.len() > 30, "{}", in_progress.len());
    let within = start + dcs_sim::seed::SEEDED_STEPS_WITHIN;
    while sim.now() <= within + time::Duration::seconds(1) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // One pass: each update due takes one step (the steps it schedules come in later passes).
    sim.step().unwrap();
    let stamps: Vec<_> = in_progress
        .iter()
        .map(|&(device, module)| {
            let s = sim.store().state(owner, device, module).unwrap().unwrap();
            s.firmware_update_status_modified_at.unwrap()
        })
        .collect();
    assert!(stamps.iter().all(|t| *t > start && *t <= within + time::Duration::seconds(1)), "{stamps:?}");
    let instants: std::collections::BTreeSet<_> = stamps.iter().collect();
    assert!(instants.len() * 4 > stamps.len() * 3, "{} instants for {} steps", instants.len(), stamps.len());
}
