//! What the app's Home and the history's wave marks read from the fleet database, checked
//! against the simulator's own listing over HTTP: the states per status over every module,
//! devices and drift, the failures grouped by reason; and the start of each rollout wave.

use std::collections::{BTreeMap, BTreeSet};

use dcs_api::model::FirmwareState;
use dcs_api::Client;
use dcs_console::fleet::query;
use dcs_console::fleet::rollout::{self, DeviceChoice, RolloutPlan, StepOutcome};
use dcs_console::fleet::scan::{self, ScanKind};
use dcs_console::fleet::{FleetDb, ScopeKey};
use dcs_console::set_target::SetTarget;
use dcs_sim::{SimOptions, Simulator};
use tokio_util::sync::CancellationToken;

mod common;

use common::all_states;

async fn scanned(devices: u32) -> (Simulator, dcs_sim::RunningSim, Client, FleetDb, dcs_console::fleet::Scope) {
    let (sim, running, client) =
        common::start(SimOptions { devices_per_client: devices, speed: 1.0, ..Default::default() }).await;
    let (db, scope) = common::fleet_db("sim", running.base_url());
    scan::refresh(&client, &db, scope, ScanKind::Full, &CancellationToken::new(), |_| {}).await.unwrap();
    (sim, running, client, db, scope)
}

#[tokio::test]
async fn health_counts_equal_the_services_states() {
    let (_sim, _running, client, db, scope) = scanned(150).await;
    let states = all_states(&client).await;
    let health = query::health(&db, scope, 50).unwrap();

    assert_eq!(health.states as usize, states.len());
    let devices: BTreeSet<_> = states.iter().map(|s| s.device_id.to_string()).collect();
    assert_eq!(health.devices as usize, devices.len());
    let modules: BTreeSet<_> = states.iter().map(|s| s.module_id.to_string()).collect();
    assert_eq!(health.modules as usize, modules.len());

    let mut by_status: BTreeMap<String, u32> = BTreeMap::new();
    for s in &states {
        let k = s.firmware_update_status.as_ref().map(|x| x.as_str().to_owned()).unwrap_or_else(|| "none".into());
        *by_status.entry(k).or_default() += 1;
    }
    let shown: BTreeMap<String, u32> = health.by_status.iter().map(|c| (c.key.clone(), c.count)).collect();
    assert_eq!(shown, by_status);
    assert!(health.by_status.windows(2).all(|w| w[0].count >= w[1].count), "the most first");
    let drift = states
        .iter()
        .filter(|s| s.target_firmware_version.is_some() && s.current_firmware_version != s.target_firmware_version)
        .count();
    assert_eq!(health.drift as usize, drift);

    // Failures by reason: every failed state counted once, under its reason, latest first.
    let failed: Vec<&FirmwareState> =
        states.iter().filter(|s| s.firmware_update_status.as_ref().map(|x| x.as_str()) == Some("FAILED")).collect();
    assert!(!failed.is_empty(), "the demo data has failed updates");
    assert_eq!(health.failures.iter().map(|f| f.count as usize).sum::<usize>(), failed.len());
    let reasons: BTreeSet<String> = failed
        .iter()
        .map(|s| s.firmware_update_status_details.clone().unwrap_or_else(|| "(no details given)".into()))
        .collect();
    assert_eq!(health.failures.iter().map(|f| f.details.clone()).collect::<BTreeSet<_>>(), reasons);
    assert!(health.failures.windows(2).all(|w| w[0].latest >= w[1].latest), "latest first");
    for f in &health.failures {
        let of_reason = |s: &&&FirmwareState| {
            s.firmware_update_status_details.as_deref().unwrap_or("(no details given)") == f.details
        };
        let mods: BTreeSet<_> = failed.iter().filter(of_reason).map(|s| s.module_id.to_string()).collect();
        assert_eq!(f.modules as usize, mods.len());
        assert!(mods.contains(&f.module_id));
    }
    // The cap holds.
    assert!(query::health(&db, scope, 1).unwrap().failures.len() <= 1);
}

#[tokio::test]
async fn an_empty_scope_is_all_zero() {
    let db = FleetDb::in_memory().unwrap();
    let scope =
        db.scope(&ScopeKey { profile: "p".into(), base_url: "http://127.0.0.1:1".into(), customer: None }).unwrap();
    let h = query::health(&db, scope, 8).unwrap();
    assert_eq!((h.states, h.devices, h.modules, h.drift), (0, 0, 0, 0));
    assert!(h.by_status.is_empty() && h.failures.is_empty());
}

#[tokio::test]
async fn each_started_wave_is_a_mark_with_its_time() {
    let (_sim, _running, client, db, scope) = scanned(60).await;
    let module = query::modules(&db, scope).unwrap().into_iter().max_by_key(|m| m.devices).unwrap();
    let version = query::packages(&db, scope, &module.module_id).unwrap()[0].version.clone();
    let plan = RolloutPlan {
        module_id: module.module_id.clone(),
        version: version.clone(),
        devices: DeviceChoice::All,
        waves: vec![10.0, 100.0],
        success_threshold: 10.0,
        error_threshold: 100.0,
        schedule: None,
        approval: false,
        hang_minutes: None,
        retry: None,
        late: Default::default(),
    };
    assert!(query::wave_starts(&db, scope, &module.module_id, None).unwrap().is_empty());
    let (preview, devices) = rollout::preview(&client, &db, scope, &plan).await.unwrap();
    assert!(preview.problems.is_empty(), "{:?}", preview.problems);
    let id = rollout::create(&client, &db, scope, &plan, &devices).unwrap();
    let before = dcs_console::fleet::now_ms();
    let outcome = rollout::advance(
        &client,
        Some(&SetTarget::simulator()),
        &db,
        &id,
        &rollout::Driver::new(rollout::DriverKind::Cli),
    )
    .await
    .unwrap();
    assert!(matches!(outcome, StepOutcome::WaveStarted { wave: 0, .. }), "{outcome:?}");

    let marks = query::wave_starts(&db, scope, &module.module_id, None).unwrap();
    assert_eq!(marks.len(), 1, "{marks:?}");
    let view = rollout::get(&db, &id).unwrap();
    assert_eq!(
        (marks[0].wave, marks[0].rollout_id.as_str(), marks[0].version.as_str()),
        (1, id.as_str(), version.as_str())
    );
    assert_eq!(marks[0].devices, view.waves[0].set);
    let at = time::OffsetDateTime::parse(&marks[0].at, &time::format_description::well_known::Rfc3339).unwrap();
    assert!((at.unix_timestamp_nanos() / 1_000_000) as i64 >= before - 1000);
    // Marks before the window are left out; another module has none.
    assert!(query::wave_starts(&db, scope, &module.module_id, Some(dcs_console::fleet::now_ms() + 60_000))
        .unwrap()
        .is_empty());
    let other = query::modules(&db, scope).unwrap().into_iter().find(|m| m.module_id != module.module_id).unwrap();
    assert!(query::wave_starts(&db, scope, &other.module_id, None).unwrap().is_empty());
}
