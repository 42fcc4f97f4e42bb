//! Problem details (RFC 9457, reference section 7).

use serde::{Deserialize, Serialize};

/// Media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// A problem document; `type` defaults to `about:blank` as RFC 9457 says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    #[serde(rename = "type", default = "about_blank")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Extension member naming each invalid parameter and the rule it broke.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid_params: Vec<InvalidParam>,
}

fn about_blank() -> String {
    "about:blank".to_owned()
}

/// One parameter that broke a rule: `name` is the field or query parameter, `reason` the rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct InvalidParam {
    pub name: String,
    pub reason: String,
}

impl Problem {
    pub fn new(status: u16, title: impl Into<String>, detail: impl Into<String>) -> Self {
        Problem {
            type_: about_blank(),
            title: Some(title.into()),
            status: Some(status),
            detail: Some(detail.into()),
            instance: None,
            invalid_params: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_type_defaults_to_about_blank_and_extensions_are_read() {
        let p: Problem = serde_json::from_str(
            r#"{"title":"Bad Request","status":400,"invalidParams":[{"name":"limit","reason":"must be 1 to 1000"}]}"#,
        )
        .unwrap();
        assert_eq!(p.type_, "about:blank");
        assert_eq!(p.status, Some(400));
        assert_eq!(p.invalid_params[0].name, "limit");
    }
}
