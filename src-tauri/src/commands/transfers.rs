//! File transfers of the firmware workspace: hashing a local file, uploading and downloading a
//! package's firmware file and release notes, reading release notes for display.
//!
//! Job ids and progress: each transfer command takes a `Channel<TransferProgress>`. Its first
//! message is sent as soon as the job is registered, before any file is read or any request
//! is made, and carries the job id (every later message carries it too); the UI passes that id
//! to `cancel_transfer`. The command itself answers when the job ends: its result, or the
//! client's `cancelled` error, or any other error. At most about ten messages a second.

use dcs_api::files::{FileKind, UploadOptions};
use dcs_api::model::FileAttributes;
use dcs_console::transfers::{self, Downloaded, HashResult, JobId, ReleaseNotesText, TransferProgress};
use serde::Deserialize;
use tauri::ipc::Channel;
use tauri::State;
use uuid::Uuid;

use crate::error::CommandError;
use crate::picked::{Picked, Use};
use crate::state::{Answer as _, AppState};

/// Forwards a job's progress to the UI's channel (a closed channel is the UI's business).
fn forward(channel: Channel<TransferProgress>) -> impl Fn(TransferProgress) + Send + Sync + 'static {
    move |p| {
        let _ = channel.send(p);
    }
}

/// SHA-256 and size of a local file, computed in Rust: only one the user dropped or picked in
/// this run (`Picked`), refused before it is opened otherwise.
#[tauri::command]
#[specta::specta]
pub async fn hash_file(
    state: State<'_, AppState>,
    picked: State<'_, Picked>,
    path: String,
    on_progress: Channel<TransferProgress>,
) -> Result<HashResult, CommandError> {
    hash_picked(&picked, &state.transfers, &path, forward(on_progress)).await
}

/// `hash_file` without Tauri's state: the pick is checked before anything else.
pub(crate) async fn hash_picked(
    picked: &Picked,
    transfers: &transfers::Transfers,
    path: &str,
    on_progress: impl Fn(TransferProgress) + Send + Sync + 'static,
) -> Result<HashResult, CommandError> {
    let path = picked.check(Use::Read, "path", path)?;
    Ok(transfers.hash(&path, on_progress).await?)
}

/// A local file to upload to a package, and the customer the user confirmed it for (`null`:
/// their own environment); refused unchanged if that is no longer the active one.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct UploadRequest {
    pub package_id: Uuid,
    pub path: String,
    /// The name the service stores; by default the file's own name.
    pub file_name: Option<String>,
    /// By default guessed from the name's extension.
    pub content_type: Option<String>,
    pub acting_for: Option<Uuid>,
    /// The SHA-256 the user was shown for this file (from `hash_file`): the file is then not
    /// hashed again when unchanged since, and refused (field `file`) when its bytes differ.
    pub sha256: Option<String>,
}

async fn upload(
    app: &tauri::AppHandle,
    state: &AppState,
    picked: &Picked,
    file: FileKind,
    request: UploadRequest,
    on_progress: Channel<TransferProgress>,
) -> Result<FileAttributes, CommandError> {
    let path = picked.check(Use::Read, "path", &request.path)?;
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    let options = UploadOptions {
        file_name: request.file_name.filter(|n| !n.is_empty()),
        content_type: request.content_type.filter(|c| !c.is_empty()),
        ..Default::default()
    };
    session
        .run(async {
            Ok(state
                .transfers
                .upload(
                    &session.client,
                    request.package_id,
                    file,
                    &path,
                    &options,
                    request.sha256.as_deref(),
                    forward(on_progress),
                )
                .await
                .inspect(|f| {
                    let what = match file {
                        FileKind::Firmware => "firmware file",
                        FileKind::ReleaseNotes => "release notes",
                    };
                    crate::notify::upload_finished(app, request.package_id, what, &f.name);
                })?)
        })
        .await
}

/// Uploads a package's firmware file. Refused before anything is read when the package already
/// has one: firmware files are uploaded once per package and never replaced.
#[tauri::command]
#[specta::specta]
pub async fn upload_firmware_file(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    picked: State<'_, Picked>,
    request: UploadRequest,
    on_progress: Channel<TransferProgress>,
) -> Result<FileAttributes, CommandError> {
    upload(&app, &state, &picked, FileKind::Firmware, request, on_progress).await
}

/// Uploads a package's release notes, replacing the previous ones.
#[tauri::command]
#[specta::specta]
pub async fn upload_release_notes(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    picked: State<'_, Picked>,
    request: UploadRequest,
    on_progress: Channel<TransferProgress>,
) -> Result<FileAttributes, CommandError> {
    upload(&app, &state, &picked, FileKind::ReleaseNotes, request, on_progress).await
}

/// A package's file to save at `target` (a path from `pick_save_file` in this run). An existing file there
/// is replaced once the download is complete; a failed or cancelled one leaves none.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DownloadRequest {
    pub package_id: Uuid,
    pub target: String,
}

async fn download(
    state: &AppState,
    picked: &Picked,
    file: FileKind,
    request: DownloadRequest,
    on_progress: Channel<TransferProgress>,
) -> Result<Downloaded, CommandError> {
    let target = picked.check(Use::Write, "target", &request.target)?;
    let session = state.session().await?;
    session
        .run(async {
            Ok(state
                .transfers
                .download(&session.client, request.package_id, file, &target, forward(on_progress))
                .await?)
        })
        .await
}

/// Downloads a package's firmware file; answers its size and SHA-256.
#[tauri::command]
#[specta::specta]
pub async fn download_firmware_file(
    state: State<'_, AppState>,
    picked: State<'_, Picked>,
    request: DownloadRequest,
    on_progress: Channel<TransferProgress>,
) -> Result<Downloaded, CommandError> {
    download(&state, &picked, FileKind::Firmware, request, on_progress).await
}

/// Downloads a package's release notes; answers their size and SHA-256.
#[tauri::command]
#[specta::specta]
pub async fn download_release_notes(
    state: State<'_, AppState>,
    picked: State<'_, Picked>,
    request: DownloadRequest,
    on_progress: Channel<TransferProgress>,
) -> Result<Downloaded, CommandError> {
    download(&state, &picked, FileKind::ReleaseNotes, request, on_progress).await
}

/// Size and SHA-256 of a package's firmware file, which the service does not tell: downloaded
/// to a temporary folder, hashed, and removed (a download job, with progress and Cancel).
#[tauri::command]
#[specta::specta]
pub async fn checksum_firmware_file(
    state: State<'_, AppState>,
    package_id: Uuid,
    on_progress: Channel<TransferProgress>,
) -> Result<HashResult, CommandError> {
    let session = state.session().await?;
    session
        .run(async {
            Ok(state
                .transfers
                .checksum_remote(&session.client, package_id, FileKind::Firmware, forward(on_progress))
                .await?)
        })
        .await
}

/// A package's release notes as text, for display; refused (field `releaseNotes`) above 1 MiB
/// or when not UTF-8 text, which can still be downloaded to a file.
#[tauri::command]
#[specta::specta]
pub async fn read_release_notes(
    state: State<'_, AppState>,
    package_id: Uuid,
) -> Result<ReleaseNotesText, CommandError> {
    let session = state.session().await?;
    session
        .run(async {
            Ok(transfers::read_release_notes(&session.client, package_id, transfers::RELEASE_NOTES_DISPLAY_CAP).await?)
        })
        .await
}

/// A package whose release notes to delete, and the customer the user confirmed it for.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DeleteReleaseNotes {
    pub package_id: Uuid,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn delete_release_notes(state: State<'_, AppState>, request: DeleteReleaseNotes) -> Result<(), CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            session.client.firmware().delete_release_notes(request.package_id).await?;
            tracing::info!(package = %request.package_id, acting = %session.acting.describe(), "release notes deleted");
            Ok(())
        })
        .await
}

/// Asks the transfer `job` to stop; false when it is not running (it may have just ended). The
/// transfer's own command then answers with the `cancelled` error.
#[tauri::command]
#[specta::specta]
pub fn cancel_transfer(state: State<'_, AppState>, job: JobId) -> bool {
    state.transfers.cancel(job)
}
