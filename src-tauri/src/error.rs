//! Errors as they cross IPC: an object with a stable `code` the UI branches on, a message for
//! people, and the service's problem document when there was one. Never a bare string.

use dcs_api::model::Problem;
use dcs_api::ErrorCode;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CommandError {
    pub code: ErrorCode,
    pub message: String,
    /// The field or parameter the error concerns, when it concerns one.
    pub field: Option<String>,
    pub status: Option<u16>,
    pub problem: Option<Problem>,
}

impl From<dcs_api::Error> for CommandError {
    fn from(e: dcs_api::Error) -> Self {
        let field = match &e {
            dcs_api::Error::InvalidInput { field, .. } => Some(field.clone()),
            dcs_api::Error::Api { problem, .. } => problem.invalid_params.first().map(|p| p.name.clone()),
            _ => None,
        };
        CommandError {
            code: e.code(),
            message: e.to_string(),
            field,
            status: e.problem().and_then(|p| p.status),
            problem: e.problem().cloned(),
        }
    }
}
