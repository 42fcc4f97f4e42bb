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
}

crate::known_values! {
    /// `direction` of a beta sort order.
    SortDirection { Asc => "ASC", Desc => "DESC" }
}

crate::known_values! {
    /// `nullHandling` of a beta sort order.
    NullHandling { Native => "NATIVE", NullsFirst => "NULLS_FIRST", NullsLast => "NULLS_LAST" }
}

/// One element of a beta page's `sort` array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BetaSortOrder {
    pub direction: SortDirection,
    pub property: String,
    pub ignore_case: bool,
    pub null_handling: NullHandling,
    pub ascending: bool,
    pub descending: bool,
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

/// The paged answer of `GET /api/devices`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BetaDevicePage {
    pub content: Vec<BetaDevice>,
    /// Whether this is the last page (also true past the end and when there are no results).
    pub last: bool,
    /// Whether this is page 0.
    pub first: bool,
    pub total_pages: u64,
    pub total_elements: u64,
    /// Devices on this page (`content.len()`).
    pub number_of_elements: u64,
    /// The page size asked for.
    pub size: u64,
    /// The zero-based page number asked for.
    pub number: u64,
    #[serde(default)]
    pub sort: Vec<BetaSortOrder>,
}

impl BetaDevicePage {
    /// Builds a page with the paging fields derived from the total, the page and its size.
    pub fn new(content: Vec<BetaDevice>, total_elements: u64, number: u64, size: u64, sort: Vec<BetaSortOrder>) -> Self {
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
            sort,
        }
    }
}

/// The answer of `GET /api/v1/lifecycle/clients/{clientId}/context-switch`. The reference does
/// not show one; this is the simulator's choice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ContextSwitch {
    pub client_id: Uuid,
    pub granted: bool,
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
            }],
            1,
            0,
            20,
            vec![BetaSortOrder::new("name", false)],
        );
        let v = serde_json::to_value(&page).unwrap();
        for key in ["content", "last", "first", "totalPages", "totalElements", "numberOfElements", "size", "number", "sort"] {
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
}
