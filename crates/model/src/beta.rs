//! The deprecated beta API (reference section 4.5): the paged device listing of
//! `GET /api/devices` and the context-switch answer of the deprecated sub-customer mode.
//!
//! The beta API pages by page number, unlike the cursor pages of the new API (section 1), and
//! its page carries totals. Field names follow the reference: camelCase, except
//! `deviceSpecificationUUID`.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The vendor media type `GET /api/devices` requires in `Accept` and answers with.
pub const DEVICE_V1_MEDIA_TYPE: &str = "application/vnd.service.device.v1.response+json";
/// `Accept` of `POST /api/actuator/downlinks`, and the media type of its answer.
pub const ACTUATOR_V1_MEDIA_TYPE: &str = "application/vnd.service.actuator.v1.response+json";

/// The header of the deprecated sub-customer mode: `x-client-id: <customer_id>`.
pub const X_CLIENT_ID: &str = "x-client-id";

/// Query parameters of `GET /api/devices` and their defaults.
pub mod params {
    pub const CURRENT_PAGE: &str = "currentPage";
    pub const PAGE_SIZE: &str = "pageSize";
    pub const SEARCH: &str = "search";
    pub const SORT_BY: &str = "sortBy";
    pub const SORT_ORDER: &str = "sortOrder";
    pub const DEFAULT_PAGE_SIZE: u32 = 20;
    pub const DEFAULT_SORT_BY: &str = "name";
    pub const DEFAULT_SORT_ORDER: &str = "ASC";
    /// `sortBy` values the simulator accepts (its choice; the reference shows only `name`).
    pub const SORT_FIELDS: &[&str] = &["name", "uuid", "barcode", "description"];
}

/// A device as the beta listing shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BetaDevice {
    pub uuid: Uuid,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Free-form device metadata, passed through untouched.
    #[serde(default)]
    pub metadata: serde_json::Value,
    #[serde(rename = "deviceSpecificationUUID")]
    pub device_specification_uuid: Uuid,
    #[serde(default)]
    pub barcode: Option<String>,
    /// Members this version does not know, kept as sent.
    #[serde(flatten)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

crate::known_values! {
    /// `direction` of a beta sort order.
    SortDirection { Asc => "ASC", Desc => "DESC" }
}

crate::known_values! {
    /// `nullHandling` of a beta sort order.
    NullHandling { Native => "NATIVE", NullsFirst => "NULLS_FIRST", NullsLast => "NULLS_LAST" }
}

/// One element of a beta page's `sort` array. Every member may be missing from an answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BetaSortOrder {
    #[serde(default = "SortDirection::missing")]
    pub direction: SortDirection,
    #[serde(default)]
    pub property: String,
    #[serde(default)]
    pub ignore_case: bool,
    #[serde(default = "NullHandling::missing")]
    pub null_handling: NullHandling,
    #[serde(default)]
    pub ascending: bool,
    #[serde(default)]
    pub descending: bool,
}

impl SortDirection {
    fn missing() -> Self {
        Self::Unknown(String::new())
    }
}

impl NullHandling {
    fn missing() -> Self {
        Self::Unknown(String::new())
    }
}

/// The `sort` of a beta page: the array of orders the reference shows, or whatever else a
/// service sends there (Spring, for one, writes an object such as `{"sorted": true, ...}`),
/// kept as it came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(untagged)]
pub enum BetaSort {
    Orders(Vec<BetaSortOrder>),
    Other(serde_json::Value),
}

impl Default for BetaSort {
    fn default() -> Self {
        BetaSort::Orders(Vec::new())
    }
}

impl BetaSort {
    /// The orders, when the service sent the array the reference shows.
    pub fn orders(&self) -> &[BetaSortOrder] {
        match self {
            BetaSort::Orders(o) => o,
            BetaSort::Other(_) => &[],
        }
    }
}

impl BetaSortOrder {
    /// A case-sensitive order on `property` with the store's native null handling.
    pub fn new(property: &str, ascending: bool) -> Self {
        BetaSortOrder {
            direction: if ascending { SortDirection::Asc } else { SortDirection::Desc },
            property: property.to_owned(),
            ignore_case: false,
            null_handling: NullHandling::Native,
            ascending,
            descending: !ascending,
        }
    }
}

/// The paged answer of `GET /api/devices`. Every member may be missing from an answer (each
/// reads as empty, zero or false; use [`is_last`](Self::is_last) to know whether to go on), and
/// members this version does not know are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BetaDevicePage {
    #[serde(default)]
    pub content: Vec<BetaDevice>,
    /// Whether this is the last page (also true past the end and when there are no results).
    #[serde(default)]
    pub last: bool,
    /// Whether this is page 0.
    #[serde(default)]
    pub first: bool,
    #[serde(default)]
    pub total_pages: u64,
    #[serde(default)]
    pub total_elements: u64,
    /// Devices on this page (`content.len()`).
    #[serde(default)]
    pub number_of_elements: u64,
    /// The page size asked for.
    #[serde(default)]
    pub size: u64,
    /// The zero-based page number asked for.
    #[serde(default)]
    pub number: u64,
    #[serde(default)]
    pub sort: BetaSort,
    /// Members this version does not know, kept as sent.
    #[serde(flatten)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl BetaDevicePage {
    /// Builds a page with the paging fields derived from the total, the page and its size.
    pub fn new(
        content: Vec<BetaDevice>,
        total_elements: u64,
        number: u64,
        size: u64,
        sort: Vec<BetaSortOrder>,
    ) -> Self {
        let total_pages = if size == 0 { 0 } else { total_elements.div_ceil(size) };
        BetaDevicePage {
            number_of_elements: content.len() as u64,
            content,
            last: number.saturating_add(1) >= total_pages,
            first: number == 0,
            total_pages,
            total_elements,
            size,
            number,
            sort: BetaSort::Orders(sort),
            extra: serde_json::Map::new(),
        }
    }

    /// No page follows this one: `last` says so, or the page is empty (a page without `last`
    /// is never taken as the end while it has devices).
    pub fn is_last(&self) -> bool {
        self.last || self.content.is_empty()
    }
}

/// The answer the simulator gives to `GET /api/v1/lifecycle/clients/{clientId}/context-switch`
/// . The reference does not show one, so the client does not read it as this type: it
/// keeps the answer as JSON (see [`switch_refused`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ContextSwitch {
    pub client_id: Uuid,
    pub granted: bool,
}

/// Whether a context-switch answer (any JSON, its shape not shown) says the switch was refused:
/// only an explicit `"granted": false`. The successful status is what grants the switch; a
/// refusal the service means is a 4xx.
pub fn switch_refused(answer: &serde_json::Value) -> bool {
    answer.get("granted") == Some(&serde_json::Value::Bool(false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pages_derive_first_last_and_totals() {
        let p = BetaDevicePage::new(vec![], 45, 0, 20, vec![]);
        assert_eq!((p.total_pages, p.first, p.last), (3, true, false));
        let p = BetaDevicePage::new(vec![], 45, 2, 20, vec![]);
        assert_eq!((p.total_pages, p.first, p.last), (3, false, true));
        let p = BetaDevicePage::new(vec![], 40, 1, 20, vec![]);
        assert_eq!((p.total_pages, p.first, p.last), (2, false, true));
        let p = BetaDevicePage::new(vec![], 0, 0, 20, vec![]);
        assert_eq!((p.total_pages, p.first, p.last), (0, true, true));
        let p = BetaDevicePage::new(vec![], 10, 7, 20, vec![]);
        assert_eq!((p.total_pages, p.first, p.last), (1, false, true));
    }

    #[test]
    fn wire_names_follow_the_reference() {
        let id = Uuid::nil();
        let page = BetaDevicePage::new(
            vec![BetaDevice {
                uuid: id,
                name: "n".into(),
                description: Some("d".into()),
                metadata: json!({"a": 1}),
                device_specification_uuid: id,
                barcode: Some("b".into()),
                extra: serde_json::Map::new(),
            }],
            1,
            0,
            20,
            vec![BetaSortOrder::new("name", false)],
        );
        let v = serde_json::to_value(&page).unwrap();
        for key in
            ["content", "last", "first", "totalPages", "totalElements", "numberOfElements", "size", "number", "sort"]
        {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert!(v["content"][0].get("deviceSpecificationUUID").is_some());
        assert_eq!(
            v["sort"][0],
            json!({"direction": "DESC", "property": "name", "ignoreCase": false, "nullHandling": "NATIVE", "ascending": false, "descending": true})
        );
        let back: BetaDevicePage = serde_json::from_value(v).unwrap();
        assert_eq!(back, page);
    }

    #[test]
    fn pages_missing_members_or_with_another_sort_still_read() {
        let p: BetaDevicePage = serde_json::from_value(json!({})).unwrap();
        assert!(p.content.is_empty() && p.is_last());
        let p: BetaDevicePage = serde_json::from_value(json!({
            "content": [{"uuid": Uuid::nil(), "deviceSpecificationUUID": Uuid::nil(), "tags": ["a"]}],
            "sort": {"sorted": true, "unsorted": false, "empty": false},
            "pageable": {"offset": 0}
        }))
        .unwrap();
        assert!(!p.is_last(), "a page with devices and no `last` is not the end");
        assert_eq!(p.sort, BetaSort::Other(json!({"sorted": true, "unsorted": false, "empty": false})));
        assert!(p.sort.orders().is_empty());
        assert_eq!(p.extra["pageable"], json!({"offset": 0}));
        assert_eq!(p.content[0].extra["tags"], json!(["a"]));
        assert_eq!(p.content[0].name, "");
        let p: BetaDevicePage =
            serde_json::from_value(json!({"sort": [{"property": "name", "direction": "ASC"}], "last": true})).unwrap();
        assert_eq!(p.sort.orders()[0].direction, SortDirection::Asc);
        assert!(p.is_last());
    }

    #[test]
    fn a_context_switch_is_refused_only_by_an_explicit_false() {
        assert!(switch_refused(&json!({"granted": false})));
        for ok in [json!({"granted": true}), json!(null), json!({}), json!("OK"), json!({"status": "switched"})] {
            assert!(!switch_refused(&ok), "{ok}");
        }
    }
}
