//! JSON calls beyond `get_json` used by the downlink, binding and beta areas: bodies, other
//! methods, a vendor `Accept`. Every one goes through the request loop of [`crate::client`].
//! The small pieces those areas share live beside it: [`Raw`] answers (`raw.rs`), the time
//! filters and list windows of queries (`query.rs`), and device-id and timeout checks
//! (`fields.rs`).

mod fields;
mod query;
mod raw;

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::Serialize;
use url::Url;

pub(crate) use fields::{device_id, feedback_timeout};
pub use query::TimeFilter;
pub(crate) use query::{append_window, tidy};
pub use raw::Raw;

use crate::client::RequestSpec;
use crate::error::{Error, Result};
use crate::Client;

fn decode<T: DeserializeOwned>(url: &Url, body: &[u8]) -> Result<T> {
    crate::answer::json(url, body)
}

/// An answer whose shape the reference does not show, kept as it came: JSON when it is JSON,
/// `null` when empty, else the text.
fn any_answer(body: &[u8]) -> serde_json::Value {
    if body.iter().all(u8::is_ascii_whitespace) {
        return serde_json::Value::Null;
    }
    serde_json::from_slice(crate::answer::strip_bom(body))
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
