//! The fleet database against a real simulator over HTTP: a full scan equal to the service's
//! own listing, an incremental refresh that reads only what changed, cancellation, the device
//! table's filters and CSV, history snapshots, and rollouts in waves moved by the simulated
//! devices until complete, paused by their thresholds, and aborted with their targets reset.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use dcs_api::firmware::StateFilter;
use dcs_api::model::{DeviceId, FirmwareState};
use dcs_api::{Client, ClientConfig, Secret};
use dcs_console::fleet::query::{self, DeviceQuery, Selection};
use dcs_console::fleet::rollout::{self, DeviceChoice, RolloutPlan, RolloutState, StepOutcome};
use dcs_console::fleet::scan::{self, ScanKind};
use dcs_console::fleet::{FleetDb, FleetError, Scope, ScopeKey};
use dcs_console::set_target::{self, SetTarget};
use dcs_sim::{RunningSim, SimOptions, Simulator};
use futures::TryStreamExt;
use tokio_util::sync::CancellationToken;

struct Env {
    sim: Simulator,
    _running: RunningSim,
    client: Client,
    db: FleetDb,
    scope: Scope,
    /// The built-in simulator profile's set-target operation (A-38).
    op: SetTarget,
}

async fn env(devices: u32, speed: f64) -> Env {
    let sim = Simulator::new(SimOptions {
        devices_per_client: devices,
        speed,
        ..Default::default()
    })
    .unwrap();
    let running = sim
        .spawn(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .await
        .unwrap();
    let key = sim.demo_key();
    let base = running.base_url();
    let client =
        Client::new(ClientConfig::new(&base, &base, &key.key_id, Secret::new(key.secret)).unwrap())
            .unwrap();
    let db = FleetDb::in_memory().unwrap();
    let scope = db
        .scope(&ScopeKey {
            profile: "sim".into(),
            base_url: base,
            customer: None,
        })
        .unwrap();
    Env {
        sim,
        _running: running,
        client,
        db,
        scope,
        op: SetTarget::simulator(),
    }
}

async fn all_states(client: &Client) -> Vec<FirmwareState> {
    client
        .firmware()
        .states(&StateFilter {
            limit: Some(1000),
            ..Default::default()
        })
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

async fn refresh(e: &Env, kind: ScanKind) -> scan::ScanReport {
    scan::refresh(
        &e.client,
        &e.db,
        e.scope,
        kind,
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_full_scan_holds_what_the_service_lists_and_a_refresh_reads_only_changes() {
    let e = env(400, 1.0).await;
    let seen = std::sync::Mutex::new(Vec::new());
    let report = scan::refresh(
        &e.client,
        &e.db,
        e.scope,
        ScanKind::Incremental,
        &CancellationToken::new(),
        |p| seen.lock().unwrap().push(p.states),
    )
    .await
    .unwrap();
    // No watermark yet: an incremental refresh becomes a full scan.
    assert_eq!(report.kind, ScanKind::Full);
    let service = all_states(&e.client).await;
    assert_eq!(report.states as usize, service.len());
    assert_eq!(
        e.db.scope_info(e.scope).unwrap().states as usize,
        service.len()
    );
    // Progress after every page, rising, ending at the total.
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len() as u32, report.pages);
    assert!(seen.windows(2).all(|w| w[0] < w[1]) && *seen.last().unwrap() == report.states);
    assert!(
        report.pages > 1,
        "several pages of {} states",
        scan::PAGE_SIZE
    );

    // The summaries count what the service lists.
    let modules = query::modules(&e.db, e.scope).unwrap();
    assert_eq!(
        modules.iter().map(|m| m.devices as usize).sum::<usize>(),
        service.len()
    );
    let module = &modules[0];
    let mut by_status: BTreeMap<String, u32> = BTreeMap::new();
    for s in service
        .iter()
        .filter(|s| s.module_id.to_string() == module.module_id)
    {
        let key = s
            .firmware_update_status
            .as_ref()
            .map(|x| x.as_str().to_owned())
            .unwrap_or_else(|| "none".into());
        *by_status.entry(key).or_default() += 1;
    }
    let overview = query::overview(&e.db, e.scope, &module.module_id, &Default::default()).unwrap();
    let shown: BTreeMap<String, u32> = overview
        .by_status
        .iter()
        .map(|c| (c.key.clone(), c.count))
        .collect();
    assert_eq!(shown, by_status);
    let drift = service
        .iter()
        .filter(|s| s.module_id.to_string() == module.module_id)
        .filter(|s| {
            s.target_firmware_version.is_some()
                && s.current_firmware_version != s.target_firmware_version
        })
        .count();
    assert_eq!(module.drift as usize, drift);
    assert!(
        !overview.packages.is_empty() && module.spec_name.is_some(),
        "catalogue read: {module:?}"
    );

    // One target set: the next refresh reads a handful of states, not the fleet.
    let device = service
        .iter()
        .find(|s| s.module_id.to_string() == module.module_id)
        .unwrap();
    let version = overview.packages[0].version.clone();
    set_target::send(
        &e.client,
        &e.op,
        &DeviceId::Uuid(device.device_id),
        device.module_id,
        Some(&version),
        None,
    )
    .await
    .unwrap();
    let inc = refresh(&e, ScanKind::Incremental).await;
    assert_eq!(inc.kind, ScanKind::Incremental);
    assert!(
        inc.states >= 1 && (inc.states as usize) < service.len() / 4,
        "read {} of {}",
        inc.states,
        service.len()
    );
    assert!(inc.changed >= 1);
    let q = DeviceQuery {
        module_id: Some(module.module_id.clone()),
        device: Some(device.device_id.to_string()),
        ..Default::default()
    };
    let m = query::resolve_device(&e.client, &device.device_id.to_string())
        .await
        .unwrap();
    let row = &query::rows(&e.db, e.scope, &q, Some(&m), 0, 10).unwrap()[0];
    assert_eq!(row.target.as_deref(), Some(version.as_str()));

    // A full scan again changes nothing and removes nothing.
    let again = refresh(&e, ScanKind::Full).await;
    assert_eq!((again.removed, again.states as usize), (0, service.len()));
    // Only the device given a target may have moved on meanwhile (at 1x, 10 to 120 s after).
    assert!(again.changed <= 1, "{again:?}");
    // A state the service no longer has is forgotten by the next full scan (a refresh cannot see it).
    let gone = FirmwareState { device_id: uuid::Uuid::new_v4(), ..service[0].clone() };
    scan::write_page(&e.db, e.scope, std::slice::from_ref(&gone)).unwrap();
    assert_eq!(e.db.scope_info(e.scope).unwrap().states as usize, service.len() + 1);
    assert_eq!(refresh(&e, ScanKind::Incremental).await.removed, 0);
    assert_eq!(refresh(&e, ScanKind::Full).await.removed, 1);
    assert_eq!(e.db.scope_info(e.scope).unwrap().states as usize, service.len());
}

#[tokio::test]
async fn a_cancelled_scan_keeps_the_watermark() {
    let e = env(200, 1.0).await;
    refresh(&e, ScanKind::Full).await;
    let before = e.db.scope_info(e.scope).unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = scan::refresh(&e.client, &e.db, e.scope, ScanKind::Full, &cancel, |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, FleetError::Cancelled), "{err}");
    let after = e.db.scope_info(e.scope).unwrap();
    assert_eq!(
        (before.watermark, before.last_full_scan, before.states),
        (after.watermark, after.last_full_scan, after.states)
    );
}

#[tokio::test]
async fn the_device_table_filters_sorts_pages_and_exports() {
    let e = env(300, 1.0).await;
    refresh(&e, ScanKind::Full).await;
    let module = query::modules(&e.db, e.scope)
        .unwrap()
        .into_iter()
        .max_by_key(|m| m.failed)
        .unwrap();
    let base = DeviceQuery {
        module_id: Some(module.module_id.clone()),
        ..Default::default()
    };
    let failed = DeviceQuery {
        status: Some("FAILED".into()),
        sort: Some("-statusAt".into()),
        ..base.clone()
    };
    let n = query::count(&e.db, e.scope, &failed, None).unwrap();
    assert_eq!(n, module.failed);
    let rows = query::rows(&e.db, e.scope, &failed, None, 0, 1000).unwrap();
    assert_eq!(rows.len() as u32, n);
    assert!(rows
        .iter()
        .all(|r| r.status.as_deref() == Some("FAILED") && r.details.is_some()));
    assert!(
        rows.windows(2).all(|w| w[0].status_at >= w[1].status_at),
        "newest first"
    );
    // Windows of the same order join up to the whole.
    let all = query::rows(&e.db, e.scope, &base, None, 0, 5000).unwrap();
    let mut joined = query::rows(&e.db, e.scope, &base, None, 0, 7).unwrap();
    joined.extend(query::rows(&e.db, e.scope, &base, None, 7, 5000).unwrap());
    assert_eq!(all, joined);
    // "none": devices that never had a target.
    let none = DeviceQuery {
        status: Some("none".into()),
        ..base.clone()
    };
    assert!(query::rows(&e.db, e.scope, &none, None, 0, 100)
        .unwrap()
        .iter()
        .all(|r| r.status.is_none()));
    // A device by its IMEI or DevEUI: the service says which UUID it is.
    let device = e
        .sim
        .store()
        .beta_devices(e.sim.demo_key().client_id, None, "id", true, 0, 100_000)
        .unwrap()
        .0
        .into_iter()
        .find(|d| d.imei.is_some())
        .unwrap();
    let m = query::resolve_device(&e.client, &format!("urn:dev:imei:{}", device.imei.unwrap()))
        .await
        .unwrap();
    assert_eq!(m, query::DeviceMatch::Exact(device.id));
    let prefix = query::resolve_device(&e.client, &device.id.to_string()[..6])
        .await
        .unwrap();
    let by_prefix = query::rows(
        &e.db,
        e.scope,
        &DeviceQuery::default(),
        Some(&prefix),
        0,
        100,
    )
    .unwrap();
    assert!(by_prefix
        .iter()
        .any(|r| r.device_id == device.id.to_string()));
    assert!(by_prefix
        .iter()
        .all(|r| r.device_id.starts_with(&device.id.to_string()[..6])));
    let bad = query::resolve_device(&e.client, "imei:12")
        .await
        .unwrap_err();
    assert!(bad.to_string().starts_with("device: "), "{bad}");
    let bad_sort = query::rows(
        &e.db,
        e.scope,
        &DeviceQuery {
            sort: Some("colour".into()),
            ..Default::default()
        },
        None,
        0,
        1,
    );
    assert!(bad_sort
        .unwrap_err()
        .to_string()
        .starts_with("sort: must be one of"));

    // CSV: a header and one line per selected row; "all except" leaves the excluded out.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("failed.csv");
    let written = query::write_csv(
        &e.db,
        e.scope,
        &failed,
        None,
        None,
        &Default::default(),
        &path,
    )
    .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written, n);
    assert_eq!(text.lines().count() as u32, n + 1);
    assert!(text.starts_with("deviceId,moduleId,module,"));
    let except = Selection {
        all: true,
        keys: vec![rows[0].key.clone()],
    };
    let written = query::write_csv(
        &e.db,
        e.scope,
        &failed,
        None,
        Some(&except),
        &Default::default(),
        &path,
    )
    .unwrap();
    assert_eq!(written, n - 1);
    assert!(!std::fs::read_to_string(&path)
        .unwrap()
        .contains(&rows[0].device_id));
}

#[tokio::test]
async fn history_keeps_a_point_per_change() {
    let e = env(100, 1.0).await;
    refresh(&e, ScanKind::Full).await;
    let module = query::modules(&e.db, e.scope).unwrap().remove(0);
    assert!(query::snapshot(&e.db, e.scope, 1_000).unwrap() > 0);
    // Nothing changed and the heartbeat is not due: no new point.
    assert_eq!(query::snapshot(&e.db, e.scope, 2_000).unwrap(), 0);
    let device: uuid::Uuid = query::rows(
        &e.db,
        e.scope,
        &DeviceQuery {
            module_id: Some(module.module_id.clone()),
            ..Default::default()
        },
        None,
        0,
        1,
    )
    .unwrap()[0]
        .device_id
        .parse()
        .unwrap();
    let version = query::packages(&e.db, e.scope, &module.module_id).unwrap()[0]
        .version
        .clone();
    let set = set_target::send(
        &e.client,
        &e.op,
        &DeviceId::Uuid(device),
        module.module_id.parse().unwrap(),
        Some(&version),
        None,
    )
    .await
    .unwrap()
    .state()
    .unwrap();
    assert_eq!(
        set.firmware_update_status.as_ref().map(|s| s.as_str()),
        Some("PENDING"),
        "{set:?}"
    );
    refresh(&e, ScanKind::Incremental).await;
    query::snapshot(&e.db, e.scope, 3_000).unwrap();
    let points = query::history(&e.db, e.scope, &module.module_id, None, 500).unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0].counts.values().sum::<u32>(), module.devices);
    assert_eq!(points[1].counts.values().sum::<u32>(), module.devices);
    assert_ne!(points[0].counts, points[1].counts);
}

/// A module with many devices and a version few of them run.
fn pick(e: &Env) -> (String, String) {
    let module = query::modules(&e.db, e.scope)
        .unwrap()
        .into_iter()
        .max_by_key(|m| m.devices)
        .unwrap();
    let overview = query::overview(&e.db, e.scope, &module.module_id, &Default::default()).unwrap();
    let running: BTreeMap<String, u32> = overview
        .by_version
        .iter()
        .map(|c| (c.key.clone(), c.count))
        .collect();
    let version = overview
        .packages
        .iter()
        .min_by_key(|p| running.get(&p.version).copied().unwrap_or(0))
        .unwrap()
        .version
        .clone();
    (module.module_id, version)
}

fn plan(module: &str, version: &str, waves: &[f64], success: f64, error: f64) -> RolloutPlan {
    RolloutPlan {
        module_id: module.into(),
        version: version.into(),
        devices: DeviceChoice::All,
        waves: waves.to_vec(),
        success_threshold: success,
        error_threshold: error,
    }
}

#[tokio::test]
async fn a_rollout_moves_wave_by_wave_to_completion() {
    let mut e = env(120, 3000.0).await;
    // A profile's own template (not the built-in one) that reaches the simulator's operation:
    // another spelling of the method, extra members, a string holding values, the package's id.
    e.op = SetTarget {
        method: "put".into(),
        path: "/firmware/states/{deviceId}/{moduleId}".into(),
        body: r#"{"targetFirmwareVersion": {version}, "package": {packageId}, "note": "rollout of {moduleId} on \"{deviceId}\""}"#.into(),
    };
    assert_eq!(e.op.check(), vec![]);
    refresh(&e, ScanKind::Full).await;
    let (module, version) = pick(&e);
    // A low success threshold: which devices fail is drawn by the simulator (about 1 in 14), and
    // the first wave is a handful of devices in a shuffled order.
    let p = plan(&module, &version, &[20.0, 60.0, 100.0], 10.0, 100.0);
    let (preview, devices) = rollout::preview(&e.client, &e.db, e.scope, &p)
        .await
        .unwrap();
    assert!(preview.problems.is_empty(), "{:?}", preview.problems);
    assert_eq!(preview.wave_sizes.iter().sum::<u32>(), preview.devices);
    assert_eq!(preview.wave_sizes.len(), 3);
    let id = rollout::create(&e.db, e.scope, &p, &devices).unwrap();
    assert_eq!(rollout::running(&e.db, e.scope).unwrap(), vec![id.clone()]);

    let started = Instant::now();
    let mut outcomes = Vec::new();
    loop {
        let outcome = rollout::advance(&e.client, Some(&e.op), &e.db, &id).await.unwrap();
        if outcome != StepOutcome::Waiting {
            outcomes.push(outcome.clone());
        }
        if outcome == StepOutcome::Completed || matches!(outcome, StepOutcome::Paused { .. }) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "not complete after 90 s: {outcomes:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        refresh(&e, ScanKind::Incremental).await;
    }
    let view = rollout::get(&e.db, &id).unwrap();
    assert_eq!(
        outcomes.last(),
        Some(&StepOutcome::Completed),
        "{outcomes:?} {:?}",
        view.events
    );
    let starts: Vec<u32> = outcomes
        .iter()
        .filter_map(|o| {
            if let StepOutcome::WaveStarted { wave, .. } = o {
                Some(*wave)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(starts, vec![0, 1, 2]);
    assert_eq!(view.state, RolloutState::Completed);
    assert!(view
        .waves
        .iter()
        .all(|w| w.started && w.set == w.size && w.updating == 0));
    assert!(
        view.total.succeeded * 100 >= view.total.size * 60,
        "{:?}",
        view.total
    );
    // The service agrees: every device of the rollout has the target.
    for d in &devices {
        let (page, _) = e
            .client
            .firmware()
            .states_page(&StateFilter {
                device_id: Some(d.0.to_string()),
                module_id: Some(module.parse().unwrap()),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(
            page.items[0].target_firmware_version.as_deref(),
            Some(version.as_str())
        );
    }
    assert!(view
        .events
        .iter()
        .any(|ev| ev.message.starts_with("Wave 3 started")));
    assert!(view.events[0].message.starts_with("Completed:"));
}

#[tokio::test]
async fn thresholds_pause_and_abort_resets_what_has_not_finished() {
    let e = env(120, 1.0).await;
    refresh(&e, ScanKind::Full).await;
    let (module, version) = pick(&e);
    let p = plan(&module, &version, &[20.0, 100.0], 90.0, 10.0);
    let (_, devices) = rollout::preview(&e.client, &e.db, e.scope, &p)
        .await
        .unwrap();
    let id = rollout::create(&e.db, e.scope, &p, &devices).unwrap();
    let StepOutcome::WaveStarted {
        wave: 0,
        set,
        refused: 0,
    } = rollout::advance(&e.client, Some(&e.op), &e.db, &id).await.unwrap()
    else {
        panic!("the first wave should start")
    };
    assert!(set > 0);
    // Nothing final yet at 1x: waiting.
    assert_eq!(
        rollout::advance(&e.client, Some(&e.op), &e.db, &id).await.unwrap(),
        StepOutcome::Waiting
    );

    // The first wave's devices fail (as a refresh would bring it): the error threshold pauses.
    let module_id: uuid::Uuid = module.parse().unwrap();
    let view = rollout::get(&e.db, &id).unwrap();
    let wave0: Vec<query::DeviceRow> = query::rows(
        &e.db,
        e.scope,
        &DeviceQuery {
            module_id: Some(module.clone()),
            target: Some(version.clone()),
            ..Default::default()
        },
        None,
        0,
        5000,
    )
    .unwrap();
    assert!(wave0.len() as u32 >= view.waves[0].size);
    let failed: Vec<FirmwareState> = wave0
        .iter()
        .map(|r| FirmwareState {
            module_id,
            device_id: r.device_id.parse().unwrap(),
            device_specification_id: None,
            client_id: None,
            project_id: None,
            current_firmware_version: r.current.clone(),
            target_firmware_version: Some(version.clone()),
            target_firmware_version_modified_at: None,
            firmware_update_status: Some(dcs_api::model::UpdateStatus::Failed),
            firmware_update_status_details: Some("battery too low".into()),
            firmware_update_status_modified_at: Some(time::OffsetDateTime::now_utc()),
            extra: Default::default(),
        })
        .collect();
    dcs_console::fleet::scan::write_page(&e.db, e.scope, &failed).unwrap();
    let StepOutcome::Paused { reason } = rollout::advance(&e.client, Some(&e.op), &e.db, &id).await.unwrap()
    else {
        panic!("should pause")
    };
    assert!(reason.starts_with("error threshold passed"), "{reason}");
    assert_eq!(
        rollout::get(&e.db, &id).unwrap().state,
        RolloutState::Paused
    );
    // Paused: a step does nothing.
    assert_eq!(
        rollout::advance(&e.client, Some(&e.op), &e.db, &id).await.unwrap(),
        StepOutcome::Waiting
    );
    // Resumed with a higher error threshold: the wave is over and short of the success threshold.
    let bad = rollout::resume(&e.db, &id, Some(0.0), None).unwrap_err();
    assert!(bad.to_string().starts_with("successThreshold:"), "{bad}");
    rollout::resume(&e.db, &id, None, Some(100.0)).unwrap();
    let StepOutcome::Paused { reason } = rollout::advance(&e.client, Some(&e.op), &e.db, &id).await.unwrap()
    else {
        panic!("should pause")
    };
    assert!(
        reason.contains("below the 90% success threshold"),
        "{reason}"
    );

    // A second rollout, aborted while its first wave updates: the service cancels those updates.
    let other = plan(&module, &version, &[50.0, 100.0], 90.0, 100.0);
    let (_, devices) = rollout::preview(&e.client, &e.db, e.scope, &other)
        .await
        .unwrap();
    let id2 = rollout::create(&e.db, e.scope, &other, &devices).unwrap();
    rollout::advance(&e.client, Some(&e.op), &e.db, &id2).await.unwrap();
    let unfinished = rollout::unfinished(&e.db, &id2).unwrap();
    assert!(!unfinished.is_empty());
    let (view, reset) = rollout::abort(&e.client, Some(&e.op), &e.db, &id2, true).await.unwrap();
    assert_eq!(reset as usize, unfinished.len());
    assert_eq!(view.state, RolloutState::Aborted);
    let (page, _) = e
        .client
        .firmware()
        .states_page(&StateFilter {
            device_id: Some(unfinished[0].to_string()),
            module_id: Some(module_id),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.items[0].target_firmware_version, None);
    assert_eq!(
        page.items[0]
            .firmware_update_status
            .as_ref()
            .map(|s| s.as_str()),
        Some("CANCELLED")
    );
    assert!(
        rollout::abort(&e.client, Some(&e.op), &e.db, &id2, true).await.is_err(),
        "aborted once only"
    );
}

#[tokio::test]
async fn plans_are_checked_field_by_field() {
    let e = env(60, 1.0).await;
    refresh(&e, ScanKind::Full).await;
    let (module, version) = pick(&e);
    let mut p = plan(&module, "9.9.9", &[50.0, 40.0], 0.0, 150.0);
    p.devices = DeviceChoice::List {
        text: format!("imei:12, {}\nnot-a-device", uuid::Uuid::new_v4()),
    };
    let (preview, _) = rollout::preview(&e.client, &e.db, e.scope, &p)
        .await
        .unwrap();
    let fields: Vec<&str> = preview.problems.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(
        fields,
        vec![
            "version",
            "waves",
            "errorThreshold",
            "successThreshold",
            "devices"
        ],
        "{:?}",
        preview.problems
    );
    let devices_rule = &preview.problems[4].rule;
    assert!(
        devices_rule.contains("#1 `imei:12`") && devices_rule.contains("#3 `not-a-device`"),
        "{devices_rule}"
    );
    assert!(
        devices_rule.contains("no state of this module"),
        "{devices_rule}"
    );
    let order: Vec<usize> = ["#1 ", "#2 ", "#3 "]
        .iter()
        .map(|k| devices_rule.find(k).unwrap())
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "in the pasted order: {devices_rule}"
    );

    // A pasted list of mixed forms of real devices is fine.
    let store_devices = e
        .sim
        .store()
        .beta_devices(e.sim.demo_key().client_id, None, "id", true, 0, 100_000)
        .unwrap()
        .0;
    let rows = query::rows(
        &e.db,
        e.scope,
        &DeviceQuery {
            module_id: Some(module.clone()),
            ..Default::default()
        },
        None,
        0,
        5000,
    )
    .unwrap();
    let mut forms = Vec::new();
    for d in store_devices
        .iter()
        .filter(|d| rows.iter().any(|r| r.device_id == d.id.to_string()))
        .take(3)
    {
        forms.push(match (&d.imei, &d.deveui) {
            (Some(imei), _) => format!("imei:{imei}"),
            (_, Some(eui)) => format!("urn:dev:deveui:{}", eui.to_uppercase()),
            _ => d.id.to_string(),
        });
    }
    let good = RolloutPlan {
        devices: DeviceChoice::List {
            text: forms.join("\n"),
        },
        ..plan(&module, &version, &[100.0], 50.0, 50.0)
    };
    let (preview, devices) = rollout::preview(&e.client, &e.db, e.scope, &good)
        .await
        .unwrap();
    assert!(preview.problems.is_empty(), "{:?}", preview.problems);
    assert_eq!(preview.devices + preview.already_on_version, 3);
    assert_eq!(devices.len() as u32, preview.devices);
}

#[tokio::test]
async fn without_a_set_target_operation_a_rollout_sets_nothing_and_says_why() {
    use dcs_console::fleet::service::set_target_availability;
    let e = env(30, 1.0).await;
    refresh(&e, ScanKind::Full).await;
    let (module, version) = pick(&e);
    // Any profile but the built-in simulator's has no operation until the user gives one.
    let mut profile = dcs_console::Profile::simulator("k", vec![]);
    assert!(set_target_availability(&profile).available);
    profile.name = "staging".into();
    profile.set_target = None;
    let a = set_target_availability(&profile);
    assert!(!a.available);
    assert!(a.reason.contains("profile `staging` has no set-target operation"), "{}", a.reason);
    assert!(!a.reason.contains("A-"), "no internal words: {}", a.reason);

    let p = plan(&module, &version, &[100.0], 90.0, 10.0);
    let (_, devices) = rollout::preview(&e.client, &e.db, e.scope, &p).await.unwrap();
    let before = all_states(&e.client).await;
    let id = rollout::create(&e.db, e.scope, &p, &devices).unwrap();
    let StepOutcome::Paused { reason } = rollout::advance(&e.client, None, &e.db, &id).await.unwrap() else {
        panic!("should pause")
    };
    assert!(reason.contains("no set-target operation") && reason.contains("Set-target operation"), "{reason}");
    let view = rollout::get(&e.db, &id).unwrap();
    assert_eq!(view.state, RolloutState::Paused);
    assert!(view.waves.iter().all(|w| w.set == 0), "{:?}", view.waves);
    // Nor does an abort reset anything: refused before any change.
    let err = rollout::abort(&e.client, None, &e.db, &id, true).await.unwrap_err();
    assert!(err.to_string().starts_with("resetUnfinished:"), "{err}");
    assert_eq!(rollout::get(&e.db, &id).unwrap().state, RolloutState::Paused);
    assert_eq!(all_states(&e.client).await, before, "the service was not written to");
}

#[tokio::test]
async fn the_refresh_interval_is_kept_for_the_next_start() {
    use dcs_console::fleet::service::FleetService;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.sqlite");
    let scope = {
        let db = std::sync::Arc::new(FleetDb::open(&path).unwrap());
        let scope = db.scope(&ScopeKey { profile: "p".into(), base_url: "b".into(), customer: None }).unwrap();
        let service = FleetService::new(db);
        let bad = service.set_refresh(2, true).unwrap_err();
        assert!(bad.to_string().starts_with("intervalSeconds: must be from 5"), "{bad}");
        service.set_refresh(5, false).unwrap();
        scope
    };
    let service = FleetService::new(std::sync::Arc::new(FleetDb::open(&path).unwrap()));
    let status = service.status(scope).unwrap();
    assert_eq!((status.interval_seconds, status.auto_refresh), (5, false));
}
