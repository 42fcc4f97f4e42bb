//! Lists as streams of pages and of items, following the `next` links the service sends.
//! A link may be absolute or relative; it is resolved against the URL of the page it came in.

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

/// One page, from its URL. Returns the page and the resolved URL of the next one.
pub async fn fetch_page<T: DeserializeOwned>(client: &Client, url: Url) -> Result<(Page<T>, Option<Url>)> {
    let page: Page<T> = client.get_json(url.clone()).await?;
    let next = page.next.as_deref().map(|l| resolve_link(&url, l)).transpose()?;
    Ok((page, next))
}

/// Every page of a list, first to last.
pub fn pages<T: DeserializeOwned + 'static>(client: Client, first: Url) -> impl Stream<Item = Result<Page<T>>> {
    stream::try_unfold(Next::Url(first), move |state| {
        let client = client.clone();
        async move {
            let Next::Url(url) = state else { return Ok(None) };
            let (page, next) = fetch_page::<T>(&client, url).await?;
            Ok(Some((page, next.map(Next::Url).unwrap_or(Next::Done))))
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
