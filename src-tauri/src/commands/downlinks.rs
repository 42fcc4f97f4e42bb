//! Downlink commands: lists per kind, one downlink with what the console saw of it, previews of
//! the exact request body, sending and cancelling. The work is in `dcs_console::downlinks`; the
//! statuses seen are kept in Rust memory (`AppState::downlinks`), per profile and customer.

use dcs_console::downlinks::{
    self, ActuatorDraft, ConnectionDraft, DownlinkDetail, DownlinkKind, DownlinkPage, DownlinkPageRequest, DownlinkPreview,
    DownlinkView, KindInfo,
};
use serde::Deserialize;
use tauri::State;
use uuid::Uuid;

use crate::error::CommandError;
use crate::state::AppState;

/// The downlink kinds with their sort fields, statuses and filters.
#[tauri::command]
#[specta::specta]
pub fn downlink_kinds() -> Vec<KindInfo> {
    downlinks::kinds()
}

/// Every rule the actuator draft breaks, or the exact body `send_downlink` will send.
#[tauri::command]
#[specta::specta]
pub fn preview_downlink(draft: ActuatorDraft) -> DownlinkPreview {
    draft.preview()
}

/// Every rule the connection-specific draft breaks, or the exact body it will send.
#[tauri::command]
#[specta::specta]
pub fn preview_connection_downlink(draft: ConnectionDraft) -> DownlinkPreview {
    draft.preview()
}

/// One page of a kind's downlinks; every downlink shown is recorded as seen.
#[tauri::command]
#[specta::specta]
pub async fn list_downlinks(state: State<'_, AppState>, request: DownlinkPageRequest) -> Result<DownlinkPage, CommandError> {
    let session = state.session().await;
    let page = downlinks::list(&session.client, &request).await.map_err(|e| session.err(e))?;
    let scope = session.scope();
    let now = time_now();
    for d in &page.items {
        state.downlinks.observe(&scope, d, now);
    }
    Ok(page)
}

/// One downlink as the service holds it now, the statuses the console saw it in, and the
/// service's clock for counting down to its feedback deadline.
#[tauri::command]
#[specta::specta]
pub async fn get_downlink(state: State<'_, AppState>, kind: DownlinkKind, id: String) -> Result<DownlinkDetail, CommandError> {
    let session = state.session().await;
    let downlink = downlinks::get(&session.client, kind, &id).await.map_err(|e| session.err(e))?;
    let observed = state.downlinks.observe(&session.scope(), &downlink, time_now());
    let clock = state.service_clock(&session).await;
    Ok(DownlinkDetail { downlink, observed, clock })
}

/// An actuator downlink to send, and the customer the user confirmed it for.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SendDownlink {
    pub draft: ActuatorDraft,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn send_downlink(state: State<'_, AppState>, request: SendDownlink) -> Result<DownlinkView, CommandError> {
    let session = state.session().await;
    session.check_acting_for(request.acting_for)?;
    let sent = downlinks::send_actuator(&session.client, &request.draft).await.map_err(|e| session.err(e))?;
    state.downlinks.observe(&session.scope(), &sent, time_now());
    tracing::info!(downlink = %sent.id, dry_run = request.draft.dry_run, acting = %session.acting.describe(), "actuator downlink sent");
    Ok(sent)
}

/// A connection-specific downlink to send, and the customer the user confirmed it for.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SendConnectionDownlink {
    pub draft: ConnectionDraft,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn send_connection_downlink(
    state: State<'_, AppState>,
    request: SendConnectionDownlink,
) -> Result<DownlinkView, CommandError> {
    let session = state.session().await;
    session.check_acting_for(request.acting_for)?;
    let sent = downlinks::send_connection(&session.client, &request.draft).await.map_err(|e| session.err(e))?;
    state.downlinks.observe(&session.scope(), &sent, time_now());
    tracing::info!(
        downlink = %sent.id, kind = ?request.draft.kind, dry_run = request.draft.dry_run,
        acting = %session.acting.describe(), "connection downlink sent"
    );
    Ok(sent)
}

/// A cancellation to ask for; `forced` also stops a downlink already being sent.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CancelDownlink {
    pub kind: DownlinkKind,
    pub id: String,
    pub forced: bool,
    pub acting_for: Option<Uuid>,
}

/// Asks the service to cancel (202: it is carried out later; a refusal comes back as the
/// service's problem, e.g. 409 for a final downlink).
#[tauri::command]
#[specta::specta]
pub async fn cancel_downlink(state: State<'_, AppState>, request: CancelDownlink) -> Result<(), CommandError> {
    let session = state.session().await;
    session.check_acting_for(request.acting_for)?;
    downlinks::cancel(&session.client, request.kind, &request.id, request.forced).await.map_err(|e| session.err(e))?;
    tracing::info!(downlink = %request.id, kind = ?request.kind, forced = request.forced, acting = %session.acting.describe(), "cancellation asked");
    Ok(())
}

fn time_now() -> dcs_api::model::Timestamp {
    dcs_api::model::Timestamp::now_utc()
}
