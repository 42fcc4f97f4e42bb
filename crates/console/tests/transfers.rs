//! Transfer jobs against a real simulator over HTTP on a loopback port: hashing, uploads and
//! downloads with paced progress, cancelling by job id, and what a cancelled job leaves behind
//! (nothing, on the service or on disk).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dcs_api::files::{FileKind, UploadOptions};
use dcs_api::firmware::NewPackage;
use dcs_api::model::FirmwarePackage;
use dcs_api::{Client, ErrorCode};
use dcs_console::transfers::{self, JobKind, Phase, TransferProgress, Transfers};
use dcs_sim::faults::Faults;
use dcs_sim::fixtures::sha256_hex;
use dcs_sim::store::firmware::{FileContent, FileKind as StoredKind};
use dcs_sim::store::ModuleQuery;
use dcs_sim::{RunningSim, SimOptions, Simulator};
use uuid::Uuid;

mod common;

struct Env {
    sim: Simulator,
    _running: RunningSim,
    client: Client,
    dir: tempfile::TempDir,
}

async fn env() -> Env {
    let (sim, running, client) = common::start(SimOptions { devices_per_client: 5, ..Default::default() }).await;
    Env { sim, _running: running, client, dir: tempfile::tempdir().unwrap() }
}

impl Env {
    async fn package(&self, version: &str) -> FirmwarePackage {
        let owner = self.sim.demo_key().client_id;
        let module =
            self.sim.store().list_modules(&ModuleQuery { owner, limit: 10, ..Default::default() }).unwrap().remove(0);
        let new = NewPackage::new(module.device_specification_id, module.id, version);
        self.client.firmware().create_package(&new).await.unwrap()
    }

    /// The bytes the simulator stored for a package's file, if any.
    fn stored(&self, package: Uuid, kind: StoredKind) -> Option<Vec<u8>> {
        let file = self.sim.store().file(package, kind).unwrap()?;
        Some(match file.content {
            FileContent::Inline(b) => b,
            FileContent::Path(p) => std::fs::read(self.sim.store().files_dir().join(p)).unwrap(),
        })
    }

    /// Files in the simulator's upload folder that belong to `package` (complete or partial).
    fn stored_paths(&self, package: Uuid) -> Vec<String> {
        std::fs::read_dir(self.sim.store().files_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&package.to_string()))
            .collect()
    }
}

/// A file of pseudo-random bytes (not compressible, not repeating).
fn write_random_file(path: &Path, size: usize) -> Vec<u8> {
    dcs_sim::fixtures::write_random_file(path, size).unwrap()
}

type Events = Arc<Mutex<Vec<TransferProgress>>>;

fn recorder() -> (Events, impl Fn(TransferProgress) + Send + Sync + 'static) {
    let events: Events = Default::default();
    let sink = events.clone();
    (events, move |e| sink.lock().unwrap().push(e))
}

/// Each phase's events rise strictly and the phase ends at `total`; returns the phases seen.
fn check_phases(events: &[TransferProgress], total: u64) -> Vec<Phase> {
    let mut phases: Vec<Phase> = Vec::new();
    for e in events {
        if phases.last() != Some(&e.phase) {
            assert!(!phases.contains(&e.phase), "phases do not come back: {events:?}");
            phases.push(e.phase);
        }
    }
    for phase in &phases {
        let of: Vec<_> = events.iter().filter(|e| e.phase == *phase).collect();
        assert!(of.windows(2).all(|w| w[0].done < w[1].done), "{phase:?} rises: {of:?}");
        assert!(of.iter().all(|e| e.done <= e.total || e.total == 0), "{of:?}");
        let last = of.last().unwrap();
        assert_eq!((last.done, last.total), (total, total), "{phase:?} ends at the total");
        assert_eq!(last.eta_seconds, Some(0.0));
    }
    phases
}

#[tokio::test]
async fn hashing_reports_progress_up_to_the_size_and_matches_sha2() {
    let env = env().await;
    let path = env.dir.path().join("fw-hash.bin");
    let bytes = write_random_file(&path, 5 * 1024 * 1024 + 7);
    let jobs = Transfers::new();
    let (events, sink) = recorder();

    let hashed = jobs.hash(&path, sink).await.unwrap();
    assert_eq!(hashed.sha256, sha256_hex(&bytes));
    assert_eq!(hashed.size, bytes.len() as u64);
    assert_eq!(hashed.file_name, "fw-hash.bin");

    let events = events.lock().unwrap().clone();
    let first = &events[0];
    assert_eq!(
        (first.kind, first.phase, first.done, first.total),
        (JobKind::Hash, Phase::Hashing, 0, bytes.len() as u64)
    );
    assert!(events.iter().all(|e| e.job == first.job));
    assert_eq!(check_phases(&events, bytes.len() as u64), [Phase::Hashing]);
    // The job is gone once done: nothing to cancel.
    assert!(jobs.running().is_empty());
    assert!(!jobs.cancel(first.job));

    // A missing file: the file's error, and no job left behind.
    let err = jobs.hash(&env.dir.path().join("missing.bin"), |_| {}).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::LocalFile);
    assert!(jobs.running().is_empty());
}

#[tokio::test]
async fn a_multi_megabyte_firmware_file_lands_byte_for_byte_and_comes_back() {
    let env = env().await;
    let package = env.package("77.1.0").await;
    let path = env.dir.path().join("fw-77.1.0.bin");
    let size = 6 * 1024 * 1024 + 4321;
    let bytes = write_random_file(&path, size);
    let jobs = Transfers::new();

    let (events, sink) = recorder();
    let attrs = jobs
        .upload(&env.client, package.id, FileKind::Firmware, &path, &UploadOptions::default(), None, sink)
        .await
        .unwrap();
    assert_eq!(attrs.name, "fw-77.1.0.bin");
    assert_eq!(attrs.file_type.as_deref(), Some("FIRMWARE"));
    assert_eq!(env.stored(package.id, StoredKind::Firmware).unwrap(), bytes, "the service holds the same bytes");

    // One read: hashed while sent (the checksum after the file), no checksum pass.
    let events = events.lock().unwrap().clone();
    assert_eq!(check_phases(&events, size as u64), [Phase::Uploading]);
    assert!(events.iter().all(|e| e.job == events[0].job && e.kind == JobKind::UploadFirmware));
    assert!(events.iter().all(|e| e.rate_per_sec >= 0.0 && e.rate_per_sec.is_finite()));
    assert!(jobs.running().is_empty());

    // Down again to a chosen place, with its checksum.
    let target = env.dir.path().join("saved").join("copy.bin");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    let (events, sink) = recorder();
    let got = jobs.download(&env.client, package.id, FileKind::Firmware, &target, sink).await.unwrap();
    assert_eq!(got.sha256, sha256_hex(&bytes));
    assert_eq!(got.size, size as u64);
    assert_eq!(got.file_name.as_deref(), Some("fw-77.1.0.bin"));
    assert_eq!(got.path, target.display().to_string());
    assert_eq!(std::fs::read(&target).unwrap(), bytes);
    let events = events.lock().unwrap().clone();
    assert_eq!(events[0].kind, JobKind::DownloadFirmware);
    assert_eq!(check_phases(&events, size as u64), [Phase::Downloading]);
    assert!(jobs.running().is_empty());
}

#[tokio::test]
async fn a_second_firmware_file_is_refused_before_anything_is_read_or_sent() {
    let env = env().await;
    let package = env.package("77.2.0").await;
    let path = env.dir.path().join("fw-77.2.0.bin");
    let bytes = write_random_file(&path, 200_000);
    let jobs = Transfers::new();
    jobs.upload(&env.client, package.id, FileKind::Firmware, &path, &UploadOptions::default(), None, |_| {})
        .await
        .unwrap();

    // The second names a file that does not exist: refused for the package's state, not the
    // file's, so it was refused before the file was opened (let alone sent).
    let (events, sink) = recorder();
    let options = UploadOptions { file_name: Some("fw-other.bin".into()), ..Default::default() };
    let missing = env.dir.path().join("not-there.bin");
    let err =
        jobs.upload(&env.client, package.id, FileKind::Firmware, &missing, &options, None, sink).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict, "{err}");
    assert!(err.to_string().contains("uploaded once and never replaced"), "{err}");
    assert!(err.to_string().contains("fw-77.2.0.bin"), "names the file the package has: {err}");
    assert!(events.lock().unwrap().iter().all(|e| e.done == 0), "nothing hashed or sent");
    assert_eq!(env.stored(package.id, StoredKind::Firmware).unwrap(), bytes, "the first one stays");
    assert!(jobs.running().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_cancelled_by_its_job_id_leaves_nothing_on_the_service() {
    let env = env().await;
    let package = env.package("77.3.0").await;
    let path = env.dir.path().join("fw-77.3.0.bin");
    let size = 24 * 1024 * 1024;
    write_random_file(&path, size);
    env.client.firmware().package(package.id, &[]).await.unwrap(); // the token is fetched before the slowdown

    // The simulator waits before it reads a request: the body stalls once the socket buffers
    // are full, so the cancel lands while the upload is under way.
    env.sim.set_faults(Faults { latency_ms: 1500, ..Default::default() });
    let jobs = Transfers::new();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<TransferProgress>();
    let running = {
        let (jobs, client, path) = (jobs.clone(), env.client.clone(), path.clone());
        tokio::spawn(async move {
            jobs.upload(&client, package.id, FileKind::Firmware, &path, &UploadOptions::default(), None, move |e| {
                let _ = tx.send(e);
            })
            .await
        })
    };
    let mut last = None;
    while let Some(e) = rx.recv().await {
        assert_eq!(jobs.running(), [(e.job, JobKind::UploadFirmware)]);
        if e.phase == Phase::Uploading && e.done > 0 {
            assert!(jobs.cancel(e.job));
            last = Some(e);
            break;
        }
    }
    let last = last.expect("the upload started");
    let err = running.await.unwrap().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled, "{err}");
    assert!(last.done < size as u64, "cancelled midway: {last:?}");
    assert!(jobs.running().is_empty());
    assert!(!jobs.cancel(last.job), "a finished job cannot be cancelled");

    // Once the simulator has met the broken request: no file, partial or whole.
    env.sim.set_faults(Faults::default());
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(env.client.firmware().package(package.id, &[]).await.unwrap().firmware_file_name, None);
    assert!(env.stored(package.id, StoredKind::Firmware).is_none());
    assert!(env.stored_paths(package.id).is_empty(), "{:?}", env.stored_paths(package.id));
}

#[tokio::test]
async fn release_notes_replace_the_previous_ones_and_read_back_as_text() {
    let env = env().await;
    let package = env.package("77.4.0").await;
    let jobs = Transfers::new();
    let notes = env.dir.path().join("notes.md");

    let err =
        transfers::read_release_notes(&env.client, package.id, transfers::RELEASE_NOTES_DISPLAY_CAP).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound, "none yet: {err}");

    std::fs::write(&notes, "# 77.4.0\n\nFirst notes.\n").unwrap();
    let (events, sink) = recorder();
    jobs.upload(&env.client, package.id, FileKind::ReleaseNotes, &notes, &UploadOptions::default(), None, sink)
        .await
        .unwrap();
    assert!(events.lock().unwrap().iter().all(|e| e.kind == JobKind::UploadReleaseNotes));
    std::fs::write(&notes, "# 77.4.0\n\nSecond notes, ünïcode.\n").unwrap();
    let options = UploadOptions {
        file_name: Some("RELEASE-77.4.0.md".into()),
        content_type: Some("text/markdown".into()),
        ..Default::default()
    };
    let attrs =
        jobs.upload(&env.client, package.id, FileKind::ReleaseNotes, &notes, &options, None, |_| {}).await.unwrap();
    assert_eq!((attrs.name.as_str(), attrs.content_type.as_str()), ("RELEASE-77.4.0.md", "text/markdown"));

    let read =
        transfers::read_release_notes(&env.client, package.id, transfers::RELEASE_NOTES_DISPLAY_CAP).await.unwrap();
    assert_eq!(read.text, "# 77.4.0\n\nSecond notes, ünïcode.\n");
    assert_eq!(read.file_name.as_deref(), Some("RELEASE-77.4.0.md"));
    assert_eq!(read.content_type.as_deref(), Some("text/markdown"));

    let target = env.dir.path().join("notes-back.md");
    let got = jobs.download(&env.client, package.id, FileKind::ReleaseNotes, &target, |_| {}).await.unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), read.text);
    assert_eq!(got.sha256, sha256_hex(read.text.as_bytes()));

    // Too big to show: refused, naming the field and the limit.
    let err = transfers::read_release_notes(&env.client, package.id, 10).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().starts_with("releaseNotes: "), "{err}");
    assert!(err.to_string().contains("over the 10 bytes the app shows"), "{err}");

    // Not text: refused for display (it can still be downloaded).
    let pdf = env.dir.path().join("notes.pdf");
    std::fs::write(&pdf, [0x25, 0x50, 0x44, 0x46, 0xff, 0xfe, 0x00, 0x80]).unwrap();
    jobs.upload(&env.client, package.id, FileKind::ReleaseNotes, &pdf, &UploadOptions::default(), None, |_| {})
        .await
        .unwrap();
    let err =
        transfers::read_release_notes(&env.client, package.id, transfers::RELEASE_NOTES_DISPLAY_CAP).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().contains("not UTF-8 text (content type application/pdf)"), "{err}");

    env.client.firmware().delete_release_notes(package.id).await.unwrap();
    let err =
        transfers::read_release_notes(&env.client, package.id, transfers::RELEASE_NOTES_DISPLAY_CAP).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn a_cancelled_download_leaves_no_file() {
    let env = env().await;
    let package = env.package("77.5.0").await;
    let path = env.dir.path().join("fw-77.5.0.bin");
    write_random_file(&path, 3 * 1024 * 1024);
    let jobs = Transfers::new();
    jobs.upload(&env.client, package.id, FileKind::Firmware, &path, &UploadOptions::default(), None, |_| {})
        .await
        .unwrap();

    // Cancelled by id as soon as bytes arrive (from the progress sink, as a second caller would).
    let target = env.dir.path().join("half.bin");
    let canceller = jobs.clone();
    let seen: Events = Default::default();
    let record = seen.clone();
    let err = jobs
        .download(&env.client, package.id, FileKind::Firmware, &target, move |e| {
            if e.done > 0 {
                assert!(canceller.cancel(e.job));
            }
            record.lock().unwrap().push(e);
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled, "{err}");
    assert!(seen.lock().unwrap().iter().any(|e| e.done > 0), "bytes had arrived");
    assert!(!target.exists());
    assert!(!env.dir.path().join("half.bin.part").exists());

    // Cancelled while the service has not answered yet.
    env.sim.set_faults(Faults { latency_ms: 1000, ..Default::default() });
    let target = env.dir.path().join("early.bin");
    let canceller = jobs.clone();
    let err = jobs
        .download(&env.client, package.id, FileKind::Firmware, &target, move |e| {
            canceller.cancel(e.job);
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled, "{err}");
    assert!(!target.exists());
    assert!(!env.dir.path().join("early.bin.part").exists());
    assert!(jobs.running().is_empty());
}

/// Counts the times a file is opened, from the kernel's own account (inotify), whoever opens it.
/// Closes are watched too: the kernel merges identical events queued one after the other.
#[cfg(target_os = "linux")]
struct Opens {
    fd: i32,
}

#[cfg(target_os = "linux")]
impl Opens {
    fn watch(path: &Path) -> Opens {
        use std::os::unix::ffi::OsStrExt;
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(fd >= 0, "inotify_init1");
        let name = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        assert!(
            unsafe { libc::inotify_add_watch(fd, name.as_ptr(), libc::IN_OPEN | libc::IN_CLOSE) } >= 0,
            "inotify_add_watch"
        );
        Opens { fd }
    }

    /// Opens since the last call.
    fn take(&self) -> usize {
        let mut buf = [0u8; 4096];
        let mut opens = 0;
        loop {
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return opens;
            }
            let mut at = 0usize;
            while at + 16 <= n as usize {
                let mask = u32::from_ne_bytes(buf[at + 4..at + 8].try_into().unwrap());
                let len = u32::from_ne_bytes(buf[at + 12..at + 16].try_into().unwrap()) as usize;
                if mask & libc::IN_OPEN != 0 {
                    opens += 1;
                }
                at += 16 + len;
            }
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for Opens {
    fn drop(&mut self) {
        unsafe { libc::close(self.fd) };
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_file_hashed_before_is_read_once_when_uploaded_with_that_checksum() {
    let env = env().await;
    let path = env.dir.path().join("fw-78.1.0.bin");
    let size = 5 * 1024 * 1024 + 11;
    let bytes = write_random_file(&path, size);
    let jobs = Transfers::new();
    let hashed = jobs.hash(&path, |_| {}).await.unwrap();
    let opens = Opens::watch(&path);

    // With the checksum the user was shown: opened once, no checksum phase at all.
    let package = env.package("78.1.0").await;
    let (events, sink) = recorder();
    jobs.upload(
        &env.client,
        package.id,
        FileKind::Firmware,
        &path,
        &UploadOptions::default(),
        Some(&hashed.sha256),
        sink,
    )
    .await
    .unwrap();
    assert_eq!(opens.take(), 1, "read once, while sending");
    let events = events.lock().unwrap().clone();
    assert_eq!(check_phases(&events, size as u64), [Phase::Uploading], "{events:?}");
    assert_eq!((events[0].done, events[0].total), (0, size as u64), "the first event already has the size");
    assert_eq!(env.stored(package.id, StoredKind::Firmware).unwrap(), bytes);
    // What the service holds, told afresh (it does not say): the same size and SHA-256, and no
    // file left behind.
    let remote = jobs.checksum_remote(&env.client, package.id, FileKind::Firmware, |_| {}).await.unwrap();
    assert_eq!(
        (remote.sha256.as_str(), remote.size, remote.file_name.as_str()),
        (hashed.sha256.as_str(), size as u64, "fw-78.1.0.bin")
    );
    assert!(jobs.running().is_empty());

    // Without it, opened once too (hashed while sent, the checksum after the file); and a
    // hash job then the upload are two opens, so the counts are not an accident of the watch.
    let other = env.package("78.1.1").await;
    jobs.upload(&env.client, other.id, FileKind::Firmware, &path, &UploadOptions::default(), None, |_| {})
        .await
        .unwrap();
    assert_eq!(opens.take(), 1);
    let fourth = env.package("78.1.3").await;
    let rehashed = jobs.hash(&path, |_| {}).await.unwrap();
    jobs.upload(
        &env.client,
        fourth.id,
        FileKind::Firmware,
        &path,
        &UploadOptions::default(),
        Some(&rehashed.sha256),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(opens.take(), 2);

    // A job registry that never hashed it (the app restarted): hashed again, held to what the
    // user saw, then sent.
    let fresh = Transfers::new();
    let third = env.package("78.1.2").await;
    let (events, sink) = recorder();
    fresh
        .upload(&env.client, third.id, FileKind::Firmware, &path, &UploadOptions::default(), Some(&hashed.sha256), sink)
        .await
        .unwrap();
    assert_eq!(check_phases(&events.lock().unwrap(), size as u64), [Phase::Hashing, Phase::Uploading]);
    assert_eq!(env.stored(third.id, StoredKind::Firmware).unwrap(), bytes);
}

/// The package's firmware file is still absent, on the service and in its upload folder (a
/// broken request's partial file is removed once the simulator has met the broken body).
async fn nothing_stored(env: &Env, package: Uuid) {
    for _ in 0..40 {
        if env.stored_paths(package).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(env.client.firmware().package(package, &[]).await.unwrap().firmware_file_name, None);
    assert!(env.stored(package, StoredKind::Firmware).is_none());
    assert!(env.stored_paths(package).is_empty(), "{:?}", env.stored_paths(package));
}

#[tokio::test]
async fn a_file_changed_since_it_was_hashed_is_refused_and_nothing_is_stored() {
    let env = env().await;
    let path = env.dir.path().join("fw-78.2.0.bin");
    let size = 300_000;
    let before = write_random_file(&path, size);
    let jobs = Transfers::new();
    let hashed = jobs.hash(&path, |_| {}).await.unwrap();
    assert_eq!(hashed.sha256, sha256_hex(&before));
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();

    // Rewritten after it was hashed (same size, other bytes): refused before anything is sent.
    let mut after = before.clone();
    after[size - 1] ^= 0xff;
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&path, &after).unwrap();
    let package = env.package("78.2.0").await;
    let (events, sink) = recorder();
    let err = jobs
        .upload(
            &env.client,
            package.id,
            FileKind::Firmware,
            &path,
            &UploadOptions::default(),
            Some(&hashed.sha256),
            sink,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput, "{err}");
    assert!(err.to_string().starts_with("file: "), "names the field: {err}");
    assert!(err.to_string().contains("changed since its SHA-256 was computed"), "{err}");
    assert!(events.lock().unwrap().iter().all(|e| e.done == 0), "nothing read or sent");
    nothing_stored(&env, package.id).await;

    // Rewritten with its modification time put back, so only its bytes tell: the bytes read
    // while sending are checked, and the last chunk is held back.
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified);
    let err = jobs
        .upload(
            &env.client,
            package.id,
            FileKind::Firmware,
            &path,
            &UploadOptions::default(),
            Some(&hashed.sha256),
            |_| {},
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput, "{err}");
    assert!(err.to_string().contains("the bytes read while sending do not match it"), "{err}");
    nothing_stored(&env, package.id).await;

    // A registry that never hashed it: hashed now and refused, the new SHA-256 named.
    let err = Transfers::new()
        .upload(
            &env.client,
            package.id,
            FileKind::Firmware,
            &path,
            &UploadOptions::default(),
            Some(&hashed.sha256),
            |_| {},
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput, "{err}");
    assert!(err.to_string().contains(&sha256_hex(&after)), "{err}");
    nothing_stored(&env, package.id).await;

    // Hashed again, it goes up as it is now.
    let again = jobs.hash(&path, |_| {}).await.unwrap();
    jobs.upload(
        &env.client,
        package.id,
        FileKind::Firmware,
        &path,
        &UploadOptions::default(),
        Some(&again.sha256),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(env.stored(package.id, StoredKind::Firmware).unwrap(), after);
}
