//! The token exchange of reference section 5.3.

use serde::{Deserialize, Serialize};

/// The service's application id, the `audience` of every token request (section 5.3).
pub const SERVICE_AUDIENCE: &str = "4dc82561-f65f-523g-dek9-6c79ec314f02";

/// Body of `POST {auth_url}/api/v3/idp/oidc/token`. All four fields are required strings.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRequest {
    pub grant_type: String,
    pub audience: String,
    pub client_id: String,
    pub client_secret: String,
}

redacting_debug!(TokenRequest { grant_type, audience, client_id, client_secret: secret });

/// Answer of the token exchange. Read tolerantly, as identity platforms write it differently:
/// `token_type` missing or `null` is `Bearer` (the only type the service takes), and
/// `expires_in` may be a number, a string of digits, or missing ([`UNKNOWN_LIFETIME`]: the token
/// is then fetched again early; a 401 before that fetches it again anyway).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenResponse {
    pub access_token: String,
    #[serde(default = "bearer", deserialize_with = "token_type")]
    pub token_type: String,
    #[serde(default = "unknown_lifetime", deserialize_with = "seconds")]
    pub expires_in: u64,
}

/// Seconds a token whose answer gave no `expires_in` is taken to last.
pub const UNKNOWN_LIFETIME: u64 = 300;

fn bearer() -> String {
    "Bearer".to_owned()
}

fn unknown_lifetime() -> u64 {
    UNKNOWN_LIFETIME
}

fn token_type<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.filter(|t| !t.trim().is_empty()).unwrap_or_else(bearer))
}

/// `expires_in`: a whole number of seconds, or the same as a string of digits; absent, `null` or
/// blank is [`UNKNOWN_LIFETIME`]. Anything else (negative, fractional, past 64 bits) is refused,
/// never wrapped.
fn seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    use serde::de::{Error, Unexpected, Visitor};
    struct Seconds;
    impl<'de> Visitor<'de> for Seconds {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("u64 (seconds, as a number or a string of digits)")
        }
        fn visit_u64<E: Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
        }
        fn visit_f64<E: Error>(self, v: f64) -> Result<u64, E> {
            Err(E::invalid_type(Unexpected::Float(v), &self))
        }
        fn visit_str<E: Error>(self, v: &str) -> Result<u64, E> {
            match v.trim() {
                "" => Ok(UNKNOWN_LIFETIME),
                t => t.parse().map_err(|_| E::invalid_value(Unexpected::Str(v), &self)),
            }
        }
        fn visit_none<E: Error>(self) -> Result<u64, E> {
            Ok(UNKNOWN_LIFETIME)
        }
        fn visit_unit<E: Error>(self) -> Result<u64, E> {
            Ok(UNKNOWN_LIFETIME)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
            d.deserialize_any(Seconds)
        }
    }
    d.deserialize_any(Seconds)
}

redacting_debug!(TokenResponse { access_token: secret, token_type, expires_in });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_prints_secret_or_token() {
        let req = TokenRequest {
            grant_type: "client_credentials".into(),
            audience: SERVICE_AUDIENCE.into(),
            client_id: "key".into(),
            client_secret: "s3cr3t-value".into(),
        };
        assert!(!format!("{req:?}").contains("s3cr3t-value"));
        let res = TokenResponse { access_token: "eyJ.tok.en".into(), token_type: "Bearer".into(), expires_in: 3600 };
        assert!(!format!("{res:?}").contains("eyJ.tok.en"));
    }

    #[test]
    fn an_answer_with_its_lifetime_as_text_or_missing_or_no_type_reads() {
        let read = |json: &str| serde_json::from_str::<TokenResponse>(json).map(|r| (r.token_type, r.expires_in));
        assert_eq!(
            read(r#"{"access_token":"t","token_type":"Bearer","expires_in":3600}"#).unwrap(),
            ("Bearer".into(), 3600)
        );
        assert_eq!(
            read(r#"{"access_token":"t","token_type":"bearer","expires_in":"3600"}"#).unwrap(),
            ("bearer".into(), 3600)
        );
        assert_eq!(read(r#"{"access_token":"t"}"#).unwrap(), ("Bearer".into(), UNKNOWN_LIFETIME));
        assert_eq!(
            read(r#"{"access_token":"t","token_type":null,"expires_in":null}"#).unwrap(),
            ("Bearer".into(), UNKNOWN_LIFETIME)
        );
        assert!(read(r#"{"access_token":"t","expires_in":3599.5}"#).is_err());
        assert!(read(r#"{"access_token":"t","expires_in":"soon"}"#).is_err());
        assert!(read(r#"{"access_token":"t","expires_in":-5}"#).is_err());
        assert!(read(r#"{"token_type":"Bearer","expires_in":60}"#).is_err(), "no token is no answer");
    }
}
