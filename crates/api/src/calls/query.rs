//! The query parameters list operations share: the four time filters, `limit` and `sort`, and
//! a URL without an empty `?`.

use url::Url;

use crate::error::{Error, Result};
use crate::model::Timestamp;

/// The four time filters of list operations (section 1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimeFilter {
    /// Only items created strictly before.
    pub created_before: Option<Timestamp>,
    /// Only items created at or after.
    pub created_since: Option<Timestamp>,
    pub modified_before: Option<Timestamp>,
    pub modified_since: Option<Timestamp>,
}

impl TimeFilter {
    pub(crate) fn append(&self, q: &mut url::form_urlencoded::Serializer<'_, url::UrlQuery<'_>>) -> Result<()> {
        for (name, t) in [
            ("createdBefore", self.created_before),
            ("createdSince", self.created_since),
            ("modifiedBefore", self.modified_before),
            ("modifiedSince", self.modified_since),
        ] {
            if let Some(t) = t {
                let s = t
                    .format(&time::format_description::well_known::Rfc3339)
                    .map_err(|e| Error::invalid(name, e.to_string()))?;
                q.append_pair(name, &s);
            }
        }
        Ok(())
    }
}

/// Appends `limit` (at least 1) and `sort`, checked by the reference's syntax only
/// ([`SortSpec::parse_syntax`](crate::model::SortSpec::parse_syntax)): which fields a list
/// sorts by is the service's to say.
pub(crate) fn append_window(
    q: &mut url::form_urlencoded::Serializer<'_, url::UrlQuery<'_>>,
    limit: Option<u32>,
    sort: Option<&str>,
) -> Result<()> {
    if let Some(limit) = limit {
        if limit == 0 {
            return Err(Error::invalid("limit", "must be at least 1"));
        }
        q.append_pair("limit", &limit.to_string());
    }
    if let Some(sort) = sort {
        let spec = crate::model::SortSpec::parse_syntax(sort).map_err(|e| Error::invalid("sort", e.to_string()))?;
        q.append_pair("sort", &spec.to_string());
    }
    Ok(())
}

/// Drops an empty `?`.
pub(crate) fn tidy(mut url: Url) -> Url {
    if url.query() == Some("") {
        url.set_query(None);
    }
    url
}
