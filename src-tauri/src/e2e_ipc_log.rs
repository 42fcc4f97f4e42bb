//! The IPC record of the end-to-end tests, out of every release build and out of the UI bundle:
//! only a debug build started with `DCS_E2E_RECORD_IPC=1` injects `e2e_ipc_log.js` into its web
//! view, which (once the page opts in too) keeps each IPC answer in `window.__dcsIpcLog` for the
//! test that proves no secret or token reaches the web view. Like `DCS_E2E_DROPS`, a release
//! build has no such path.

use tauri::plugin::{Builder, TauriPlugin};
use tauri::Runtime;

/// The recorder's script, run in the web view before the page's own scripts.
const SCRIPT: &str = include_str!("e2e_ipc_log.js");

/// `builder` with the recorder's script added to every web view when `DCS_E2E_RECORD_IPC=1`.
pub fn install<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    if std::env::var("DCS_E2E_RECORD_IPC").as_deref() != Ok("1") {
        return builder;
    }
    tracing::warn!("DCS_E2E_RECORD_IPC=1: the web view may record IPC answers (a test build only)");
    builder.plugin(plugin())
}

fn plugin<R: Runtime>() -> TauriPlugin<R> {
    Builder::new("dcs-e2e-ipc-log").js_init_script(SCRIPT).build()
}
