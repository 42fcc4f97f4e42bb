//! Devices: the beta device listing (section 4.5) for pickers, and device ids checked as typed.

use dcs_console::device_page::{self, DeviceDetail};
use std::sync::Arc;

use dcs_console::devices::{self, DeviceLabel};
use dcs_console::downlinks::{self, DeviceIdCheck};
use dcs_console::listing::{self, DevicePage};
use dcs_console::palette::{self, PaletteAnswer};
use serde::Deserialize;
use tauri::State;

use crate::error::CommandError;
use crate::state::{Answer as _, AppState};

/// A page of the device listing: `search` matches name, description, barcode, UUID, IMEI and
/// DevEUI partially, ignoring case (the service's own search, used only when its listing is too
/// large to hold, is case-sensitive); `page` counts from 0.
#[derive(Debug, Clone, Default, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DevicePageRequest {
    pub search: Option<String>,
    pub page: Option<u32>,
    pub page_size: Option<u32>,
}

/// Longest search text.
const MAX_SEARCH: usize = 200;

/// One page of the devices of the active profile and customer, by name.
#[tauri::command]
#[specta::specta]
pub async fn list_devices(state: State<'_, AppState>, request: DevicePageRequest) -> Result<DevicePage, CommandError> {
    let session = state.session().await?;
    let search = request.search.as_deref().map(str::trim).unwrap_or_default().to_owned();
    if search.chars().count() > MAX_SEARCH || search.chars().any(char::is_control) {
        return Err(CommandError::invalid(
            "search",
            format!("must be at most {MAX_SEARCH} characters without control characters"),
        ));
    }
    let size = request.page_size.unwrap_or(20).clamp(1, 200);
    let page_no = request.page.unwrap_or(0).min(1_000_000);
    session
        .run(async {
            listing::device_page(&state.devices, &session.scope(), &session.client, &search, page_no, size).await
        })
        .await
}

/// What is known of each device id (any form): the name, IMEI or DevEUI and UUID of the device
/// the service's listing holds for it, else only what the id says (`known` false). At most
/// 500 ids; the listing is read once per profile and customer and kept a few minutes. When the
/// listing cannot be read, every id is answered as unknown (the lists then show the ids).
#[tauri::command]
#[specta::specta]
pub async fn device_labels(state: State<'_, AppState>, ids: Vec<String>) -> Result<Vec<DeviceLabel>, CommandError> {
    devices::check_ids(&ids)?;
    let session = state.session().await?;
    let dir = directory_or_none(&state, &session).await;
    Ok(ids.iter().map(|id| dir.label(id)).collect())
}

/// The device listing of the session's scope, or an empty one when it cannot be read (logged):
/// devices are then shown by their ids.
async fn directory_or_none(state: &AppState, session: &dcs_console::session::Session) -> Arc<devices::Directory> {
    state.devices.get(&session.scope(), &session.client).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the device listing could not be read; devices are shown by id");
        Arc::new(devices::Directory::default())
    })
}

/// Checks a device id as typed: its normalised form and its form's name, or the rule it breaks.
/// `kind` names the use: `sms` wants the device's UUID; any other kind (or none) takes the
/// seven forms of section 1.
#[tauri::command]
#[specta::specta]
pub fn check_device_id(input: String, kind: Option<String>) -> DeviceIdCheck {
    downlinks::check_device_id(&input, kind.as_deref())
}

/// Everything the console knows of one device, asked for by any of its ids: its ids, states per
/// module with their history and rollouts (the fleet database), and its downlinks and bindings
/// (the service, each kind on its own: one failing is named in `problems`).
#[tauri::command]
#[specta::specta]
pub async fn device_page(state: State<'_, AppState>, id: String) -> Result<DeviceDetail, CommandError> {
    let (session, fleet, scope) = crate::commands::fleet::open_local(&state).await?;
    state.ready(&session).await?;
    session
        .run(async {
            let dir = directory_or_none(&state, &session).await;
            let mut page = device_page::page(&session.client, &dir, fleet.db(), scope, &id).await?;
            if page.states.iter().any(|s| s.module.is_none()) {
                // Module names from the catalogue the palette keeps; without it, ids.
                if let Ok(catalogue) = state.catalogues.get(&session.scope(), &session.client).await {
                    device_page::name_modules(&mut page, &catalogue);
                }
            }
            Ok(page)
        })
        .await
}

/// The command palette's search (console::palette): what is at hand at once, then downlinks and
/// bindings from the service. A search started later stops this one (its answer then says
/// `superseded`); an empty text finds nothing (the palette shows its actions and recent items).
#[tauri::command]
#[specta::specta]
pub async fn palette_search(state: State<'_, AppState>, query: String) -> Result<PaletteAnswer, CommandError> {
    let query = palette::check_query(&query)?.to_owned();
    if query.is_empty() {
        return Ok(PaletteAnswer::default());
    }
    let mut latest = state.palette.subscribe();
    let mine = {
        let mut n = 0;
        state.palette.send_modify(|g| {
            *g += 1;
            n = *g;
        });
        n
    };
    let superseded = async move {
        let _ = latest.wait_for(|g| *g != mine).await;
    };
    let (session, fleet, scope) = crate::commands::fleet::open_local(&state).await?;
    state.ready(&session).await?;
    let work = async {
        let key = session.scope();
        let mut problems = Vec::new();
        let (dir, catalogue, (service, service_problems)) = futures::join!(
            state.devices.get(&key, &session.client),
            state.catalogues.get(&key, &session.client),
            palette::service_items(&session.client, &query),
        );
        let dir = dir.unwrap_or_else(|e| {
            problems.push(format!("devices: {e}"));
            Arc::new(devices::Directory::default())
        });
        let catalogue = catalogue.map_err(|e| problems.push(format!("modules and packages: {e}"))).ok();
        let config = state.config.load().unwrap_or_default();
        let mut profiles = vec![(dcs_console::SIMULATOR_PROFILE.to_owned(), "the built-in simulator".to_owned())];
        profiles.extend(config.profiles.iter().map(|p| (p.name.clone(), p.base_url.clone().unwrap_or_default())));
        let local = palette::Local {
            dir: &dir,
            catalogue: catalogue.as_deref(),
            rollouts: palette::rollout_candidates(fleet.db(), scope)?,
            profiles,
            customers: session.profile.customers.iter().map(|c| (c.id, c.label.clone())).collect(),
        };
        let mut items = palette::search_local(&query, &local);
        // The service's exact finds (an id typed whole) first, its text matches after.
        let (exact, rest): (Vec<_>, Vec<_>) = service.into_iter().partition(|i| i.score == u32::MAX);
        items.splice(0..0, exact);
        items.extend(rest);
        problems.extend(service_problems);
        Ok::<_, dcs_console::Error>(PaletteAnswer { items, problems, superseded: false })
    };
    tokio::select! {
        answer = work => answer.map_err(|e| session.err(e)),
        () = superseded => Ok(PaletteAnswer { superseded: true, ..Default::default() }),
    }
}
