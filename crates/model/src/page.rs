//! The page shape shared by every list operation (section 1).

use serde::{Deserialize, Serialize};

/// One page of a list: `items`, plus `next`/`prev` links carrying opaque cursors.
/// The total count is never returned by the service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev: Option<String>,
}
