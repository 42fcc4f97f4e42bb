//! Firmware operations (reference section 4.1).

use futures::Stream;
use serde::Serialize;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use url::Url;
use uuid::Uuid;

use crate::client::RequestSpec;
use crate::error::{Error, FieldError, Result};
use crate::model::{validate, DeviceId, FirmwareModule, FirmwarePackage, FirmwareState, Page, UpdateStatus};
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
    /// e.g. `-createdAt,firmwareVersion`; only its syntax is checked ([`PACKAGE_SORT_FIELDS`] are the simulator's).
    pub sort: Option<String>,
    pub limit: Option<u32>,
}

impl PackageFilter {
    fn to_url(&self, client: &Client) -> Result<Url> {
        let mut url = client.url("firmware/packages")?;
        {
            let mut q = url.query_pairs_mut();
            crate::calls::append_window(&mut q, self.limit, self.sort.as_deref())?;
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

    /// Every field rule of section 2.2 the package breaks, all at once in body order: what a
    /// form shows next to its fields as the user types. Empty when it can be sent.
    pub fn check(&self) -> Vec<FieldError> {
        let mut broken = Vec::new();
        if let Err(rule) = validate::firmware_version(&self.firmware_version) {
            broken.push(FieldError::new("firmwareVersion", rule));
        }
        if let Some(Err(rule)) = self.description.as_deref().map(validate::description) {
            broken.push(FieldError::new("description", rule));
        }
        broken
    }

    /// The field rules of section 2.2, checked before sending: the first one broken, if any.
    pub fn validate(&self) -> Result<()> {
        match self.check().into_iter().next() {
            Some(broken) => Err(broken.into()),
            None => Ok(()),
        }
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
    /// Only its syntax is checked ([`STATE_SORT_FIELDS`] are the simulator's).
    pub sort: Option<String>,
    pub limit: Option<u32>,
}

impl StateFilter {
    fn to_url(&self, client: &Client) -> Result<Url> {
        let mut url = client.url("firmware/states")?;
        {
            let mut q = url.query_pairs_mut();
            crate::calls::append_window(&mut q, self.limit, self.sort.as_deref())?;
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
            crate::calls::append_window(&mut q, self.limit, self.sort.as_deref())?;
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

    /// Sends a set-target request as a profile configures it (the reference does not show the
    /// operation, section 4.1: "not shown"; the console builds the request from the profile's
    /// template, `dcs_console::set_target`). The path is taken relative to the base URL and must
    /// stay under it: a path that would resolve elsewhere (dot segments, a query, another host)
    /// is refused before anything is sent. Any 2xx answer is success; its body is kept as it came.
    pub async fn send_set_target(&self, request: &SetTargetRequest) -> Result<SetTargetAnswer> {
        let url = request.url(self.client.config().base_url.as_str())?;
        let spec = RequestSpec {
            body: Some(serde_json::to_vec(&request.body).map_err(|e| Error::invalid("setTarget.body", e.to_string()))?),
            ..RequestSpec::new(request.method.as_reqwest(), url)
        };
        let bytes = self.client.send_request(spec).await?;
        Ok(SetTargetAnswer::read(&bytes))
    }
}

/// The methods a set-target operation may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SetTargetMethod {
    Put,
    Post,
    Patch,
}

impl SetTargetMethod {
    pub const ALL: [SetTargetMethod; 3] = [SetTargetMethod::Put, SetTargetMethod::Post, SetTargetMethod::Patch];

    pub fn as_str(self) -> &'static str {
        match self {
            SetTargetMethod::Put => "PUT",
            SetTargetMethod::Post => "POST",
            SetTargetMethod::Patch => "PATCH",
        }
    }

    /// `PUT`, `POST` or `PATCH` (any case).
    pub fn parse(s: &str) -> Option<SetTargetMethod> {
        SetTargetMethod::ALL.into_iter().find(|m| m.as_str().eq_ignore_ascii_case(s.trim()))
    }

    fn as_reqwest(self) -> reqwest::Method {
        match self {
            SetTargetMethod::Put => reqwest::Method::PUT,
            SetTargetMethod::Post => reqwest::Method::POST,
            SetTargetMethod::Patch => reqwest::Method::PATCH,
        }
    }
}

/// One set-target request with its values filled in: the method, the path relative to the base
/// URL (starting with `/`, its values already percent-encoded) and the JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct SetTargetRequest {
    pub method: SetTargetMethod,
    pub path: String,
    pub body: serde_json::Value,
}

impl SetTargetRequest {
    /// The request's address under `base_url`, or a refusal when the path would not stay under
    /// it exactly as written (so the token never goes anywhere else).
    pub fn url(&self, base_url: &str) -> Result<Url> {
        let refuse = |rule: &str| Error::invalid("setTarget.path", rule);
        let rest = self.path.strip_prefix('/').ok_or_else(|| refuse("must start with `/`"))?;
        if rest.starts_with('/')
            || self.path.contains(['?', '#', '\\'])
            || self.path.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(refuse("must be a plain path under the base URL, without a host, query or fragment"));
        }
        let base = Url::parse(base_url).map_err(|e| Error::invalid("base URL", e.to_string()))?;
        let prefix = base.path().trim_end_matches('/').to_owned();
        let wanted = format!("{prefix}/{rest}");
        let mut url = base;
        url.set_path(&wanted);
        if url.path() != wanted || url.query().is_some() || url.fragment().is_some() {
            return Err(refuse("must stay under the base URL as written (no `.` or `..` segments)"));
        }
        Ok(url)
    }
}

/// What the service answered a set-target request: its body as it came (`null` when empty, a
/// string when it is not JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct SetTargetAnswer {
    pub body: serde_json::Value,
}

impl SetTargetAnswer {
    fn read(bytes: &[u8]) -> SetTargetAnswer {
        let body = if bytes.iter().all(u8::is_ascii_whitespace) {
            serde_json::Value::Null
        } else {
            serde_json::from_slice(bytes).unwrap_or_else(|_| {
                serde_json::Value::String(String::from_utf8_lossy(bytes).chars().take(2000).collect())
            })
        };
        SetTargetAnswer { body }
    }

    /// The answer read as a firmware state, when it is one (the simulator's is, A-38; another
    /// service may answer anything, or nothing).
    pub fn state(&self) -> Option<FirmwareState> {
        serde_json::from_value(self.body.clone()).ok()
    }
}

#[cfg(test)]
mod set_target_tests {
    use super::*;

    fn req(path: &str) -> SetTargetRequest {
        SetTargetRequest { method: SetTargetMethod::Put, path: path.into(), body: serde_json::Value::Null }
    }

    #[test]
    fn the_path_stays_under_the_base_url() {
        let ok = req("/firmware/states/a%2Fb/c").url("https://h.example/api/").unwrap();
        assert_eq!(ok.as_str(), "https://h.example/api/firmware/states/a%2Fb/c");
        assert_eq!(req("/x").url("https://h.example").unwrap().as_str(), "https://h.example/x");
        for bad in
            ["x", "//evil.example/x", "/a/../b", "/a/%2e%2E/b", "/a/./b", "/a?b=1", "/a#b", "/a\\b", "/a b", "/a\u{0}"]
        {
            assert!(req(bad).url("https://h.example/api/").is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn answers_are_kept_as_they_came() {
        assert_eq!(SetTargetAnswer::read(b"").body, serde_json::Value::Null);
        assert_eq!(SetTargetAnswer::read(b"accepted").body, serde_json::json!("accepted"));
        let a = SetTargetAnswer::read(br#"{"jobId": 7}"#);
        assert_eq!(a.body["jobId"], 7);
        assert!(a.state().is_none());
    }
}

#[cfg(test)]
mod package_tests {
    use super::*;

    /// A package names its version and its description together, not the first it stops at.
    #[test]
    fn every_broken_field_of_a_package_is_named_at_once() {
        let bad = NewPackage::new(Uuid::nil(), Uuid::nil(), "1.0 beta").description("tab\there");
        let fields: Vec<String> = bad.check().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["firmwareVersion", "description"]);
        let first = bad.validate().unwrap_err().to_string();
        assert!(first.starts_with("firmwareVersion:"), "{first}");
        assert_eq!(NewPackage::new(Uuid::nil(), Uuid::nil(), "1.0.0").description("ok").check(), vec![]);
    }
}
