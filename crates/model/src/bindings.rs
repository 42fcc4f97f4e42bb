//! Connector bindings (reference sections 2.8 and 4.4): the per-device configuration that lets a
//! device reach the platform through the LoRa, HTTP or MQTT connector.
//!
//! The reference leaves several JSON field names "not shown" (the three LoRa fields, every
//! HTTP field); the names used here are the simulator's (see docs/simulator-assumptions.md).
//! Secrets (`appKey`, `password`, `sharedSecret`) are optional on the way in, so a service that
//! masks them still parses, and `Debug` never prints them.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Timestamp;

crate::known_values! {
    /// Status of a LoRa binding (section 2.8). Any other value is kept as `Unknown`.
    LoraBindingStatus {
        Inventory => "INVENTORY",
        Active => "ACTIVE",
    }
}

crate::known_values! {
    /// Binding type of an HTTP binding (sections 2.8, 4.4).
    HttpBindingType {
        Streamline => "http-streamline",
        Senml => "http-senml",
    }
}

/// Which connector a binding is for: the first path segment of `/K/bindings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum BindingKind {
    Lora,
    Http,
    Mqtt,
}

impl BindingKind {
    pub const ALL: [BindingKind; 3] = [BindingKind::Lora, BindingKind::Http, BindingKind::Mqtt];

    pub fn as_str(self) -> &'static str {
        match self {
            BindingKind::Lora => "lora",
            BindingKind::Http => "http",
            BindingKind::Mqtt => "mqtt",
        }
    }

    /// The collection path, e.g. `/lora/bindings`.
    pub fn path(self) -> &'static str {
        match self {
            BindingKind::Lora => "/lora/bindings",
            BindingKind::Http => "/http/bindings",
            BindingKind::Mqtt => "/mqtt/bindings",
        }
    }
}

impl std::fmt::Display for BindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn mask(s: &Option<String>) -> &'static str {
    if s.is_some() {
        "Some(***)"
    } else {
        "None"
    }
}

/// A LoRa binding: the device joins a LoRaWAN network server and its traffic goes to an
/// application server (section 2.8).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LoraBinding {
    pub id: Uuid,
    /// The bound device, in one of the device-id forms of section 1.
    pub device_id: String,
    /// Exactly 16 hex characters, globally unique.
    pub application_server_id: String,
    /// Over-the-air activation key: exactly 32 hex characters. Sensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_key: Option<String>,
    pub status: LoraBindingStatus,
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

impl std::fmt::Debug for LoraBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoraBinding")
            .field("id", &self.id)
            .field("device_id", &self.device_id)
            .field("application_server_id", &self.application_server_id)
            .field("app_key", &mask(&self.app_key))
            .field("status", &self.status)
            .field("created_at", &self.created_at)
            .field("created_by", &self.created_by)
            .field("modified_at", &self.modified_at)
            .field("modified_by", &self.modified_by)
            .finish()
    }
}

/// The body of `POST` / `PUT /lora/bindings`: the writable fields. The status is the
/// network server's, never the caller's.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LoraBindingRequest {
    pub device_id: String,
    pub application_server_id: String,
    pub app_key: String,
}

impl std::fmt::Debug for LoraBindingRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoraBindingRequest")
            .field("device_id", &self.device_id)
            .field("application_server_id", &self.application_server_id)
            .field("app_key", &"***")
            .finish()
    }
}

/// An MQTT binding: the device logs in to the MQTT connector (section 2.8).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MqttBinding {
    pub id: Uuid,
    pub device_id: String,
    /// Set by the service to the device URN when the binding is created; read-only.
    pub username: String,
    /// At least 24 characters with all four character classes (section 8). Sensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
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

impl std::fmt::Debug for MqttBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MqttBinding")
            .field("id", &self.id)
            .field("device_id", &self.device_id)
            .field("username", &self.username)
            .field("password", &mask(&self.password))
            .field("created_at", &self.created_at)
            .field("created_by", &self.created_by)
            .field("modified_at", &self.modified_at)
            .field("modified_by", &self.modified_by)
            .finish()
    }
}

/// The body of `POST` / `PUT /mqtt/bindings`. `username` is the service's: not sent.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MqttBindingRequest {
    pub device_id: String,
    pub password: String,
}

impl std::fmt::Debug for MqttBindingRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MqttBindingRequest").field("device_id", &self.device_id).field("password", &"***").finish()
    }
}

/// An HTTP binding: the device posts streamline or SenML uplinks over HTTP(S) (section 2.8).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct HttpBinding {
    pub id: Uuid,
    pub device_id: String,
    #[serde(rename = "type")]
    pub binding_type: HttpBindingType,
    /// The secret the device authenticates its uplinks with: 16-64 printable ASCII characters
    /// without spaces (a simulator assumption). Sensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_secret: Option<String>,
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

impl std::fmt::Debug for HttpBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpBinding")
            .field("id", &self.id)
            .field("device_id", &self.device_id)
            .field("binding_type", &self.binding_type)
            .field("shared_secret", &mask(&self.shared_secret))
            .field("created_at", &self.created_at)
            .field("created_by", &self.created_by)
            .field("modified_at", &self.modified_at)
            .field("modified_by", &self.modified_by)
            .finish()
    }
}

/// The body of `POST` / `PUT /http/bindings`.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct HttpBindingRequest {
    pub device_id: String,
    #[serde(rename = "type")]
    pub binding_type: HttpBindingType,
    pub shared_secret: String,
}

impl std::fmt::Debug for HttpBindingRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpBindingRequest")
            .field("device_id", &self.device_id)
            .field("binding_type", &self.binding_type)
            .field("shared_secret", &"***")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_and_unknown_values() {
        let json = serde_json::json!({
            "id": "0f8fad5b-d9cb-469f-a165-70867728950e",
            "deviceId": "deveui:70b3d57ed0000001",
            "applicationServerId": "0011223344556677",
            "appKey": "00112233445566778899aabbccddeeff",
            "status": "SUSPENDED",
            "createdAt": "2026-01-05T08:00:00Z"
        });
        let b: LoraBinding = serde_json::from_value(json).unwrap();
        assert_eq!(b.status, LoraBindingStatus::Unknown("SUSPENDED".into()));
        assert!(!format!("{b:?}").contains("8899aabb"), "Debug hides the key");
        let back = serde_json::to_value(&b).unwrap();
        assert_eq!(back["applicationServerId"], "0011223344556677");
        assert!(back.get("modifiedAt").is_none());

        let h: HttpBinding = serde_json::from_value(serde_json::json!({
            "id": "0f8fad5b-d9cb-469f-a165-70867728950e", "deviceId": "imei:350000000000001", "type": "http-senml"
        }))
        .unwrap();
        assert_eq!(h.binding_type, HttpBindingType::Senml);
        assert_eq!(h.shared_secret, None, "a masked secret still parses");
        assert_eq!(serde_json::to_value(&h).unwrap()["type"], "http-senml");

        let m = MqttBindingRequest { device_id: "x".into(), password: "Secret-Password-1234567890".into() };
        assert!(!format!("{m:?}").contains("Secret"));
        assert_eq!(serde_json::to_string(&BindingKind::Mqtt).unwrap(), "\"mqtt\"");
        assert_eq!(BindingKind::Lora.path(), "/lora/bindings");
    }
}
