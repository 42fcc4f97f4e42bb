//! A local simulator of the Device Connectivity Service.
//!
//! It serves the service's HTTP API from a SQLite state seeded with a deterministic demo data
//! set, so the console, the `dcs` command line and every test run with no account and no
//! network. Every behaviour the reference leaves "not shown" is a documented assumption, listed
//! in `docs/simulator-assumptions.md`.
//!
//! The simulator never calls the client crate: it shares only plain model types with it.

mod alt;
mod auth;
pub mod clock;
mod engine;
mod error;
pub mod faults;
pub mod fixtures;
mod limits;
pub mod paging;
pub mod rehearsal;
mod routes;
pub mod seed;
pub mod store;
mod variant;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use auth::DemoKey;
pub use store::Store;
pub use variant::{Variant, VARIANT_ENV};

/// How a simulator instance is set up.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Seed of the demo data set: the same seed always gives the same data.
    pub seed: u64,
    /// Lifetime of issued access tokens (the real service: one hour).
    pub token_lifetime: Duration,
    /// How much faster than real time simulated devices and downlinks move.
    pub speed: f64,
    /// SQLite file to keep the state in (and `<file>.files/` for uploads); in a temporary folder if `None`.
    pub data: Option<PathBuf>,
    /// Devices of the reseller and of each customer in the demo data set.
    pub devices_per_client: u32,
    /// Faults applied to every request (changeable while running: `PUT /_sim/faults`).
    pub faults: faults::Faults,
    /// Which plausible service to play: the A-n choices, or their "A-n (alt)" flips.
    pub variant: Variant,
    /// A fleet copied for a rehearsal, seeded instead of the demo data set.
    pub copy: Option<Arc<rehearsal::FleetCopy>>,
    /// How the copied devices' updates go (a device without a model moves as the demo's do).
    pub models: Option<Arc<rehearsal::UpdateModels>>,
}

/// Speed of the demo: a ten-minute firmware update takes ten seconds.
pub const DEMO_SPEED: f64 = 60.0;

/// The longest lifetime of an access token, in seconds (ten years): a longer one, from the
/// options or an `X-Sim-Fault: token-lifetime=` directive, is refused.
pub const MAX_TOKEN_LIFETIME: u64 = 10 * 365 * 24 * 3600;

impl SimOptions {
    /// Refuses options the simulator cannot run with: `<setting>: <rule>`, the setting named
    /// as in `/_sim/info` (the command line turns it into its flag).
    pub fn check(&self) -> Result<(), String> {
        clock::check_speed(self.speed).map_err(|rule| format!("speed: {rule}"))?;
        if self.token_lifetime.as_secs() > MAX_TOKEN_LIFETIME {
            return Err(format!("tokenLifetime: must be at most {MAX_TOKEN_LIFETIME} seconds (ten years)"));
        }
        if self.devices_per_client == 0 {
            return Err("devicesPerClient: must be at least 1".into());
        }
        self.faults.check()
    }
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 1,
            token_lifetime: Duration::from_secs(3600),
            speed: 1.0,
            data: None,
            devices_per_client: 1375,
            faults: faults::Faults::default(),
            variant: Variant::Reference,
            copy: None,
            models: None,
        }
    }
}

/// Shared state of one simulator: its store and the key it signs tokens with.
pub(crate) struct SimState {
    pub store: Store,
    pub opts: SimOptions,
    pub signing_key: Vec<u8>,
    pub clock: clock::SimClock,
    pub faults: faults::FaultState,
    /// The access tokens verified so far, with what each says of its key.
    pub tokens: auth::VerifiedTokens,
    /// Access tokens issued so far (to check that clients share and reuse tokens).
    pub tokens_issued: std::sync::atomic::AtomicU64,
    /// The simulated time this simulator started at: no device step is stamped before it.
    pub started_at: time::OffsetDateTime,
}

impl SimState {
    /// [`Simulator::reset`], which `POST /_sim/reset` also runs.
    pub(crate) fn reset(&self) -> Result<(), store::StoreError> {
        seed_store(&self.store, &self.opts, self.clock.now())
    }
}

/// Seeds the demo data set, or the fleet copy the options carry.
fn seed_store(store: &Store, opts: &SimOptions, now: time::OffsetDateTime) -> Result<(), store::StoreError> {
    match &opts.copy {
        Some(copy) => rehearsal::seed_copy(store, opts.seed, copy, now),
        None => seed::seed(store, opts.seed, opts.devices_per_client, now),
    }
}

/// A simulator instance, not yet listening.
#[derive(Clone)]
pub struct Simulator {
    state: Arc<SimState>,
}

impl Simulator {
    /// Creates a simulator. A new store is seeded from `opts.seed`; an existing data file keeps
    /// its state (and the seed it was created with).
    pub fn new(mut opts: SimOptions) -> Result<Simulator, store::StoreError> {
        opts.check().map_err(store::StoreError::Options)?;
        let store = match &opts.data {
            Some(path) => Store::open(path)?,
            None => Store::open_temporary()?,
        };
        // A data file from an earlier run may hold times ahead of the wall clock (the simulated
        // clock runs fast): go on from the latest of them, so that nothing moves back in time.
        let wall = time::OffsetDateTime::now_utc();
        let start = match store.latest_change()? {
            Some(latest) if latest >= wall => latest + time::Duration::seconds(1),
            _ => wall,
        };
        match store.meta("seed")? {
            Some(existing) => {
                let existing: u64 = existing.parse().unwrap_or(opts.seed);
                if existing != opts.seed {
                    tracing::warn!(
                        existing,
                        requested = opts.seed,
                        "the data file was seeded with another seed; keeping its data"
                    );
                }
                opts.seed = existing;
            }
            // Not seeded (a new file, or one whose first seeding a crash cut short: the seed
            // and its meta are one transaction, so such a file holds nothing of it).
            None => seed_store(&store, &opts, start)?,
        }
        store.share_reads()?;
        // The clock starts once the data set is there, at the time it was seeded for: seeding a
        // million states takes minutes, which must not use up the minutes the seeded updates in
        // progress are spread over.
        let clock = clock::SimClock::starting_at(opts.speed, start);
        // Tokens are only meaningful to the simulator that issued them: the key is drawn from
        // the OS for each run, never derived from the seed (which is public, default 1), so a
        // token cannot be forged by anyone who knows the seed (a restart asks clients for a new
        // token: a 401, which the client renews).
        let signing_key = seed::signing_key();
        let faults = faults::FaultState::new(opts.faults.clone());
        let started_at = clock.now();
        let state = SimState {
            store,
            opts,
            signing_key,
            clock,
            faults,
            tokens: Default::default(),
            tokens_issued: Default::default(),
            started_at,
        };
        Ok(Simulator { state: Arc::new(state) })
    }

    /// Replaces the state with the demo data set again (for test isolation), in one
    /// transaction: a crash or an error leaves the old state or the new one ([`seed::seed`]).
    pub fn reset(&self) -> Result<(), store::StoreError> {
        self.state.reset()
    }

    /// Replaces the faults applied to every request.
    pub fn set_faults(&self, faults: faults::Faults) {
        self.state.faults.set(faults)
    }

    /// Changes how fast simulated time runs; a speed [`clock::check_speed`] refuses changes
    /// nothing.
    pub fn set_speed(&self, speed: f64) -> Result<(), String> {
        self.state.clock.set_speed(speed)
    }

    /// Moves the simulated clock `by` ahead at once, then runs the simulated devices until
    /// every step due by then is taken (a rehearsal's clock, stopped otherwise by a tiny speed);
    /// returns how many steps were taken.
    pub fn advance_clock(&self, by: time::Duration) -> Result<usize, store::StoreError> {
        self.state.clock.advance(by);
        let mut total = 0;
        loop {
            let n = self.step()?;
            total += n;
            if n == 0 {
                return Ok(total);
            }
        }
    }

    /// How much faster than real time the simulated clock runs now.
    pub fn speed(&self) -> f64 {
        self.state.clock.speed()
    }

    /// How many access tokens this simulator has issued.
    pub fn tokens_issued(&self) -> u64 {
        self.state.tokens_issued.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The simulated time now.
    pub fn now(&self) -> time::OffsetDateTime {
        self.state.clock.now()
    }

    /// Runs the simulated devices once: every step due by now (tests call this directly).
    pub fn step(&self) -> Result<usize, store::StoreError> {
        Ok(engine::step(&self.state)? + engine::step_downlinks(&self.state)?)
    }

    /// The API key of the demo reseller, which the built-in simulator profile uses.
    pub fn demo_key(&self) -> DemoKey {
        seed::demo_reseller_key(self.state.opts.seed)
    }

    /// Direct read access to the state, for tests that check what the simulator holds.
    pub fn store(&self) -> &Store {
        &self.state.store
    }

    /// The variant this simulator plays.
    pub fn variant(&self) -> Variant {
        self.state.opts.variant
    }

    /// The `tenantId` the alt variant adds to every answer (for tests that compare answers
    /// with the state).
    pub fn tenant_id(&self) -> String {
        alt::tenant_id(&self.state)
    }

    /// The axum router serving the whole API (the alt variant rewrites around it, see `alt`).
    pub fn router(&self) -> Router {
        let inner = routes::router(self.state.clone());
        match self.state.opts.variant {
            Variant::Reference => inner,
            Variant::Alt => alt::wrap(self.state.clone(), inner),
        }
    }

    /// Binds `addr` (use port 0 for a free port) and serves in a background task of the
    /// current tokio runtime until the returned handle is shut down or dropped.
    pub async fn spawn(&self, addr: SocketAddr) -> std::io::Result<RunningSim> {
        let listener = TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let (tx, rx) = oneshot::channel::<()>();
        let app = self.router();
        let engine = tokio::spawn(engine::run(self.state.clone()));
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = rx.await;
            });
            if let Err(e) = served.await {
                tracing::error!(error = %e, "simulator server stopped");
            }
            engine.abort();
        });
        tracing::info!(%local, "simulator listening");
        Ok(RunningSim { addr: local, shutdown: Some(tx), task: Some(task) })
    }

    /// Serves on an already bound listener until the future is dropped.
    pub async fn serve(&self, listener: TcpListener) -> std::io::Result<()> {
        let engine = tokio::spawn(engine::run(self.state.clone()));
        let out = axum::serve(listener, self.router()).await;
        engine.abort();
        out
    }
}

/// A simulator serving in the background.
pub struct RunningSim {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl RunningSim {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Base address of the API, e.g. `http://127.0.0.1:43125`. The token issuer is the same host.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting connections and waits for the server task to end.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for RunningSim {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}
