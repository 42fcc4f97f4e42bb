//! Long file transfers as jobs: hashing a local file, uploading a package's firmware file or
//! release notes, downloading them. Each job gets an id the moment it starts (in its first
//! progress event) and a cancellation token kept in a registry, so a second caller (the app's
//! cancel button, a Ctrl-C) can stop it by id; a job leaves the registry when it ends, however
//! it ends.
//!
//! Progress comes from the client's per-chunk callbacks, paced here: at most one event per
//! [`EMIT_INTERVAL`] plus the last one of each phase, each with the rate over about the last
//! second and the time left at that rate. The bytes stream through the client (a few chunks of
//! 256 KiB at a time), so memory stays flat whatever the file's size.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dcs_api::files::{self, FileKind, KnownChecksum, Transfer, UploadOptions};
use dcs_api::model::FileAttributes;
use dcs_api::{Client, Error};
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Identifies a running job; ids are not reused while the job runs.
pub type JobId = u32;

/// At most one progress event per interval (plus the last of each phase): about 10 a second.
pub const EMIT_INTERVAL: Duration = Duration::from_millis(100);
/// The rate is measured over about this much of the recent past.
pub const RATE_WINDOW: Duration = Duration::from_secs(1);
/// Samples closer together than this are not kept for the rate (bounds the window's memory).
const SAMPLE_EVERY: Duration = Duration::from_millis(25);

/// Release notes bigger than this are not read into memory for display.
pub const RELEASE_NOTES_DISPLAY_CAP: u64 = 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum JobKind {
    Hash,
    UploadFirmware,
    UploadReleaseNotes,
    DownloadFirmware,
    DownloadReleaseNotes,
}

impl JobKind {
    fn upload(file: FileKind) -> JobKind {
        match file {
            FileKind::Firmware => JobKind::UploadFirmware,
            FileKind::ReleaseNotes => JobKind::UploadReleaseNotes,
        }
    }

    fn download(file: FileKind) -> JobKind {
        match file {
            FileKind::Firmware => JobKind::DownloadFirmware,
            FileKind::ReleaseNotes => JobKind::DownloadReleaseNotes,
        }
    }
}

/// What a job is doing now. An upload sends the file, hashing it on the way (phase
/// `uploading`); it hashes the whole file first (phase `hashing`, then `uploading`, each from 0
/// to the file's size) only when the service wants the checksum before the file and no job
/// hashed the file before (see `dcs_api::files`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    Hashing,
    Uploading,
    Downloading,
}

/// One progress event. Byte counts are whole numbers; they cross IPC as JSON numbers (exact up
/// to 2^53 bytes).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct TransferProgress {
    pub job: JobId,
    pub kind: JobKind,
    pub phase: Phase,
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub done: u64,
    /// 0 while the total is not known (a download whose size the service did not announce).
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub total: u64,
    /// Bytes per second over about the last second.
    pub rate_per_sec: f64,
    /// Seconds left at that rate; absent while it cannot be told.
    pub eta_seconds: Option<f64>,
}

/// A hashed local file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct HashResult {
    /// Lower-case hex.
    pub sha256: String,
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub size: u64,
    /// The file's own name (what an upload sends unless told otherwise).
    pub file_name: String,
}

/// A file downloaded to disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Downloaded {
    pub path: String,
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub size: u64,
    /// SHA-256 of the bytes written, lower-case hex.
    pub sha256: String,
    /// The name the service gave the file, when it sent one.
    pub file_name: Option<String>,
    pub content_type: Option<String>,
}

impl From<files::Downloaded> for Downloaded {
    fn from(d: files::Downloaded) -> Self {
        Downloaded {
            path: d.path.display().to_string(),
            size: d.size,
            sha256: d.sha256,
            file_name: d.file_name,
            content_type: d.content_type,
        }
    }
}

/// Release notes read into memory for display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ReleaseNotesText {
    pub text: String,
    pub content_type: Option<String>,
    pub file_name: Option<String>,
}

/// The transfer rate over about the last [`RATE_WINDOW`], from (time, bytes done) samples.
#[derive(Debug, Default)]
pub struct RateMeter {
    samples: VecDeque<(Instant, u64)>,
}

impl RateMeter {
    /// Records `done` bytes at `now` and answers the rate in bytes per second: the bytes since
    /// the newest sample at least a window old (or the oldest there is), over the time since.
    pub fn sample(&mut self, now: Instant, done: u64) -> f64 {
        while self.samples.len() >= 2 && now.saturating_duration_since(self.samples[1].0) >= RATE_WINDOW {
            self.samples.pop_front();
        }
        let rate = match self.samples.front() {
            Some(&(at, then)) if now > at => done.saturating_sub(then) as f64 / (now - at).as_secs_f64(),
            _ => 0.0,
        };
        if self.samples.back().is_none_or(|&(at, _)| now.saturating_duration_since(at) >= SAMPLE_EVERY) {
            self.samples.push_back((now, done));
        }
        rate
    }
}

/// Seconds left for `total - done` bytes at `rate`; zero once done, absent while unknown.
pub fn eta_seconds(done: u64, total: u64, rate: f64) -> Option<f64> {
    if total > 0 && done >= total {
        Some(0.0)
    } else if total > 0 && rate > 0.0 {
        Some((total - done) as f64 / rate)
    } else {
        None
    }
}

/// Turns a job's stream of (phase, done, total) reports into paced [`TransferProgress`] events.
/// Time comes in as an argument, so tests drive it with a made-up clock.
#[derive(Debug)]
pub struct Pacer {
    job: JobId,
    kind: JobKind,
    phase: Option<Phase>,
    meter: RateMeter,
    rate: f64,
    last_emit: Option<Instant>,
    /// The (done, total) last reported, and the last emitted.
    seen: (u64, u64),
    emitted: Option<(u64, u64)>,
}

impl Pacer {
    pub fn new(job: JobId, kind: JobKind) -> Pacer {
        Pacer {
            job,
            kind,
            phase: None,
            meter: RateMeter::default(),
            rate: 0.0,
            last_emit: None,
            seen: (0, 0),
            emitted: None,
        }
    }

    /// A report; an event when one is due: the first of a phase, the first after
    /// [`EMIT_INTERVAL`], or the one reaching a known total.
    pub fn update(&mut self, now: Instant, phase: Phase, done: u64, total: u64) -> Option<TransferProgress> {
        if self.phase != Some(phase) {
            self.phase = Some(phase);
            self.meter = RateMeter::default();
            self.last_emit = None;
            self.emitted = None;
        }
        self.rate = self.meter.sample(now, done);
        self.seen = (done, total);
        let complete = total > 0 && done >= total;
        let due = self.last_emit.is_none_or(|t| now.saturating_duration_since(t) >= EMIT_INTERVAL);
        if (due || complete) && self.emitted != Some(self.seen) {
            return Some(self.emit(now));
        }
        None
    }

    /// The last event of a phase that ended well, unless it was already sent; a total that was
    /// not known becomes what was done.
    pub fn finish(&mut self, now: Instant) -> Option<TransferProgress> {
        self.phase?;
        let (done, total) = self.seen;
        self.seen = (done, total.max(done));
        (self.emitted != Some(self.seen)).then(|| self.emit(now))
    }

    fn emit(&mut self, now: Instant) -> TransferProgress {
        self.last_emit = Some(now);
        self.emitted = Some(self.seen);
        let (done, total) = self.seen;
        TransferProgress {
            job: self.job,
            kind: self.kind,
            phase: self.phase.expect("set by update"),
            done,
            total,
            rate_per_sec: self.rate,
            eta_seconds: eta_seconds(done, total, self.rate),
        }
    }
}

/// Where a job's progress events go: a closure (the app forwards them to a Tauri channel).
pub type ProgressSink = Arc<dyn Fn(TransferProgress) + Send + Sync>;

/// A job's pacer and sink, shared by the client's callbacks.
struct Reporter {
    pacer: Mutex<Pacer>,
    sink: ProgressSink,
}

impl Reporter {
    fn report(&self, phase: Phase, done: u64, total: u64) {
        let event = self.pacer.lock().unwrap().update(Instant::now(), phase, done, total);
        if let Some(e) = event {
            (self.sink)(e);
        }
    }

    fn finish(&self) {
        let event = self.pacer.lock().unwrap().finish(Instant::now());
        if let Some(e) = event {
            (self.sink)(e);
        }
    }

    /// The client's progress callback for one phase.
    fn phase(self: &Arc<Self>, phase: Phase) -> impl Fn(u64, u64) + Send + Sync + 'static {
        let me = self.clone();
        move |done, total| me.report(phase, done, total)
    }
}

struct Running {
    kind: JobKind,
    cancel: CancellationToken,
}

#[derive(Default)]
struct Jobs {
    last: JobId,
    running: HashMap<JobId, Running>,
}

/// How many hashed files are remembered for the uploads that follow (the latest ones).
const HASHED_KEPT: usize = 32;

/// The registry of running transfers, and the checksums of the files hashed lately (an upload
/// of one of them, unchanged, reads it once instead of twice). Cheap to clone; clones share both.
#[derive(Clone, Default)]
pub struct Transfers {
    jobs: Arc<Mutex<Jobs>>,
    hashed: Arc<Mutex<VecDeque<(PathBuf, KnownChecksum)>>>,
}

/// A job while it runs: leaves the registry when dropped (finished, failed, or its future
/// dropped half-way).
struct JobGuard {
    id: JobId,
    kind: JobKind,
    cancel: CancellationToken,
    jobs: Arc<Mutex<Jobs>>,
}

impl Drop for JobGuard {
    fn drop(&mut self) {
        self.jobs.lock().unwrap().running.remove(&self.id);
    }
}

impl JobGuard {
    fn reporter(&self, sink: ProgressSink) -> Arc<Reporter> {
        Arc::new(Reporter { pacer: Mutex::new(Pacer::new(self.id, self.kind)), sink })
    }

    fn transfer(&self) -> Transfer {
        Transfer::default().with_cancel(self.cancel.clone())
    }
}

impl std::fmt::Debug for Transfers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transfers").field("running", &self.running()).finish()
    }
}

/// The size of a local file, for the first event; 0 when it cannot be read (the job then fails
/// on it with the file's error).
async fn size_of(path: &Path) -> u64 {
    tokio::fs::metadata(path).await.map(|m| m.len()).unwrap_or(0)
}

impl Transfers {
    pub fn new() -> Transfers {
        Transfers::default()
    }

    fn register(&self, kind: JobKind) -> JobGuard {
        let mut jobs = self.jobs.lock().unwrap();
        let mut id = jobs.last;
        loop {
            id = id.wrapping_add(1).max(1);
            if !jobs.running.contains_key(&id) {
                break;
            }
        }
        jobs.last = id;
        let cancel = CancellationToken::new();
        jobs.running.insert(id, Running { kind, cancel: cancel.clone() });
        JobGuard { id, kind, cancel, jobs: self.jobs.clone() }
    }

    /// Asks a running job to stop; false when no job has that id (it may have just ended). The
    /// job then ends with the client's `Cancelled` error.
    pub fn cancel(&self, job: JobId) -> bool {
        match self.jobs.lock().unwrap().running.get(&job) {
            Some(r) => {
                r.cancel.cancel();
                tracing::info!(job, kind = ?r.kind, "transfer cancel requested");
                true
            }
            None => false,
        }
    }

    /// The jobs running now, by id.
    pub fn running(&self) -> Vec<(JobId, JobKind)> {
        let mut out: Vec<_> = self.jobs.lock().unwrap().running.iter().map(|(id, r)| (*id, r.kind)).collect();
        out.sort_by_key(|(id, _)| *id);
        out
    }

    /// SHA-256 and size of a local file, read in chunks. The first event (sent before the file
    /// is read) carries the job id.
    pub async fn hash(
        &self,
        path: &Path,
        on_progress: impl Fn(TransferProgress) + Send + Sync + 'static,
    ) -> Result<HashResult, Error> {
        let job = self.register(JobKind::Hash);
        let reporter = job.reporter(Arc::new(on_progress));
        // Taken before reading: a change while it is read shows as a later modification time.
        let before = tokio::fs::metadata(path).await.ok();
        reporter.report(Phase::Hashing, 0, before.as_ref().map_or(0, |m| m.len()));
        let (sha256, size) =
            files::sha256_file(path, &job.transfer().with_progress(reporter.phase(Phase::Hashing))).await?;
        reporter.finish();
        if let Some(meta) = before.filter(|m| m.len() == size) {
            let known = KnownChecksum { sha256: sha256.clone(), size, modified: meta.modified().ok() };
            let mut hashed = self.hashed.lock().unwrap();
            hashed.retain(|(p, _)| p != path);
            if hashed.len() >= HASHED_KEPT {
                hashed.pop_front();
            }
            hashed.push_back((path.to_owned(), known));
        }
        let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(HashResult { sha256, size, file_name })
    }

    /// What a hash job found for `path` when it had the SHA-256 `sha256`, if one did lately.
    fn hashed_as(&self, path: &Path, sha256: &str) -> Option<KnownChecksum> {
        let hashed = self.hashed.lock().unwrap();
        hashed.iter().rev().find(|(p, k)| p == path && k.sha256.eq_ignore_ascii_case(sha256)).map(|(_, k)| k.clone())
    }

    /// Uploads a package's firmware file or release notes: sent and hashed on the way (phase
    /// `uploading`), or hashed first where the service wants the checksum before the file
    /// ([`Phase`]). The client refuses a second firmware file before reading anything
    /// (a firmware file is uploaded once per package and never replaced); release notes replace
    /// the previous ones. A cancelled upload leaves nothing on the service.
    ///
    /// `expected`: the SHA-256 the user was shown for this file. When a hash job here found it
    /// and the file's size and modification time are unchanged since, the file is not hashed
    /// again (one read, while sending); otherwise it is hashed and refused (field `file`) when
    /// the result differs. Either way the bytes sent are checked against it on the way, and the
    /// upload stops before its end when they differ.
    #[allow(clippy::too_many_arguments)]
    pub async fn upload(
        &self,
        client: &Client,
        package: Uuid,
        file: FileKind,
        path: &Path,
        options: &UploadOptions,
        expected: Option<&str>,
        on_progress: impl Fn(TransferProgress) + Send + Sync + 'static,
    ) -> Result<FileAttributes, Error> {
        let job = self.register(JobKind::upload(file));
        let reporter = job.reporter(Arc::new(on_progress));
        let mut options = options.clone();
        let mut hashed_now = false;
        if options.checksum.is_none() {
            if let Some(expected) = expected {
                options.checksum = match self.hashed_as(path, expected) {
                    Some(known) => Some(known),
                    None => {
                        // Not hashed here lately: hashed now, and held to what the user saw.
                        reporter.report(Phase::Hashing, 0, size_of(path).await);
                        let transfer = job.transfer().with_progress(reporter.phase(Phase::Hashing));
                        let (sha256, size) = files::sha256_file(path, &transfer).await?;
                        if !sha256.eq_ignore_ascii_case(expected) {
                            return Err(Error::InvalidInput {
                                field: "file".into(),
                                rule: format!(
                                    "{} changed since its SHA-256 was shown ({expected}; it is now {sha256}); nothing was sent: choose the file again",
                                    path.display()
                                ),
                            });
                        }
                        hashed_now = true;
                        Some(KnownChecksum { sha256, size, modified: None })
                    }
                };
            }
        }
        // The first event carries the job id; it already names the phase the client starts
        // with (never a checksum pass at 0 bytes where there is none).
        let fw = client.firmware();
        match &options.checksum {
            _ if hashed_now => {}
            Some(known) => reporter.report(Phase::Uploading, 0, known.size),
            None if fw.hashes_before_sending(&options) => reporter.report(Phase::Hashing, 0, size_of(path).await),
            None => reporter.report(Phase::Uploading, 0, size_of(path).await),
        }
        let transfer = job
            .transfer()
            .with_hashing_progress(reporter.phase(Phase::Hashing))
            .with_progress(reporter.phase(Phase::Uploading));
        let attributes = match file {
            FileKind::Firmware => fw.upload_firmware_file(package, path, &options, &transfer).await,
            FileKind::ReleaseNotes => fw.upload_release_notes(package, path, &options, &transfer).await,
        }?;
        reporter.finish();
        tracing::info!(job = job.id, %package, file = %attributes.name, kind = ?job.kind, "upload finished");
        Ok(attributes)
    }

    /// Downloads a package's firmware file or release notes to `target`, hashing on the way. A
    /// failed or cancelled download leaves no file at `target` (nor its `.part`).
    pub async fn download(
        &self,
        client: &Client,
        package: Uuid,
        file: FileKind,
        target: &Path,
        on_progress: impl Fn(TransferProgress) + Send + Sync + 'static,
    ) -> Result<Downloaded, Error> {
        let job = self.register(JobKind::download(file));
        let reporter = job.reporter(Arc::new(on_progress));
        reporter.report(Phase::Downloading, 0, 0);
        let transfer = job.transfer().with_progress(reporter.phase(Phase::Downloading));
        let fw = client.firmware();
        let got = match file {
            FileKind::Firmware => fw.download_firmware_file(package, target, &transfer).await,
            FileKind::ReleaseNotes => fw.download_release_notes(package, target, &transfer).await,
        }?;
        reporter.finish();
        Ok(got.into())
    }
}

impl Transfers {
    /// Size and SHA-256 of a package's file on the service (which does not tell them): it is
    /// downloaded to a temporary folder, hashed on the way, and removed. A download job, with
    /// its progress and Cancel.
    pub async fn checksum_remote(
        &self,
        client: &Client,
        package: Uuid,
        file: FileKind,
        on_progress: impl Fn(TransferProgress) + Send + Sync + 'static,
    ) -> Result<HashResult, Error> {
        let dir = tempfile::tempdir()
            .map_err(|e| Error::LocalFile { path: std::env::temp_dir().display().to_string(), source: e })?;
        let got = self.download(client, package, file, &dir.path().join("file"), on_progress).await?;
        Ok(HashResult { sha256: got.sha256, size: got.size, file_name: got.file_name.unwrap_or_default() })
    }
}

/// A package's release notes as text, for display: refused when bigger than `cap` bytes (the
/// download stops as soon as that shows) or when not UTF-8. Goes through a temporary file.
pub async fn read_release_notes(client: &Client, package: Uuid, cap: u64) -> Result<ReleaseNotesText, Error> {
    let dir = tempfile::tempdir()
        .map_err(|e| Error::LocalFile { path: std::env::temp_dir().display().to_string(), source: e })?;
    let target: PathBuf = dir.path().join("release-notes");
    // Stopped as soon as the announced size or the bytes received pass the cap.
    let cancel = CancellationToken::new();
    let over = Arc::new(AtomicU64::new(0));
    let seen = over.clone();
    let stop = cancel.clone();
    let transfer = Transfer::default().with_cancel(cancel).with_progress(move |done, total| {
        if done.max(total) > cap {
            seen.store(done.max(total), Ordering::Relaxed);
            stop.cancel();
        }
    });
    let too_big = |size: u64| Error::InvalidInput {
        field: "releaseNotes".into(),
        rule: format!(
            "the file has {size} bytes or more, over the {cap} bytes the app shows; download it to a file instead"
        ),
    };
    let got = match client.firmware().download_release_notes(package, &target, &transfer).await {
        Err(Error::Cancelled { .. }) if over.load(Ordering::Relaxed) > 0 => {
            return Err(too_big(over.load(Ordering::Relaxed)))
        }
        other => other?,
    };
    let bytes = tokio::fs::read(&target)
        .await
        .map_err(|e| Error::LocalFile { path: target.display().to_string(), source: e })?;
    let text = String::from_utf8(bytes).map_err(|_| Error::InvalidInput {
        field: "releaseNotes".into(),
        rule: format!(
            "the file is not UTF-8 text (content type {}); download it to a file instead",
            got.content_type.as_deref().unwrap_or("not given")
        ),
    })?;
    Ok(ReleaseNotesText { text, content_type: got.content_type, file_name: got.file_name })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t0: Instant, n: u64) -> Instant {
        t0 + Duration::from_millis(n)
    }

    #[test]
    fn the_rate_is_measured_over_about_the_last_second() {
        let t0 = Instant::now();
        let mut m = RateMeter::default();
        assert_eq!(m.sample(t0, 0), 0.0, "no rate from a single sample");
        // 1 MB every 10 ms: 100 MB/s.
        let mut rate = 0.0;
        for i in 1..=300u64 {
            rate = m.sample(ms(t0, i * 10), i * 1_000_000);
        }
        assert!((rate - 100e6).abs() < 1e3, "{rate}");
        // Then it slows to 1 MB every 100 ms (10 MB/s): after a bit more than a second the old
        // speed is forgotten.
        let mut done = 300_000_000;
        for i in 1..=12u64 {
            done += 1_000_000;
            rate = m.sample(ms(t0, 3000 + i * 100), done);
        }
        assert!((rate - 10e6).abs() < 0.1e6, "{rate}");
        // The window keeps a bounded number of samples whatever the report rate.
        assert!(
            m.samples.len() <= (RATE_WINDOW.as_millis() / SAMPLE_EVERY.as_millis()) as usize + 2,
            "{}",
            m.samples.len()
        );
        // A stall shows as a falling rate, not the last burst's.
        let stalled = m.sample(ms(t0, 3000 + 1200 + 900), done);
        assert!(stalled < rate / 2.0, "{stalled} vs {rate}");
    }

    #[test]
    fn time_left_follows_the_rate() {
        assert_eq!(eta_seconds(0, 1000, 100.0), Some(10.0));
        assert_eq!(eta_seconds(250, 1000, 50.0), Some(15.0));
        assert_eq!(eta_seconds(1000, 1000, 0.0), Some(0.0));
        assert_eq!(eta_seconds(10, 1000, 0.0), None, "no rate yet");
        assert_eq!(eta_seconds(10, 0, 5.0), None, "no total");
    }

    #[test]
    fn events_are_paced_to_ten_a_second_plus_the_last() {
        let t0 = Instant::now();
        let mut p = Pacer::new(7, JobKind::UploadFirmware);
        let total = 10_000_000u64;
        let mut events = Vec::new();
        // A chunk of 10 kB every millisecond (10 MB/s): 1000 reports hashing, then 1000 uploading.
        for i in 0..=1000u64 {
            events.extend(p.update(ms(t0, i), Phase::Hashing, (i * 10_000).min(total), total));
        }
        for i in 0..=1000u64 {
            events.extend(p.update(ms(t0, 1000 + i), Phase::Uploading, (i * 10_000).min(total), total));
        }
        events.extend(p.finish(ms(t0, 2001)));
        let hashing: Vec<_> = events.iter().filter(|e| e.phase == Phase::Hashing).collect();
        let uploading: Vec<_> = events.iter().filter(|e| e.phase == Phase::Uploading).collect();
        for phase in [&hashing, &uploading] {
            assert!(phase.len() >= 10 && phase.len() <= 12, "about 10 a second: {}", phase.len());
            assert!(phase.windows(2).all(|w| w[0].done < w[1].done), "monotonic within a phase");
            assert_eq!(phase[0].done, 0, "each phase starts at 0");
            let last = phase.last().unwrap();
            assert_eq!(
                (last.done, last.total, last.eta_seconds),
                (total, total, Some(0.0)),
                "and ends at its total once"
            );
        }
        assert!(events.iter().all(|e| e.job == 7 && e.kind == JobKind::UploadFirmware));
        let mid = uploading.iter().find(|e| e.done >= total / 2).unwrap();
        assert!((mid.rate_per_sec - 10e6).abs() < 0.5e6, "{}", mid.rate_per_sec);
        let eta = mid.eta_seconds.unwrap();
        assert!((eta - (total - mid.done) as f64 / mid.rate_per_sec).abs() < 1e-9);
        assert!(events.windows(2).all(|w| w[0].phase != w[1].phase || w[1].done > w[0].done));
    }

    #[test]
    fn a_download_of_unknown_size_ends_with_its_size_as_total() {
        let t0 = Instant::now();
        let mut p = Pacer::new(1, JobKind::DownloadFirmware);
        assert!(p.finish(t0).is_none(), "nothing to finish before the first report");
        let first = p.update(t0, Phase::Downloading, 0, 0).unwrap();
        assert_eq!((first.done, first.total, first.eta_seconds), (0, 0, None));
        assert!(p.update(ms(t0, 50), Phase::Downloading, 500, 0).is_none(), "paced");
        let last = p.finish(ms(t0, 60)).unwrap();
        assert_eq!((last.done, last.total), (500, 500));
        assert!(p.finish(ms(t0, 70)).is_none(), "sent once");
    }
}
