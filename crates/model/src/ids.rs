//! The seven device-identifier forms of section 1. Prefixes match case-insensitively; the URN
//! forms may end with one `:`.

use std::fmt;

use thiserror::Error;
use uuid::Uuid;

/// A device identifier in one of the accepted forms, normalised (lower-case prefix and hex).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DeviceId {
    /// A bare device UUID.
    Uuid(Uuid),
    /// `imei:` + 15 or 16 digits, or `urn:dev:imei:...`.
    Imei { digits: String, urn: bool },
    /// `deveui:` + 16 hex characters, or `urn:dev:deveui:...`.
    DevEui { hex: String, urn: bool },
    /// `dvnuuid:` + UUID, or `urn:dev:dvnuuid:...`.
    DvnUuid { uuid: Uuid, urn: bool },
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct DeviceIdError(String);

const FORMS: &str = "a UUID, imei:<15-16 digits>, deveui:<16 hex>, dvnuuid:<UUID>, or the URN forms \
                     urn:dev:imei:..., urn:dev:deveui:..., urn:dev:dvnuuid:... (optional trailing `:`)";

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    (s.len() >= prefix.len() && s.is_char_boundary(prefix.len()) && s[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

fn imei(digits: &str, urn: bool) -> Result<DeviceId, DeviceIdError> {
    if (15..=16).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
        Ok(DeviceId::Imei { digits: digits.to_owned(), urn })
    } else {
        Err(DeviceIdError(format!("an IMEI device id needs 15 or 16 digits, got `{digits}`")))
    }
}

fn deveui(hex: &str, urn: bool) -> Result<DeviceId, DeviceIdError> {
    if hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(DeviceId::DevEui { hex: hex.to_ascii_lowercase(), urn })
    } else {
        Err(DeviceIdError(format!("a DevEUI needs exactly 16 hex characters, got `{hex}`")))
    }
}

fn dvnuuid(s: &str, urn: bool) -> Result<DeviceId, DeviceIdError> {
    // The reference asks for the hyphenated 8-4-4-4-12 form.
    if s.len() == 36 {
        if let Ok(uuid) = Uuid::parse_str(s) {
            return Ok(DeviceId::DvnUuid { uuid, urn });
        }
    }
    Err(DeviceIdError(format!("a DVNUUID needs a UUID in 8-4-4-4-12 form, got `{s}`")))
}

impl DeviceId {
    pub fn parse(input: &str) -> Result<DeviceId, DeviceIdError> {
        let s = input.trim();
        if let Some(rest) = strip_prefix_ci(s, "urn:dev:") {
            let rest = rest.strip_suffix(':').unwrap_or(rest);
            if let Some(d) = strip_prefix_ci(rest, "imei:") {
                return imei(d, true);
            }
            if let Some(h) = strip_prefix_ci(rest, "deveui:") {
                return deveui(h, true);
            }
            if let Some(u) = strip_prefix_ci(rest, "dvnuuid:") {
                return dvnuuid(u, true);
            }
            return Err(DeviceIdError(format!("unknown device URN kind in `{input}`; expected {FORMS}")));
        }
        if let Some(d) = strip_prefix_ci(s, "imei:") {
            return imei(d, false);
        }
        if let Some(h) = strip_prefix_ci(s, "deveui:") {
            return deveui(h, false);
        }
        if let Some(u) = strip_prefix_ci(s, "dvnuuid:") {
            return dvnuuid(u, false);
        }
        if s.len() == 36 {
            if let Ok(u) = Uuid::parse_str(s) {
                return Ok(DeviceId::Uuid(u));
            }
        }
        Err(DeviceIdError(format!("`{input}` is not a device id; expected {FORMS}")))
    }

    /// The entries of a device list (a `--device-list` file, a list pasted in the rollout
    /// form): ids in any form separated by whitespace, `,` or `;`, each with its parse, in the
    /// list's order; empty entries are skipped.
    pub fn parse_list(text: &str) -> Vec<(&str, Result<DeviceId, DeviceIdError>)> {
        text.split(|c: char| c.is_whitespace() || c == ',' || c == ';')
            .filter(|s| !s.is_empty())
            .map(|e| (e, DeviceId::parse(e)))
            .collect()
    }

    /// The URN shape of section 2.6 (`urn:dev:<kind>:<id>:`), where the form has one.
    /// The device's UUID when the form is the bare UUID (the other forms need the service).
    pub fn as_uuid(&self) -> Option<Uuid> {
        match self {
            DeviceId::Uuid(u) => Some(*u),
            _ => None,
        }
    }

    pub fn urn(&self) -> Option<String> {
        match self {
            DeviceId::Uuid(_) => None,
            DeviceId::Imei { digits, .. } => Some(format!("urn:dev:imei:{digits}:")),
            DeviceId::DevEui { hex, .. } => Some(format!("urn:dev:deveui:{hex}:")),
            DeviceId::DvnUuid { uuid, .. } => Some(format!("urn:dev:dvnuuid:{uuid}:")),
        }
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceId::Uuid(u) => write!(f, "{u}"),
            DeviceId::Imei { digits, urn: false } => write!(f, "imei:{digits}"),
            DeviceId::DevEui { hex, urn: false } => write!(f, "deveui:{hex}"),
            DeviceId::DvnUuid { uuid, urn: false } => write!(f, "dvnuuid:{uuid}"),
            urn => f.write_str(&urn.urn().unwrap_or_default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

    #[test]
    fn accepts_all_seven_forms_case_insensitively() {
        assert_eq!(DeviceId::parse(U).unwrap(), DeviceId::Uuid(U.parse().unwrap()));
        assert!(matches!(DeviceId::parse("IMEI:123456789012345").unwrap(), DeviceId::Imei { urn: false, .. }));
        assert!(matches!(DeviceId::parse("imei:1234567890123456").unwrap(), DeviceId::Imei { .. }));
        assert_eq!(
            DeviceId::parse("DevEUI:70B3D57ED0001234").unwrap(),
            DeviceId::DevEui { hex: "70b3d57ed0001234".into(), urn: false }
        );
        assert!(matches!(DeviceId::parse(&format!("dvnuuid:{U}")).unwrap(), DeviceId::DvnUuid { urn: false, .. }));
        assert!(matches!(DeviceId::parse("urn:dev:imei:123456789012345:").unwrap(), DeviceId::Imei { urn: true, .. }));
        assert!(matches!(
            DeviceId::parse("URN:DEV:DEVEUI:70b3d57ed0001234").unwrap(),
            DeviceId::DevEui { urn: true, .. }
        ));
        assert!(matches!(
            DeviceId::parse(&format!("urn:dev:dvnuuid:{U}:")).unwrap(),
            DeviceId::DvnUuid { urn: true, .. }
        ));
    }

    #[test]
    fn refuses_wrong_lengths_characters_and_kinds() {
        for bad in [
            "imei:12345678901234",
            "imei:12345678901234567",
            "imei:12345678901234a",
            "deveui:70b3d57ed000123",
            "deveui:70b3d57ed000123g",
            "dvnuuid:0f8fad5bd9cb469fa16570867728950e",
            "urn:dev:mac:001122334455",
            "urn:dev:imei:123456789012345::",
            "0f8fad5bd9cb469fa16570867728950e",
            "",
            "device-1",
        ] {
            assert!(DeviceId::parse(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn urns_have_the_trailing_colon_shape() {
        assert_eq!(
            DeviceId::parse("deveui:70B3D57ED0001234").unwrap().urn().unwrap(),
            "urn:dev:deveui:70b3d57ed0001234:"
        );
        assert_eq!(
            DeviceId::parse("urn:dev:imei:123456789012345").unwrap().to_string(),
            "urn:dev:imei:123456789012345:"
        );
    }
}
