//! What the desktop app and the `dcs` command line share above the API client.

pub mod keychain;
pub mod profile;
pub mod simulator;

pub use keychain::{Keychain, KeychainError};
pub use profile::{Profile, SIMULATOR_PROFILE};
