//! Firmware commands: modules, and creating packages for the active customer.

use dcs_api::firmware::{Embed, ModuleFilter, NewPackage, PackageFilter};
use dcs_api::model::FirmwarePackage;
use dcs_console::listing::{self, ModuleDetail, ModulePage, PackagePage, SpecificationSummary, StatePage};
use dcs_console::FieldError;
use futures::TryStreamExt;
use serde::Deserialize;
use tauri::State;
use uuid::Uuid;

use dcs_console::Error;

use crate::error::CommandError;
use crate::state::{Answer as _, AppState};

/// Which page of modules to fetch: the first one for these filters, or the one a `next` link
/// from an earlier page points to.
#[derive(Debug, Clone, Default, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ModulePageRequest {
    pub next: Option<String>,
    pub sort: Option<String>,
    pub device_specification_id: Option<Uuid>,
    /// Owner of the device specification, as typed (checked to be a UUID).
    pub client_id: Option<String>,
    pub limit: Option<u32>,
}

/// A `next` link of an earlier page.
fn page_link(link: &str) -> Result<url::Url, Error> {
    url::Url::parse(link).map_err(|_| Error::invalid("next", "must be a page link"))
}

/// An optional id typed by the user: empty is none, anything else must be a UUID.
fn optional_uuid(field: &str, s: Option<&str>) -> Result<Option<Uuid>, Error> {
    match s.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => Uuid::parse_str(s).map(Some).map_err(|_| Error::invalid(field, "must be a UUID")),
    }
}

/// Which page of packages to fetch, with the module and device specification embedded.
#[derive(Debug, Clone, Default, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct PackagePageRequest {
    pub next: Option<String>,
    pub sort: Option<String>,
    pub device_specification_id: Option<Uuid>,
    pub module_id: Option<Uuid>,
    /// Owning client, as typed (checked to be a UUID).
    pub client_id: Option<String>,
    pub limit: Option<u32>,
}

#[tauri::command]
#[specta::specta]
pub async fn list_packages(
    state: State<'_, AppState>,
    request: PackagePageRequest,
) -> Result<PackagePage, CommandError> {
    let session = state.session().await?;
    session
        .run(async {
            let firmware = session.client.firmware();
            let (page, next) = match &request.next {
                Some(link) => firmware.packages_page_at(&page_link(link)?).await?,
                None => {
                    let filter = PackageFilter {
                        device_specification_id: request.device_specification_id,
                        module_id: request.module_id,
                        client_id: optional_uuid("clientId", request.client_id.as_deref())?,
                        embed: vec![Embed::Module, Embed::DeviceSpecification],
                        sort: request.sort.clone(),
                        limit: request.limit,
                    };
                    firmware.packages_page(&filter).await?
                }
            };
            Ok(PackagePage { items: page.items, next: next.map(|u| u.to_string()) })
        })
        .await
}

// Every device specification the active customer can see (gathered in console::listing).
#[tauri::command]
#[specta::specta]
pub async fn list_specifications(state: State<'_, AppState>) -> Result<Vec<SpecificationSummary>, CommandError> {
    let session = state.session().await?;
    session.run(async { Ok(listing::specifications(&session.client).await?) }).await
}

#[tauri::command]
#[specta::specta]
pub async fn list_modules(state: State<'_, AppState>, request: ModulePageRequest) -> Result<ModulePage, CommandError> {
    let session = state.session().await?;
    session
        .run(async {
            let firmware = session.client.firmware();
            let (page, next) = match &request.next {
                Some(link) => firmware.modules_page_at(&page_link(link)?).await?,
                None => {
                    let filter = ModuleFilter {
                        device_specification_id: request.device_specification_id,
                        client_id: optional_uuid("clientId", request.client_id.as_deref())?,
                        sort: request.sort.clone(),
                        limit: request.limit,
                    };
                    firmware.modules_page(&filter).await?
                }
            };
            Ok(ModulePage { items: page.items, next: next.map(|u| u.to_string()) })
        })
        .await
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
    request.new_package().check()
}

#[tauri::command]
#[specta::specta]
pub async fn create_package(
    state: State<'_, AppState>,
    request: CreatePackage,
) -> Result<FirmwarePackage, CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            let created = session.client.firmware().create_package(&request.new_package()).await?;
            tracing::info!(package = %created.id, acting = %session.acting.describe(), "package created");
            Ok(created)
        })
        .await
}

/// A new description for a package (`null` removes it); the other fields of a package are fixed.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct UpdateDescription {
    pub package_id: Uuid,
    pub description: Option<String>,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn update_package_description(
    state: State<'_, AppState>,
    request: UpdateDescription,
) -> Result<FirmwarePackage, CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            let description = request.description.as_deref().filter(|d| !d.is_empty());
            let updated = session.client.firmware().update_package_description(request.package_id, description).await?;
            tracing::info!(package = %updated.id, acting = %session.acting.describe(), "package description changed");
            Ok(updated)
        })
        .await
}

#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DeletePackage {
    pub package_id: Uuid,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn delete_package(state: State<'_, AppState>, request: DeletePackage) -> Result<(), CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            session.client.firmware().delete_package(request.package_id).await?;
            tracing::info!(package = %request.package_id, acting = %session.acting.describe(), "package deleted");
            Ok(())
        })
        .await
}

/// One package as the service holds it now, with its module and device specification.
#[tauri::command]
#[specta::specta]
pub async fn get_package(state: State<'_, AppState>, package_id: Uuid) -> Result<FirmwarePackage, CommandError> {
    let session = state.session().await?;
    session
        .run(async {
            let embed = [Embed::Module, Embed::DeviceSpecification];
            Ok(session.client.firmware().package(package_id, &embed).await?)
        })
        .await
}

/// `GET /firmware/modules/{id}` and the module's packages. Packages of other modules a service
/// sends along are left out.
#[tauri::command]
#[specta::specta]
pub async fn get_module(state: State<'_, AppState>, module_id: Uuid) -> Result<ModuleDetail, CommandError> {
    let session = state.session().await?;
    session
        .run(async {
            let firmware = session.client.firmware();
            let module = firmware.module(module_id).await?;
            let filter = PackageFilter { module_id: Some(module_id), limit: Some(1000), ..Default::default() };
            let packages: Vec<FirmwarePackage> = firmware.packages(&filter)?.try_collect().await?;
            let packages = packages.into_iter().filter(|p| p.module_id == module_id).collect();
            let unknown_members = module.extra.iter().map(|(k, v)| (k.clone(), v.to_string())).collect();
            Ok(ModuleDetail { module, unknown_members, packages })
        })
        .await
}

/// A page of firmware states of one module. `onService` sends the module filter to the service
/// (not documented, reference 4.1: "further parameters: not shown"); without it only the
/// documented `clientId` is sent and the module is matched here.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ModuleStatesRequest {
    pub module_id: Uuid,
    pub on_service: bool,
    /// Only devices owned by this client (the documented filter), as typed.
    pub client_id: Option<String>,
    /// A `next` link of an earlier page.
    pub next: Option<String>,
}

#[tauri::command]
#[specta::specta]
pub async fn list_module_states(
    state: State<'_, AppState>,
    request: ModuleStatesRequest,
) -> Result<StatePage, CommandError> {
    use dcs_console::listing;
    let session = state.session().await?;
    session
        .run(async {
            let firmware = session.client.firmware();
            let filter = dcs_api::firmware::StateFilter {
                client_id: optional_uuid("clientId", request.client_id.as_deref())?,
                module_id: Some(request.module_id),
                limit: Some(200),
                ..Default::default()
            };
            let sent = listing::state_request(&filter, request.on_service);
            let (page, next) = match &request.next {
                Some(link) => firmware.states_page_at(&page_link(link)?).await,
                None => firmware.states_page(&sent).await,
            }?;
            let read = u32::try_from(page.items.len()).unwrap_or(u32::MAX);
            let checked = listing::check_states(&filter, request.on_service, page.items);
            Ok(StatePage {
                note: listing::describe_check(&checked),
                ignored: !checked.ignored.is_empty(),
                items: checked.items,
                read,
                next: next.map(|u| u.to_string()),
            })
        })
        .await
}
