//! Firmware operations (reference section 4.1).

use futures::Stream;
use url::Url;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::model::{FirmwareModule, Page, SortSpec};
use crate::paging;
use crate::Client;

/// Fields `GET /firmware/modules` sorts by (as the simulator implements them).
pub const MODULE_SORT_FIELDS: &[&str] =
    &["createdAt", "modifiedAt", "name", "firmwareVersionAttributeName", "deviceSpecificationId", "id"];

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
            if let Some(limit) = self.limit {
                if limit == 0 {
                    return Err(Error::invalid("limit", "must be at least 1"));
                }
                q.append_pair("limit", &limit.to_string());
            }
            if let Some(sort) = &self.sort {
                let spec = SortSpec::parse(sort, MODULE_SORT_FIELDS).map_err(|e| Error::invalid("sort", e.to_string()))?;
                q.append_pair("sort", &spec.to_string());
            }
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
    client: &'a Client,
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
}

// ---------------------------------------------------------------------------------------------
// Firmware states (`GET /firmware/states`): the documented parameters only.

/// Fields `GET /firmware/states` sorts by (as the simulator implements them, A-41).
pub const STATE_SORT_FIELDS: &[&str] = &[
    "deviceId",
    "moduleId",
    "createdAt",
    "modifiedAt",
    "currentFirmwareVersion",
    "targetFirmwareVersion",
    "firmwareUpdateStatus",
    "firmwareUpdateStatusModifiedAt",
    "targetFirmwareVersionModifiedAt",
];

/// Filters and window of a firmware-state listing.
#[derive(Debug, Clone, Default)]
pub struct StateFilter {
    /// Only devices owned by that client.
    pub client_id: Option<Uuid>,
    pub sort: Option<String>,
    pub limit: Option<u32>,
}

impl StateFilter {
    fn to_url(&self, client: &Client) -> Result<Url> {
        let mut url = client.url("firmware/states")?;
        {
            let mut q = url.query_pairs_mut();
            crate::calls::append_window(&mut q, self.limit, self.sort.as_deref(), STATE_SORT_FIELDS)?;
            if let Some(id) = self.client_id {
                q.append_pair("clientId", &id.to_string());
            }
        }
        Ok(crate::calls::tidy(url))
    }
}

impl Firmware<'_> {
    /// The first page of firmware states, plus the URL of the next page.
    pub async fn states_page(&self, filter: &StateFilter) -> Result<(Page<crate::model::FirmwareState>, Option<Url>)> {
        paging::fetch_page(self.client, filter.to_url(self.client)?).await
    }

    /// Every firmware state, page after page.
    pub fn states(&self, filter: &StateFilter) -> Result<impl Stream<Item = Result<crate::model::FirmwareState>>> {
        Ok(paging::items(self.client.clone(), filter.to_url(self.client)?))
    }
}
