//! The fleet's timer: every second it asks the fleet service which scopes are due (the active
//! one once scanned, and every scope with a running rollout, so a rollout goes on after a
//! restart or a switch of customer) and refreshes them, which also moves their rollouts on.
//! This timer faces the service only: what it changes, the fleet service signals, and
//! `events::forward_fleet` pushes it to the web view.

use std::time::Duration;

use tauri::{AppHandle, Manager};

use crate::state::AppState;

pub fn spawn(app: AppHandle) {
    tauri::async_runtime::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let state = app.state::<AppState>();
            let Ok(fleet) = state.fleet().cloned() else { return };
            if let Err(e) = fleet.keep_leases() {
                tracing::warn!(error = %e, "could not renew the leases of the rollouts this window drives");
            }
            let active = state.current().await;
            let mut scopes = Vec::new();
            if let Ok(s) = fleet.db().scope(&state.scope_key(&active)) {
                scopes.push(s);
            }
            match dcs_console::fleet::rollout::running_scopes(fleet.db()) {
                Ok(running) => {
                    for s in running {
                        if !scopes.contains(&s) {
                            scopes.push(s);
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "could not read the running rollouts"),
            }
            for scope in scopes {
                let kind = match fleet.due(scope) {
                    Ok(Some(kind)) => kind,
                    Ok(None) => continue,
                    Err(e) => {
                        tracing::warn!(error = %e, "fleet timer");
                        continue;
                    }
                };
                let session = match state.session_for(&fleet, scope).await {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(error = %e.message(), "a fleet scope could not be opened");
                        fleet.note_failure(scope, format!("could not connect: {}", e.message()));
                        continue;
                    }
                };
                if let Err(e) =
                    fleet.refresh(&session.client, session.profile.set_target.as_ref(), scope, kind, false).await
                {
                    tracing::warn!(error = %e, "fleet refresh failed");
                }
            }
        }
    });
}
