//! Firmware resources (reference sections 2.1 to 2.5).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Timestamp;

/// A part of a device whose firmware is managed by the service (section 2.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FirmwareModule {
    pub id: Uuid,
    pub name: String,
    pub firmware_version_attribute_name: String,
    pub device_specification_id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub created_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub modified_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_by: Option<String>,
}

/// A device specification as the firmware API shows it (section 2.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FirmwareDeviceSpecification {
    pub id: Uuid,
    pub name: String,
    pub client_id: Uuid,
}
