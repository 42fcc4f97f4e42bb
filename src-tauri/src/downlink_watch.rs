//! Watches of downlinks shown in the UI. The service tells a downlink's status only when asked,
//! so Rust asks, at the pace the screens asked before (a list every 2 s, a detail every second,
//! only while something shown is in progress), and pushes to the web view only what changed, as
//! [`DownlinkChanged`] events; the UI starts a watch when it shows a downlink in progress and
//! stops it when it no longer does. Each ask goes through the same command the screen calls
//! (`list_downlinks`, `get_downlink`), so every status seen is recorded the same way.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use dcs_console::downlinks::{DownlinkDetail, DownlinkKind, DownlinkPage, DownlinkPageRequest};
use serde::Serialize;
use tauri::{AppHandle, Manager, State};
use tauri_specta::Event;

use crate::commands::downlinks::{get_downlink, list_downlinks};
use crate::error::CommandError;

/// How often a watched list is asked again (the pace of the screen's former refresh).
pub const LIST_EVERY: Duration = Duration::from_millis(2000);
/// How often a watched detail is asked again.
pub const DETAIL_EVERY: Duration = Duration::from_millis(1000);

/// What a watch saw change: the list's pages (as one) or the detail, or why asking failed (the
/// watch goes on asking).
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub struct DownlinkChanged {
    /// The watch, as `watch_downlinks` or `watch_downlink` answered it.
    pub watch: u32,
    pub list: Option<DownlinkPage>,
    pub detail: Option<DownlinkDetail>,
    pub error: Option<CommandError>,
}

/// The watches running, by id.
#[derive(Default)]
pub struct Watches {
    last: AtomicU32,
    running: Mutex<HashMap<u32, tauri::async_runtime::JoinHandle<()>>>,
}

impl Watches {
    fn start(&self, watch: impl FnOnce(u32) -> tauri::async_runtime::JoinHandle<()>) -> u32 {
        let id = self.last.fetch_add(1, Ordering::Relaxed) + 1;
        let handle = watch(id);
        self.running.lock().unwrap_or_else(|p| p.into_inner()).insert(id, handle);
        id
    }

    fn stop(&self, id: u32) -> bool {
        match self.running.lock().unwrap_or_else(|p| p.into_inner()).remove(&id) {
            Some(h) => {
                h.abort();
                true
            }
            None => false,
        }
    }
}

/// Asks `fetch` every `every` and hands each answer that differs from the one before (by `key`;
/// the first always) to `send`, until an answer is `done` (sent, then the watch ends).
pub async fn poll_changes<T, K: PartialEq, F: Future<Output = T>>(
    every: Duration,
    mut fetch: impl FnMut() -> F,
    key: impl Fn(&T) -> K,
    done: impl Fn(&T) -> bool,
    mut send: impl FnMut(T),
) {
    let mut last: Option<K> = None;
    loop {
        tokio::time::sleep(every).await;
        let answer = fetch().await;
        let (k, finished) = (key(&answer), done(&answer));
        if last.as_ref() != Some(&k) {
            last = Some(k);
            send(answer);
        }
        if finished {
            return;
        }
    }
}

fn emit(app: &AppHandle, event: DownlinkChanged) {
    if let Err(e) = event.emit(app) {
        tracing::warn!(error = %e, "the downlink event could not be sent");
    }
}

/// What tells two answers apart (the service clock of a detail is left out: it moves every time).
fn key<T: Serialize>(r: &Result<T, CommandError>) -> String {
    match r {
        Ok(v) => serde_json::to_string(v).unwrap_or_default(),
        Err(e) => format!("error {}", serde_json::to_string(e).unwrap_or_default()),
    }
}

/// The pages a list shows (the first `pages` from `request`'s), asked again as the screen would.
async fn list_pages(app: &AppHandle, request: &DownlinkPageRequest, pages: u32) -> Result<DownlinkPage, CommandError> {
    let mut items = Vec::new();
    let mut next = None;
    for _ in 0..pages.max(1) {
        let page = list_downlinks(app.state(), DownlinkPageRequest { next: next.clone(), ..request.clone() }).await?;
        items.extend(page.items);
        next = page.next;
        if next.is_none() {
            break;
        }
    }
    Ok(DownlinkPage { items, next })
}

/// Watches the first `pages` pages of a list from `request` (its first page's) until every
/// downlink shown is final; answers the watch's id for `unwatch_downlinks`.
#[tauri::command]
#[specta::specta]
pub fn watch_downlinks(app: AppHandle, watches: State<'_, Watches>, request: DownlinkPageRequest, pages: u32) -> u32 {
    watches.start(|watch| {
        tauri::async_runtime::spawn(async move {
            poll_changes(
                LIST_EVERY,
                || list_pages(&app, &request, pages),
                key,
                |r| r.as_ref().is_ok_and(|p| p.items.iter().all(|d| d.is_final)),
                |r| {
                    let (list, error) = split(r);
                    emit(&app, DownlinkChanged { watch, list, detail: None, error });
                },
            )
            .await;
        })
    })
}

/// Watches one downlink until it is final; answers the watch's id for `unwatch_downlinks`.
#[tauri::command]
#[specta::specta]
pub fn watch_downlink(app: AppHandle, watches: State<'_, Watches>, kind: DownlinkKind, id: String) -> u32 {
    watches.start(|watch| {
        tauri::async_runtime::spawn(async move {
            poll_changes(
                DETAIL_EVERY,
                || get_downlink(app.state(), kind, id.clone()),
                |r| key(&r.as_ref().map(|d| (&d.downlink, &d.observed)).map_err(Clone::clone)),
                |r| r.as_ref().is_ok_and(|d| d.downlink.is_final),
                |r| {
                    let (detail, error) = split(r);
                    emit(&app, DownlinkChanged { watch, list: None, detail, error });
                },
            )
            .await;
        })
    })
}

/// Stops a watch; answers whether it was running (one that ended by itself is not).
#[tauri::command]
#[specta::specta]
pub fn unwatch_downlinks(watches: State<'_, Watches>, watch: u32) -> bool {
    watches.stop(watch)
}

fn split<T>(r: Result<T, CommandError>) -> (Option<T>, Option<CommandError>) {
    match r {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e)),
    }
}
