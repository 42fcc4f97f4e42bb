//! Profiles: which service environment to talk to and as which API key. No secret is ever part
//! of a profile; the secret of a profile lives in the OS keychain under the profile's name.

use serde::{Deserialize, Serialize};

/// Name of the built-in profile that talks to the embedded simulator.
pub const SIMULATOR_PROFILE: &str = "simulator";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub name: String,
    /// `None` for the built-in simulator profile: its address is known only once it runs.
    pub base_url: Option<String>,
    pub auth_url: Option<String>,
    pub client_id: String,
    pub audience: String,
}

impl Profile {
    /// The built-in profile: the demo reseller's key on the embedded simulator.
    pub fn simulator(client_id: &str) -> Profile {
        Profile {
            name: SIMULATOR_PROFILE.to_owned(),
            base_url: None,
            auth_url: None,
            client_id: client_id.to_owned(),
            audience: dcs_api::model::SERVICE_AUDIENCE.to_owned(),
        }
    }

    pub fn is_simulator(&self) -> bool {
        self.base_url.is_none()
    }
}
