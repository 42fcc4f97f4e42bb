//! The fleet database's maintained counts and the device table's windows: the counts equal a
//! recount (GROUP BY) after a full scan, an incremental refresh with changes, vanished states,
//! random writes and deletes, a scope deleted and a database made before them; the windows
//! equal `LIMIT ... OFFSET` in every order and filter at several depths, also after writes.

use std::collections::BTreeMap;

use dcs_api::model::firmware::{FirmwareState, UpdateStatus};
use dcs_api::model::DeviceId;
use dcs_console::fleet::query::{self, DeviceQuery};
use dcs_console::fleet::scan::{self, ScanKind};
use dcs_console::fleet::{FleetDb, Scope, ScopeKey};
use dcs_console::set_target::{self, SetTarget};
use dcs_sim::SimOptions;
use rand::{Rng, SeedableRng};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

mod common;

fn assert_counts_agree(db: &FleetDb, when: &str) {
    let diff = db.counts_differences().unwrap();
    assert!(diff.is_empty(), "{when}: the maintained counts differ from a recount: {diff:#?}");
}

/// The dashboard's aggregates as a plain GROUP BY of the states would give them (independent of
/// the console's own recount): per module, states, drift, failed, and counts per version,
/// status, target and owner.
fn recount(path: &std::path::Path, scope: Scope) -> BTreeMap<String, BTreeMap<String, i64>> {
    let c = rusqlite::Connection::open(path).unwrap();
    let mut out: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    for (what, column) in [
        ("all", "''"),
        ("drift", "CASE WHEN target IS NOT NULL AND current IS NOT target THEN 'yes' ELSE 'no' END"),
        ("version", "COALESCE(current, 'none')"),
        ("status", "COALESCE(status, 'none')"),
        ("target", "COALESCE(target, 'none')"),
        ("owner", "COALESCE(client_id, 'none')"),
    ] {
        let mut stmt = c
            .prepare(&format!("SELECT module_id, {column}, count(*) FROM states WHERE scope = ?1 GROUP BY 1, 2"))
            .unwrap();
        let rows = stmt
            .query_map([scope.0], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))
            .unwrap();
        for row in rows {
            let (m, k, n) = row.unwrap();
            out.entry(m).or_default().insert(format!("{what}:{k}"), n);
        }
    }
    out
}

/// The same figures as the console shows them.
fn shown(db: &FleetDb, scope: Scope) -> BTreeMap<String, BTreeMap<String, i64>> {
    let mut out: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    for m in query::modules(db, scope).unwrap() {
        let o = query::overview(db, scope, &m.module_id, &Default::default()).unwrap();
        let e = out.entry(m.module_id.clone()).or_default();
        e.insert("all:".into(), m.devices as i64);
        if m.drift > 0 {
            e.insert("drift:yes".into(), m.drift as i64);
        }
        if m.devices > m.drift {
            e.insert("drift:no".into(), (m.devices - m.drift) as i64);
        }
        for (what, counts) in
            [("version", &o.by_version), ("status", &o.by_status), ("target", &o.by_target), ("owner", &o.by_customer)]
        {
            for c in counts {
                e.insert(format!("{what}:{}", c.key), c.count as i64);
            }
        }
        assert_eq!(o.module.failed, o.by_status.iter().find(|c| c.key == "FAILED").map_or(0, |c| c.count));
        assert_eq!(o.failures.iter().map(|f| f.count).sum::<u32>(), o.module.failed);
    }
    out
}

fn random_state(rng: &mut impl Rng, modules: &[Uuid], devices: &[Uuid]) -> FirmwareState {
    let pick = |rng: &mut dyn rand::RngCore, options: &[Option<&str>]| {
        options[rng.gen_range(0..options.len())].map(str::to_owned)
    };
    let status =
        pick(rng, &[None, Some("PENDING"), Some("SUCCEEDED"), Some("FAILED"), Some("FAILED"), Some("CANCELLED")]);
    let ts = |ms: i64| time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000).unwrap();
    FirmwareState {
        module_id: modules[rng.gen_range(0..modules.len())],
        device_id: devices[rng.gen_range(0..devices.len())],
        device_specification_id: rng.gen_bool(0.8).then(|| Uuid::from_u128(rng.gen_range(1..3))),
        client_id: rng.gen_bool(0.9).then(|| Uuid::from_u128(rng.gen_range(1..4))),
        project_id: None,
        current_firmware_version: pick(rng, &[None, Some("1.0"), Some("1.1"), Some("none")]),
        target_firmware_version: pick(rng, &[None, Some("1.1"), Some("1.2")]),
        target_firmware_version_modified_at: rng.gen_bool(0.7).then(|| ts(rng.gen_range(0..1_000))),
        firmware_update_status_details: (status.as_deref() == Some("FAILED"))
            .then(|| pick(rng, &[None, Some("battery low"), Some("(no details given)")]))
            .flatten(),
        firmware_update_status: status.as_deref().map(UpdateStatus::from),
        firmware_update_status_modified_at: rng.gen_bool(0.7).then(|| ts(rng.gen_range(0..1_000))),
        extra: Default::default(),
    }
}

#[test]
fn counts_equal_a_recount_after_random_writes_deletes_and_a_scope_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.sqlite");
    let db = FleetDb::open(&path).unwrap();
    let scopes = [
        db.scope(&ScopeKey::new("p", "http://a", None)).unwrap(),
        db.scope(&ScopeKey::new("p", "http://b", None)).unwrap(),
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(1919);
    let modules: Vec<Uuid> = (0..3).map(|_| Uuid::from_u128(rng.gen())).collect();
    let devices: Vec<Uuid> = (0..60).map(|_| Uuid::from_u128(rng.gen())).collect();
    let other = rusqlite::Connection::open(&path).unwrap();
    // The (module, device) keys of a scope's states, of one device or all.
    let keys = |scope: Scope, device: Option<&str>| -> Vec<(Uuid, Uuid)> {
        let mut stmt = other
            .prepare("SELECT module_id, device_id FROM states WHERE scope = ?1 AND device_id = coalesce(?2, device_id)")
            .unwrap();
        let rows = stmt.query_map(rusqlite::params![scope.0, device], |r| {
            Ok((r.get::<_, String>(0)?.parse().unwrap(), r.get::<_, String>(1)?.parse().unwrap()))
        });
        rows.unwrap().map(Result::unwrap).collect()
    };
    for round in 0..40 {
        let scope = scopes[round % 2];
        let page: Vec<FirmwareState> =
            (0..rng.gen_range(1..30)).map(|_| random_state(&mut rng, &modules, &devices)).collect();
        scan::write_page(&db, scope, &page).unwrap();
        if round % 3 == 0 {
            // Deletions as a full scan makes them, of a device that may hold none.
            let d = devices[rng.gen_range(0..devices.len())].to_string();
            let gone = keys(scope, Some(&d));
            assert_eq!(scan::remove_states(&db, scope, &gone).unwrap() as usize, gone.len());
        }
        if round % 7 == 0 {
            // A transaction rolled back leaves the counts as they were.
            other.execute_batch("BEGIN; DELETE FROM states; ROLLBACK;").unwrap();
        }
        assert_counts_agree(&db, &format!("round {round}"));
    }
    for scope in scopes {
        assert_eq!(shown(&db, scope), recount(&path, scope));
        assert_eq!(
            db.scope_info(scope).unwrap().states as i64,
            recount(&path, scope).values().map(|m| m["all:"]).sum::<i64>()
        );
    }
    // A scope's every state removed: its counts go with its states.
    scan::remove_states(&db, scopes[0], &keys(scopes[0], None)).unwrap();
    assert_counts_agree(&db, "a scope deleted");
    assert!(query::modules(&db, scopes[0]).unwrap().is_empty());
    assert_eq!(shown(&db, scopes[1]), recount(&path, scopes[1]));
}

/// A database file of one scope, and random pages of its states (two modules, forty devices).
struct Small {
    path: std::path::PathBuf,
    scope: Scope,
    rng: rand::rngs::StdRng,
    modules: Vec<Uuid>,
    devices: Vec<Uuid>,
}

impl Small {
    fn new(dir: &std::path::Path, seed: u64) -> Small {
        let path = dir.join("fleet.sqlite");
        let scope = FleetDb::open(&path).unwrap().scope(&ScopeKey::new("p", "http://a", None)).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let modules = (0..2).map(|_| Uuid::from_u128(rng.gen())).collect();
        let devices = (0..40).map(|_| Uuid::from_u128(rng.gen())).collect();
        Small { path, scope, rng, modules, devices }
    }

    fn page(&mut self, states: usize) -> Vec<FirmwareState> {
        (0..states).map(|_| random_state(&mut self.rng, &self.modules, &self.devices)).collect()
    }
}

#[test]
fn a_database_made_before_the_counts_gets_them_once_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut small = Small::new(dir.path(), 7);
    let (path, scope) = (small.path.clone(), small.scope);
    scan::write_page(&FleetDb::open(&path).unwrap(), scope, &small.page(80)).unwrap();
    // As a database made before the counts: no table.
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch("DROP TABLE state_counts;").unwrap();
    drop(c);
    let db = FleetDb::open(&path).unwrap();
    assert_counts_agree(&db, "after the migration");
    assert_eq!(shown(&db, scope), recount(&path, scope));
}

#[test]
fn the_triggers_that_kept_the_counts_and_history_before_are_dropped_on_open_and_their_counts_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut small = Small::new(dir.path(), 11);
    let (path, scope) = (small.path.clone(), small.scope);
    scan::write_page(&FleetDb::open(&path).unwrap(), scope, &small.page(60)).unwrap();
    // An earlier console's triggers (here ones that would count every write twice, and keep no
    // history).
    let c = rusqlite::Connection::open(&path).unwrap();
    for (name, event, row) in [
        ("state_counts_insert", "INSERT", "new"),
        ("state_counts_update", "UPDATE", "new"),
        ("state_counts_delete", "DELETE", "old"),
        ("state_history_update", "UPDATE", "new"),
        ("state_history_delete", "DELETE", "old"),
    ] {
        c.execute_batch(&format!(
            "CREATE TRIGGER {name} AFTER {event} ON states BEGIN
                 UPDATE state_counts SET n = n + 1 WHERE scope = {row}.scope AND module_id = {row}.module_id;
             END;"
        ))
        .unwrap();
    }
    drop(c);
    let db = FleetDb::open(&path).unwrap();
    let left: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'states'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(left, 0, "a trigger on the states is left");
    assert_counts_agree(&db, "on open");
    scan::write_page(&db, scope, &small.page(60)).unwrap();
    assert_counts_agree(&db, "after writes");
    assert_eq!(shown(&db, scope), recount(&path, scope));
}

#[test]
fn a_first_scan_that_never_ended_leaves_the_counts_recounted_on_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut small = Small::new(dir.path(), 12);
    let (path, scope, page) = (small.path.clone(), small.scope, small.page(60));
    // What a first scan leaves if it is killed after some pages: states inserted uncounted, and
    // the mark that says so.
    {
        let db = FleetDb::open(&path).unwrap();
        scan::write_page(&db, scope, &page).unwrap();
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("DELETE FROM state_counts; INSERT INTO settings (key, value) VALUES ('counts.recount', 'a first scan');")
            .unwrap();
        assert!(!db.counts_differences().unwrap().is_empty(), "the counts were not made wrong");
    }
    let db = FleetDb::open(&path).unwrap();
    assert_counts_agree(&db, "on the next open");
    assert_eq!(shown(&db, scope), recount(&path, scope));
    assert_eq!(db.setting("counts.recount").unwrap(), None, "the mark is cleared");
}

/// Every order the table offers, both ways.
fn sorts() -> Vec<Option<String>> {
    let mut out = vec![None];
    for (name, _) in query::SORT_COLUMNS {
        out.push(Some(name.to_string()));
        out.push(Some(format!("-{name}")));
    }
    out
}

fn assert_windows_equal_offsets(db: &FleetDb, scope: Scope, queries: &[DeviceQuery], when: &str) {
    for base in queries {
        for sort in sorts() {
            let q = DeviceQuery { sort: sort.clone(), ..base.clone() };
            let total = query::rows_by_offset(db, scope, &q, None, 0, 5000).unwrap().len() as u32;
            assert_eq!(query::count(db, scope, &q, None).unwrap(), total, "{when}: count of {q:?}");
            for offset in [0, 33, total / 2, total.saturating_sub(7), total + 5] {
                for limit in [7, 100] {
                    let window = query::rows(db, scope, &q, None, offset, limit).unwrap();
                    let plain = query::rows_by_offset(db, scope, &q, None, offset, limit).unwrap();
                    assert_eq!(window, plain, "{when}: {q:?} at {offset}, {limit}");
                }
            }
        }
    }
}

/// A fleet database in memory holding `states` random states (some the same device and module
/// twice, written as one) of `devices` devices and four modules, in one scope; the random source
/// goes on for the test's later writes.
fn random_fleet(
    seed: u64,
    devices: usize,
    states: usize,
) -> (FleetDb, Scope, rand::rngs::StdRng, Vec<Uuid>, Vec<Uuid>) {
    let db = FleetDb::in_memory().unwrap();
    let scope = db.scope(&ScopeKey::new("p", "http://a", None)).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let modules: Vec<Uuid> = (0..4).map(|_| Uuid::from_u128(rng.gen())).collect();
    let devices: Vec<Uuid> = (0..devices).map(|_| Uuid::from_u128(rng.gen())).collect();
    let page: Vec<FirmwareState> = (0..states).map(|_| random_state(&mut rng, &modules, &devices)).collect();
    scan::write_page(&db, scope, &page).unwrap();
    (db, scope, rng, modules, devices)
}

#[test]
fn windows_equal_limit_offset_in_every_order_and_filter_also_after_writes() {
    let (db, scope, mut rng, modules, devices) = random_fleet(4242, 250, 600);
    let m0 = modules[0].to_string();
    let queries = vec![
        DeviceQuery::default(),
        DeviceQuery { module_id: Some(m0.clone()), ..Default::default() },
        DeviceQuery { status: Some("FAILED".into()), ..Default::default() },
        DeviceQuery { status: Some("none".into()), module_id: Some(m0.clone()), ..Default::default() },
        DeviceQuery { version: Some("1.1".into()), target: Some("1.2".into()), ..Default::default() },
        DeviceQuery { client_id: Some(Uuid::from_u128(2).to_string()), ..Default::default() },
        DeviceQuery { drift: true, ..Default::default() },
    ];
    assert_windows_equal_offsets(&db, scope, &queries, "first");
    // Writes move rows between positions: the positions kept are dropped.
    let page: Vec<FirmwareState> = (0..200).map(|_| random_state(&mut rng, &modules, &devices)).collect();
    scan::write_page(&db, scope, &page).unwrap();
    assert_windows_equal_offsets(&db, scope, &queries[..3], "after writes");
    // Modules of one name sort together (by device then module).
    let q = DeviceQuery { sort: Some("module".into()), ..Default::default() };
    let rows = query::rows(&db, scope, &q, None, 0, 5000).unwrap();
    assert_eq!(rows, query::rows_by_offset(&db, scope, &q, None, 0, 5000).unwrap());
}

/// After a window of the table, its order is walked on to the end in the background, so a jump
/// to its last rows walks nothing; a walk ahead stops, without walking, once the data changed.
#[test]
fn after_a_window_the_order_is_walked_ahead_and_a_walk_ahead_stops_when_the_data_change() {
    let (db, scope, mut rng, modules, devices) = random_fleet(1921, 1500, 4000);
    let db = std::sync::Arc::new(db);
    let fleet =
        dcs_console::fleet::service::FleetService::new(db.clone(), dcs_console::fleet::rollout::DriverKind::App);
    let all = DeviceQuery { sort: Some("statusAt".into()), ..Default::default() };
    let total = query::rows_by_offset(&db, scope, &all, None, 0, 5000).unwrap().len() as u32;
    assert!(total > 2500, "{total}");
    assert_eq!(
        fleet.rows(scope, &all, None, 0, 100).unwrap(),
        query::rows_by_offset(&db, scope, &all, None, 0, 100).unwrap()
    );
    let started = std::time::Instant::now();
    while db.positions_walked() < u64::from(total) {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "walked {} of {total}", db.positions_walked());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let before = db.positions_walked();
    let last = query::rows(&db, scope, &all, None, total - 40, 40).unwrap();
    assert_eq!(last, query::rows_by_offset(&db, scope, &all, None, total - 40, 40).unwrap());
    assert_eq!(db.positions_walked(), before, "the last rows walked again");

    // A step at a time, then a write: the walk stops there and walks no more.
    let q = DeviceQuery { sort: Some("version".into()), ..Default::default() };
    let mut since = None;
    assert!(query::walk_on(&db, scope, &q, None, 0, &mut since).unwrap(), "rows are left past the top");
    let at = db.positions_walked();
    assert!(query::walk_on(&db, scope, &q, None, 500, &mut since).unwrap());
    let step = db.positions_walked() - at;
    assert!((500..=500 + 64).contains(&step), "{step}");
    let page: Vec<FirmwareState> = (0..10).map(|_| random_state(&mut rng, &modules, &devices)).collect();
    scan::write_page(&db, scope, &page).unwrap();
    let at = db.positions_walked();
    assert!(!query::walk_on(&db, scope, &q, None, 500, &mut since).unwrap(), "went on after a write");
    assert!(db.positions_walked() - at <= 1, "walked {} after a write", db.positions_walked() - at);
    // To the end, a step at a time: then no rows are left.
    let mut since = None;
    while query::walk_on(&db, scope, &q, None, 700, &mut since).unwrap() {}
    assert_eq!(
        query::count(&db, scope, &q, None).unwrap(),
        query::rows_by_offset(&db, scope, &q, None, 0, 5000).unwrap().len() as u32
    );
}

#[test]
fn windows_walk_no_deeper_than_asked_and_stay_equal_to_limit_offset_in_any_order_of_depths() {
    let (db, scope, mut rng, modules, devices) = random_fleet(1919, 1500, 4000);
    let all = DeviceQuery { sort: Some("statusAt".into()), ..Default::default() };
    let total = query::count(&db, scope, &all, None).unwrap();
    assert!(total > 2500, "{total}");
    assert_eq!(db.positions_walked(), 0, "a count of the maintained counts walks nothing");

    // The top of an order (a new one, or the same after the data changed) walks one row.
    let top = query::rows(&db, scope, &all, None, 0, 100).unwrap();
    assert_eq!(top, query::rows_by_offset(&db, scope, &all, None, 0, 100).unwrap());
    assert_eq!(db.positions_walked(), 1);
    // A window further down walks as far as it, once; the next ones near it walk no more.
    let walked = |f: &dyn Fn()| {
        let before = db.positions_walked();
        f();
        db.positions_walked() - before
    };
    // A window of no rows is empty at any depth, and walks nothing to get there.
    assert_eq!(walked(&|| assert!(query::rows(&db, scope, &all, None, 2400, 0).unwrap().is_empty())), 0);
    let at_1000 = walked(&|| drop(query::rows(&db, scope, &all, None, 1000, 100).unwrap()));
    assert!((1000 - 64..1000 + 64).contains(&at_1000), "{at_1000}");
    assert_eq!(walked(&|| drop(query::rows(&db, scope, &all, None, 900, 100).unwrap())), 0);
    assert_eq!(walked(&|| drop(query::rows(&db, scope, &all, None, 1010, 100).unwrap())), 0);
    let on = walked(&|| drop(query::rows(&db, scope, &all, None, 2000, 100).unwrap()));
    assert!((1000 - 64..1000 + 64).contains(&on), "on from the last position, not from the top: {on}");
    // A write drops the positions: the top again walks one row.
    let changed: Vec<FirmwareState> = (0..10).map(|_| random_state(&mut rng, &modules, &devices)).collect();
    scan::write_page(&db, scope, &changed).unwrap();
    assert_eq!(walked(&|| drop(query::rows(&db, scope, &all, None, 0, 100).unwrap())), 1);

    // Positions a few rows apart, thinned when more than 8 (every 2, 4, 8 ... rows), asked for
    // in an order of depths that jumps back and forth, in every order and some filters.
    let (db, scope, mut rng, modules, devices) = random_fleet(1920, 300, 500);
    db.set_positions_spacing(2, 8);
    let m0 = modules[0].to_string();
    let filters = [
        DeviceQuery::default(),
        DeviceQuery { status: Some("FAILED".into()), ..Default::default() },
        DeviceQuery { module_id: Some(m0.clone()), ..Default::default() },
        DeviceQuery { drift: true, ..Default::default() },
    ];
    for round in ["first", "after writes"] {
        for base in &filters {
            for sort in sorts() {
                let q = DeviceQuery { sort: sort.clone(), ..base.clone() };
                let n = query::rows_by_offset(&db, scope, &q, None, 0, 5000).unwrap().len() as u32;
                for offset in [n / 2, 3, n.saturating_sub(2), 0, n + 3, n / 3, 17, n.saturating_sub(40), n] {
                    let window = query::rows(&db, scope, &q, None, offset, 30).unwrap();
                    let plain = query::rows_by_offset(&db, scope, &q, None, offset, 30).unwrap();
                    assert_eq!(window, plain, "{round}: {q:?} at {offset} of {n}");
                }
                assert_eq!(query::count(&db, scope, &q, None).unwrap(), n, "{round}: count of {q:?}");
            }
        }
        let page: Vec<FirmwareState> = (0..100).map(|_| random_state(&mut rng, &modules, &devices)).collect();
        scan::write_page(&db, scope, &page).unwrap();
    }
}

#[tokio::test]
async fn counts_equal_a_recount_after_a_scan_a_refresh_with_changes_and_vanished_states() {
    let (sim, running, client) =
        common::start(SimOptions { devices_per_client: 150, speed: 1.0, ..Default::default() }).await;
    let _ = &sim;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.sqlite");
    let db = FleetDb::open(&path).unwrap();
    let scope = db.scope(&ScopeKey::new("sim", &running.base_url(), None)).unwrap();
    let cancel = CancellationToken::new();
    let refresh = |kind| scan::refresh(&client, &db, scope, kind, &cancel, |_| {});
    refresh(ScanKind::Full).await.unwrap();
    assert_counts_agree(&db, "a full scan");
    assert_eq!(shown(&db, scope), recount(&path, scope));
    // Targets set: the refresh writes the changed states.
    let modules = query::modules(&db, scope).unwrap();
    let module = &modules[0];
    let version = query::packages(&db, scope, &module.module_id).unwrap()[0].version.clone();
    let q = DeviceQuery { module_id: Some(module.module_id.clone()), ..Default::default() };
    for row in query::rows(&db, scope, &q, None, 0, 5).unwrap() {
        let device: Uuid = row.device_id.parse().unwrap();
        set_target::send(
            &client,
            &SetTarget::simulator(),
            &DeviceId::Uuid(device),
            module.module_id.parse().unwrap(),
            Some(&version),
            None,
        )
        .await
        .unwrap();
    }
    let inc = refresh(ScanKind::Incremental).await.unwrap();
    assert!(inc.changed >= 5, "{inc:?}");
    assert_counts_agree(&db, "an incremental refresh");
    assert_eq!(shown(&db, scope), recount(&path, scope));
    // States the service no longer has are forgotten by the next full scan.
    let gone: Vec<FirmwareState> = common::all_states(&client)
        .await
        .into_iter()
        .take(3)
        .map(|s| FirmwareState { device_id: Uuid::new_v4(), ..s })
        .collect();
    scan::write_page(&db, scope, &gone).unwrap();
    assert_eq!(refresh(ScanKind::Full).await.unwrap().removed, 3);
    assert_counts_agree(&db, "vanished states forgotten");
    assert_eq!(shown(&db, scope), recount(&path, scope));
}
