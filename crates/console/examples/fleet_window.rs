//! Benchmark driver (bench/fleet-window.sh): the dashboard's aggregates and windows of the
//! device table at depth, over a fleet database of a million states.
//!
//! The states are synthesised (no simulator: seeding one with a million states takes minutes)
//! and written through the console's own write path, `scan::write_page`, 1,000 a transaction as
//! a scan writes them, so the maintained counts and every index are paid for as in a scan; the
//! write rate is printed. A database that already holds the asked number of states in the
//! benchmark's scope is reused.
//!
//! Usage: fleet_window <fleet.sqlite> [states, default 1000000] [repetitions, default 3]
//! Prints one JSON line per figure, then a summary line.

use std::path::Path;
use std::time::Instant;

use dcs_api::model::firmware::{FirmwareState, UpdateStatus};
use dcs_console::fleet::query::{self, DeviceQuery};
use dcs_console::fleet::{scan, FleetDb, Scope, ScopeKey};
use rand::{Rng, SeedableRng};
use uuid::Uuid;

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim().to_owned()
}

/// A plausible fleet: devices with one to three of 12 modules (sizes skewed), five versions a
/// module, a third of the states with a target, a tenth of those failed for one of six reasons,
/// 50 owners, 4 specifications, times spread over 30 days.
pub fn synthesise(db: &FleetDb, scope: Scope, states: u32) -> f64 {
    let mut rng = rand::rngs::StdRng::seed_from_u64(19);
    let modules: Vec<Uuid> = (0..12).map(|_| Uuid::from_u128(rng.gen())).collect();
    let specs: Vec<Uuid> = (0..4).map(|_| Uuid::from_u128(rng.gen())).collect();
    let clients: Vec<Uuid> = (0..50).map(|_| Uuid::from_u128(rng.gen())).collect();
    let reasons =
        ["checksum mismatch", "battery low", "download timed out", "flash write failed", "rejected", "reboot loop"];
    let statuses = [
        "PENDING",
        "DOWNLOADING",
        "INSTALLING",
        "SUCCEEDED",
        "SUCCEEDED",
        "SUCCEEDED",
        "SUCCEEDED",
        "FAILED",
        "CANCELLED",
    ];
    let t0: i64 = 1_780_000_000_000;
    let ts = |ms: i64| time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000).unwrap();
    let mut page = Vec::with_capacity(1000);
    let mut written = 0u32;
    let start = Instant::now();
    // Devices in increasing order of id, as the service lists states (by device, then module)
    // and a full scan writes them.
    let mut device_no: u128 = 0;
    while written < states {
        device_no += 1;
        let device = Uuid::from_u128((device_no << 64) | rng.gen::<u64>() as u128);
        let spec = specs[rng.gen_range(0..specs.len())];
        let client = clients[(rng.gen_range(0..50u32 * 50) as f64).sqrt() as usize];
        // One to three modules a device, the first of modules 0-5 (sizes skewed), the rest of 6-11.
        let mut ms = vec![(rng.gen_range(0..36u32) as f64).sqrt() as usize];
        for _ in 0..rng.gen_range(0..=2) {
            let m = rng.gen_range(6..12);
            if !ms.contains(&m) {
                ms.push(m);
            }
        }
        ms.sort_by_key(|m| modules[*m]);
        for m in ms {
            let current = format!("1.{}.0", rng.gen_range(0..5));
            let targeted = rng.gen_bool(0.33);
            let status = targeted.then(|| statuses[rng.gen_range(0..statuses.len())]);
            page.push(FirmwareState {
                module_id: modules[m],
                device_id: device,
                device_specification_id: Some(spec),
                client_id: Some(client),
                project_id: None,
                current_firmware_version: rng.gen_bool(0.98).then_some(current),
                target_firmware_version: targeted.then(|| format!("1.{}.0", rng.gen_range(3..6))),
                target_firmware_version_modified_at: targeted.then(|| ts(t0 + rng.gen_range(0..2_592_000_000))),
                firmware_update_status: status.map(UpdateStatus::from),
                firmware_update_status_details: (status == Some("FAILED"))
                    .then(|| reasons[rng.gen_range(0..reasons.len())].to_owned()),
                firmware_update_status_modified_at: targeted.then(|| ts(t0 + rng.gen_range(0..2_592_000_000))),
                extra: Default::default(),
            });
            written += 1;
            if page.len() == 1000 || written == states {
                scan::write_page(db, scope, &page).expect("write");
                page.clear();
            }
            if written == states {
                break;
            }
        }
    }
    start.elapsed().as_secs_f64()
}

/// The write path's cost of the table's indexes: the same states written into a fresh database
/// as it is, and into one without them (dropped through SQLite; WRITE_COST_DROP=indexes:a,b for
/// only some). The counts and the history are kept by the writer itself (states.rs), so they are
/// in both.
fn write_cost(dir: &Path, states: u32) {
    let mut out = serde_json::Map::new();
    for without in [false, true] {
        let path = dir.join(format!("write-cost-{without}.sqlite"));
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
        }
        let db = FleetDb::open(&path).expect("open");
        if without {
            let c = rusqlite::Connection::open(&path).expect("open");
            let only = std::env::var("WRITE_COST_DROP").unwrap_or_default();
            if let Some(list) = only.strip_prefix("indexes:") {
                for index in list.split(',') {
                    c.execute_batch(&format!("DROP INDEX IF EXISTS {index}")).expect("drop");
                }
            } else {
                // The sort indexes exist only once an order asked for them: none after a write.
                c.execute_batch(
                    "DROP INDEX IF EXISTS states_by_current; DROP INDEX IF EXISTS states_by_target;
                     DROP INDEX IF EXISTS states_by_status; DROP INDEX IF EXISTS states_by_status_at;
                     DROP INDEX IF EXISTS states_by_target_at; DROP INDEX states_failed;",
                )
                .expect("drop");
            }
        }
        let scope = db.scope(&ScopeKey::new("bench", "synthetic", None)).expect("scope");
        let s = synthesise(&db, scope, states);
        out.insert(
            if without { "withoutIndexes" } else { "asIs" }.into(),
            serde_json::json!({"seconds": s, "statesPerSecond": states as f64 / s, "loadavg": loadavg()}),
        );
    }
    println!("{}", serde_json::Value::Object(out));
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 && args[1] == "--write-cost" {
        return write_cost(Path::new(&args[2]), args[3].parse().expect("a number of states"));
    }
    if args.len() < 2 {
        eprintln!("usage: fleet_window <fleet.sqlite> [states] [repetitions]");
        std::process::exit(2);
    }
    let want: u32 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let reps: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(3).max(1);
    let t = Instant::now();
    let db = std::sync::Arc::new(FleetDb::open(Path::new(&args[1])).expect("the fleet database opens"));
    let open_ms = ms(t);
    let scope = db.scope(&ScopeKey::new("bench", "synthetic", None)).expect("scope");
    let held = db.scope_info(scope).expect("info").states;
    if held == 0 {
        let s = synthesise(&db, scope, want);
        println!(
            "{}",
            serde_json::json!({"synthesised": want, "seconds": s, "statesPerSecond": want as f64 / s, "loadavg": loadavg()})
        );
    } else if held != want {
        eprintln!("{} holds {held} states, not {want}: give another file", args[1]);
        std::process::exit(2);
    }
    println!("{}", serde_json::json!({"openMs": open_ms, "loadavg": loadavg()}));

    // The dashboard's aggregates.
    let (mut mods, mut over) = (Vec::new(), Vec::new());
    for _ in 0..reps.max(5) {
        let t = Instant::now();
        let modules = query::modules(&db, scope).expect("modules");
        mods.push(ms(t));
        let biggest = modules.iter().max_by_key(|m| m.devices).unwrap().module_id.clone();
        let t = Instant::now();
        query::overview(&db, scope, &biggest, &Default::default()).expect("overview");
        over.push(ms(t));
    }
    let (m, o) = (median(mods), median(over));
    println!(
        "{}",
        serde_json::json!({"aggregates": "modules + biggest overview", "states": want, "modulesMs": m, "overviewMs": o,
                           "totalMs": m + o, "loadavg": loadavg()})
    );

    // Windows of 100 rows at depth, each order, with and without filters.
    let biggest = query::modules(&db, scope).unwrap().into_iter().max_by_key(|m| m.devices).unwrap().module_id;
    let filters: Vec<(&str, DeviceQuery)> = vec![
        ("none", DeviceQuery::default()),
        ("status=SUCCEEDED", DeviceQuery { status: Some("SUCCEEDED".into()), ..Default::default() }),
        ("module=biggest", DeviceQuery { module_id: Some(biggest), ..Default::default() }),
    ];
    let sorts = [
        "",
        "device",
        "-device",
        "module",
        "-module",
        "version",
        "-version",
        "target",
        "-target",
        "status",
        "-status",
        "statusAt",
        "-statusAt",
        "targetAt",
        "-targetAt",
    ];
    let mut worst_next: f64 = 0.0;
    let mut worst_first: f64 = 0.0;
    for (fname, f) in &filters {
        let total = query::count(&db, scope, f, None).unwrap();
        for sort in sorts {
            let q = DeviceQuery { sort: (!sort.is_empty()).then(|| sort.to_owned()), ..f.clone() };
            // The top first (a new order), then a jump to the deepest (a walk from the top), then between.
            for offset in [0u32, 900_000, 100_000, 500_000] {
                let offset = offset.min(total.saturating_sub(100 * (reps as u32 + 1)));
                let walked = db.positions_walked();
                let t = Instant::now();
                let first = query::rows(&db, scope, &q, None, offset, 100).unwrap();
                let first_ms = ms(t);
                let walked = db.positions_walked() - walked;
                let mut next = Vec::new();
                for r in 0..reps {
                    let t = Instant::now();
                    query::rows(&db, scope, &q, None, offset + 100 * (r as u32 + 1), 100).unwrap();
                    next.push(ms(t));
                }
                let next_ms = median(next);
                let t = Instant::now();
                let plain = query::rows_by_offset(&db, scope, &q, None, offset, 100).unwrap();
                let plain_ms = ms(t);
                assert_eq!(first, plain, "window and OFFSET differ: {fname} {sort} {offset}");
                worst_first = worst_first.max(first_ms);
                worst_next = worst_next.max(next_ms);
                println!(
                    "{}",
                    serde_json::json!({"filter": fname, "matching": total, "sort": sort, "offset": offset,
                        "firstMs": first_ms, "walked": walked, "nextMs": next_ms, "offsetMs": plain_ms,
                        "ratio": plain_ms / next_ms, "loadavg": loadavg()})
                );
            }
        }
    }
    // A deep window again after a refresh's bookkeeping (here a history snapshot: what an idle
    // refresh writes besides its times): its positions are kept (the first jump's walk above is
    // what it cost when any write dropped them).
    let q = DeviceQuery::default();
    let deep = 900_000u32.min(query::count(&db, scope, &q, None).unwrap().saturating_sub(100));
    query::rows(&db, scope, &q, None, deep, 100).unwrap();
    let later = std::time::SystemTime::UNIX_EPOCH.elapsed().unwrap().as_millis() as i64 + query::SNAPSHOT_HEARTBEAT_MS;
    query::snapshot(&db, scope, later).unwrap();
    let (walked, t) = (db.positions_walked(), Instant::now());
    let rows = query::rows(&db, scope, &q, None, deep, 100).unwrap();
    let window_ms = ms(t);
    assert_eq!(rows, query::rows_by_offset(&db, scope, &q, None, deep, 100).unwrap(), "after a snapshot");
    println!(
        "{}",
        serde_json::json!({"windowAfter": "a history snapshot", "offset": deep, "ms": window_ms,
                           "walked": db.positions_walked() - walked, "loadavg": loadavg()})
    );
    // A first jump deep into a new order as the app makes it (FleetService::rows): the top
    // first, which starts the walk ahead in the background; once it is done, the jump.
    let fleet =
        dcs_console::fleet::service::FleetService::new(db.clone(), dcs_console::fleet::rollout::DriverKind::App);
    let mut worst_jump: f64 = 0.0;
    for sort in ["", "statusAt", "-version"] {
        db.set_positions_spacing(32, 4096);
        let q = DeviceQuery { sort: (!sort.is_empty()).then(|| sort.to_owned()), ..Default::default() };
        let t = Instant::now();
        fleet.rows(scope, &q, None, 0, 100).unwrap();
        let top_ms = ms(t);
        while query::walk_on(&db, scope, &q, None, 0, &mut None).unwrap() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let ahead_ms = ms(t);
        let (walked, t) = (db.positions_walked(), Instant::now());
        let rows = fleet.rows(scope, &q, None, deep, 100).unwrap();
        let jump_ms = ms(t);
        assert_eq!(rows, query::rows_by_offset(&db, scope, &q, None, deep, 100).unwrap(), "after the walk ahead");
        worst_jump = worst_jump.max(jump_ms);
        println!(
            "{}",
            serde_json::json!({"jumpAfterWalkAhead": sort, "offset": deep, "topMs": top_ms, "walkAheadDoneMs": ahead_ms,
                               "ms": jump_ms, "walked": db.positions_walked() - walked, "loadavg": loadavg()})
        );
    }
    println!(
        "{}",
        serde_json::json!({"summary": true, "states": want, "aggregatesMs": m + o, "worstFirstWindowMs": worst_first,
                           "worstNextWindowMs": worst_next, "worstJumpAfterWalkAheadMs": worst_jump, "loadavg": loadavg()})
    );
}
