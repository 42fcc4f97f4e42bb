//! What Rust pushes to the web view as typed events (exported with the commands through
//! tauri-specta, `events` in ui/src/bindings.ts): the views subscribe instead of asking again
//! and again whether something changed. Transfers report their progress through a
//! `tauri::ipc::Channel` of their own command; state of the whole app goes through these events.
//!
//! - [`FleetChanged`]: the fleet service signals every change of a scan, a rollout or its
//!   settings ([`FleetService::changes`]); the active scope's status and rollout counts follow.
//! - [`crate::downlink_watch::DownlinkChanged`]: a watched downlink list or detail whose
//!   statuses changed (Rust asks the service; the UI starts and stops the watch).

use std::time::Duration;

use dcs_console::fleet::rollout::{self, RolloutCounts};
use dcs_console::fleet::service::{FleetService, FleetStatus};
use serde::Serialize;
use tauri::{AppHandle, Manager};
use tauri_specta::Event;

use crate::state::AppState;

/// The shortest time between two fleet events: changes closer together (the pages of a scan)
/// are sent as one, with the state after the last of them.
const FLEET_EVENT_GAP: Duration = Duration::from_millis(100);

/// The active scope's fleet after a change.
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub struct FleetChanged {
    /// The scan state of the active scope; absent while it was never opened (no dashboard or
    /// Home shown in it yet) or could not be read.
    pub status: Option<FleetStatus>,
    /// Running and paused rollouts of the active scope (none for a scope never opened).
    pub counts: RolloutCounts,
}

/// The active scope's status and counts now (a scope never opened is not created by asking).
async fn fleet_changed(state: &AppState, fleet: &FleetService) -> FleetChanged {
    let session = state.current().await;
    let scope = match fleet.db().find_scope(&state.scope_key(&session)) {
        Ok(Some(scope)) => scope,
        Ok(None) => return FleetChanged { status: None, counts: RolloutCounts::default() },
        Err(e) => {
            tracing::warn!(error = %e, "the fleet scope could not be read for an event");
            return FleetChanged { status: None, counts: RolloutCounts::default() };
        }
    };
    FleetChanged {
        status: fleet.status(scope).map_err(|e| tracing::warn!(error = %e, "fleet status for an event")).ok(),
        counts: rollout::counts(fleet.db(), scope).unwrap_or_default(),
    }
}

/// Forwards every change the fleet service signals to the web view as one [`FleetChanged`].
pub fn forward_fleet(app: AppHandle) {
    tauri::async_runtime::spawn(async move {
        let state = app.state::<AppState>();
        let Ok(fleet) = state.fleet().cloned() else { return };
        let mut changes = fleet.changes();
        while changes.changed().await.is_ok() {
            changes.borrow_and_update();
            if let Err(e) = fleet_changed(&state, &fleet).await.emit(&app) {
                tracing::warn!(error = %e, "the fleet event could not be sent");
            }
            crate::tray::update(&app);
            tokio::time::sleep(FLEET_EVENT_GAP).await;
        }
    });
}
