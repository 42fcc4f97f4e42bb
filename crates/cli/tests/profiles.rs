//! `dcs profile ...` and `--profile`/`--customer` as a user runs them against `dcs sim` in a child
//! process, with the config file in a temporary folder and secrets in the real OS keychain.
//! Needs a Secret Service: the test command runs it inside a D-Bus session with gnome-keyring.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use common::{bare, s, stderr, Sim};
use dcs_sim::{SimOptions, Simulator};
use serde_json::Value;
use uuid::Uuid;

/// `dcs sim` on a free port, a config file of its own, and the customers of the demo reseller.
struct Env {
    sim: Sim,
    _dir: tempfile::TempDir,
    config: PathBuf,
    secret: String,
    /// (id, name) of the demo reseller's customers, sorted by name.
    customers: Vec<(Uuid, String)>,
}

impl Env {
    fn start(seed: u64) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("dcs").join("config.toml");
        let sim = Sim::start(&config, &["--seed", &seed.to_string(), "--devices-per-client", "10"]);
        let local = Simulator::new(SimOptions { seed, devices_per_client: 1, ..Default::default() }).unwrap();
        let reseller = local.demo_key().client_id;
        let mut customers: Vec<(Uuid, String)> = local
            .store()
            .clients()
            .unwrap()
            .into_iter()
            .filter(|c| c.reseller_id == Some(reseller))
            .map(|c| (c.id, c.name))
            .collect();
        customers.sort_by(|a, b| a.1.cmp(&b.1));
        assert!(customers.len() >= 2, "the demo reseller has customers");
        Env { sim, _dir: dir, config, secret: local.demo_key().secret.clone(), customers }
    }

    fn dcs(&self) -> Command {
        bare(&self.config)
    }

    fn run(&self, args: &[&str]) -> Output {
        self.dcs().args(args).output().unwrap()
    }

    /// Runs with `stdin` as standard input.
    fn run_with_input(&self, args: &[&str], stdin: &str) -> Output {
        let child =
            self.dcs().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        common::feed(child, stdin)
    }

    /// Runs and expects success; returns stdout as JSON (`--json` is added).
    fn json(&self, args: &[&str]) -> Value {
        let out = self.dcs().args(args).arg("--json").output().unwrap();
        assert!(out.status.success(), "dcs {args:?}: {}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("dcs {args:?}: not JSON ({e}): {}", stdout(&out)))
    }

    /// `dcs profile add NAME --base-url <sim> --client-id sim-reseller EXTRA...` with the demo
    /// secret on stdin; expects success.
    fn add(&self, name: &str, extra: &[&str]) {
        let mut args = vec!["profile", "add", name, "--base-url", &self.sim.url, "--client-id", "sim-reseller"];
        args.extend_from_slice(extra);
        let out = self.run_with_input(&args, &format!("{}\n", self.secret));
        assert!(out.status.success(), "{}", stderr(&out));
    }

    fn config_text(&self) -> Option<String> {
        std::fs::read_to_string(&self.config).ok()
    }

    fn customer(&self, i: usize) -> (String, Uuid) {
        (self.customers[i].1.clone(), self.customers[i].0)
    }
}

/// A profile name of this test process, so runs never meet in the keychain.
fn name(tag: &str) -> String {
    format!("{tag}-{}", std::process::id())
}

/// The secret the Secret Service holds for `profile`, asked of it directly.
fn keychain(profile: &str) -> Option<String> {
    let out = Command::new("secret-tool")
        .args(["lookup", "service", "dcs-console", "username", &format!("profile:{profile}")])
        .output()
        .expect("secret-tool (libsecret-tools) runs");
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_profile_keeps_its_secret_in_the_keychain_only_and_removing_it_removes_both() {
    let env = Env::start(21);
    let p = name("keep");
    let (first, first_id) = env.customer(0);
    env.add(&p, &["--customer", &format!("{first}={first_id}")]);

    let text = env.config_text().expect("the config file is written");
    assert!(text.contains(&format!("name = \"{p}\"")) && text.contains(&first), "{text}");
    assert!(!text.contains(&env.secret), "the config file holds no secret: {text}");
    assert_eq!(keychain(&p).as_deref(), Some(env.secret.as_str()), "the secret is in the Secret Service");

    let list = env.run(&["profile", "list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let row = stdout(&list).lines().find(|l| l.contains(&p)).map(str::to_owned).expect("listed");
    assert!(row.contains(&env.sim.url) && row.contains("sim-reseller") && row.ends_with("keychain"), "{row}");
    assert!(
        stdout(&list).lines().any(|l| l.starts_with('*') && l.contains("simulator")),
        "the built-in default is marked"
    );
    let listed = env.json(&["profile", "list"]);
    let mine = listed.as_array().unwrap().iter().find(|v| v["name"] == p.as_str()).unwrap();
    assert_eq!((mine["secret"].as_str(), mine["customers"].as_array().unwrap().len()), (Some("keychain"), 1));

    let show = env.run(&["profile", "show", &p]);
    assert!(show.status.success(), "{}", stderr(&show));
    assert!(stdout(&show).contains(&first) && stdout(&show).contains(&first_id.to_string()), "{}", stdout(&show));
    assert!(stdout(&show).contains("security-context header"), "{}", stdout(&show));
    let shown = env.json(&["profile", "show", &p]);
    assert_eq!(shown["customers"][0]["label"], first.as_str());
    assert_eq!(shown["deprecatedSubCustomerMode"], false);
    assert_eq!(shown["audience"], dcs_api::model::SERVICE_AUDIENCE);
    for out in [&list, &show] {
        assert!(!stdout(out).contains(&env.secret) && !stderr(out).contains(&env.secret), "never the secret");
    }
    assert!(!listed.to_string().contains(&env.secret) && !shown.to_string().contains(&env.secret));

    // Without --yes and no terminal: refused, naming what would go; nothing goes.
    let refused = env.run(&["profile", "remove", &p]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains(&format!("profile `{p}`")) && stderr(&refused).contains("keychain"),
        "{}",
        stderr(&refused)
    );
    assert!(keychain(&p).is_some() && env.config_text().unwrap().contains(&p));

    let removed = env.run(&["profile", "remove", &p, "--yes"]);
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert_eq!(keychain(&p), None, "the secret left the keychain");
    assert!(!env.config_text().unwrap().contains(&p));
    assert_eq!(env.run(&["profile", "show", &p]).status.code(), Some(2));
}

#[test]
fn profile_test_says_what_the_token_holds_or_why_not() {
    let env = Env::start(22);
    let p = name("test");
    env.add(&p, &[]);

    let ok = env.run(&["profile", "test", &p]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let text = stdout(&ok);
    for expected in ["OK", "Bearer", "3600 s", "firmware.read", "subject"] {
        assert!(text.contains(expected), "{expected}: {text}");
    }
    assert!(!text.contains("eyJ"), "never the token: {text}");
    let json = env.json(&["profile", "test", &p]);
    assert_eq!(
        (json["ok"].as_bool(), json["tokenType"].as_str(), json["expiresIn"].as_u64()),
        (Some(true), Some("Bearer"), Some(3600))
    );
    assert!(json["scopes"].as_array().unwrap().iter().any(|s| s == "firmware.read"), "{json}");

    // A wrong secret, stored in the keychain: the identity platform's refusal, exit code 3.
    let set = env.run_with_input(&["profile", "edit", &p, "--set-secret"], "not-the-secret\n");
    assert!(set.status.success(), "{}", stderr(&set));
    assert_eq!(keychain(&p).as_deref(), Some("not-the-secret"));
    let wrong = env.run(&["profile", "test", &p]);
    assert_eq!(wrong.status.code(), Some(3), "{}", stderr(&wrong));
    let said = stderr(&wrong);
    assert!(said.contains("Feature user does not exist anymore") && said.contains("secret is incorrect"), "{said}");
    assert!(stdout(&wrong).is_empty());

    // DCS_CLIENT_SECRET overrides the keychain's, for tests and for commands.
    let fixed = env.dcs().args(["profile", "test", &p]).env("DCS_CLIENT_SECRET", &env.secret).output().unwrap();
    assert!(fixed.status.success(), "{}", stderr(&fixed));
    let cmd =
        env.dcs().args(["--profile", &p, "auth", "check"]).env("DCS_CLIENT_SECRET", &env.secret).output().unwrap();
    assert!(cmd.status.success(), "{}", stderr(&cmd));
    assert_eq!(env.run(&["--profile", &p, "auth", "check"]).status.code(), Some(3));
    env.run(&["profile", "remove", &p, "--yes"]);
}

#[test]
fn bad_values_name_the_field_and_change_neither_the_config_nor_the_keychain() {
    let env = Env::start(23);
    let p = name("good");
    env.add(&p, &[]);
    let before = env.config_text().unwrap();
    let (first, first_id) = env.customer(0);
    let bad_url = name("badurl");
    let dup = |label: &str| format!("{}={}", label, Uuid::new_v4());
    // (name, options after --client-id k, what the error names)
    let cases: Vec<(String, Vec<String>, &str)> = vec![
        (bad_url.clone(), vec!["--base-url".into(), "ftp://dcs.example".into()], "baseUrl:"),
        ("bad name".into(), vec![], "name:"),
        (name("badcustomer"), vec!["--customer".into(), "Northwind".into()], "customers[0]:"),
        (
            name("twice"),
            vec!["--customer".into(), dup(&first), "--customer".into(), dup(&first.to_uppercase())],
            "customers[1].label:",
        ),
        (p.clone(), vec![], "exists already"),
    ];
    for (profile, extra, field) in cases {
        let mut args = vec!["profile", "add", &profile, "--client-id", "k"];
        if !extra.iter().any(|a| a == "--base-url") {
            args.extend(["--base-url", env.sim.url.as_str()]);
        }
        args.extend(extra.iter().map(String::as_str));
        let out = env.run_with_input(&args, "some-other-secret\n");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(field), "{args:?}: {}", stderr(&out));
        assert_eq!(env.config_text().unwrap(), before, "{args:?} changed the config file");
        let kept = if profile == p { Some(env.secret.as_str()) } else { None };
        assert_eq!(keychain(&profile).as_deref(), kept, "{args:?} changed the keychain");
    }

    // Edits too: all or nothing, the secret included.
    let bad =
        env.run_with_input(&["profile", "edit", &p, "--base-url", "not a url", "--set-secret"], "some-other-secret\n");
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("baseUrl:"), "{}", stderr(&bad));
    let bad = env.run(&["profile", "edit", &p, "--add-customer", "Nobody=42", "--remove-customer", "Nobody"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("removeCustomer[0]:") && stderr(&bad).contains("addCustomer[0]:"),
        "{}",
        stderr(&bad)
    );
    assert_eq!(env.config_text().unwrap(), before);
    assert_eq!(keychain(&p).as_deref(), Some(env.secret.as_str()));

    // An empty secret stores nothing.
    let empty = env.run_with_input(&["profile", "add", &bad_url, "--base-url", &env.sim.url, "--client-id", "k"], "\n");
    assert_eq!(empty.status.code(), Some(2), "{}", stderr(&empty));
    assert_eq!(env.config_text().unwrap(), before);
    assert_eq!(keychain(&bad_url), None);

    // A good edit changes only what is given.
    let edited = env.json(&[
        "profile",
        "edit",
        &p,
        "--add-customer",
        &format!("{first}={first_id}"),
        "--deprecated-sub-customer-mode",
    ]);
    assert_eq!(
        (edited["baseUrl"].as_str(), edited["clientId"].as_str()),
        (Some(env.sim.url.as_str()), Some("sim-reseller"))
    );
    assert_eq!(edited["customers"][0]["id"], first_id.to_string());
    assert_eq!(edited["deprecatedSubCustomerMode"], true);
    let back = env.json(&[
        "profile",
        "edit",
        &p,
        "--remove-customer",
        &first.to_lowercase(),
        "--no-deprecated-sub-customer-mode",
    ]);
    assert_eq!(
        (back["customers"].as_array().unwrap().len(), back["deprecatedSubCustomerMode"].as_bool()),
        (0, Some(false))
    );
    env.run(&["profile", "remove", &p, "--yes"]);
}

#[test]
fn a_stored_secret_is_not_kept_for_another_base_or_auth_origin() {
    let env = Env::start(29);
    let p = name("origin");
    env.add(&p, &[]);
    let before = env.config_text().unwrap();
    // Another host, port or scheme for the API or for the tokens: the stored secret would go
    // there with the next token request, so the edit is refused until the secret is typed again.
    let elsewhere = "http://127.0.0.1:9";
    for option in ["--base-url", "--auth-url"] {
        let out = env.run(&["profile", "edit", &p, option, elsewhere]);
        assert_eq!(out.status.code(), Some(2), "{option}: {}", stderr(&out));
        assert!(stderr(&out).contains("secret: type the API key's secret again"), "{option}: {}", stderr(&out));
        assert!(stderr(&out).contains("--set-secret"), "{}", stderr(&out));
        assert_eq!(env.config_text().unwrap(), before, "{option} changed the config file");
        assert_eq!(keychain(&p).as_deref(), Some(env.secret.as_str()));
    }
    // The same origin with another path keeps the secret; a new origin with the secret typed
    // stores that one.
    let same = env.run(&["profile", "edit", &p, "--base-url", &format!("{}/", env.sim.url)]);
    assert!(same.status.success(), "{}", stderr(&same));
    let moved = env.run_with_input(&["profile", "edit", &p, "--auth-url", elsewhere, "--set-secret"], "a-new-secret\n");
    assert!(moved.status.success(), "{}", stderr(&moved));
    assert_eq!(keychain(&p).as_deref(), Some("a-new-secret"));
    env.run(&["profile", "remove", &p, "--yes"]);
}

/// Creates a package as the profile's first customer (by label) and checks where it is visible.
fn a_package_lands_at_the_customer_only(env: &Env, p: &str) {
    let (first, first_id) = env.customer(0);
    let (other, _) = env.customer(1);
    let as_first = ["--profile", p, "--customer", first.as_str()];
    let with =
        |who: &[&str], args: &[&str]| -> Vec<String> { who.iter().chain(args).map(|s| (*s).to_owned()).collect() };
    let run = |args: Vec<String>| env.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let json = |args: Vec<String>| env.json(&args.iter().map(String::as_str).collect::<Vec<_>>());

    let modules = json(with(&as_first, &["firmware", "modules", "list"]));
    let m = &modules[0];
    let version = format!("4.{}.0", std::process::id() % 1000);
    let create = [
        "firmware",
        "packages",
        "create",
        "--device-specification-id",
        s(&m["deviceSpecificationId"]),
        "--module-id",
        s(&m["id"]),
    ];
    let made = json(with(&as_first, &[&create[..], &["--firmware-version", &version]].concat()));
    let id = s(&made["id"]).to_owned();

    // Visible to that customer, by label or UUID; not to the reseller itself nor another customer.
    assert!(run(with(&as_first, &["firmware", "packages", "get", &id])).status.success());
    assert!(run(with(&["--profile", p, "--customer", &first_id.to_string()], &["firmware", "packages", "get", &id]))
        .status
        .success());
    assert_eq!(
        run(with(&["--profile", p], &["firmware", "packages", "get", &id])).status.code(),
        Some(5),
        "not visible as yourself"
    );
    let as_other = run(with(&["--profile", p, "--customer", &other], &["firmware", "packages", "get", &id]));
    assert_eq!(as_other.status.code(), Some(5), "not visible as another customer");

    // The confirmation names the customer by label and UUID.
    let refused = run(with(&as_first, &["firmware", "packages", "delete", &id]));
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains(&format!("customer {first} ({first_id})")), "{}", stderr(&refused));
    assert!(run(with(&as_first, &["firmware", "packages", "delete", &id, "--yes"])).status.success());

    // A customer this key is not the reseller of: refused, and the message says which.
    let stranger = Uuid::new_v4().to_string();
    let out = run(with(&["--profile", p, "--customer", &stranger], &["firmware", "modules", "list"]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("acting for customer {stranger}")), "{}", stderr(&out));
    // A label the profile does not know: refused before any request.
    let out = run(with(&["--profile", p, "--customer", "Nobody Inc"], &["firmware", "modules", "list"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("customer:") && stderr(&out).contains(&first), "{}", stderr(&out));
}

fn customer_args(env: &Env) -> Vec<String> {
    env.customers.iter().flat_map(|(id, label)| ["--customer".to_owned(), format!("{label}={id}")]).collect()
}

#[test]
fn a_customer_by_label_acts_in_that_customers_environment() {
    let env = Env::start(24);
    let p = name("reseller");
    let customers = customer_args(&env);
    env.add(&p, &customers.iter().map(String::as_str).collect::<Vec<_>>());
    a_package_lands_at_the_customer_only(&env, &p);
    env.run(&["profile", "remove", &p, "--yes"]);
}

#[test]
fn the_deprecated_mode_switches_context_then_sends_x_client_id() {
    let env = Env::start(25);
    let p = name("legacy");
    let mut args = customer_args(&env);
    args.push("--deprecated-sub-customer-mode".into());
    env.add(&p, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(env.json(&["profile", "show", &p])["deprecatedSubCustomerMode"], true);
    let (_, first_id) = env.customer(0);
    // x-client-id alone, without the context switch: the service refuses it.
    let ad_hoc = [
        "--base-url",
        &env.sim.url,
        "--client-id",
        "sim-reseller",
        "--x-client-id",
        &first_id.to_string(),
        "firmware",
        "modules",
        "list",
    ];
    let before = env.dcs().args(ad_hoc).env("DCS_CLIENT_SECRET", &env.secret).output().unwrap();
    assert_eq!(before.status.code(), Some(4), "{}", stderr(&before));

    a_package_lands_at_the_customer_only(&env, &p);

    // The profile made the context switch for this key, so x-client-id alone works now.
    let after = env.dcs().args(ad_hoc).env("DCS_CLIENT_SECRET", &env.secret).output().unwrap();
    assert!(after.status.success(), "{}", stderr(&after));
    env.run(&["profile", "remove", &p, "--yes"]);
}

#[test]
fn profile_use_changes_what_a_bare_command_talks_to() {
    let env = Env::start(26);
    let p = name("default");
    env.add(&p, &[]);
    let marker = format!("only-in-the-child-{}", std::process::id());
    let (first, _) = env.customer(0);

    let bare_modules = || env.json(&["firmware", "modules", "list", "--all", "--limit", "100"]);
    let in_process = bare_modules();
    let used = env.run(&["profile", "use", &p]);
    assert!(used.status.success(), "{}", stderr(&used));
    assert!(stdout(&env.run(&["profile", "list"])).lines().any(|l| l.starts_with('*') && l.contains(&p)));

    // Bare commands now reach the child simulator (seed 26), which keeps what they make.
    assert_ne!(bare_modules(), in_process, "another data set than the in-process simulator's (seed 1)");
    let m = &bare_modules()[0];
    let spec = s(&m["deviceSpecificationId"]);
    let made = env.json(&[
        "firmware",
        "packages",
        "create",
        "--device-specification-id",
        spec,
        "--module-id",
        s(&m["id"]),
        "--firmware-version",
        &marker,
    ]);
    let id = s(&made["id"]).to_owned();
    assert!(env.run(&["--profile", &p, "firmware", "packages", "get", &id]).status.success());
    // --profile simulator still picks the built-in one, with its labelled customers.
    let sim = env.run(&["--profile", "simulator", "--customer", &first, "firmware", "packages", "get", &id]);
    assert_eq!(sim.status.code(), Some(5), "{}", stderr(&sim));

    let back = env.run(&["profile", "use", "simulator"]);
    assert!(back.status.success(), "{}", stderr(&back));
    assert_eq!(bare_modules(), in_process);
    assert_eq!(env.run(&["firmware", "packages", "get", &id]).status.code(), Some(5));

    let unknown = env.run(&["--profile", "nobody", "firmware", "modules", "list"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("no profile `nobody`") && stderr(&unknown).contains(&p), "{}", stderr(&unknown));
    env.run(&["profile", "remove", &p, "--yes"]);
}

#[test]
fn the_built_in_simulator_knows_its_customers_by_label() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let out = bare(&config)
        .args(["--customer", "northwind utilities", "firmware", "modules", "list", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!serde_json::from_slice::<Value>(&out.stdout).unwrap().as_array().unwrap().is_empty());
    let shown = bare(&config).args(["profile", "show", "simulator", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(
        (v["builtIn"].as_bool(), v["default"].as_bool(), v["secret"].as_str()),
        (Some(true), Some(true), Some("built-in"))
    );
    assert!(v["customers"].as_array().unwrap().iter().any(|c| c["label"] == "Northwind Utilities"), "{v}");
    assert!(!config.exists(), "reading writes nothing");
}

#[test]
fn the_set_target_operation_is_set_checked_shown_tested_and_removed() {
    let env = Env::start(45);
    let p = name("settarget");
    let base = ["--base-url", env.sim.url.as_str(), "--client-id", "sim-reseller", "--no-secret"];
    // Every broken part named at once, and nothing stored.
    let bad = env.run(
        &[
            &["profile", "add", &p][..],
            &base,
            &[
                "--set-target-method",
                "DELETE",
                "--set-target-path",
                "https://elsewhere.example/{deviceId}",
                "--set-target-body",
                r#"{"v": "{version}"}"#,
            ],
        ]
        .concat(),
    );
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    let err = stderr(&bad);
    for part in ["setTarget.method", "PUT, POST or PATCH", "setTarget.path", "setTarget.body", "not inside quotes"] {
        assert!(err.contains(part), "{part} not in {err}");
    }
    assert!(env.config_text().is_none_or(|t| !t.contains(&p)), "nothing stored");

    // A profile without one says so; with the flags it is kept and shown.
    let added = env.run(&[&["profile", "add", &p][..], &base].concat());
    assert!(added.status.success(), "{}", stderr(&added));
    assert!(stdout(&env.run(&["profile", "show", &p])).contains("none: rollouts are unavailable"));
    // The running simulator variant's operation (A-38), the method given in lower case.
    let [_, _, _, path, _, body] = common::sim_set_target();
    let member = serde_json::from_str::<Value>(&body.replace("{version}", "1"))
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let edited = env.run(&[
        "profile",
        "edit",
        &p,
        "--set-target-method",
        "put",
        "--set-target-path",
        path,
        "--set-target-body",
        body,
    ]);
    assert!(edited.status.success(), "{}", stderr(&edited));
    let shown = env.json(&["profile", "show", &p]);
    assert_eq!(shown["setTarget"]["method"], "PUT");
    assert_eq!(shown["setTarget"]["path"], path);
    assert!(env.config_text().unwrap().contains("[profile.setTarget]"));
    let text = stdout(&env.run(&["profile", "show", &p]));
    assert!(text.contains(&format!("PUT {path}")), "{text}");

    // Tried on one device: the version it runs now as its target, so nothing changes.
    let with_secret = |args: &[&str]| env.dcs().args(args).env("DCS_CLIENT_SECRET", &env.secret).output().unwrap();
    let states = with_secret(&["--profile", &p, "firmware", "states", "list", "--limit", "200", "--json"]);
    let states: Value = serde_json::from_slice(&states.stdout).unwrap();
    let quiet = states["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["currentFirmwareVersion"].is_string() && s["targetFirmwareVersion"].is_null())
        .expect("a device with no update under way");
    let (device, module) = (s(&quiet["deviceId"]), s(&quiet["moduleId"]));
    let test = ["profile", "test-set-target", p.as_str(), "--device", device, "--module", module];
    let asked = with_secret(&test);
    assert!(!asked.status.success() && stderr(&asked).contains("without --yes"), "it is a write: {}", stderr(&asked));
    let out = with_secret(&[&test[..], &["--yes", "--json"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["request"], format!("PUT {}", path.replace("{deviceId}", device).replace("{moduleId}", module)));
    let json = |v: &Value| -> Value { serde_json::from_str(s(v)).unwrap() };
    assert_eq!(json(&report["requestBody"])[&member], quiet["currentFirmwareVersion"]);
    assert_eq!(json(&report["answer"])["deviceId"], quiet["deviceId"], "the simulator answers with the state");
    assert_eq!(report["after"]["currentFirmwareVersion"], quiet["currentFirmwareVersion"]);
    // A refusal shows the service's status and detail.
    let other = uuid::Uuid::new_v4().to_string();
    let edited = env.run(&["profile", "edit", &p, "--set-target-path", &format!("{path}/nowhere")]);
    assert!(edited.status.success(), "{}", stderr(&edited));
    let refused = with_secret(&[&test[..], &["--yes"]].concat());
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("404"), "{}", stderr(&refused));
    let unknown = with_secret(&["profile", "test-set-target", &p, "--device", &other, "--module", module, "--yes"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("no firmware state"), "{}", stderr(&unknown));

    // Removed: rollouts and the test say how to add one.
    let removed = env.run(&["profile", "edit", &p, "--no-set-target"]);
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert!(env.json(&["profile", "show", &p]).get("setTarget").is_none_or(Value::is_null));
    let none = with_secret(&[&test[..], &["--yes"]].concat());
    assert_eq!(none.status.code(), Some(2));
    assert!(stderr(&none).contains("has no set-target operation"), "{}", stderr(&none));
    let both = env.run(&["profile", "edit", &p, "--no-set-target", "--set-target-method", "PUT"]);
    assert!(!both.status.success(), "--no-set-target excludes the other flags");
}
