//! The main window's place on the screen: its size, position and maximised state come back as
//! they were last (Tauri's window-state plugin, in the app's config folder), saved shortly after
//! every move or resize rather than only on a clean close, so a crash or a kill keeps them too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tauri::{AppHandle, Manager};
use tauri_plugin_window_state::{AppHandleExt, StateFlags};

/// What is kept of the window (not its visibility: the app always opens shown).
pub fn state_flags() -> StateFlags {
    StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED
}

/// How long the window stays still before its place is written (a drag is one write).
const SAVE_AFTER: Duration = Duration::from_millis(400);

/// Moves and resizes so far: a save goes ahead only if none came after the one that asked.
#[derive(Default)]
pub struct Changes(AtomicU64);

/// The window moved or was resized: its place is written once it stays still.
pub fn changed(app: &AppHandle) {
    let Some(changes) = app.try_state::<Changes>() else { return };
    let mine = changes.0.fetch_add(1, Ordering::SeqCst) + 1;
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SAVE_AFTER).await;
        if app.state::<Changes>().0.load(Ordering::SeqCst) == mine {
            if let Err(e) = app.save_window_state(state_flags()) {
                tracing::warn!(error = %e, "the window's size and place could not be saved");
            }
        }
    });
}

/// The main window shown, raised and focused.
pub fn show(app: &AppHandle) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
}
