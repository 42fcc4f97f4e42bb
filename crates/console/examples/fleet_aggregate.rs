//! Benchmark driver (bench/fleet.sh): times the dashboard's aggregates over a scanned fleet
//! database, as the app and `dcs fleet` compute them: `query::modules` (every module's devices,
//! drift, failures, updates and most run version) and `query::overview` of the module with the
//! most devices (by version, status, target, owner, failures, packages).
//!
//! Usage: fleet_aggregate <fleet.sqlite> <profile> <base-url> [repetitions]
//! Prints one JSON object: the median and minimum times in ms, and the figures the benchmark
//! compares with its own aggregation of the same states.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use dcs_console::fleet::query;
use dcs_console::fleet::{FleetDb, ScopeKey};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: fleet_aggregate <fleet.sqlite> <profile> <base-url> [repetitions]");
        std::process::exit(2);
    }
    let reps: usize = args.get(4).and_then(|r| r.parse().ok()).unwrap_or(5).max(1);
    let db = FleetDb::open(Path::new(&args[1])).expect("the fleet database opens");
    let scope =
        db.scope(&ScopeKey { profile: args[2].clone(), base_url: args[3].clone(), customer: None }).expect("the scope");
    let states = db.scope_info(scope).expect("scope info").states;
    assert!(states > 0, "the scope holds no states: scan it first (same profile name and base URL)");

    let mut modules_ms = Vec::new();
    let mut overview_ms = Vec::new();
    let mut last = None;
    for _ in 0..reps {
        let t = Instant::now();
        let modules = query::modules(&db, scope).expect("modules");
        modules_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        let biggest =
            modules.iter().max_by_key(|m| (m.devices, m.module_id.clone())).expect("a module").module_id.clone();
        let t = Instant::now();
        let overview = query::overview(&db, scope, &biggest, &Default::default()).expect("overview");
        overview_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        last = Some((modules, overview));
    }
    let (modules, overview) = last.expect("at least one repetition");
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
        v[v.len() / 2]
    };
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let by = |counts: &[query::Count]| counts.iter().map(|c| (c.key.clone(), c.count)).collect::<BTreeMap<_, _>>();
    let out = serde_json::json!({
        "states": states,
        "repetitions": reps,
        "modulesMs": median(&mut modules_ms.clone()),
        "modulesMinMs": min(&modules_ms),
        "overviewMs": median(&mut overview_ms.clone()),
        "overviewMinMs": min(&overview_ms),
        "modules": modules.iter().map(|m| (m.module_id.clone(), serde_json::json!({
            "devices": m.devices, "drift": m.drift, "failed": m.failed, "updating": m.updating,
            "topVersion": m.top_version, "topVersionDevices": m.top_version_devices,
        }))).collect::<BTreeMap<_, _>>(),
        "biggest": overview.module.module_id,
        "byVersion": by(&overview.by_version),
        "byStatus": by(&overview.by_status),
        "byTarget": by(&overview.by_target),
        "byCustomer": by(&overview.by_customer),
        "failureGroups": overview.failures.len(),
    });
    println!("{out}");
}
