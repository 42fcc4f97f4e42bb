//! The page shape shared by every list operation (section 1).

use serde::{Deserialize, Serialize};

/// One page of a list: `items`, plus `next`/`prev` links carrying opaque cursors.
/// The total count is never returned by the service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// A blank link (`"next": ""`, as a service may write on the last page) is no link.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "link")]
    pub next: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "link")]
    pub prev: Option<String>,
}

/// A page link: absent, `null` or blank read as none.
fn link<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.filter(|l| !l.trim().is_empty()))
}

#[cfg(test)]
mod tests {
    use super::Page;

    #[test]
    fn a_blank_or_null_link_is_no_link() {
        for json in [r#"{"items": [], "next": ""}"#, r#"{"items": [], "next": "  ", "prev": null}"#, r#"{"items": []}"#]
        {
            let page: Page<u32> = serde_json::from_str(json).unwrap();
            assert_eq!((page.next, page.prev), (None, None), "{json}");
        }
        let page: Page<u32> = serde_json::from_str(r#"{"items": [1], "next": "/x?cursor=a", "prev": ""}"#).unwrap();
        assert_eq!(page.next.as_deref(), Some("/x?cursor=a"));
        assert_eq!(page.prev, None);
    }
}
