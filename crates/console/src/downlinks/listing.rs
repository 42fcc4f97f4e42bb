//! Listing, reading, sending and cancelling downlinks through the client.

use dcs_api::downlinks::{ConnectionDownlinkFilter, DownlinkFilter};
use dcs_api::model::downlinks::{ActuatorDownlink, ConnectionDownlink, ConnectionDownlinkStatus};
use dcs_api::{Client, Error, Raw, TimeFilter};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::draft::{ActuatorDraft, ConnectionDraft};
use super::typed::{field, optional};
use super::{DownlinkKind, DownlinkView};
use crate::FieldError;

/// Which page of which kind's downlinks to fetch: the first one for these filters (as typed;
/// empty is none), or the one a `next` link of an earlier page points to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DownlinkPageRequest {
    pub kind: DownlinkKind,
    pub next: Option<String>,
    pub sort: Option<String>,
    /// Actuator only: `externalReference` exactly, `networkId` and `message` partially.
    pub q: Option<String>,
    /// Connection kinds only.
    pub device_id: Option<String>,
    /// Connection kinds only.
    pub status: Option<String>,
    pub created_before: Option<String>,
    pub created_since: Option<String>,
    pub modified_before: Option<String>,
    pub modified_since: Option<String>,
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DownlinkPage {
    pub items: Vec<DownlinkView>,
    /// Pass back as `next` for the following page; absent on the last page.
    pub next: Option<String>,
}

impl DownlinkPageRequest {
    /// The first page of `kind`'s downlinks, `limit` a page, unfiltered, in the service's order
    /// (set the filters wanted with struct update syntax).
    pub fn first(kind: DownlinkKind, limit: u32) -> DownlinkPageRequest {
        DownlinkPageRequest {
            kind,
            next: None,
            sort: None,
            q: None,
            device_id: None,
            status: None,
            created_before: None,
            created_since: None,
            modified_before: None,
            modified_since: None,
            limit: Some(limit),
        }
    }

    fn time(&self) -> Result<TimeFilter, FieldError> {
        crate::filters::time_filter(
            self.created_before.as_deref(),
            self.created_since.as_deref(),
            self.modified_before.as_deref(),
            self.modified_since.as_deref(),
        )
    }

    fn text(v: &Option<String>) -> Option<String> {
        v.as_deref().and_then(optional).map(str::to_owned)
    }

    pub fn actuator_filter(&self) -> Result<DownlinkFilter, FieldError> {
        for (name, v) in [("deviceId", &self.device_id), ("status", &self.status)] {
            if Self::text(v).is_some() {
                return Err(field(
                    name,
                    "is a filter of the connection-specific lists; search actuator downlinks with q",
                ));
            }
        }
        Ok(DownlinkFilter {
            q: Self::text(&self.q),
            time: self.time()?,
            sort: Self::text(&self.sort),
            limit: self.limit,
        })
    }

    pub fn connection_filter(&self) -> Result<ConnectionDownlinkFilter, FieldError> {
        if Self::text(&self.q).is_some() {
            return Err(field("q", "only actuator downlinks are searched by text; filter by device or status here"));
        }
        Ok(ConnectionDownlinkFilter {
            device_id: Self::text(&self.device_id),
            status: Self::text(&self.status).map(|s| ConnectionDownlinkStatus::from(s.as_str())),
            time: self.time()?,
            sort: Self::text(&self.sort),
            limit: self.limit,
        })
    }
}

fn page_link(link: &str) -> Result<url::Url, FieldError> {
    url::Url::parse(link).map_err(|_| field("next", "must be a page link"))
}

fn actuator_view(d: Raw<ActuatorDownlink>) -> DownlinkView {
    DownlinkView::actuator(&d.value, d.raw)
}

fn connection_view(kind: DownlinkKind, d: Raw<ConnectionDownlink>) -> DownlinkView {
    DownlinkView::connection(kind, &d.value, d.raw)
}

/// One page of a kind's downlinks.
pub async fn list(client: &Client, req: &DownlinkPageRequest) -> Result<DownlinkPage, Error> {
    let downlinks = client.downlinks();
    match req.kind.connection() {
        None => {
            let (page, next) = match &req.next {
                Some(link) => downlinks.page_at(&page_link(link)?).await?,
                None => downlinks.page(&req.actuator_filter()?).await?,
            };
            Ok(DownlinkPage {
                items: page.items.into_iter().map(actuator_view).collect(),
                next: next.map(String::from),
            })
        }
        Some(c) => {
            let area = downlinks.connection(c);
            let (page, next) = match &req.next {
                Some(link) => area.page_at(&page_link(link)?).await?,
                None => area.page(&req.connection_filter()?).await?,
            };
            let items = page.items.into_iter().map(|d| connection_view(req.kind, d)).collect();
            Ok(DownlinkPage { items, next: next.map(String::from) })
        }
    }
}

/// The id of a connection-specific downlink: a UUID on the four documented kinds (section
/// 4.3), any identifier on the digital-matter family (not shown).
pub(super) fn connection_id(kind: DownlinkKind, id: &str) -> Result<String, FieldError> {
    let id = id.trim();
    if kind != DownlinkKind::Digitalmatter && Uuid::parse_str(id).is_err() {
        return Err(field("downlinkId", "must be a UUID"));
    }
    Ok(id.to_owned())
}

/// One downlink as the service holds it now.
pub async fn get(client: &Client, kind: DownlinkKind, id: &str) -> Result<DownlinkView, Error> {
    let downlinks = client.downlinks();
    match kind.connection() {
        None => Ok(actuator_view(downlinks.get(id).await?)),
        Some(c) => Ok(connection_view(kind, downlinks.connection(c).get(&connection_id(kind, id)?).await?)),
    }
}

/// Sends an actuator downlink (never repeated after a failure: it creates one).
pub async fn send_actuator(client: &Client, draft: &ActuatorDraft) -> Result<DownlinkView, Error> {
    let new = draft.new_downlink()?;
    Ok(actuator_view(client.downlinks().create(&new).await?))
}

/// Sends a connection-specific downlink of the draft's kind.
pub async fn send_connection(client: &Client, draft: &ConnectionDraft) -> Result<DownlinkView, Error> {
    let new = draft.new_downlink()?;
    let kind = new.kind();
    Ok(connection_view(draft.kind, client.downlinks().connection(kind).create(&new).await?))
}

/// Asks for a cancellation (202: carried out by the service later).
pub async fn cancel(client: &Client, kind: DownlinkKind, id: &str, forced: bool) -> Result<(), Error> {
    let downlinks = client.downlinks();
    match kind.connection() {
        None => downlinks.cancel(id, forced).await,
        Some(c) => downlinks.connection(c).cancel(&connection_id(kind, id)?, forced).await,
    }
}

/// One downlink of a bulk cancellation; `forced` also stops one being sent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CancelItem {
    pub kind: DownlinkKind,
    pub id: String,
    pub forced: bool,
}

/// Asks for the cancellation of each item, one after the other; each has its outcome (a refusal
/// does not stop the others).
pub async fn cancel_many(client: &Client, items: &[CancelItem]) -> Result<Vec<crate::bulk::ItemOutcome>, FieldError> {
    crate::bulk::check_items(items)?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(crate::bulk::ItemOutcome::of(&item.id, cancel(client, item.kind, &item.id, item.forced).await));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn list_filters_belong_to_their_kind() {
        let req = |kind| DownlinkPageRequest {
            kind,
            next: None,
            sort: Some("-createdAt".into()),
            q: None,
            device_id: None,
            status: None,
            created_before: None,
            created_since: Some("2026-01-05".into()),
            modified_before: None,
            modified_since: None,
            limit: None,
        };
        let a = req(DownlinkKind::Actuator);
        assert_eq!(a.actuator_filter().unwrap().time.created_since, Some(datetime!(2026-01-05 00:00 UTC)));
        assert_eq!(
            DownlinkPageRequest { status: Some("DONE".into()), ..a.clone() }.actuator_filter().unwrap_err().field,
            "status"
        );
        let c = DownlinkPageRequest { q: Some("ref".into()), ..req(DownlinkKind::Lora) };
        assert_eq!(c.connection_filter().unwrap_err().field, "q");
        let c =
            DownlinkPageRequest { status: Some(" EXECUTING ".into()), q: Some("".into()), ..req(DownlinkKind::Sms) };
        assert_eq!(c.connection_filter().unwrap().status, Some(ConnectionDownlinkStatus::Executing));
    }
}
