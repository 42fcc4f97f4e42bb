//! Firmware commands: modules, and creating packages for the active customer.

use dcs_api::firmware::{ModuleFilter, NewPackage};
use dcs_api::model::{validate, FirmwareModule, FirmwarePackage};
use dcs_console::FieldError;
use serde::{Deserialize, Serialize};
use tauri::State;
use uuid::Uuid;

use crate::error::CommandError;
use crate::state::AppState;

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
    let session = state.session().await;
    let firmware = session.client.firmware();
    let (page, next) = match &request.next {
        Some(link) => {
            let url = url::Url::parse(link).map_err(|_| {
                CommandError::from(dcs_api::Error::InvalidInput { field: "next".into(), rule: "must be a page link".into() })
            })?;
            firmware.modules_page_at(&url).await.map_err(|e| session.err(e))?
        }
        None => {
            let filter = ModuleFilter {
                device_specification_id: request.device_specification_id,
                client_id: None,
                sort: request.sort.clone(),
                limit: request.limit,
            };
            firmware.modules_page(&filter).await.map_err(|e| session.err(e))?
        }
    };
    Ok(ModulePage { items: page.items, next: next.map(|u| u.to_string()) })
}

/// A package to create, and the customer the user confirmed it for (`null`: their own
/// environment); refused unchanged if that is no longer the active one.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CreatePackage {
    pub device_specification_id: Uuid,
    pub module_id: Uuid,
    pub firmware_version: String,
    pub description: Option<String>,
    pub acting_for: Option<Uuid>,
}

impl CreatePackage {
    fn new_package(&self) -> NewPackage {
        let p = NewPackage::new(self.device_specification_id, self.module_id, self.firmware_version.clone());
        match self.description.as_deref().filter(|d| !d.is_empty()) {
            Some(d) => p.description(d),
            None => p,
        }
    }
}

/// Every rule the new package breaks (section 2.2), for the form as the user types.
#[tauri::command]
#[specta::specta]
pub fn check_package(request: CreatePackage) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Err(rule) = validate::firmware_version(&request.firmware_version) {
        errors.push(FieldError { field: "firmwareVersion".into(), rule });
    }
    if let Some(d) = request.description.as_deref().filter(|d| !d.is_empty()) {
        if let Err(rule) = validate::description(d) {
            errors.push(FieldError { field: "description".into(), rule });
        }
    }
    errors
}

#[tauri::command]
#[specta::specta]
pub async fn create_package(state: State<'_, AppState>, request: CreatePackage) -> Result<FirmwarePackage, CommandError> {
    let session = state.session().await;
    session.check_acting_for(request.acting_for)?;
    let created = session.client.firmware().create_package(&request.new_package()).await.map_err(|e| session.err(e))?;
    tracing::info!(package = %created.id, acting = %session.acting.describe(), "package created");
    Ok(created)
}
