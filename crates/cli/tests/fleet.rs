//! `dcs fleet` and `dcs rollout` run as a user runs them against `dcs sim` in a child process,
//! each test with its own fleet database (DCS_DATA_DIR), checked against the service's own answers.

mod common;

use std::process::{Command, Output};

use common::{alt, bare, dcs, run_config, s, stderr, Sim};
use serde_json::Value;

struct Env {
    sim: Sim,
    secret: String,
    data: tempfile::TempDir,
    /// A config file with profile `sim` for the simulator, its set-target operation included.
    config: std::path::PathBuf,
}

impl Env {
    /// `dcs sim` with `devices` devices per client, its simulated devices `speed` times as fast
    /// as real time, and an empty data folder for the fleet database.
    fn start(seed: u64, devices: u32, speed: f64) -> Env {
        let sim = Sim::start(
            &run_config(),
            &["--seed", &seed.to_string(), "--devices-per-client", &devices.to_string(), "--speed", &speed.to_string()],
        );
        let key = dcs().args(["sim", "demo-key", "--seed", &seed.to_string(), "--json"]).output().unwrap();
        let key: Value = serde_json::from_slice(&key.stdout).unwrap();
        let data = tempfile::tempdir().unwrap();
        let config = data.path().join("config.toml");
        let added = bare(&config)
            .args(["profile", "add", "sim", "--no-secret", "--base-url", &sim.url, "--client-id", "sim-reseller"])
            .args(common::sim_set_target())
            .output()
            .unwrap();
        assert!(added.status.success(), "{}", stderr(&added));
        Env { sim, secret: s(&key["clientSecret"]).to_owned(), data, config }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = bare(&self.config);
        c.args(["--profile", "sim"])
            .args(args)
            .env("DCS_CLIENT_SECRET", &self.secret)
            .env("DCS_DATA_DIR", self.data.path());
        c
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd(args).arg("--json").output().unwrap();
        assert!(out.status.success(), "dcs {args:?}: {}", stderr(&out));
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("dcs {args:?}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// The module with the most devices, and the packaged version (with a file) fewest of them run.
    fn pick(&self) -> (String, String) {
        let modules = self.json(&["fleet", "modules"]);
        let m = modules.as_array().unwrap().iter().max_by_key(|m| m["devices"].as_u64().unwrap()).unwrap();
        let id = s(&m["moduleId"]).to_owned();
        let o = self.json(&["fleet", "overview", &id]);
        let running = |v: &str| {
            o["byVersion"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["key"] == v)
                .map(|c| c["count"].as_u64().unwrap())
                .unwrap_or(0)
        };
        let version = o["packages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["hasFile"] == true)
            .min_by_key(|p| running(s(&p["version"])))
            .map(|p| s(&p["version"]).to_owned())
            .expect("a package with a file");
        (id, version)
    }
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_scan_holds_what_the_service_lists_and_the_table_filters_and_exports() {
    let env = Env::start(31, 40, 1.0);
    let service = env.json(&["firmware", "states", "list", "--all", "--limit", "1000"]);
    let service = service.as_array().unwrap();

    let report = env.json(&["fleet", "scan", "--full"]);
    assert_eq!(report["kind"], "full");
    assert_eq!(n(&report["states"]) as usize, service.len());
    assert_eq!(n(&report["removed"]), 0);
    assert!(report["watermark"].is_string(), "{report}");
    // The fleet database is the app's file in the data folder.
    assert!(env.data.path().join("fleet.sqlite").is_file());

    // The modules count every state once; their failures are the service's.
    let modules = env.json(&["fleet", "modules"]);
    let modules = modules.as_array().unwrap();
    assert_eq!(modules.iter().map(|m| n(&m["devices"])).sum::<u64>() as usize, service.len());
    let m = modules.iter().max_by_key(|m| n(&m["failed"])).unwrap();
    let module = s(&m["moduleId"]);
    let failed_by_service =
        service.iter().filter(|x| x["moduleId"] == m["moduleId"] && x["firmwareUpdateStatus"] == "FAILED").count();
    assert!(failed_by_service > 0, "the demo data has failures");
    assert_eq!(n(&m["failed"]) as usize, failed_by_service);

    // The device table with a filter (status in any case), as JSON and as text.
    let table = env.json(&["fleet", "devices", "--module", module, "--status", "failed"]);
    assert_eq!(n(&table["total"]) as usize, failed_by_service);
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), failed_by_service);
    assert!(rows.iter().all(|r| r["status"] == "FAILED" && r["moduleId"] == m["moduleId"]));
    let text = env.run(&["fleet", "devices", "--module", module, "--status", "FAILED"]);
    assert!(text.status.success(), "{}", stderr(&text));
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.starts_with("DEVICE") && out.contains(s(&rows[0]["deviceId"])), "{out}");
    assert!(stderr(&text).contains(&format!("of {failed_by_service}")), "{}", stderr(&text));
    // A window of the table.
    let window = env.json(&["fleet", "devices", "--limit", "7", "--offset", "3", "--sort", "-statusAt"]);
    assert_eq!(window["rows"].as_array().unwrap().len(), 7);
    assert_eq!(n(&window["total"]) as usize, service.len());

    // CSV of every drifting row: a header and one line per row the service calls drifting.
    let drift_by_service = service
        .iter()
        .filter(|x| x["targetFirmwareVersion"].is_string() && x["currentFirmwareVersion"] != x["targetFirmwareVersion"])
        .count();
    let csv = env.data.path().join("drift.csv");
    let wrote = env.json(&["fleet", "devices", "--drift", "--csv", csv.to_str().unwrap()]);
    assert_eq!(n(&wrote["rows"]) as usize, drift_by_service);
    let lines: Vec<String> = std::fs::read_to_string(&csv).unwrap().lines().map(str::to_owned).collect();
    assert!(lines[0].starts_with("deviceId,moduleId,module,"), "{}", lines[0]);
    assert_eq!(lines.len() - 1, drift_by_service);

    // A refresh with nothing changed changes nothing. Incremental, it reads little; the alt
    // service ignores modifiedSince (A-41 (alt)), so there it is a full scan, and says so.
    let again = env.json(&["fleet", "scan"]);
    assert_eq!(n(&again["changed"]), 0, "{again}");
    let text = env.run(&["fleet", "scan"]);
    assert!(text.status.success(), "{}", stderr(&text));
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    if alt() {
        assert_eq!(
            (&again["kind"], &again["mode"]["modifiedSince"]),
            (&Value::from("full"), &Value::from("ignored")),
            "{again}"
        );
        assert!(text.contains("refresh mode: full scans: this service ignores modifiedSince"), "{text}");
    } else {
        assert_eq!(again["kind"], "incremental");
        assert!((n(&again["states"]) as usize) < service.len() / 2, "{again}");
        assert!(text.contains("refresh mode: incremental"), "{text}");
    }

    // The overview and history of the module.
    let o = env.json(&["fleet", "overview", module]);
    assert_eq!(o["module"]["moduleId"], m["moduleId"]);
    assert_eq!(o["byStatus"].as_array().unwrap().iter().map(|c| n(&c["count"])).sum::<u64>(), n(&m["devices"]));
    assert!(o["failures"].as_array().unwrap().iter().all(|f| f["details"].is_string()));
    let history = env.json(&["fleet", "history", module]);
    let points = history.as_array().unwrap();
    assert!(!points.is_empty());
    assert_eq!(points.last().unwrap()["counts"]["FAILED"], m["failed"]);

    // A descending sort as the help shows it (`-` in front) is a value, not an option.
    let newest = env.json(&["firmware", "modules", "list", "--sort", "-createdAt"]);
    assert!(!newest.as_array().unwrap().is_empty());

    // Bad input names the field.
    let bad = env.run(&["fleet", "devices", "--sort", "colour"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("sort:"), "{}", stderr(&bad));
    let unknown = env.run(&["fleet", "overview", "no-such-module"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("moduleId:"), "{}", stderr(&unknown));
}

#[test]
fn a_rollout_started_with_yes_is_watched_to_completion() {
    let env = Env::start(32, 60, 3000.0);
    env.json(&["fleet", "scan", "--full"]);
    let (module, version) = env.pick();
    let plan = [
        "--module",
        &module,
        "--version",
        &version,
        "--all",
        "--waves",
        "10,50,100",
        "--success",
        "50",
        "--error",
        "100",
    ];

    let preview = env.json(&[&["rollout", "preview"][..], &plan].concat());
    assert!(preview["problems"].as_array().unwrap().is_empty(), "{preview}");
    let sizes: Vec<u64> = preview["waveSizes"].as_array().unwrap().iter().map(n).collect();
    assert_eq!(sizes.len(), 3);
    assert_eq!(sizes.iter().sum::<u64>(), n(&preview["devices"]));

    // A rehearsal: the waves' timings, the end and the failures to expect; nothing started.
    let models =
        ["--model", "connection=lora,fail=100,download=1-2,install=1", "--model", "fail=5,download=1-10,install=0.5-3"];
    let rehearsed = env.run(&[&["rollout", "rehearse"][..], &plan, &models].concat());
    let text = String::from_utf8_lossy(&rehearsed.stdout).into_owned();
    assert!(rehearsed.status.success(), "{text}{}", stderr(&rehearsed));
    assert!(text.contains("(nothing was sent to the service)") && text.contains("THRESHOLD MET AFTER"), "{text}");
    assert!(text.contains("Expected failures: ") && text.contains("Devices by model: "), "{text}");
    assert!(text.contains("Completes after ") || text.contains("Pauses after "), "{text}");
    let r = env.json(&[&["rollout", "rehearse"][..], &plan, &models[2..]].concat());
    assert_eq!(r["end"], "completed", "{r}");
    let waves = r["waves"].as_array().unwrap();
    assert_eq!(waves.iter().map(|w| n(&w["devices"])).collect::<Vec<_>>(), sizes);
    assert!(waves.iter().all(|w| w["endMinutes"].is_number()), "{r}");
    for (model, says) in [
        ("fail=120", "models[0].failPercent: must be from 0 to 100"),
        ("download=9-2", "models[0].downloadMinutes"),
        ("connection=zigbee", "models[0].connection: must be one of lora, http, mqtt"),
        ("speed=3", "--model: unknown key `speed`"),
        ("install=soon", "--model: install must be minutes as LEAST-MOST"),
    ] {
        let out = env.run(&[&["rollout", "rehearse"][..], &plan, &["--model", model]].concat());
        assert_eq!(out.status.code(), Some(2), "{model}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{model}: {}", stderr(&out));
    }

    // Without --yes and no terminal to ask on: refused, naming who it acts for; nothing started.
    let refused = env.run(&[&["rollout", "start", "--allow-downgrade"][..], &plan].concat());
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("without --yes") && stderr(&refused).contains("your own environment"),
        "{}",
        stderr(&refused)
    );
    assert!(env.json(&["rollout", "list"]).as_array().unwrap().is_empty());

    // Each device's version before the rollout, and the moment to compare with afterwards.
    let versions = |env: &Env| -> std::collections::BTreeMap<String, Value> {
        let rows = env.json(&["fleet", "devices", "--module", &module, "--limit", "5000"]);
        rows["rows"].as_array().unwrap().iter().map(|r| (s(&r["deviceId"]).to_owned(), r["current"].clone())).collect()
    };
    let before = versions(&env);
    let history = env.json(&["fleet", "history", &module]);
    let from = s(&history.as_array().unwrap().last().unwrap()["at"]).to_owned();

    // The picked version may be older than what some devices run: allowed explicitly.
    let started =
        env.json(&[&["rollout", "start", "--yes", "--allow-downgrade", "--late", "next"][..], &plan].concat());
    let id = s(&started["id"]).to_owned();
    assert_eq!(started["state"], "running");
    assert_eq!(started["late"], "next");
    assert_eq!(started["currentWave"], 0);
    assert_eq!(n(&started["waves"][0]["set"]), sizes[0]);

    let watched = env.cmd(&["rollout", "watch", &id, "--interval", "0.3"]).output().unwrap();
    assert!(watched.status.success(), "{}\n{}", String::from_utf8_lossy(&watched.stdout), stderr(&watched));
    let lines = String::from_utf8_lossy(&watched.stdout).into_owned();
    assert!(lines.contains("wave 2 started") && lines.contains("wave 3 started"), "{lines}");
    assert!(lines.contains(&format!("rollout {id} completed")), "{lines}");

    let view = env.json(&["rollout", "show", &id]);
    assert_eq!(view["state"], "completed");
    let total = &view["total"];
    assert_eq!(n(&total["size"]), n(&preview["devices"]));
    assert_eq!(n(&total["updating"]), 0);
    assert!(n(&total["succeeded"]) * 100 >= n(&total["size"]) * 50, "{total}");
    assert!(view["waves"].as_array().unwrap().iter().all(|w| w["started"] == true && w["set"] == w["size"]));
    // The service agrees: the rollout's devices have the target, and the updated ones run it.
    let on_service = env.json(&[
        "firmware",
        "states",
        "list",
        "--all",
        "--limit",
        "1000",
        "--module-id",
        &module,
        "--target-firmware-version",
        &version,
    ]);
    let on_service = on_service.as_array().unwrap();
    assert!(on_service.len() as u64 >= n(&total["size"]), "{} of {}", on_service.len(), total);
    let running = on_service.iter().filter(|x| x["currentFirmwareVersion"] == version.as_str()).count() as u64;
    assert!(running >= n(&total["succeeded"]));

    // The fleet compared before and after: the devices that moved forward or back are exactly
    // those whose version changed; none is new; the matrix holds every device once.
    let after = versions(&env);
    let moved = after.iter().filter(|(d, v)| before.get(*d) != Some(*v)).count() as u64;
    assert!(moved >= n(&total["succeeded"]), "{moved} moved, {total}");
    let diff = env.json(&["fleet", "diff", "--from", &from, "--module", &module]);
    let c = &diff.as_array().unwrap()[0];
    let count = |m: &str| n(&c["movements"].as_array().unwrap().iter().find(|x| x["movement"] == m).unwrap()["count"]);
    assert_eq!(count("forward") + count("back"), moved, "{c}");
    assert_eq!(count("new"), 0);
    assert_eq!(n(&c["devices"]), after.len() as u64);
    assert_eq!(c["cells"].as_array().unwrap().iter().map(|x| n(&x["count"])).sum::<u64>(), after.len() as u64);
    let table = env.run(&["fleet", "diff", "--from", &from]);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("FROM \\ TO") && text.contains(&module), "{text}");
    // A moment the history does not hold, or one after the other, is refused naming the field.
    let early = env.run(&["fleet", "diff", "--from", "2020-01-01T00:00:00Z", "--module", &module]);
    assert_eq!(early.status.code(), Some(2), "{}", stderr(&early));
    assert!(stderr(&early).contains("from") && stderr(&early).contains("history starts"), "{}", stderr(&early));
    let backwards = env.run(&["fleet", "diff", "--from", &from, "--to", "2020-01-01T00:00:00Z"]);
    assert!(stderr(&backwards).contains("from"), "{}", stderr(&backwards));
    // Stuck devices as a filter: short of their target, none once every device reached it or
    // failed a moment ago; a threshold that is no number of hours is refused naming it.
    let stuck = env.json(&["fleet", "devices", "--module", &module, "--stuck-hours", "0.0001"]);
    let drift = n(&env.json(&["fleet", "overview", &module])["module"]["drift"]);
    assert!(n(&stuck["total"]) <= drift, "{stuck} of {drift}");
    assert!(stuck["rows"].as_array().unwrap().iter().all(|r| !r["target"].is_null() && r["current"] != r["target"]));
    let bad = env.run(&["fleet", "devices", "--stuck-hours", "0"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("stuckHours"), "{}", stderr(&bad));

    // Its report, as HTML and JSON, with the same totals; the start is among its audit entries.
    let (html, json) = (env.data.path().join("report.html"), env.data.path().join("report.json"));
    let wrote =
        env.run(&["rollout", "report", &id, "--html", html.to_str().unwrap(), "--json-file", json.to_str().unwrap()]);
    assert!(wrote.status.success(), "{}", stderr(&wrote));
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["total"], view["total"]);
    assert_eq!(
        (report["version"].as_str(), report["moduleId"].as_str()),
        (Some(version.as_str()), Some(module.as_str()))
    );
    assert_eq!(report["firmwareSha256"].as_str().map(str::len), Some(64), "{}", report["firmwareSha256Source"]);
    let audit: Vec<&str> =
        report["audit"].as_array().unwrap().iter().map(|a| a["operation"].as_str().unwrap()).collect();
    assert_eq!(audit.first(), Some(&"rollout.start"), "{audit:?}");
    assert_eq!(audit.iter().filter(|o| **o == "target.set").count() as u64, n(&total["set"]), "{audit:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<svg")
            && page.contains(&format!(r#"<td data-field="succeeded">{}</td>"#, n(&total["succeeded"])))
    );
    assert_eq!(env.run(&["rollout", "report", &id]).status.code(), Some(2), "a report needs a file");
    // A finished rollout is watched no more and aborted no more.
    let done = env.run(&["rollout", "abort", &id, "--yes"]);
    assert_eq!(done.status.code(), Some(6), "{}", stderr(&done));
}

#[test]
fn a_rollout_pauses_resumes_and_aborts_with_its_targets_reset() {
    let env = Env::start(33, 60, 1.0);
    env.json(&["fleet", "scan", "--full"]);
    let (module, version) = env.pick();
    let list = env.data.path().join("devices.txt");
    let rows = env.json(&["fleet", "devices", "--module", &module, "--limit", "5000"]);
    let ids: Vec<&str> = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["current"] != version.as_str() && r["target"] != version.as_str())
        .map(|r| s(&r["deviceId"]))
        .take(10)
        .collect();
    assert_eq!(ids.len(), 10);
    std::fs::write(&list, ids.join("\n")).unwrap();
    let started = env.json(&[
        "rollout",
        "start",
        "--yes",
        "--allow-downgrade",
        "--module",
        &module,
        "--version",
        &version,
        "--device-list",
        list.to_str().unwrap(),
        "--waves",
        "50,100",
    ]);
    let id = s(&started["id"]).to_owned();
    assert_eq!(n(&started["total"]["size"]), 10);
    assert_eq!(n(&started["waves"][0]["set"]), 5);

    let paused = env.json(&["rollout", "pause", &id]);
    assert_eq!(paused["state"], "paused");
    assert_eq!(paused["reason"], "paused by the operator");
    let again = env.run(&["rollout", "pause", &id]);
    assert_eq!(again.status.code(), Some(6), "{}", stderr(&again));
    let bad = env.run(&["rollout", "resume", &id, "--success", "0"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("successThreshold"), "{}", stderr(&bad));
    let resumed = env.json(&["rollout", "resume", &id, "--error", "50"]);
    assert_eq!(resumed["state"], "running");
    assert_eq!(resumed["errorThreshold"], 50.0);

    // At real-time speed the first wave is still updating: abort resets those targets.
    let refused = env.run(&["rollout", "abort", &id, "--reset"]);
    assert!(
        !refused.status.success() && stderr(&refused).contains("resetting the targets of 5 devices"),
        "{}",
        stderr(&refused)
    );
    let aborted = env.json(&["rollout", "abort", &id, "--reset", "--yes"]);
    assert_eq!(aborted["state"], "aborted");
    let states = env.json(&["firmware", "states", "list", "--all", "--limit", "1000", "--module-id", &module]);
    let wave0: Vec<&Value> = states.as_array().unwrap().iter().filter(|x| ids.contains(&s(&x["deviceId"]))).collect();
    assert_eq!(wave0.len(), 10);
    assert!(wave0.iter().all(|x| x["targetFirmwareVersion"] != version.as_str()), "every target reset or never set");
    assert!(wave0.iter().filter(|x| x["firmwareUpdateStatus"] == "CANCELLED").count() >= 5);
    let table = String::from_utf8_lossy(&env.run(&["rollout", "list"]).stdout).into_owned();
    assert!(table.contains(&id) && table.contains("aborted"), "{table}");

    // A schedule whose only window opens in two hours (UTC), with approval between waves: the
    // preview's calendar, a start that sets no target, and a continue refused while no wave
    // waits for approval.
    let hm = |t: time::OffsetDateTime| format!("{:02}:{:02}", t.hour(), t.minute());
    let now = time::OffsetDateTime::now_utc();
    let window = format!("mon-sun/{}-{}", hm(now + time::Duration::hours(2)), hm(now + time::Duration::hours(3)));
    let plan = [
        "--module",
        &module,
        "--version",
        &version,
        "--device-list",
        list.to_str().unwrap(),
        "--waves",
        "50,100",
        "--time-zone",
        "UTC",
        "--window",
        &window,
        "--approval",
        "--retries",
        "2",
        "--no-retry-for",
        "signature",
    ];
    let retries = env.run(&[&["rollout", "preview"][..], &plan[..8], &["--retries", "11"]].concat());
    assert_eq!(retries.status.code(), Some(2), "{}", stderr(&retries));
    assert!(stderr(&retries).contains("retry.times: must be from 1 to 10, got 11"), "{}", stderr(&retries));
    let bad = env.run(&[&["rollout", "preview"][..], &plan[..8], &["--window", "funday/22:00-04:00"]].concat());
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("schedule.windows[0].days"), "{}", stderr(&bad));
    let preview = env.json(&[&["rollout", "preview"][..], &plan].concat());
    let calendar = preview["calendar"].as_array().unwrap();
    assert_eq!(calendar.len(), 2);
    assert_eq!(calendar[0]["waits"], true);
    assert!(s(&calendar[0]["local"]).ends_with(&format!("{} UTC", hm(now + time::Duration::hours(2)))), "{calendar:?}");
    let text = String::from_utf8_lossy(&env.run(&[&["rollout", "preview"][..], &plan].concat()).stdout).into_owned();
    assert!(text.contains("STARTS AT THE EARLIEST") && text.contains("(waits)"), "{text}");
    let held = env.json(&[&["rollout", "start", "--yes", "--allow-downgrade"][..], &plan].concat());
    let held_id = s(&held["id"]).to_owned();
    assert_eq!(held["hold"]["kind"], "window", "{held}");
    assert_eq!(n(&held["total"]["set"]), 0, "nothing is sent before the window opens");
    let shown = String::from_utf8_lossy(&env.run(&["rollout", "show", &held_id]).stdout).into_owned();
    assert!(shown.contains("held: Wave 1 (5 devices) waits until") && shown.contains("approval: each wave"), "{shown}");
    assert!(shown.contains("retries: up to 2 per device, 5 minutes after a failure, never for: signature"), "{shown}");
    let early = env.run(&["rollout", "continue", &held_id]);
    assert_eq!(early.status.code(), Some(6), "{}", stderr(&early));
    assert!(stderr(&early).contains("not waiting for approval"), "{}", stderr(&early));
    // Its devices are taken: another plan over them finds none left.
    let taken = env.run(&[&["rollout", "preview"][..], &plan[..8]].concat());
    assert!(!taken.status.success() && stderr(&taken).contains(&held_id), "{}", stderr(&taken));
}

#[test]
fn a_downgrade_is_named_in_the_preview_and_started_only_when_allowed() {
    use dcs_console::fleet::rollout::compare_versions;
    let env = Env::start(35, 40, 1.0);
    env.json(&["fleet", "scan", "--full"]);
    // A module whose devices run a version newer than a package with a file.
    let modules = env.json(&["fleet", "modules"]);
    let (module, old, newest, newest_devices, newer_devices) = modules
        .as_array()
        .unwrap()
        .iter()
        .find_map(|m| {
            let id = s(&m["moduleId"]).to_owned();
            let o = env.json(&["fleet", "overview", &id]);
            let running: Vec<(String, u64)> = o["byVersion"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["key"] != "none")
                .map(|c| (s(&c["key"]).to_owned(), n(&c["count"])))
                .collect();
            let newest = running.iter().map(|(v, _)| v.clone()).max_by(|a, b| compare_versions(a, b))?;
            let old = o["packages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["hasFile"] == true)
                .map(|p| s(&p["version"]).to_owned())
                .find(|v| compare_versions(v, &newest).is_lt())?;
            let on_newest = running.iter().filter(|(v, _)| *v == newest).map(|(_, c)| c).sum::<u64>();
            let newer = running.iter().filter(|(v, _)| compare_versions(v, &old).is_gt()).map(|(_, c)| c).sum::<u64>();
            Some((id, old, newest, on_newest, newer))
        })
        .expect("a module with a package older than what its devices run");
    let plan = ["--module", module.as_str(), "--version", old.as_str(), "--all", "--waves", "50,100"];

    // The preview warns, on stderr, with the figures; its JSON carries them.
    let out = env.run(&[&["rollout", "preview"][..], &plan].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let warning = stderr(&out);
    let want = format!(
        "warning: {old} is a DOWNGRADE: {newest_devices} of the chosen devices would go back from {newest} to {old}"
    );
    assert!(warning.contains(&want), "want {want:?} in {warning}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("{old} (downgrade)")));
    let preview = env.json(&[&["rollout", "preview"][..], &plan].concat());
    assert_eq!(preview["downgrade"]["newest"], newest.as_str());
    assert_eq!(n(&preview["downgrade"]["newestDevices"]), newest_devices);
    assert_eq!(n(&preview["downgrade"]["devices"]), newer_devices);
    // Each wave's failure budget, by the rollout's own rule.
    let budgets = preview["waveBudgets"].as_array().unwrap();
    assert_eq!(budgets.len(), 2);
    for (b, size) in budgets.iter().zip(preview["waveSizes"].as_array().unwrap()) {
        assert_eq!(b["size"], *size);
        assert_eq!(n(&b["needed"]) + n(&b["tolerates"]), n(size));
    }

    // Started only with --allow-downgrade, even with --yes; refused naming the version.
    let refused = env.run(&[&["rollout", "start", "--yes"][..], &plan].concat());
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let err = stderr(&refused);
    assert!(err.contains("version:") && err.contains("DOWNGRADE") && err.contains("--allow-downgrade"), "{err}");
    assert!(env.json(&["rollout", "list"]).as_array().unwrap().is_empty(), "nothing started");
    let started = env.json(&[&["rollout", "start", "--yes", "--allow-downgrade"][..], &plan].concat());
    assert_eq!(started["state"], "running");
    assert_eq!(started["version"], old.as_str());

    // The newest running version itself, when packaged, is no downgrade.
    let o = env.json(&["fleet", "overview", &module]);
    if o["packages"].as_array().unwrap().iter().any(|p| p["hasFile"] == true && p["version"] == newest.as_str()) {
        let same = env.run(&["rollout", "preview", "--module", &module, "--version", &newest, "--all", "--json"]);
        let v: Value = serde_json::from_slice(&same.stdout).unwrap();
        assert!(v["downgrade"].is_null(), "{v}");
        assert!(!stderr(&same).contains("DOWNGRADE"));
    }
}

#[test]
fn plans_are_refused_naming_the_field() {
    let env = Env::start(34, 20, 1.0);
    env.json(&["fleet", "scan", "--full"]);
    let (module, version) = env.pick();
    let refuse = |args: &[&str], field: &str| {
        let out =
            env.run(&[&["rollout", "start", "--yes", "--module", &module, "--version", &version][..], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(&format!("{field}:")), "{args:?} should name {field}: {}", stderr(&out));
        stderr(&out)
    };
    let waves = refuse(&["--all", "--waves", "50,10"], "waves");
    assert!(waves.contains("wave 2"), "{waves}");
    refuse(&["--all", "--waves", "10,half"], "waves");
    refuse(&["--all", "--success", "0"], "successThreshold");
    refuse(&["--all", "--error", "150"], "errorThreshold");
    refuse(&[], "devices");
    refuse(&["--device-list", "/no/such/file"], "deviceList");
    let list = env.data.path().join("ids.txt");
    std::fs::write(&list, "imei:12\nnot-a-device").unwrap();
    let devices = refuse(&["--device-list", list.to_str().unwrap()], "devices");
    assert!(devices.contains("#1 `imei:12`") && devices.contains("#2 `not-a-device`"), "{devices}");
    // A pasted list is fixed: no late devices join it.
    let states = env.json(&["fleet", "devices", "--module", &module, "--limit", "1"]);
    std::fs::write(&list, s(&states["rows"][0]["deviceId"])).unwrap();
    let late = refuse(&["--device-list", list.to_str().unwrap(), "--late", "next"], "late");
    assert!(late.contains("a pasted list is fixed"), "{late}");
    let out =
        env.run(&["rollout", "start", "--yes", "--module", &module, "--version", &version, "--all", "--late", "later"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("none, current, next"), "{}", stderr(&out));
    let out = env.run(&["rollout", "start", "--yes", "--module", &module, "--version", "9.9.9", "--all"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("version: the module has no package with version 9.9.9"), "{}", stderr(&out));
    // Nothing was started by any of them.
    assert!(env.json(&["rollout", "list"]).as_array().unwrap().is_empty());
    let preview =
        env.run(&["rollout", "preview", "--module", &module, "--version", &version, "--all", "--waves", "50,10"]);
    assert_eq!(preview.status.code(), Some(2));
}

#[test]
fn rollouts_are_unavailable_without_a_set_target_operation_and_say_how_to_enable_them() {
    let env = Env::start(35, 10, 1.0);
    let start = ["rollout", "start", "--yes", "--module", "m", "--version", "1.0.0", "--all"];
    // Ad hoc options: no profile, so no operation (the simulator's is never guessed).
    let out = dcs()
        .args(["--base-url", &env.sim.url, "--client-id", "sim-reseller"])
        .args(start)
        .env("DCS_CLIENT_SECRET", &env.secret)
        .env("DCS_DATA_DIR", env.data.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("rollouts are unavailable") && err.contains("no set-target operation"), "{err}");
    assert!(err.contains("--set-target-method") && err.contains("dcs profile test-set-target"), "{err}");
    assert!(!err.contains("A-38") && !err.contains("_sim"), "no internal words: {err}");
    // A stored profile without one: the same, and the fleet commands still work.
    let edited = env.run(&["profile", "edit", "sim", "--no-set-target"]);
    assert!(edited.status.success(), "{}", stderr(&edited));
    let out = env.run(&start);
    assert!(stderr(&out).contains("profile `sim` has no set-target operation"), "{}", stderr(&out));
    assert!(env.json(&["fleet", "scan", "--full"])["states"].as_u64().unwrap() > 0);
    assert!(env.json(&["rollout", "list"]).as_array().unwrap().is_empty());
    // With the operation back, the same command gets past that check (to the plan's own rule).
    let edited = env.run(&[&["profile", "edit", "sim"][..], &common::sim_set_target()].concat());
    assert!(edited.status.success(), "{}", stderr(&edited));
    let out = env.run(&start);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("moduleId:"), "{}", stderr(&out));
}

#[test]
fn the_in_process_simulator_refuses_rollouts() {
    let data = tempfile::tempdir().unwrap();
    let out = dcs()
        .args(["rollout", "start", "--yes", "--module", "m", "--version", "1.0.0", "--all"])
        .env("DCS_DATA_DIR", data.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("in-process simulator"), "{}", stderr(&out));
}

#[test]
fn a_device_is_shown_with_its_states_ids_and_what_the_service_holds_for_it() {
    let env = Env::start(32, 20, 1.0);
    let states = env.json(&["firmware", "states", "list", "--all", "--limit", "1000"]);
    let device = s(&states.as_array().unwrap()[0]["deviceId"]).to_owned();
    let modules: std::collections::BTreeSet<&str> = states
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["deviceId"] == device.as_str())
        .map(|x| s(&x["moduleId"]))
        .collect();

    // Before a scan the states are the service's now; after it, the fleet database's.
    let before = env.json(&["fleet", "device", &device]);
    assert_eq!(before["statesFromService"], true, "{before}");
    env.json(&["fleet", "scan", "--full"]);
    let page = env.json(&["fleet", "device", &device]);
    assert_eq!(page["statesFromService"], false);
    assert_eq!(s(&page["uuid"]), device);
    let shown: std::collections::BTreeSet<&str> =
        page["states"].as_array().unwrap().iter().map(|x| s(&x["moduleId"])).collect();
    assert_eq!(shown, modules);
    assert_eq!(page["problems"].as_array().unwrap().len(), 0, "{page}");
    assert!(page["forms"].as_array().unwrap().iter().any(|f| f["value"] == device.as_str()));

    // As text: the sections, the device's UUID among its ids.
    let text = env.run(&["fleet", "device", &device]);
    assert!(text.status.success(), "{}", stderr(&text));
    let out = String::from_utf8_lossy(&text.stdout);
    for part in ["Ids", "Firmware", "Downlinks", "Bindings", device.as_str()] {
        assert!(out.contains(part), "{part} missing: {out}");
    }

    // A malformed id names the field; nothing else is asked.
    let bad = env.run(&["fleet", "device", "imei:12"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("id: an IMEI device id needs 15 or 16 digits"), "{}", stderr(&bad));
}

/// A free port on loopback (bound, then let go of, for a child to bind).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `GET path` on loopback: the status code and the body.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let status = answer.split_whitespace().nth(1)?.parse().ok()?;
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    Some((status, body))
}

/// The runner: a rollout started by `dcs rollout start` (which lets go of it as it ends) is moved
/// on to completion by `dcs serve` alone, which names itself as the rollout's driver, answers
/// /healthz and /metrics with the rollout's figures, and ends on SIGTERM with exit 0 between
/// two steps, letting go of the rollout.
#[test]
fn a_runner_completes_a_rollout_alone_answers_health_and_metrics_and_stops_on_sigterm() {
    let env = Env::start(31, 40, 3000.0);
    assert!(env.run(&["fleet", "scan"]).status.success());
    let (module, version) = env.pick();
    let started = env.json(&[
        "--yes",
        "rollout",
        "start",
        "--module",
        &module,
        "--version",
        &version,
        "--all",
        "--waves",
        "20,100",
        "--success",
        "1",
        "--error",
        "100",
        "--allow-downgrade",
    ]);
    let id = s(&started["id"]).to_owned();
    // `dcs rollout start` drove the first step and let go of the rollout as it ended.
    let driver = &env.json(&["rollout", "show", &id])["driver"];
    assert_eq!(driver["kind"], "cli", "{driver}");
    assert_eq!(driver["expired"], true, "the start command did not let go of its lease: {driver}");

    let port = free_port();
    let mut runner = env
        .cmd(&["serve", "--interval", "0.3", "--listen", &format!("127.0.0.1:{port}"), "--log-format", "json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let view = loop {
        let view = env.json(&["rollout", "show", &id]);
        if view["state"] == "completed" {
            break view;
        }
        assert!(std::time::Instant::now() < until, "the runner did not complete the rollout: {view}");
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    assert_eq!(view["driver"]["kind"], "runner", "{}", view["driver"]);
    assert!(s(&view["driver"]["label"]).starts_with("runner on "), "{}", view["driver"]);

    let (status, health) = http_get(port, "/healthz").expect("the runner answers /healthz");
    assert_eq!(status, 200, "{health}");
    assert!(health.starts_with("ok\nsim: refreshed"), "{health}");
    // The metrics are of the round after the completion (0.3 s apart).
    let metrics = (0..50)
        .find_map(|_| {
            let (_, m) = http_get(port, "/metrics")?;
            let done = m.lines().any(|l| {
                l.starts_with("dcs_rollout_state{")
                    && l.contains(&id)
                    && l.contains("state=\"completed\"")
                    && l.ends_with(" 1")
            });
            if done {
                Some(m)
            } else {
                std::thread::sleep(std::time::Duration::from_millis(200));
                None
            }
        })
        .expect("/metrics shows the rollout completed");
    let succeeded = view["total"]["succeeded"].as_u64().unwrap();
    assert!(
        metrics.lines().any(|l| l.starts_with("dcs_rollout_devices{")
            && l.contains(&id)
            && l.contains("outcome=\"succeeded\"")
            && l.ends_with(&format!(" {succeeded}"))),
        "{metrics}"
    );
    assert!(metrics.contains("dcs_refresh_age_seconds{scope=\"sim\"}"), "{metrics}");
    assert!(metrics.contains("dcs_refresh_errors_total{scope=\"sim\"} 0"), "{metrics}");
    assert!(metrics.trim_end().ends_with("# EOF"), "{metrics}");

    assert!(common::signal(&runner, libc::SIGTERM));
    let exit = common::ended_within(&mut runner, std::time::Duration::from_secs(15)).expect("SIGTERM ends the runner");
    let mut log = String::new();
    std::io::Read::read_to_string(runner.stderr.as_mut().unwrap(), &mut log).unwrap();
    assert!(exit.success(), "exit {exit:?}: {log}");
    // Its log is JSON lines, and says what it did; no secret in it.
    for line in log.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(v["level"].is_string() && v["message"].is_string(), "{line}");
    }
    assert!(log.contains("\"message\":\"wave started\""), "{log}");
    assert!(log.contains("\"message\":\"runner stopped; its rollouts were let go of\""), "{log}");
    assert!(!log.contains(&env.secret), "the secret is in the runner's log");
}

/// The runner's secret from a file: refused, naming the file and the rule, when others may read
/// it; taken when only its owner may.
#[test]
fn a_runner_refuses_a_secret_file_others_may_read() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::start(32, 5, 1.0);
    let file = env.data.path().join("secret");
    std::fs::write(&file, format!("{}\n", env.secret)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = bare(&env.config)
        .args(["--profile", "sim", "serve", "--listen", "off", "--secret-file"])
        .arg(&file)
        .env("DCS_DATA_DIR", env.data.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("secretFile") && said.contains("mode 644") && said.contains("chmod 600"), "{said}");

    // Owner-only: the runner connects with it (and is stopped once it answers).
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let port = free_port();
    let mut runner = bare(&env.config)
        .args([
            "--profile",
            "sim",
            "serve",
            "--interval",
            "0.3",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--secret-file",
        ])
        .arg(&file)
        .env("DCS_DATA_DIR", env.data.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let healthy = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(200));
        http_get(port, "/healthz").is_some_and(|(status, body)| status == 200 && body.contains("sim: refreshed"))
    });
    assert!(common::signal(&runner, libc::SIGTERM));
    let exit = common::ended_within(&mut runner, std::time::Duration::from_secs(15));
    assert!(healthy, "the runner never refreshed with the secret from the file");
    assert!(exit.is_some_and(|e| e.success()), "{exit:?}");
}
