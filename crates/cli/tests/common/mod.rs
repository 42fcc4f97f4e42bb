//! What the CLI's integration tests share: `dcs` with nothing of the caller's environment, and
//! `dcs sim` in a child process on a free port. Each test file has `mod common;`.

#![allow(dead_code)] // each test file is its own crate and uses only part of this

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

/// `dcs` with `config` as its config file, none of the caller's DCS_* settings, and no stdin.
pub fn bare(config: &Path) -> Command {
    let mut c = Command::cargo_bin("dcs").unwrap();
    for var in [
        "DCS_BASE_URL",
        "DCS_AUTH_URL",
        "DCS_CLIENT_ID",
        "DCS_CLIENT_SECRET",
        "DCS_PROFILE",
        "DCS_APP_KEY",
        "DCS_SHARED_SECRET",
        "DCS_MQTT_PASSWORD",
        "DCS_DATA_DIR",
    ] {
        c.env_remove(var);
    }
    c.env("DCS_CONFIG", config);
    c.stdin(Stdio::null());
    c
}

/// Never the user's own profiles: a config file of this test run that no test writes.
pub fn run_config() -> PathBuf {
    std::env::temp_dir().join(format!("dcs-cli-tests-{}/config.toml", std::process::id()))
}

/// [`bare`] with the config file of this test run.
pub fn dcs() -> Command {
    bare(&run_config())
}

/// `dcs sim --port 0 ARGS...` in a child process, stopped when dropped.
pub struct Sim {
    child: Child,
    /// Kept open: the simulator prints more lines, and a closed pipe would end it.
    stdout: BufReader<ChildStdout>,
    /// Its base URL, from the first line it prints.
    pub url: String,
}

/// The simulator variant the tests run against: `DCS_SIM_VARIANT` (`reference` when unset, `alt`
/// for the second pass of `scripts/test-session.sh`). `dcs` commands that embed the simulator
/// read the same variable, which [`bare`] leaves in place.
pub fn variant() -> String {
    match std::env::var("DCS_SIM_VARIANT") {
        Ok(v) if !v.trim().is_empty() => v.trim().to_owned(),
        _ => "reference".to_owned(),
    }
}

/// Whether the tests run against the alt variant (for the few assertions of a choice the
/// variants make differently; each branch asserts its own variant's behaviour).
pub fn alt() -> bool {
    variant() == "alt"
}

/// The set-target operation of the simulator variant, as `dcs sim` prints it for `dcs profile
/// add` (A-38, A-38 (alt)).
pub fn sim_set_target() -> [&'static str; 6] {
    if alt() {
        [
            "--set-target-method",
            "PUT",
            "--set-target-path",
            "/firmware/devices/{deviceId}/modules/{moduleId}/target",
            "--set-target-body",
            r#"{"version": {version}}"#,
        ]
    } else {
        [
            "--set-target-method",
            "PUT",
            "--set-target-path",
            "/firmware/states/{deviceId}/{moduleId}",
            "--set-target-body",
            r#"{"targetFirmwareVersion": {version}}"#,
        ]
    }
}

impl Sim {
    /// Starts `dcs sim --port 0 --variant <variant()> ARGS...` with `config` as its config file
    /// and waits until it prints the URL it listens on.
    pub fn start(config: &Path, args: &[&str]) -> Sim {
        let mut child = bare(config)
            .args(["sim", "--port", "0", "--variant", &variant()])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        // Owned before anything can fail, so a failed start stops the child too.
        let mut sim = Sim { child, stdout, url: String::new() };
        let mut first = String::new();
        sim.stdout.read_line(&mut first).unwrap();
        sim.url = first.trim().rsplit(' ').next().unwrap().to_owned();
        assert!(sim.url.starts_with("http://127.0.0.1:"), "{first}");
        sim
    }
}

impl Drop for Sim {
    /// Stops it as a user does, so that it removes its temporary store; killed if it has not
    /// ended within ten seconds.
    fn drop(&mut self) {
        #[cfg(unix)]
        if signal(&self.child, libc::SIGTERM) && ended_within(&mut self.child, Duration::from_secs(10)).is_some() {
            return;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `signal` to `child`; whether it was delivered.
#[cfg(unix)]
pub fn signal(child: &Child, signal: i32) -> bool {
    // SAFETY: kill(2) on a child not yet waited for, so its pid is still its own.
    unsafe { libc::kill(child.id() as i32, signal) == 0 }
}

/// `child`'s exit status if it ends within `limit`; `None` if it still runs then.
pub fn ended_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let asked = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if asked.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A command's standard error, as text.
/// Writes `input` to the child's standard input, closes it, and waits for the output. A dcs
/// that refuses its arguments exits without reading its input: the pipe it closed is no error.
pub fn feed(mut child: Child, input: &str) -> Output {
    if let Err(e) = child.stdin.take().unwrap().write_all(input.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "writing dcs's standard input: {e}");
    }
    child.wait_with_output().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A JSON string's text; panics on any other value.
pub fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}
