//! Cursor paging shared by every list operation (reference section 1).
//!
//! A cursor is opaque to callers: base64url of a small JSON object holding the page size, the
//! sort, every filter and where the page starts, so a `next` link alone fetches the right page.
//! Where a page starts is a keyset position for the lists that page by one (the sort's values
//! and the unique key of the row a page follows, or for `prev` precedes: A-259), so a page deep
//! in a million rows costs what the first does; the others carry an offset.

use std::collections::BTreeMap;

use axum::http::header;
use axum::http::request::Parts;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use dcs_model::SortSpec;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::ApiError;
use crate::store::query::{Keyset, Window};
use rusqlite::types::Value;

pub const DEFAULT_LIMIT: u64 = 50;
/// The reference does not show a maximum page size; the simulator chooses 1000.
pub const MAX_LIMIT: u64 = 1000;
/// The alt variant's maximum page size (A-13 (alt)).
pub const ALT_MAX_LIMIT: u64 = 100;

/// The largest offset a cursor may carry: beyond any list the simulator holds.
pub const MAX_OFFSET: u64 = u32::MAX as u64;
/// Array parameters: may repeat, or hold comma-separated values.
const REPEATABLE: &[&str] = &["embed"];
/// The time-window filters every list of sections 4.2 to 4.4 takes.
pub const TIME_FILTERS: &[&str] = &["createdBefore", "createdSince", "modifiedBefore", "modifiedSince"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cursor {
    #[serde(rename = "o")]
    pub offset: u64,
    #[serde(rename = "l")]
    pub limit: u64,
    #[serde(rename = "s", default, skip_serializing_if = "String::is_empty")]
    pub sort: String,
    #[serde(rename = "f", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub filters: BTreeMap<String, String>,
    /// The keyset position a `next` page starts after.
    #[serde(rename = "a", default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Vec<serde_json::Value>>,
    /// The keyset position a `prev` page ends before.
    #[serde(rename = "b", default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Vec<serde_json::Value>>,
}

/// A key value as a cursor carries it: text, a whole number or null.
fn key_to_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Integer(n) => (*n).into(),
        Value::Text(t) => t.clone().into(),
        _ => serde_json::Value::Null,
    }
}

fn key_from_json(v: &serde_json::Value) -> Option<Value> {
    match v {
        serde_json::Value::Null => Some(Value::Null),
        serde_json::Value::String(t) => Some(Value::Text(t.clone())),
        serde_json::Value::Number(n) => n.as_i64().map(Value::Integer),
        _ => None,
    }
}

impl Cursor {
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).expect("cursor serialises"))
    }

    pub fn decode(s: &str) -> Result<Cursor, ApiError> {
        let bad =
            || ApiError::invalid("cursor", "is not a cursor issued by this service; follow the `next` or `prev` link");
        let bytes = URL_SAFE_NO_PAD.decode(s).map_err(|_| bad())?;
        serde_json::from_slice(&bytes).map_err(|_| bad())
    }
}

/// The query string of a request, as ordered pairs, and the largest `limit` it may ask for.
#[derive(Debug, Clone, Default)]
pub struct QueryParams(Vec<(String, String)>, Option<u64>);

impl QueryParams {
    pub fn from_query(query: Option<&str>) -> QueryParams {
        QueryParams(url::form_urlencoded::parse(query.unwrap_or("").as_bytes()).into_owned().collect(), None)
    }

    /// The same query, paged by the maximum page size of `variant`.
    pub fn for_variant(mut self, variant: crate::Variant) -> QueryParams {
        self.1 = variant.is_alt().then_some(ALT_MAX_LIMIT);
        self
    }

    /// The largest page size this request may ask for.
    pub fn max_limit(&self) -> u64 {
        self.1.unwrap_or(MAX_LIMIT)
    }

    /// Every value of `name`, comma-separated ones split (for array parameters like `embed`).
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .collect()
    }

    /// The single value of `name`; a repeated parameter is an error.
    pub fn one(&self, name: &str) -> Result<Option<&str>, ApiError> {
        let mut it = self.0.iter().filter(|(k, _)| k == name);
        let first = it.next().map(|(_, v)| v.as_str());
        if it.next().is_some() {
            return Err(ApiError::invalid(name, "must be given at most once"));
        }
        Ok(first)
    }
}

/// What a list request asks for, from a cursor or from its parameters.
#[derive(Debug, Clone)]
pub struct PageRequest {
    pub cursor: Cursor,
    pub sort: SortSpec,
}

impl PageRequest {
    /// Reads `cursor` or else `limit`, `sort` and the listed filters.
    pub fn from_params(q: &QueryParams, filters: &[&str], sortable: &[&str]) -> Result<PageRequest, ApiError> {
        let cursor = match q.one("cursor")? {
            Some(c) => {
                let c = Cursor::decode(c)?;
                // Checked like the parameters it carries: a forged one may not page by 0 (a
                // `next` that never moves), past the largest page size, or past any list.
                let max = q.max_limit();
                if !(1..=max).contains(&c.limit) || c.offset > MAX_OFFSET {
                    return Err(ApiError::invalid(
                        "cursor",
                        format!("carries a page size outside 1 to {max} or an offset past {MAX_OFFSET}; follow the `next` or `prev` link"),
                    ));
                }
                let keys = c.after.iter().chain(&c.before);
                if c.after.is_some() && c.before.is_some() || keys.flatten().any(|v| key_from_json(v).is_none()) {
                    return Err(ApiError::invalid(
                        "cursor",
                        "carries a position this service never issued; follow the `next` or `prev` link",
                    ));
                }
                c
            }
            None => {
                let max = q.max_limit();
                let limit =
                    match q.one("limit")? {
                        None => DEFAULT_LIMIT,
                        Some(v) => v.parse::<u64>().ok().filter(|n| (1..=max).contains(n)).ok_or_else(|| {
                            ApiError::invalid("limit", format!("must be a whole number from 1 to {max}"))
                        })?,
                    };
                let sort = q.one("sort")?.unwrap_or("").to_owned();
                let mut f = BTreeMap::new();
                for name in filters {
                    let value = if REPEATABLE.contains(name) {
                        let all = q.all(name);
                        (!all.is_empty()).then(|| all.join(","))
                    } else {
                        q.one(name)?.map(str::to_owned)
                    };
                    if let Some(v) = value {
                        f.insert((*name).to_owned(), v);
                    }
                }
                Cursor { offset: 0, limit, sort, filters: f, after: None, before: None }
            }
        };
        let sort = if cursor.sort.is_empty() {
            SortSpec::default()
        } else {
            SortSpec::parse(&cursor.sort, sortable).map_err(|e| ApiError::invalid("sort", e.to_string()))?
        };
        Ok(PageRequest { cursor, sort })
    }

    pub fn filter(&self, name: &str) -> Option<&str> {
        self.cursor.filters.get(name).map(String::as_str)
    }

    /// A filter that must be a UUID.
    pub fn uuid_filter(&self, name: &str) -> Result<Option<Uuid>, ApiError> {
        self.filter(name).map(|v| Uuid::parse_str(v).map_err(|_| ApiError::invalid(name, "must be a UUID"))).transpose()
    }

    /// A filter that must be an RFC 3339 date-time, in the store's timestamp form.
    pub fn time_filter(&self, name: &str) -> Result<Option<String>, ApiError> {
        self.filter(name)
            .map(|v| {
                time::OffsetDateTime::parse(v, &time::format_description::well_known::Rfc3339)
                    // `9999-12-31T23:59:59-01:00` is valid RFC 3339 but past the last instant
                    // the store's UTC form can hold: it stands for "after everything";
                    // `0000-01-01T00:00:00+01:00`, before the first, for "before everything".
                    .map(|t| {
                        t.checked_to_offset(time::UtcOffset::UTC)
                            .unwrap_or(time::PrimitiveDateTime::MAX.assume_utc())
                            .max(time::macros::datetime!(0000-01-01 0:00 UTC))
                    })
                    .map(crate::store::ts)
                    .map_err(|_| ApiError::invalid(name, "must be an RFC 3339 date-time, e.g. 2026-01-05T08:00:00Z"))
            })
            .transpose()
    }

    /// The four time-window filters.
    pub fn time_window(&self) -> Result<crate::store::query::TimeWindow, ApiError> {
        Ok(crate::store::query::TimeWindow {
            created_before: self.time_filter("createdBefore")?,
            created_since: self.time_filter("createdSince")?,
            modified_before: self.time_filter("modifiedBefore")?,
            modified_since: self.time_filter("modifiedSince")?,
        })
    }

    /// The ORDER BY terms of the sort, mapped through `columns` (name -> column).
    pub fn order_by(&self, columns: &[(&'static str, &'static str)]) -> Vec<(&'static str, bool)> {
        self.sort
            .0
            .iter()
            .filter_map(|f| columns.iter().find(|(name, _)| *name == f.name).map(|(_, col)| (*col, f.descending)))
            .collect()
    }

    /// The store window: order, offset, and one row more than the page to see if more follow.
    pub fn window(&self, columns: &[(&'static str, &'static str)]) -> crate::store::query::Window {
        crate::store::query::Window {
            order_by: self.order_by(columns),
            offset: self.cursor.offset,
            limit: self.cursor.limit + 1,
            keyset: None,
        }
    }

    /// The store window of a list paged by keyset: ordered by the sort's terms (`default` when
    /// there is no sort), then by the `unique` columns not among them, in the direction of the
    /// last term; starting at
    /// the cursor's position, with one row more than the page to see if more follow.
    pub fn keyed_window(
        &self,
        columns: &[(&'static str, &'static str)],
        default: &[(&'static str, bool)],
        unique: &[&'static str],
    ) -> Result<Window, ApiError> {
        let mut terms = self.order_by(columns);
        if terms.is_empty() {
            terms = default.to_vec();
        }
        // Ties go the way of the last term, so one index in that order serves the window.
        let ties = terms.last().is_some_and(|(_, desc)| *desc);
        for col in unique {
            if !terms.iter().any(|(c, _)| c == col) {
                terms.push((col, ties));
            }
        }
        let c = &self.cursor;
        let keyset = match (&c.after, &c.before) {
            (Some(k), _) => Some((k, false)),
            (_, Some(k)) => Some((k, true)),
            _ => None,
        };
        let keyset = keyset
            .map(|(values, before)| {
                let values: Vec<Value> = values.iter().filter_map(key_from_json).collect();
                if values.len() != terms.len() {
                    return Err(ApiError::invalid(
                        "cursor",
                        "carries a position of another order; follow the `next` or `prev` link",
                    ));
                }
                Ok(Keyset { values, before })
            })
            .transpose()?;
        Ok(Window { order_by: terms, offset: c.offset, limit: c.limit + 1, keyset })
    }

    /// Turns the rows of [`PageRequest::keyed_window`], each with its key, into a page with its
    /// links: `next` starts after its last row, `prev` ends before its first.
    pub fn keyed_page<T>(&self, mut rows: Vec<(T, Vec<Value>)>, base: &str, path: &str) -> dcs_model::Page<T> {
        let c = &self.cursor;
        let more = rows.len() as u64 > c.limit;
        rows.truncate(c.limit as usize);
        let backward = c.before.is_some();
        if backward {
            rows.reverse();
        }
        let link = |after: Option<&Vec<Value>>, before: Option<&Vec<Value>>| {
            let key = |k: &Vec<Value>| k.iter().map(key_to_json).collect();
            let cursor = Cursor { offset: 0, after: after.map(key), before: before.map(key), ..c.clone() };
            format!("{base}{path}?cursor={}", cursor.encode())
        };
        let first = link(None, None);
        let (next, prev) = match (rows.first(), rows.last()) {
            // Nothing is left before the position (the rows there went): the list from its start.
            (None, _) if backward => (Some(first), None),
            (None, _) => (None, (c.after.is_some() || c.offset > 0).then_some(first)),
            (Some((_, head)), Some((_, tail))) if backward => {
                (Some(link(Some(tail), None)), more.then(|| link(None, Some(head))))
            }
            (Some((_, head)), Some((_, tail))) => (
                more.then(|| link(Some(tail), None)),
                (c.after.is_some() || c.offset > 0).then(|| link(None, Some(head))),
            ),
            _ => unreachable!("a first row implies a last"),
        };
        dcs_model::Page { items: rows.into_iter().map(|(item, _)| item).collect(), next, prev }
    }

    /// Turns the rows of [`PageRequest::window`] into a page with its links.
    pub fn page<T>(&self, mut items: Vec<T>, base: &str, path: &str) -> dcs_model::Page<T> {
        let has_more = items.len() as u64 > self.cursor.limit;
        items.truncate(self.cursor.limit as usize);
        let (next, prev) = self.links(base, path, has_more);
        dcs_model::Page { items, next, prev }
    }

    /// `next` and `prev` links for a page that ended with `has_more` rows left; `base` is
    /// `scheme://host[prefix]`, or only the prefix for relative links (A-12 (alt)).
    pub fn links(&self, base: &str, path: &str, has_more: bool) -> (Option<String>, Option<String>) {
        let c = &self.cursor;
        let link = |offset: u64| format!("{base}{path}?cursor={}", Cursor { offset, ..c.clone() }.encode());
        let next = has_more.then(|| link(c.offset + c.limit));
        let prev = (c.offset > 0).then(|| link(c.offset.saturating_sub(c.limit)));
        (next, prev)
    }
}

/// `scheme://host` of the request, for absolute `next`/`prev` links.
pub fn request_base(parts: &Parts) -> String {
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| parts.uri.authority().map(|a| a.to_string()))
        .unwrap_or_else(|| "localhost".to_owned());
    format!("http://{host}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_round_trips_and_rejects_garbage() {
        let c = Cursor {
            offset: 100,
            limit: 50,
            sort: "-name".into(),
            filters: [("moduleId".into(), "x".into())].into(),
            after: Some(vec!["2026-01-05T08:00:00.000Z".into(), serde_json::Value::Null, 7.into()]),
            before: None,
        };
        assert_eq!(Cursor::decode(&c.encode()).unwrap(), c);
        assert!(Cursor::decode("not-a-cursor!").is_err());
        assert!(Cursor::decode(&URL_SAFE_NO_PAD.encode(b"{\"x\":1}")).is_err());
    }

    /// A forged cursor is checked like the parameters it carries: a page size of 0 (a `next`
    /// that never moves), above the largest page size, or an offset past any list is a `400`
    /// naming `cursor`.
    #[test]
    fn forged_cursors_are_refused_naming_cursor() {
        let forged = |offset: u64, limit: u64| {
            let c = Cursor { offset, limit, sort: String::new(), filters: BTreeMap::new(), after: None, before: None }
                .encode();
            PageRequest::from_params(&QueryParams::from_query(Some(&format!("cursor={c}"))), &[], &[])
        };
        for (offset, limit) in
            [(0, 0), (0, u64::MAX), (0, 1_000_000), (0, MAX_LIMIT + 1), (u64::MAX, 10), (MAX_OFFSET + 1, 10)]
        {
            let e = forged(offset, limit).unwrap_err();
            assert_eq!(e.invalid_params[0].name, "cursor", "{offset} {limit}");
        }
        let alt = QueryParams::from_query(Some(&format!(
            "cursor={}",
            Cursor {
                offset: 0,
                limit: ALT_MAX_LIMIT + 1,
                sort: String::new(),
                filters: BTreeMap::new(),
                after: None,
                before: None
            }
            .encode()
        )))
        .for_variant(crate::Variant::Alt);
        assert_eq!(PageRequest::from_params(&alt, &[], &[]).unwrap_err().invalid_params[0].name, "cursor");
        assert!(forged(MAX_OFFSET, MAX_LIMIT).is_ok());
    }

    #[test]
    fn time_filters_beyond_the_store_form_stand_for_its_ends() {
        // `0000-01-01T00:00:00+01:00` was stored as `-001-12-31T23:00:00.000Z`, which no reader
        // of the store's form reads (found through fuzz/sim_requests).
        let window = |q: &str| {
            PageRequest::from_params(&QueryParams::from_query(Some(q)), TIME_FILTERS, &[])
                .unwrap()
                .time_window()
                .unwrap()
        };
        let w = window("createdSince=0000-01-01T00:00:00%2B01:00&createdBefore=9999-12-31T23:59:59-01:00");
        assert_eq!(w.created_since.as_deref(), Some("0000-01-01T00:00:00.000Z"));
        assert_eq!(w.created_before.as_deref(), Some("9999-12-31T23:59:59.999Z"));
    }

    #[test]
    fn limit_is_checked_and_links_move_by_one_window() {
        let bad = PageRequest::from_params(&QueryParams::from_query(Some("limit=0")), &[], &[]).unwrap_err();
        assert_eq!(bad.invalid_params[0].name, "limit");
        let twice = PageRequest::from_params(&QueryParams::from_query(Some("limit=1&limit=2")), &[], &[]).unwrap_err();
        assert!(twice.detail.contains("at most once"));

        let pr =
            PageRequest::from_params(&QueryParams::from_query(Some("limit=10&sort=-name")), &[], &["name"]).unwrap();
        let (next, prev) = pr.links("http://h", "/p", true);
        assert!(prev.is_none());
        let next = next.unwrap();
        let c = Cursor::decode(next.split("cursor=").nth(1).unwrap()).unwrap();
        assert_eq!((c.offset, c.limit, c.sort.as_str()), (10, 10, "-name"));
    }
}
