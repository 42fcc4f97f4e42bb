//! The fleet service tells of its changes instead of being asked: a scan registered by `start`
//! shows in the status before anything runs, and every step of it (start, pages, end) and
//! every operator action is signalled on `changes()`.

use std::sync::Arc;
use std::time::Duration;

use dcs_console::fleet::scan::ScanKind;
use dcs_console::fleet::service::FleetService;
use dcs_console::fleet::FleetError;
use dcs_sim::SimOptions;

mod common;

#[tokio::test]
async fn a_started_scan_shows_at_once_and_every_change_is_signalled() {
    let (_sim, running, client) = common::start(SimOptions { devices_per_client: 400, ..Default::default() }).await;
    let (db, scope) = common::fleet_db("sim", running.base_url());
    let service = Arc::new(FleetService::new(Arc::new(db), dcs_console::fleet::rollout::DriverKind::App));
    let mut changes = service.changes();
    let seen = *changes.borrow_and_update();

    // Registered before it runs: the status shows it, a second one is refused, and it was signalled.
    let begun = service.start(scope, ScanKind::Full).await.unwrap();
    assert!(service.status(scope).unwrap().scanning.is_some());
    assert!(changes.has_changed().unwrap());
    let refused = service.start(scope, ScanKind::Full).await.err().expect("a second scan is refused");
    assert!(matches!(refused, FleetError::Conflict(_)), "{refused:?}");
    assert!(service.refresh(&client, None, scope, ScanKind::Full, false).await.unwrap().is_none());

    // Every page and the end are signalled while it runs.
    let counter = {
        let mut rx = service.changes();
        tokio::spawn(async move {
            let mut n = 0u32;
            while tokio::time::timeout(Duration::from_secs(2), rx.changed()).await.is_ok_and(|r| r.is_ok()) {
                n += 1;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            n
        })
    };
    let report = service.run(begun, &client, None).await.unwrap();
    assert!(report.pages > 1);
    let status = service.status(scope).unwrap();
    assert!(status.scanning.is_none() && status.last.is_some());
    assert!(*changes.borrow_and_update() > seen);
    assert!(counter.await.unwrap() >= 1);

    // An operator's change is signalled too; nothing is while nothing changes.
    assert!(!changes.has_changed().unwrap());
    service.set_refresh(30, false).unwrap();
    assert!(changes.has_changed().unwrap());
    changes.borrow_and_update();
    assert!(service.due(scope).unwrap().is_none());
    assert!(!changes.has_changed().unwrap());
}
