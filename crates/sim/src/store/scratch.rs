//! The folder of a temporary store, and the removal of those whose simulator died.
//!
//! A simulator without a data file keeps its state in a folder of the system's temporary folder
//! (`TMPDIR`), removed when the store is dropped. A process that is killed never drops it, and a
//! million-state fleet's folder holds a gigabyte, so:
//!
//! - each folder holds `owner.lock`, locked (`flock`) for as long as its store lives; the kernel
//!   lets go of the lock when the process ends, however it ends;
//! - each new temporary store first removes every `dcs-sim-*` folder whose lock it can take: its
//!   owner is gone. A folder whose lock is held, or that has no lock file, is left alone;
//! - a process about to end on a signal removes its own folders at once
//!   ([`remove_this_process_folders`]), even while a store is still being seeded.
//!
//! A folder is made under a name the sweep does not look at and renamed to `dcs-sim-*` only once
//! its lock is held, so no sweep can take the lock of a folder being made.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Prefix of the folders the sweep may remove.
const PREFIX: &str = "dcs-sim-";
/// Prefix of a folder being made, not yet locked.
const MAKING: &str = ".dcs-sim-making-";
const LOCK: &str = "owner.lock";

/// The folders of this process's live temporary stores.
static OURS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary store's folder: locked while it lives, removed when dropped.
pub(crate) struct Scratch {
    path: PathBuf,
    _lock: File,
}

impl Scratch {
    /// Removes the folders of dead simulators in `parent`, then makes a new one there.
    pub(crate) fn create_in(parent: &Path) -> std::io::Result<Scratch> {
        let removed = sweep(parent);
        if removed > 0 {
            tracing::info!(removed, parent = %parent.display(), "removed the temporary stores of simulators that are gone");
        }
        let making = tempfile::Builder::new().prefix(MAKING).tempdir_in(parent)?;
        let lock = File::create(making.path().join(LOCK))?;
        if !try_lock(&lock)? {
            return Err(std::io::Error::other("a new temporary store's lock is held by another process"));
        }
        let name = making.path().file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let path = parent.join(format!("{PREFIX}{}", name.trim_start_matches(MAKING)));
        std::fs::rename(making.path(), &path)?;
        // Renamed: the folder is ours to remove from now on, under its new name.
        let _ = making.keep();
        OURS.lock().unwrap_or_else(|e| e.into_inner()).push(path.clone());
        Ok(Scratch { path, _lock: lock })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        OURS.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| p != &self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Removes the folders of every temporary store of this process, for a process about to end on
/// a signal: a store still being seeded is never dropped. Its files are unlinked under any
/// thread still writing them, which the exit ends.
pub fn remove_this_process_folders() {
    for path in OURS.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
        let _ = std::fs::remove_dir_all(path);
    }
}

/// Removes every `dcs-sim-*` folder of `parent` whose lock can be taken; returns how many.
fn sweep(parent: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(parent) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let is_ours = entry.file_name().to_str().is_some_and(|n| n.starts_with(PREFIX));
        if !is_ours || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        // No lock file: not a folder this code made, or not one it can judge. Left alone.
        let Ok(lock) = File::open(entry.path().join(LOCK)) else { continue };
        if try_lock(&lock).unwrap_or(false) && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Takes `file`'s exclusive lock without waiting: false if another open file holds it.
#[cfg(unix)]
fn try_lock(file: &File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor `file` owns for the call's length.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Elsewhere no lock is taken, so no folder is ever judged abandoned.
#[cfg(not(unix))]
fn try_lock(_: &File) -> std::io::Result<bool> {
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    /// A folder whose owner is gone is removed by the next store; a live one, a folder without
    /// a lock file, and a folder of another name are kept.
    #[test]
    fn a_new_store_removes_only_the_folders_no_live_store_holds() {
        let parent = tempfile::tempdir().unwrap();
        let live = Scratch::create_in(parent.path()).unwrap();
        // A dead owner's folder: its lock file is there, and no open file holds the lock.
        let dead = parent.path().join("dcs-sim-dead");
        std::fs::create_dir_all(dead.join("files")).unwrap();
        File::create(dead.join(LOCK)).unwrap();
        std::fs::write(dead.join("sim.sqlite"), b"x").unwrap();
        let unlocked = parent.path().join("dcs-sim-nolock");
        std::fs::create_dir(&unlocked).unwrap();
        let other = parent.path().join("something-else");
        std::fs::create_dir(&other).unwrap();
        File::create(other.join(LOCK)).unwrap();

        let second = Scratch::create_in(parent.path()).unwrap();
        let left = names(parent.path());
        assert!(!left.contains(&"dcs-sim-dead".to_owned()), "{left:?}");
        for kept in [live.path(), second.path(), &unlocked, &other] {
            assert!(kept.is_dir(), "{} removed: {left:?}", kept.display());
        }
        assert_eq!(left.len(), 4, "{left:?}");
        assert!(second.path().join(LOCK).is_file());

        // A dropped store takes its folder with it, and its entry in this process's list.
        let path = second.path().to_owned();
        drop(second);
        assert!(!path.exists());
        assert!(!OURS.lock().unwrap().contains(&path));
        // (remove_this_process_folders would take the folders of the tests running beside this
        // one: `dcs sim`'s tests check it, stopped while seeding.)
    }
}
