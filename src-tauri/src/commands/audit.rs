//! The audit log screen: the records of this computer's log (shared with `dcs`), filtered,
//! exported where the user chose, and the hash chain checked. Nothing here writes the log: the
//! writes themselves do ([`dcs_console::audit`]).

use dcs_console::audit::{AuditLog, ExportFormat, Filter, Listed, Verified};
use serde::Serialize;
use tauri::State;

use crate::error::CommandError;
use crate::picked::{Picked, Use};
use crate::state::AppState;

/// The most records one call answers (the screen asks for more as it is scrolled).
const MAX_LIMIT: u32 = 5000;

fn log(state: &AppState) -> Result<AuditLog, CommandError> {
    state.data_dir.as_deref().map(AuditLog::at).ok_or_else(|| {
        CommandError::from(dcs_console::Error::Setup("this system has no data folder for the audit log".into()))
    })
}

/// Runs `work` on the log off the async runtime (it reads the whole file).
async fn blocking<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce(AuditLog) -> Result<T, dcs_console::Error> + Send + 'static,
) -> Result<T, CommandError> {
    let log = log(state)?;
    let out = tauri::async_runtime::spawn_blocking(move || work(log))
        .await
        .map_err(|j| CommandError::from(dcs_console::Error::Internal(j.to_string())))?;
    Ok(out?)
}

/// Where the log is, for the screen to say.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct AuditInfo {
    pub path: String,
}

#[tauri::command]
#[specta::specta]
pub fn audit_info(state: State<'_, AppState>) -> Result<AuditInfo, CommandError> {
    Ok(AuditInfo { path: log(&state)?.path().display().to_string() })
}

/// The newest `limit` records (1 to 5000) that pass `filter`, and how many pass in all.
#[tauri::command]
#[specta::specta]
pub async fn audit_list(state: State<'_, AppState>, filter: Filter, limit: u32) -> Result<Listed, CommandError> {
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(dcs_console::Error::Invalid(vec![dcs_console::FieldError::new(
            "limit",
            format!("must be from 1 to {MAX_LIMIT}"),
        )])
        .into());
    }
    blocking(&state, move |log| log.list(&filter, limit as usize)).await
}

/// Writes the records that pass `filter` to `path` (chosen in the save dialog in this run).
#[tauri::command]
#[specta::specta]
pub async fn audit_export(
    state: State<'_, AppState>,
    picked: State<'_, Picked>,
    filter: Filter,
    format: ExportFormat,
    path: String,
) -> Result<u32, CommandError> {
    let path = picked.check(Use::Write, "path", &path)?;
    blocking(&state, move |log| log.export(&filter, format, &path)).await
}

/// Checks the hash chain from the first entry to the last.
#[tauri::command]
#[specta::specta]
pub async fn audit_verify(state: State<'_, AppState>) -> Result<Verified, CommandError> {
    blocking(&state, |log| Ok(log.verify()?)).await
}
