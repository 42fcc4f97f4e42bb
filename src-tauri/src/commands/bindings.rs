//! Connector binding commands (LoRa, HTTP, MQTT): list, check as the user types, create, edit
//! (a full PUT that keeps the stored secret unless a new one is typed), delete, and the LoRa
//! sync. A binding's secret is device data the operator needs, but lists never carry it: it is
//! answered only by `reveal_binding_secret`, or written straight to the clipboard by
//! `copy_binding_secret` without passing through the web view.

use dcs_api::model::BindingKind;
use dcs_console::bindings::{self, BindingDraft, BindingPage, BindingPageRequest, BindingView};
use dcs_console::bulk::ItemOutcome;
use dcs_console::FieldError;
use serde::Deserialize;
use tauri::State;
use tauri_plugin_clipboard_manager::ClipboardExt;
use uuid::Uuid;

use dcs_console::Error;

use crate::error::CommandError;
use crate::state::{Answer as _, AppState};

/// One page of a kind's bindings for the filters, without their secrets.
#[tauri::command]
#[specta::specta]
pub async fn list_bindings(
    state: State<'_, AppState>,
    kind: BindingKind,
    request: BindingPageRequest,
) -> Result<BindingPage, CommandError> {
    let session = state.session().await?;
    session.run(async { Ok(bindings::page(&session.client, kind, &request).await?) }).await
}

/// One binding as the service holds it now, without its secret.
#[tauri::command]
#[specta::specta]
pub async fn get_binding(state: State<'_, AppState>, kind: BindingKind, id: Uuid) -> Result<BindingView, CommandError> {
    let session = state.session().await?;
    session.run(async { Ok(bindings::get(&session.client, kind, id).await?) }).await
}

/// Every rule the draft breaks (the client's validators), for the editor as the user types.
/// `editing`: the draft replaces a binding, so an empty secret keeps the stored one.
#[tauri::command]
#[specta::specta]
pub fn check_binding(draft: BindingDraft, editing: bool) -> Vec<FieldError> {
    bindings::check(&draft, editing)
}

/// A new MQTT password or HTTP shared secret that meets the rule, for the editor to fill in.
#[tauri::command]
#[specta::specta]
#[allow(clippy::result_large_err)] // CommandError is the one error shape every command answers.
pub fn generate_binding_secret(kind: BindingKind) -> Result<String, CommandError> {
    Ok(bindings::generate_secret(kind)?)
}

/// The stored secret of one binding: asked for only when the operator clicks Reveal.
#[tauri::command]
#[specta::specta]
pub async fn reveal_binding_secret(
    state: State<'_, AppState>,
    kind: BindingKind,
    id: Uuid,
) -> Result<String, CommandError> {
    let session = state.session().await?;
    session
        .run(async {
            let secret = bindings::reveal(&session.client, kind, id).await?;
            tracing::info!(%kind, binding = %id, acting = %session.acting.describe(), "binding secret revealed");
            Ok(secret)
        })
        .await
}

/// Puts the stored secret of one binding on the clipboard; the web view never sees it.
#[tauri::command]
#[specta::specta]
pub async fn copy_binding_secret(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    kind: BindingKind,
    id: Uuid,
) -> Result<(), CommandError> {
    let session = state.session().await?;
    session
        .run(async {
            let secret = bindings::reveal(&session.client, kind, id).await?;
            app.clipboard().write_text(secret).map_err(|e| Error::Clipboard(e.to_string()))?;
            tracing::info!(%kind, binding = %id, acting = %session.acting.describe(), "binding secret copied");
            Ok(())
        })
        .await
}

/// A binding to create, and the customer the user confirmed it for.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CreateBinding {
    pub draft: BindingDraft,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn create_binding(state: State<'_, AppState>, request: CreateBinding) -> Result<BindingView, CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            let made = bindings::create(&session.client, &request.draft).await?;
            tracing::info!(kind = %made.kind, binding = %made.id, acting = %session.acting.describe(), "binding created");
            Ok(made)
        })
        .await
}

/// A full replacement of binding `id`; a draft without a secret keeps the stored one.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct UpdateBinding {
    pub id: Uuid,
    pub draft: BindingDraft,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn update_binding(state: State<'_, AppState>, request: UpdateBinding) -> Result<BindingView, CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            let updated = bindings::update(&session.client, request.id, &request.draft).await?;
            tracing::info!(kind = %updated.kind, binding = %updated.id, acting = %session.acting.describe(), "binding replaced");
            Ok(updated)
        })
        .await
}

#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DeleteBinding {
    pub kind: BindingKind,
    pub id: Uuid,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn delete_binding(state: State<'_, AppState>, request: DeleteBinding) -> Result<(), CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            bindings::delete(&session.client, request.kind, request.id).await?;
            tracing::info!(kind = %request.kind, binding = %request.id, acting = %session.acting.describe(), "binding deleted");
            Ok(())
        })
        .await
}

/// Bindings of one kind to delete behind one confirmation, and the customer it was confirmed for.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DeleteBindings {
    pub kind: BindingKind,
    pub ids: Vec<Uuid>,
    pub acting_for: Option<Uuid>,
}

/// Deletes each binding (1 to 200), one after the other; answers each one's outcome (a refusal
/// does not stop the others).
#[tauri::command]
#[specta::specta]
pub async fn delete_bindings(
    state: State<'_, AppState>,
    request: DeleteBindings,
) -> Result<Vec<ItemOutcome>, CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    let outcomes = bindings::delete_many(&session.client, request.kind, &request.ids).await?;
    let done = outcomes.iter().filter(|o| o.done).count();
    tracing::info!(kind = %request.kind, asked = outcomes.len(), done, acting = %session.acting.describe(), "bindings deleted");
    Ok(outcomes)
}

/// Writes every binding of `kind` the filters and sort give (every page) as CSV to `path`, a
/// file the user chose in the save dialog; answers the number of rows. No secret is written.
#[tauri::command]
#[specta::specta]
pub async fn export_bindings_csv(
    state: State<'_, AppState>,
    picked: State<'_, crate::picked::Picked>,
    kind: BindingKind,
    request: BindingPageRequest,
    path: String,
) -> Result<u32, CommandError> {
    let path = picked.check(crate::picked::Use::Write, "path", &path)?;
    let session = state.session().await?;
    let names = state.devices.get(&session.scope(), &session.client).await.unwrap_or_default();
    session
        .run(async {
            let n = bindings::export_csv(&session.client, kind, &request, &names, &path).await?;
            tracing::info!(rows = n, %kind, acting = %session.acting.describe(), "bindings exported as CSV");
            Ok(n)
        })
        .await
}

/// Asks the service to fetch a LoRa binding's latest state from the network server (it may
/// change the binding: a joined device becomes ACTIVE).
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SyncLoraBinding {
    pub id: Uuid,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn sync_lora_binding(
    state: State<'_, AppState>,
    request: SyncLoraBinding,
) -> Result<BindingView, CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            let synced = bindings::sync_lora(&session.client, request.id).await?;
            tracing::info!(binding = %synced.id, status = ?synced.status, acting = %session.acting.describe(), "LoRa binding synced");
            Ok(synced)
        })
        .await
}
