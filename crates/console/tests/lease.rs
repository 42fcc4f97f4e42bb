//! One driver per rollout (rollout::lease): a second driver waits while the first holds the
//! lease, takes the rollout over when the lease runs out or is let go of, and a driver that lost
//! its lease in the middle of a wave's start sends nothing more; every device's target is set on
//! the simulator exactly once (its per-device counter: an oracle outside the console).

mod common;

use std::time::{Duration, Instant};

use dcs_console::fleet::rollout::{self, Driver, DriverKind, RolloutPlan, RolloutState, StepOutcome};
use dcs_console::fleet::scan::{self, ScanKind};
use dcs_console::fleet::{FleetDb, FleetError, Scope};
use dcs_console::set_target::SetTarget;
use dcs_sim::SimOptions;
use tokio_util::sync::CancellationToken;

async fn refresh(client: &dcs_api::Client, db: &FleetDb, scope: Scope) {
    scan::refresh(client, db, scope, ScanKind::Incremental, &CancellationToken::new(), |_| {}).await.unwrap();
}

/// A plan no threshold can pause: every wave starts once 1 % of the one before succeeded.
fn plan(module: &str, version: &str, waves: &[f64]) -> RolloutPlan {
    common::plan(module, version, waves, 1.0, 100.0)
}

fn pick(db: &FleetDb, scope: Scope) -> (String, String) {
    common::pick(db, scope)
}

#[tokio::test]
async fn a_second_driver_waits_for_the_lease_and_takes_over_when_it_runs_out_or_is_let_go() {
    let (_sim, running, client) = common::start(SimOptions { devices_per_client: 60, ..Default::default() }).await;
    let (db, scope) = common::fleet_db("lease", running.base_url());
    scan::refresh(&client, &db, scope, ScanKind::Full, &CancellationToken::new(), |_| {}).await.unwrap();
    let (module, version) = pick(&db, scope);
    let p = plan(&module, &version, &[10.0, 100.0]);
    let (_, devices) = rollout::preview(&client, &db, scope, &p).await.unwrap();
    let id = rollout::create(&client, &db, scope, &p, &devices).unwrap();
    let op = SetTarget::simulator();
    let a = Driver::new(DriverKind::App).with_lease(Duration::from_millis(1500));
    let b = Driver::new(DriverKind::Runner);

    let first = rollout::advance(&client, Some(&op), &db, &id, &a).await.unwrap();
    assert!(matches!(first, StepOutcome::WaveStarted { wave: 0, .. }), "{first:?}");
    let view = rollout::get(&db, &id).unwrap();
    let held = view.driver.clone().expect("the view names its driver");
    assert!(held.this && held.kind == DriverKind::App && held.fence == 1 && !held.expired, "{held:?}");
    assert_eq!(held.label, "this window");

    // While A's lease runs, B changes nothing and is told who drives.
    let StepOutcome::Elsewhere { driver } = rollout::advance(&client, Some(&op), &db, &id, &b).await.unwrap() else {
        panic!("B stepped a rollout A holds")
    };
    assert_eq!(driver.fence, 1);
    assert_eq!(rollout::get(&db, &id).unwrap().current_wave, 0, "B must not have started a wave");

    // A's lease runs out (its process slept): B takes over with a new fencing number, and A,
    // awake, is told B drives it.
    tokio::time::sleep(Duration::from_millis(1600)).await;
    refresh(&client, &db, scope).await;
    let taken = rollout::advance(&client, Some(&op), &db, &id, &b).await.unwrap();
    assert!(!matches!(taken, StepOutcome::Elsewhere { .. }), "B did not take over an expired lease: {taken:?}");
    let view = rollout::get(&db, &id).unwrap();
    assert_eq!(view.driver.as_ref().unwrap().fence, 2);
    assert_eq!(view.driver.as_ref().unwrap().kind, DriverKind::Runner);
    assert!(view.events.iter().any(|e| e.message.contains("drives the rollout now")), "{:?}", view.events);
    let StepOutcome::Elsewhere { .. } = rollout::advance(&client, Some(&op), &db, &id, &a).await.unwrap() else {
        panic!("A stepped again after B took the rollout over")
    };

    // B lets go (it stops cleanly): A takes over at once, with the next number.
    assert_eq!(rollout::lease::release(&db, &b).unwrap(), 1);
    let back = rollout::advance(&client, Some(&op), &db, &id, &a).await.unwrap();
    assert!(!matches!(back, StepOutcome::Elsewhere { .. }), "{back:?}");
    assert_eq!(rollout::get(&db, &id).unwrap().driver.unwrap().fence, 3);
}

/// A driver whose step is frozen in the middle of a wave's start (as SIGSTOP or a laptop's sleep
/// freeze it: its future is simply not polled) past its lease: another driver finishes the wave,
/// and when the first wakes it sends nothing; each device's target was set once.
#[tokio::test]
async fn a_driver_frozen_mid_wave_past_its_lease_sends_nothing_when_it_wakes() {
    let (sim, running, client) = common::start(SimOptions { devices_per_client: 800, ..Default::default() }).await;
    // A file, read again at the end through a connection of its own.
    let dir = tempfile::tempdir().unwrap();
    let db = FleetDb::open(&dir.path().join("fleet.sqlite")).unwrap();
    let scope = db.scope(&dcs_console::fleet::ScopeKey::new("frozen", &running.base_url(), None)).unwrap();
    scan::refresh(&client, &db, scope, ScanKind::Full, &CancellationToken::new(), |_| {}).await.unwrap();
    let (module, version) = pick(&db, scope);
    let module_id: uuid::Uuid = module.parse().unwrap();
    let p = plan(&module, &version, &[100.0]);
    let (_, devices) = rollout::preview(&client, &db, scope, &p).await.unwrap();
    assert!(devices.len() > 150, "the wave must span several slices, got {}", devices.len());
    let before = sim.store().target_sets(module_id).unwrap();
    let id = rollout::create(&client, &db, scope, &p, &devices).unwrap();
    let op = SetTarget::simulator();
    let a = Driver::new(DriverKind::App).with_lease(Duration::from_millis(1200));
    let b = Driver::new(DriverKind::Runner);
    let sent = || -> u64 {
        let now = sim.store().target_sets(module_id).unwrap();
        now.iter().map(|(d, n)| n - before.get(d).copied().unwrap_or(0)).sum()
    };

    // Each request takes 20 ms: A's start of the wave takes seconds; freeze it after some sends.
    sim.set_faults(dcs_sim::faults::Faults { latency_ms: 20, ..Default::default() });
    let mut frozen = Box::pin(rollout::advance(&client, Some(&op), &db, &id, &a));
    let started = Instant::now();
    tokio::select! {
        r = &mut frozen => panic!("A's wave start ended before it could be frozen: {r:?}"),
        _ = async { while sent() < 20 { tokio::time::sleep(Duration::from_millis(5)).await } } => {}
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    // Frozen past its lease; the requests it had in flight land meanwhile.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let at_freeze = sent();
    assert!(at_freeze < devices.len() as u64, "A sent the whole wave before its freeze");

    // B takes over and finishes the wave's start.
    sim.set_faults(Default::default());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        refresh(&client, &db, scope).await;
        let outcome = rollout::advance(&client, Some(&op), &db, &id, &b).await.unwrap();
        assert!(!matches!(outcome, StepOutcome::Elsewhere { .. }), "B could not take an expired lease");
        let w = &rollout::get(&db, &id).unwrap().waves[0];
        if w.set + w.refused == w.size {
            break;
        }
        assert!(Instant::now() < deadline, "B did not finish the wave: {w:?}");
    }
    let after_b = sent();
    assert_eq!(after_b, devices.len() as u64, "every device once after B");

    // A wakes: its step ends refused, and nothing more reaches the service.
    match frozen.await {
        Err(FleetError::NotDriver(why)) => assert!(why.contains("no longer drives"), "{why}"),
        other => panic!("A's step, woken, should end refused: {other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(sent(), after_b, "A sent targets after it woke");
    let sets = sim.store().target_sets(module_id).unwrap();
    for (d, ..) in &devices {
        let n = sets.get(d).copied().unwrap_or(0) - before.get(d).copied().unwrap_or(0);
        assert_eq!(n, 1, "device {d}: target set {n} times");
    }
    let fences: Vec<i64> = {
        let conn = rusqlite::Connection::open(db.path().expect("a file")).unwrap();
        let mut stmt =
            conn.prepare("SELECT DISTINCT sent_fence FROM rollout_devices WHERE rollout = ?1 ORDER BY 1").unwrap();
        stmt.query_map([&id], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(fences, vec![1, 2], "the sends are recorded with A's and B's fencing numbers");
}

/// An abort from another console ends the lease of whoever drove the rollout: its next step
/// changes nothing and sends nothing.
#[tokio::test]
async fn an_abort_elsewhere_ends_the_drivers_lease() {
    let (sim, running, client) = common::start(SimOptions { devices_per_client: 60, ..Default::default() }).await;
    let (db, scope) = common::fleet_db("abort", running.base_url());
    scan::refresh(&client, &db, scope, ScanKind::Full, &CancellationToken::new(), |_| {}).await.unwrap();
    let (module, version) = pick(&db, scope);
    let module_id: uuid::Uuid = module.parse().unwrap();
    let p = plan(&module, &version, &[10.0, 100.0]);
    let (_, devices) = rollout::preview(&client, &db, scope, &p).await.unwrap();
    let id = rollout::create(&client, &db, scope, &p, &devices).unwrap();
    let op = SetTarget::simulator();
    let runner = Driver::new(DriverKind::Runner);
    rollout::advance(&client, Some(&op), &db, &id, &runner).await.unwrap();
    let fence = rollout::get(&db, &id).unwrap().driver.unwrap().fence;
    rollout::abort(&client, None, &db, &id, false).await.unwrap();
    let view = rollout::get(&db, &id).unwrap();
    assert_eq!(view.state, RolloutState::Aborted);
    let d = view.driver.unwrap();
    assert!(d.expired && d.fence == fence + 1, "{d:?}");
    let sets_before: u64 = sim.store().target_sets(module_id).unwrap().values().sum();
    refresh(&client, &db, scope).await;
    assert_eq!(rollout::advance(&client, Some(&op), &db, &id, &runner).await.unwrap(), StepOutcome::Waiting);
    assert_eq!(sim.store().target_sets(module_id).unwrap().values().sum::<u64>(), sets_before);
}
