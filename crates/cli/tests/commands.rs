//! Every command group of `dcs`, run as a user runs it against `dcs sim` in a child process.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{alt, dcs, feed, run_config, s, stderr, Sim};
use dcs_api::model::BindingKind;
use dcs_sim::store::bindings::BindingRow;
use dcs_sim::store::devices::DeviceRow;
use dcs_sim::store::Store;
use dcs_sim::{SimOptions, Simulator};
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

const DEVICES: u32 = 40;

/// `dcs sim` on a free port, and what it takes to talk to it.
struct Env {
    sim: Sim,
    secret: String,
    /// The same data set, in this process, to look devices up.
    local: Simulator,
    /// The simulator's data file, when it keeps its state in one ([`Env::start_with_data`]).
    data: Option<tempfile::TempDir>,
}

impl Env {
    fn start(seed: u64) -> Env {
        Env::start_in(seed, None)
    }

    /// [`Env::start`] with the simulator's state in a file, so that [`Env::held`] can read what
    /// the service holds (secrets a variant never sends back, A-61 (alt)).
    fn start_with_data(seed: u64) -> Env {
        Env::start_in(seed, Some(tempfile::tempdir().unwrap()))
    }

    fn start_in(seed: u64, data: Option<tempfile::TempDir>) -> Env {
        let file = data.as_ref().map(|d| d.path().join("sim.sqlite").to_string_lossy().into_owned());
        let mut args = vec![
            "--seed".to_owned(),
            seed.to_string(),
            "--devices-per-client".to_owned(),
            DEVICES.to_string(),
            "--speed".to_owned(),
            "1".to_owned(),
        ];
        args.extend(file.into_iter().flat_map(|f| ["--data".to_owned(), f]));
        let sim = Sim::start(&run_config(), &args.iter().map(String::as_str).collect::<Vec<_>>());
        let local = Simulator::new(SimOptions { seed, devices_per_client: DEVICES, ..Default::default() }).unwrap();
        let secret = local.demo_key().secret.clone();
        Env { sim, secret, local, data }
    }

    /// The binding as the running simulator holds it, read from its data file.
    fn held(&self, kind: BindingKind, id: &str) -> BindingRow {
        let dir = self.data.as_ref().expect("started with Env::start_with_data");
        let store = Store::open(&dir.path().join("sim.sqlite")).unwrap();
        store
            .binding(self.local.demo_key().client_id, kind, id.parse().unwrap())
            .unwrap()
            .unwrap_or_else(|| panic!("no binding {id}"))
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = dcs();
        c.args(["--base-url", &self.sim.url, "--client-id", "sim-reseller"])
            .args(args)
            .env("DCS_CLIENT_SECRET", &self.secret);
        c
    }

    /// Runs and expects success; returns stdout as JSON (`--json` is added).
    fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd(args).arg("--json").output().unwrap();
        assert!(out.status.success(), "dcs {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("dcs {args:?}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Runs with `input` on standard input and expects success; returns stdout as JSON.
    fn json_with_stdin(&self, args: &[&str], input: &str) -> Value {
        let child = self
            .cmd(args)
            .arg("--json")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = feed(child, input);
        assert!(out.status.success(), "dcs {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn devices(&self) -> Vec<DeviceRow> {
        let owner = self.local.demo_key().client_id;
        self.local.store().beta_devices(owner, None, "id", true, 0, 10_000).unwrap().0
    }

    fn device(&self, connection: &str) -> DeviceRow {
        self.devices()
            .into_iter()
            .find(|d| d.connection == connection)
            .unwrap_or_else(|| panic!("no {connection} device"))
    }
}

fn natural_id(d: &DeviceRow) -> String {
    match (&d.deveui, &d.imei) {
        (Some(e), _) => format!("deveui:{e}"),
        (None, Some(i)) => format!("imei:{i}"),
        _ => d.id.to_string(),
    }
}

/// A package of a module of the demo reseller, made for the test with a unique version.
fn new_package(env: &Env, version: &str) -> (Value, Value) {
    let modules = env.json(&["firmware", "modules", "list"]);
    let m = modules[0].clone();
    let p = env.json(&[
        "firmware",
        "packages",
        "create",
        "--device-specification-id",
        s(&m["deviceSpecificationId"]),
        "--module-id",
        s(&m["id"]),
        "--firmware-version",
        version,
        "--description",
        "made by the CLI test",
    ]);
    (m, p)
}

#[test]
fn packages_are_created_updated_and_deleted() {
    let env = Env::start(11);
    let (m, p) = new_package(&env, "9.8.7");
    assert_eq!(p["firmwareVersion"], "9.8.7");
    assert_eq!(p["moduleId"], m["id"]);
    let id = s(&p["id"]).to_owned();

    let got = env.json(&["firmware", "packages", "get", &id, "--embed", "module,deviceSpecification"]);
    assert_eq!(got["_embedded"]["module"]["id"], m["id"]);

    let updated = env.json(&["firmware", "packages", "update", &id, "--description", "changed"]);
    assert_eq!(updated["description"], "changed");
    let cleared = env.json(&["firmware", "packages", "update", &id, "--clear-description"]);
    assert!(cleared.get("description").is_none_or(Value::is_null), "{cleared}");

    let listed = env.json(&["firmware", "packages", "list", "--module-id", s(&m["id"])]);
    assert!(listed.as_array().unwrap().iter().any(|x| x["id"] == p["id"]));

    // Without --yes and with no terminal to ask on: refused, nothing deleted.
    let refused = env.run(&["firmware", "packages", "delete", &id]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("without --yes"), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("your own environment"), "{}", stderr(&refused));
    env.json(&["firmware", "packages", "get", &id]);

    let deleted = env.run(&["firmware", "packages", "delete", &id, "--yes"]);
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    let gone = env.run(&["firmware", "packages", "get", &id]);
    assert_eq!(gone.status.code(), Some(5), "not found exits with 5");

    // Bad input: refused before any request, naming the field.
    let bad = env.run(&[
        "firmware",
        "packages",
        "create",
        "--device-specification-id",
        s(&m["deviceSpecificationId"]),
        "--module-id",
        s(&m["id"]),
        "--firmware-version",
        "",
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("firmwareVersion"), "{}", stderr(&bad));
}

#[test]
fn a_firmware_file_goes_up_and_comes_down_with_the_same_sha256() {
    let env = Env::start(12);
    let (_, p) = new_package(&env, "7.7.7");
    let id = s(&p["id"]).to_owned();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("fw-7.7.7.bin");
    let bytes: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::File::create(&src).unwrap().write_all(&bytes).unwrap();
    let expected = hex(&Sha256::digest(&bytes));

    let up = env.run(&["firmware", "files", "upload", &id, src.to_str().unwrap()]);
    assert!(up.status.success(), "{}", stderr(&up));
    assert!(String::from_utf8_lossy(&up.stdout).contains("fw-7.7.7.bin"));
    // A firmware file goes up once.
    let again = env.run(&["firmware", "files", "upload", &id, src.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(6), "{}", stderr(&again));

    let dst = dir.path().join("down.bin");
    let down = env.run(&["firmware", "files", "download", &id, dst.to_str().unwrap()]);
    assert!(down.status.success(), "{}", stderr(&down));
    let printed = String::from_utf8(down.stdout).unwrap();
    assert_eq!(printed.split_whitespace().next(), Some(expected.as_str()), "{printed}");
    assert_eq!(std::fs::read(&dst).unwrap(), bytes);

    // Release notes: up, down as JSON, deleted with --yes.
    let notes = dir.path().join("NOTES.md");
    std::fs::write(&notes, "# 7.7.7\n").unwrap();
    let up = env.run(&["firmware", "files", "upload", &id, notes.to_str().unwrap(), "--release-notes"]);
    assert!(up.status.success(), "{}", stderr(&up));
    let got =
        env.json(&["firmware", "files", "download", &id, dir.path().join("n.md").to_str().unwrap(), "--release-notes"]);
    assert_eq!(got["sha256"], hex(&Sha256::digest(b"# 7.7.7\n")));
    let del = env.run(&["firmware", "release-notes", "delete", &id, "--yes"]);
    assert!(del.status.success(), "{}", stderr(&del));
}

/// An empty firmware file goes up (the service does not say it refuses one) with a warning.
#[test]
fn an_empty_firmware_file_is_uploaded_with_a_warning() {
    let env = Env::start(14);
    let (_, p) = new_package(&env, "7.7.8");
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("empty.bin");
    std::fs::write(&src, b"").unwrap();
    let up = env.run(&["firmware", "files", "upload", s(&p["id"]), src.to_str().unwrap()]);
    assert!(up.status.success(), "{}", stderr(&up));
    assert!(stderr(&up).contains("empty (0 bytes)"), "{}", stderr(&up));
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn states_are_listed_with_filters_and_a_target_is_set() {
    let env = Env::start(13);
    let packages = env.json(&["firmware", "packages", "list"]);
    let p =
        packages.as_array().unwrap().iter().find(|p| p["firmwareFileName"].is_string()).expect("a package with a file");
    let module = s(&p["moduleId"]);

    let page = env.json(&["firmware", "states", "list", "--module-id", module, "--limit", "3"]);
    let items = page["items"].as_array().unwrap();
    assert!(!items.is_empty() && items.len() <= 3);
    assert!(items.iter().all(|i| i["moduleId"] == p["moduleId"]));
    if let Some(next) = page["next"].as_str() {
        let more = env.json(&["firmware", "states", "list", "--page-url", next]);
        assert!(more["items"].as_array().is_some());
    }
    let failed = env.json(&["firmware", "states", "list", "--status", "FAILED", "--all", "--limit", "50"]);
    assert!(failed.as_array().unwrap().iter().all(|i| i["firmwareUpdateStatus"] == "FAILED"));

    let device = s(&items[0]["deviceId"]).to_owned();
    // Without a profile there is no set-target operation: refused, saying how to add one.
    let none = env.run(&["firmware", "states", "set-target", &device, module, s(&p["firmwareVersion"]), "--yes"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(
        stderr(&none).contains("no set-target operation") && stderr(&none).contains("--set-target-path"),
        "{}",
        stderr(&none)
    );
    // A profile with the simulator's operation sets and resets the target.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let added = common::bare(&config)
        .args(["profile", "add", "sim", "--no-secret", "--base-url", &env.sim.url, "--client-id", "sim-reseller"])
        .args(common::sim_set_target())
        .output()
        .unwrap();
    assert!(added.status.success(), "{}", stderr(&added));
    let with_profile = |args: &[&str]| {
        common::bare(&config)
            .args(["--profile", "sim"])
            .args(args)
            .env("DCS_CLIENT_SECRET", &env.secret)
            .output()
            .unwrap()
    };
    let as_json = |args: &[&str]| -> Value {
        let out = with_profile(&[args, &["--json"]].concat());
        assert!(out.status.success(), "dcs {args:?}: {}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let refused = with_profile(&["firmware", "states", "set-target", &device, module, s(&p["firmwareVersion"])]);
    assert!(!refused.status.success(), "set-target asks first");
    let set = as_json(&["firmware", "states", "set-target", &device, module, s(&p["firmwareVersion"]), "--yes"]);
    assert_eq!(set[0]["targetFirmwareVersion"], p["firmwareVersion"]);
    let reset = as_json(&["firmware", "states", "set-target", &device, module, "--reset", "--yes"]);
    assert!(reset[0].get("targetFirmwareVersion").is_none_or(Value::is_null), "{reset}");

    let bad = with_profile(&["firmware", "states", "set-target", "bogus", module, "1.0.0", "--yes"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("deviceId"), "{}", stderr(&bad));
}

#[test]
fn actuator_downlinks_are_created_read_and_cancelled() {
    let env = Env::start(14);
    let lora = natural_id(&env.device("lora"));
    let reference = format!("cli-{}", Uuid::new_v4());
    let made = env.json(&[
        "downlinks",
        "create",
        "--method-type",
        "payloadHex",
        "--device-id",
        &lora,
        "--payload-hex",
        "0a0b",
        "--port",
        "5",
        "--retry-limit",
        "2",
        "--feedback-timeout",
        "PT1H",
        "--external-reference",
        &reference,
    ]);
    // A-30; A-30 (alt): a new downlink is first ACCEPTED.
    assert_eq!(made["status"], if common::alt() { "ACCEPTED" } else { "PENDING" });
    assert_eq!(made["method"]["type"], "payloadHex");
    let id = s(&made["id"]).to_owned();

    let got = env.json(&["downlinks", "get", &id]);
    assert_eq!(got["externalReference"], reference.as_str());
    let found = env.json(&["downlinks", "list", "--q", &reference]);
    assert_eq!(found.as_array().unwrap().len(), 1);
    let table = env.run(&["downlinks", "get", &id]);
    assert!(String::from_utf8_lossy(&table.stdout).contains(&reference));

    let dry = env.json(&[
        "downlinks",
        "create",
        "--method-type",
        "setProperty",
        "--device-id",
        &lora,
        "--property",
        "interval",
        "--value",
        "60",
        "--dry-run",
    ]);
    assert_eq!(dry["dryRun"], true);

    let cancel = env.run(&["downlinks", "cancel", &id]);
    assert!(cancel.status.success(), "{}", stderr(&cancel));
    let forced = env.run(&["downlinks", "cancel", &id, "--forced"]);
    assert!(!forced.status.success(), "a forced cancel asks first");
    assert!(stderr(&forced).contains("without --yes"));

    let missing =
        env.run(&["downlinks", "create", "--method-type", "setProperty", "--device-id", &lora, "--value", "1"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("method.property"), "{}", stderr(&missing));
}

#[test]
fn a_bad_feedback_timeout_is_refused_before_sending() {
    let out = dcs()
        .args([
            "downlinks",
            "create",
            "--method-type",
            "setProperty",
            "--device-id",
            "imei:350000000000001",
            "--property",
            "x",
            "--value",
            "1",
            "--feedback-timeout",
            "PT5M",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "invalid_input");
    assert!(s(&err["error"]["message"]).starts_with("feedbackTimeout:"), "{err}");

    let out = dcs()
        .args([
            "downlinks",
            "lora",
            "create",
            "--device-id",
            "deveui:70b3d57ed0000001",
            "--feedback-timeout",
            "1h",
            "--payload-hex",
            "0a",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("feedbackTimeout"), "{}", stderr(&out));
}

#[test]
fn connection_downlinks_are_created_listed_and_cancelled() {
    let env = Env::start(15);
    let lora = natural_id(&env.device("lora"));
    let made = env.json(&[
        "downlinks",
        "lora",
        "create",
        "--device-id",
        &lora,
        "--feedback-timeout",
        "PT1H",
        "--payload-hex",
        "0a0b",
        "--f-port",
        "2",
        "--retry-limit",
        "1",
    ]);
    let id = s(&made["id"]).to_owned();
    assert_eq!(made["fPort"], 2);
    let got = env.json(&["downlinks", "lora", "get", &id]);
    assert_eq!(got["id"], made["id"]);
    let listed = env.json(&["downlinks", "lora", "list", "--device-id", &lora]);
    assert!(listed.as_array().unwrap().iter().any(|d| d["id"] == made["id"]));
    let cancel = env.run(&["downlinks", "lora", "cancel", &id]);
    assert!(cancel.status.success(), "{}", stderr(&cancel));

    let mqtt = natural_id(&env.device("mqtt"));
    let m = env.json(&[
        "downlinks",
        "mqtt",
        "create",
        "--device-id",
        &mqtt,
        "--feedback-timeout",
        "PT1H",
        "--topic",
        "cmd/led",
        "--payload",
        "on",
        "--qos",
        "1",
    ]);
    assert_eq!(m["topic"], "cmd/led");
}

#[test]
fn mqtt_bindings_are_created_listed_and_deleted() {
    let env = Env::start_with_data(16);
    let bound = env.json(&["bindings", "mqtt", "list"]);
    let bound: Vec<String> = bound.as_array().unwrap().iter().map(|b| s(&b["deviceId"]).to_owned()).collect();
    let dev = env
        .devices()
        .into_iter()
        .find(|d| d.connection == "mqtt" && !bound.contains(&d.id.to_string()))
        .expect("an unbound MQTT device");
    // The password comes from standard input, never from the command line.
    let made = env.json_with_stdin(
        &["bindings", "mqtt", "create", "--device-id", &natural_id(&dev), "--password-stdin"],
        "Abcdefghijklmnopqrstuv1!\n",
    );
    let id = s(&made["id"]).to_owned();
    // The service holds the password sent. The reference variant answers it; the alt
    // variant never sends a secret back (A-61 (alt)), and dcs does not print one it did not make.
    let password = |field: &Value| {
        if alt() {
            assert!(field.is_null(), "{field}");
            env.held(BindingKind::Mqtt, &id).password.unwrap()
        } else {
            s(field).to_owned()
        }
    };
    assert_eq!(password(&made["password"]), "Abcdefghijklmnopqrstuv1!");
    let listed = env.json(&["bindings", "mqtt", "list", "--username", s(&made["username"])]);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["id"], made["id"]);
    // A listing prints no secret unless asked to.
    let raw = env.run(&["bindings", "mqtt", "list", "--json"]);
    assert!(
        raw.status.success() && !String::from_utf8_lossy(&raw.stdout).contains("Abcdefghijklmnopqrstuv1!"),
        "a listing printed the password"
    );
    if !alt() {
        assert_eq!(listed[0]["password"], "***");
        let revealed = env.json(&["bindings", "mqtt", "list", "--username", s(&made["username"]), "--reveal-secrets"]);
        assert_eq!(revealed[0]["password"], "Abcdefghijklmnopqrstuv1!");
    }
    // ... or from the environment.
    let updated = env
        .cmd(&["bindings", "mqtt", "update", &id, "--device-id", &natural_id(&dev), "--json"])
        .env("DCS_MQTT_PASSWORD", "Zyxwvutsrqponmlkjihgfe9#")
        .output()
        .unwrap();
    assert!(updated.status.success(), "{}", stderr(&updated));
    assert_eq!(password(&env.json(&["bindings", "mqtt", "get", &id])["password"]), "Zyxwvutsrqponmlkjihgfe9#");

    // An update given no password (no terminal, no variable) keeps the stored one: a full PUT
    // that sends it back. A service that does not send it back leaves nothing to keep: the
    // update is refused, naming the field and where a password may come from, and sends nothing.
    let kept = env.run(&["bindings", "mqtt", "update", &id, "--device-id", &dev.id.to_string()]);
    if alt() {
        let before = env.held(BindingKind::Mqtt, &id);
        assert_eq!(kept.status.code(), Some(2), "{}", stderr(&kept));
        let err = stderr(&kept);
        for part in [
            "password: the service did not send the stored password back",
            "--password-stdin",
            "DCS_MQTT_PASSWORD",
            "--generate-password",
        ] {
            assert!(err.contains(part), "{part} not in {err}");
        }
        let after = env.held(BindingKind::Mqtt, &id);
        assert_eq!((after.password, after.modified_at), (before.password, before.modified_at), "nothing was sent");
        // Given again, it is sent.
        let given = env.json_with_stdin(
            &["bindings", "mqtt", "update", &id, "--device-id", &dev.id.to_string(), "--password-stdin"],
            "Qwertyuiopasdfghjklzxcv2%\n",
        );
        assert_eq!(password(&given["password"]), "Qwertyuiopasdfghjklzxcv2%");
    } else {
        assert!(kept.status.success(), "{}", stderr(&kept));
        assert!(stderr(&kept).contains("kept the stored password"), "{}", stderr(&kept));
        assert_eq!(password(&env.json(&["bindings", "mqtt", "get", &id])["password"]), "Zyxwvutsrqponmlkjihgfe9#");
    }

    // A generated one is printed once and is what the service holds.
    let generated =
        env.run(&["bindings", "mqtt", "update", &id, "--device-id", &dev.id.to_string(), "--generate-password"]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    let text = String::from_utf8_lossy(&generated.stdout).to_string();
    let line = text.lines().find(|l| l.starts_with("generated password")).unwrap_or_else(|| panic!("{text}"));
    let generated = line.rsplit(": ").next().unwrap();
    assert_eq!(dcs_api::model::validate::mqtt_password(generated), Ok(()));
    assert_eq!(password(&env.json(&["bindings", "mqtt", "get", &id])["password"]), generated);

    let refused = env.run(&["bindings", "mqtt", "delete", &id]);
    assert!(!refused.status.success());
    let deleted = env.run(&["bindings", "mqtt", "delete", &id, "--yes"]);
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    assert_eq!(env.run(&["bindings", "mqtt", "get", &id]).status.code(), Some(5));

    let bad = env
        .cmd(&["bindings", "mqtt", "create", "--device-id", &natural_id(&dev), "--password-stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bad = feed(bad, "short\n");
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("password"), "{}", stderr(&bad));
    // Without a source a create says where the password may come from, and sends nothing.
    let none = env.run(&["bindings", "mqtt", "create", "--device-id", &natural_id(&dev)]);
    assert_eq!(none.status.code(), Some(2));
    assert!(
        stderr(&none).contains("--password-stdin") && stderr(&none).contains("DCS_MQTT_PASSWORD"),
        "{}",
        stderr(&none)
    );
    // The old flag that put the secret on the command line is gone.
    let flag = env.run(&[
        "bindings",
        "mqtt",
        "create",
        "--device-id",
        &natural_id(&dev),
        "--password",
        "Abcdefghijklmnopqrstuv1!",
    ]);
    assert_eq!(flag.status.code(), Some(2));
}

#[test]
fn lora_and_http_secrets_come_from_stdin_or_the_environment_and_updates_keep_them() {
    let env = Env::start_with_data(19);
    let free = |kind: &str| {
        let bound = env.json(&["bindings", kind, "list"]);
        let bound: Vec<String> = bound.as_array().unwrap().iter().map(|b| s(&b["deviceId"]).to_owned()).collect();
        env.devices()
            .into_iter()
            .find(|d| d.connection == kind && !bound.contains(&d.id.to_string()))
            .expect("an unbound device")
    };
    let lora = free("lora");
    let key = "00112233445566778899aabbccddeeff";
    let made = env.json_with_stdin(
        &[
            "bindings",
            "lora",
            "create",
            "--device-id",
            &natural_id(&lora),
            "--application-server-id",
            "00e2e00000000019",
            "--app-key-stdin",
        ],
        &format!("{key}\n"),
    );
    let id = s(&made["id"]).to_owned();
    let move_args = [
        "bindings",
        "lora",
        "update",
        &id,
        "--device-id",
        &natural_id(&lora),
        "--application-server-id",
        "00e2e0000000001a",
    ];
    let moved = env.run(&move_args);
    if alt() {
        // The service never sends the key back (A-61 (alt)), so there is none to keep: refused,
        // naming the field and where a key may come from, and nothing is sent.
        assert_eq!(moved.status.code(), Some(2), "{}", stderr(&moved));
        let err = stderr(&moved);
        for part in ["appKey: the service did not send the stored app key back", "--app-key-stdin", "DCS_APP_KEY"] {
            assert!(err.contains(part), "{part} not in {err}");
        }
        let held = env.held(BindingKind::Lora, &id);
        assert_eq!(
            (held.application_server_id.as_deref(), held.app_key.as_deref()),
            (Some("00e2e00000000019"), Some(key))
        );
        // Given again, the update is made and the key is the one sent.
        let moved = env.json_with_stdin(&[&move_args[..], &["--app-key-stdin"]].concat(), &format!("{key}\n"));
        assert_eq!(moved["applicationServerId"], "00e2e0000000001a");
        assert!(moved["appKey"].is_null(), "{moved}");
        let got = env.json(&["bindings", "lora", "get", &id]);
        assert_eq!(got["applicationServerId"], "00e2e0000000001a");
        assert_eq!(env.held(BindingKind::Lora, &id).app_key.as_deref(), Some(key));
    } else {
        assert!(moved.status.success(), "{}", stderr(&moved));
        let got = env.json(&["bindings", "lora", "get", &id]);
        assert_eq!((s(&got["applicationServerId"]), s(&got["appKey"])), ("00e2e0000000001a", key));
    }
    let bad = env
        .cmd(&[
            "bindings",
            "lora",
            "update",
            &id,
            "--device-id",
            &natural_id(&lora),
            "--application-server-id",
            "00e2e0000000001a",
        ])
        .env("DCS_APP_KEY", "xyz")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("appKey"), "{}", stderr(&bad));

    let http = free("http");
    let made = env.json(&[
        "bindings",
        "http",
        "create",
        "--device-id",
        &natural_id(&http),
        "--type",
        "http-senml",
        "--generate-secret",
    ]);
    let secret = s(&made["sharedSecret"]).to_owned();
    assert_eq!(dcs_api::model::validate::shared_secret(&secret), Ok(()));
    let id = s(&made["id"]).to_owned();
    let retype = ["bindings", "http", "update", &id, "--device-id", &natural_id(&http), "--type", "http-streamline"];
    if alt() {
        assert_eq!(
            env.held(BindingKind::Http, &id).shared_secret.as_deref(),
            Some(secret.as_str()),
            "the generated secret is the one sent"
        );
        let refused = env.run(&retype);
        assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
        let err = stderr(&refused);
        for part in [
            "sharedSecret: the service did not send the stored shared secret back",
            "--shared-secret-stdin",
            "DCS_SHARED_SECRET",
            "--generate-secret",
        ] {
            assert!(err.contains(part), "{part} not in {err}");
        }
        assert_eq!(env.held(BindingKind::Http, &id).http_type.as_deref(), Some("http-senml"), "nothing was sent");
        let retyped = env.cmd(&retype).arg("--json").env("DCS_SHARED_SECRET", &secret).output().unwrap();
        assert!(retyped.status.success(), "{}", stderr(&retyped));
        let retyped: Value = serde_json::from_slice(&retyped.stdout).unwrap();
        assert_eq!(retyped["type"], "http-streamline");
        let held = env.held(BindingKind::Http, &id);
        assert_eq!(
            (held.http_type.as_deref(), held.shared_secret.as_deref()),
            (Some("http-streamline"), Some(secret.as_str()))
        );
    } else {
        let retyped = env.json(&retype);
        assert_eq!((s(&retyped["type"]), s(&retyped["sharedSecret"])), ("http-streamline", secret.as_str()));
    }
}

#[test]
fn beta_devices_are_listed() {
    let env = Env::start(17);
    let page = env.json(&["beta", "devices", "list", "--page-size", "5"]);
    assert_eq!(page["content"].as_array().unwrap().len(), 5);
    let all = env.json(&["beta", "devices", "list", "--page-size", "25", "--all"]);
    assert_eq!(all.as_array().unwrap().len(), env.devices().len());
    let table = env.run(&["beta", "devices", "list", "--page-size", "3"]);
    assert_eq!(String::from_utf8_lossy(&table.stdout).lines().count(), 4);
}

#[test]
fn auth_check_says_ok_or_why_not() {
    let env = Env::start(18);
    let ok = env.run(&["auth", "check"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(text.starts_with("OK"), "{text}");
    assert!(!text.contains("eyJ"), "the token is never printed");

    let wrong = env.cmd(&["auth", "check"]).env("DCS_CLIENT_SECRET", "wrong").output().unwrap();
    assert_eq!(wrong.status.code(), Some(3));
    assert!(stderr(&wrong).contains("identity platform"), "{}", stderr(&wrong));
}

#[test]
fn completions_are_printed_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = dcs().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("dcs") && text.contains("set-target"), "{shell}");
    }
}

#[test]
fn every_leaf_command_has_an_example() {
    for args in [
        &["firmware", "packages", "create"][..],
        &["firmware", "files", "upload"],
        &["firmware", "states", "set-target"],
        &["downlinks", "create"],
        &["downlinks", "sms", "create"],
        &["bindings", "lora", "create"],
        &["beta", "devices", "list"],
        &["auth", "check"],
        &["profile", "add"],
        &["profile", "edit"],
        &["profile", "test"],
        &["profile", "use"],
        &["open"],
        &["diagnostics"],
    ] {
        let out = dcs().args(args).arg("--help").output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Example"), "{args:?}: {text}");
    }
}

/// `dcs open --print` writes an item's `dcs-console://` link, the id normalised; a kind or id
/// that is not one is refused naming the field and the rule, and service options do not apply.
#[test]
fn open_prints_an_items_link_and_refuses_a_bad_one_naming_the_field() {
    let out = dcs().args(["open", "device", "URN:DEV:IMEI:490154203237518", "--print"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "dcs-console://device/urn:dev:imei:490154203237518:\n");

    let u = Uuid::new_v4();
    let out = dcs().args(["--json", "open", "Rollout", &u.to_string().to_uppercase(), "--print"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer, serde_json::json!({ "link": format!("dcs-console://rollout/{u}"), "opened": false }));

    for (args, says) in [
        (vec!["open", "firmware", "x", "--print"], "kind: must be one of device, rollout, module, package, downlink"),
        (vec!["open", "rollout", "12", "--print"], "id: a rollout id is a UUID"),
        (vec!["open", "device", "imei:12", "--print"], "id: an IMEI device id needs 15 or 16 digits"),
        (
            vec!["--base-url", "http://127.0.0.1:1", "open", "device", "imei:490154203237518"],
            "--base-url: does not apply",
        ),
    ] {
        let out = dcs().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing printed");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn customer_and_x_client_id_exclude_each_other() {
    let u = Uuid::new_v4().to_string();
    let out = dcs().args(["--customer", &u, "--x-client-id", &u, "auth", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn downlink_and_binding_lists_are_written_as_csv_with_devices_named_and_no_secret() {
    let env = Env::start(9);
    let dir = tempfile::tempdir().unwrap();
    let names: std::collections::HashMap<String, String> = env
        .devices()
        .into_iter()
        .flat_map(|d| [(d.network_id(), d.name.clone()), (d.id.to_string(), d.name)])
        .collect();

    // Every page (3 a page here) of the LoRa downlinks the filter gives, devices named.
    let path = dir.path().join("lora.csv");
    let wrote =
        env.json(&["downlinks", "lora", "list", "--status", "DONE", "--limit", "3", "--csv", path.to_str().unwrap()]);
    let listed = env.json(&["downlinks", "lora", "list", "--status", "DONE"]);
    let listed = listed.as_array().unwrap();
    assert!(listed.len() > 3, "more than one page");
    assert_eq!(wrote["rows"].as_u64(), Some(listed.len() as u64));
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("id,kind,status,deviceId,deviceName,"), "{}", lines[0]);
    assert_eq!(lines.len(), listed.len() + 1);
    for (line, d) in lines[1..].iter().zip(listed) {
        let device = d["deviceId"].as_str().unwrap();
        assert!(line.starts_with(&format!("{},lora,DONE,{device},{},", s(&d["id"]), names[device])), "{line}");
    }

    // MQTT bindings: named, and not one password in the file (they are in the listing).
    let path = dir.path().join("mqtt.csv");
    let wrote = env.json(&["bindings", "mqtt", "list", "--csv", path.to_str().unwrap()]);
    let bound = env.json(&["bindings", "mqtt", "list", "--reveal-secrets"]);
    let bound = bound.as_array().unwrap();
    assert_eq!(wrote["rows"].as_u64(), Some(bound.len() as u64));
    let text = std::fs::read_to_string(&path).unwrap();
    for b in bound {
        let line = text.lines().find(|l| l.starts_with(s(&b["id"]))).unwrap();
        assert!(line.contains(&format!(",{},", names[b["deviceId"].as_str().unwrap()])), "{line}");
        if let Some(p) = b["password"].as_str() {
            assert!(!text.contains(p), "a password in the CSV");
        }
    }

    // One page by cursor and a CSV of all pages do not go together.
    let refused = env.run(&["downlinks", "list", "--cursor", "abc", "--csv", "x.csv"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}
