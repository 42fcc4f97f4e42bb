//! What the user hands over in files or long fields: the profiles file (TOML), a device list
//! (`--device-list`, the rollout form's pasted list), and the SenML records of a downlink.
//! - A profiles file that reads has only profiles that pass their checks, each name once; the
//!   text it is saved as reads back the same.
//! - A device list's entries are non-empty and hold no separator; the ids that parse, written
//!   one a line, parse to the same ids in the same order.
//! - SenML records the client accepts each have a name `n`, and are sent as given.
#![no_main]

use dcs_api::downlinks::DownlinkMethod;
use dcs_console::Config;
use dcs_model::DeviceId;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn profiles_file(s: &str) {
    let Ok(config) = Config::parse(s) else { return };
    for (i, p) in config.profiles.iter().enumerate() {
        assert!(p.check().is_empty(), "{s:?}");
        assert!(config.profiles[..i].iter().all(|q| q.name != p.name), "{s:?}: `{}` twice", p.name);
    }
    let text = config.to_text().expect("a read configuration is written");
    assert_eq!(Config::parse(&text).as_ref(), Ok(&config), "{s:?} saved as {text:?}");
}

fn device_list(s: &str) {
    let entries = DeviceId::parse_list(s);
    let ids: Vec<DeviceId> = entries.iter().filter_map(|(_, id)| id.clone().ok()).collect();
    for (e, _) in &entries {
        assert!(!e.is_empty() && !e.contains(|c: char| c.is_whitespace() || c == ',' || c == ';'), "{e:?}");
    }
    let written: Vec<String> = ids.iter().map(DeviceId::to_string).collect();
    let again: Vec<DeviceId> =
        DeviceId::parse_list(&written.join("\n")).into_iter().map(|(_, id)| id.unwrap()).collect();
    assert_eq!(again, ids, "{s:?}");
}

fn senml(data: &[u8]) {
    let Ok(Value::Array(records)) = serde_json::from_slice::<Value>(data) else { return };
    let method = DownlinkMethod::senml("urn:dev:imei:350000000000001:", records.clone());
    if let Ok(body) = method.to_json() {
        assert!(!records.is_empty() && records.iter().all(|r| r.get("n").is_some_and(Value::is_string)));
        assert_eq!(body["records"], Value::Array(records));
    }
}

fuzz_target!(|data: &[u8]| {
    senml(data);
    let Ok(s) = std::str::from_utf8(data) else { return };
    profiles_file(s);
    device_list(s);
});
