//! What the app holds between commands: the client of the active profile (and, for the
//! built-in profile, the simulator it runs in-process).

use dcs_api::Client;
use dcs_console::simulator::{self, Embedded};
use dcs_console::Profile;

pub struct AppState {
    pub client: Client,
    pub profile: Profile,
    /// Base address of the service the client talks to.
    pub base_url: String,
    /// The embedded simulator, kept alive for the app's lifetime.
    pub simulator: Option<Embedded>,
}

impl AppState {
    /// With no configuration: start the simulator on a free loopback port with the demo data.
    pub async fn start() -> Result<AppState, simulator::EmbedError> {
        let seed = std::env::var("DCS_SIM_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
        let embedded =
            simulator::start(dcs_sim::SimOptions { seed, speed: dcs_sim::DEMO_SPEED, ..Default::default() }).await?;
        let base_url = embedded.running.base_url();
        tracing::info!(%base_url, "embedded simulator started");
        Ok(AppState {
            client: embedded.client.clone(),
            profile: embedded.profile.clone(),
            base_url,
            simulator: Some(embedded),
        })
    }
}
