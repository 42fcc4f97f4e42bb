//! Checks of the fields the areas share: device ids and feedback timeouts.

use crate::error::{Error, Result};

/// Checks a device id in one of the seven forms of section 1 and returns it as given (trimmed).
pub(crate) fn device_id(field: &str, s: &str) -> Result<String> {
    crate::model::DeviceId::parse(s).map_err(|e| Error::invalid(field, e.to_string()))?;
    Ok(s.trim().to_owned())
}

/// Checks a `feedbackTimeout`: the duration subset, at least 10 minutes.
pub(crate) fn feedback_timeout(s: &str) -> Result<()> {
    crate::model::duration::parse_feedback_timeout(s)
        .map(|_| ())
        .map_err(|e| Error::invalid("feedbackTimeout", e.to_string()))
}
