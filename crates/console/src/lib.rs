//! What the desktop app and the `dcs` command line share above the API client: profiles and
//! their config file, the OS keychain, connecting a profile as a customer, the embedded
//! simulator, long file transfers as cancellable jobs with paced progress, and downlinks as the
//! console shows, composes and watches them.

pub mod app;
pub mod audit;
pub mod background;
pub mod bindings;
pub mod bulk;
pub mod config;
pub mod csv_file;
pub mod device_page;
pub mod devices;
pub mod diagnostics;
pub mod downlinks;
pub mod error;
mod field_error;
pub mod filters;
pub mod fleet;
pub mod instance;
pub mod kept;
pub mod keychain;
pub mod links;
pub mod listing;
pub mod notices;
pub mod ops;
pub mod palette;
pub mod profile;
pub mod resident;
pub mod runner;
pub mod session;
pub mod set_target;
pub mod simulator;
pub mod transfers;
pub mod updates;

pub use app::Console;
pub use config::{Config, ConfigError, ConfigStore};
pub use error::{AppCode, Code, Error};
pub use field_error::FieldError;
pub use keychain::{Keychain, KeychainError};
pub use profile::{Customer, CustomerDraft, Profile, ProfileDraft, SIMULATOR_PROFILE};
pub use session::{Acting, SessionError};

/// The console's data folder (the fleet database, the built-in simulator's state): the
/// platform's data folder + `dcs-console`.
pub fn app_data_dir() -> Option<std::path::PathBuf> {
    dirs::data_dir().map(|d| d.join("dcs-console"))
}

/// The data folder this process uses: `DCS_DATA_DIR` when set, else [`app_data_dir`].
pub fn data_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("DCS_DATA_DIR").map(std::path::PathBuf::from).or_else(app_data_dir)
}
