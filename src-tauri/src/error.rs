//! Errors as they cross IPC: an object with a stable `code` the UI branches on, a message for
//! people, the field it concerns, and the service's problem document when there was one.
//! Never a bare string, and never a secret (no error text here carries one).

use dcs_api::model::Problem;
use dcs_api::ErrorCode;
use dcs_console::{Acting, ConfigError, FieldError, KeychainError, SessionError};
use serde::Serialize;

/// Failures of the app itself, beside the client's [`ErrorCode`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AppCode {
    /// The OS keychain is missing, locked or refused access.
    Keychain,
    /// The stored profile has no secret in the keychain.
    NoSecret,
    /// The profiles file could not be read or written, or the profile does not exist.
    Config,
    /// The active profile or customer changed after the user confirmed a write; nothing was sent.
    ContextChanged,
    /// The service refused to act for the chosen customer (reseller context, section 5.4).
    CustomerRefused,
    /// The system clipboard could not be written.
    Clipboard,
    /// Other work is under way (a fleet scan), or the thing is not in a state that allows it.
    Conflict,
    /// The action needs an operation this service does not document (setting a target).
    Unavailable,
    /// The app's own database could not be read or written.
    Storage,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(untagged)]
pub enum Code {
    Api(ErrorCode),
    App(AppCode),
}

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
    pub problem: Option<Problem>,
}

impl CommandError {
    pub fn app(code: AppCode, message: impl Into<String>) -> CommandError {
        CommandError {
            code: Code::App(code),
            message: message.into(),
            field: None,
            fields: Vec::new(),
            status: None,
            problem: None,
        }
    }

    pub fn invalid(field: &str, rule: impl Into<String>) -> CommandError {
        dcs_api::Error::InvalidInput { field: field.to_owned(), rule: rule.into() }.into()
    }

    /// A service error met while acting as `acting`: a refusal of the customer context (403, or
    /// 400 on the context header) says so in words, naming the customer.
    pub fn acting(e: dcs_api::Error, acting: &Acting) -> CommandError {
        let mut out = CommandError::from(e);
        let Acting::Customer(_) = acting else { return out };
        let context_field = out.field.as_deref().is_some_and(|f| {
            f.eq_ignore_ascii_case("Service-Security-Context") || f.eq_ignore_ascii_case("x-client-id")
        });
        if out.status == Some(403) || (out.status == Some(400) && context_field) {
            out.message = format!(
                "The service refused to act for {}: {}. Check that this API key is a reseller of that customer \
                 (and has the customer-management add-on), or switch back to your own environment.",
                acting.describe(),
                out.message
            );
            out.code = Code::App(AppCode::CustomerRefused);
        }
        out
    }
}

impl From<dcs_api::Error> for CommandError {
    fn from(e: dcs_api::Error) -> Self {
        let fields = match &e {
            dcs_api::Error::InvalidInput { field, rule } => {
                vec![FieldError { field: field.clone(), rule: rule.clone() }]
            }
            dcs_api::Error::Api { problem, .. } => dcs_console::listing::problem_fields(problem),
            _ => Vec::new(),
        };
        CommandError {
            code: Code::Api(e.code()),
            message: e.to_string(),
            field: fields.first().map(|f| f.field.clone()),
            fields,
            status: e.problem().and_then(|p| p.status),
            problem: e.problem().cloned(),
        }
    }
}

impl From<FieldError> for CommandError {
    fn from(e: FieldError) -> Self {
        dcs_api::Error::from(e).into()
    }
}

impl From<KeychainError> for CommandError {
    fn from(e: KeychainError) -> Self {
        CommandError::app(AppCode::Keychain, e.to_string())
    }
}

impl From<ConfigError> for CommandError {
    fn from(e: ConfigError) -> Self {
        match e {
            ConfigError::Invalid(f) => f.into(),
            other => {
                let field = other.field().map(str::to_owned);
                let fields = field.iter().map(|f| FieldError { field: f.clone(), rule: other.to_string() }).collect();
                CommandError { field, fields, ..CommandError::app(AppCode::Config, other.to_string()) }
            }
        }
    }
}

impl From<SessionError> for CommandError {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Keychain(k) => k.into(),
            SessionError::Api(a) => a.into(),
            no_secret @ SessionError::NoSecret(_) => CommandError::app(AppCode::NoSecret, no_secret.to_string()),
            refused @ SessionError::SwitchRefused(_) => {
                CommandError::app(AppCode::CustomerRefused, refused.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let e = CommandError::from(dcs_api::Error::Api { status: 400, problem });
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
        assert!(CommandError::app(AppCode::Keychain, "locked").fields.is_empty());
    }
}
