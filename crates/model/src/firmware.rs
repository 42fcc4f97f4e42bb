//! Firmware resources (reference sections 2.1 to 2.5).
//!
//! Modules, packages and states keep the members this version does not know in `extra`, so a
//! newer service's additions are shown and passed on rather than dropped.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
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
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub created_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub modified_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_by: Option<String>,
    /// Members this version does not know, kept as sent.
    #[serde(flatten)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: Map<String, Value>,
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

/// A firmware package: one version of one module (section 2.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FirmwarePackage {
    pub id: Uuid,
    pub firmware_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<Uuid>,
    pub device_specification_id: Uuid,
    pub module_id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_file_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_notes_file_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub created_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub modified_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_by: Option<String>,
    #[serde(rename = "_embedded", default, skip_serializing_if = "Option::is_none")]
    pub embedded: Option<PackageEmbedded>,
    /// Members this version does not know, kept as sent.
    #[serde(flatten)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: Map<String, Value>,
}

/// What `embed` adds to a package.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PackageEmbedded {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_specification: Option<FirmwareDeviceSpecification>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<FirmwareModule>,
}

/// Attributes of an uploaded firmware or release-notes file (section 2.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FileAttributes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_package_id: Option<Uuid>,
    pub name: String,
    pub content_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_specification_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub created_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub modified_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_by: Option<String>,
}

impl FileAttributes {
    /// The attributes of a file as it was sent (a service that answered its upload without
    /// them): its package, name and content type.
    pub fn sent(package: Uuid, name: &str, content_type: &str) -> FileAttributes {
        FileAttributes {
            firmware_package_id: Some(package),
            name: name.to_owned(),
            content_type: content_type.to_owned(),
            file_type: None,
            device_specification_id: None,
            created_at: None,
            created_by: None,
            modified_at: None,
            modified_by: None,
        }
    }
}

/// One module on one device (section 2.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FirmwareState {
    pub module_id: Uuid,
    pub device_id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_specification_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_firmware_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_firmware_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub target_firmware_version_modified_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_update_status: Option<UpdateStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_update_status_details: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::timestamp::option")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    pub firmware_update_status_modified_at: Option<Timestamp>,
    /// Members this version does not know, kept as sent.
    #[serde(flatten)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: Map<String, Value>,
}

crate::known_values! {
    /// Firmware update status. The reference does not list the values; these are the
    /// simulator's (see docs/simulator-assumptions.md). Any other value is kept as `Unknown`.
    UpdateStatus {
        Pending => "PENDING",
        Downloading => "DOWNLOADING",
        Installing => "INSTALLING",
        Succeeded => "SUCCEEDED",
        Failed => "FAILED",
        Cancelled => "CANCELLED",
    }
}
