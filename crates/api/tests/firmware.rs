//! The firmware API of the client (packages, files, states) against the simulator over real
//! HTTP on a loopback port.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dcs_api::files::{Transfer, UploadOptions};
use dcs_api::firmware::{Embed, Firmware, NewPackage, PackageFilter, SetTargetMethod, SetTargetRequest, StateFilter};
use dcs_api::model::{DeviceId, FirmwareModule, UpdateStatus};
use dcs_api::{Client, ErrorCode};
use dcs_sim::fixtures::sha256_hex;
use dcs_sim::store::ModuleQuery;
use dcs_sim::{RunningSim, SimOptions, Simulator};
use futures::TryStreamExt;
use tokio_util::sync::CancellationToken;

mod common;

use common::client;

async fn start() -> (Simulator, RunningSim) {
    common::start(SimOptions { devices_per_client: 40, speed: 5000.0, ..Default::default() }).await
}

fn demo_client(sim: &Simulator, running: &RunningSim) -> Client {
    let key = sim.demo_key();
    client(running, &key.key_id, &key.secret)
}

fn a_module(sim: &Simulator) -> FirmwareModule {
    let owner = sim.demo_key().client_id;
    sim.store().list_modules(&ModuleQuery { owner, limit: 10_000, ..Default::default() }).unwrap().remove(0)
}

/// A file of pseudo-random bytes (not compressible, not repeating).
fn write_random_file(path: &Path, size: usize) -> Vec<u8> {
    dcs_sim::fixtures::write_random_file(path, size).unwrap()
}

#[tokio::test]
async fn package_lifecycle_create_list_get_update_delete() {
    let (sim, running) = start().await;
    let c = demo_client(&sim, &running);
    let fw = c.firmware();
    let module = a_module(&sim);

    let new = NewPackage::new(module.device_specification_id, module.id, "99.1.0-test").description("first cut");
    let created = fw.create_package(&new).await.unwrap();
    assert_eq!(created.firmware_version, "99.1.0-test");
    assert_eq!(created.module_id, module.id);
    assert_eq!(created.description.as_deref(), Some("first cut"));
    assert_eq!(created.firmware_file_name, None);

    // The same module and version again: a conflict.
    let again = fw.create_package(&new).await.unwrap_err();
    assert_eq!(again.code(), ErrorCode::Conflict);

    // Listed, as a stream across pages and as a single page, filtered by module.
    let filter = PackageFilter {
        module_id: Some(module.id),
        limit: Some(1),
        sort: Some("-createdAt".into()),
        ..Default::default()
    };
    let listed: Vec<_> = fw.packages(&filter).unwrap().try_collect().await.unwrap();
    assert!(listed.iter().all(|p| p.module_id == module.id));
    assert!(listed.iter().any(|p| p.id == created.id));
    let (page, _next) = fw.packages_page(&filter).await.unwrap();
    assert_eq!(page.items.len(), 1);
    let embedded = PackageFilter { embed: vec![Embed::Module, Embed::DeviceSpecification], ..filter.clone() };
    let (page, _) = fw.packages_page(&embedded).await.unwrap();
    let e = page.items[0].embedded.as_ref().expect("embedded");
    assert_eq!(e.module.as_ref().unwrap().id, module.id);

    // One package, with and without embed.
    let got = fw.package(created.id, &[]).await.unwrap();
    assert_eq!(got.id, created.id);
    assert!(got.embedded.is_none());
    let got = fw.package(created.id, &[Embed::DeviceSpecification]).await.unwrap();
    assert_eq!(got.embedded.unwrap().device_specification.unwrap().id, module.device_specification_id);

    // Only the description changes.
    let updated = fw.update_package_description(created.id, Some("second cut")).await.unwrap();
    assert_eq!(updated.description.as_deref(), Some("second cut"));
    assert_eq!(updated.firmware_version, created.firmware_version);

    fw.delete_package(created.id).await.unwrap();
    assert_eq!(fw.package(created.id, &[]).await.unwrap_err().code(), ErrorCode::NotFound);
    assert_eq!(fw.delete_package(created.id).await.unwrap_err().code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn bad_package_input_is_refused_before_any_request() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    // A wrong secret would fail if a request were sent.
    let c = client(&running, &key.key_id, "never-used");
    let fw = c.firmware();
    let (spec, module) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    let err = fw.create_package(&NewPackage::new(spec, module, "1.0 beta")).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().starts_with("firmwareVersion:"), "{err}");
    let err = fw.create_package(&NewPackage::new(spec, module, "1.0").description("tab\there")).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    let err = fw.update_package_description(module, Some(&"d".repeat(301))).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    // Only the reference's sort syntax is checked here (the fields are the service's, A-22).
    let err = fw.packages(&PackageFilter { sort: Some("-".into()), ..Default::default() }).err().unwrap();
    assert!(err.to_string().starts_with("sort: "), "{err}");
    let err = fw.packages(&PackageFilter { limit: Some(0), ..Default::default() }).err().unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidInput);

    // A file name outside the rule: refused before the file is even read.
    let err = fw
        .upload_firmware_file(module, Path::new("/nowhere/fw 1.0.bin"), &UploadOptions::default(), &Transfer::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().contains("file name"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ok.bin");
    std::fs::write(&path, b"x").unwrap();
    let opts = UploadOptions { file_name: Some("bad/name.bin".into()), ..Default::default() };
    let err = fw.upload_release_notes(module, &path, &opts, &Transfer::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);

    // Device ids and versions of the state filters.
    let err = fw.states(&StateFilter { device_id: Some("imei:123".into()), ..Default::default() }).err().unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().starts_with("deviceId:"));
    let err = fw.states(&StateFilter { sort: Some("colour,".into()), ..Default::default() }).err().unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
}

/// The simulator's set-target operation, sent as a profile's template would send it.
async fn set_target(
    fw: &Firmware<'_>,
    device: &DeviceId,
    module: uuid::Uuid,
    version: Option<&str>,
) -> Result<dcs_api::model::FirmwareState, dcs_api::Error> {
    // The set-target operation is not shown: each variant has its own (A-38 (alt)).
    let request = if common::alt() {
        SetTargetRequest {
            method: SetTargetMethod::Put,
            path: format!("/firmware/devices/{device}/modules/{module}/target"),
            body: serde_json::json!({ "version": version }),
        }
    } else {
        SetTargetRequest {
            method: SetTargetMethod::Put,
            path: format!("/firmware/states/{device}/{module}"),
            body: serde_json::json!({ "targetFirmwareVersion": version }),
        }
    };
    fw.send_set_target(&request).await.map(|a| a.state().expect("the simulator answers with the state (A-38)"))
}

#[tokio::test]
async fn a_multi_megabyte_firmware_file_goes_up_and_comes_back_identical() {
    let (sim, running) = start().await;
    let c = demo_client(&sim, &running);
    let fw = c.firmware();
    let module = a_module(&sim);
    let package =
        fw.create_package(&NewPackage::new(module.device_specification_id, module.id, "99.2.0")).await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("fw-99.2.0.bin");
    let size = 3 * 1024 * 1024 + 12_345;
    let bytes = write_random_file(&source, size);

    // No file yet: a download is a 404.
    let err =
        fw.download_firmware_file(package.id, &dir.path().join("none.bin"), &Transfer::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(!dir.path().join("none.bin").exists());

    let reports = Arc::new(Mutex::new(Vec::new()));
    let seen = reports.clone();
    let transfer = Transfer::default().with_progress(move |done, total| seen.lock().unwrap().push((done, total)));
    let attrs = fw.upload_firmware_file(package.id, &source, &UploadOptions::default(), &transfer).await.unwrap();
    assert_eq!(attrs.name, "fw-99.2.0.bin");
    assert_eq!(attrs.content_type, "application/octet-stream");
    assert_eq!(attrs.file_type.as_deref(), Some("FIRMWARE"));
    let reports = reports.lock().unwrap().clone();
    assert!(reports.len() > 2, "several progress reports: {reports:?}");
    assert!(reports.windows(2).all(|w| w[0].0 < w[1].0), "progress increases");
    assert!(reports.iter().all(|&(_, total)| total == size as u64));
    assert_eq!(reports.last().unwrap().0, size as u64);

    let got = fw.package(package.id, &[]).await.unwrap();
    assert_eq!(got.firmware_file_name.as_deref(), Some("fw-99.2.0.bin"));

    // Back down, with progress, and compared.
    let target = dir.path().join("downloaded.bin");
    let last = Arc::new(Mutex::new((0u64, 0u64)));
    let seen = last.clone();
    let transfer = Transfer::default().with_progress(move |done, total| *seen.lock().unwrap() = (done, total));
    let down = fw.download_firmware_file(package.id, &target, &transfer).await.unwrap();
    assert_eq!(down.size, size as u64);
    assert_eq!(down.sha256, sha256_hex(&bytes));
    assert_eq!(down.file_name.as_deref(), Some("fw-99.2.0.bin"));
    assert_eq!(*last.lock().unwrap(), (size as u64, size as u64));
    assert_eq!(std::fs::read(&target).unwrap(), bytes);

    // A file that is not there, and a package that is not there.
    let err = fw
        .upload_release_notes(
            package.id,
            &dir.path().join("missing.md"),
            &UploadOptions::default(),
            &Transfer::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::LocalFile);
    let err = fw
        .upload_firmware_file(uuid::Uuid::new_v4(), &source, &UploadOptions::default(), &Transfer::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);

    // A firmware file is uploaded once: the second is a conflict.
    let err = fw
        .upload_firmware_file(package.id, &source, &UploadOptions::default(), &Transfer::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict);

    // Release notes: uploaded, replaced, downloaded, deleted.
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, "# 99.2.0\n\nFirst notes.\n").unwrap();
    fw.upload_release_notes(package.id, &notes, &UploadOptions::default(), &Transfer::default()).await.unwrap();
    std::fs::write(&notes, "# 99.2.0\n\nSecond notes.\n").unwrap();
    let attrs =
        fw.upload_release_notes(package.id, &notes, &UploadOptions::default(), &Transfer::default()).await.unwrap();
    assert_eq!(attrs.content_type, "text/markdown");
    let notes_back = dir.path().join("notes-back.md");
    let down = fw.download_release_notes(package.id, &notes_back, &Transfer::default()).await.unwrap();
    assert_eq!(std::fs::read_to_string(&notes_back).unwrap(), "# 99.2.0\n\nSecond notes.\n");
    assert_eq!(down.sha256, sha256_hex(b"# 99.2.0\n\nSecond notes.\n"));
    fw.delete_release_notes(package.id).await.unwrap();
    let err = fw.download_release_notes(package.id, &notes_back, &Transfer::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn cancelling_an_upload_midway_stores_nothing() {
    let (sim, running) = start().await;
    let c = demo_client(&sim, &running);
    let fw = c.firmware();
    let module = a_module(&sim);
    let package =
        fw.create_package(&NewPackage::new(module.device_specification_id, module.id, "99.3.0")).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("fw-99.3.0.bin");
    let size = 4 * 1024 * 1024;
    let bytes = write_random_file(&source, size);

    let token = CancellationToken::new();
    let cancel = token.clone();
    let max_seen = Arc::new(Mutex::new(0u64));
    let seen = max_seen.clone();
    let transfer = Transfer::default().with_cancel(token).with_progress(move |done, total| {
        *seen.lock().unwrap() = done;
        if done > total / 4 {
            cancel.cancel();
        }
    });
    let err = fw.upload_firmware_file(package.id, &source, &UploadOptions::default(), &transfer).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled, "{err}");
    assert!(*max_seen.lock().unwrap() < size as u64, "cancelled before the end");

    // Give the simulator a moment to notice the broken request, then: nothing stored.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let got = fw.package(package.id, &[]).await.unwrap();
    assert_eq!(got.firmware_file_name, None);
    let err = fw.download_firmware_file(package.id, &dir.path().join("x.bin"), &Transfer::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);

    // And the upload can be made again in full.
    fw.upload_firmware_file(package.id, &source, &UploadOptions::default(), &Transfer::default()).await.unwrap();
    let down = fw.download_firmware_file(package.id, &dir.path().join("back.bin"), &Transfer::default()).await.unwrap();
    assert_eq!(down.sha256, sha256_hex(&bytes));

    // A download cancelled midway (from its progress callback) leaves no file behind.
    let token = CancellationToken::new();
    let cancel = token.clone();
    let transfer = Transfer::default().with_cancel(token).with_progress(move |done, total| {
        if done > total / 4 {
            cancel.cancel();
        }
    });
    let target = dir.path().join("half.bin");
    let err = fw.download_firmware_file(package.id, &target, &transfer).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled);
    assert!(!target.exists());
    assert!(!dir.path().join("half.bin.part").exists());

    // A download cancelled before it starts leaves no file behind.
    let token = CancellationToken::new();
    token.cancel();
    let target = dir.path().join("cancelled.bin");
    let err =
        fw.download_firmware_file(package.id, &target, &Transfer::default().with_cancel(token)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled);
    assert!(!target.exists());
}

#[tokio::test]
async fn states_stream_with_filters_and_a_device_in_urn_form() {
    let (sim, running) = start().await;
    let c = demo_client(&sim, &running);
    let fw = c.firmware();
    let owner = sim.demo_key().client_id;

    let all: Vec<_> =
        fw.states(&StateFilter { limit: Some(25), ..Default::default() }).unwrap().try_collect().await.unwrap();
    assert!(all.len() > 25, "more than one page");
    let (page, next) = fw.states_page(&StateFilter { limit: Some(25), ..Default::default() }).await.unwrap();
    assert_eq!(page.items.len(), 25);
    let (second, _) = fw.states_page_at(&next.unwrap()).await.unwrap();
    // Devices move while the test runs (speed 5000), so pages are compared by their keys.
    let key = |s: &dcs_api::model::FirmwareState| (s.device_id, s.module_id);
    assert_eq!(page.items.iter().map(key).collect::<Vec<_>>(), all[..25].iter().map(key).collect::<Vec<_>>());
    assert_eq!(key(&second.items[0]), key(&all[25]));

    // A device given as an IMEI or DevEUI URN.
    let (devices, _) = sim.store().beta_devices(owner, None, "name", true, 0, 100).unwrap();
    let with_imei = devices.iter().find(|d| d.imei.is_some()).expect("a device with an IMEI");
    let urn = format!("urn:dev:imei:{}:", with_imei.imei.as_ref().unwrap());
    let by_urn: Vec<_> =
        fw.states(&StateFilter { device_id: Some(urn), ..Default::default() }).unwrap().try_collect().await.unwrap();
    assert!(!by_urn.is_empty());
    assert!(by_urn.iter().all(|s| s.device_id == with_imei.id));
    assert_eq!(
        by_urn.iter().map(key).collect::<Vec<_>>(),
        all.iter().filter(|s| s.device_id == with_imei.id).map(key).collect::<Vec<_>>()
    );
    if let Some(with_eui) = devices.iter().find(|d| d.deveui.is_some()) {
        let urn = format!("URN:DEV:DEVEUI:{}", with_eui.deveui.as_ref().unwrap().to_uppercase());
        let by_eui: Vec<_> = fw
            .states(&StateFilter { device_id: Some(urn), ..Default::default() })
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert!(!by_eui.is_empty() && by_eui.iter().all(|s| s.device_id == with_eui.id));
    }

    // Module, status and version filters; a sort.
    let module = all[0].module_id;
    let filter = StateFilter { module_id: Some(module), sort: Some("-deviceId".into()), ..Default::default() };
    let of_module: Vec<_> = fw.states(&filter).unwrap().try_collect().await.unwrap();
    assert_eq!(of_module.len(), all.iter().filter(|s| s.module_id == module).count());
    assert!(of_module.windows(2).all(|w| w[0].device_id >= w[1].device_id));
    if let Some(version) = all[0].current_firmware_version.clone() {
        let filter = StateFilter { current_firmware_version: Some(version.clone()), ..Default::default() };
        let same: Vec<_> = fw.states(&filter).unwrap().try_collect().await.unwrap();
        assert!(
            !same.is_empty() && same.iter().all(|s| s.current_firmware_version.as_deref() == Some(version.as_str()))
        );
    }
    let filter = StateFilter { firmware_update_status: Some(UpdateStatus::Succeeded), ..Default::default() };
    let succeeded: Vec<_> = fw.states(&filter).unwrap().try_collect().await.unwrap();
    assert!(succeeded.iter().all(|s| s.firmware_update_status == Some(UpdateStatus::Succeeded)));

    // Time filters: nothing was modified in the far future, everything before it.
    let future = time::OffsetDateTime::now_utc() + time::Duration::days(365 * 50);
    let none: Vec<_> = fw
        .states(&StateFilter { modified_since: Some(future), ..Default::default() })
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    if common::alt() {
        // A-41 (alt): `modifiedSince` is no parameter of this service: every state comes.
        let all: Vec<_> = fw.states(&StateFilter::default()).unwrap().try_collect().await.unwrap();
        assert_eq!(none.len(), all.len());
    } else {
        assert!(none.is_empty());
    }
    let (before, _) = fw
        .states_page(&StateFilter { created_before: Some(future), limit: Some(5), ..Default::default() })
        .await
        .unwrap();
    assert_eq!(before.items.len(), 5);
}

#[tokio::test]
async fn setting_a_target_leads_the_device_to_succeed_or_fail() {
    let (sim, running) = start().await;
    let c = demo_client(&sim, &running);
    let fw = c.firmware();
    let owner = sim.demo_key().client_id;
    let (devices, _) = sim.store().beta_devices(owner, None, "name", true, 0, 100).unwrap();
    let device = devices.iter().find(|d| d.imei.is_some()).expect("a device with an IMEI");
    let device_ref = DeviceId::parse(&format!("urn:dev:imei:{}:", device.imei.as_ref().unwrap())).unwrap();
    let states: Vec<_> = fw
        .states(&StateFilter { device_id: Some(device.id.to_string()), ..Default::default() })
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let state = states[0].clone();
    let spec = state.device_specification_id.unwrap_or(device.device_specification_id);

    // A version without a package (or without its file) is refused by the service.
    let err = set_target(&fw, &device_ref, state.module_id, Some("123.0.0")).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadRequest);
    assert_eq!(set_target(&fw, &device_ref, uuid::Uuid::new_v4(), None).await.unwrap_err().code(), ErrorCode::NotFound);

    let package = fw.create_package(&NewPackage::new(spec, state.module_id, "123.0.0")).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fw-123.bin");
    write_random_file(&file, 100_000);
    fw.upload_firmware_file(package.id, &file, &UploadOptions::default(), &Transfer::default()).await.unwrap();

    let set = set_target(&fw, &device_ref, state.module_id, Some("123.0.0")).await.unwrap();
    assert_eq!(set.device_id, device.id);
    assert_eq!(set.target_firmware_version.as_deref(), Some("123.0.0"));

    let filter =
        StateFilter { device_id: Some(device.id.to_string()), module_id: Some(state.module_id), ..Default::default() };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let last = loop {
        let (page, _) = fw.states_page(&filter).await.unwrap();
        let now = page.items[0].clone();
        if matches!(now.firmware_update_status, Some(UpdateStatus::Succeeded | UpdateStatus::Failed)) {
            break now;
        }
        assert!(tokio::time::Instant::now() < deadline, "no outcome in time: {now:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    match last.firmware_update_status {
        Some(UpdateStatus::Succeeded) => assert_eq!(last.current_firmware_version.as_deref(), Some("123.0.0")),
        _ => assert!(last.firmware_update_status_details.is_some()),
    }

    // Resetting the target.
    let reset = set_target(&fw, &device_ref, state.module_id, None).await.unwrap();
    assert_eq!(reset.target_firmware_version, None);
}
