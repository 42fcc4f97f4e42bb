//! Cursor paging shared by every list operation (reference section 1).
//!
//! A cursor is opaque to callers: base64url of a small JSON object holding the offset, the
//! page size, the sort and every filter, so a `next` link alone fetches the right page.

use std::collections::BTreeMap;

use axum::http::request::Parts;
use axum::http::header;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use dcs_model::SortSpec;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::ApiError;

pub const DEFAULT_LIMIT: u64 = 50;
/// The reference does not show a maximum page size; the simulator chooses 1000.
pub const MAX_LIMIT: u64 = 1000;

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
}

impl Cursor {
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).expect("cursor serialises"))
    }

    pub fn decode(s: &str) -> Result<Cursor, ApiError> {
        let bad = || ApiError::invalid("cursor", "is not a cursor issued by this service; follow the `next` or `prev` link");
        let bytes = URL_SAFE_NO_PAD.decode(s).map_err(|_| bad())?;
        serde_json::from_slice(&bytes).map_err(|_| bad())
    }
}

/// The query string of a request, as ordered pairs.
#[derive(Debug, Clone, Default)]
pub struct QueryParams(Vec<(String, String)>);

impl QueryParams {
    pub fn from_query(query: Option<&str>) -> QueryParams {
        QueryParams(url::form_urlencoded::parse(query.unwrap_or("").as_bytes()).into_owned().collect())
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
            Some(c) => Cursor::decode(c)?,
            None => {
                let limit = match q.one("limit")? {
                    None => DEFAULT_LIMIT,
                    Some(v) => v
                        .parse::<u64>()
                        .ok()
                        .filter(|n| (1..=MAX_LIMIT).contains(n))
                        .ok_or_else(|| ApiError::invalid("limit", format!("must be a whole number from 1 to {MAX_LIMIT}")))?,
                };
                let sort = q.one("sort")?.unwrap_or("").to_owned();
                let mut f = BTreeMap::new();
                for name in filters {
                    if let Some(v) = q.one(name)? {
                        f.insert((*name).to_owned(), v.to_owned());
                    }
                }
                Cursor { offset: 0, limit, sort, filters: f }
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
        self.filter(name)
            .map(|v| Uuid::parse_str(v).map_err(|_| ApiError::invalid(name, "must be a UUID")))
            .transpose()
    }

    /// `next` and `prev` links for a page that ended with `has_more` rows left.
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
        let c = Cursor { offset: 100, limit: 50, sort: "-name".into(), filters: [("moduleId".into(), "x".into())].into() };
        assert_eq!(Cursor::decode(&c.encode()).unwrap(), c);
        assert!(Cursor::decode("not-a-cursor!").is_err());
        assert!(Cursor::decode(&URL_SAFE_NO_PAD.encode(b"{\"x\":1}")).is_err());
    }

    #[test]
    fn limit_is_checked_and_links_move_by_one_window() {
        let bad = PageRequest::from_params(&QueryParams::from_query(Some("limit=0")), &[], &[]).unwrap_err();
        assert_eq!(bad.invalid_params[0].name, "limit");
        let twice = PageRequest::from_params(&QueryParams::from_query(Some("limit=1&limit=2")), &[], &[]).unwrap_err();
        assert!(twice.detail.contains("at most once"));

        let pr = PageRequest::from_params(&QueryParams::from_query(Some("limit=10&sort=-name")), &[], &["name"]).unwrap();
        let (next, prev) = pr.links("http://h", "/p", true);
        assert!(prev.is_none());
        let next = next.unwrap();
        let c = Cursor::decode(next.split("cursor=").nth(1).unwrap()).unwrap();
        assert_eq!((c.offset, c.limit, c.sort.as_str()), (10, 10, "-name"));
    }
}
