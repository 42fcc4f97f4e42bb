//! Updates of the app (Tauri's updater plugin; the rules are [`dcs_console::updates`]).
//!
//! - The manifest's address is the operator's (Settings → Updates) or the build's own
//!   (`plugins.updater.endpoints`, set by the bundles workflow); a build made without one checks
//!   nothing until given one. The public key the packages are checked against is the build's
//!   (`plugins.updater.pubkey`): the page can change where the app looks, never what it trusts.
//!   Debug builds take a test key from `DCS_E2E_UPDATE_PUBKEY`.
//! - A check reads the manifest within the client's bounds and keeps the offer here; the page
//!   gets its version and release notes to show before anything is downloaded, and can only ask
//!   for that offer by its version (never a URL of its own).
//! - The package is downloaded (held to 512 MiB, no stall over 30 s, cancellable) and checked
//!   against its signature, which also binds the version (a manifest pairing a new version with
//!   an older signed package is refused). A copy installed from a package (.deb, .rpm,
//!   AppImage, .msi, NSIS, .app) replaces itself and asks to restart; any other copy (a build
//!   run from its folder) cannot, and keeps the checked package in the data folder's `updates`
//!   to install by hand.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dcs_console::updates::{self, DownloadBounds, UpdateSettings};
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};
use tauri_plugin_updater::{Update, UpdaterExt};
use tauri_specta::Event;

use crate::error::CommandError;
use crate::state::AppState;

/// The offer of the last check, and the download under way, if any (its stop, for
/// `cancel_update`).
#[derive(Default)]
pub struct Updates {
    offer: Mutex<Option<Update>>,
    running: Mutex<Option<Arc<tokio::sync::Notify>>>,
}

/// `http` to this machine is allowed as an address only in debug builds (tests).
const LOCAL_HTTP: bool = cfg!(debug_assertions);

/// Where updates come from, as Settings shows it.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatus {
    /// This app's version.
    pub version: String,
    pub settings: UpdateSettings,
    /// The address the build was made with, if any.
    pub built_in: Option<String>,
    /// The address checked (`null`: updates are off).
    pub effective: Option<String>,
    /// Why this copy cannot replace itself (`null`: it can).
    pub cannot_install: Option<String>,
}

/// A newer version, as shown before anything is downloaded.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct UpdateOffer {
    pub version: String,
    pub current: String,
    /// When it was published, as the manifest says (RFC 3339), if it does.
    pub date: Option<String>,
    /// Its release notes (Markdown), bounded; `notesCut`: the rest was left out.
    pub notes: Option<String>,
    pub notes_cut: bool,
    /// The server the package comes from.
    pub from: String,
}

/// What a check found: an offer, or nothing newer than `current`.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct UpdateCheck {
    pub current: String,
    pub endpoint: String,
    pub offer: Option<UpdateOffer>,
}

/// A download's progress: bytes received, of the announced total.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct UpdateProgress {
    #[specta(type = f64)]
    pub received: u64,
    #[specta(type = Option<f64>)]
    pub total: Option<u64>,
}

/// How a download ended.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum UpdateDone {
    /// Installed: the new version runs after a restart.
    Installed { version: String },
    /// Checked and kept at `path`, for a copy that cannot replace itself.
    Kept { version: String, path: String },
}

/// The start-up check found a newer version.
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub struct UpdateAvailable {
    pub version: String,
}

fn built_in(app: &AppHandle) -> Option<String> {
    let config = app.config().plugins.0.get("updater")?;
    config.get("endpoints")?.as_array()?.first()?.as_str().map(str::to_owned)
}

fn pubkey(app: &AppHandle) -> Option<String> {
    #[cfg(debug_assertions)]
    if let Ok(key) = std::env::var("DCS_E2E_UPDATE_PUBKEY") {
        return Some(key);
    }
    let key = app.config().plugins.0.get("updater")?.get("pubkey")?.as_str()?;
    Some(key.to_owned()).filter(|k| !k.trim().is_empty())
}

/// Why this copy cannot replace itself, or `None`.
fn cannot_install() -> Option<String> {
    match tauri::utils::platform::bundle_type() {
        Some(_) => None,
        None => Some(
            "this copy was not installed from a package (.deb, .rpm, AppImage, .msi, .exe or .app), so it cannot replace itself: the checked package is kept for you to install"
                .into(),
        ),
    }
}

fn settings(app: &AppHandle) -> UpdateSettings {
    match app.state::<AppState>().fleet() {
        Ok(fleet) => UpdateSettings::load(fleet.db(), LOCAL_HTTP),
        Err(_) => UpdateSettings::default(),
    }
}

fn status(app: &AppHandle, settings: UpdateSettings) -> UpdateStatus {
    let built_in = built_in(app);
    UpdateStatus {
        version: app.package_info().version.to_string(),
        effective: settings.effective(built_in.as_deref()),
        settings,
        built_in,
        cannot_install: cannot_install(),
    }
}

/// Where updates come from and when they are checked.
#[tauri::command]
#[specta::specta]
pub fn update_status(app: AppHandle) -> UpdateStatus {
    status(&app, settings(&app))
}

/// Keeps where updates come from (checked: an `https` address without credentials) and whether
/// the app checks when it starts; refused unchanged, naming the field and the rule.
#[tauri::command]
#[specta::specta]
pub fn set_update_settings(
    app: AppHandle,
    state: State<'_, AppState>,
    settings: UpdateSettings,
) -> Result<UpdateStatus, CommandError> {
    let settings = settings.checked(LOCAL_HTTP)?;
    settings.save(state.fleet()?.db())?;
    Ok(status(&app, settings))
}

/// The plugin's error as the console's: a signature that does not match, a manifest that is
/// not one, a download that failed, or an install that did.
fn failed(e: tauri_plugin_updater::Error) -> CommandError {
    use tauri_plugin_updater::Error as U;
    let e = match e {
        U::Minisign(_)
        | U::Base64(_)
        | U::SignatureUtf8(_)
        | U::MissingSignedVersion
        | U::SignedVersionMismatch { .. } => dcs_console::Error::invalid(
            "signature",
            format!("does not match the app's key: the package was not kept or installed ({e})"),
        ),
        U::Semver(_) | U::Serialization(_) | U::TargetNotFound(_) | U::TargetsNotFound(_) | U::UrlParse(_) => {
            dcs_console::Error::invalid("manifest", format!("is not a manifest of this app's updates: {e}"))
        }
        U::Reqwest(_) | U::Network(_) => {
            dcs_console::Error::Unavailable(format!("the package could not be downloaded: {e}"))
        }
        other => dcs_console::Error::Setup(format!("the update could not be installed: {other}")),
    };
    e.into()
}

/// Checks the address for a newer version; the offer is kept for [`get_update`].
pub async fn check(app: &AppHandle) -> Result<UpdateCheck, CommandError> {
    let current = app.package_info().version.to_string();
    let endpoint = settings(app).effective(built_in(app).as_deref()).ok_or_else(|| {
        CommandError::invalid(
            "endpoint",
            "is not set: this build was made without an update address; give one in Settings → Updates",
        )
    })?;
    let key = pubkey(app).ok_or_else(|| {
        CommandError::from(dcs_console::Error::Setup("this build has no key to check updates against".into()))
    })?;
    // As the updater names them: `linux-x86_64`, `darwin-aarch64`, `windows-i686`...
    let target = tauri_plugin_updater::target().ok_or_else(|| {
        CommandError::from(dcs_console::Error::Setup("the updater does not support this system".into()))
    })?;
    let (os, arch) = target.split_once('-').unwrap_or((&target, ""));
    let bundle = tauri::utils::platform::bundle_type().map_or("unknown".to_owned(), |b| b.to_string());
    let url = updates::manifest_url(&endpoint, &current, os, arch, &bundle)?;
    let found = match updates::fetch_manifest(&url).await? {
        None => None,
        Some(manifest) => {
            let updater = app
                .updater_builder()
                .pubkey(key)
                .endpoints(vec![url.clone()])
                .and_then(|b| b.build())
                .map_err(failed)?;
            // The manifest is not signed: the package's signature binds the version announced.
            updater.restore_update(manifest).map_err(failed)?
        }
    };
    let offer = found.as_ref().map(|u| {
        let (notes, notes_cut) = u.body.as_deref().map(updates::clean_notes).unzip();
        UpdateOffer {
            version: u.version.clone(),
            current: current.clone(),
            // As the manifest spells it (the updater read it as a date).
            date: u.date.and(u.raw_json.get("pub_date")).and_then(|d| d.as_str()).map(|d| d.chars().take(64).collect()),
            notes,
            notes_cut: notes_cut.unwrap_or(false),
            from: u.download_url.host_str().unwrap_or_default().to_owned(),
        }
    });
    *app.state::<Updates>().offer.lock().unwrap_or_else(|p| p.into_inner()) = found;
    Ok(UpdateCheck { current, endpoint, offer })
}

/// Checks for a newer version now.
#[tauri::command]
#[specta::specta]
pub async fn check_for_update(app: AppHandle) -> Result<UpdateCheck, CommandError> {
    check(&app).await
}

/// The package's file name in the data folder: the download's own name, of safe characters only.
fn kept_name(update: &Update) -> String {
    let last = update.download_url.path_segments().and_then(|mut s| s.next_back()).unwrap_or_default();
    let name: String =
        last.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')).take(100).collect();
    match name.trim_start_matches('.') {
        "" => format!("dcs-console-{}.package", update.version),
        n => n.to_owned(),
    }
}

/// Downloads the offer of the last check (the page names it by `version`), checks its
/// signature, and installs it (then the app asks to restart) or, for a copy that cannot replace
/// itself, keeps it in the data folder. Progress goes to `on_progress`, at most ten a second;
/// `cancel_update` stops it.
#[tauri::command]
#[specta::specta]
pub async fn get_update(
    app: AppHandle,
    state: State<'_, AppState>,
    version: String,
    on_progress: Channel<UpdateProgress>,
) -> Result<UpdateDone, CommandError> {
    let updates = app.state::<Updates>();
    let update = updates.offer.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let Some(update) = update.filter(|u| u.version == version) else {
        return Err(CommandError::invalid("version", "is not the version the last check offered: check again"));
    };
    // One download at a time, with a stop of its own: one asked before it began, or of an
    // earlier one, is not kept.
    let cancel = {
        let mut running = updates.running.lock().unwrap_or_else(|p| p.into_inner());
        if running.is_some() {
            return Err(CommandError::from(dcs_console::Error::Conflict(
                "an update is already being downloaded".into(),
            )));
        }
        running.insert(Arc::new(tokio::sync::Notify::new())).clone()
    };
    let result = download(&update, &cancel, on_progress).await;
    updates.running.lock().unwrap_or_else(|p| p.into_inner()).take();
    let bytes = result?;
    if cannot_install().is_none() {
        let u = update.clone();
        tauri::async_runtime::spawn_blocking(move || u.install(bytes))
            .await
            .map_err(|j| CommandError::from(dcs_console::Error::Internal(j.to_string())))?
            .map_err(failed)?;
        tracing::info!(version = %update.version, "installed an update of the app; it runs after a restart");
        return Ok(UpdateDone::Installed { version: update.version });
    }
    let data = state.data_dir.as_deref().ok_or_else(|| {
        CommandError::from(dcs_console::Error::Setup("this system has no data folder to keep the package in".into()))
    })?;
    let dir = data.join("updates");
    let path = dir.join(kept_name(&update));
    let local = |e: std::io::Error| {
        CommandError::from(dcs_api::Error::LocalFile { path: path.display().to_string(), source: e })
    };
    std::fs::create_dir_all(&dir).map_err(local)?;
    // Written whole under another name first: a crash never leaves half a package under its own.
    let part = dir.join(format!(".{}.part", kept_name(&update)));
    std::fs::write(&part, &bytes).and_then(|_| std::fs::rename(&part, &path)).map_err(local)?;
    tracing::info!(version = %update.version, path = %path.display(), "kept a checked update of the app");
    Ok(UpdateDone::Kept { version: update.version, path: path.display().to_string() })
}

/// The package, signature checked, within [`DownloadBounds`] and [`updates::STALL`].
async fn download(
    update: &Update,
    cancel: &tokio::sync::Notify,
    on_progress: Channel<UpdateProgress>,
) -> Result<Vec<u8>, CommandError> {
    let bounds = Arc::new(Mutex::new(DownloadBounds::default()));
    let refused: Arc<Mutex<Option<dcs_console::Error>>> = Arc::default();
    let stop = Arc::new(tokio::sync::Notify::new());
    let started = Instant::now();
    let last_byte = Arc::new(AtomicU64::new(0));
    let mut sent = None::<Instant>;
    let on_chunk = {
        let (bounds, refused, stop, last_byte) = (bounds.clone(), refused.clone(), stop.clone(), last_byte.clone());
        move |len: usize, total: Option<u64>| {
            last_byte.store(started.elapsed().as_millis() as u64, Ordering::SeqCst);
            let mut b = bounds.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = b.chunk(len, total) {
                refused.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                stop.notify_one();
            }
            if sent.is_none_or(|t| t.elapsed() >= Duration::from_millis(100)) {
                sent = Some(Instant::now());
                let _ = on_progress.send(UpdateProgress { received: b.received, total: b.announced });
            }
        }
    };
    let stalled = async {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let quiet = started.elapsed().saturating_sub(Duration::from_millis(last_byte.load(Ordering::SeqCst)));
            if quiet >= updates::STALL {
                return;
            }
        }
    };
    tokio::select! {
        r = update.download(on_chunk, || {}) => r.map_err(failed),
        _ = stop.notified() => {
            let e = refused.lock().unwrap_or_else(|p| p.into_inner()).take();
            Err(e.unwrap_or(dcs_console::Error::Cancelled).into())
        }
        _ = cancel.notified() => Err(dcs_api::Error::Cancelled { what: "the update's download".into() }.into()),
        _ = stalled => Err(dcs_console::Error::Unavailable(format!(
            "the package stopped arriving: no byte for {} s", updates::STALL.as_secs()
        )).into()),
    }
}

/// Stops the download under way, if any.
#[tauri::command]
#[specta::specta]
pub fn cancel_update(app: AppHandle) {
    if let Some(cancel) = app.state::<Updates>().running.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        cancel.notify_one();
    }
}

/// Restarts the app (after an update was installed).
#[tauri::command]
#[specta::specta]
pub fn restart_app(app: AppHandle) {
    app.request_restart();
}

/// Once, a while after the start: checks for a newer version when the settings say so and
/// there is an address, and tells the page of one. A failure is logged, never shown.
pub fn check_at_start(app: AppHandle) {
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(Duration::from_secs(8)).await;
        let s = settings(&app);
        if !s.check_at_start || s.effective(built_in(&app).as_deref()).is_none() {
            return;
        }
        match check(&app).await {
            Ok(UpdateCheck { offer: Some(o), .. }) => {
                tracing::info!(version = %o.version, "a newer version of the app is available");
                let _ = UpdateAvailable { version: o.version }.emit(&app);
            }
            Ok(_) => tracing::info!("the app is up to date"),
            Err(e) => tracing::info!(error = %e.message, "the start-up check for updates failed"),
        }
    });
}
