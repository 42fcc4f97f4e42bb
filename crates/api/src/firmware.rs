//! Firmware operations (reference section 4.1).

use futures::Stream;
use serde::Serialize;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use url::Url;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::model::{validate, DeviceId, FirmwarePackage, FirmwareModule, FirmwareState, Page, UpdateStatus};
use crate::paging;
use crate::Client;

/// Fields `GET /firmware/modules` sorts by (as the simulator implements them).
pub const MODULE_SORT_FIELDS: &[&str] =
    &["createdAt", "modifiedAt", "name", "firmwareVersionAttributeName", "deviceSpecificationId", "id"];

/// Fields `GET /firmware/packages` sorts by (simulator assumption A-22).
pub const PACKAGE_SORT_FIELDS: &[&str] =
    &["createdAt", "modifiedAt", "firmwareVersion", "moduleId", "deviceSpecificationId", "id"];

/// Fields `GET /firmware/states` sorts by (simulator assumption A-41).
pub const STATE_SORT_FIELDS: &[&str] = &[
    "deviceId",
    "moduleId",
    "modifiedAt",
    "createdAt",
    "currentFirmwareVersion",
    "targetFirmwareVersion",
    "firmwareUpdateStatus",
    "firmwareUpdateStatusModifiedAt",
    "targetFirmwareVersionModifiedAt",
];


fn drop_empty_query(mut url: Url) -> Url {
    if url.query() == Some("") {
        url.set_query(None);
    }
    url
}

/// What a package answer may carry in `_embedded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Embed {
    Module,
    DeviceSpecification,
}

impl Embed {
    pub fn as_str(self) -> &'static str {
        match self {
            Embed::Module => "module",
            Embed::DeviceSpecification => "deviceSpecification",
        }
    }
}

fn embed_value(embed: &[Embed]) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for e in embed {
        if !names.contains(&e.as_str()) {
            names.push(e.as_str());
        }
    }
    (!names.is_empty()).then(|| names.join(","))
}

/// Filters and window of a package listing.
#[derive(Debug, Clone, Default)]
pub struct PackageFilter {
    pub device_specification_id: Option<Uuid>,
    pub module_id: Option<Uuid>,
    pub client_id: Option<Uuid>,
    /// Related resources to include in `_embedded`.
    pub embed: Vec<Embed>,
    /// e.g. `-createdAt,firmwareVersion`; checked before sending against [`PACKAGE_SORT_FIELDS`].
    pub sort: Option<String>,
    pub limit: Option<u32>,
}

impl PackageFilter {
    fn to_url(&self, client: &Client) -> Result<Url> {
        let mut url = client.url("firmware/packages")?;
        {
            let mut q = url.query_pairs_mut();
            crate::calls::append_window(&mut q, self.limit, self.sort.as_deref(), PACKAGE_SORT_FIELDS)?;
            for (name, id) in [
                ("deviceSpecificationId", self.device_specification_id),
                ("moduleId", self.module_id),
                ("clientId", self.client_id),
            ] {
                if let Some(id) = id {
                    q.append_pair(name, &id.to_string());
                }
            }
            if let Some(embed) = embed_value(&self.embed) {
                q.append_pair("embed", &embed);
            }
        }
        Ok(drop_empty_query(url))
    }
}

/// A package to create: `NewPackage::new(spec, module, "1.2.0").description("...")`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewPackage {
    pub device_specification_id: Uuid,
    pub module_id: Uuid,
    pub firmware_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl NewPackage {
    pub fn new(device_specification_id: Uuid, module_id: Uuid, firmware_version: impl Into<String>) -> NewPackage {
        NewPackage { device_specification_id, module_id, firmware_version: firmware_version.into(), description: None }
    }

    pub fn description(mut self, description: impl Into<String>) -> NewPackage {
        self.description = Some(description.into());
        self
    }

    /// The field rules of section 2.2, checked before sending.
    pub fn validate(&self) -> Result<()> {
        validate::firmware_version(&self.firmware_version).map_err(|r| Error::invalid("firmwareVersion", r))?;
        if let Some(d) = &self.description {
            validate::description(d).map_err(|r| Error::invalid("description", r))?;
        }
        Ok(())
    }
}

/// Filters and window of a firmware-state listing (the filters beyond `clientId` are
/// simulator assumption A-41).
#[derive(Debug, Clone, Default)]
pub struct StateFilter {
    /// Only devices owned by this client.
    pub client_id: Option<Uuid>,
    pub module_id: Option<Uuid>,
    /// A device in any of the seven forms of section 1; checked before sending.
    pub device_id: Option<String>,
    pub device_specification_id: Option<Uuid>,
    pub firmware_update_status: Option<UpdateStatus>,
    pub current_firmware_version: Option<String>,
    pub target_firmware_version: Option<String>,
    pub created_before: Option<OffsetDateTime>,
    pub created_since: Option<OffsetDateTime>,
    pub modified_before: Option<OffsetDateTime>,
    pub modified_since: Option<OffsetDateTime>,
    /// Checked before sending against [`STATE_SORT_FIELDS`].
    pub sort: Option<String>,
    pub limit: Option<u32>,
}

impl StateFilter {
    fn to_url(&self, client: &Client) -> Result<Url> {
        let mut url = client.url("firmware/states")?;
        {
            let mut q = url.query_pairs_mut();
            crate::calls::append_window(&mut q, self.limit, self.sort.as_deref(), STATE_SORT_FIELDS)?;
            for (name, id) in [
                ("clientId", self.client_id),
                ("moduleId", self.module_id),
                ("deviceSpecificationId", self.device_specification_id),
            ] {
                if let Some(id) = id {
                    q.append_pair(name, &id.to_string());
                }
            }
            if let Some(raw) = &self.device_id {
                let device = DeviceId::parse(raw).map_err(|e| Error::invalid("deviceId", e.to_string()))?;
                q.append_pair("deviceId", &device.to_string());
            }
            if let Some(status) = &self.firmware_update_status {
                if status.as_str().is_empty() {
                    return Err(Error::invalid("firmwareUpdateStatus", "must not be empty"));
                }
                q.append_pair("firmwareUpdateStatus", status.as_str());
            }
            for (name, version) in [
                ("currentFirmwareVersion", &self.current_firmware_version),
                ("targetFirmwareVersion", &self.target_firmware_version),
            ] {
                if let Some(v) = version {
                    validate::firmware_version(v).map_err(|r| Error::invalid(name, r))?;
                    q.append_pair(name, v);
                }
            }
            for (name, at) in [
                ("createdBefore", self.created_before),
                ("createdSince", self.created_since),
                ("modifiedBefore", self.modified_before),
                ("modifiedSince", self.modified_since),
            ] {
                if let Some(at) = at {
                    let text = at.format(&Rfc3339).map_err(|e| Error::invalid(name, e.to_string()))?;
                    q.append_pair(name, &text);
                }
            }
        }
        Ok(drop_empty_query(url))
    }
}

/// Filters and window of a module listing.
#[derive(Debug, Clone, Default)]
pub struct ModuleFilter {
    pub device_specification_id: Option<Uuid>,
    /// Owner of the device specification.
    pub client_id: Option<Uuid>,
    /// e.g. `name` or `-createdAt,name`; checked before sending.
    pub sort: Option<String>,
    /// Page size, 1 or more (the service's default: 50).
    pub limit: Option<u32>,
}

impl ModuleFilter {
    fn to_url(&self, client: &Client) -> Result<Url> {
        let mut url = client.url("firmware/modules")?;
        {
            let mut q = url.query_pairs_mut();
            crate::calls::append_window(&mut q, self.limit, self.sort.as_deref(), MODULE_SORT_FIELDS)?;
            if let Some(id) = self.device_specification_id {
                q.append_pair("deviceSpecificationId", &id.to_string());
            }
            if let Some(id) = self.client_id {
                q.append_pair("clientId", &id.to_string());
            }
        }
        if url.query() == Some("") {
            url.set_query(None);
        }
        Ok(url)
    }
}

/// The firmware area of the API.
pub struct Firmware<'a> {
    pub(crate) client: &'a Client,
}

impl Client {
    pub fn firmware(&self) -> Firmware<'_> {
        Firmware { client: self }
    }
}

impl Firmware<'_> {
    /// The first page of modules, plus the URL of the next page.
    pub async fn modules_page(&self, filter: &ModuleFilter) -> Result<(Page<FirmwareModule>, Option<Url>)> {
        paging::fetch_page(self.client, filter.to_url(self.client)?).await
    }

    /// A page of modules from a `next`/`prev` link the service sent earlier.
    pub async fn modules_page_at(&self, link: &Url) -> Result<(Page<FirmwareModule>, Option<Url>)> {
        paging::fetch_page(self.client, link.clone()).await
    }

    /// Every module, page after page.
    pub fn modules(&self, filter: &ModuleFilter) -> Result<impl Stream<Item = Result<FirmwareModule>>> {
        Ok(paging::items(self.client.clone(), filter.to_url(self.client)?))
    }

    pub async fn module(&self, id: Uuid) -> Result<FirmwareModule> {
        self.client.get_json(self.client.url(&format!("firmware/modules/{id}"))?).await
    }

    // ---- Packages ----

    /// The first page of packages, plus the URL of the next page.
    pub async fn packages_page(&self, filter: &PackageFilter) -> Result<(Page<FirmwarePackage>, Option<Url>)> {
        paging::fetch_page(self.client, filter.to_url(self.client)?).await
    }

    /// A page of packages from a `next`/`prev` link the service sent earlier.
    pub async fn packages_page_at(&self, link: &Url) -> Result<(Page<FirmwarePackage>, Option<Url>)> {
        paging::fetch_page(self.client, link.clone()).await
    }

    /// Every package, page after page.
    pub fn packages(&self, filter: &PackageFilter) -> Result<impl Stream<Item = Result<FirmwarePackage>>> {
        Ok(paging::items(self.client.clone(), filter.to_url(self.client)?))
    }

    /// One package, with the related resources `embed` names.
    pub async fn package(&self, id: Uuid, embed: &[Embed]) -> Result<FirmwarePackage> {
        let mut url = self.client.url(&format!("firmware/packages/{id}"))?;
        if let Some(embed) = embed_value(embed) {
            url.query_pairs_mut().append_pair("embed", &embed);
        }
        self.client.get_json(url).await
    }

    /// Creates a package (`201`). A second package of the same module and version is a
    /// conflict.
    pub async fn create_package(&self, package: &NewPackage) -> Result<FirmwarePackage> {
        package.validate()?;
        self.client.post_json_as(self.client.url("firmware/packages")?, package).await
    }

    /// Changes a package's description (the only field that can change); `None` removes it.
    /// The service answers `201` with the package.
    pub async fn update_package_description(&self, id: Uuid, description: Option<&str>) -> Result<FirmwarePackage> {
        if let Some(d) = description {
            validate::description(d).map_err(|r| Error::invalid("description", r))?;
        }
        let body = serde_json::json!({ "description": description });
        self.client.put_json_as(self.client.url(&format!("firmware/packages/{id}"))?, &body).await
    }

    /// Deletes a package and its files.
    pub async fn delete_package(&self, id: Uuid) -> Result<()> {
        self.client.delete_call(self.client.url(&format!("firmware/packages/{id}"))?).await
    }

    /// Deletes a package's release-notes file.
    pub async fn delete_release_notes(&self, package: Uuid) -> Result<()> {
        self.client.delete_call(self.client.url(&format!("firmware/packages/{package}/release-notes-file"))?).await
    }

    // ---- Firmware states ----

    /// The first page of firmware states, plus the URL of the next page.
    pub async fn states_page(&self, filter: &StateFilter) -> Result<(Page<FirmwareState>, Option<Url>)> {
        paging::fetch_page(self.client, filter.to_url(self.client)?).await
    }

    /// A page of states from a `next`/`prev` link the service sent earlier.
    pub async fn states_page_at(&self, link: &Url) -> Result<(Page<FirmwareState>, Option<Url>)> {
        paging::fetch_page(self.client, link.clone()).await
    }

    /// Every firmware state, page after page.
    pub fn states(&self, filter: &StateFilter) -> Result<impl Stream<Item = Result<FirmwareState>>> {
        Ok(paging::items(self.client.clone(), filter.to_url(self.client)?))
    }

    /// Whether this service is known to offer the set-target operation. The reference does not
    /// show one (section 4.1, "not shown"); the simulator documents `PUT
    /// /firmware/states/{deviceId}/{moduleId}` and identifies itself at `GET /_sim/info`.
    /// Against any other service this answers `false` rather than guessing a path.
    pub async fn set_target_supported(&self) -> Result<bool> {
        let url = self.client.url("_sim/info")?;
        match self.client.get_json::<serde_json::Value>(url).await {
            Ok(info) => Ok(info.get("seed").is_some() && info.get("devicesPerClient").is_some()),
            Err(Error::Api { status, .. }) if (400..500).contains(&status) => Ok(false),
            Err(Error::Protocol { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Sets (or with `None` resets) the version a device's module should update to
    /// (`PUT /firmware/states/{deviceId}/{moduleId}`, simulator assumption A-38). The version
    /// must be a package of the module with its firmware file uploaded.
    pub async fn set_target(&self, device: &DeviceId, module: Uuid, version: Option<&str>) -> Result<FirmwareState> {
        if let Some(v) = version {
            validate::firmware_version(v).map_err(|r| Error::invalid("targetFirmwareVersion", r))?;
        }
        let mut url = self.client.url("firmware/states")?;
        url.path_segments_mut()
            .map_err(|_| Error::invalid("base URL", "cannot carry a path"))?
            .pop_if_empty()
            .extend([device.to_string(), module.to_string()]);
        let body = serde_json::json!({ "targetFirmwareVersion": version });
        self.client.put_json_as(url, &body).await
    }
}

