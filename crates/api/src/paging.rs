//! Lists as streams of pages and of items, following the `next` links the service sends.
//! A link may be absolute or relative; it is resolved against the URL of the page it came in.
//!
//! **Page sizes adapt.** The reference gives the default page size (50) but not the largest
//! `limit` a service takes (the simulator's 1000 is its own choice, A-13). So a caller may ask
//! for any `limit`: when the service answers a `400` that names `limit` (in `invalidParams`, or
//! its `detail`), the same page is asked again with the largest size this client saw accepted
//! below the refused one, or without `limit` (the service's default). The client remembers
//! ([`PageSizes`](crate::page_sizes::PageSizes), shared by its clones) so later lists do not ask for a refused size again.
//! Links the service made (with a `cursor`) are followed as they are.

use futures::stream::{self, Stream, TryStreamExt};
use serde::de::DeserializeOwned;
use url::Url;

use crate::error::{Error, Result};
use crate::model::Page;
use crate::Client;

/// Where the next page comes from.
enum Next {
    Url(Url),
    Done,
}

/// Resolves a `next`/`prev` link as RFC 3986 says: relative to the page it was found on.
pub fn resolve_link(page_url: &Url, link: &str) -> Result<Url> {
    page_url.join(link).map_err(|e| Error::Protocol { url: link.to_owned(), reason: format!("bad page link: {e}") })
}

fn limit_of(url: &Url) -> Option<u32> {
    url.query_pairs().find(|(k, _)| k == "limit").and_then(|(_, v)| v.parse().ok())
}

fn has_cursor(url: &Url) -> bool {
    url.query_pairs().any(|(k, _)| k == "cursor")
}

/// `url` with its `limit` replaced (or removed, for `None`).
fn with_limit(url: &Url, limit: Option<u32>) -> Url {
    let pairs: Vec<(String, String)> =
        url.query_pairs().filter(|(k, _)| k != "limit").map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let mut out = url.clone();
    out.set_query(None);
    if !pairs.is_empty() || limit.is_some() {
        let mut q = out.query_pairs_mut();
        for (k, v) in &pairs {
            q.append_pair(k, v);
        }
        if let Some(l) = limit {
            q.append_pair("limit", &l.to_string());
        }
    }
    out
}

/// Whether a refusal is about the page size: a `400` whose problem names `limit`.
pub fn refuses_limit(e: &Error) -> bool {
    e.refuses_field("limit")
}

/// One page, from its URL. Returns the page and the resolved URL of the next one. A `limit`
/// the service refuses is replaced as the module says.
pub async fn fetch_page<T: DeserializeOwned>(client: &Client, url: Url) -> Result<(Page<T>, Option<Url>)> {
    let mut url = url;
    // A link of the service's own (with a cursor) is followed as it is.
    let adapt = !has_cursor(&url);
    if adapt {
        if let Some(asked) = limit_of(&url) {
            let limit = client.page_sizes().limit_for(asked);
            url = with_limit(&url, limit);
        }
    }
    loop {
        match client.get_json::<Page<T>>(url.clone()).await {
            Ok(page) => {
                if adapt {
                    let mut sizes = client.page_sizes();
                    match limit_of(&url) {
                        Some(l) => sizes.accept(l),
                        // A full page of the service's default size says what that size is.
                        None if page.next.is_some() => sizes.accept(page.items.len() as u32),
                        None => {}
                    }
                }
                let next = page.next.as_deref().map(|l| resolve_link(&url, l)).transpose()?;
                return Ok((page, next));
            }
            Err(e) if adapt && refuses_limit(&e) => {
                let Some(refused) = limit_of(&url) else { return Err(e) };
                let retry = {
                    let mut sizes = client.page_sizes();
                    sizes.refuse(refused);
                    sizes.limit_for(refused)
                };
                tracing::info!(path = url.path(), refused, retry = ?retry, "the service refused the page size; asking again");
                url = with_limit(&url, retry);
            }
            Err(e) => return Err(e),
        }
    }
}

/// How many of the latest links of a listing a `next` is checked against: a service whose
/// links lead back to a page already read would otherwise be read forever. (The number of
/// pages is not bounded: fleets are large.)
const REMEMBERED_LINKS: usize = 64;

/// Every page of a list, first to last. A `next` link that leads back to one of the last
/// [`REMEMBERED_LINKS`] pages read ends the listing with a protocol error naming the link.
pub fn pages<T: DeserializeOwned + 'static>(client: Client, first: Url) -> impl Stream<Item = Result<Page<T>>> {
    let seen = std::collections::VecDeque::with_capacity(REMEMBERED_LINKS);
    stream::try_unfold((Next::Url(first), seen), move |(state, mut seen)| {
        let client = client.clone();
        async move {
            let Next::Url(url) = state else { return Ok(None) };
            if seen.len() == REMEMBERED_LINKS {
                seen.pop_front();
            }
            seen.push_back(url.clone());
            let (page, next) = fetch_page::<T>(&client, url).await?;
            if let Some(next) = next.as_ref().filter(|n| seen.contains(n)) {
                return Err(Error::Protocol {
                    url: next.to_string(),
                    reason: "the service's next link leads back to a page already read; stopping instead of reading it again".into(),
                });
            }
            Ok(Some((page, (next.map(Next::Url).unwrap_or(Next::Done), seen))))
        }
    })
}

/// Every item of a list, page after page.
pub fn items<T: DeserializeOwned + 'static>(client: Client, first: Url) -> impl Stream<Item = Result<T>> {
    pages::<T>(client, first).map_ok(|p| stream::iter(p.items.into_iter().map(Ok))).try_flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_replaced_and_removed_keeping_the_other_parameters() {
        let u = Url::parse("https://h.example/firmware/states?limit=1000&sort=-modifiedAt").unwrap();
        assert_eq!(with_limit(&u, Some(50)).as_str(), "https://h.example/firmware/states?sort=-modifiedAt&limit=50");
        assert_eq!(with_limit(&u, None).as_str(), "https://h.example/firmware/states?sort=-modifiedAt");
        let only = Url::parse("https://h.example/x?limit=9").unwrap();
        assert_eq!(with_limit(&only, None).as_str(), "https://h.example/x");
        assert_eq!(limit_of(&u), Some(1000));
    }

    #[test]
    fn links_resolve_relative_to_their_page() {
        let page = Url::parse("https://h.example/prefix/firmware/modules?limit=2").unwrap();
        assert_eq!(
            resolve_link(&page, "modules?cursor=abc").unwrap().as_str(),
            "https://h.example/prefix/firmware/modules?cursor=abc"
        );
        assert_eq!(
            resolve_link(&page, "/prefix/firmware/modules?cursor=abc").unwrap().as_str(),
            "https://h.example/prefix/firmware/modules?cursor=abc"
        );
        assert_eq!(
            resolve_link(&page, "https://other.example/x?cursor=1").unwrap().as_str(),
            "https://other.example/x?cursor=1"
        );
    }
}
