//! The desktop shell: thin Tauri commands over the shared crates. The web view never holds a
//! secret or a token; it calls these commands and gets plain data or a typed error back.

mod commands;
mod downlink_watch;
#[cfg(debug_assertions)]
mod e2e_ipc_log;
mod error;
mod events;
mod fleet_worker;
mod launch;
mod notify;
mod picked;
pub mod rendering;
mod state;
mod tray;
mod updates;
mod window;

use tauri::Manager;
use tauri_specta::{collect_commands, collect_events, Builder};

pub use error::CommandError;

/// Every command the UI may call, with its types, for tauri-specta.
fn specta_builder() -> Builder<tauri::Wry> {
    Builder::<tauri::Wry>::new()
        .commands(collect_commands![
            commands::app_info,
            commands::act_as,
            commands::activate_profile,
            commands::profiles::list_profiles,
            commands::profiles::check_profile,
            commands::profiles::save_profile,
            commands::profiles::delete_profile,
            commands::profiles::test_profile,
            commands::profiles::test_stored_profile,
            commands::profiles::test_set_target,
            commands::firmware::list_modules,
            commands::firmware::check_package,
            commands::firmware::create_package,
            commands::firmware::list_packages,
            commands::firmware::list_specifications,
            commands::firmware::update_package_description,
            commands::firmware::delete_package,
            commands::firmware::get_package,
            commands::firmware::get_module,
            commands::firmware::list_module_states,
            picked::pick_file,
            picked::pick_save_file,
            commands::transfers::hash_file,
            commands::transfers::upload_firmware_file,
            commands::transfers::upload_release_notes,
            commands::transfers::download_firmware_file,
            commands::transfers::download_release_notes,
            commands::transfers::checksum_firmware_file,
            commands::transfers::read_release_notes,
            commands::transfers::delete_release_notes,
            commands::transfers::cancel_transfer,
            commands::bindings::list_bindings,
            commands::bindings::get_binding,
            commands::bindings::check_binding,
            commands::bindings::generate_binding_secret,
            commands::bindings::reveal_binding_secret,
            commands::bindings::copy_binding_secret,
            commands::bindings::create_binding,
            commands::bindings::update_binding,
            commands::bindings::delete_binding,
            commands::bindings::sync_lora_binding,
            commands::bindings::delete_bindings,
            commands::bindings::export_bindings_csv,
            commands::devices::list_devices,
            commands::devices::device_page,
            commands::devices::palette_search,
            commands::devices::check_device_id,
            commands::devices::device_labels,
            commands::downlinks::downlink_kinds,
            commands::downlinks::preview_downlink,
            commands::downlinks::preview_connection_downlink,
            commands::downlinks::list_downlinks,
            commands::downlinks::get_downlink,
            commands::downlinks::send_downlink,
            commands::downlinks::send_connection_downlink,
            commands::downlinks::cancel_downlink,
            commands::downlinks::cancel_downlinks,
            commands::downlinks::export_downlinks_csv,
            commands::downlinks::check_beta_downlink,
            commands::downlinks::send_beta_downlink,
            downlink_watch::watch_downlinks,
            downlink_watch::watch_downlink,
            downlink_watch::unwatch_downlinks,
            commands::fleet::fleet_status,
            commands::fleet::fleet_home,
            commands::fleet::fleet_scan,
            commands::fleet::fleet_cancel_scan,
            commands::fleet::fleet_set_refresh,
            commands::fleet::fleet_overview,
            commands::fleet::fleet_count,
            commands::fleet::fleet_rows,
            commands::fleet::fleet_export_csv,
            commands::fleet::fleet_history,
            commands::fleet::fleet_wave_starts,
            commands::fleet::fleet_compare,
            commands::fleet::fleet_stuck,
            commands::fleet::fleet_set_stuck_hours,
            commands::fleet::fleet_reset_targets,
            commands::fleet::fleet_health,
            commands::fleet::rollout_preview,
            commands::fleet::rollout_rehearse,
            commands::fleet::rollout_start,
            commands::fleet::rollouts,
            commands::fleet::rollout_counts,
            commands::fleet::rollout_pause,
            commands::fleet::rollout_resume,
            commands::fleet::rollout_continue,
            commands::fleet::rollout_unfinished,
            commands::fleet::rollout_abort,
            launch::take_link,
            commands::fleet::rollout_report,
            commands::audit::audit_info,
            commands::audit::audit_list,
            commands::audit::audit_export,
            commands::audit::audit_verify,
            commands::help::log_folder,
            commands::help::open_log_folder,
            commands::help::save_diagnostics,
            commands::help::notification_settings,
            commands::help::set_notification_settings,
            tray::keep_in_background,
            tray::quit_app,
            updates::update_status,
            updates::set_update_settings,
            updates::check_for_update,
            updates::get_update,
            updates::cancel_update,
            updates::restart_app,
        ])
        .events(collect_events![
            events::FleetChanged,
            downlink_watch::DownlinkChanged,
            launch::LinkWaiting,
            tray::CloseAsked,
            updates::UpdateAvailable
        ])
}

/// Writes the TypeScript bindings (commands and types) to `path`.
pub fn export_bindings(path: &str) -> Result<(), String> {
    specta_builder()
        .export(
            specta_typescript::Typescript::default()
                .header("// Generated from the Rust commands by `dcs-console --export-bindings`. Do not edit.\n"),
            path,
        )
        .map_err(|e| e.to_string())
}

/// Logs to standard error and, written line by line (a crash loses none), to the day's file in
/// the data folder's `logs` ([`dcs_console::diagnostics`]); `DCS_LOG` filters both.
fn init_logging() {
    use std::io::IsTerminal;
    use tracing_subscriber::field::MakeExt;
    use tracing_subscriber::prelude::*;
    let filter =
        || tracing_subscriber::EnvFilter::try_from_env("DCS_LOG").unwrap_or_else(|_| "info,tao=warn,wry=warn".into());
    let files =
        dcs_console::data_dir().map(|d| dcs_console::diagnostics::log_writer(&dcs_console::diagnostics::log_dir(&d)));
    let (files, failed) = match files {
        Some(Ok(w)) => (Some(w), None),
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    // The file's span fields get a formatter of their own type: fmt layers of one field
    // formatter share the fields as the first formatted them (with the terminal's colours).
    let plain_fields = tracing_subscriber::fmt::format::debug_fn(|w, field, value| match field.name() {
        "message" => write!(w, "{value:?}"),
        name => write!(w, "{name}={value:?}"),
    })
    .delimited(" ");
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_ansi(std::io::stderr().is_terminal()).with_filter(filter()))
        .with(files.map(|w| {
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .fmt_fields(plain_fields)
                .with_writer(w)
                .with_filter(filter())
        }))
        .init();
    if let Some(e) = failed {
        tracing::warn!(error = %e, "the app logs to standard error only");
    }
}

/// How long after the page's first load the app lets go of the code that starting ran: by then
/// the first screen's reads, and the built-in simulator's seed of a new data file (half a second
/// in a release build), are over.
const LET_GO_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// Once, [`LET_GO_AFTER`] the page's first load: the kernel takes back the app's own code pages,
/// and the idle app holds only what it runs again (`dcs_console::resident`; in the release app
/// 21 of the 34 MB binary stayed mapped at idle, the biggest item of its memory over WebKitGTK's
/// own). A page loaded again (a reload, a crashed web process's new one) starts nothing more.
fn let_go_of_start_up_code() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        tauri::async_runtime::spawn(async {
            tokio::time::sleep(LET_GO_AFTER).await;
            // Work nobody waits to see: on a thread of its own, at a lower priority.
            let let_go = dcs_console::background::run("dcs-let-go", || {
                use dcs_console::resident::{own_code, release_own_code};
                release_own_code().map(|r| (r.before, own_code().unwrap_or_default()))
            });
            match let_go.await {
                Ok(Ok((before, after))) => tracing::info!(
                    of_kib = before.size_kib,
                    resident_kib = before.resident_kib,
                    after_kib = after.resident_kib,
                    "let go of the code start-up ran"
                ),
                Ok(Err(e)) => tracing::info!(error = %e, "the kernel did not take back the code start-up ran"),
                Err(e) => tracing::info!(error = %e, "no thread to let go of the code start-up ran"),
            }
        });
    });
}

pub fn run() {
    // Before anything starts a thread or WebKit: how the web view draws (see the module).
    rendering::choose();
    init_logging();
    // The audit log names the app as the program that wrote (dcs_console::audit).
    dcs_console::audit::set_source("app");
    // The updater's HTTP client has no TLS crypto provider of its own: without one installed
    // for the process, its download panics (src/updates.rs).
    let _ = rustls::crypto::ring::default_provider().install_default();
    // One app per data folder: a second launch hands its link to the first and ends here,
    // before a window or the web view exists.
    let args: Vec<String> = std::env::args().collect();
    let Some(primary) = launch::claim(&args) else {
        tracing::info!("the console already runs on this data folder: it was handed this launch");
        return;
    };
    let builder = specta_builder();
    let app = tauri::Builder::default();
    #[cfg(debug_assertions)]
    let app = e2e_ipc_log::install(app);
    app.plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_clipboard_manager::init())
        // The window's size, position and maximised state, as it was last (saved whenever it
        // moves or is resized, so a crash keeps them too).
        .plugin(tauri_plugin_window_state::Builder::new().with_state_flags(window::state_flags()).build())
        // Updates of the app: used from Rust only (src/updates.rs); the page has no permission
        // of the plugin's own commands.
        .plugin(tauri_plugin_updater::Builder::new().build())
        .invoke_handler(builder.invoke_handler())
        .manage(picked::Picked::default())
        .manage(downlink_watch::Watches::default())
        .manage(window::Changes::default())
        .manage(tray::Quitting::default())
        .manage(updates::Updates::default())
        .on_window_event(|window, event| match event {
            tauri::WindowEvent::DragDrop(tauri::DragDropEvent::Drop { paths, .. }) => {
                picked::dropped(window.app_handle(), paths);
            }
            tauri::WindowEvent::Moved(_) | tauri::WindowEvent::Resized(_) => window::changed(window.app_handle()),
            tauri::WindowEvent::CloseRequested { api, .. } => tray::close_requested(window, api),
            _ => {}
        })
        .on_page_load(|_, page| {
            if page.event() == tauri::webview::PageLoadEvent::Finished {
                let_go_of_start_up_code();
            }
        })
        .on_webview_event(|webview, event| {
            if let tauri::WebviewEvent::DragDrop(tauri::DragDropEvent::Drop { paths, .. }) = event {
                picked::dropped(webview.app_handle(), paths);
            }
        })
        .setup(move |app| {
            builder.mount_events(app);
            launch::start(app.handle(), &args, primary);
            #[cfg(debug_assertions)]
            picked::e2e_drops(app.handle());
            #[cfg(debug_assertions)]
            tray::e2e_close(app.handle());
            let state = tauri::async_runtime::block_on(state::AppState::start()).map_err(|e| e.message)?;
            app.manage(state);
            fleet_worker::spawn(app.handle().clone());
            events::forward_fleet(app.handle().clone());
            notify::spawn_rollout_notices(app.handle().clone());
            tray::create(app.handle());
            tray::update(app.handle());
            updates::check_at_start(app.handle().clone());
            Ok(())
        })
        .run(tauri::generate_context!())
        .expect("the desktop shell could not start");
}
