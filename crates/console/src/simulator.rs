//! The embedded simulator: started in-process on a free loopback port when no real service is
//! configured, and the client that talks to it as the built-in profile.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use dcs_api::{Client, ClientConfig, Secret};
use dcs_sim::{RunningSim, SimOptions, Simulator};
use futures::future::{BoxFuture, FutureExt as _, Shared};

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

/// The app's built-in simulator, started in the background so that the window does not wait
/// for its demo data to be seeded: the address is known at once (the port is bound first), and
/// [`Starting::ready`] is the one handle that what needs the service waits on.
pub struct Starting {
    /// Base address of the API, e.g. `http://127.0.0.1:43125` (bound, served once ready).
    pub base_url: String,
    /// The built-in profile, as [`builtin_profile`] makes it.
    pub profile: Profile,
    /// The demo reseller key's secret, derived from the seed as the simulator derives it.
    pub secret: Secret,
    ready: Shared<BoxFuture<'static, Result<Arc<Started>, String>>>,
}

/// The built-in simulator once seeded and serving.
pub struct Started {
    pub sim: Simulator,
    serving: tokio::task::JoinHandle<()>,
    _scratch: Option<tempfile::TempDir>,
}

impl Started {
    /// The simulated clock now and its speed, for countdowns against the simulator's times.
    pub fn clock(&self) -> crate::downlinks::ServiceClock {
        crate::downlinks::ServiceClock {
            now: dcs_api::model::timestamp::format_millis(self.sim.now()),
            rate: self.sim.speed(),
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

impl Starting {
    /// Waits until the simulator serves (at once when it already does); why it could not start.
    pub async fn ready(&self) -> Result<Arc<Started>, crate::Error> {
        self.ready.clone().await.map_err(crate::Error::Setup)
    }
}

/// Starts the built-in simulator with `seed`, its state in `data` (a scratch file when `None`),
/// as the environment sets it: `DCS_SIM_SPEED` (the demo speed when unset), `DCS_SIM_DEVICES`
/// (devices per client, for a bigger demo fleet; the default when unset) and `DCS_SIM_VARIANT`.
/// It answers as soon as its port is bound: the seeding (seconds for a new data file) and the
/// serving go on in a task of the current tokio runtime. A request sent before it serves waits
/// in the port's listen queue; the app's commands wait on [`Starting::ready`] instead. The options are checked here, so a bad
/// `DCS_SIM_VARIANT` fails at once; a failure to seed or serve comes from `ready`.
pub fn start_in_background(seed: u64, data: Option<std::path::PathBuf>) -> Result<Starting, crate::Error> {
    let failed = |e: String| crate::Error::Setup(format!("the built-in simulator could not start: {e}"));
    let speed = std::env::var("DCS_SIM_SPEED").ok().and_then(|s| s.parse().ok()).filter(|s: &f64| *s > 0.0);
    let mut opts = SimOptions {
        seed,
        speed: speed.unwrap_or(dcs_sim::DEMO_SPEED),
        data,
        variant: variant_from_env().map_err(|e| failed(e.to_string()))?,
        ..Default::default()
    };
    if let Some(n) = std::env::var("DCS_SIM_DEVICES").ok().and_then(|s| s.parse().ok()).filter(|n: &u32| *n > 0) {
        opts.devices_per_client = n;
    }
    opts.check().map_err(failed)?;
    let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| failed(e.to_string()))?;
    listener.set_nonblocking(true).map_err(|e| failed(e.to_string()))?;
    let base_url = format!("http://{}", listener.local_addr().map_err(|e| failed(e.to_string()))?);
    let key = dcs_sim::seed::demo_reseller_key(seed);
    let mut profile = builtin_profile(seed);
    profile.set_target = Some(crate::set_target::SetTarget::simulator_for(opts.variant));
    let (url, secret) = (base_url.clone(), key.secret.clone());
    let task = tokio::spawn(async move {
        let scratch = match opts.data {
            Some(_) => None,
            None => {
                let dir = tempfile::Builder::new().prefix("dcs-sim.").tempdir().map_err(|e| e.to_string())?;
                opts.data = Some(dir.path().join("simulator.sqlite"));
                Some(dir)
            }
        };
        // Seeding a new data file is seconds of blocking work: off the runtime's workers, and
        // below the window's priority while it draws its first screen.
        let sim =
            crate::background::run("dcs-sim-seed", move || Simulator::new(opts)).await?.map_err(|e| e.to_string())?;
        if sim.demo_key().secret != secret {
            // A data file seeded with another seed keeps its own keys (dcs_sim::Simulator::new).
            return Err("its data file holds another seed's demo data".to_owned());
        }
        let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
        let served = sim.clone();
        let serving = tokio::spawn(async move {
            if let Err(e) = served.serve(listener).await {
                tracing::error!(error = %e, "the built-in simulator stopped serving");
            }
        });
        tracing::info!(base_url = %url, "embedded simulator started");
        Ok(Arc::new(Started { sim, serving, _scratch: scratch }))
    });
    let ready = async move {
        match task.await {
            Ok(r) => r.map_err(|e| format!("the built-in simulator could not start: {e}")),
            Err(e) => Err(format!("the built-in simulator could not start: {e}")),
        }
    }
    .boxed()
    .shared();
    Ok(Starting { base_url, profile, secret: Secret::new(key.secret), ready })
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
