//! Errors as they cross IPC: an object with a stable `code` the UI branches on, a message for
//! people, the field it concerns, and the service's problem document when there was one.
//! Never a bare string, and never a secret (no error text here carries one).

use dcs_api::model::Problem;
use dcs_console::error::Code;
use dcs_console::{ConfigError, FieldError, KeychainError};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CommandError {
    pub code: Code,
    pub message: String,
    /// The field or parameter the error concerns, when it concerns one (the first of `fields`).
    pub field: Option<String>,
    /// Every field the error names, each with its rule: ours for an input error, the service's
    /// `invalidParams` for a refusal. Forms show each next to its field.
    pub fields: Vec<FieldError>,
    pub status: Option<u16>,
    pub problem: Option<Box<Problem>>,
}

impl CommandError {
    pub fn invalid(field: &str, rule: impl Into<String>) -> CommandError {
        dcs_console::Error::invalid(field, rule).into()
    }
}

/// The one conversion: the console's error as the UI sees it, by its code, fields and problem.
impl From<dcs_console::Error> for CommandError {
    fn from(e: dcs_console::Error) -> Self {
        let fields = e.fields();
        CommandError {
            code: e.code(),
            message: e.message(),
            field: fields.first().map(|f| f.field.clone()),
            fields,
            status: e.problem().and_then(|p| p.status),
            problem: e.problem().cloned().map(Box::new),
        }
    }
}

impl From<dcs_api::Error> for CommandError {
    fn from(e: dcs_api::Error) -> Self {
        dcs_console::Error::from(e).into()
    }
}

impl From<FieldError> for CommandError {
    fn from(e: FieldError) -> Self {
        dcs_console::Error::from(e).into()
    }
}

impl From<Vec<FieldError>> for CommandError {
    fn from(e: Vec<FieldError>) -> Self {
        dcs_console::Error::from(e).into()
    }
}

impl From<KeychainError> for CommandError {
    fn from(e: KeychainError) -> Self {
        dcs_console::Error::from(e).into()
    }
}

impl From<ConfigError> for CommandError {
    fn from(e: ConfigError) -> Self {
        dcs_console::Error::from(e).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The app answers each error with the code `dcs` prints for it (the CLI's table test checks
    /// its side against the same list), and every field and problem the error has.
    #[test]
    fn every_console_error_answers_its_code_fields_and_problem() {
        for e in dcs_console::Error::one_of_each() {
            let (code, fields, status) = (e.code(), e.fields(), e.problem().and_then(|p| p.status));
            let text = e.to_string();
            let answered = CommandError::from(e);
            let json = serde_json::to_value(&answered).unwrap();
            assert_eq!(json["code"], code.as_str(), "{text}");
            assert_eq!(answered.fields, fields, "{text}");
            assert_eq!(answered.field, fields.first().map(|f| f.field.clone()), "{text}");
            assert_eq!(answered.status, status, "{text}");
        }
    }

    #[test]
    fn a_refusal_carries_every_field_it_names() {
        let problem: Problem = serde_json::from_value(serde_json::json!({
            "title": "Bad Request", "status": 400, "detail": "invalid package",
            "invalidParams": [
                {"name": "firmwareVersion", "reason": "already exists"},
                {"name": "description", "reason": "forbidden word"}
            ]
        }))
        .unwrap();
        let e = CommandError::from(dcs_api::Error::Api { status: 400, problem: Box::new(problem) });
        assert_eq!(e.field.as_deref(), Some("firmwareVersion"));
        let named: Vec<(&str, &str)> = e.fields.iter().map(|f| (f.field.as_str(), f.rule.as_str())).collect();
        assert_eq!(named, vec![("firmwareVersion", "already exists"), ("description", "forbidden word")]);
        assert_eq!(e.status, Some(400));
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["fields"][1]["field"], "description", "{json}");
    }

    #[test]
    fn an_input_error_of_ours_is_one_field_and_others_none() {
        let e = CommandError::invalid("port", "must be an integer");
        assert_eq!(e.fields.len(), 1);
        assert_eq!((e.fields[0].field.as_str(), e.fields[0].rule.as_str()), ("port", "must be an integer"));
        assert!(CommandError::from(dcs_console::Error::Setup("no simulator".into())).fields.is_empty());
    }
}
