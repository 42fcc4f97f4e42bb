//! The one shape of "this field breaks this rule" of the console's drafts.

use serde::Serialize;

/// One refused value of a draft (a profile, a set-target operation): the field
/// (`customers[2].label` for nested ones) and the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FieldError {
    pub field: String,
    pub rule: String,
}

impl FieldError {
    pub(crate) fn new(field: impl Into<String>, rule: impl Into<String>) -> FieldError {
        FieldError { field: field.into(), rule: rule.into() }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.rule)
    }
}

impl From<FieldError> for dcs_api::Error {
    fn from(e: FieldError) -> Self {
        dcs_api::Error::InvalidInput { field: e.field, rule: e.rule }
    }
}
