//! The palette's search against a real simulator over HTTP (the variant of `DCS_SIM_VARIANT`):
//! a device by its IMEI or DevEUI (typed whole or in part) and by a fuzzy piece of its name, a
//! module by a fuzzy abbreviation, a package by its version, a downlink and a binding by their
//! id typed whole, an actuator downlink by its external reference.

use dcs_api::model::BindingKind;
use dcs_console::bindings::{self, BindingPageRequest};
use dcs_console::downlinks::{self, DownlinkKind};
use dcs_console::palette::{self, Local, PaletteItem};
use dcs_console::{devices, simulator};
use dcs_sim::SimOptions;

mod common;

fn has(items: &[PaletteItem], kind: &str, id: &str) -> bool {
    items.iter().any(|i| i.kind == kind && i.id == id)
}

#[tokio::test]
async fn the_palette_finds_devices_modules_packages_downlinks_and_bindings() {
    let variant = simulator::variant_from_env().unwrap();
    let (_sim, _running, client) =
        common::start(SimOptions { devices_per_client: 40, variant, ..Default::default() }).await;
    let dir = devices::load(&client).await.unwrap();
    let catalogue = palette::load_catalogue(&client).await.unwrap();
    let local = Local { dir: &dir, catalogue: Some(&catalogue), rollouts: vec![], profiles: vec![], customers: vec![] };

    // A device by its IMEI typed whole (first, exactly), by part of it, and by its name.
    let d = dir.entries().iter().find(|d| d.imei.is_some()).expect("a device with an IMEI");
    let imei = d.imei.clone().unwrap();
    let whole = palette::search_local(&format!("urn:dev:imei:{imei}:"), &local);
    assert_eq!(
        (whole[0].kind.as_str(), whole[0].id.clone(), whole[0].title.clone()),
        ("device", d.uuid.to_string(), d.name.clone())
    );
    assert!(has(&palette::search_local(&imei[5..], &local), "device", &d.uuid.to_string()));
    assert!(has(&palette::search_local(&d.name, &local), "device", &d.uuid.to_string()));

    // A module by a fuzzy piece of its name; a package by module and version.
    let module = catalogue.iter().find(|c| c.item.kind == "module").unwrap().item.clone();
    let initials: String = module.title.split_whitespace().map(|w| &w[..w.len().min(3)]).collect::<Vec<_>>().join("");
    assert!(has(&palette::search_local(&initials, &local), "module", &module.id), "{initials}");
    let package = catalogue.iter().find(|c| c.item.kind == "package").unwrap().item.clone();
    assert!(has(&palette::search_local(&package.title, &local), "package", &package.id));

    // A LoRa downlink and a binding by their id; an actuator downlink by its external reference.
    let lora = downlinks::list(&client, &common::downlink_page(DownlinkKind::Lora, 1)).await.unwrap().items.remove(0);
    let (items, problems) = palette::service_items(&client, &lora.id).await;
    assert!(problems.is_empty(), "{problems:?}");
    assert!(
        items.iter().any(|i| i.kind == "downlink" && i.id == lora.id && i.sub_kind.as_deref() == Some("lora")),
        "{items:?}"
    );
    let binding =
        bindings::page(&client, BindingKind::Mqtt, &BindingPageRequest { limit: Some(1), ..Default::default() })
            .await
            .unwrap()
            .items
            .remove(0);
    let (items, problems) = palette::service_items(&client, &binding.id.to_string()).await;
    assert!(problems.is_empty(), "{problems:?}");
    assert!(has(&items, "binding", &binding.id.to_string()), "{items:?}");
    let actuators = downlinks::list(&client, &common::downlink_page(DownlinkKind::Actuator, 50)).await.unwrap().items;
    if let Some(a) = actuators.iter().find(|a| a.external_reference.is_some()) {
        let (items, _) = palette::service_items(&client, a.external_reference.as_deref().unwrap()).await;
        assert!(has(&items, "downlink", &a.id), "{items:?}");
    }

    // Nothing found is no problem; a text no kind holds finds nothing.
    let (items, problems) = palette::service_items(&client, "no such thing").await;
    assert!(items.is_empty() && problems.is_empty(), "{items:?} {problems:?}");
}
