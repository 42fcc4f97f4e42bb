//! The embedded simulator: started in-process on a free loopback port when no real service is
//! configured, and the client that talks to it as the built-in profile.

use std::net::{Ipv4Addr, SocketAddr};

use dcs_api::{Client, ClientConfig, Secret};
use dcs_sim::{RunningSim, SimOptions, Simulator};

use crate::{Customer, Profile};

/// A running embedded simulator and a client logged in as its demo reseller.
pub struct Embedded {
    pub sim: Simulator,
    pub running: RunningSim,
    pub client: Client,
    pub profile: Profile,
    /// The folder of the simulator's database when the caller gave none; removed when dropped.
    _scratch: Option<tempfile::TempDir>,
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("could not start the simulator: {0}")]
    Start(String),
    #[error(transparent)]
    Client(#[from] dcs_api::Error),
}

impl Embedded {
    /// The simulated clock now and its speed, for countdowns against the simulator's times.
    pub fn clock(&self) -> crate::downlinks::ServiceClock {
        crate::downlinks::ServiceClock {
            now: dcs_api::model::timestamp::format_millis(self.sim.now()),
            rate: self.sim.speed(),
        }
    }
}

/// Starts the simulator on `127.0.0.1:<free port>` inside the current tokio runtime.
pub async fn start(mut opts: SimOptions) -> Result<Embedded, EmbedError> {
    let seed = opts.seed;
    // The demo data set lives in a database file rather than in SQLite's memory: the operating
    // system's page cache holds it instead of the process (measured: the idle release app's RSS
    // 190 -> 174 MiB, PSS 114 -> 98 MiB). The app gives a file in its data folder, kept across
    // restarts; without one (`dcs` running it in-process) it is a scratch folder's, gone after.
    let scratch = match opts.data {
        Some(_) => None,
        None => {
            let dir =
                tempfile::Builder::new().prefix("dcs-sim.").tempdir().map_err(|e| EmbedError::Start(e.to_string()))?;
            opts.data = Some(dir.path().join("simulator.sqlite"));
            Some(dir)
        }
    };
    let sim = Simulator::new(opts).map_err(|e| EmbedError::Start(e.to_string()))?;
    let running =
        sim.spawn(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await.map_err(|e| EmbedError::Start(e.to_string()))?;
    let key = sim.demo_key();
    let base = running.base_url();
    let config = ClientConfig::new(&base, &base, &key.key_id, Secret::new(key.secret.clone()))?;
    let client = Client::new(config)?;
    let mut profile = builtin_profile(seed);
    profile.set_target = Some(crate::set_target::SetTarget::simulator_for(sim.variant()));
    Ok(Embedded { profile, sim, running, client, _scratch: scratch })
}

/// Starts the built-in simulator with `seed`, its state in `data` (a scratch file when `None`),
/// as the environment sets it: `DCS_SIM_SPEED` (the demo speed when unset), `DCS_SIM_DEVICES`
/// (devices per client, for a bigger demo fleet; the default when unset) and `DCS_SIM_VARIANT`.
pub async fn start_from_env(seed: u64, data: Option<std::path::PathBuf>) -> Result<Embedded, crate::Error> {
    let failed = |e: EmbedError| crate::Error::Setup(format!("the built-in simulator could not start: {e}"));
    let speed = std::env::var("DCS_SIM_SPEED").ok().and_then(|s| s.parse().ok()).filter(|s: &f64| *s > 0.0);
    let mut opts = SimOptions {
        seed,
        speed: speed.unwrap_or(dcs_sim::DEMO_SPEED),
        data,
        variant: variant_from_env().map_err(failed)?,
        ..Default::default()
    };
    if let Some(n) = std::env::var("DCS_SIM_DEVICES").ok().and_then(|s| s.parse().ok()).filter(|n: &u32| *n > 0) {
        opts.devices_per_client = n;
    }
    start(opts).await.map_err(failed)
}

/// The built-in profile of the simulator with `seed`: the demo reseller's key and its customers
/// with their names. Known without starting the simulator.
pub fn builtin_profile(seed: u64) -> Profile {
    let customers = dcs_sim::seed::demo_customers(seed)
        .into_iter()
        .map(|(id, name)| Customer { id, label: name.to_owned() })
        .collect();
    let mut profile = Profile::simulator(&dcs_sim::seed::demo_reseller_key(seed).key_id, customers);
    // The variant the built-in simulator plays (`DCS_SIM_VARIANT`, see `variant_from_env`).
    profile.set_target =
        Some(crate::set_target::SetTarget::simulator_for(dcs_sim::Variant::from_env().unwrap_or_default()));
    profile
}

/// The variant of the built-in simulator: `DCS_SIM_VARIANT` (`reference` or `alt`), for tests
/// of the app and the CLI against both; reference when unset.
pub fn variant_from_env() -> Result<dcs_sim::Variant, EmbedError> {
    dcs_sim::Variant::from_env().map_err(EmbedError::Start)
}
