//! The device page against a real simulator over HTTP (the variant of `DCS_SIM_VARIANT`): a
//! device asked for by its IMEI or DevEUI URN shows its states per module as the service lists
//! them, the state a rollout's target replaced, the rollout, and the downlinks and bindings the
//! service holds for it, each kind's found by reading the whole list; a malformed id names the
//! field, and an unknown one says the service knows no such device.

use std::collections::BTreeSet;

use dcs_api::firmware::StateFilter;
use dcs_api::model::{BindingKind, DeviceId};
use dcs_console::bindings::{self, BindingPageRequest};
use dcs_console::device_page::{self, PER_KIND};
use dcs_console::downlinks::DownlinkKind;
use dcs_console::fleet::query;
use dcs_console::fleet::rollout::{self, DeviceChoice, RolloutPlan, StepOutcome};
use dcs_console::fleet::scan::{self, ScanKind};
use dcs_console::set_target::SetTarget;
use dcs_console::{devices, simulator, Error};
use dcs_sim::SimOptions;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

mod common;

/// Whether `id` (as a list shows it) names the device.
fn names(id: &str, uuid: Uuid, imei: Option<&str>, eui: Option<&str>) -> bool {
    match DeviceId::parse(id) {
        Ok(DeviceId::Uuid(u)) => u == uuid,
        Ok(DeviceId::Imei { digits, .. }) => imei == Some(digits.as_str()),
        Ok(DeviceId::DevEui { hex, .. }) => eui.is_some_and(|e| e.eq_ignore_ascii_case(&hex)),
        _ => id == uuid.to_string(),
    }
}

#[tokio::test]
async fn a_device_by_its_network_id_shows_its_states_history_rollout_downlinks_and_bindings() {
    let variant = simulator::variant_from_env().unwrap();
    let (_sim, running, client) =
        common::start(SimOptions { devices_per_client: 60, speed: 3000.0, variant, ..Default::default() }).await;
    let (db, scope) = common::fleet_db("sim", running.base_url());
    let cancel = CancellationToken::new();
    let refresh = |kind| scan::refresh(&client, &db, scope, kind, &cancel, |_| {});
    refresh(ScanKind::Full).await.unwrap();
    let dir = devices::load(&client).await.unwrap();

    // The device with a network id that has the most connection downlinks.
    let mut lists = Vec::new();
    for kind in DownlinkKind::ALL {
        lists.push((kind, common::all_downlinks(&client, kind, 50).await));
    }
    let device = dir
        .search("", 0, 10_000)
        .0
        .into_iter()
        .filter(|d| d.imei.is_some() || d.dev_eui.is_some())
        .max_by_key(|d| {
            lists
                .iter()
                .flat_map(|(_, l)| l)
                .filter(|x| names(&x.device, d.uuid, d.imei.as_deref(), d.dev_eui.as_deref()))
                .count()
        })
        .expect("a device with an IMEI or DevEUI");
    let (imei, eui) = (device.imei.as_deref(), device.dev_eui.as_deref());
    let asked = match imei {
        Some(i) => format!("urn:dev:imei:{i}:"),
        None => format!("urn:dev:deveui:{}", eui.unwrap().to_ascii_uppercase()),
    };

    // Before any scan (a fleet database of its own, empty), its states are the service's, read now.
    let (empty, empty_scope) = common::fleet_db("other", running.base_url());
    let unscanned = device_page::page(&client, &dir, &empty, empty_scope, &asked).await.unwrap();
    assert!(unscanned.states_from_service && !unscanned.states.is_empty(), "{unscanned:?}");
    assert!(unscanned.states.iter().all(|s| s.history.is_empty()));

    // A rollout of one wave over this device's first module, to a version it is not targeting.
    let before = device_page::page(&client, &dir, &db, scope, &asked).await.unwrap();
    let held = before.states.first().expect("the device has a firmware state").clone();
    let module = held.module_id.clone();
    let version = query::packages(&db, scope, &module)
        .unwrap()
        .into_iter()
        .map(|p| p.version)
        .find(|v| held.target.as_deref() != Some(v.as_str()))
        .unwrap();
    let plan = RolloutPlan {
        module_id: module.clone(),
        version: version.clone(),
        devices: DeviceChoice::List { text: asked.clone() },
        waves: vec![100.0],
        success_threshold: 10.0,
        error_threshold: 100.0,
        schedule: None,
        approval: false,
        hang_minutes: None,
        retry: None,
        late: Default::default(),
    };
    let (preview, devs) = rollout::preview(&client, &db, scope, &plan).await.unwrap();
    assert!(preview.problems.is_empty(), "{:?}", preview.problems);
    let id = rollout::create(&client, &db, scope, &plan, &devs).unwrap();
    let outcome = rollout::advance(
        &client,
        Some(&SetTarget::simulator_for(variant)),
        &db,
        &id,
        &rollout::Driver::new(rollout::DriverKind::Cli),
    )
    .await
    .unwrap();
    assert!(matches!(outcome, StepOutcome::WaveStarted { .. }), "{outcome:?}");
    refresh(ScanKind::Incremental).await.unwrap();

    let page = device_page::page(&client, &dir, &db, scope, &asked).await.unwrap();
    assert!(page.problems.is_empty(), "{:?}", page.problems);
    assert!(!page.states_from_service);
    assert_eq!(
        unscanned.states.iter().map(|s| &s.module_id).collect::<BTreeSet<_>>(),
        page.states.iter().map(|s| &s.module_id).collect::<BTreeSet<_>>()
    );
    assert_eq!((page.uuid, page.known, page.name.as_deref()), (device.uuid, true, Some(device.name.as_str())));
    assert_eq!(page.id, asked);
    assert!(page.forms.iter().any(|f| f.value == device.uuid.to_string()));
    if let Some(i) = imei {
        assert!(page.forms.iter().any(|f| f.value == format!("urn:dev:imei:{i}")));
    }

    // Its states: those the service lists for it, one per module.
    let (listed, _) = client
        .firmware()
        .states_page(&StateFilter { device_id: Some(device.uuid.to_string()), limit: Some(100), ..Default::default() })
        .await
        .unwrap();
    let modules: BTreeSet<String> = listed.items.iter().map(|s| s.module_id.to_string()).collect();
    assert_eq!(page.states.iter().map(|s| s.module_id.clone()).collect::<BTreeSet<_>>(), modules);
    let s = page.states.iter().find(|s| s.module_id == module).unwrap();
    assert_eq!(s.target.as_deref(), Some(version.as_str()), "{:?}", page.rollouts);
    let left = s.history.last().expect("the state before the rollout is kept");
    assert_eq!(left.target, held.target, "{held:?} {:?}", s.history);
    assert_eq!(page.rollouts.len(), 1);
    let r = &page.rollouts[0];
    assert_eq!((r.rollout_id.as_str(), r.version.as_str(), r.wave), (id.as_str(), version.as_str(), 1));
    assert!(r.set_at.is_some() && r.error.is_none(), "{r:?}");

    // Its downlinks: of each kind, those of the whole list that name it (at most PER_KIND).
    for (kind, list) in &lists {
        let want: BTreeSet<String> =
            list.iter().filter(|x| names(&x.device, device.uuid, imei, eui)).map(|x| x.id.clone()).collect();
        let got: BTreeSet<String> = page.downlinks.iter().filter(|d| d.kind == *kind).map(|d| d.id.clone()).collect();
        if want.len() <= PER_KIND as usize {
            assert_eq!(got, want, "{kind:?}");
        } else {
            assert!(got.len() == PER_KIND as usize && got.is_subset(&want), "{kind:?}");
        }
    }
    assert!(!page.downlinks.is_empty(), "the device picked has downlinks");
    assert!(page.downlinks.windows(2).all(|w| w[0].created_at >= w[1].created_at), "newest first");

    // Its bindings: of each kind, those of the whole list that are its.
    for kind in BindingKind::ALL {
        let all = bindings::page(&client, kind, &BindingPageRequest { limit: Some(1000), ..Default::default() })
            .await
            .unwrap()
            .items;
        let want: BTreeSet<Uuid> =
            all.iter().filter(|b| names(&b.device_id, device.uuid, imei, eui)).map(|b| b.id).collect();
        let got: BTreeSet<Uuid> = page.bindings.iter().filter(|b| b.kind == kind).map(|b| b.id).collect();
        assert_eq!(got, want, "{kind:?}");
    }

    // A malformed id names the field; an unknown IMEI says so; nothing was written for either.
    let bad = device_page::page(&client, &dir, &db, scope, "imei:12").await.unwrap_err();
    assert!(matches!(&bad, Error::Invalid(f) if f[0].field == "id"), "{bad:?}");
    let unknown = device_page::page(&client, &dir, &db, scope, "imei:999999999999999").await.unwrap_err();
    assert!(unknown.to_string().contains("knows no device"), "{unknown}");
    let huge = device_page::page(&client, &dir, &db, scope, &"imei:1".repeat(100_000)).await.unwrap_err();
    assert!(matches!(&huge, Error::Invalid(f) if f[0].field == "id" && f[0].rule.len() < 200), "{huge:?}");
}
