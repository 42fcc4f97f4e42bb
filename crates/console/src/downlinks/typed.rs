//! Reading the composer's text fields: numbers, JSON and hex as typed, and the client's refusals
//! as field errors.

use dcs_api::Error;
use serde_json::{Map, Value};

use crate::FieldError;

pub(super) fn field(field: &str, rule: impl Into<String>) -> FieldError {
    FieldError { field: field.to_owned(), rule: rule.into() }
}

/// The client's refusal as a field error.
pub(super) fn field_of(e: Error) -> FieldError {
    match e {
        Error::InvalidInput { field, rule } => FieldError { field, rule },
        other => field("body", other.to_string()),
    }
}

pub(super) fn optional(s: &str) -> Option<&str> {
    Some(s.trim()).filter(|s| !s.is_empty())
}

/// A whole number typed in `name`, or `None` when empty.
pub(super) fn whole<T: TryFrom<u64>>(name: &str, s: &str) -> Result<Option<T>, FieldError> {
    let Some(s) = optional(s) else { return Ok(None) };
    let n: u64 = s.parse().map_err(|_| field(name, "must be a whole number"))?;
    T::try_from(n).map(Some).map_err(|_| field(name, format!("{n} is too large")))
}

pub(super) fn json_text(name: &str, s: &str, want: &str) -> Result<Value, FieldError> {
    let v: Value = serde_json::from_str(s).map_err(|e| field(name, format!("must be {want} in JSON: {e}")))?;
    Ok(v)
}

pub(super) fn json_object(name: &str, s: &str) -> Result<Map<String, Value>, FieldError> {
    match json_text(name, s, "an object")? {
        Value::Object(m) => Ok(m),
        _ => Err(field(name, "must be a JSON object, e.g. {\"key\": 1}")),
    }
}

pub(super) fn json_array(name: &str, s: &str) -> Result<Vec<Value>, FieldError> {
    match json_text(name, s, "an array")? {
        Value::Array(a) => Ok(a),
        _ => Err(field(name, "must be a JSON array, e.g. [{\"n\": \"temp\", \"v\": 21}]")),
    }
}

/// Bytes typed as hex (the HTTP payload; the client sends them base64-encoded).
pub(super) fn hex_bytes(name: &str, s: &str) -> Result<Vec<u8>, FieldError> {
    let s = s.trim();
    if s.is_empty() || !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(field(name, "must be an even number of hex characters"));
    }
    Ok((0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("checked hex")).collect())
}

/// The rules a draft's text breaks, gathered field by field while it is read.
#[derive(Default)]
pub(super) struct Typed(pub(super) Vec<FieldError>);

impl Typed {
    /// The value read, or `None` with the rule its text breaks kept.
    pub(super) fn read<T>(&mut self, r: Result<T, FieldError>) -> Option<T> {
        r.map_err(|e| self.0.push(e)).ok()
    }

    /// The first rule broken, if any: what a send refuses with.
    pub(super) fn first(self) -> Result<(), FieldError> {
        self.0.into_iter().next().map_or(Ok(()), Err)
    }
}

/// Every field named once, in the form's `order` (others after): the console's own rules (`own`:
/// the device picker's, each text that does not read) and the client's for the fields they leave.
pub(super) fn merge(own: Vec<FieldError>, client: Vec<FieldError>, order: &[&str]) -> Vec<FieldError> {
    let mut all = own;
    for e in client {
        if !all.iter().any(|o| o.field == e.field) {
            all.push(e);
        }
    }
    all.sort_by_key(|e| order.iter().position(|f| *f == e.field).unwrap_or(order.len()));
    all
}
