//! Help: the app's log folder and the diagnostics bundle ([`dcs_console::diagnostics`]). The
//! folder opened is always the app's own (the page names none), and the bundle goes only where
//! the user chose in a save dialog.

use dcs_console::diagnostics::{self, About, BundleSummary};
use tauri::State;

use crate::error::CommandError;
use crate::picked::{Picked, Use};
use crate::state::AppState;

fn log_dir(state: &AppState) -> Result<std::path::PathBuf, CommandError> {
    let data = state.data_dir.as_deref().ok_or_else(|| {
        CommandError::from(dcs_console::Error::Setup("this system has no data folder for the app's logs".into()))
    })?;
    Ok(diagnostics::log_dir(data))
}

/// Where the app writes its logs (one file a day, the newest seven kept).
#[tauri::command]
#[specta::specta]
pub fn log_folder(state: State<'_, AppState>) -> Result<String, CommandError> {
    Ok(log_dir(&state)?.display().to_string())
}

/// Opens the log folder in the system's file manager.
#[tauri::command]
#[specta::specta]
pub fn open_log_folder(state: State<'_, AppState>) -> Result<(), CommandError> {
    let dir = log_dir(&state)?;
    let local = |e: std::io::Error| {
        CommandError::from(dcs_api::Error::LocalFile { path: dir.display().to_string(), source: e })
    };
    std::fs::create_dir_all(&dir).map_err(local)?;
    open::that_detached(&dir).map_err(local)
}

/// Writes the diagnostics bundle (logs, versions, profiles without secrets, the fleet
/// database's figures) to `path`, which must come from `pick_save_file` in this run.
#[tauri::command]
#[specta::specta]
pub async fn save_diagnostics(
    state: State<'_, AppState>,
    picked: State<'_, Picked>,
    path: String,
) -> Result<BundleSummary, CommandError> {
    let path = picked.check(Use::Write, "path", &path)?;
    let s = state.current().await;
    let about = About {
        program: "dcs-console".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        profile: Some(s.profile.name.clone()),
        base_url: Some(s.base_url.clone()),
        acting_for: Some(s.acting.describe()),
    };
    let config = state.config.clone();
    let fleet = state.fleet().ok().cloned();
    let data = state.data_dir.clone();
    let written = tauri::async_runtime::spawn_blocking(move || {
        diagnostics::write_bundle(&path, &about, &config, fleet.as_ref().map(|f| f.db()), data.as_deref())
    })
    .await
    .map_err(|j| CommandError::from(dcs_console::Error::Internal(j.to_string())))?;
    Ok(written?)
}

/// Which desktop notifications are raised.
#[tauri::command]
#[specta::specta]
pub fn notification_settings(app: tauri::AppHandle) -> dcs_console::notices::NoticeSettings {
    crate::notify::settings(&app)
}

/// Keeps which desktop notifications are raised (in the fleet database's settings).
#[tauri::command]
#[specta::specta]
pub fn set_notification_settings(
    state: State<'_, AppState>,
    settings: dcs_console::notices::NoticeSettings,
) -> Result<dcs_console::notices::NoticeSettings, CommandError> {
    let fleet = state.fleet()?;
    settings.save(fleet.db())?;
    Ok(settings)
}
