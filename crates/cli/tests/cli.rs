//! `dcs` as a user runs it: the binary, its output and exit codes, against a simulator.

mod common;

use std::process::Stdio;

use common::{dcs, run_config, Sim};
use dcs_sim::store::ModuleQuery;
use dcs_sim::{SimOptions, Simulator};
use serde_json::Value;

/// Names of the demo reseller's modules for `seed`, in the service's default order.
fn expected_names(seed: u64) -> Vec<String> {
    let sim = Simulator::new(SimOptions { seed, ..Default::default() }).unwrap();
    let owner = sim.demo_key().client_id;
    sim.store()
        .list_modules(&ModuleQuery { owner, limit: 10_000, ..Default::default() })
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect()
}

fn names(json: &[u8]) -> Vec<String> {
    let v: Value = serde_json::from_slice(json).expect("stdout is JSON");
    v.as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap().to_owned()).collect()
}

/// `dcs sim` in a child process on a free port.
fn spawn_sim(seed: u64) -> Sim {
    Sim::start(&run_config(), &["--seed", &seed.to_string()])
}

fn demo_secret(seed: u64) -> String {
    let out = dcs().args(["sim", "demo-key", "--seed", &seed.to_string(), "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["clientId"], "sim-reseller");
    v["clientSecret"].as_str().unwrap().to_owned()
}

#[test]
fn lists_modules_of_an_in_process_simulator_with_no_configuration() {
    let out = dcs().args(["firmware", "modules", "list", "--json", "--all", "--limit", "4"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(names(&out.stdout), expected_names(1));

    let table = dcs().args(["firmware", "modules", "list"]).output().unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.starts_with("ID"), "{text}");
    assert_eq!(text.lines().count(), expected_names(1).len() + 1);
}

#[test]
fn lists_modules_of_a_standalone_simulator_over_http() {
    let sim = spawn_sim(5);
    let out = dcs()
        .args([
            "--base-url",
            &sim.url,
            "--client-id",
            "sim-reseller",
            "firmware",
            "modules",
            "list",
            "--json",
            "--all",
            "--limit",
            "2",
        ])
        .env("DCS_CLIENT_SECRET", demo_secret(5))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(names(&out.stdout), expected_names(5));
}

#[test]
fn errors_go_to_stderr_with_an_exit_code_per_category() {
    let sim = spawn_sim(1);
    let out = dcs()
        .args(["--base-url", &sim.url, "--client-id", "sim-reseller", "--json", "firmware", "modules", "list"])
        .env("DCS_CLIENT_SECRET", "wrong")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "authentication failures exit with 3");
    assert!(out.stdout.is_empty());
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "wrong_credentials");

    // Only the reference's sort syntax is the client's to check (the fields are the service's).
    let out = dcs().args(["firmware", "modules", "list", "--sort", "colour,"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "invalid input exits with 2");
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(msg.contains("sort: write field names separated by commas"), "{msg}");

    let out = dcs().args(["--base-url", &sim.url, "firmware", "modules", "list"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--client-id"));
}

/// Needs a Secret Service: the test command runs it inside a D-Bus session with gnome-keyring.
#[test]
fn a_profiles_secret_lives_in_the_keychain_and_is_used_from_there() {
    use std::io::Write;
    let sim = spawn_sim(1);
    let profile = format!("cli-test-{}", std::process::id());
    let mut set = dcs()
        .args(["auth", "set-secret", "--profile", &profile])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(set.stdin.take().unwrap(), "{}", demo_secret(1)).unwrap();
    let out = set.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // No DCS_CLIENT_SECRET: the secret comes from the keychain.
    let check = dcs()
        .args(["--profile", &profile, "--base-url", &sim.url, "--client-id", "sim-reseller", "auth", "check"])
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    assert!(!String::from_utf8_lossy(&check.stdout).contains(&demo_secret(1)), "the secret is never printed");

    assert!(dcs().args(["auth", "forget", "--profile", &profile]).output().unwrap().status.success());
    let gone = dcs()
        .args(["--profile", &profile, "--base-url", &sim.url, "--client-id", "sim-reseller", "auth", "check"])
        .output()
        .unwrap();
    assert!(!gone.status.success());
    assert!(
        String::from_utf8_lossy(&gone.stderr).contains("dcs auth set-secret"),
        "{}",
        String::from_utf8_lossy(&gone.stderr)
    );
}

/// `dcs sim` refuses settings the simulator cannot run with before it listens: an error naming
/// the flag and its rule, exit code 2, instead of a server whose clock panics or a division
/// by zero while seeding.
#[test]
fn sim_refuses_settings_it_cannot_run_with_naming_the_flag() {
    for (args, flag) in [
        (["--speed", "1e308"], "--speed: "),
        (["--speed", "inf"], "--speed: "),
        (["--token-lifetime", "18446744073709551615"], "--token-lifetime: "),
        (["--devices-per-client", "0"], "--devices-per-client: "),
    ] {
        let mut child =
            dcs().args(["sim", "--port", "0"]).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let Some(status) = common::ended_within(&mut child, std::time::Duration::from_secs(20)) else {
            child.kill().unwrap();
            panic!("`dcs sim {}` started instead of refusing", args.join(" "));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

/// `dcs sim` on an address other computers reach says loudly what anyone there can do; on
/// loopback it says nothing of the kind.
#[test]
fn sim_warns_when_it_listens_beyond_this_computer() {
    for (host, warned) in [("0.0.0.0", true), ("127.0.0.1", false)] {
        let mut child = dcs()
            .args(["sim", "--port", "0", "--host", host])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The banner's first line says it listens; the warning, if any, came before it.
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
        assert!(line.contains("listening on"), "{line}");
        child.kill().unwrap();
        child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(err.contains("WARNING: the simulator listens on"), warned, "{host}: {err}");
        if warned {
            assert!(err.contains("need no token") && err.contains("seed (1)"), "{err}");
        }
    }
}

/// The service options come from the environment too (DCS_PROFILE, DCS_BASE_URL...): set there
/// for other commands, they must not stop `dcs sim`, which refuses them only on its command line.
#[test]
fn sim_ignores_service_options_from_the_environment_and_refuses_them_given() {
    let out = dcs()
        .args(["sim", "--help"])
        .env("DCS_PROFILE", "x")
        .env("DCS_BASE_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("--port") && !help.contains("--profile") && !help.contains("--customer"), "{help}");

    let out =
        dcs().args(["sim", "demo-key", "--json"]).env("DCS_PROFILE", "x").env("DCS_CLIENT_ID", "y").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(serde_json::from_slice::<Value>(&out.stdout).unwrap()["clientId"].is_string());

    let out = dcs().args(["sim", "--customer", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--customer") && err.contains("does not apply to `dcs sim`"), "{err}");
}

/// The `dcs-sim-*` folders in `tmp`: the simulators' temporary stores.
#[cfg(unix)]
fn temporary_stores(tmp: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("dcs-sim-"))
        .collect();
    names.sort();
    names
}

/// `dcs sim` with its own TMPDIR, once it listens (its banner's first line read).
#[cfg(unix)]
fn sim_in(
    tmp: &std::path::Path,
    args: &[&str],
) -> (std::process::Child, std::io::BufReader<std::process::ChildStdout>) {
    let mut child = dcs()
        .args(["sim", "--port", "0"])
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    (child, out)
}

/// Waits up to a minute for `child` to end; kills it and fails if it does not.
#[cfg(unix)]
fn ended(child: &mut std::process::Child) -> std::process::ExitStatus {
    common::ended_within(child, std::time::Duration::from_secs(60)).unwrap_or_else(|| {
        child.kill().unwrap();
        panic!("dcs sim did not end on its signal");
    })
}

/// Sends `sig` to `child`, which must still run.
#[cfg(unix)]
fn signal(child: &std::process::Child, sig: i32) {
    assert!(common::signal(child, sig), "signal {sig} not delivered");
}

/// A simulator stopped by Ctrl-C, `kill` or a closed terminal removes its temporary store
/// (a gigabyte at a million states), whether it listens already or is still seeding; one that
/// is killed outright leaves it to the next simulator, which removes it and no live one's.
#[cfg(unix)]
#[test]
fn sim_leaves_no_temporary_store_behind_however_it_is_stopped() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let tmp = tempfile::tempdir().unwrap();
        let (mut child, mut out) = sim_in(tmp.path(), &[]);
        let mut line = String::new();
        std::io::BufRead::read_line(&mut out, &mut line).unwrap();
        assert!(line.contains("listening on"), "{line}");
        assert_eq!(temporary_stores(tmp.path()).len(), 1);
        signal(&child, sig);
        let status = ended(&mut child);
        assert!(status.success(), "signal {sig}: {status:?}");
        assert_eq!(temporary_stores(tmp.path()), Vec::<String>::new(), "signal {sig}");
    }

    // Stopped while seeding: 20,000 devices a client take seconds to seed, far longer than
    // the wait here for the store's database to appear.
    let tmp = tempfile::tempdir().unwrap();
    let (mut child, _out) = sim_in(tmp.path(), &["--devices-per-client", "20000"]);
    let started = std::time::Instant::now();
    while !temporary_stores(tmp.path()).iter().any(|d| tmp.path().join(d).join("sim.sqlite").exists()) {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "no temporary store appeared");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    signal(&child, libc::SIGTERM);
    let status = ended(&mut child);
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{err}");
    assert!(err.contains("stopped while seeding"), "{err}");
    assert_eq!(temporary_stores(tmp.path()), Vec::<String>::new());

    // Killed outright: nothing of it runs to remove the folder, so the next simulator does,
    // and keeps the folder of the one still running.
    let tmp = tempfile::tempdir().unwrap();
    let mut line = String::new();
    let (mut killed, mut out) = sim_in(tmp.path(), &[]);
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    killed.kill().unwrap();
    killed.wait().unwrap();
    let abandoned = temporary_stores(tmp.path());
    assert_eq!(abandoned.len(), 1, "{abandoned:?}");
    let (mut live, mut out) = sim_in(tmp.path(), &[]);
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let left = temporary_stores(tmp.path());
    assert_eq!(left.len(), 1, "{left:?}");
    assert_ne!(left, abandoned, "the killed simulator's store was kept");
    let (mut third, mut out) = sim_in(tmp.path(), &[]);
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let both = temporary_stores(tmp.path());
    assert_eq!(both.len(), 2, "{both:?}");
    assert!(both.contains(&left[0]), "the live simulator's store was removed: {both:?}");
    for child in [&mut live, &mut third] {
        signal(child, libc::SIGTERM);
        assert!(ended(child).success());
    }
    assert_eq!(temporary_stores(tmp.path()), Vec::<String>::new());
}
