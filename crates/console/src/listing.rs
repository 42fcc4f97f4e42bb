//! What every list of the app and of `dcs` shares beyond the client's paging: firmware-state
//! filters the service may ignore, and the fields a service's refusal names.
//!
//! **Firmware-state filters.** `GET /firmware/states` documents `clientId` only ("further
//! parameters: not shown", reference 4.1); the simulator takes more (A-41). So the other
//! filters are sent only when the caller opts in, and the answer is checked: an item that does
//! not match a filter sent says the service ignored it; the items are then filtered here and
//! the caller says so. Without the opt-in only `clientId` is sent and everything else is
//! filtered here.
//!
//! **Device specifications.** The service lists none; [`specifications`] gathers them from the
//! modules and packages.
//!
//! **Pages.** The answer shapes of the app's listings (packages, modules, a module's detail,
//! firmware states, devices by name) are defined here, so `dcs` can answer the same pages.

use dcs_api::firmware::StateFilter;
use dcs_api::model::{DeviceId, FirmwareState, Problem};
use serde::Serialize;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::FieldError;

/// The filters of `filter` beyond the documented `clientId` (as their query names), in order.
pub fn undocumented_state_filters(filter: &StateFilter) -> Vec<&'static str> {
    let mut out = Vec::new();
    let checks: [(&'static str, bool); 10] = [
        ("moduleId", filter.module_id.is_some()),
        ("deviceId", filter.device_id.is_some()),
        ("deviceSpecificationId", filter.device_specification_id.is_some()),
        ("firmwareUpdateStatus", filter.firmware_update_status.is_some()),
        ("currentFirmwareVersion", filter.current_firmware_version.is_some()),
        ("targetFirmwareVersion", filter.target_firmware_version.is_some()),
        ("createdBefore", filter.created_before.is_some()),
        ("createdSince", filter.created_since.is_some()),
        ("modifiedBefore", filter.modified_before.is_some()),
        ("modifiedSince", filter.modified_since.is_some()),
    ];
    for (name, on) in checks {
        if on {
            out.push(name);
        }
    }
    out
}

/// What is sent: `filter` as it is when `on_service`, else only the documented `clientId`
/// with the window (`sort`, `limit`).
pub fn state_request(filter: &StateFilter, on_service: bool) -> StateFilter {
    if on_service {
        return filter.clone();
    }
    StateFilter { client_id: filter.client_id, sort: filter.sort.clone(), limit: filter.limit, ..Default::default() }
}

/// A time member of a state's unknown members (`createdAt`, `modifiedAt`: the reference does
/// not list them on a state).
fn time_member(s: &FirmwareState, name: &str) -> Option<OffsetDateTime> {
    s.extra.get(name).and_then(|v| v.as_str()).and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
}

/// The filters of `filter` that `s` does not match (query names). A filter that cannot be
/// checked on the item (a device given by IMEI or DevEUI, a time the state does not carry) is
/// taken as matched: only what the answer shows counts.
pub fn state_mismatches(filter: &StateFilter, s: &FirmwareState) -> Vec<&'static str> {
    let mut out = Vec::new();
    if filter.client_id.is_some_and(|c| s.client_id.is_some_and(|sc| sc != c)) {
        out.push("clientId");
    }
    if filter.module_id.is_some_and(|m| m != s.module_id) {
        out.push("moduleId");
    }
    if let Some(raw) = &filter.device_id {
        let uuid = match DeviceId::parse(raw) {
            Ok(DeviceId::Uuid(u)) | Ok(DeviceId::DvnUuid { uuid: u, .. }) => Some(u),
            _ => None,
        };
        if uuid.is_some_and(|u| u != s.device_id) {
            out.push("deviceId");
        }
    }
    if filter.device_specification_id.is_some_and(|d| s.device_specification_id.is_some_and(|sd| sd != d)) {
        out.push("deviceSpecificationId");
    }
    if let Some(want) = &filter.firmware_update_status {
        if s.firmware_update_status.as_ref().map(|st| st.as_str()) != Some(want.as_str()) {
            out.push("firmwareUpdateStatus");
        }
    }
    if let Some(want) = &filter.current_firmware_version {
        if s.current_firmware_version.as_deref() != Some(want.as_str()) {
            out.push("currentFirmwareVersion");
        }
    }
    if let Some(want) = &filter.target_firmware_version {
        if s.target_firmware_version.as_deref() != Some(want.as_str()) {
            out.push("targetFirmwareVersion");
        }
    }
    let created = time_member(s, "createdAt");
    let modified = time_member(s, "modifiedAt");
    let checks = [
        ("createdBefore", filter.created_before, created, true),
        ("createdSince", filter.created_since, created, false),
        ("modifiedBefore", filter.modified_before, modified, true),
        ("modifiedSince", filter.modified_since, modified, false),
    ];
    for (name, bound, at, before) in checks {
        if let (Some(bound), Some(at)) = (bound, at) {
            if (before && at >= bound) || (!before && at < bound) {
                out.push(name);
            }
        }
    }
    out
}

/// Items of an answer, checked against the filter asked.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedStates {
    /// The items that match every filter.
    pub items: Vec<FirmwareState>,
    /// Filters that were sent and that items of the answer do not match: the service ignored
    /// them (the items were filtered here).
    pub ignored: Vec<&'static str>,
    /// Filters that were not sent (no opt-in) and were applied here.
    pub local: Vec<&'static str>,
}

/// Checks `items`, the answer to [`state_request`]`(filter, on_service)`, against `filter`.
pub fn check_states(filter: &StateFilter, on_service: bool, items: Vec<FirmwareState>) -> CheckedStates {
    let sent: Vec<&'static str> = if on_service { undocumented_state_filters(filter) } else { Vec::new() };
    let mut ignored: Vec<&'static str> = Vec::new();
    let mut kept = Vec::with_capacity(items.len());
    for s in items {
        let missed = state_mismatches(filter, &s);
        for m in &missed {
            if (sent.contains(m) || *m == "clientId") && !ignored.contains(m) {
                ignored.push(m);
            }
        }
        if missed.is_empty() {
            kept.push(s);
        }
    }
    // In the order of the filters, not of the items that gave them away.
    let order = [
        "clientId",
        "moduleId",
        "deviceId",
        "deviceSpecificationId",
        "firmwareUpdateStatus",
        "currentFirmwareVersion",
        "targetFirmwareVersion",
        "createdBefore",
        "createdSince",
        "modifiedBefore",
        "modifiedSince",
    ];
    ignored.sort_by_key(|f| order.iter().position(|o| o == f));
    let local = if on_service { Vec::new() } else { undocumented_state_filters(filter) };
    CheckedStates { items: kept, ignored, local }
}

/// One sentence for people about [`CheckedStates`], or none when the service applied every
/// filter it was sent and none was left to this side.
pub fn describe_check(c: &CheckedStates) -> Option<String> {
    let mut parts = Vec::new();
    if !c.ignored.is_empty() {
        parts.push(format!(
            "the service ignored the filter{} {} (its answer has items that do not match); filtered here",
            if c.ignored.len() == 1 { "" } else { "s" },
            c.ignored.join(", ")
        ));
    }
    if !c.local.is_empty() {
        parts.push(format!("filtered here, not on the service: {}", c.local.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

// A page of firmware packages (the module and device specification embedded); `next` is the
// link to the following page, absent on the last. (No doc comment: the bindings carry none.)
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PackagePage {
    pub items: Vec<dcs_api::model::FirmwarePackage>,
    pub next: Option<String>,
}

// A page of firmware modules.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ModulePage {
    pub items: Vec<dcs_api::model::FirmwareModule>,
    /// Pass back as `next` to get the following page; absent on the last page.
    pub next: Option<String>,
}

/// One module as the service holds it, with what the app shows of it beside the typed fields.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ModuleDetail {
    pub module: dcs_api::model::FirmwareModule,
    /// Members of the answer this version does not know, as `[name, JSON text]` pairs.
    pub unknown_members: Vec<(String, String)>,
    /// Its packages (every page), newest first as the service sorts them.
    pub packages: Vec<dcs_api::model::FirmwarePackage>,
}

// A page of firmware states of one module, checked against the filters (see the module doc).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct StatePage {
    /// The states of this page that match the filters.
    pub items: Vec<FirmwareState>,
    /// States the page held before they were matched here.
    pub read: u32,
    pub next: Option<String>,
    /// What happened to the filters, for people: ignored by the service, or applied here.
    pub note: Option<String>,
    /// The service ignored a filter it was sent.
    pub ignored: bool,
}

// A page of the device listing by name (no doc comment: the bindings carry none).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DevicePage {
    pub items: Vec<crate::devices::DeviceEntry>,
    /// The page these are (from 0).
    pub page: u32,
    /// No page follows.
    pub last: bool,
    /// Devices matching the search in all.
    pub total: u32,
    /// The search was the service's, which matches case-sensitively (the listing was too large
    /// to hold here).
    pub case_sensitive: bool,
}

/// Page `page_no` (of `size`) of the devices of `scope` matching `search`: from the listing
/// held for the scope, ignoring case, when it is complete; else the service's own search
/// (case-sensitive, for a listing too large to hold).
pub async fn device_page(
    directories: &crate::devices::Directories,
    scope: &str,
    client: &dcs_api::Client,
    search: &str,
    page_no: u32,
    size: u32,
) -> Result<DevicePage, crate::Error> {
    let dir = directories.get(scope, client).await?;
    if dir.complete {
        let (items, total) = dir.search(search, page_no, size);
        let last = (page_no as u64 + 1) * size as u64 >= total as u64;
        return Ok(DevicePage { items, page: page_no, last, total, case_sensitive: false });
    }
    let query = dcs_api::beta::BetaDeviceQuery {
        current_page: Some(page_no),
        page_size: Some(size),
        search: Some(search.to_owned()).filter(|s| !s.is_empty()),
        sort_by: Some("name".into()),
        descending: None,
    };
    let page = client.beta().devices(&query).await?;
    Ok(DevicePage {
        page: u32::try_from(page.number).unwrap_or(u32::MAX),
        last: page.last || page.content.is_empty(),
        total: u32::try_from(page.total_elements).unwrap_or(u32::MAX),
        items: page.content.into_iter().map(crate::devices::DeviceEntry::from).collect(),
        case_sensitive: true,
    })
}

/// A device specification as the firmware workspace knows it: the service has no listing of
/// specifications, so they are gathered from the modules (every specification with one) and
/// named from the packages that embed them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct SpecificationSummary {
    pub id: Uuid,
    /// Known when a package of it embeds it.
    pub name: Option<String>,
    pub client_id: Option<Uuid>,
    pub modules: u32,
    pub packages: u32,
}

/// Every device specification `client` can see, gathered from its modules and packages (up to
/// 1,000 a page, every page), by name then id.
pub async fn specifications(client: &dcs_api::Client) -> dcs_api::error::Result<Vec<SpecificationSummary>> {
    use dcs_api::firmware::{Embed, ModuleFilter, PackageFilter};
    use dcs_api::model::{FirmwareModule, FirmwarePackage};
    use futures::TryStreamExt;
    use std::collections::BTreeMap;

    fn entry(specs: &mut BTreeMap<Uuid, SpecificationSummary>, id: Uuid) -> &mut SpecificationSummary {
        specs.entry(id).or_insert(SpecificationSummary { id, name: None, client_id: None, modules: 0, packages: 0 })
    }
    let firmware = client.firmware();
    let mut specs: BTreeMap<Uuid, SpecificationSummary> = BTreeMap::new();
    let all_modules = ModuleFilter { limit: Some(1000), ..Default::default() };
    let modules: Vec<FirmwareModule> = firmware.modules(&all_modules)?.try_collect().await?;
    for m in &modules {
        let s = entry(&mut specs, m.device_specification_id);
        s.modules += 1;
        s.client_id = s.client_id.or(m.client_id);
    }
    let filter = PackageFilter { embed: vec![Embed::DeviceSpecification], limit: Some(1000), ..Default::default() };
    let packages: Vec<FirmwarePackage> = firmware.packages(&filter)?.try_collect().await?;
    for p in &packages {
        let s = entry(&mut specs, p.device_specification_id);
        s.packages += 1;
        if let Some(spec) = p.embedded.as_ref().and_then(|e| e.device_specification.as_ref()) {
            s.name = Some(spec.name.clone());
            s.client_id = Some(spec.client_id);
        }
    }
    let mut out: Vec<SpecificationSummary> = specs.into_values().collect();
    out.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    Ok(out)
}

/// The fields a service's refusal names, each with its reason: the `invalidParams` member
/// in order, one entry per name (reasons of a repeated name joined).
pub fn problem_fields(problem: &Problem) -> Vec<FieldError> {
    let mut out: Vec<FieldError> = Vec::new();
    for p in &problem.invalid_params {
        match out.iter_mut().find(|f| f.field == p.name) {
            Some(f) => {
                f.rule.push_str("; ");
                f.rule.push_str(&p.reason);
            }
            None => out.push(FieldError { field: p.name.clone(), rule: p.reason.clone() }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcs_api::model::UpdateStatus;
    use uuid::Uuid;

    fn state(module: Uuid, status: &str, extra: serde_json::Value) -> FirmwareState {
        let mut v = serde_json::json!({
            "moduleId": module, "deviceId": Uuid::from_u128(7), "firmwareUpdateStatus": status,
            "currentFirmwareVersion": "1.0.0",
        });
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn only_client_id_is_sent_without_the_opt_in() {
        let f = StateFilter {
            client_id: Some(Uuid::from_u128(1)),
            module_id: Some(Uuid::from_u128(2)),
            sort: Some("-modifiedAt".into()),
            limit: Some(5),
            ..Default::default()
        };
        let sent = state_request(&f, false);
        assert_eq!(sent.client_id, f.client_id);
        assert_eq!((sent.module_id, sent.sort.as_deref(), sent.limit), (None, Some("-modifiedAt"), Some(5)));
        assert_eq!(state_request(&f, true).module_id, f.module_id);
        assert_eq!(undocumented_state_filters(&f), vec!["moduleId"]);
    }

    #[test]
    fn an_answer_with_items_that_do_not_match_says_the_filter_was_ignored() {
        let (m, other) = (Uuid::from_u128(2), Uuid::from_u128(3));
        let f = StateFilter {
            module_id: Some(m),
            firmware_update_status: Some(UpdateStatus::from("FAILED")),
            ..Default::default()
        };
        let honoured = check_states(&f, true, vec![state(m, "FAILED", serde_json::json!({}))]);
        assert_eq!((honoured.items.len(), honoured.ignored.len()), (1, 0));
        assert_eq!(describe_check(&honoured), None);

        let answer = vec![
            state(m, "FAILED", serde_json::json!({})),
            state(other, "FAILED", serde_json::json!({})),
            state(m, "PENDING", serde_json::json!({})),
        ];
        let ignored = check_states(&f, true, answer.clone());
        assert_eq!(ignored.items.len(), 1);
        assert_eq!(ignored.ignored, vec!["moduleId", "firmwareUpdateStatus"]);
        assert!(describe_check(&ignored).unwrap().contains("ignored the filters moduleId, firmwareUpdateStatus"));

        let local = check_states(&f, false, answer);
        assert_eq!((local.items.len(), local.ignored.len()), (1, 0));
        assert_eq!(local.local, vec!["moduleId", "firmwareUpdateStatus"]);
        assert!(describe_check(&local).unwrap().contains("not on the service"));
    }

    #[test]
    fn times_and_devices_are_checked_only_where_the_item_shows_them() {
        let m = Uuid::from_u128(2);
        let since = OffsetDateTime::parse("2024-05-01T00:00:00Z", &Rfc3339).unwrap();
        let f = StateFilter {
            modified_since: Some(since),
            device_id: Some("imei:350000000000001".into()),
            ..Default::default()
        };
        let old = state(m, "FAILED", serde_json::json!({"modifiedAt": "2024-04-01T00:00:00Z"}));
        let new = state(m, "FAILED", serde_json::json!({"modifiedAt": "2024-06-01T00:00:00Z"}));
        let bare = state(m, "FAILED", serde_json::json!({}));
        assert_eq!(state_mismatches(&f, &old), vec!["modifiedSince"]);
        assert!(state_mismatches(&f, &new).is_empty());
        assert!(state_mismatches(&f, &bare).is_empty(), "no time on the item: nothing to check");
        let by_uuid = StateFilter { device_id: Some(Uuid::from_u128(8).to_string()), ..Default::default() };
        assert_eq!(state_mismatches(&by_uuid, &bare), vec!["deviceId"]);
    }

    #[test]
    fn every_field_a_refusal_names_is_kept_once() {
        let p: Problem = serde_json::from_value(serde_json::json!({
            "status": 400,
            "invalidParams": [
                {"name": "firmwareVersion", "reason": "too long"},
                {"name": "description", "reason": "empty"},
                {"name": "firmwareVersion", "reason": "taken"}
            ]
        }))
        .unwrap();
        let f = problem_fields(&p);
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].field.as_str(), f[0].rule.as_str()), ("firmwareVersion", "too long; taken"));
        assert_eq!((f[1].field.as_str(), f[1].rule.as_str()), ("description", "empty"));
    }
}
