//! The commands the UI calls. Each is a thin layer over the shared crates; none returns a
//! secret or a token of the console's own (an end-to-end test records every answer of a run and
//! checks). The one kind of secret answered is a connector binding's (device data), and only by
//! `reveal_binding_secret` and `generate_binding_secret`, on the operator's click.

pub mod audit;
pub mod bindings;
pub mod devices;
pub mod downlinks;
pub mod firmware;
pub mod fleet;
pub mod help;
pub mod profiles;
pub mod transfers;

use dcs_console::Customer;
use serde::Serialize;
use tauri::State;
use uuid::Uuid;

use crate::error::CommandError;
use crate::state::{AppState, Session};

/// What the header and the status bar show: the active profile, the service, and the
/// customer requests act for.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: String,
    pub profile: String,
    /// True when the active service is the embedded simulator.
    pub simulator: bool,
    pub base_url: String,
    /// Customers of the active profile the switcher offers.
    pub customers: Vec<Customer>,
    /// The customer requests act for; `None`: the profile's own environment.
    pub acting: Option<Customer>,
    /// The profile acts for customers with the deprecated `x-client-id` mode.
    pub deprecated_sub_customer_mode: bool,
    /// Why the app did not open as configured, if it did not.
    pub notice: Option<String>,
}

fn info(state: &AppState, s: &Session) -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        profile: s.profile.name.clone(),
        simulator: s.simulator(),
        base_url: s.base_url.clone(),
        customers: s.profile.customers.clone(),
        acting: match &s.acting {
            dcs_console::Acting::Yourself => None,
            dcs_console::Acting::Customer(c) => Some(c.clone()),
        },
        deprecated_sub_customer_mode: s.profile.deprecated_sub_customer_mode,
        notice: state.notice.lock().unwrap().clone(),
    }
}

#[tauri::command]
#[specta::specta]
pub async fn app_info(state: State<'_, AppState>) -> Result<AppInfo, CommandError> {
    // Known at once, also while the built-in simulator is still seeding its demo data.
    let s = state.current().await;
    Ok(info(&state, &s))
}

/// Acts for `customer` of the active profile, or with `null` as the profile's own environment.
#[tauri::command]
#[specta::specta]
pub async fn act_as(state: State<'_, AppState>, customer: Option<Uuid>) -> Result<AppInfo, CommandError> {
    let s = state.act_as(customer).await?;
    Ok(info(&state, &s))
}

/// Opens another profile (as itself) and makes it the default for the app and `dcs`.
#[tauri::command]
#[specta::specta]
pub async fn activate_profile(state: State<'_, AppState>, name: String) -> Result<AppInfo, CommandError> {
    let s = state.activate(&name).await?;
    Ok(info(&state, &s))
}
