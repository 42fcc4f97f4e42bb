//! Which local files the commands may touch: only those the user chose in this run, through a
//! native dialog opened by Rust or a drop on the window reported by the OS.
//!
//! The web view is treated as hostile: a page that could call `hash_file("/etc/passwd")` or
//! `download_firmware_file(.., "~/.bashrc")` would read or overwrite anything the user can. So the
//! path a command gets from the page is only a handle: it must be one Rust saw the user pick.
//! Files to read (open dialog, drop) and places to write (save dialog) are kept apart: a file
//! dropped on the window is never overwritten, a save target is never read back.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::DialogExt;

use crate::error::CommandError;

/// How many picks of each kind are remembered (the oldest are forgotten first).
const REMEMBERED: usize = 256;

/// What the user may do with a picked path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Chosen in an open dialog or dropped on the window: may be read.
    Read,
    /// Chosen in a save dialog: may be written (created or replaced).
    Write,
}

/// The paths picked in this run.
#[derive(Debug, Default)]
pub struct Picked {
    read: Mutex<VecDeque<PathBuf>>,
    write: Mutex<VecDeque<PathBuf>>,
}

impl Picked {
    fn list(&self, what: Use) -> &Mutex<VecDeque<PathBuf>> {
        match what {
            Use::Read => &self.read,
            Use::Write => &self.write,
        }
    }

    /// Records a path the user picked (called only with what a native dialog or the OS answered).
    pub fn allow(&self, what: Use, path: PathBuf) {
        let mut list = self.list(what).lock().unwrap();
        list.retain(|p| p != &path);
        if list.len() >= REMEMBERED {
            list.pop_front();
        }
        list.push_back(path);
    }

    /// The path `path` from the page, if the user picked it for `what` in this run; else a
    /// refusal naming `field`, before anything is read or written.
    pub fn check(&self, what: Use, field: &str, path: &str) -> Result<PathBuf, CommandError> {
        if path.trim().is_empty() {
            return Err(CommandError::invalid(field, "must name a file"));
        }
        let path = PathBuf::from(path);
        if self.list(what).lock().unwrap().iter().any(|p| p == &path) {
            return Ok(path);
        }
        let how = match what {
            Use::Read => "chosen with \"Choose…\" or dropped on the window",
            Use::Write => "chosen in the save dialog",
        };
        tracing::warn!(field, path = %path.display(), ?what, "refused a path the user did not pick");
        Err(CommandError::invalid(
            field,
            format!(
                "must be a file you {how} in this run of the app; {} was not, so nothing was read or written",
                path.display()
            ),
        ))
    }
}

/// A filter of a file dialog: a label and the extensions it shows (without the dot).
#[derive(Debug, Clone, Deserialize, Serialize, specta::Type)]
pub struct FileFilter {
    pub name: String,
    pub extensions: Vec<String>,
}

/// What a file dialog shows.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct FileDialog {
    pub title: String,
    /// For a save dialog: the name proposed.
    pub default_name: Option<String>,
    #[serde(default)]
    pub filters: Vec<FileFilter>,
}

fn builder<R: Runtime>(app: &AppHandle<R>, d: &FileDialog) -> tauri_plugin_dialog::FileDialogBuilder<R> {
    let mut b = app.dialog().file().set_title(&d.title);
    if let Some(window) = app.get_webview_window("main") {
        b = b.set_parent(&window);
    }
    for f in &d.filters {
        let ext: Vec<&str> = f.extensions.iter().map(String::as_str).collect();
        b = b.add_filter(&f.name, &ext);
    }
    if let Some(name) = d.default_name.as_deref().map(safe_default_name).filter(|n| !n.is_empty()) {
        b = b.set_file_name(name);
    }
    b
}

/// A name from the service proposed in a save dialog: its last path component, without control
/// characters; empty when nothing usable is left (`..`, `/`).
pub fn safe_default_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    let clean: String = last.chars().filter(|c| !c.is_control()).collect();
    if clean.trim_matches('.').is_empty() {
        String::new()
    } else {
        clean
    }
}

async fn ask(pick: impl FnOnce(tokio::sync::oneshot::Sender<Option<PathBuf>>)) -> Option<PathBuf> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    pick(tx);
    rx.await.ok().flatten()
}

/// Opens a native dialog to choose a file to read; answers its path (null when cancelled),
/// which the transfer commands then accept.
#[tauri::command]
#[specta::specta]
pub async fn pick_file(
    app: AppHandle,
    picked: tauri::State<'_, Picked>,
    dialog: FileDialog,
) -> Result<Option<String>, CommandError> {
    let b = builder(&app, &dialog);
    let path = ask(|tx| b.pick_file(move |p| drop(tx.send(p.and_then(|p| p.into_path().ok()))))).await;
    Ok(path.map(|p| {
        picked.allow(Use::Read, p.clone());
        p.display().to_string()
    }))
}

/// Opens a native save dialog; answers the chosen path (null when cancelled), which the
/// download and export commands then accept as their target.
#[tauri::command]
#[specta::specta]
pub async fn pick_save_file(
    app: AppHandle,
    picked: tauri::State<'_, Picked>,
    dialog: FileDialog,
) -> Result<Option<String>, CommandError> {
    let b = builder(&app, &dialog);
    let path = ask(|tx| b.save_file(move |p| drop(tx.send(p.and_then(|p| p.into_path().ok()))))).await;
    Ok(path.map(|p| {
        picked.allow(Use::Write, p.clone());
        p.display().to_string()
    }))
}

/// Records files the OS reports dropped on the window.
pub fn dropped<R: Runtime>(app: &AppHandle<R>, paths: &[PathBuf]) {
    if let Some(picked) = app.try_state::<Picked>() {
        for p in paths {
            picked.allow(Use::Read, p.clone());
        }
    }
}

/// End-to-end tests cannot drive a native dialog or an OS drop, so they send the drop event the
/// OS would (from the page). Only in debug builds started with `DCS_E2E_DROPS=1` are such events
/// taken as drops; a release build has no such path.
#[cfg(debug_assertions)]
pub fn e2e_drops<R: Runtime>(app: &AppHandle<R>) {
    use tauri::Listener;
    if std::env::var("DCS_E2E_DROPS").as_deref() != Ok("1") {
        return;
    }
    tracing::warn!("DCS_E2E_DROPS=1: drop events sent by the page are taken as drops (a test build only)");
    let handle = app.clone();
    app.listen_any("tauri://drag-drop", move |event| {
        #[derive(Deserialize)]
        struct Payload {
            paths: Vec<PathBuf>,
        }
        if let Ok(p) = serde_json::from_str::<Payload>(event.payload()) {
            dropped(&handle, &p.paths);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn refused(r: Result<PathBuf, CommandError>) -> String {
        serde_json::to_string(&r.expect_err("must be refused")).unwrap()
    }

    #[test]
    fn a_path_the_user_did_not_pick_is_refused_naming_the_field() {
        let picked = Picked::default();
        for path in ["/etc/passwd", "~/.ssh/id_rsa", "/home/u/.bashrc"] {
            let e = refused(picked.check(Use::Read, "path", path));
            assert!(e.contains("\"path\"") && e.contains("in this run of the app") && e.contains(path), "{e}");
            let e = refused(picked.check(Use::Write, "target", path));
            assert!(e.contains("\"target\"") && e.contains("save dialog"), "{e}");
        }
        assert!(refused(picked.check(Use::Read, "path", " ")).contains("must name a file"));
    }

    #[test]
    fn reads_and_writes_are_kept_apart_and_exact() {
        let picked = Picked::default();
        picked.allow(Use::Read, PathBuf::from("/data/fw.bin"));
        picked.allow(Use::Write, PathBuf::from("/data/out.bin"));
        assert_eq!(picked.check(Use::Read, "path", "/data/fw.bin").unwrap(), Path::new("/data/fw.bin"));
        assert!(picked.check(Use::Write, "target", "/data/out.bin").is_ok());
        // A dropped file is never a place to write; a save target is never read back.
        refused(picked.check(Use::Write, "target", "/data/fw.bin"));
        refused(picked.check(Use::Read, "path", "/data/out.bin"));
        // Only the exact path: not a neighbour, not one reached through `..`.
        refused(picked.check(Use::Read, "path", "/data/fw.bin/../../etc/passwd"));
        refused(picked.check(Use::Read, "path", "/data/fw.bi"));
    }

    #[tokio::test]
    async fn hash_file_reads_nothing_the_user_did_not_pick() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let picked = Picked::default();
        let transfers = dcs_console::transfers::Transfers::new();
        let events = Arc::new(AtomicUsize::new(0));
        let seen = events.clone();
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        for path in ["/etc/passwd".to_owned(), format!("{home}/.ssh/id_rsa")] {
            let seen = seen.clone();
            let e = crate::commands::transfers::hash_picked(&picked, &transfers, &path, move |_| {
                seen.fetch_add(1, Ordering::SeqCst);
            })
            .await
            .expect_err("an unpicked path must be refused");
            assert_eq!(e.field.as_deref(), Some("path"));
            assert!(e.message.contains("in this run of the app"), "{}", e.message);
        }
        // Refused before a job started: no progress event, nothing running.
        assert_eq!(events.load(Ordering::SeqCst), 0);
        assert!(transfers.running().is_empty());

        // The same file once picked is hashed.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("fw.bin");
        std::fs::write(&file, b"abc").unwrap();
        picked.allow(Use::Read, file.clone());
        let got = crate::commands::transfers::hash_picked(&picked, &transfers, &file.display().to_string(), |_| {})
            .await
            .unwrap();
        assert_eq!(got.size, 3);
        assert_eq!(got.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn only_the_latest_picks_are_remembered() {
        let picked = Picked::default();
        for i in 0..REMEMBERED + 1 {
            picked.allow(Use::Read, PathBuf::from(format!("/f/{i}")));
        }
        refused(picked.check(Use::Read, "path", "/f/0"));
        assert!(picked.check(Use::Read, "path", &format!("/f/{REMEMBERED}")).is_ok());
    }

    #[test]
    fn names_from_the_service_proposed_for_saving_lose_their_folders() {
        assert_eq!(safe_default_name("fw-1.0.bin"), "fw-1.0.bin");
        assert_eq!(safe_default_name("../../.bashrc"), ".bashrc");
        assert_eq!(safe_default_name("a/b\\c.bin"), "c.bin");
        assert_eq!(safe_default_name(".."), "");
        assert_eq!(safe_default_name("x\u{1b}[2J\n.bin"), "x[2J.bin");
    }
}
