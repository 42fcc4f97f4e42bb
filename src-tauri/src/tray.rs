//! The tray indicator and closing while rollouts run. Rollouts move only while the app runs
//! (its fleet timer sets each wave's targets), so closing the window while one runs asks first
//! (the web view's `CloseAsked`): keep the app going in the background, its window hidden and
//! its icon in the tray (from where, or from a second launch or a notification, the window comes
//! back), or quit (the rollouts go on at the next start). The tray icon shows while a rollout
//! runs or the window is hidden, with how many run.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use tauri::menu::{Menu, MenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Window};
use tauri_specta::Event;

use crate::error::CommandError;
use crate::state::AppState;

const TRAY: &str = "main";

/// The operator chose to quit: the next close is let through.
#[derive(Default)]
pub struct Quitting(AtomicBool);

/// The window was asked to close while rollouts run: the web view asks what to do.
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub struct CloseAsked {
    /// Rollouts running, in every scope.
    pub running: u32,
}

/// Rollouts running in every scope (0 without a fleet database).
pub fn running(app: &AppHandle) -> u32 {
    let state = app.state::<AppState>();
    let Ok(fleet) = state.fleet() else { return 0 };
    let db = fleet.db();
    dcs_console::fleet::rollout::running_scopes(db)
        .map(|scopes| {
            scopes.iter().map(|s| dcs_console::fleet::rollout::running(db, *s).map_or(0, |r| r.len() as u32)).sum()
        })
        .unwrap_or(0)
}

/// Makes the tray icon (hidden until a rollout runs); a desktop without a tray shows none, and
/// the app runs on without it. On Linux the indicator library is loaded when the icon is made
/// (the .deb depends on it); where it is missing that load panics, which is caught here: the
/// app then runs without a tray icon.
pub fn create(app: &AppHandle) {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(app))) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "no tray icon"),
        Err(_) => tracing::warn!("no tray icon: the system's tray indicator library could not be loaded"),
    }
}

fn build(app: &AppHandle) -> tauri::Result<()> {
    let show = MenuItem::with_id(app, "show", "Show the console", true, None::<&str>)?;
    let leave = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&show, &leave])?;
    let mut builder = TrayIconBuilder::with_id(TRAY).tooltip("Device Connectivity Console").menu(&menu).on_menu_event(
        |app, event| match event.id.as_ref() {
            "show" => {
                crate::window::show(app);
                update(app);
            }
            "quit" => quit(app),
            _ => {}
        },
    );
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    let tray = builder.build(app)?;
    tray.set_visible(false)?;
    Ok(())
}

/// Shows the tray icon while a rollout runs or the window is hidden, saying how many run.
pub fn update(app: &AppHandle) {
    let Some(tray) = app.tray_by_id(TRAY) else { return };
    let n = running(app);
    let hidden = app.get_webview_window("main").is_some_and(|w| !w.is_visible().unwrap_or(true));
    let text = match n {
        0 => "Device Connectivity Console".to_owned(),
        1 => "Device Connectivity Console: 1 rollout running".to_owned(),
        n => format!("Device Connectivity Console: {n} rollouts running"),
    };
    let _ = tray.set_tooltip(Some(&text));
    let _ = tray.set_title(if n > 0 { Some(format!("{n} running")) } else { None });
    let _ = tray.set_visible(n > 0 || hidden);
}

/// A close of the main window: let through, unless rollouts run and the operator has not
/// chosen yet; then the web view asks.
pub fn close_requested(window: &Window, api: &tauri::CloseRequestApi) {
    let app = window.app_handle();
    if window.label() != "main" || app.state::<Quitting>().0.load(Ordering::SeqCst) {
        return;
    }
    let app = app.clone();
    // Rollouts a runner or another console drives go on whatever this window does: only those
    // this window moves on are asked about.
    let elsewhere = app
        .state::<AppState>()
        .fleet()
        .ok()
        .and_then(|f| dcs_console::fleet::rollout::lease::driven_elsewhere(f.db()).ok())
        .unwrap_or(0);
    let n = running(&app).saturating_sub(elsewhere);
    if n == 0 {
        return;
    }
    api.prevent_close();
    if let Err(e) = (CloseAsked { running: n }).emit(&app) {
        tracing::warn!(error = %e, "the close question could not be asked; closing");
        quit(&app);
    }
}

fn quit(app: &AppHandle) {
    app.state::<Quitting>().0.store(true, Ordering::SeqCst);
    // The rollouts this window drives are let go of: a runner (or another console) takes them
    // over at once rather than after their leases run out.
    if let Some(state) = app.try_state::<crate::state::AppState>() {
        if let Ok(fleet) = state.fleet() {
            match fleet.release() {
                Ok(n) if n > 0 => tracing::info!(rollouts = n, "let go of the rollouts this window drove"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "could not let go of the rollouts this window drove"),
            }
        }
    }
    app.exit(0);
}

/// Keeps the app going with its window hidden (the tray icon shows).
#[tauri::command]
#[specta::specta]
pub fn keep_in_background(app: AppHandle) -> Result<(), CommandError> {
    if let Some(w) = app.get_webview_window("main") {
        w.hide().map_err(|e| {
            CommandError::from(dcs_console::Error::Setup(format!("the window could not be hidden: {e}")))
        })?;
    }
    update(&app);
    Ok(())
}

/// Quits the app (running rollouts go on at its next start).
#[tauri::command]
#[specta::specta]
pub fn quit_app(app: AppHandle) {
    quit(&app);
}

/// End-to-end tests cannot close the window the way a window manager does (Xvfb runs none), so
/// they ask from the page: in debug builds started with `DCS_E2E_CLOSE=1` only, the event
/// `dcs-e2e://close` closes the main window as a user would (a close request, which the app
/// may stop). A release build has no such path.
#[cfg(debug_assertions)]
pub fn e2e_close(app: &AppHandle) {
    use tauri::Listener;
    if std::env::var("DCS_E2E_CLOSE").as_deref() != Ok("1") {
        return;
    }
    tracing::warn!("DCS_E2E_CLOSE=1: the page may ask to close the window as a user would (a test build only)");
    let handle = app.clone();
    app.listen_any("dcs-e2e://close", move |_| {
        if let Some(w) = handle.get_webview_window("main") {
            if let Err(e) = w.close() {
                tracing::warn!(error = %e, "the window could not be asked to close");
            }
        }
    });
}
