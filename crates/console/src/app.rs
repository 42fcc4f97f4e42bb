//! What the app holds between commands, apart from its window: the profiles file, the active
//! session (profile, customer and client), the embedded simulator once the built-in profile
//! has been used, the fleet database, and the sessions of other scopes kept to go on with
//! their rollouts. A session is replaced whole when the profile or customer changes; commands
//! that are running finish on the session they started with. The desktop app adds only its
//! registries of the window (transfers, downlink watches, device listings, events).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use dcs_api::{Client, Secret};
use tokio::sync::{Mutex, RwLock};

use crate::fleet::service::FleetService;
use crate::fleet::{EmbeddedBy, FleetDb, Scope, ScopeKey};
use crate::session::{self, Acting, Session};
use crate::simulator::{self, Starting};
use crate::{ConfigStore, Error, Profile, ProfileDraft, SIMULATOR_PROFILE};

pub struct Console {
    pub config: ConfigStore,
    session: RwLock<Arc<Session>>,
    /// The built-in simulator once its profile has been used: its address at once, its data
    /// when seeded in the background ([`Starting::ready`]).
    embedded: std::sync::Mutex<Option<Arc<Starting>>>,
    /// Why the app did not open with the default profile, or could not read the profiles file.
    pub notice: std::sync::Mutex<Option<String>>,
    /// Seed of the embedded simulator's demo data set (`DCS_SIM_SEED`, 1 by default).
    pub sim_seed: u64,
    /// The fleet database and its scans and rollouts; the reason when it could not be opened.
    pub fleet: Result<Arc<FleetService>, String>,
    /// The app's data folder (`DCS_DATA_DIR`, else the platform's data folder + `dcs-console`).
    pub data_dir: Option<PathBuf>,
    /// Sessions of scopes other than the active one, opened to go on with their rollouts.
    background: Mutex<HashMap<Scope, Arc<Session>>>,
}

impl Console {
    /// Opens the default profile of the profiles file; the built-in simulator profile when
    /// there is none or it cannot be used (the reason is kept as a notice for the UI).
    pub async fn start() -> Result<Console, Error> {
        let config = ConfigStore::locate()?;
        let mut notice = None;
        let default = match config.load() {
            Ok(c) => c.default_profile,
            Err(e) => {
                notice = Some(format!("{e}. The file was left as it is; the app uses the built-in simulator profile."));
                None
            }
        };
        let data_dir = crate::data_dir();
        let fleet = match &data_dir {
            Some(dir) => FleetDb::open(&dir.join("fleet.sqlite"))
                .map(|db| Arc::new(FleetService::new(Arc::new(db), crate::fleet::rollout::DriverKind::App)))
                .map_err(|e| e.to_string()),
            None => Err("this system has no data folder for the fleet database".to_owned()),
        };
        if let Err(e) = &fleet {
            tracing::warn!(error = %e, "the fleet database is not available");
        }
        let placeholder = Console {
            config,
            session: RwLock::new(Arc::new(Self::unconnected())),
            embedded: std::sync::Mutex::new(None),
            notice: Default::default(),
            sim_seed: std::env::var("DCS_SIM_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1),
            fleet,
            data_dir,
            background: Mutex::new(HashMap::new()),
        };
        let first = match default {
            Some(name) => match placeholder.connect(&name, Acting::Yourself).await {
                Ok(s) => s,
                Err(e) => {
                    notice = Some(format!(
                        "The default profile `{name}` could not be opened: {}. Using the simulator.",
                        e.message()
                    ));
                    placeholder.connect(SIMULATOR_PROFILE, Acting::Yourself).await?
                }
            },
            None => placeholder.connect(SIMULATOR_PROFILE, Acting::Yourself).await?,
        };
        *placeholder.session.write().await = Arc::new(first);
        *placeholder.notice.lock().unwrap() = notice;
        Ok(placeholder)
    }

    /// Stand-in before the first connection; never used for a request.
    fn unconnected() -> Session {
        let profile = Profile::simulator("", Vec::new());
        let config = dcs_api::ClientConfig::new("http://127.0.0.1:9/", "http://127.0.0.1:9/", "", Secret::new(""))
            .expect("a fixed, valid address");
        Session {
            profile,
            acting: Acting::Yourself,
            client: Client::new(config).expect("a valid config"),
            base_url: String::new(),
        }
    }

    /// The active session, ready to talk to its service: on the built-in simulator, once it
    /// serves (it starts in the background; this waits for it, or says why it could not start).
    pub async fn session(&self) -> Result<Arc<Session>, Error> {
        let s = self.current().await;
        self.ready(&s).await?;
        Ok(s)
    }

    /// The active session as it is now, without waiting for its service: for what reads only
    /// the app's own state (the profile, the customer, the fleet database), such as the first
    /// screen, which so does not wait for the built-in simulator's demo data.
    pub async fn current(&self) -> Arc<Session> {
        self.session.read().await.clone()
    }

    /// Waits until the service of `session` can be asked: the built-in simulator once it serves;
    /// any other service at once.
    pub async fn ready(&self, session: &Session) -> Result<(), Error> {
        if session.simulator() {
            if let Some(starting) = self.starting() {
                starting.ready().await?;
            }
        }
        Ok(())
    }

    fn starting(&self) -> Option<Arc<Starting>> {
        self.embedded.lock().unwrap().clone()
    }

    /// The embedded simulator's address, its profile and secret, starting it first if the
    /// built-in profile has not been used yet: the port at once, the demo data in the
    /// background ([`Console::ready`] waits for it). It keeps its state in the app's data
    /// folder, as a service would: uploads, targets and rollouts are still there after a restart.
    fn simulator(&self) -> Result<(String, Profile, Secret), Error> {
        let mut slot = self.embedded.lock().unwrap();
        if slot.is_none() {
            let data = self.data_dir.as_ref().map(|d| d.join(format!("simulator-seed-{}.sqlite", self.sim_seed)));
            *slot = Some(Arc::new(simulator::start_in_background(self.sim_seed, data)?));
        }
        let e = slot.as_ref().expect("started above");
        Ok((e.base_url.clone(), e.profile.clone(), e.secret.clone()))
    }

    /// The clock of the service `session` talks to: the embedded simulator's simulated clock
    /// (it runs faster than real time), else this computer's.
    pub async fn service_clock(&self, session: &Session) -> crate::downlinks::ServiceClock {
        if let (true, Some(starting)) = (session.simulator(), self.starting()) {
            if let Ok(started) = starting.ready().await {
                return started.clock();
            }
        }
        crate::downlinks::ServiceClock::wall()
    }

    /// The profile `name` with what it takes to reach it: its address and its secret.
    pub async fn resolve(&self, name: &str) -> Result<(Profile, String, Secret), Error> {
        if name == SIMULATOR_PROFILE {
            let (base, profile, secret) = self.simulator()?;
            return Ok((profile, base, secret));
        }
        session::stored(&self.config, name)
    }

    /// The fleet service, or why there is none.
    pub fn fleet(&self) -> Result<&Arc<FleetService>, Error> {
        self.fleet.as_ref().map_err(|e| Error::Setup(format!("the fleet database is not available: {e}")))
    }

    /// The fleet scope of `session`. The built-in simulator listens on a new port every start,
    /// so its scope is named by its seed instead of its address.
    pub fn scope_key(&self, session: &Session) -> ScopeKey {
        let (profile, customer) = (&session.profile.name, session.acting.customer_id());
        if session.simulator() {
            ScopeKey::embedded(profile, EmbeddedBy::App, self.sim_seed, customer)
        } else {
            ScopeKey::new(profile, &session.base_url, customer)
        }
    }

    /// A session of `scope` for background work, ready to talk to its service: the active one
    /// if it is that scope, else one opened (and kept) for it.
    pub async fn session_for(&self, fleet: &FleetService, scope: Scope) -> Result<Arc<Session>, Error> {
        let session = self.scope_session(fleet, scope).await?;
        self.ready(&session).await?;
        Ok(session)
    }

    async fn scope_session(&self, fleet: &FleetService, scope: Scope) -> Result<Arc<Session>, Error> {
        let active = self.current().await;
        if fleet.db().scope(&self.scope_key(&active)).ok() == Some(scope) {
            return Ok(active);
        }
        if let Some(s) = self.background.lock().await.get(&scope) {
            return Ok(s.clone());
        }
        let key = fleet
            .db()
            .scope_key(scope)
            .map_err(|e| Error::Setup(e.to_string()))?
            .ok_or_else(|| Error::Setup("unknown fleet scope".into()))?;
        let profile = if key.is_embedded(EmbeddedBy::App) { SIMULATOR_PROFILE.to_owned() } else { key.profile.clone() };
        let acting = match key.customer {
            None => Acting::Yourself,
            Some(id) => {
                let (p, _, _) = self.resolve(&profile).await?;
                Acting::Customer(p.resolve_customer(&id.to_string())?)
            }
        };
        let session = Arc::new(self.connect(&profile, acting).await?);
        if self.scope_key(&session) != key {
            return Err(Error::Setup(format!(
                "the profile of a rollout's scope now points elsewhere ({})",
                key.base_url
            )));
        }
        self.background.lock().await.insert(scope, session.clone());
        Ok(session)
    }

    /// Opens the profile `name` acting as `acting` (the built-in one on the embedded simulator).
    /// Opening the built-in profile does not wait for the simulator's demo data ([`Console::ready`]).
    pub async fn connect(&self, name: &str, acting: Acting) -> Result<Session, Error> {
        let (profile, base_url, secret) = self.resolve(name).await?;
        if profile.is_simulator() && profile.deprecated_sub_customer_mode && acting.customer_id().is_some() {
            // The deprecated mode's context switch is a request to the simulator.
            if let Some(starting) = self.starting() {
                starting.ready().await?;
            }
        }
        Session::open(profile, base_url, secret, acting).await
    }

    /// Makes `name` the active profile, acting as itself, and the default of the profiles file.
    pub async fn activate(&self, name: &str) -> Result<Arc<Session>, Error> {
        let next = Arc::new(self.connect(name, Acting::Yourself).await?);
        self.config.update(|c| c.set_default(name))?;
        *self.session.write().await = next.clone();
        *self.notice.lock().unwrap() = None;
        tracing::info!(profile = name, "profile activated");
        Ok(next)
    }

    /// Acts for `customer` (one of the profile's, or any UUID) or, with `None`, as yourself.
    pub async fn act_as(&self, customer: Option<uuid::Uuid>) -> Result<Arc<Session>, Error> {
        let current = self.current().await;
        let acting = match customer {
            None => Acting::Yourself,
            Some(id) => Acting::Customer(current.profile.resolve_customer(&id.to_string())?),
        };
        let next = Arc::new(self.connect(&current.profile.name, acting).await?);
        *self.session.write().await = next.clone();
        tracing::info!(profile = %next.profile.name, acting = %next.acting.describe(), "customer switched");
        Ok(next)
    }

    /// After the active profile was edited or removed: reopen it (as itself), or fall back to
    /// the simulator when it is gone.
    pub async fn reload_active(&self, removed: bool) -> Result<Arc<Session>, Error> {
        let name = if removed { SIMULATOR_PROFILE.to_owned() } else { self.current().await.profile.name.clone() };
        let next = Arc::new(self.connect(&name, Acting::Yourself).await?);
        *self.session.write().await = next.clone();
        Ok(next)
    }

    /// Every profile: the built-in one first, then those of the profiles file, each with whether
    /// it is active or the default and whether its secret is stored (never the secret). A file
    /// that cannot be read lists the built-in profile alone, with the reason.
    pub async fn profiles(&self) -> ProfileList {
        let active = self.current().await;
        let (config, config_error) = match self.config.load() {
            Ok(c) => (c, None),
            Err(e) => (Default::default(), Some(e.to_string())),
        };
        // Known without starting the simulator for a user who works on another profile.
        let builtin =
            if active.simulator() { active.profile.clone() } else { simulator::builtin_profile(self.sim_seed) };
        let mut profiles = vec![ProfileSummary {
            draft: ProfileDraft::of(&builtin),
            active: active.simulator(),
            is_default: config.default_profile.is_none(),
            profile: builtin,
            builtin: true,
            secret: SecretState::Builtin,
        }];
        for p in &config.profiles {
            profiles.push(ProfileSummary {
                active: !active.simulator() && active.profile.name == p.name,
                is_default: config.default_profile.as_deref() == Some(p.name.as_str()),
                secret: secret_state(&p.name),
                draft: ProfileDraft::of(p),
                profile: p.clone(),
                builtin: false,
            });
        }
        ProfileList { profiles, config_path: self.config.path().display().to_string(), config_error }
    }
}

/// Whether a profile's secret is in the keychain; never the secret.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum SecretState {
    /// In the OS keychain.
    Stored,
    /// Not in the keychain: the profile cannot connect until one is saved.
    Missing,
    /// The built-in profile's key is the simulator's own.
    Builtin,
    /// The keychain could not be asked.
    Unavailable { message: String },
}

#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ProfileSummary {
    pub profile: Profile,
    /// The profile as the editor's form holds it.
    pub draft: ProfileDraft,
    pub builtin: bool,
    pub active: bool,
    pub is_default: bool,
    pub secret: SecretState,
}

#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ProfileList {
    pub profiles: Vec<ProfileSummary>,
    /// Where the profiles file is.
    pub config_path: String,
    /// Why the profiles file could not be read, if it could not.
    pub config_error: Option<String>,
}

/// Whether the secret of the stored profile `name` is in the keychain (never the secret).
pub fn secret_state(name: &str) -> SecretState {
    match crate::Keychain.secret(name) {
        Ok(Some(_)) => SecretState::Stored,
        Ok(None) => SecretState::Missing,
        Err(e) => SecretState::Unavailable { message: e.to_string() },
    }
}
