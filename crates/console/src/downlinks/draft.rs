//! Drafts of the composer's forms, as typed, and what the composer shows before sending.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::view::pretty;
use super::DownlinkKind;
use crate::FieldError;

/// The four `method` variants of the simulator, or raw JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum MethodVariant {
    #[default]
    SetProperty,
    InvokeCommand,
    Senml,
    PayloadHex,
    Raw,
}

/// How the text of a `setProperty` value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum ValueType {
    #[default]
    Number,
    Boolean,
    String,
}

/// The `method` of an actuator downlink as typed. Only the fields of `variant` are used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct MethodDraft {
    pub variant: MethodVariant,
    /// Any of the seven id forms.
    pub device_id: String,
    pub property: String,
    pub value: String,
    pub value_type: ValueType,
    pub command: String,
    /// A JSON object, or empty for none.
    pub parameters: String,
    /// A JSON array of SenML records.
    pub records: String,
    pub payload_hex: String,
    /// LoRa port 1-223, or empty.
    pub port: String,
    /// The whole `method` as a JSON object (variant `raw`).
    pub raw: String,
}

/// An actuator downlink as typed in the composer. Empty text means "not given".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct ActuatorDraft {
    pub method: MethodDraft,
    pub retry_limit: String,
    pub feedback_timeout: String,
    pub external_reference: String,
    pub dry_run: bool,
}

/// Which payload an SMS or HTTP downlink carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum PayloadMode {
    /// SMS: `text`.
    #[default]
    Text,
    /// SMS: `payloadHex`; HTTP: `message.payload` (the bytes typed in hex, sent base64).
    Hex,
    /// HTTP: `message.senml`.
    Senml,
}

/// A connection-specific downlink as typed (payload fields ). Only the fields of
/// `kind` are used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct ConnectionDraft {
    pub kind: DownlinkKind,
    /// Any id form; on SMS the device's UUID.
    pub device_id: String,
    pub feedback_timeout: String,
    pub dry_run: bool,
    pub retry_limit: String,
    pub mode: PayloadMode,
    /// LoRa, SMS (mode hex), HTTP (mode hex).
    pub payload_hex: String,
    pub f_port: String,
    pub confirmed: bool,
    pub topic: String,
    pub payload: String,
    pub qos: String,
    pub text: String,
    /// HTTP: a JSON array of SenML records.
    pub senml: String,
    /// Digital Matter: a JSON object of the fields to send.
    pub fields: String,
}

impl Default for ConnectionDraft {
    fn default() -> Self {
        ConnectionDraft {
            kind: DownlinkKind::Lora,
            device_id: String::new(),
            feedback_timeout: String::new(),
            dry_run: true,
            retry_limit: String::new(),
            mode: PayloadMode::default(),
            payload_hex: String::new(),
            f_port: String::new(),
            confirmed: true,
            topic: String::new(),
            payload: String::new(),
            qos: String::new(),
            text: String::new(),
            senml: String::new(),
            fields: String::new(),
        }
    }
}

/// What the composer shows before sending: every rule broken (field and rule), or the exact
/// body the client will send and what sending it does, in sentences.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DownlinkPreview {
    pub errors: Vec<FieldError>,
    /// The request body, pretty-printed; only when no rule is broken.
    pub body: Option<String>,
    pub effect: Vec<String>,
}

/// The end of both previews: the field errors found, or else the body the client builds from the
/// whole draft (which may still name one) with what sending it would do.
pub(super) fn finish(
    errors: Vec<FieldError>,
    body: impl FnOnce() -> Result<Value, FieldError>,
    effect: impl FnOnce(&Value) -> Vec<String>,
) -> DownlinkPreview {
    if !errors.is_empty() {
        return DownlinkPreview { errors, body: None, effect: Vec::new() };
    }
    match body() {
        Err(e) => DownlinkPreview { errors: vec![e], body: None, effect: Vec::new() },
        Ok(body) => DownlinkPreview { errors, effect: effect(&body), body: Some(pretty(&body)) },
    }
}

/// The fields a preview names, in order (for tests).
#[cfg(test)]
pub(super) fn fields(p: &DownlinkPreview) -> Vec<&str> {
    p.errors.iter().map(|e| e.field.as_str()).collect()
}
