//! The console layer's one error: what connecting a profile, its config file, the keychain, the
//! fleet database and the work above the client can fail with. Each error has one [`Code`]
//! (the client's [`ErrorCode`]s and the console's own): the app answers it to the UI, which
//! branches on it, and `dcs` prints it and maps it to an exit code, so both name a failure
//! the same.
//!
//! A refusal of the customer acted for (a 403, or a 400 about the context header, or a refused
//! context switch) is named once here, by [`Error::acting`]: both front ends say which customer.

use dcs_api::model::Problem;
use dcs_api::ErrorCode;
use serde::Serialize;
use uuid::Uuid;

use crate::config::ConfigError;
use crate::keychain::KeychainError;
use crate::session::Acting;
use crate::FieldError;

/// Failures of the app itself, beside the client's [`ErrorCode`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
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
    /// The app failed inside: work it runs stopped without an answer (a bug, not the service).
    Internal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(untagged)]
pub enum Code {
    Api(ErrorCode),
    App(AppCode),
}

impl Code {
    /// The code as the UI and `dcs --json` spell it (`invalid_input`, `customer_refused`...).
    pub fn as_str(self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(s)) => s,
            _ => unreachable!("every code is a string"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Api(#[from] dcs_api::Error),
    /// Values refused before anything was sent: every field and the rule it breaks.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<FieldError>),
    #[error(transparent)]
    Keychain(#[from] KeychainError),
    #[error(
        "the keychain holds no secret for profile `{0}`; store it (in the app's profile editor, or \
         `dcs auth set-secret --profile {0}`)"
    )]
    NoSecret(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// What the app needs to act is missing: the built-in simulator did not start, the fleet
    /// database is not available, a rollout's scope points elsewhere now.
    #[error("{0}")]
    Setup(String),
    #[error(
        "the service did not grant this API key access to customer {0} in the deprecated sub-customer \
         mode (context switch refused); turn the mode off to use the security-context header"
    )]
    SwitchRefused(Uuid),
    /// `source`, met while acting for `customer` (as [`Acting::describe`] names it), is the
    /// service refusing that customer's context.
    #[error("refused while acting for {customer}: {source}")]
    CustomerRefused { customer: String, source: Box<Error> },
    /// The active profile or customer is not the one a write was confirmed for (said how).
    #[error("{0}")]
    ContextChanged(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Unavailable(String),
    /// A rollout is moved on by another driver (its lease is not this process's): nothing was sent.
    #[error("{0}")]
    NotDriver(String),
    #[error("the fleet database: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("could not open the fleet database {path}: {reason}")]
    Open { path: String, reason: String },
    /// The app's own storage failed otherwise (a database task that did not finish).
    #[error("{0}")]
    Storage(String),
    #[error("the scan was cancelled")]
    Cancelled,
    #[error("the clipboard could not be written: {0}")]
    Clipboard(String),
    /// Work the app runs stopped without an answer (a task that panicked or was dropped).
    #[error("{0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// One field and the rule it breaks.
    pub fn invalid(field: impl Into<String>, rule: impl Into<String>) -> Error {
        Error::Invalid(vec![FieldError::new(field, rule)])
    }

    /// The code the UI branches on and `dcs` maps to its exit code.
    pub fn code(&self) -> Code {
        match self {
            Error::Api(e) => Code::Api(e.code()),
            Error::Invalid(_) => Code::Api(ErrorCode::InvalidInput),
            Error::Keychain(e) => e.code(),
            Error::NoSecret(_) => Code::App(AppCode::NoSecret),
            Error::Config(e) => e.code(),
            Error::Setup(_) => Code::App(AppCode::Config),
            Error::SwitchRefused(_) | Error::CustomerRefused { .. } => Code::App(AppCode::CustomerRefused),
            Error::ContextChanged(_) => Code::App(AppCode::ContextChanged),
            Error::Conflict(_) | Error::NotDriver(_) => Code::App(AppCode::Conflict),
            Error::Unavailable(_) => Code::App(AppCode::Unavailable),
            Error::Db(_) | Error::Open { .. } | Error::Storage(_) => Code::App(AppCode::Storage),
            Error::Cancelled => Code::Api(ErrorCode::Cancelled),
            Error::Clipboard(_) => Code::App(AppCode::Clipboard),
            Error::Internal(_) => Code::App(AppCode::Internal),
        }
    }

    /// Every field the error names, each with its rule: ours for an input error, the service's
    /// `invalidParams` (A-19) for a refusal. Forms show each next to its field.
    pub fn fields(&self) -> Vec<FieldError> {
        match self {
            Error::Api(e) => match (e.field_error(), e.problem()) {
                (Some(f), _) => vec![f],
                (None, Some(p)) => crate::listing::problem_fields(p),
                (None, None) => Vec::new(),
            },
            Error::Invalid(fields) => fields.clone(),
            Error::Config(ConfigError::Invalid(f)) => vec![f.clone()],
            Error::Config(e) => e.field().map(|f| FieldError::new(f, e.to_string())).into_iter().collect(),
            Error::CustomerRefused { source, .. } => source.fields(),
            _ => Vec::new(),
        }
    }

    /// The service's problem document, when the error is its refusal.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Error::Api(e) => e.problem(),
            Error::CustomerRefused { source, .. } => source.problem(),
            _ => None,
        }
    }

    /// The message for people in a window: as [`Display`](std::fmt::Display), with what to
    /// check when the service refused a customer.
    pub fn message(&self) -> String {
        match self {
            Error::CustomerRefused { customer, source } => format!(
                "The service refused to act for {customer}: {}. Check that this API key is a reseller of that \
                 customer (and has the customer-management add-on), or switch back to your own environment.",
                source.message()
            ),
            Error::Config(ConfigError::Invalid(f)) => f.to_string(),
            other => other.to_string(),
        }
    }

    /// Whether this is the service refusing the customer context requests were sent with: a
    /// 403, a 400 whose detail or `invalidParams` name the security-context or `x-client-id`
    /// header, or a refused context switch.
    pub fn refuses_customer(&self) -> bool {
        match self {
            Error::SwitchRefused(_) => true,
            Error::Api(e) => Error::refuses_context(e),
            _ => false,
        }
    }

    /// [`Error::refuses_customer`] of the client's error.
    pub fn refuses_context(e: &dcs_api::Error) -> bool {
        let names_header = |s: &str| {
            let s = s.to_ascii_lowercase();
            s.contains("security-context") || s.contains("x-client-id")
        };
        match e {
            dcs_api::Error::Api { status: 403, .. } => true,
            dcs_api::Error::Api { status: 400, problem } => {
                problem.detail.as_deref().is_some_and(names_header)
                    || problem.invalid_params.iter().any(|p| names_header(&p.name))
            }
            _ => false,
        }
    }

    /// This error, met while acting as `acting`: a refusal of the customer's context says so,
    /// naming the customer ([`Error::CustomerRefused`]); any other error is left as it is.
    pub fn acting(self, acting: &Acting) -> Error {
        match acting {
            Acting::Yourself => self,
            Acting::Customer(_) => self.acting_for(&acting.describe()),
        }
    }

    /// As [`Error::acting`], for a customer described as `customer` (`dcs --x-client-id` acts
    /// for a sub-customer no profile names).
    pub fn acting_for(self, customer: &str) -> Error {
        if self.refuses_customer() {
            Error::CustomerRefused { customer: customer.to_owned(), source: Box::new(self) }
        } else {
            self
        }
    }

    /// One error of each kind, for the front ends' table tests (every variant, so a new one
    /// must be added here: [`Error::code`] and this list match on the same variants).
    pub fn one_of_each() -> Vec<Error> {
        let problem = |status: u16| Problem::new(status, "Refused", "refused");
        let api = |status: u16| Error::Api(dcs_api::Error::Api { status, problem: Box::new(problem(status)) });
        let io = || std::io::Error::other("disk");
        let mut all = vec![
            Error::invalid("port", "must be an integer"),
            Error::Invalid(vec![FieldError::new("a", "x"), FieldError::new("b", "y")]),
            Error::Keychain(KeychainError::Denied("locked".into())),
            Error::Keychain(KeychainError::Unavailable("none".into())),
            Error::NoSecret("p".into()),
            Error::Config(ConfigError::Invalid(FieldError::new("name", "is empty"))),
            Error::Config(ConfigError::UnknownProfile("p".into())),
            Error::Config(ConfigError::Exists("p".into())),
            Error::Config(ConfigError::NoConfigDir),
            Error::Config(ConfigError::Read { path: "f".into(), source: io() }),
            Error::Config(ConfigError::Parse { path: "f".into(), reason: "bad".into() }),
            Error::Config(ConfigError::Write { path: "f".into(), source: io() }),
            Error::Setup("the fleet database is not available".into()),
            Error::SwitchRefused(Uuid::nil()),
            api(403).acting_for("customer c"),
            Error::ContextChanged("the active customer changed".into()),
            Error::Conflict("a scan is under way".into()),
            Error::Unavailable("no set-target operation".into()),
            Error::NotDriver("another console drives it".into()),
            Error::Db(rusqlite::Error::InvalidQuery),
            Error::Open { path: "f".into(), reason: "locked".into() },
            Error::Storage("the task stopped".into()),
            Error::Cancelled,
            Error::Clipboard("no display".into()),
            Error::Internal("the page request stopped".into()),
        ];
        for status in [302, 400, 401, 403, 404, 409, 429, 500, 418] {
            all.push(api(status));
        }
        all.extend(
            [
                dcs_api::Error::InvalidInput { field: "f".into(), rule: "r".into() },
                dcs_api::Error::WrongCredentials { message: "m".into() },
                dcs_api::Error::ServiceNotGranted { message: "m".into() },
                dcs_api::Error::Protocol { url: "u".into(), reason: "r".into() },
                dcs_api::Error::Cancelled { what: "the upload".into() },
                dcs_api::Error::LocalFile { path: "f".into(), source: io() },
            ]
            .map(Error::Api),
        );
        for e in &all {
            // Fails to compile when a variant is added and not listed above.
            match e {
                Error::Api(_)
                | Error::Invalid(_)
                | Error::Keychain(_)
                | Error::NoSecret(_)
                | Error::Config(_)
                | Error::Setup(_)
                | Error::SwitchRefused(_)
                | Error::CustomerRefused { .. }
                | Error::ContextChanged(_)
                | Error::Conflict(_)
                | Error::Unavailable(_)
                | Error::NotDriver(_)
                | Error::Db(_)
                | Error::Open { .. }
                | Error::Storage(_)
                | Error::Cancelled
                | Error::Clipboard(_)
                | Error::Internal(_) => {}
            }
        }
        all
    }
}

impl From<FieldError> for Error {
    fn from(e: FieldError) -> Self {
        Error::Invalid(vec![e])
    }
}

impl From<Vec<FieldError>> for Error {
    fn from(fields: Vec<FieldError>) -> Self {
        Error::Invalid(fields)
    }
}

impl KeychainError {
    pub fn code(&self) -> Code {
        Code::App(AppCode::Keychain)
    }
}

impl ConfigError {
    /// A value refused (a bad field, an unknown or existing profile name) is invalid input;
    /// the profiles file that cannot be read or written, the config code.
    pub fn code(&self) -> Code {
        match self {
            ConfigError::Invalid(_) | ConfigError::UnknownProfile(_) | ConfigError::Exists(_) => {
                Code::Api(ErrorCode::InvalidInput)
            }
            ConfigError::NoConfigDir
            | ConfigError::Read { .. }
            | ConfigError::Parse { .. }
            | ConfigError::Write { .. } => Code::App(AppCode::Config),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Customer;

    fn refusal(status: u16, detail: &str, param: Option<&str>) -> Error {
        let mut problem = Problem::new(status, "Refused", detail);
        if let Some(name) = param {
            problem = serde_json::from_value(serde_json::json!({
                "status": status, "title": "Refused", "detail": detail,
                "invalidParams": [{"name": name, "reason": "unknown customer"}]
            }))
            .unwrap();
        }
        Error::Api(dcs_api::Error::Api { status, problem: Box::new(problem) })
    }

    fn customer() -> Acting {
        Acting::Customer(Customer { id: Uuid::from_u128(7), label: "Northwind".into() })
    }

    #[test]
    fn a_refusal_of_the_customer_context_names_the_customer_once() {
        let named = |e: Error| e.acting(&customer());
        for e in [
            refusal(403, "no", None),
            refusal(400, "bad Service-Security-Context header", None),
            refusal(400, "bad", Some("service-security-context")),
            refusal(400, "bad", Some("X-Client-Id")),
            Error::SwitchRefused(Uuid::from_u128(7)),
        ] {
            let e = named(e);
            assert_eq!(e.code(), Code::App(AppCode::CustomerRefused), "{e}");
            assert!(e.to_string().starts_with("refused while acting for customer Northwind ("), "{e}");
            assert!(e.message().contains("refused to act for customer Northwind"), "{}", e.message());
            // Named once: acting again leaves it as it is.
            assert_eq!(named(e).to_string().matches("acting for").count(), 1);
        }
        for e in [refusal(400, "bad firmwareVersion", Some("firmwareVersion")), refusal(404, "no", None)] {
            let code = e.code();
            assert_eq!(named(e).code(), code, "not about the customer");
        }
        assert_eq!(refusal(403, "no", None).acting(&Acting::Yourself).code(), Code::Api(ErrorCode::Forbidden));
    }

    #[test]
    fn a_refusal_keeps_the_fields_and_problem_of_the_service() {
        let e = refusal(400, "bad", Some("x-client-id")).acting(&customer());
        assert_eq!(e.fields(), vec![FieldError::new("x-client-id", "unknown customer")]);
        assert_eq!(e.problem().and_then(|p| p.status), Some(400));
    }

    #[test]
    fn every_code_is_a_distinct_known_string() {
        for e in Error::one_of_each() {
            let s = e.code().as_str();
            assert!(!s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{s}");
        }
    }
}
