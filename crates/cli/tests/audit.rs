//! `dcs audit`: writes made with `dcs` are listed with their outcomes, exported, and a byte
//! changed in the log file is named by `dcs audit verify`.

use serde_json::Value;

mod common;

fn run(c: &mut std::process::Command) -> std::process::Output {
    c.output().expect("dcs runs")
}

#[test]
fn writes_are_listed_exported_and_an_edited_entry_is_named() {
    let data = tempfile::tempdir().unwrap();
    let dcs = || {
        let mut c = common::dcs();
        c.env("DCS_DATA_DIR", data.path());
        c
    };
    let modules = run(dcs().args(["--json", "firmware", "modules", "list"]));
    assert!(modules.status.success(), "{}", String::from_utf8_lossy(&modules.stderr));
    let modules: Value = serde_json::from_slice(&modules.stdout).unwrap();
    let module = &modules.as_array().unwrap()[0];
    let (module_id, spec) = (module["id"].as_str().unwrap(), module["deviceSpecificationId"].as_str().unwrap());
    let create = |version: &str| {
        run(dcs().args([
            "firmware",
            "packages",
            "create",
            "--module-id",
            module_id,
            "--device-specification-id",
            spec,
            "--firmware-version",
            version,
        ]))
    };
    assert!(create("61.0.0").status.success());
    // A version the module has: the service refuses it, and the log says so.
    let packages = run(dcs().args(["--json", "firmware", "packages", "list", "--module-id", module_id]));
    let packages: Value = serde_json::from_slice(&packages.stdout).unwrap();
    let existing = packages[0]["firmwareVersion"].as_str().expect("the module has a package").to_owned();
    let again = create(&existing);
    assert!(!again.status.success());
    // Refused before anything is sent: nothing recorded.
    assert_eq!(create("not a version!").status.code(), Some(2));

    let listed = run(dcs().args(["--json", "audit", "list"]));
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let records = listed["records"].as_array().unwrap();
    let seen: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|r| (r["operation"].as_str().unwrap(), r["result"].as_str().unwrap(), r["source"].as_str().unwrap()))
        .collect();
    assert_eq!(seen, [("package.create", "refused", "cli"), ("package.create", "done", "cli")]);
    assert_eq!(records[0]["targets"], serde_json::json!([module_id, existing]));
    assert_eq!(records[0]["status"], 409);
    assert_eq!(records[1]["status"], 201);

    // A filter that names a bad value is refused with the field and its rule.
    let bad = run(dcs().args(["audit", "list", "--result", "perhaps"]));
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("result: must be one of"));

    let out = data.path().join("export.jsonl");
    assert!(run(dcs().args(["audit", "export", "--format", "jsonl"]).arg(&out)).status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 2);

    let ok = run(dcs().args(["audit", "verify"]));
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("4 entries, the chain is whole"));

    // One byte of the third entry (the second write) changed: that entry is named.
    let path = data.path().join("audit.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    let third = bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(1).unwrap().0 + 1;
    let at = third + bytes[third..].windows(9).position(|w| w == b"\"targets\"").unwrap() + 1;
    bytes[at] = b'T';
    std::fs::write(&path, bytes).unwrap();
    let broken = run(dcs().args(["audit", "verify"]));
    assert_eq!(broken.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&broken.stderr);
    assert!(msg.contains("entry 3 (line 3) is broken") && msg.contains("changed after it was written"), "{msg}");
}
