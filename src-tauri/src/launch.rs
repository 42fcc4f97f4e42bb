//! How the app is launched: one app per data folder ([`dcs_console::instance`]: a second launch
//! hands its arguments over and ends, and the first shows its window), and the
//! `dcs-console://` link a launch carries ([`dcs_console::links`]), kept until the web view
//! takes it.

use std::sync::Mutex;

use dcs_console::instance::{self, Claim, Primary};
use dcs_console::links::Link;
use serde::Serialize;
use tauri::{AppHandle, Manager};
use tauri_specta::Event;

use crate::error::CommandError;

/// The link of the latest launch, until the web view takes it: the link, or why it is not one.
#[derive(Default)]
pub struct PendingLink(Mutex<Option<Result<Link, dcs_console::FieldError>>>);

/// A later launch handed the app a link: the web view takes it with [`take_link`].
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct LinkWaiting;

/// This process's claim on its data folder: `None` when another app holds it (it was given this
/// launch's arguments, and this process should end), else the claim to serve once the app runs
/// (itself `None` when the folder cannot be claimed: the app runs without the one-app rule).
pub fn claim(args: &[String]) -> Option<Option<Primary>> {
    let Some(dir) = dcs_console::data_dir() else { return Some(None) };
    match instance::claim(&dir, args) {
        Ok(Claim::First(primary)) => Some(Some(primary)),
        Ok(Claim::Handed) => None,
        Err(e) => {
            tracing::warn!(error = %e, "a second launch will start a second app");
            Some(None)
        }
    }
}

/// Keeps this launch's link, and answers later launches for as long as the app runs: each shows
/// the window and hands its link (if any) to the web view.
pub fn start(app: &AppHandle, args: &[String], primary: Option<Primary>) {
    app.manage(PendingLink::default());
    keep(app, args);
    if let Some(primary) = primary {
        let handle = app.clone();
        primary.serve(move |args| {
            let app = handle.clone();
            let _ = handle.run_on_main_thread(move || {
                crate::window::show(&app);
                if keep(&app, &args) {
                    tell(&app);
                }
            });
        });
    }
}

/// Shows the window and opens `link` in it (a notification clicked): as a later launch's link.
pub fn open(app: &AppHandle, link: Link) {
    *app.state::<PendingLink>().0.lock().unwrap_or_else(|p| p.into_inner()) = Some(Ok(link));
    let handle = app.clone();
    let _ = app.run_on_main_thread(move || {
        crate::window::show(&handle);
        tell(&handle);
    });
}

/// Tells the web view a link waits.
fn tell(app: &AppHandle) {
    if let Err(e) = LinkWaiting.emit(app) {
        tracing::warn!(error = %e, "the link event could not be sent");
    }
}

/// Keeps the link among `args`; whether there was one.
fn keep(app: &AppHandle, args: &[String]) -> bool {
    let Some(link) = Link::from_args(args) else { return false };
    if let Err(e) = &link {
        tracing::info!(error = %e, "a launch's link is not one the console opens");
    }
    *app.state::<PendingLink>().0.lock().unwrap_or_else(|p| p.into_inner()) = Some(link);
    true
}

/// The link the app was launched with, or handed by a later launch, once: `null` when there is
/// none (left); a malformed one is refused naming the field and the rule.
#[tauri::command]
#[specta::specta]
pub fn take_link(pending: tauri::State<'_, PendingLink>) -> Result<Option<Link>, CommandError> {
    let link = pending.0.lock().unwrap_or_else(|p| p.into_inner()).take();
    link.transpose().map_err(CommandError::from)
}
