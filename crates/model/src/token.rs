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

/// Answer of the token exchange.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: String,
    pub expires_in: u64,
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
}
