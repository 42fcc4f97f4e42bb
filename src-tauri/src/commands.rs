//! The commands the UI calls. Each is a thin layer over the shared crates.

use dcs_api::firmware::ModuleFilter;
use dcs_api::model::FirmwareModule;
use serde::{Deserialize, Serialize};
use tauri::State;
use uuid::Uuid;

use crate::error::CommandError;
use crate::state::AppState;

/// What the header and the status bar show.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: String,
    pub profile: String,
    /// True when the active service is the embedded simulator.
    pub simulator: bool,
    pub base_url: String,
}

#[tauri::command]
#[specta::specta]
pub fn app_info(state: State<'_, AppState>) -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        profile: state.profile.name.clone(),
        simulator: state.simulator.is_some(),
        base_url: state.base_url.clone(),
    }
}

/// Which page of modules to fetch: the first one for these filters, or the one a `next` link
/// from an earlier page points to.
#[derive(Debug, Clone, Default, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ModulePageRequest {
    pub next: Option<String>,
    pub sort: Option<String>,
    pub device_specification_id: Option<Uuid>,
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ModulePage {
    pub items: Vec<FirmwareModule>,
    /// Pass back as `next` to get the following page; absent on the last page.
    pub next: Option<String>,
}

#[tauri::command]
#[specta::specta]
pub async fn list_modules(state: State<'_, AppState>, request: ModulePageRequest) -> Result<ModulePage, CommandError> {
    let firmware = state.client.firmware();
    let (page, next) = match &request.next {
        Some(link) => {
            let url = url::Url::parse(link).map_err(|_| {
                CommandError::from(dcs_api::Error::InvalidInput { field: "next".into(), rule: "must be a page link".into() })
            })?;
            firmware.modules_page_at(&url).await?
        }
        None => {
            let filter = ModuleFilter {
                device_specification_id: request.device_specification_id,
                client_id: None,
                sort: request.sort.clone(),
                limit: request.limit,
            };
            firmware.modules_page(&filter).await?
        }
    };
    Ok(ModulePage { items: page.items, next: next.map(|u| u.to_string()) })
}
