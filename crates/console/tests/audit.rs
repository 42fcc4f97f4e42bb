//! The audit log as writes are made against a real simulator over HTTP: each write recorded
//! before it is sent with who made it and what it concerns, completed with its outcome (done,
//! refused with the service's status), an upload with the SHA-256 of what was sent, no secret
//! anywhere in the file, and a write that got no answer read as unknown with where to look.

use std::sync::Arc;

use dcs_api::firmware::{ModuleFilter, NewPackage, StateFilter};
use dcs_api::model::BindingKind;
use dcs_api::{Client, Secret};
use dcs_console::audit::{Actor, AuditLog, Filter, Recorder};
use dcs_console::bindings::{self, BindingDraft};
use dcs_console::session::{self, Acting};
use dcs_console::set_target::{self, SetTarget};
use dcs_console::Profile;
use dcs_sim::SimOptions;
use futures::TryStreamExt;

mod common;

fn actor() -> Actor {
    Actor {
        source: "cli".into(),
        profile: "audited".into(),
        key_id: "key-1".into(),
        os_user: "operator".into(),
        ..Actor::default()
    }
}

/// A client of `base` whose writes go to `log`.
fn audited(base: &str, key_id: &str, secret: String, log: &AuditLog) -> Client {
    let profile = Profile {
        name: "audited".into(),
        base_url: Some(base.to_owned()),
        client_id: key_id.to_owned(),
        set_target: Some(SetTarget::simulator()),
        ..Profile::simulator("", Vec::new())
    };
    let mut config = session::client_config(&profile, base, Secret::new(secret), &Acting::Yourself).unwrap();
    config.audit = Some(Arc::new(Recorder::new(log.clone(), actor(), &config.base_url, profile.set_target.clone())));
    Client::new(config).unwrap()
}

#[tokio::test]
async fn writes_are_recorded_with_their_outcomes_and_without_secrets() {
    let (sim, running) = common::spawn(SimOptions { devices_per_client: 30, ..Default::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::at(dir.path());
    let key = sim.demo_key();
    let c = audited(&running.base_url(), &key.key_id, key.secret.clone(), &log);

    // Reading records nothing.
    let module =
        c.firmware().modules(&ModuleFilter::default()).unwrap().try_collect::<Vec<_>>().await.unwrap().remove(0);
    assert!(log.entries().unwrap().is_empty());

    // A package made, then made again (refused), then its firmware file uploaded.
    let new = NewPackage::new(module.device_specification_id, module.id, "77.0.1-audit");
    let package = c.firmware().create_package(&new).await.unwrap();
    let again = c.firmware().create_package(&new).await.unwrap_err();
    let file = dir.path().join("fw.bin");
    std::fs::write(&file, vec![7u8; 300_000]).unwrap();
    c.firmware().upload_firmware_file(package.id, &file, &Default::default(), &Default::default()).await.unwrap();

    // A binding with its password, and a target set.
    let password = bindings::generate_secret(BindingKind::Mqtt).unwrap();
    let states: Vec<_> = c.firmware().states(&StateFilter::default()).unwrap().try_collect().await.unwrap();
    let state = states.into_iter().find(|s| s.module_id == module.id).expect("a device of the module");
    let owner = key.client_id;
    let devices = sim.store().beta_devices(owner, None, "id", true, 0, 1000).unwrap().0;
    let mqtt = devices.iter().find(|d| d.connection == "mqtt").expect("an mqtt device");
    let draft = BindingDraft {
        kind: BindingKind::Mqtt,
        device_id: mqtt.id.to_string(),
        application_server_id: None,
        binding_type: None,
        secret: Some(password.clone()),
    };
    bindings::create(&c, &draft).await.unwrap();
    let device = dcs_api::model::DeviceId::parse(&state.device_id.to_string()).unwrap();
    set_target::send(&c, &SetTarget::simulator(), &device, state.module_id, Some("77.0.1-audit"), None).await.unwrap();

    let text = std::fs::read_to_string(log.path()).unwrap();
    assert!(!text.contains(&password), "the binding's password is in the log");
    assert!(!text.contains(&key.secret), "the key's secret is in the log");
    assert_eq!(log.verify().unwrap().broken, None);

    let listed = log.list(&Filter::default(), 100).unwrap();
    let ops: Vec<(&str, &str)> =
        listed.records.iter().rev().map(|r| (r.operation.as_str(), r.result.as_str())).collect();
    assert_eq!(
        ops,
        [
            ("package.create", "done"),
            ("package.create", "refused"),
            ("firmware-file.upload", "done"),
            ("binding.create", "done"),
            ("target.set", "done")
        ]
    );
    let by_op = |op: &str| listed.records.iter().rev().find(|r| r.operation == op).unwrap();
    let refused = &listed.records[3];
    let dcs_api::Error::Api { status, .. } = &again else { panic!("not a refusal: {again}") };
    assert_eq!((refused.operation.as_str(), refused.status), ("package.create", Some(*status)));
    assert_eq!(refused.error.as_deref(), Some(again.to_string().as_str()));
    let created = by_op("package.create");
    assert_eq!(created.targets, [module.id.to_string(), "77.0.1-audit".to_string()]);
    assert_eq!(
        (created.profile.as_str(), created.key_id.as_str(), created.os_user.as_str()),
        ("audited", "key-1", "operator")
    );
    assert_eq!(created.status, Some(201));
    let upload = by_op("firmware-file.upload");
    assert_eq!(upload.sha256.as_deref(), Some(dcs_api::files::sha256_hex(&vec![7u8; 300_000]).as_str()));
    assert_eq!((upload.file_name.as_deref(), upload.file_size), (Some("fw.bin"), Some(300_000)));
    assert_eq!(upload.targets, [package.id.to_string()]);
    let binding = by_op("binding.create");
    let request: serde_json::Value = serde_json::from_str(binding.request.as_deref().unwrap()).unwrap();
    assert_eq!(request["password"], "***", "{binding:?}");
    let target = by_op("target.set");
    assert_eq!(target.targets, [state.device_id.to_string(), state.module_id.to_string()]);

    // Filters: by operation area, device and result.
    let f = |filter: Filter| log.list(&filter, 100).unwrap().total;
    assert_eq!(f(Filter { operation: Some("package".into()), ..Default::default() }), 2);
    assert_eq!(f(Filter { result: Some("refused".into()), ..Default::default() }), 1);
    assert_eq!(f(Filter { device: Some(state.device_id.to_string()[..8].to_uppercase()), ..Default::default() }), 1);
    assert_eq!(f(Filter { customer: Some("own".into()), ..Default::default() }), 5);
    assert_eq!(f(Filter { since: Some("2999-01-01".into()), ..Default::default() }), 0);
    let bad =
        log.list(&Filter { since: Some("yesterday".into()), result: Some("maybe".into()), ..Default::default() }, 10);
    let msg = bad.unwrap_err().to_string();
    assert!(msg.contains("since: must be a time") && msg.contains("result: must be one of"), "{msg}");

    // Exports hold the same records, oldest first.
    let csv = dir.path().join("audit.csv");
    assert_eq!(log.export(&Filter::default(), dcs_console::audit::ExportFormat::Csv, &csv).unwrap(), 5);
    let csv = std::fs::read_to_string(csv).unwrap();
    assert_eq!(csv.lines().count(), 6);
    assert!(csv.lines().nth(3).unwrap().contains("firmware-file.upload"));
    let jsonl = dir.path().join("audit.jsonl.out");
    log.export(&Filter::default(), dcs_console::audit::ExportFormat::Jsonl, &jsonl).unwrap();
    let rows: Vec<serde_json::Value> =
        std::fs::read_to_string(jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[4]["operation"], "target.set");
}

/// A POST whose connection closes before any answer: it may have been processed, so its outcome
/// is unknown, with the place to check. A write whose process stopped before its outcome reads
/// the same.
#[tokio::test]
async fn a_write_without_an_answer_is_unknown_and_says_where_to_look() {
    use axum::routing::post;
    let app = axum::Router::new()
        .route(
            "/api/v3/idp/oidc/token",
            post(|| async {
                axum::Json(serde_json::json!({"access_token": "t", "token_type": "Bearer", "expires_in": 3600}))
            }),
        )
        .route(
            "/lora/downlinks",
            post(|| async {
                // Never answers in time: the client's answer timeout ends it.
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                "late"
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::at(dir.path());
    let profile = Profile {
        name: "audited".into(),
        base_url: Some(base.clone()),
        client_id: "k".into(),
        ..Profile::simulator("", Vec::new())
    };
    let mut config = session::client_config(&profile, &base, Secret::new("s"), &Acting::Yourself).unwrap();
    config.limits.answer_timeout = std::time::Duration::from_millis(300);
    config.audit = Some(Arc::new(Recorder::new(log.clone(), actor(), &config.base_url, None)));
    let c = Client::new(config).unwrap();
    let new = dcs_api::downlinks::NewConnectionDownlink::lora("deveui:0011223344556677", "PT1H", "0a0b");
    let err = c.downlinks().connection(dcs_api::downlinks::ConnectionKind::Lora).create(&new).await.unwrap_err();
    assert_eq!(err.code(), dcs_api::ErrorCode::Network, "{err}");

    let r = log.list(&Filter::default(), 10).unwrap().records.remove(0);
    assert_eq!((r.operation.as_str(), r.result.as_str()), ("downlink.send", "unknown"));
    let check = r.check.expect("where to look");
    assert_eq!((check.kind, check.id.as_str()), (dcs_console::links::LinkKind::Device, "deveui:0011223344556677"));
    assert!(r.error.unwrap().contains("could not reach"));
    assert_eq!(log.verify().unwrap().broken, None);
}

/// A write that cannot be recorded first is not sent: the error names the log, and the service
/// has nothing new.
#[tokio::test]
async fn a_write_that_cannot_be_recorded_is_not_sent() {
    let (sim, running) = common::spawn(SimOptions { devices_per_client: 5, ..Default::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-folder");
    std::fs::write(&blocker, b"x").unwrap();
    let log = AuditLog::at(blocker.join("data"));
    let key = sim.demo_key();
    let c = audited(&running.base_url(), &key.key_id, key.secret.clone(), &log);
    let module =
        c.firmware().modules(&ModuleFilter::default()).unwrap().try_collect::<Vec<_>>().await.unwrap().remove(0);
    let new = NewPackage::new(module.device_specification_id, module.id, "88.0.0-unrecorded");
    let err = c.firmware().create_package(&new).await.unwrap_err();
    assert_eq!(err.code(), dcs_api::ErrorCode::LocalFile, "{err}");
    assert!(err.to_string().contains("audit log, so it was not sent"), "{err}");
    let filter = dcs_api::firmware::PackageFilter { module_id: Some(module.id), ..Default::default() };
    let versions: Vec<String> =
        c.firmware().packages(&filter).unwrap().map_ok(|p| p.firmware_version).try_collect().await.unwrap();
    assert!(!versions.contains(&"88.0.0-unrecorded".to_string()), "{versions:?}");
}
