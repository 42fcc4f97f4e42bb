//! What the app holds between commands: the console's app layer ([`Console`]: the profiles
//! file, the active session, the embedded simulator, the fleet database and the background
//! sessions of running rollouts) and the registries of the window: running transfers, the
//! downlink statuses seen and the device listings of each scope. Commands reach the console's
//! methods through this state (it dereferences to it).

use dcs_console::transfers::Transfers;
use dcs_console::{Console, Error};

use crate::error::CommandError;

pub use dcs_console::session::Session;

/// What the app adds to the console's session: its errors answered as the UI sees them.
pub trait Answer {
    /// An error met acting in this session, explained in terms of the active customer where it
    /// concerns it.
    fn err(&self, e: impl Into<Error>) -> CommandError;

    /// Runs a command's work in this session: the one place a command's error is named for the
    /// customer acted for (the console's rule), so the work itself uses `?`.
    fn run<T>(
        &self,
        work: impl std::future::Future<Output = Result<T, Error>>,
    ) -> impl std::future::Future<Output = Result<T, CommandError>>;
}

impl Answer for Session {
    fn err(&self, e: impl Into<Error>) -> CommandError {
        self.named(e).into()
    }

    async fn run<T>(&self, work: impl std::future::Future<Output = Result<T, Error>>) -> Result<T, CommandError> {
        work.await.map_err(|e| self.err(e))
    }
}

pub struct AppState {
    /// The app layer shared with `dcs`: profiles, sessions, the embedded simulator, the fleet.
    pub console: Console,
    /// Running uploads, downloads and hashes, by job id (for cancelling). A transfer keeps the
    /// session it started with, so it runs on if the profile or customer changes meanwhile.
    pub transfers: Transfers,
    /// The statuses seen of each downlink shown (in memory only; gone when the app closes).
    pub downlinks: dcs_console::downlinks::Watch,
    /// The device listing of each scope acted in, for names and the pickers' search.
    pub devices: dcs_console::devices::Directories,
    /// The modules and packages of each scope acted in, for the palette's search.
    pub catalogues: dcs_console::palette::Catalogues,
    /// The palette's searches, counted: a search stops when a later one starts.
    pub palette: tokio::sync::watch::Sender<u64>,
}

impl AppState {
    /// Opens the default profile of the profiles file; the built-in simulator profile when
    /// there is none or it cannot be used (the reason is kept as a notice for the UI).
    pub async fn start() -> Result<AppState, CommandError> {
        Ok(AppState {
            console: Console::start().await?,
            transfers: Transfers::new(),
            downlinks: Default::default(),
            devices: Default::default(),
            catalogues: Default::default(),
            palette: tokio::sync::watch::Sender::new(0),
        })
    }
}

impl std::ops::Deref for AppState {
    type Target = Console;

    fn deref(&self) -> &Console {
        &self.console
    }
}
