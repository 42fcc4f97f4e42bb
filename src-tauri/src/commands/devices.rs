//! Devices: the beta device listing (section 4.5) for pickers, and device ids checked as typed.

use dcs_api::beta::BetaDeviceQuery;
use uuid::Uuid;
use dcs_console::downlinks::{self, DeviceIdCheck};
use serde::{Deserialize, Serialize};
use tauri::State;

use crate::error::CommandError;
use crate::state::AppState;

/// A page of the device listing: `search` matches name, description and barcode partially
/// (case-sensitive, as the service does); `page` counts from 0.
#[derive(Debug, Clone, Default, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DevicePageRequest {
    pub search: Option<String>,
    pub page: Option<u32>,
    pub page_size: Option<u32>,
}

/// A device of the listing, as a picker shows it (the free-form metadata is left out).
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DeviceSummary {
    pub uuid: Uuid,
    pub name: String,
    pub description: Option<String>,
    pub barcode: Option<String>,
    pub device_specification_id: Uuid,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DevicePage {
    pub items: Vec<DeviceSummary>,
    /// The page these are (from 0).
    pub page: u32,
    /// No page follows.
    pub last: bool,
    /// Devices matching the search in all.
    pub total: u32,
}

/// One page of the devices of the active profile and customer, by name.
#[tauri::command]
#[specta::specta]
pub async fn list_devices(state: State<'_, AppState>, request: DevicePageRequest) -> Result<DevicePage, CommandError> {
    let session = state.session().await;
    let query = BetaDeviceQuery {
        current_page: request.page,
        page_size: request.page_size,
        search: request.search.filter(|s| !s.is_empty()),
        sort_by: Some("name".into()),
        descending: None,
    };
    let page = session.client.beta().devices(&query).await.map_err(|e| session.err(e))?;
    Ok(DevicePage {
        page: u32::try_from(page.number).unwrap_or(u32::MAX),
        last: page.last || page.content.is_empty(),
        total: u32::try_from(page.total_elements).unwrap_or(u32::MAX),
        items: page
            .content
            .into_iter()
            .map(|d| DeviceSummary {
                uuid: d.uuid,
                name: d.name,
                description: d.description,
                barcode: d.barcode,
                device_specification_id: d.device_specification_uuid,
            })
            .collect(),
    })
}

/// Checks a device id as typed: its normalised form and its form's name, or the rule it breaks.
/// `kind` names the use: `sms` wants the device's UUID; any other kind (or none) takes the
/// seven forms of section 1.
#[tauri::command]
#[specta::specta]
pub fn check_device_id(input: String, kind: Option<String>) -> DeviceIdCheck {
    downlinks::check_device_id(&input, kind.as_deref())
}
