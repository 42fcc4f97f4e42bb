//! The device page: everything the console knows of one device, asked for by any of its ids.
//!
//! - Its ids in the forms of section 1 the console can write: the UUID always, the IMEI and DevEUI
//!   forms where the device listing shows them. Not the DVNUUID forms: the reference does
//!   not say what a DVNUUID is (the simulator takes it for the device's UUID, A-39; the console
//!   does not rely on that, and resolves one through the service).
//! - Its firmware state per module from the fleet database, each with the states it left before
//!   (the `state_history` table, kept by a trigger as scans and rollouts write changes).
//! - The rollouts it took part in (the fleet database's rollout records).
//! - From the service, fetched at once and each on its own (one failing leaves the others shown,
//!   with what failed): its downlinks of every connection kind, filtered by the service on its
//!   `deviceId` (section 5); its actuator downlinks, which the service filters only by text
//!   (`q`, matching `networkId` partially), found by its IMEI or DevEUI and kept when their
//!   network id names exactly that device; and its bindings of each kind (`deviceId` filter).

use dcs_api::firmware::StateFilter;
use dcs_api::model::{BindingKind, DeviceId};
use dcs_api::{Client, Error};
use futures::future::join_all;
use serde::Serialize;
use uuid::Uuid;

use crate::bindings::{self, BindingPageRequest, BindingView};
use crate::devices::{DeviceEntry, Directory, MAX_ID_LEN};
use crate::downlinks::{self, DownlinkKind, DownlinkPageRequest, DownlinkView};
use crate::fleet::query::{resolve_device, DeviceMatch};
use crate::fleet::{ms_to_text, FleetDb, Result, Scope};
use crate::FieldError;

pub use crate::fleet::HISTORY_KEPT;
/// Newest items fetched of each downlink and binding kind.
pub const PER_KIND: u32 = 20;

/// One id form of the device.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct IdForm {
    /// The form's name, as section 1 calls it.
    pub form: String,
    pub value: String,
}

/// A state the device left, and when this console saw it leave.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PastState {
    pub left_at: String,
    pub current: Option<String>,
    pub target: Option<String>,
    pub status: Option<String>,
    pub details: Option<String>,
    pub status_at: Option<String>,
}

/// The device's firmware state on one module, with the states before it (newest first).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeviceModuleState {
    pub module_id: String,
    /// The module's name, where the catalogue was read.
    pub module: Option<String>,
    pub spec_id: Option<String>,
    pub current: Option<String>,
    pub target: Option<String>,
    pub status: Option<String>,
    pub details: Option<String>,
    pub status_at: Option<String>,
    pub target_at: Option<String>,
    pub history: Vec<PastState>,
}

/// A rollout the device was part of.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeviceRollout {
    pub rollout_id: String,
    pub module_id: String,
    pub module: Option<String>,
    pub version: String,
    /// The rollout's state now (as the rollout records say it).
    pub state: String,
    /// The device's wave, 1 for the first.
    pub wave: u32,
    /// When its target was set (absent: not yet, or it failed).
    pub set_at: Option<String>,
    /// Why setting its target failed.
    pub error: Option<String>,
    /// Its target before the rollout.
    pub previous_target: Option<String>,
    pub created_at: String,
    /// Times its target was set again after it failed (the rollout's retries).
    pub retries: u32,
    /// The last failure a retry was for, or that was not to be retried.
    pub last_failure: Option<String>,
}

/// A part of the page the service did not answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PartProblem {
    pub part: String,
    pub message: String,
}

/// Everything the console knows of one device.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeviceDetail {
    /// The id as asked for.
    pub id: String,
    pub uuid: Uuid,
    /// The device listing holds it (name, description, barcode and network ids come from there).
    pub known: bool,
    pub name: Option<String>,
    pub description: Option<String>,
    pub barcode: Option<String>,
    pub device_specification_id: Option<Uuid>,
    pub forms: Vec<IdForm>,
    pub states: Vec<DeviceModuleState>,
    /// The fleet database holds no state of the device: `states` are the service's, read now
    /// (without history).
    pub states_from_service: bool,
    pub rollouts: Vec<DeviceRollout>,
    /// Newest first, every kind together.
    pub downlinks: Vec<DownlinkView>,
    pub bindings: Vec<BindingView>,
    /// How the actuator downlinks were looked for (or why they were not).
    pub actuator_search: String,
    pub problems: Vec<PartProblem>,
}

/// The device's id forms: the UUID always, the IMEI and DevEUI forms where known.
pub fn forms(uuid: Uuid, imei: Option<&str>, dev_eui: Option<&str>) -> Vec<IdForm> {
    let f = |form: &str, value: String| IdForm { form: form.to_owned(), value };
    let mut out = vec![f("Device UUID", uuid.to_string())];
    if let Some(i) = imei {
        out.push(f("IMEI device id", format!("imei:{i}")));
        out.push(f("IMEI device URN", format!("urn:dev:imei:{i}")));
    }
    if let Some(e) = dev_eui {
        out.push(f("LoRaWAN DevEUI device id", format!("deveui:{e}")));
        out.push(f("DevEUI device URN", format!("urn:dev:deveui:{e}")));
    }
    out
}

/// The device `raw` names (any of the seven forms), and its listing entry where the listing
/// holds it. An IMEI or DevEUI the listing does not show is asked of the service (its states
/// list takes every form and answers with the UUID, A-41).
pub async fn resolve(client: &Client, dir: &Directory, raw: &str) -> Result<(Uuid, Option<DeviceEntry>)> {
    let raw = raw.trim();
    if raw.len() > MAX_ID_LEN || raw.chars().any(char::is_control) {
        let rule = format!("must be a device id of at most {MAX_ID_LEN} characters without control characters");
        return Err(FieldError::new("id", rule).into());
    }
    let id = DeviceId::parse(raw).map_err(|e| FieldError::new("id", e.to_string()))?;
    // A DVNUUID goes to the service (what it is, the reference does not say).
    if !matches!(id, DeviceId::DvnUuid { .. }) {
        if let Some(d) = dir.find(raw) {
            return Ok((d.uuid, Some(d.clone())));
        }
    }
    let uuid = match id.as_uuid() {
        Some(u) => u,
        None => match resolve_device(client, raw).await? {
            DeviceMatch::Exact(u) => u,
            DeviceMatch::Prefix(_) => return Err(FieldError::new("id", "must name one device").into()),
        },
    };
    Ok((uuid, dir.find(&uuid.to_string()).cloned()))
}

/// The device's states per module with their history, and its rollouts, from the fleet database.
pub fn fleet_part(db: &FleetDb, scope: Scope, uuid: Uuid) -> Result<(Vec<DeviceModuleState>, Vec<DeviceRollout>)> {
    let conn = db.conn();
    let device = uuid.to_string();
    let text = |ms: Option<i64>| ms.map(ms_to_text);
    let mut states: Vec<DeviceModuleState> = conn
        .prepare_cached(
            "SELECT s.module_id, m.name, s.spec_id, s.current, s.target, s.status, s.details, s.status_at, s.target_at
               FROM states s LEFT JOIN modules m ON m.scope = s.scope AND m.module_id = s.module_id
              WHERE s.scope = ?1 AND s.device_id = ?2
              ORDER BY m.name, s.module_id",
        )?
        .query_map(rusqlite::params![scope.0, device], |r| {
            Ok(DeviceModuleState {
                module_id: r.get(0)?,
                module: r.get(1)?,
                spec_id: r.get(2)?,
                current: r.get(3)?,
                target: r.get(4)?,
                status: r.get(5)?,
                details: r.get(6)?,
                status_at: text(r.get(7)?),
                target_at: text(r.get(8)?),
                history: Vec::new(),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut past = conn.prepare_cached(
        "SELECT left_at, current, target, status, details, status_at FROM state_history
          WHERE scope = ?1 AND device_id = ?2 AND module_id = ?3 ORDER BY id DESC LIMIT ?4",
    )?;
    for s in &mut states {
        s.history = past
            .query_map(rusqlite::params![scope.0, device, s.module_id, HISTORY_KEPT as i64], |r| {
                Ok(PastState {
                    left_at: ms_to_text(r.get(0)?),
                    current: r.get(1)?,
                    target: r.get(2)?,
                    status: r.get(3)?,
                    details: r.get(4)?,
                    status_at: text(r.get(5)?),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
    }
    let rollouts = conn
        .prepare_cached(
            "SELECT r.id, r.module_id, m.name, r.version, r.state, d.wave, d.set_at, d.error, d.previous_target,
                    r.created_at, coalesce(d.retries, 0), d.last_failure
               FROM rollout_devices d JOIN rollouts r ON r.id = d.rollout
               LEFT JOIN modules m ON m.scope = r.scope AND m.module_id = r.module_id
              WHERE d.device_id = ?2 AND r.scope = ?1
              ORDER BY r.created_at DESC",
        )?
        .query_map(rusqlite::params![scope.0, device], |r| {
            Ok(DeviceRollout {
                rollout_id: r.get(0)?,
                module_id: r.get(1)?,
                module: r.get(2)?,
                version: r.get(3)?,
                state: r.get(4)?,
                wave: r.get::<_, i64>(5)?.try_into().unwrap_or(0u32) + 1,
                set_at: text(r.get(6)?),
                error: r.get(7)?,
                previous_target: r.get(8)?,
                created_at: ms_to_text(r.get(9)?),
                retries: r.get(10)?,
                last_failure: r.get(11)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok((states, rollouts))
}

/// What the service holds for the device: downlinks of every kind and bindings, newest
/// [`PER_KIND`] of each, each kind asked at once; a kind that fails is named in the problems.
/// Answers also how the actuator downlinks were looked for.
pub async fn service_part(
    client: &Client,
    uuid: Uuid,
    entry: Option<&DeviceEntry>,
) -> (Vec<DownlinkView>, Vec<BindingView>, String, Vec<PartProblem>) {
    let request = |kind, device_id: Option<String>, q: Option<String>| DownlinkPageRequest {
        q,
        device_id,
        ..DownlinkPageRequest::first(kind, PER_KIND)
    };
    // The actuator list is searched by the device's network id, the only way its filter can.
    let network: Option<(DeviceId, String)> = entry.and_then(|e| {
        e.imei
            .as_ref()
            .map(|i| (DeviceId::Imei { digits: i.clone(), urn: true }, i.clone()))
            .or_else(|| e.dev_eui.as_ref().map(|h| (DeviceId::DevEui { hex: h.clone(), urn: true }, h.clone())))
    });
    let actuator_search = match &network {
        Some((_, text)) => format!("actuator downlinks whose network id names {text}"),
        None => "actuator downlinks name a device by its network id (IMEI or DevEUI), which the device \
                 listing does not show for this device: not looked for"
            .to_owned(),
    };
    let mut asks: Vec<(DownlinkKind, DownlinkPageRequest)> = DownlinkKind::ALL
        .into_iter()
        .filter(|k| k.connection().is_some())
        .map(|k| (k, request(k, Some(uuid.to_string()), None)))
        .collect();
    if let Some((_, text)) = &network {
        asks.push((DownlinkKind::Actuator, request(DownlinkKind::Actuator, None, Some(text.clone()))));
    }
    let downlink_pages = join_all(asks.iter().map(|(_, r)| downlinks::list(client, r)));
    let binding_request =
        BindingPageRequest { device_id: Some(uuid.to_string()), limit: Some(PER_KIND), ..Default::default() };
    let binding_pages = join_all(BindingKind::ALL.iter().map(|k| bindings::page(client, *k, &binding_request)));
    let (downlink_pages, binding_pages) = futures::join!(downlink_pages, binding_pages);

    let mut problems = Vec::new();
    let mut found = Vec::new();
    for ((kind, _), page) in asks.iter().zip(downlink_pages) {
        match page {
            Ok(p) => found.extend(p.items.into_iter().filter(|d| match (kind, &network) {
                // `q` matches partially: only downlinks to exactly this device.
                (DownlinkKind::Actuator, Some((id, _))) => {
                    DeviceId::parse(&d.device).is_ok_and(|n| same_device(&n, id))
                }
                _ => true,
            })),
            Err(e) => {
                problems.push(PartProblem { part: format!("{} downlinks", kind.label()), message: e.to_string() })
            }
        }
    }
    // Newest first; those without a creation time last.
    found.sort_by(|a, b| b.created_at.cmp(&a.created_at));
    let mut bound = Vec::new();
    for (kind, page) in BindingKind::ALL.iter().zip(binding_pages) {
        match page {
            Ok(p) => bound.extend(p.items),
            Err(e) => problems
                .push(PartProblem { part: format!("{} bindings", binding_label(*kind)), message: e.to_string() }),
        }
    }
    (found, bound, actuator_search, problems)
}

fn binding_label(kind: BindingKind) -> &'static str {
    match kind {
        BindingKind::Lora => "LoRa",
        BindingKind::Http => "HTTP",
        BindingKind::Mqtt => "MQTT",
    }
}

/// Names the modules the fleet database could not (no scan yet) from the palette's catalogue.
pub fn name_modules(page: &mut DeviceDetail, catalogue: &crate::palette::Catalogue) {
    for s in page.states.iter_mut().filter(|s| s.module.is_none()) {
        s.module = catalogue
            .iter()
            .find(|c| c.item.kind == "module" && c.item.id == s.module_id)
            .map(|c| c.item.title.clone());
    }
}

/// Two ids of one network id, whatever their form (`imei:` or URN).
fn same_device(a: &DeviceId, b: &DeviceId) -> bool {
    match (a, b) {
        (DeviceId::Imei { digits: x, .. }, DeviceId::Imei { digits: y, .. }) => x == y,
        (DeviceId::DevEui { hex: x, .. }, DeviceId::DevEui { hex: y, .. }) => x.eq_ignore_ascii_case(y),
        _ => a.as_uuid().is_some() && a.as_uuid() == b.as_uuid(),
    }
}

/// The device's states as the service lists them now, for a device the fleet database holds
/// none of (no scan yet, or a device newer than the last). The states list's `deviceId` filter is
/// not in the reference: a service that ignores it answers other devices' states, which
/// are left out here, so the page never shows another device's state as this one's.
pub async fn service_states(
    client: &Client,
    db: &FleetDb,
    scope: Scope,
    uuid: Uuid,
) -> std::result::Result<Vec<DeviceModuleState>, Error> {
    let filter = StateFilter { device_id: Some(uuid.to_string()), limit: Some(100), ..Default::default() };
    let (page, _) = client.firmware().states_page(&filter).await?;
    let conn = db.conn();
    let mut name = conn.prepare_cached("SELECT name FROM modules WHERE scope = ?1 AND module_id = ?2").ok();
    let text = |t: Option<time::OffsetDateTime>| t.map(|t| ms_to_text(crate::fleet::to_ms(t)));
    let mut out: Vec<DeviceModuleState> = page
        .items
        .into_iter()
        .filter(|s| s.device_id == uuid)
        .map(|s| DeviceModuleState {
            module_id: s.module_id.to_string(),
            module: name
                .as_mut()
                .and_then(|q| q.query_row(rusqlite::params![scope.0, s.module_id.to_string()], |r| r.get(0)).ok()),
            spec_id: s.device_specification_id.map(|u| u.to_string()),
            current: s.current_firmware_version.clone(),
            target: s.target_firmware_version.clone(),
            status: s.firmware_update_status.as_ref().map(|st| st.as_str().to_owned()),
            details: s.firmware_update_status_details.clone(),
            status_at: text(s.firmware_update_status_modified_at),
            target_at: text(s.target_firmware_version_modified_at),
            history: Vec::new(),
        })
        .collect();
    out.sort_by(|a, b| a.module.cmp(&b.module).then_with(|| a.module_id.cmp(&b.module_id)));
    Ok(out)
}

/// The whole page: the device resolved, the fleet database's part and the service's (its
/// states too, where the fleet database holds none: `states_from_service`).
pub async fn page(client: &Client, dir: &Directory, db: &FleetDb, scope: Scope, raw: &str) -> Result<DeviceDetail> {
    let (uuid, entry) = resolve(client, dir, raw).await?;
    let (mut states, rollouts) = fleet_part(db, scope, uuid)?;
    let (downlinks, bindings, actuator_search, mut problems) = service_part(client, uuid, entry.as_ref()).await;
    let states_from_service = states.is_empty();
    if states_from_service {
        match service_states(client, db, scope, uuid).await {
            Ok(s) => states = s,
            Err(e) => problems.push(PartProblem { part: "Firmware states".into(), message: e.to_string() }),
        }
    }
    let forms =
        forms(uuid, entry.as_ref().and_then(|e| e.imei.as_deref()), entry.as_ref().and_then(|e| e.dev_eui.as_deref()));
    Ok(DeviceDetail {
        id: raw.trim().to_owned(),
        uuid,
        known: entry.is_some(),
        name: entry.as_ref().map(|e| e.name.clone()),
        description: entry.as_ref().and_then(|e| e.description.clone()),
        barcode: entry.as_ref().and_then(|e| e.barcode.clone()),
        device_specification_id: entry.as_ref().map(|e| e.device_specification_id),
        forms,
        states,
        states_from_service,
        rollouts,
        downlinks,
        bindings,
        actuator_search,
        problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::states::write_page;
    use crate::fleet::ScopeKey;
    use dcs_api::model::FirmwareState;
    use serde_json::json;

    fn state(device: Uuid, module: Uuid, current: &str, status: &str) -> FirmwareState {
        serde_json::from_value(json!({
            "moduleId": module, "deviceId": device, "currentFirmwareVersion": current,
            "targetFirmwareVersion": "2.0.0", "firmwareUpdateStatus": status,
            "firmwareUpdateStatusModifiedAt": "2026-11-27T10:00:00Z",
        }))
        .unwrap()
    }

    #[test]
    fn every_change_of_a_state_is_kept_newest_first_up_to_the_cap_and_a_rewrite_adds_none() {
        let db = FleetDb::in_memory().unwrap();
        let scope = db.scope(&ScopeKey { profile: "p".into(), base_url: "http://x".into(), customer: None }).unwrap();
        let (device, other, module) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(9));
        write_page(&db, scope, &[state(device, module, "1.0.0", "PENDING"), state(other, module, "1.0.0", "PENDING")])
            .unwrap();
        let (states, _) = fleet_part(&db, scope, device).unwrap();
        assert_eq!(states.len(), 1);
        assert!(states[0].history.is_empty(), "a first sight is the state, not a change");

        // One change: the state it left is kept.
        write_page(&db, scope, &[state(device, module, "1.0.0", "UPDATING")]).unwrap();
        let (states, _) = fleet_part(&db, scope, device).unwrap();
        assert_eq!(states[0].status.as_deref(), Some("UPDATING"));
        assert_eq!(states[0].history.len(), 1);
        assert_eq!(states[0].history[0].status.as_deref(), Some("PENDING"));
        assert_eq!(states[0].history[0].status_at.as_deref(), Some("2026-11-27T10:00:00.000Z"));

        // The same state again changes nothing.
        write_page(&db, scope, &[state(device, module, "1.0.0", "UPDATING")]).unwrap();
        assert_eq!(fleet_part(&db, scope, device).unwrap().0[0].history.len(), 1);

        // Many changes: the newest HISTORY_KEPT, newest first; the other device has none.
        for i in 0..(HISTORY_KEPT + 10) {
            write_page(&db, scope, &[state(device, module, &format!("1.0.{i}"), "UPDATING")]).unwrap();
        }
        let (states, _) = fleet_part(&db, scope, device).unwrap();
        let h = &states[0].history;
        assert_eq!(h.len(), HISTORY_KEPT);
        let last = HISTORY_KEPT + 8;
        assert_eq!(h[0].current.as_deref(), Some(format!("1.0.{last}").as_str()));
        assert!(h.windows(2).all(|w| w[0].left_at >= w[1].left_at), "newest first");
        assert!(fleet_part(&db, scope, other).unwrap().0[0].history.is_empty());

        // Two changes in one page (one millisecond) are two entries, in their order.
        let page = [state(other, module, "1.0.0", "UPDATING"), state(other, module, "1.0.0", "FAILED")];
        write_page(&db, scope, &page).unwrap();
        let h = fleet_part(&db, scope, other).unwrap().0[0].history.clone();
        let statuses: Vec<_> = h.iter().map(|p| p.status.as_deref().unwrap()).collect();
        assert_eq!(statuses, ["UPDATING", "PENDING"]);

        // A state removed (the service lists the device no more) takes its history along.
        assert_eq!(crate::fleet::scan::remove_states(&db, scope, &[(module, device)]).unwrap(), 1);
        let left: i64 = db
            .conn()
            .query_row("SELECT count(*) FROM state_history WHERE device_id = ?1", [device.to_string()], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0);
    }

    #[test]
    fn the_forms_parse_back_to_the_device_and_none_relies_on_what_a_dvnuuid_is() {
        let uuid = Uuid::from_u128(0xabc);
        let f = forms(uuid, Some("356938035643809"), Some("70b3d57ed0000001"));
        assert_eq!(f.len(), 5);
        for form in &f {
            let id = DeviceId::parse(&form.value).unwrap_or_else(|e| panic!("{}: {e}", form.value));
            match id {
                DeviceId::Imei { digits, .. } => assert_eq!(digits, "356938035643809"),
                DeviceId::DevEui { hex, .. } => assert_eq!(hex, "70b3d57ed0000001"),
                other => assert_eq!(other.as_uuid(), Some(uuid)),
            }
        }
        assert_eq!(forms(uuid, None, None).len(), 1);
    }

    #[test]
    fn an_imei_and_its_urn_are_one_device_and_a_longer_imei_is_not() {
        let p = |s: &str| DeviceId::parse(s).unwrap();
        assert!(same_device(&p("imei:356938035643809"), &p("urn:dev:imei:356938035643809:")));
        assert!(!same_device(&p("imei:3569380356438091"), &p("urn:dev:imei:356938035643809")));
        assert!(same_device(&p("deveui:70B3D57ED0000001"), &p("urn:dev:deveui:70b3d57ed0000001")));
        assert!(!same_device(&p("deveui:70b3d57ed0000001"), &p("imei:356938035643809")));
    }
}
