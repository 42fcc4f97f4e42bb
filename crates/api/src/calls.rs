//! JSON calls beyond `get_json` used by the downlink, binding and beta areas: bodies, other
//! methods, a vendor `Accept`. Every one goes through the request loop of [`crate::client`].
//! Also the small shared pieces of those areas: [`Raw`] answers and time-filter formatting.

use std::ops::Deref;

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use url::Url;

use crate::client::RequestSpec;
use crate::error::{Error, Result};
use crate::model::Timestamp;
use crate::Client;

/// A typed answer together with the JSON it was read from, so fields this version does not know
/// (payloads, new members) stay available.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw<T> {
    pub value: T,
    pub raw: serde_json::Value,
}

impl<T> Deref for Raw<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Raw<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = serde_json::Value::deserialize(d)?;
        let value = T::deserialize(&raw).map_err(serde::de::Error::custom)?;
        Ok(Raw { value, raw })
    }
}

/// Serialises as the JSON the service sent (nothing lost, unknown members included).
impl<T> Serialize for Raw<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(s)
    }
}

fn decode<T: DeserializeOwned>(url: &Url, body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|e| Error::Protocol { url: url.to_string(), reason: e.to_string() })
}

/// An answer whose shape the reference does not show, kept as it came: JSON when it is JSON,
/// `null` when empty, else the text.
fn any_answer(body: &[u8]) -> serde_json::Value {
    if body.iter().all(u8::is_ascii_whitespace) {
        return serde_json::Value::Null;
    }
    serde_json::from_slice(body)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(body).into_owned()))
}

fn encode<B: Serialize>(body: &B) -> Result<Vec<u8>> {
    serde_json::to_vec(body).map_err(|e| Error::invalid("body", e.to_string()))
}

impl Client {
    pub(crate) async fn post_json_as<B: Serialize, T: DeserializeOwned>(&self, url: Url, body: &B) -> Result<T> {
        let spec = RequestSpec { body: Some(encode(body)?), ..RequestSpec::new(Method::POST, url.clone()) };
        decode(&url, &self.send_request(spec).await?)
    }

    pub(crate) async fn put_json_as<B: Serialize, T: DeserializeOwned>(&self, url: Url, body: &B) -> Result<T> {
        let spec = RequestSpec { body: Some(encode(body)?), ..RequestSpec::new(Method::PUT, url.clone()) };
        decode(&url, &self.send_request(spec).await?)
    }

    /// A DELETE; any answer body is ignored.
    pub(crate) async fn delete_call(&self, url: Url) -> Result<()> {
        self.send_request(RequestSpec::new(Method::DELETE, url)).await.map(|_| ())
    }

    /// A GET without a body that nonetheless sends `Content-Type: application/json` and
    /// `Accept: application/json` (the context switch, reference 4.5); its answer is not shown:
    /// kept as it came.
    pub(crate) async fn get_any_json_headers(&self, url: Url) -> Result<serde_json::Value> {
        let spec = RequestSpec {
            accept: Some("application/json"),
            json_content_type: true,
            ..RequestSpec::new(Method::GET, url)
        };
        Ok(any_answer(&self.send_request(spec).await?))
    }

    /// A POST with a vendor `Accept` whose answer is not shown: kept as it came.
    pub(crate) async fn post_any_accepting<B: Serialize>(
        &self,
        url: Url,
        body: &B,
        accept: &'static str,
    ) -> Result<serde_json::Value> {
        let spec =
            RequestSpec { body: Some(encode(body)?), accept: Some(accept), ..RequestSpec::new(Method::POST, url) };
        Ok(any_answer(&self.send_request(spec).await?))
    }

    /// A GET with a specific `Accept` (the beta API's vendor types).
    pub(crate) async fn get_json_accepting<T: DeserializeOwned>(&self, url: Url, accept: &'static str) -> Result<T> {
        let spec = RequestSpec { accept: Some(accept), ..RequestSpec::new(Method::GET, url.clone()) };
        decode(&url, &self.send_request(spec).await?)
    }
}

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

/// Checks a device id in one of the seven forms of section 1 and returns it as given (trimmed).
pub(crate) fn device_id(field: &str, s: &str) -> Result<String> {
    crate::model::DeviceId::parse(s).map_err(|e| Error::invalid(field, e.to_string()))?;
    Ok(s.trim().to_owned())
}

/// Checks a `feedbackTimeout`: the duration subset, at least 10 minutes.
pub(crate) fn feedback_timeout(s: &str) -> Result<()> {
    crate::model::duration::parse_feedback_timeout(s)
        .map(|_| ())
        .map_err(|e| Error::invalid("feedbackTimeout", e.to_string()))
}
