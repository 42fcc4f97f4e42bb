//! Devices: the beta device listing (section 4.5) for pickers, and device ids checked as typed.

use dcs_console::device_page::{self, DevicePage};
use dcs_console::devices::{self, DeviceLabel};
use dcs_console::downlinks::{self, DeviceIdCheck};
use dcs_console::listing::{self, DevicePage};
use serde::Deserialize;
use tauri::State;

use crate::error::CommandError;
use crate::state::{Answer as _, AppState};

/// A page of the device listing: `search` matches name, description, barcode, UUID, IMEI and
/// DevEUI partially, ignoring case (the service's own search, used only when its listing is too
/// large to hold, is case-sensitive); `page` counts from 0.
#[derive(Debug, Clone, Default, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DevicePageRequest {
    pub search: Option<String>,
    pub page: Option<u32>,
    pub page_size: Option<u32>,
}

/// Longest search text.
const MAX_SEARCH: usize = 200;

/// One page of the devices of the active profile and customer, by name.
#[tauri::command]
#[specta::specta]
pub async fn list_devices(state: State<'_, AppState>, request: DevicePageRequest) -> Result<DevicePage, CommandError> {
    let session = state.session().await?;
    let search = request.search.as_deref().map(str::trim).unwrap_or_default().to_owned();
    if search.chars().count() > MAX_SEARCH || search.chars().any(char::is_control) {
        return Err(CommandError::invalid(
            "search",
            format!("must be at most {MAX_SEARCH} characters without control characters"),
        ));
    }
    let size = request.page_size.unwrap_or(20).clamp(1, 200);
    let page_no = request.page.unwrap_or(0).min(1_000_000);
    session
        .run(async {
            listing::device_page(&state.devices, &session.scope(), &session.client, &search, page_no, size).await
        })
        .await
}

/// What is known of each device id (any form): the name, IMEI or DevEUI and UUID of the device
/// the service's listing holds for it, else only what the id says (`known` false). At most
/// 500 ids; the listing is read once per profile and customer and kept a few minutes. When the
/// listing cannot be read, every id is answered as unknown (the lists then show the ids).
#[tauri::command]
#[specta::specta]
pub async fn device_labels(state: State<'_, AppState>, ids: Vec<String>) -> Result<Vec<DeviceLabel>, CommandError> {
    devices::check_ids(&ids)?;
    let session = state.session().await?;
    let dir = match state.devices.get(&session.scope(), &session.client).await {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(error = %e, "the device listing could not be read; devices are shown by id");
            std::sync::Arc::new(devices::Directory::default())
        }
    };
    Ok(ids.iter().map(|id| dir.label(id)).collect())
}

/// Checks a device id as typed: its normalised form and its form's name, or the rule it breaks.
/// `kind` names the use: `sms` wants the device's UUID; any other kind (or none) takes the
/// seven forms of section 1.
#[tauri::command]
#[specta::specta]
pub fn check_device_id(input: String, kind: Option<String>) -> DeviceIdCheck {
    downlinks::check_device_id(&input, kind.as_deref())
}

/// Everything the console knows of one device, asked for by any of its ids: its ids, states per
/// module with their history and rollouts (the fleet database), and its downlinks and bindings
/// (the service, each kind on its own: one failing is named in `problems`).
#[tauri::command]
#[specta::specta]
pub async fn device_page(state: State<'_, AppState>, id: String) -> Result<DevicePage, CommandError> {
    let (session, fleet, scope) = crate::commands::fleet::open_local(&state).await?;
    state.ready(&session).await?;
    session
        .run(async {
            let dir = match state.devices.get(&session.scope(), &session.client).await {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(error = %e, "the device listing could not be read; the device page shows ids only");
                    std::sync::Arc::new(devices::Directory::default())
                }
            };
            device_page::page(&session.client, &dir, fleet.db(), scope, &id).await
        })
        .await
}
