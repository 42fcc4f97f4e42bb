//! Desktop notifications, through the OS's notification service (on Linux the freedesktop
//! `org.freedesktop.Notifications` on the session bus), of what `dcs_console::notices` words:
//! rollout moves (the fleet service's `moves`), downlinks the console sent reaching a final
//! status (watched here until then), uploads finished while the window was not focused.
//!
//! Clicking one opens its item: the notification carries the freedesktop `default` action, and
//! a click hands its link to the web view the way a second launch does (`launch::open`). The
//! Tauri notification plugin is not used: on the desktop it shows a notification and drops it,
//! so a click reaches nobody (its `onAction` is mobile only); `notify-rust`, which it wraps, is
//! used directly instead, keeping the handle to wait for the click.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use dcs_console::downlinks::{self, DownlinkKind};
use dcs_console::notices::{self, Notice, NoticeSettings};
use dcs_console::session::Session;
use tauri::{AppHandle, Manager};

use crate::state::AppState;

/// Notifications waited on for a click at once (each holds a thread until it closes); past it,
/// a notification is shown without.
const MAX_WAITING: usize = 16;
static WAITING: AtomicUsize = AtomicUsize::new(0);

/// Longest summary and body shown (a service's names can be anything).
const MAX_SUMMARY: usize = 120;
const MAX_BODY: usize = 400;

/// How often a sent downlink is asked for its status, and for how long at most.
const DOWNLINK_EVERY: Duration = Duration::from_secs(3);
const DOWNLINK_FOR: Duration = Duration::from_secs(24 * 3600);

/// The notification settings now (the defaults without a fleet database).
pub fn settings(app: &AppHandle) -> NoticeSettings {
    app.state::<AppState>().fleet().map(|f| NoticeSettings::load(f.db())).unwrap_or_default()
}

/// Raises `notice` unless its kind is turned off; returns at once.
pub fn raise(app: &AppHandle, notice: Notice) {
    if !settings(app).allows(notice.topic) {
        return;
    }
    let app = app.clone();
    if let Err(e) = std::thread::Builder::new().name("notification".into()).spawn(move || show(&app, notice)) {
        tracing::warn!(error = %e, "no thread for a notification");
    }
}

/// Cut to `max` characters, with an ellipsis when cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// The body as plain text to a server that may read it as markup (the spec's `body-markup`).
fn plain(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn show(app: &AppHandle, notice: Notice) {
    let mut n = notify_rust::Notification::new();
    n.appname("Device Connectivity Console")
        .summary(&clip(&notice.summary, MAX_SUMMARY))
        .body(&plain(&clip(&notice.body, MAX_BODY)));
    #[cfg(all(unix, not(target_os = "macos")))]
    n.action("default", "Open").hint(notify_rust::Hint::DesktopEntry("dcs-console".into()));
    let handle = match n.show() {
        Ok(h) => h,
        Err(e) => {
            tracing::warn!(error = %e, "the notification could not be shown");
            return;
        }
    };
    tracing::info!(summary = %notice.summary, "notification shown");
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        if WAITING.fetch_add(1, Ordering::SeqCst) < MAX_WAITING {
            handle.wait_for_action(|action| {
                if action == "default" {
                    crate::launch::open(app, notice.open.clone());
                }
            });
        }
        WAITING.fetch_sub(1, Ordering::SeqCst);
    }
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    let _ = (handle, app, &WAITING, Ordering::SeqCst);
}

/// Raises a notification for each rollout move the fleet service tells of, as long as the app runs.
pub fn spawn_rollout_notices(app: AppHandle) {
    let Ok(fleet) = app.state::<AppState>().fleet().cloned() else { return };
    let mut moves = fleet.moves();
    tauri::async_runtime::spawn(async move {
        loop {
            let moved = match moves.recv().await {
                Ok(m) => m,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "rollout moves came faster than notifications");
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            match dcs_console::fleet::rollout::get(fleet.db(), &moved.rollout) {
                Ok(view) => {
                    if let Some(n) = notices::of_rollout(&view, &moved.outcome) {
                        raise(&app, n);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "a moved rollout could not be read"),
            }
        }
    });
}

/// Asks the service for a sent downlink's status until it is final (or a day has passed), then
/// notifies. Uses the session it was sent with, so a switch of customer meanwhile changes nothing.
pub fn watch_sent(app: &AppHandle, session: std::sync::Arc<Session>, kind: DownlinkKind, id: String) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let started = Instant::now();
        while started.elapsed() < DOWNLINK_FOR {
            tokio::time::sleep(DOWNLINK_EVERY).await;
            match downlinks::get(&session.client, kind, &id).await {
                Ok(d) if d.is_final => {
                    raise(&app, notices::of_downlink(&d));
                    return;
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(error = %e, downlink = %id, "a sent downlink's status could not be read"),
            }
        }
    });
}

/// An upload finished: notifies when the window is not focused (the operator is elsewhere).
pub fn upload_finished(app: &AppHandle, package: uuid::Uuid, what: &str, name: &str) {
    let focused = app.get_webview_window("main").and_then(|w| w.is_focused().ok()).unwrap_or(false);
    if !focused {
        raise(app, notices::of_upload(package, what, name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_cut_and_markup_is_shown_as_text() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "ab…");
        assert_eq!(plain("<a href=x>&</a>"), "&lt;a href=x&gt;&amp;&lt;/a&gt;");
    }
}
