//! A device id as typed, checked for its use (a downlink kind, a binding kind, a filter).

use dcs_api::downlinks::ConnectionKind;
use dcs_api::model::DeviceId;
use serde::Serialize;

use super::typed::{field, field_of};
use crate::FieldError;

/// A device id as typed, checked: its normalised form and what form it is, or the rule it breaks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeviceIdCheck {
    pub normalized: Option<String>,
    /// e.g. "IMEI device URN".
    pub form: Option<String>,
    pub error: Option<FieldError>,
}

impl DeviceIdCheck {
    pub(super) fn into_result(self) -> Result<String, FieldError> {
        match (self.error, self.normalized) {
            (Some(e), _) => Err(e),
            (None, Some(n)) => Ok(n),
            (None, None) => Err(field("deviceId", "is required")),
        }
    }
}

/// The name of a device id's form, as the reference's table names it (section 1).
pub fn describe_device_id(id: &DeviceId) -> &'static str {
    match id {
        DeviceId::Uuid(_) => "device UUID",
        DeviceId::Imei { urn: false, .. } => "IMEI device id",
        DeviceId::Imei { urn: true, .. } => "IMEI device URN",
        DeviceId::DevEui { urn: false, .. } => "LoRaWAN DevEUI device id",
        DeviceId::DevEui { urn: true, .. } => "DevEUI device URN",
        DeviceId::DvnUuid { urn: false, .. } => "DVNUUID device id",
        DeviceId::DvnUuid { urn: true, .. } => "DVNUUID device URN",
    }
}

/// Checks a device id as typed, for the use `kind` names (`sms` wants the device's UUID; a
/// connection or binding kind, an actuator downlink or `None` take any of the seven forms).
pub fn check_device_id(input: &str, kind: Option<&str>) -> DeviceIdCheck {
    let err = |rule: String| DeviceIdCheck { error: Some(field("deviceId", rule)), ..Default::default() };
    if input.trim().is_empty() {
        return err("is required: pick a device or paste its id".into());
    }
    let connection = match kind.filter(|k| !k.is_empty() && *k != "actuator") {
        None => None,
        Some(k) => match ConnectionKind::parse(k) {
            Some(c) => Some(c),
            None => {
                return DeviceIdCheck {
                    error: Some(field("kind", format!("unknown kind `{k}`"))),
                    ..Default::default()
                }
            }
        },
    };
    if let Some(c) = connection {
        if let Err(e) = dcs_api::downlinks::connection_device_id(c, input.trim()) {
            return DeviceIdCheck { error: Some(field_of(e)), ..Default::default() };
        }
        // On SMS a plain string, sent (and matched) exactly as given (section 1).
        if c == ConnectionKind::Sms {
            let form = DeviceId::parse(input).map(|id| describe_device_id(&id)).unwrap_or("a plain string (SMS)");
            return DeviceIdCheck {
                normalized: Some(input.trim().to_owned()),
                form: Some(form.to_owned()),
                error: None,
            };
        }
    }
    match DeviceId::parse(input) {
        Ok(id) => DeviceIdCheck {
            normalized: Some(id.to_string()),
            form: Some(describe_device_id(&id).to_owned()),
            error: None,
        },
        Err(e) => err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_ids_are_checked_for_their_use() {
        let c = check_device_id(" URN:DEV:IMEI:350000000000001 ", None);
        assert_eq!(c.normalized.as_deref(), Some("urn:dev:imei:350000000000001:"));
        assert_eq!(c.form.as_deref(), Some("IMEI device URN"));
        assert!(check_device_id("deveui:70b3d57ed000000", Some("lora")).error.unwrap().rule.contains("16 hex"));
        // SMS: a plain string, kept exactly as typed (the filter matches it exactly).
        let sms = check_device_id("sim-card-7", Some("sms"));
        assert_eq!((sms.normalized.as_deref(), sms.error), (Some("sim-card-7"), None));
        let u = "0F8FAD5B-D9CB-469F-A165-70867728950E";
        assert_eq!(check_device_id(u, Some("sms")).normalized.as_deref(), Some(u));
        assert_eq!(check_device_id("", None).error.unwrap().rule, "is required: pick a device or paste its id");
        assert_eq!(check_device_id("imei:350000000000001", Some("carrier-pigeon")).error.unwrap().field, "kind");
        assert!(check_device_id("imei:350000000000001", Some("actuator")).error.is_none());
    }
}
