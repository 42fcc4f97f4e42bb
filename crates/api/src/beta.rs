//! The deprecated beta API (reference section 4.5): the paged device listing and the context
//! switch of the sub-customer mode (`x-client-id`, set on [`crate::ClientConfig`]).

use uuid::Uuid;

use crate::error::{Error, Result};
use crate::model::beta::{params, ACTUATOR_V1_MEDIA_TYPE, DEVICE_V1_MEDIA_TYPE};
use crate::model::BetaDevicePage;
use crate::model::DeviceId;
use crate::Client;

/// Query of `GET /api/devices`; `None` leaves the service's default.
#[derive(Debug, Clone, Default)]
pub struct BetaDeviceQuery {
    /// Zero-based page number.
    pub current_page: Option<u32>,
    /// 1 or more (default 20).
    pub page_size: Option<u32>,
    /// Case-sensitive partial match.
    pub search: Option<String>,
    /// e.g. `name` (default).
    pub sort_by: Option<String>,
    /// Ascending (default) or descending.
    pub descending: Option<bool>,
}

/// The beta area.
pub struct Beta<'a> {
    client: &'a Client,
}

impl Client {
    pub fn beta(&self) -> Beta<'_> {
        Beta { client: self }
    }
}

impl Beta<'_> {
    /// One page of `GET /api/devices`.
    pub async fn devices(&self, query: &BetaDeviceQuery) -> Result<BetaDevicePage> {
        let mut url = self.client.url("api/devices")?;
        {
            let mut q = url.query_pairs_mut();
            if let Some(p) = query.current_page {
                q.append_pair(params::CURRENT_PAGE, &p.to_string());
            }
            if let Some(s) = query.page_size {
                if s == 0 {
                    return Err(Error::invalid(params::PAGE_SIZE, "must be at least 1"));
                }
                q.append_pair(params::PAGE_SIZE, &s.to_string());
            }
            if let Some(s) = &query.search {
                q.append_pair(params::SEARCH, s);
            }
            if let Some(s) = &query.sort_by {
                if s.is_empty() {
                    return Err(Error::invalid(params::SORT_BY, "must not be empty"));
                }
                q.append_pair(params::SORT_BY, s);
            }
            if let Some(d) = query.descending {
                q.append_pair(params::SORT_ORDER, if d { "DESC" } else { "ASC" });
            }
        }
        let url = crate::calls::tidy(url);
        self.client.get_json_accepting(url, DEVICE_V1_MEDIA_TYPE).await
    }

    /// Every device, page after page (page number paging, stopping at the last page). A page
    /// that brings only devices already listed ends the listing with a protocol error: a
    /// service that never says `last` and answers the same pages again would otherwise be
    /// read for ever.
    pub async fn all_devices(&self, query: &BetaDeviceQuery) -> Result<Vec<crate::model::BetaDevice>> {
        let mut q = query.clone();
        let mut page_no = q.current_page.unwrap_or(0);
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        loop {
            q.current_page = Some(page_no);
            let page = self.devices(&q).await?;
            let last = page.is_last();
            let new = page.content.iter().filter(|d| seen.insert(d.uuid)).count();
            if new == 0 && !page.content.is_empty() {
                return Err(Error::Protocol {
                    url: self.client.url("api/devices")?.to_string(),
                    reason: format!("page {page_no} of the device listing brings only devices already listed, and is not the last; stopping instead of reading the same pages for ever"),
                });
            }
            out.extend(page.content);
            if last {
                return Ok(out);
            }
            page_no = page_no.checked_add(1).ok_or_else(|| Error::Protocol {
                url: self.client.url("api/devices").map(|u| u.to_string()).unwrap_or_default(),
                reason: format!("the device listing has more than {} pages", u32::MAX),
            })?;
        }
    }

    /// `GET /api/v1/lifecycle/clients/{clientId}/context-switch`: lets this API key act for
    /// the customer in the deprecated `x-client-id` mode. A success status grants it; the
    /// answer's shape is not shown, so it is returned as it came (JSON, `null` when empty).
    /// [`crate::model::beta::switch_refused`] says whether it nonetheless refuses.
    pub async fn context_switch(&self, customer: Uuid) -> Result<serde_json::Value> {
        let url = self.client.url(&format!("api/v1/lifecycle/clients/{customer}/context-switch"))?;
        self.client.get_any_json_headers(url).await
    }

    /// `POST /api/actuator/downlinks`: one hex payload per LoRa device (DevEUI), sent on LoRa
    /// FPort `port`; each becomes an actuator downlink. Checked before sending; never retried
    /// (it creates downlinks). The answer's shape is not shown: it is returned as it came.
    pub async fn actuator_downlinks(
        &self,
        payloads: &[(DeviceId, String)],
        port: u8,
        external_reference: Option<&str>,
    ) -> Result<serde_json::Value> {
        if payloads.is_empty() {
            return Err(Error::invalid("payloads", "give at least one device and payload"));
        }
        if !(1..=223).contains(&port) {
            return Err(Error::invalid("port", "must be a LoRa FPort from 1 to 223"));
        }
        let mut records = Vec::with_capacity(payloads.len());
        for (i, (device, hex)) in payloads.iter().enumerate() {
            let DeviceId::DevEui { hex: eui, .. } = device else {
                return Err(Error::invalid(
                    &format!("payloads[{i}].device"),
                    "must be a LoRa device given by its DevEUI",
                ));
            };
            if hex.is_empty() || hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(Error::invalid(
                    &format!("payloads[{i}].payloadHex"),
                    "must be an even number of hex characters",
                ));
            }
            records.push(serde_json::json!({"bn": format!("urn:dev:deveui:{eui}:"), "n": "payloadHex", "vs": hex}));
        }
        let mut url = self.client.url("api/actuator/downlinks")?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("port", &port.to_string());
            if let Some(r) = external_reference {
                q.append_pair("externalReference", r);
            }
        }
        self.client.post_any_accepting(url, &records, ACTUATOR_V1_MEDIA_TYPE).await
    }
}
