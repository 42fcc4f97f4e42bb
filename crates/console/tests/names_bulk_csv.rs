//! Devices by name, bulk actions and CSV exports through the console layer, against a real
//! simulator over HTTP (the variant of `DCS_SIM_VARIANT`): the device listing names a device
//! given by UUID or by IMEI/DevEUI URN (wherever the variant puts the network id, A-51); a bulk
//! cancellation and a bulk deletion report each item, a refused one not stopping the others;
//! the CSV of a list holds every page the filters give, devices named, and never a secret.

use dcs_api::model::BindingKind;
use dcs_api::Client;
use dcs_console::bindings::{self, BindingPageRequest};
use dcs_console::downlinks::{self, CancelItem, DownlinkKind, DownlinkPageRequest};
use dcs_console::{devices, simulator};
use dcs_sim::{RunningSim, SimOptions, Simulator};

mod common;

struct Env {
    sim: Simulator,
    _running: RunningSim,
    client: Client,
}

async fn env() -> Env {
    let variant = simulator::variant_from_env().unwrap();
    let (sim, running, client) =
        common::start(SimOptions { devices_per_client: 60, variant, ..Default::default() }).await;
    Env { sim, _running: running, client }
}

fn request(kind: DownlinkKind, limit: u32) -> DownlinkPageRequest {
    common::downlink_page(kind, limit)
}

#[tokio::test]
async fn a_device_is_named_by_any_of_its_ids_and_an_unknown_one_stays_an_id() {
    let e = env().await;
    let dir = devices::load(&e.client).await.unwrap();
    assert!(dir.complete);
    let owner = e.sim.demo_key().client_id;
    let rows = e.sim.store().beta_devices(owner, None, "id", true, 0, 10_000).unwrap().0;
    assert_eq!(dir.len(), rows.len());

    // Every device by its UUID and by the URN lists use (its networkId), with its IMEI/DevEUI.
    for row in &rows {
        let by_uuid = dir.label(&row.id.to_string());
        assert!(by_uuid.known && by_uuid.name.as_deref() == Some(row.name.as_str()), "{by_uuid:?}");
        let urn = row.network_id();
        let by_urn = dir.label(&urn);
        assert_eq!(
            (by_urn.known, by_urn.uuid, by_urn.name.as_deref()),
            (true, Some(row.id), Some(row.name.as_str())),
            "{urn}"
        );
        assert_eq!(by_urn.imei, row.imei);
        assert_eq!(by_urn.dev_eui, row.deveui);
    }

    // The devices of the LoRa downlinks (URNs in the list) all have names.
    for d in common::all_downlinks(&e.client, DownlinkKind::Lora, 7).await {
        let l = dir.label(&d.device);
        assert!(l.known && l.dev_eui.is_some(), "{} unnamed: {l:?}", d.device);
    }

    let stranger = dir.label("urn:dev:imei:999999999999999:");
    assert!(!stranger.known && stranger.name.is_none());
    assert_eq!(stranger.imei.as_deref(), Some("999999999999999"));

    // The picker's search ignores case, where the service's does not.
    let some = &rows[0];
    let lower = some.name.to_lowercase();
    let (found, total) = dir.search(&lower, 0, 8);
    assert!(total >= 1 && found.iter().any(|f| f.uuid == some.id), "{lower}: {found:?}");
    let service = e
        .client
        .beta()
        .devices(&dcs_api::beta::BetaDeviceQuery { search: Some(lower.clone()), ..Default::default() })
        .await
        .unwrap();
    assert!(service.content.iter().all(|d| d.uuid != some.id), "the service's own search is case-sensitive");
    // Paged past the first 8.
    let (second, all) = dir.search("", 1, 8);
    assert_eq!((second.len(), all as usize), (8, rows.len()));
}

#[tokio::test]
async fn a_bulk_cancellation_reports_each_downlink_and_a_refusal_stops_nothing() {
    let e = env().await;
    let listed = common::all_downlinks(&e.client, DownlinkKind::Lora, 7).await;
    let pending: Vec<_> = listed.iter().filter(|d| d.status == "PENDING").collect();
    assert!(!pending.is_empty(), "seeded LoRa downlinks include a pending one");
    let mut items: Vec<CancelItem> =
        pending.iter().map(|d| CancelItem { kind: DownlinkKind::Lora, id: d.id.clone(), forced: false }).collect();
    // One that does not exist: refused (404), in the middle of the others.
    let missing = uuid::Uuid::new_v4().to_string();
    items.insert(items.len().min(1), CancelItem { kind: DownlinkKind::Lora, id: missing.clone(), forced: false });
    let outcomes = downlinks::cancel_many(&e.client, &items).await.unwrap();
    assert_eq!(outcomes.len(), items.len());
    for (o, item) in outcomes.iter().zip(&items) {
        assert_eq!(o.id, item.id);
        if item.id == missing {
            assert!(!o.done && o.error.as_deref().is_some_and(|m| m.contains("404")), "{o:?}");
        } else {
            assert!(o.done && o.error.is_none(), "{o:?}");
        }
    }
    // Bounded and checked before anything is sent.
    let too_many: Vec<CancelItem> = (0..=dcs_console::bulk::MAX_ITEMS)
        .map(|i| CancelItem { kind: DownlinkKind::Lora, id: format!("{i}"), forced: false })
        .collect();
    assert_eq!(downlinks::cancel_many(&e.client, &too_many).await.unwrap_err().field, "items");
    let twice = vec![items[0].clone(), items[0].clone()];
    assert_eq!(downlinks::cancel_many(&e.client, &twice).await.unwrap_err().field, "items[1]");
}

#[tokio::test]
async fn the_downlink_csv_holds_every_page_the_filters_give_with_devices_named() {
    let e = env().await;
    let dir = devices::load(&e.client).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("lora.csv");
    let mut req = request(DownlinkKind::Lora, 3);
    req.status = Some("DONE".into());
    let n = downlinks::export_csv(&e.client, &req, &dir, &path).await.unwrap();
    let expected: Vec<_> = common::all_downlinks(&e.client, DownlinkKind::Lora, 7)
        .await
        .into_iter()
        .filter(|d| d.status == "DONE")
        .collect();
    assert!(expected.len() > 3, "more than one page");
    assert_eq!(n as usize, expected.len());
    let mut r = csv::Reader::from_path(&path).unwrap();
    assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), downlinks::CSV_HEADER.to_vec());
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), expected.len());
    for (row, d) in rows.iter().zip(&expected) {
        assert_eq!((&row[0], &row[2], &row[3]), (d.id.as_str(), "DONE", d.device.as_str()));
        let name = dir.label(&d.device).name.unwrap();
        assert_eq!(&row[4], name.as_str());
        assert_eq!(row[7].len(), 16, "the DevEUI: {row:?}");
    }
}

#[tokio::test]
async fn the_binding_csv_names_devices_and_holds_no_secret_and_a_bulk_delete_reports_each() {
    let e = env().await;
    let dir = devices::load(&e.client).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for kind in [BindingKind::Lora, BindingKind::Http, BindingKind::Mqtt] {
        let path = tmp.path().join(format!("{kind}.csv"));
        let req = BindingPageRequest { limit: Some(5), ..Default::default() };
        let n = bindings::export_csv(&e.client, kind, &req, &dir, &path).await.unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), n as usize + 1, "{kind}");
        assert!(n > 5, "{kind}: more than one page");
        // The secrets the service holds (read over HTTP here) appear nowhere in the file.
        let raw: Vec<serde_json::Value> = {
            let mut out = Vec::new();
            let mut link = Some(format!("{}/{kind}/bindings?limit=100", e._running.base_url().trim_end_matches('/')));
            while let Some(l) = link.take() {
                let page = dcs_api::paging::fetch_page::<serde_json::Value>(&e.client, url::Url::parse(&l).unwrap())
                    .await
                    .unwrap();
                out.extend(page.0.items);
                link = page.1.map(|u| u.to_string());
            }
            out
        };
        assert_eq!(raw.len(), n as usize);
        for b in &raw {
            for secret in ["appKey", "password", "sharedSecret"] {
                if let Some(s) = b.get(secret).and_then(|v| v.as_str()) {
                    assert!(!text.contains(s), "{kind}: the CSV holds a {secret}");
                }
            }
        }
        let mut r = csv::Reader::from_path(&path).unwrap();
        for row in r.records().map(Result::unwrap) {
            assert!(!row[3].is_empty(), "{kind}: device {} unnamed", &row[2]);
        }
    }

    // Bulk delete: two real ones and one unknown; the unknown is refused, the others are gone.
    let page =
        bindings::page(&e.client, BindingKind::Mqtt, &BindingPageRequest { limit: Some(2), ..Default::default() })
            .await
            .unwrap();
    let mut ids: Vec<uuid::Uuid> = page.items.iter().map(|b| b.id).collect();
    let unknown = uuid::Uuid::new_v4();
    ids.insert(1, unknown);
    let outcomes = bindings::delete_many(&e.client, BindingKind::Mqtt, &ids).await.unwrap();
    assert_eq!(
        outcomes.iter().map(|o| (o.id.clone(), o.done)).collect::<Vec<_>>(),
        ids.iter().map(|i| (i.to_string(), *i != unknown)).collect::<Vec<_>>()
    );
    assert!(outcomes[1].error.as_deref().is_some_and(|m| m.contains("404")), "{:?}", outcomes[1]);
    for b in &page.items {
        assert!(bindings::get(&e.client, BindingKind::Mqtt, b.id).await.is_err(), "deleted");
    }
}
