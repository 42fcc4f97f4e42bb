//! Connector bindings (reference sections 2.8 and 4.4): the per-device configuration that lets a
//! device reach the platform through the LoRa, HTTP or MQTT connector.
//!
//! The reference leaves several JSON field names "not shown" (the three LoRa fields, every
//! HTTP field); the names used here are the simulator's (see docs/simulator-assumptions.md).
//! Secrets (`appKey`, `password`, `sharedSecret`) are optional on the way in, so a service that
//! masks them still parses, and `Debug` never prints them.
//!
//! Answers are read tolerantly: only `id` is required (an editor needs it); every field the
//! reference does not show or mark required may be missing, and members this version does not
//! know are kept in `extra`. The request types carry such members too, so a full-replacement `PUT`
//! built from a binding as read sends them back instead of dropping them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
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

/// A LoRa binding: the device joins a LoRaWAN network server and its traffic goes to an
/// application server (section 2.8).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LoraBinding {
    pub id: Uuid,
    /// The bound device, in one of the device-id forms of section 1 (empty when not answered).
    #[serde(default)]
    pub device_id: String,
    /// Exactly 16 hex characters, globally unique.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application_server_id: Option<String>,
    /// Over-the-air activation key: exactly 32 hex characters. Sensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<LoraBindingStatus>,
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
    /// Members this version does not know, kept as sent (and sent back by a full `PUT`).
    #[serde(flatten)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: Map<String, Value>,
}

redacting_debug!(LoraBinding {
    id,
    device_id,
    application_server_id,
    app_key: masked,
    status,
    created_at,
    created_by,
    modified_at,
    modified_by,
    extra: keys
});

/// The body of `POST` / `PUT /lora/bindings`: the writable fields. The status is the
/// network server's, never the caller's.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LoraBindingRequest {
    pub device_id: String,
    pub application_server_id: String,
    pub app_key: String,
    /// Members of the binding as read that this version does not know: sent back unchanged.
    #[serde(flatten, default)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: Map<String, Value>,
}

redacting_debug!(LoraBindingRequest { device_id, application_server_id, app_key: secret });

/// An MQTT binding: the device logs in to the MQTT connector (section 2.8).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MqttBinding {
    pub id: Uuid,
    #[serde(default)]
    pub device_id: String,
    /// Set by the service to the device URN when the binding is created; read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// At least 24 characters with all four character classes (section 8). Sensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
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
    /// Members this version does not know, kept as sent (and sent back by a full `PUT`).
    #[serde(flatten)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: Map<String, Value>,
}

redacting_debug!(MqttBinding {
    id,
    device_id,
    username,
    password: masked,
    created_at,
    created_by,
    modified_at,
    modified_by,
    extra: keys
});

/// The body of `POST` / `PUT /mqtt/bindings`. `username` is the service's: not sent.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MqttBindingRequest {
    pub device_id: String,
    pub password: String,
    /// Members of the binding as read that this version does not know: sent back unchanged.
    #[serde(flatten, default)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: Map<String, Value>,
}

redacting_debug!(MqttBindingRequest { device_id, password: secret });

/// An HTTP binding: the device posts streamline or SenML uplinks over HTTP(S) (section 2.8).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct HttpBinding {
    pub id: Uuid,
    #[serde(default)]
    pub device_id: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub binding_type: Option<HttpBindingType>,
    /// The secret the device authenticates its uplinks with (its rule is not shown). Sensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_secret: Option<String>,
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
    /// Members this version does not know, kept as sent (and sent back by a full `PUT`).
    #[serde(flatten)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: Map<String, Value>,
}

redacting_debug!(HttpBinding {
    id,
    device_id,
    binding_type,
    shared_secret: masked,
    created_at,
    created_by,
    modified_at,
    modified_by,
    extra: keys
});

/// The body of `POST` / `PUT /http/bindings`.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct HttpBindingRequest {
    pub device_id: String,
    #[serde(rename = "type")]
    pub binding_type: HttpBindingType,
    pub shared_secret: String,
    /// Members of the binding as read that this version does not know: sent back unchanged.
    #[serde(flatten, default)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub extra: Map<String, Value>,
}

redacting_debug!(HttpBindingRequest { device_id, binding_type, shared_secret: secret });

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
        assert_eq!(b.status, Some(LoraBindingStatus::Unknown("SUSPENDED".into())));
        assert!(!format!("{b:?}").contains("8899aabb"), "Debug hides the key");
        let back = serde_json::to_value(&b).unwrap();
        assert_eq!(back["applicationServerId"], "0011223344556677");
        assert!(back.get("modifiedAt").is_none());

        let h: HttpBinding = serde_json::from_value(serde_json::json!({
            "id": "0f8fad5b-d9cb-469f-a165-70867728950e", "deviceId": "imei:350000000000001", "type": "http-senml"
        }))
        .unwrap();
        assert_eq!(h.binding_type, Some(HttpBindingType::Senml));
        assert_eq!(h.shared_secret, None, "a masked secret still parses");
        assert_eq!(serde_json::to_value(&h).unwrap()["type"], "http-senml");

        let m = MqttBindingRequest {
            device_id: "x".into(),
            password: "Secret-Password-1234567890".into(),
            extra: Map::new(),
        };
        assert!(!format!("{m:?}").contains("Secret"));
        assert_eq!(serde_json::to_string(&BindingKind::Mqtt).unwrap(), "\"mqtt\"");
        assert_eq!(BindingKind::Lora.path(), "/lora/bindings");
    }

    #[test]
    fn answers_missing_fields_the_reference_does_not_require_still_read() {
        let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
        let lora: LoraBinding = serde_json::from_value(serde_json::json!({"id": id, "deviceId": "d"})).unwrap();
        assert_eq!((lora.application_server_id, lora.status), (None, None));
        let http: HttpBinding = serde_json::from_value(serde_json::json!({"id": id, "deviceId": "d"})).unwrap();
        assert_eq!(http.binding_type, None);
        let mqtt: MqttBinding = serde_json::from_value(serde_json::json!({"id": id})).unwrap();
        assert_eq!((mqtt.username, mqtt.device_id.as_str()), (None, ""));
        let back = serde_json::to_value(&http).unwrap();
        assert!(back.get("type").is_none(), "absent stays absent: {back}");
    }

    #[test]
    fn unknown_members_are_kept_and_written_back() {
        let raw = serde_json::json!({
            "id": "0f8fad5b-d9cb-469f-a165-70867728950e", "deviceId": "d", "type": "http-senml",
            "sharedSecret": "s", "tlsProfile": {"minVersion": "1.3"}, "region": "eu"
        });
        let h: HttpBinding = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(h.extra.len(), 2, "{:?}", h.extra);
        assert_eq!(h.extra["tlsProfile"], serde_json::json!({"minVersion": "1.3"}));
        assert_eq!(serde_json::to_value(&h).unwrap(), raw);
        assert!(!format!("{h:?}").contains("\"s\""), "Debug names unknown members, never their values");

        let req = HttpBindingRequest {
            device_id: "imei:350000000000001".into(),
            binding_type: HttpBindingType::Streamline,
            shared_secret: "t".into(),
            extra: h.extra.clone(),
        };
        let body = serde_json::to_value(&req).unwrap();
        assert_eq!(body["region"], "eu");
        assert_eq!(body["type"], "http-streamline");
    }
}
