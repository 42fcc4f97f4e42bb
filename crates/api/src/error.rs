//! The client's one error type. Every error has a stable [`ErrorCode`] the CLI maps to an exit
//! code and the app's UI branches on.

use dcs_model::Problem;
use serde::Serialize;
use thiserror::Error;

/// Stable categories of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A value was refused before any request was sent.
    InvalidInput,
    /// The key id or secret is wrong (identity platform: "Feature user does not exist anymore").
    WrongCredentials,
    /// The service was not added to the key ("Feature service does not exist anymore").
    ServiceNotGranted,
    /// 401: no valid token.
    Unauthorized,
    /// 403: valid token, no permission.
    Forbidden,
    NotFound,
    Conflict,
    RateLimited,
    /// 400 from the service.
    BadRequest,
    /// 5xx from the service.
    Server,
    /// The service could not be reached.
    Network,
    /// The service answered something this client cannot read.
    Protocol,
    /// The caller cancelled the operation (an upload or download) before it finished.
    Cancelled,
    /// A local file could not be read or written.
    LocalFile,
}

/// One refused value: the field (`customers[2].label` for nested ones) and the rule it breaks.
/// The one shape of "this field breaks this rule" of every layer: the client's checks, the
/// console's drafts, and the fields a service's refusal names (its `invalidParams`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FieldError {
    pub field: String,
    pub rule: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, rule: impl Into<String>) -> FieldError {
        FieldError { field: field.into(), rule: rule.into() }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.rule)
    }
}

impl From<FieldError> for Error {
    fn from(e: FieldError) -> Self {
        Error::InvalidInput { field: e.field, rule: e.rule }
    }
}

#[derive(Debug, Error)]
pub enum Error {
    #[error("{field}: {rule}")]
    InvalidInput { field: String, rule: String },
    #[error("the API key id or secret is incorrect (identity platform: \"{message}\"); check the profile's client id and secret")]
    WrongCredentials { message: String },
    #[error("the service has not been added to this API key (identity platform: \"{message}\"); ask the tenant admin to grant it")]
    ServiceNotGranted { message: String },
    #[error("{}", describe(.status, .problem))]
    /// The service's refusal; its problem document is boxed so that every `Result` of the
    /// client stays small (the document is large and an error is rare).
    Api { status: u16, problem: Box<Problem> },
    /// No answer came: no connection, or none within the client's timeouts
    /// ([`crate::answer::Limits`]). `reason` says which, in words ("Connection refused", "no
    /// answer within 60 s").
    #[error("could not reach {url}: {reason}")]
    Network {
        url: String,
        reason: String,
        #[source]
        source: Option<reqwest::Error>,
    },
    #[error("unexpected answer from {url}: {reason}")]
    Protocol { url: String, reason: String },
    #[error("{what} was cancelled")]
    Cancelled { what: String },
    #[error("{path}: {source}")]
    LocalFile {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The message of a refusal: its status, title and detail, each cut to its start (a service
/// may send megabytes; the problem document itself is kept whole).
fn describe(status: &u16, p: &Problem) -> String {
    let title = brief(p.title.as_deref().unwrap_or("error"), 200);
    match &p.detail {
        Some(detail) => format!("{status} {title}: {}", brief(detail, 2000)),
        None => format!("{status} {title}"),
    }
}

/// `text` cut to `max` characters, saying how long it was.
fn brief(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_owned();
    }
    format!("{}… ({n} characters in all)", text.chars().take(max).collect::<String>())
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::InvalidInput { .. } => ErrorCode::InvalidInput,
            Error::WrongCredentials { .. } => ErrorCode::WrongCredentials,
            Error::ServiceNotGranted { .. } => ErrorCode::ServiceNotGranted,
            Error::Network { .. } => ErrorCode::Network,
            Error::Protocol { .. } => ErrorCode::Protocol,
            Error::Cancelled { .. } => ErrorCode::Cancelled,
            Error::LocalFile { .. } => ErrorCode::LocalFile,
            Error::Api { status, .. } => match status {
                // The beta API's "access token incorrect" (a 302 to the token endpoint, which
                // the client does not follow).
                302 => ErrorCode::Unauthorized,
                400 => ErrorCode::BadRequest,
                401 => ErrorCode::Unauthorized,
                403 => ErrorCode::Forbidden,
                404 => ErrorCode::NotFound,
                409 => ErrorCode::Conflict,
                429 => ErrorCode::RateLimited,
                500..=599 => ErrorCode::Server,
                _ => ErrorCode::Protocol,
            },
        }
    }

    /// The field and rule of an input refused before any request was sent.
    pub fn field_error(&self) -> Option<FieldError> {
        match self {
            Error::InvalidInput { field, rule } => Some(FieldError::new(field.clone(), rule.clone())),
            _ => None,
        }
    }

    /// Whether this is a `400` refusal naming `field`: among its `invalidParams`, or as a whole
    /// word of its detail (`limitless` does not name `limit`).
    pub fn refuses_field(&self, field: &str) -> bool {
        let Error::Api { status: 400, problem } = self else { return false };
        problem.invalid_params.iter().any(|p| p.name == field)
            || problem
                .detail
                .as_deref()
                .is_some_and(|d| d.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == field))
    }

    /// The problem document, when the service sent one.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Error::Api { problem, .. } => Some(problem.as_ref()),
            _ => None,
        }
    }

    pub(crate) fn invalid(field: &str, rule: impl Into<String>) -> Error {
        Error::InvalidInput { field: field.to_owned(), rule: rule.into() }
    }

    pub(crate) fn network(url: &url::Url, reason: impl Into<String>, source: Option<reqwest::Error>) -> Error {
        Error::Network { url: url.to_string(), reason: reason.into(), source }
    }

    pub(crate) fn local_file(path: &std::path::Path, source: std::io::Error) -> Error {
        Error::LocalFile { path: path.display().to_string(), source }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A refusal of the service: its problem document, or, when the body is not one, a problem
    /// made of the status's reason and the start of the body.
    pub fn from_answer(status: u16, body: &[u8]) -> Error {
        let problem = serde_json::from_slice::<Problem>(body).unwrap_or_else(|_| {
            let text = String::from_utf8_lossy(body);
            let reason =
                reqwest::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("Error");
            Problem::new(status, reason, text.chars().take(500).collect::<String>())
        });
        Error::Api { status, problem: Box::new(problem) }
    }
}
