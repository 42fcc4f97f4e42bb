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

impl std::fmt::Debug for TokenRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRequest")
            .field("grant_type", &self.grant_type)
            .field("audience", &self.audience)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .finish()
    }
}

/// Answer of the token exchange.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: String,
    pub expires_in: u64,
}

impl std::fmt::Debug for TokenResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenResponse")
            .field("access_token", &"***")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .finish()
    }
}

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
