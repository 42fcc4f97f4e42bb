//! The downlink kinds and what the UI needs to know of each to show its list and filters.

use dcs_api::downlinks::{ConnectionKind, ACTUATOR_SORT_FIELDS, CONNECTION_SORT_FIELDS};
use dcs_api::model::downlinks::{ConnectionDownlinkStatus, DownlinkStatus};
use serde::{Deserialize, Serialize};

/// The downlink families: actuator-style (`/downlinks`) and the connection-specific ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum DownlinkKind {
    Actuator,
    Http,
    Lora,
    Mqtt,
    Sms,
    Digitalmatter,
}

impl DownlinkKind {
    pub const ALL: [DownlinkKind; 6] = [
        DownlinkKind::Actuator,
        DownlinkKind::Http,
        DownlinkKind::Lora,
        DownlinkKind::Mqtt,
        DownlinkKind::Sms,
        DownlinkKind::Digitalmatter,
    ];

    /// The client's connection kind; `None` for actuator downlinks.
    pub fn connection(self) -> Option<ConnectionKind> {
        match self {
            DownlinkKind::Actuator => None,
            DownlinkKind::Http => Some(ConnectionKind::Http),
            DownlinkKind::Lora => Some(ConnectionKind::Lora),
            DownlinkKind::Mqtt => Some(ConnectionKind::Mqtt),
            DownlinkKind::Sms => Some(ConnectionKind::Sms),
            DownlinkKind::Digitalmatter => Some(ConnectionKind::DigitalMatter),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            DownlinkKind::Actuator => "Actuator",
            DownlinkKind::Http => "HTTP",
            DownlinkKind::Lora => "LoRa",
            DownlinkKind::Mqtt => "MQTT",
            DownlinkKind::Sms => "SMS",
            DownlinkKind::Digitalmatter => "Digital Matter",
        }
    }

    /// Fields its list sorts by (the client's lists, A-36).
    pub fn sort_fields(self) -> &'static [&'static str] {
        match self {
            DownlinkKind::Actuator => ACTUATOR_SORT_FIELDS,
            _ => CONNECTION_SORT_FIELDS,
        }
    }

    /// Its name in paths and files: `actuator`, `http`, `lora`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            DownlinkKind::Actuator => "actuator",
            DownlinkKind::Http => "http",
            DownlinkKind::Lora => "lora",
            DownlinkKind::Mqtt => "mqtt",
            DownlinkKind::Sms => "sms",
            DownlinkKind::Digitalmatter => "digitalmatter",
        }
    }

    /// Whether its downlinks carry `retryLimit` (actuator, LoRa and SMS: sections 2.6, 2.7).
    pub fn has_retries(self) -> bool {
        matches!(self, DownlinkKind::Actuator | DownlinkKind::Lora | DownlinkKind::Sms)
    }
}

/// What the UI needs to know of a kind to show its list and filters.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct KindInfo {
    pub kind: DownlinkKind,
    pub label: String,
    pub sort_fields: Vec<String>,
    /// The known statuses (the `status` filter of the connection kinds offers them).
    pub statuses: Vec<String>,
    /// The `status` filter takes any string (SMS, MQTT), not only the known values (HTTP, LoRa).
    pub free_status: bool,
    /// The list filters of the kind, by query parameter name (sections 4.2, 4.3).
    pub filters: Vec<String>,
    pub retries: bool,
}

pub fn kinds() -> Vec<KindInfo> {
    const TIME: [&str; 4] = ["createdBefore", "createdSince", "modifiedBefore", "modifiedSince"];
    DownlinkKind::ALL
        .into_iter()
        .map(|kind| {
            let (statuses, first): (&[&str], &[&str]) = match kind {
                DownlinkKind::Actuator => (DownlinkStatus::KNOWN, &["q"]),
                _ => (ConnectionDownlinkStatus::KNOWN, &["deviceId", "status"]),
            };
            KindInfo {
                kind,
                label: kind.label().to_owned(),
                sort_fields: kind.sort_fields().iter().map(|s| s.to_string()).collect(),
                statuses: statuses.iter().map(|s| s.to_string()).collect(),
                free_status: matches!(kind, DownlinkKind::Sms | DownlinkKind::Mqtt),
                filters: first.iter().chain(TIME.iter()).map(|s| s.to_string()).collect(),
                retries: kind.has_retries(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::downlinks::humanize;

    #[test]
    fn kinds_name_their_sort_fields_and_filters() {
        let all = kinds();
        assert_eq!(all.len(), 6);
        assert_eq!(all[0].sort_fields, ACTUATOR_SORT_FIELDS);
        assert_eq!(all[0].filters[0], "q");
        let sms = all.iter().find(|k| k.kind == DownlinkKind::Sms).unwrap();
        assert!(sms.free_status && sms.retries && sms.filters.contains(&"deviceId".to_owned()));
        let lora = all.iter().find(|k| k.kind == DownlinkKind::Lora).unwrap();
        assert!(!lora.free_status);
        assert_eq!(lora.statuses, ["PENDING", "EXECUTING", "DONE"]);
        assert_eq!(humanize("PT1H30M"), "1 h 30 min");
        assert_eq!(humanize("P1DT5S"), "1 d 5 s");
    }
}
