//! `dcs sim demo-key`: the reseller's key where scripts read it, and every demo key with its
//! client, each one that signs in seeing its own client's data only.

mod common;

use common::{dcs, run_config, s, Sim};
use std::collections::BTreeSet;

use dcs_sim::store::ModuleQuery;
use dcs_sim::{SimOptions, Simulator};
use serde_json::Value;

fn demo_keys_json(seed: u64) -> Value {
    let out = dcs().args(["sim", "demo-key", "--seed", &seed.to_string(), "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn demo_key_lists_every_key_and_keeps_the_resellers_at_the_top_level() {
    let v = demo_keys_json(3);
    // Backwards compatible: scripts/lib.sh and tests/e2e/conftest.py read these two.
    assert_eq!(v["clientId"], "sim-reseller");
    let secret = s(&v["clientSecret"]).to_owned();
    assert_eq!(v["tenant"], dcs_sim::seed::reseller_id(3).to_string());

    let keys = v["keys"].as_array().unwrap();
    assert_eq!(keys[0]["clientId"], "sim-reseller");
    assert_eq!(keys[0]["clientSecret"], secret.as_str());
    for (id, client) in [
        ("sim-northwind", "Northwind Utilities"),
        ("sim-contoso", "Contoso Logistics"),
        ("sim-fabrikam", "Fabrikam Farms"),
        ("sim-tailspin", "Tailspin Toys"),
        ("sim-no-customer-management", "Acme IoT Reseller"),
    ] {
        let k = keys.iter().find(|k| k["clientId"] == id).unwrap_or_else(|| panic!("{id} missing: {v}"));
        assert_eq!(k["clientName"], client, "{k}");
        assert!(s(&k["clientSecret"]).starts_with(&secret), "{k}");
        assert!(!s(&k["purpose"]).is_empty());
    }

    // The human output names every key beside its client.
    let out = dcs().args(["sim", "demo-key", "--seed", "3"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(&format!("client id: sim-reseller\nsecret:    {secret}\n")), "{text}");
    for k in keys {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{} ", s(&k["clientId"]))))
            .unwrap_or_else(|| panic!("{k}: {text}"));
        assert!(line.contains(s(&k["clientName"])) && line.contains(s(&k["clientSecret"])), "{line}");
    }
}

#[test]
fn a_customer_key_from_demo_key_signs_in_and_sees_its_own_modules_only() {
    let sim = Sim::start(&run_config(), &["--seed", "4", "--devices-per-client", "20"]);
    let v = demo_keys_json(4);
    let local = Simulator::new(SimOptions { seed: 4, devices_per_client: 20, ..Default::default() }).unwrap();
    let keys = v["keys"].as_array().unwrap();
    for id in ["sim-northwind", "sim-tailspin"] {
        let k = keys.iter().find(|k| k["clientId"] == id).unwrap();
        let out = dcs()
            .args(["--base-url", &sim.url, "--client-id", id, "firmware", "modules", "list", "--json", "--all"])
            .env("DCS_CLIENT_SECRET", s(&k["clientSecret"]))
            .output()
            .unwrap();
        assert!(out.status.success(), "{id}: {}", common::stderr(&out));
        let modules: Value = serde_json::from_slice(&out.stdout).unwrap();
        let seen: BTreeSet<String> = modules.as_array().unwrap().iter().map(|m| s(&m["id"]).to_owned()).collect();
        // Exactly the modules the key's own client owns (the same seed in process).
        let tenant: uuid::Uuid = s(&k["tenant"]).parse().unwrap();
        let owned: BTreeSet<String> = local
            .store()
            .list_modules(&ModuleQuery { owner: tenant, limit: 1000, ..Default::default() })
            .unwrap()
            .into_iter()
            .map(|m| m.id.to_string())
            .collect();
        assert!(!owned.is_empty(), "{id}");
        assert_eq!(seen, owned, "{id}");
    }
}
