//! Firmware-file and release-notes uploads and downloads (reference section 4.1), streamed
//! from and to disk: a file is never held whole in memory.
//!
//! An upload sends the file's SHA-256 as the multipart part `checksum`, so the service can
//! verify what arrived. The reference lists the parts (`file`, `checksum`) but not their order,
//! so where the checksum goes is the client's choice, made per service:
//!
//! - **One read, checksum after the file** (the default): the file is hashed while it is sent
//!   and the `checksum` part follows the `file` part. The simulator accepts this (assumption
//!   A-258 of docs/simulator-assumptions.md); a real service might not (one that verifies while
//!   it receives needs the checksum first).
//! - **Checksum first**: when the checksum is known before sending ([`UploadOptions::checksum`],
//!   the one shown to the user), or once the service refused a checksum after the file. Without
//!   a known checksum that takes two reads: a hash pass, then the send.
//!
//! How the client learns: an upload with the checksum after the file that the service refuses
//! with a `400` naming `checksum` (in `invalidParams` or its detail, as [`Error::refuses_field`]
//! reads it) is sent once more at once, the checksum (of the bytes just sent) first; when that
//! one is taken, the client (and its clones) send the checksum first from then on. A refusal
//! that is not about the order comes again and is reported. Nothing is stored by a `400`, so
//! the second send creates nothing twice. A service that ignored a checksum after the file
//! without refusing it cannot be told from one that checked it; the bytes sent are still the
//! ones hashed, and the reader checks the file did not change while it was read.
//!
//! Either way the bytes sent are hashed on the way, on a blocking thread that reads ahead of
//! the sender (large reads, off the async runtime), and the upload stops before its last chunk
//! when they do not match a known checksum, or when the file changed (its size or modification
//! time) while it was read: the service never receives a complete, different file. Uploads
//! create something and are otherwise never retried. Both directions report progress and can
//! be cancelled.
//!
//! SHA-256 is ring's (SHA-NI where the CPU has it): about openssl's rate.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use futures::StreamExt;
use reqwest::multipart::{Form, Part};
use reqwest::Method;
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::firmware::Firmware;
use crate::model::{validate, FileAttributes, Problem};

/// Called with (bytes transferred so far, total bytes; 0 when the total is not known).
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// Bytes read at a time when hashing a file: large reads on a blocking thread, so the cost is
/// the hashing itself (a 64 KiB read through the async runtime's blocking pool each, as before,
/// halved the rate).
const HASH_CHUNK: usize = 1024 * 1024;
/// Bytes per chunk of an upload's body (progress moves in these steps).
const SEND_CHUNK: usize = 256 * 1024;
/// Chunks read and hashed ahead of the sender: memory stays at a few chunks whatever the size.
const READ_AHEAD: usize = 4;

/// A SHA-256 under way.
struct Hasher(ring::digest::Context);

impl Hasher {
    fn new() -> Hasher {
        Hasher(ring::digest::Context::new(&ring::digest::SHA256))
    }

    fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Lower-case hex.
    fn hex(self) -> String {
        hex::encode(self.0.finish())
    }
}

/// The SHA-256 of `bytes` in lower-case hex, with the same hasher as the transfers.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let mut h = Hasher::new();
    h.update(bytes);
    h.hex()
}

/// Reads into `buf` until it is full or the file ends; answers how much was read.
fn read_full(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Set when dropped: tells a blocking reader that no one waits for it any more.
struct Abandoned(Arc<AtomicBool>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Which of a package's two files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Firmware,
    ReleaseNotes,
}

impl FileKind {
    fn path(self, package: Uuid) -> String {
        match self {
            FileKind::Firmware => format!("firmware/packages/{package}/firmware-file"),
            FileKind::ReleaseNotes => format!("firmware/packages/{package}/release-notes-file"),
        }
    }

    fn what(self) -> &'static str {
        match self {
            FileKind::Firmware => "firmware file",
            FileKind::ReleaseNotes => "release-notes file",
        }
    }
}

/// How an upload or download runs: progress reports and cancellation.
#[derive(Clone, Default)]
pub struct Transfer {
    pub progress: Option<Progress>,
    /// Progress of an upload's first pass, which reads the whole file for its checksum before
    /// anything is sent (seconds for a large file, which would otherwise look stalled).
    pub hashing: Option<Progress>,
    pub cancel: Option<CancellationToken>,
}

impl std::fmt::Debug for Transfer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transfer")
            .field("progress", &self.progress.is_some())
            .field("hashing", &self.hashing.is_some())
            .field("cancel", &self.cancel)
            .finish()
    }
}

impl Transfer {
    pub fn with_progress(mut self, progress: impl Fn(u64, u64) + Send + Sync + 'static) -> Transfer {
        self.progress = Some(Arc::new(progress));
        self
    }

    pub fn with_hashing_progress(mut self, progress: impl Fn(u64, u64) + Send + Sync + 'static) -> Transfer {
        self.hashing = Some(Arc::new(progress));
        self
    }

    pub fn with_cancel(mut self, token: CancellationToken) -> Transfer {
        self.cancel = Some(token);
        self
    }

    fn report(&self, done: u64, total: u64) {
        if let Some(p) = &self.progress {
            p(done, total);
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(CancellationToken::is_cancelled)
    }

    /// Resolves when cancelled; never when there is no token.
    async fn wait_cancelled(&self) {
        match &self.cancel {
            Some(t) => t.cancelled().await,
            None => std::future::pending().await,
        }
    }
}

/// What to send besides the bytes.
#[derive(Debug, Clone, Default)]
pub struct UploadOptions {
    /// The name the service stores; by default the file's own name.
    pub file_name: Option<String>,
    /// By default guessed from the extension, else `application/octet-stream`.
    pub content_type: Option<String>,
    /// The file's SHA-256 computed earlier (and shown to the user): the file is then read only
    /// once, while sending. Refused before anything is sent when the file's size or modification
    /// time is no longer what it was when hashed.
    pub checksum: Option<KnownChecksum>,
}

/// A file's SHA-256 computed earlier, with what identified the file's contents then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownChecksum {
    /// Lower-case hex.
    pub sha256: String,
    pub size: u64,
    /// Its modification time when hashed (taken before reading it); `None` where the platform
    /// has none, and then only the size and the bytes sent are checked.
    pub modified: Option<SystemTime>,
}

impl KnownChecksum {
    /// The refusal when `meta` (the file now) is not the file that was hashed.
    fn check(&self, path: &Path, meta: &std::fs::Metadata) -> Result<()> {
        let modified = meta.modified().ok();
        if meta.len() != self.size || (self.modified.is_some() && modified != self.modified) {
            return Err(Error::invalid(
                "file",
                format!(
                    "{} changed since its SHA-256 was computed (now {} bytes, then {}; or modified since); nothing was sent: choose the file again",
                    path.display(),
                    meta.len(),
                    self.size
                ),
            ));
        }
        Ok(())
    }
}

/// The refusal when the bytes read while sending are not the ones hashed (`checksum`), or
/// (none known) the file changed while it was read.
fn changed_while_sending(path: &Path, checksum: Option<&str>) -> Error {
    let what = match checksum {
        Some(checksum) => format!(
            "{} changed since its SHA-256 ({checksum}) was computed: the bytes read while sending do not match it",
            path.display()
        ),
        None => format!(
            "{} changed while it was read for sending (its size or modification time, or it ended early)",
            path.display()
        ),
    };
    Error::invalid(
        "file",
        format!("{what}; the upload was stopped before its end and nothing was stored: choose the file again"),
    )
}

/// What the reader of an upload's body reads, and what it holds the bytes to.
struct Reading {
    file: std::fs::File,
    /// The file when opened: its size is what is read and sent.
    opened: std::fs::Metadata,
    /// The SHA-256 the bytes must have (known, sent before them); none: computed and sent after.
    expected: Option<String>,
    cancel: Option<CancellationToken>,
}

/// What the reader found out, for the sender.
#[derive(Default)]
struct ReadOutcome {
    /// The bytes read were not the ones expected, or the file changed while it was read.
    changed: AtomicBool,
    /// The SHA-256 of all the bytes sent, once read to the end and found good.
    sha256: std::sync::OnceLock<String>,
}

/// Reads the file to its size when opened, in [`SEND_CHUNK`]s on a blocking thread, hashing
/// them, up to [`READ_AHEAD`] chunks ahead of the sender. The last chunk is handed over only
/// once the bytes are known good: their SHA-256 is the expected one, or (none expected) the
/// file's size and modification time are still those it had when opened; the SHA-256 then goes
/// to `outcome` and `digest`. Otherwise an error takes the last chunk's place (the request
/// breaks off: nothing is stored) and `outcome.changed` is set.
fn spawn_reader(
    reading: Reading,
    outcome: Arc<ReadOutcome>,
    digest: oneshot::Sender<String>,
) -> mpsc::Receiver<std::io::Result<Bytes>> {
    let (tx, rx) = mpsc::channel(READ_AHEAD);
    tokio::task::spawn_blocking(move || {
        let Reading { mut file, opened, expected, cancel } = reading;
        let total = opened.len();
        let refuse = |reason: &str| {
            outcome.changed.store(true, Ordering::Relaxed);
            let _ = tx.blocking_send(Err(std::io::Error::other(reason.to_owned())));
        };
        let (mut hasher, mut digest, mut done) = (Some(Hasher::new()), Some(digest), 0u64);
        loop {
            if cancel.as_ref().is_some_and(CancellationToken::is_cancelled) {
                return;
            }
            let want = (total - done).min(SEND_CHUNK as u64) as usize;
            let mut buf = vec![0u8; want];
            let n = match read_full(&mut file, &mut buf) {
                Ok(n) => n,
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    return;
                }
            };
            if n < want {
                return refuse("the file ended before the size it had when opened");
            }
            if let Some(h) = hasher.as_mut() {
                h.update(&buf);
            }
            done += n as u64;
            if done == total {
                let sha256 = hasher.take().map(Hasher::hex).unwrap_or_default();
                match &expected {
                    Some(e) if *e != sha256 => return refuse("the file changed since it was hashed"),
                    None if !file.metadata().is_ok_and(|now| {
                        now.len() == opened.len() && now.modified().ok() == opened.modified().ok()
                    }) =>
                    {
                        return refuse("the file changed while it was read")
                    }
                    _ => {}
                }
                let _ = outcome.sha256.set(sha256.clone());
                if let Some(d) = digest.take() {
                    let _ = d.send(sha256);
                }
            }
            if !buf.is_empty() && tx.blocking_send(Ok(Bytes::from(buf))).is_err() {
                return; // The request is gone (cancelled, or failed).
            }
            if done == total {
                return;
            }
        }
    });
    rx
}

/// The result of a download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    pub path: PathBuf,
    pub size: u64,
    /// SHA-256 of the bytes written, lower-case hex.
    pub sha256: String,
    /// From `Content-Disposition`, when the service sent it.
    pub file_name: Option<String>,
    pub content_type: Option<String>,
}

fn guess_content_type(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "md" => "text/markdown",
        "txt" => "text/plain",
        "html" | "htm" => "text/html",
        "pdf" => "application/pdf",
        "json" => "application/json",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        _ => "application/octet-stream",
    }
}

/// Opens a regular file for reading: a directory, a device (`/dev/zero` never ends) or a pipe
/// (opening one waits for a writer) is refused naming the `file` field, before it is opened.
pub async fn open_regular(path: &Path) -> Result<(tokio::fs::File, std::fs::Metadata)> {
    let not_regular = || {
        Error::invalid(
            "file",
            format!("{} is not a regular file (a folder, device or pipe); choose a file", path.display()),
        )
    };
    if !tokio::fs::metadata(path).await.map_err(|e| Error::local_file(path, e))?.is_file() {
        return Err(not_regular());
    }
    let file = tokio::fs::File::open(path).await.map_err(|e| Error::local_file(path, e))?;
    // Checked again on what was opened (the path may have been replaced in between).
    let meta = file.metadata().await.map_err(|e| Error::local_file(path, e))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    Ok((file, meta))
}

/// SHA-256 of a regular file, read in large chunks on a blocking thread; with its size. Only
/// the size the file had when opened is read (and progress reported against it), so a file
/// that grows meanwhile is read to that size.
pub async fn sha256_file(path: &Path, transfer: &Transfer) -> Result<(String, u64)> {
    let (file, meta) = open_regular(path).await?;
    let mut file = file.into_std().await.take(meta.len());
    let total = meta.len();
    let (owned, transfer) = (path.to_owned(), transfer.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let _abandoned = Abandoned(stop.clone());
    let hashing = tokio::task::spawn_blocking(move || {
        let mut hasher = Hasher::new();
        let mut buf = vec![0u8; HASH_CHUNK];
        let mut size = 0u64;
        transfer.report(0, total);
        loop {
            if transfer.cancelled() || stop.load(Ordering::Relaxed) {
                return Err(Error::Cancelled { what: format!("reading {}", owned.display()) });
            }
            let n = read_full(&mut file, &mut buf).map_err(|e| Error::local_file(&owned, e))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            size += n as u64;
            transfer.report(size, total.max(size));
        }
        Ok((hasher.hex(), size))
    });
    hashing.await.map_err(|e| Error::local_file(path, std::io::Error::other(e)))?
}

/// The file name of a `Content-Disposition` header (`attachment; filename="..."`), made safe to
/// show or propose for saving: `filename*` (RFC 6266, its value percent-encoded in UTF-8 or
/// ISO-8859-1 as RFC 8187 says) before `filename` (quoted or not, parameter names in any case);
/// its last path component without control characters; none when nothing is left but dots and
/// spaces (`..`, `. . `: Windows drops trailing dots and spaces).
pub fn disposition_file_name(value: &str) -> Option<String> {
    let params = disposition_params(value);
    let param = |name: &str| params.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    let raw = param("filename*").and_then(ext_value).or_else(|| param("filename").map(str::to_owned))?;
    let last = raw.rsplit(['/', '\\']).next().unwrap_or("");
    let name: String = last.chars().filter(|c| !c.is_control()).collect();
    (!name.trim_matches(|c: char| c == '.' || c.is_whitespace()).is_empty()).then_some(name)
}

/// The `name=value` parameters after the disposition type, split at `;` outside quotes, quoted
/// values unquoted (`\"` and `\\` escapes undone).
fn disposition_params(value: &str) -> Vec<(String, String)> {
    let mut parts = Vec::new();
    let (mut current, mut quoted, mut escaped) = (String::new(), false, false);
    for c in value.chars() {
        match c {
            _ if escaped => {
                current.push(c);
                escaped = false;
            }
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => parts.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    parts.push(current);
    parts
        .into_iter()
        .skip(1)
        .filter_map(|p| p.split_once('=').map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned())))
        .collect()
}

/// An RFC 8187 `ext-value` (`charset'language'percent-encoded`) decoded: UTF-8 or ISO-8859-1;
/// none for another charset or bytes that are not its text.
fn ext_value(v: &str) -> Option<String> {
    let mut parts = v.splitn(3, '\'');
    let (charset, _language, encoded) = (parts.next()?, parts.next()?, parts.next()?);
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(encoded).collect();
    if charset.eq_ignore_ascii_case("utf-8") {
        String::from_utf8(bytes).ok()
    } else if charset.eq_ignore_ascii_case("iso-8859-1") {
        Some(bytes.into_iter().map(char::from).collect())
    } else {
        None
    }
}

/// An upload's request, as [`Firmware::send_file`] sends it (maybe twice).
#[derive(Clone, Copy)]
struct Sending<'a> {
    kind: FileKind,
    package: Uuid,
    url: &'a url::Url,
    path: &'a Path,
    name: &'a str,
    content_type: &'a str,
    transfer: &'a Transfer,
}

/// The first read of an upload in two: the file's checksum (progress on `transfer.hashing`),
/// bound to the size and modification time it had before it was read.
async fn hash_first(path: &Path, transfer: &Transfer) -> Result<KnownChecksum> {
    let before = tokio::fs::metadata(path).await.map_err(|e| Error::local_file(path, e))?;
    let first = Transfer { progress: transfer.hashing.clone(), hashing: None, cancel: transfer.cancel.clone() };
    let (sha256, size) = sha256_file(path, &first).await?;
    Ok(KnownChecksum { sha256, size, modified: before.modified().ok() })
}

impl Firmware<'_> {
    /// Whether an upload with these options reads the file twice (a checksum pass first, on
    /// [`Transfer::hashing`], then the send): when no checksum is known and this client learnt
    /// that its service wants the checksum before the file (module doc).
    pub fn hashes_before_sending(&self, options: &UploadOptions) -> bool {
        options.checksum.is_none() && self.client.checksum_first().load(Ordering::Relaxed)
    }

    /// Uploads a package's firmware file (once per package; a second is a conflict).
    pub async fn upload_firmware_file(
        &self,
        package: Uuid,
        path: &Path,
        options: &UploadOptions,
        transfer: &Transfer,
    ) -> Result<FileAttributes> {
        self.upload(FileKind::Firmware, package, path, options, transfer).await
    }

    /// Uploads (or replaces) a package's release-notes file.
    pub async fn upload_release_notes(
        &self,
        package: Uuid,
        path: &Path,
        options: &UploadOptions,
        transfer: &Transfer,
    ) -> Result<FileAttributes> {
        self.upload(FileKind::ReleaseNotes, package, path, options, transfer).await
    }

    /// Downloads a package's firmware file to `target`.
    pub async fn download_firmware_file(
        &self,
        package: Uuid,
        target: &Path,
        transfer: &Transfer,
    ) -> Result<Downloaded> {
        self.download(FileKind::Firmware, package, target, transfer).await
    }

    /// Downloads a package's most recent release-notes file to `target`.
    pub async fn download_release_notes(
        &self,
        package: Uuid,
        target: &Path,
        transfer: &Transfer,
    ) -> Result<Downloaded> {
        self.download(FileKind::ReleaseNotes, package, target, transfer).await
    }

    async fn upload(
        &self,
        kind: FileKind,
        package: Uuid,
        path: &Path,
        options: &UploadOptions,
        transfer: &Transfer,
    ) -> Result<FileAttributes> {
        // Refused before anything is read or sent.
        let name = match &options.file_name {
            Some(n) => n.clone(),
            None => path
                .file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| Error::invalid("file", "the path has no file name in UTF-8"))?
                .to_owned(),
        };
        validate::file_name(&name).map_err(|r| Error::invalid("file", format!("file name {r}")))?;
        if name.chars().all(|c| c == '.') {
            // `.` and `..` name folders: a service or a later download could resolve them.
            return Err(Error::invalid("file", format!("file name `{name}` is only dots; name the file")));
        }
        let content_type = options.content_type.clone().unwrap_or_else(|| guess_content_type(&name).to_owned());
        validate::content_type(&content_type).map_err(|r| Error::invalid("contentType", r))?;
        let url = self.client.url(&kind.path(package))?;

        // The package must exist, and a firmware file goes up once: asked first, so a file
        // that cannot be stored is neither hashed nor sent (a service that answers 409 before
        // reading the body may also break the connection, which would read as a network error).
        let current = self.package(package, &[]).await?;
        if kind == FileKind::Firmware {
            if let Some(existing) = &current.firmware_file_name {
                return Err(Error::Api {
                    status: 409,
                    problem: Box::new(Problem::new(
                        409,
                        "Conflict",
                        format!("package {package} already has its firmware file ({existing}); a firmware file is uploaded once and never replaced"),
                    )),
                });
            }
        }

        // Where the checksum goes (module doc): first when known, or when this service was
        // seen to want it first (then hashed in a first pass); else after the file, computed
        // while sending.
        let known = match &options.checksum {
            Some(known) => Some(KnownChecksum { sha256: known.sha256.to_ascii_lowercase(), ..known.clone() }),
            None if self.client.checksum_first().load(Ordering::Relaxed) => Some(hash_first(path, transfer).await?),
            None => None,
        };
        let send = Sending { kind, package, url: &url, path, name: &name, content_type: &content_type, transfer };
        // Recorded before it is sent ([`crate::audit`]), with the file's name, size and (when
        // known) SHA-256; completed with the SHA-256 of what was sent.
        let audit = self.client.audit();
        let ticket = match audit {
            Some(audit) => {
                let size = match &known {
                    Some(k) => k.size,
                    None => tokio::fs::metadata(path).await.map_err(|e| Error::local_file(path, e))?.len(),
                };
                let file =
                    crate::audit::FileWrite { name: &name, size, sha256: known.as_ref().map(|k| k.sha256.as_str()) };
                Some(audit.begin(&crate::audit::Write { method: "POST", url: &url, body: None, file: Some(file) })?)
            }
            None => None,
        };
        let (result, sha256) = self.send_learning(&send, known).await;
        if let (Some(audit), Some(ticket)) = (audit, ticket) {
            let outcome = match &result {
                Ok(_) => crate::audit::Outcome::Done { status: 200, sha256: sha256.as_deref() },
                Err(e) => crate::audit::Outcome::Failed(e),
            };
            audit.end(ticket, &outcome);
        }
        result
    }

    /// Sends the file, the checksum after it unless `known`; when the service refuses a
    /// checksum after the file, once more with it first (module doc). Answers the outcome and
    /// the SHA-256 of what was sent, when known.
    async fn send_learning(
        &self,
        send: &Sending<'_>,
        known: Option<KnownChecksum>,
    ) -> (Result<FileAttributes>, Option<String>) {
        let url = send.url;
        let (result, sent) = self.send_file(send, known.as_ref()).await;
        let sha256 = sent.as_ref().map(|s| s.sha256.clone()).or_else(|| known.as_ref().map(|k| k.sha256.clone()));
        let result = match result {
            Err(e) if known.is_none() && e.refuses_field("checksum") => {
                let Some(sent) = sent else { return (Err(e), sha256) };
                tracing::info!(path = url.path(), refusal = %e, "the service refused the checksum after the file; sending it first");
                let again = self.send_file(send, Some(&sent)).await.0;
                // Learnt only when that was it (a refusal of the checksum itself comes again).
                if again.is_ok() {
                    self.client.checksum_first().store(true, Ordering::Relaxed);
                }
                again
            }
            other => other,
        };
        (result, sha256)
    }

    /// Sends the file with its checksum: `known` before the file, else computed while sending
    /// and after it. Answers the outcome and, when the file was read to its end unchanged, the
    /// checksum of what was sent.
    async fn send_file(
        &self,
        send: &Sending<'_>,
        known: Option<&KnownChecksum>,
    ) -> (Result<FileAttributes>, Option<KnownChecksum>) {
        let (file, opened) = match open_regular(send.path).await {
            Ok(f) => f,
            Err(e) => return (Err(e), None),
        };
        if let Some(known) = known {
            if let Err(e) = known.check(send.path, &opened) {
                return (Err(e), None);
            }
        }
        let (total, modified) = (opened.len(), opened.modified().ok());
        let outcome = Arc::new(ReadOutcome::default());
        let result = self.send_opened(send, file.into_std().await, opened, known, outcome.clone()).await;
        let sent = outcome.sha256.get().map(|sha256| KnownChecksum { sha256: sha256.clone(), size: total, modified });
        (result, sent)
    }

    async fn send_opened(
        &self,
        send: &Sending<'_>,
        file: std::fs::File,
        opened: std::fs::Metadata,
        known: Option<&KnownChecksum>,
        outcome: Arc<ReadOutcome>,
    ) -> Result<FileAttributes> {
        let Sending { kind, url, path, transfer, .. } = *send;
        let total = opened.len();
        let expected = known.map(|k| k.sha256.clone());
        let (digest_tx, digest_rx) = oneshot::channel();
        let reading = Reading { file, opened, expected: expected.clone(), cancel: transfer.cancel.clone() };
        let chunks = spawn_reader(reading, outcome.clone(), digest_tx);

        // The body, streamed from the reader with progress and cancellation.
        let progress = transfer.clone();
        let sent = Arc::new(AtomicU64::new(0));
        let sent_in = sent.clone();
        progress.report(0, total);
        let body = futures::stream::unfold(chunks, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) }).map(
            move |chunk| {
                if progress.cancelled() {
                    return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "upload cancelled"));
                }
                let chunk = chunk?;
                let done = sent_in.fetch_add(chunk.len() as u64, Ordering::Relaxed) + chunk.len() as u64;
                progress.report(done, total);
                Ok::<_, std::io::Error>(chunk)
            },
        );
        // The reader ended before the file's size without saying why (it stopped): the request
        // must not end as if complete.
        let (sent_end, outcome_end) = (sent.clone(), outcome.clone());
        let short = futures::stream::once(async move {
            if sent_end.load(Ordering::Relaxed) < total {
                outcome_end.changed.store(true, Ordering::Relaxed);
                Err(std::io::Error::other("the file ended before the size it was opened with"))
            } else {
                Ok(Bytes::new())
            }
        });
        let part = Part::stream_with_length(reqwest::Body::wrap_stream(body.chain(short)), total)
            .file_name(send.name.to_owned())
            .mime_str(send.content_type)
            .map_err(|e| Error::invalid("contentType", e.to_string()))?;
        let form = match &expected {
            Some(checksum) => Form::new().text("checksum", checksum.clone()).part("file", part),
            None => {
                // 64 hex characters once the file part has been read to its end.
                let sha256 = futures::stream::once(async move {
                    digest_rx
                        .await
                        .map(Bytes::from)
                        .map_err(|_| std::io::Error::other("no checksum: the file was not read to its end"))
                });
                Form::new()
                    .part("file", part)
                    .part("checksum", Part::stream_with_length(reqwest::Body::wrap_stream(sha256), 64))
            }
        };
        let mut form = Some(form);

        let what = || Error::Cancelled { what: format!("the upload of the {}", kind.what()) };
        if transfer.cancelled() {
            return Err(what());
        }
        // Never repeated: the body can be sent once, and the upload creates something.
        let request = self.client.send_streamed(Method::POST, url.clone(), false, |req| match form.take() {
            Some(form) => req.multipart(form),
            None => req,
        });
        let res = tokio::select! {
            res = request => res,
            _ = transfer.wait_cancelled() => return Err(what()),
        };
        let res = match res {
            Err(_) if transfer.cancelled() => return Err(what()),
            Err(_) if outcome.changed.load(Ordering::Relaxed) => {
                return Err(changed_while_sending(path, expected.as_deref()))
            }
            // The service was reached and took part of the body, then closed the connection
            // without an answer the client could read: what a service does when it refuses a
            // body for its size (a 413 written while the client is still sending is lost).
            Err(Error::Network { source: Some(source), .. })
                if !source.is_connect() && sent.load(Ordering::Relaxed) > 0 =>
            {
                return Err(Error::Protocol {
                    url: url.to_string(),
                    reason: format!(
                        "the service closed the connection after {} of {total} bytes of the upload, without an answer; it may refuse files this large",
                        sent.load(Ordering::Relaxed)
                    ),
                });
            }
            other => other?,
        };
        let status = res.status();
        let answer = tokio::select! {
            b = crate::answer::read(res, url, self.client.limits()) => b?,
            _ = transfer.wait_cancelled() => return Err(what()),
        };
        // A success with no body (201, 204) or with one that is no JSON: the file is stored (the
        // reference shows the attributes, another service may not send them). Its attributes
        // are then what was sent; read as an error, the caller would send it again into a 409.
        if status.is_success() && serde_json::from_slice::<serde::de::IgnoredAny>(&answer).is_err() {
            tracing::info!(status = status.as_u16(), url = %url, "upload answered without JSON attributes; taken as stored");
            return Ok(FileAttributes::sent(send.package, send.name, send.content_type));
        }
        crate::answer::json(url, &answer)
    }

    async fn download(&self, kind: FileKind, package: Uuid, target: &Path, transfer: &Transfer) -> Result<Downloaded> {
        let url = self.client.url(&kind.path(package))?;
        let what = || Error::Cancelled { what: format!("the download of the {}", kind.what()) };
        let res = tokio::select! {
            res = self.client.send_streamed(Method::GET, url.clone(), true, |req| req) => res?,
            _ = transfer.wait_cancelled() => return Err(what()),
        };
        let header = |name: reqwest::header::HeaderName| {
            res.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
        };
        let file_name = header(reqwest::header::CONTENT_DISPOSITION).as_deref().and_then(disposition_file_name);
        let content_type = header(reqwest::header::CONTENT_TYPE);
        let total = res.content_length().unwrap_or(0);

        // Written next to the target and renamed at the end, so a failed or cancelled download
        // leaves no partial file under the target's name; the partial file is removed when the
        // download fails, is cancelled or is dropped half-way.
        let (out, part) = PartFile::create(target).await?;
        let partial = part.path.clone();
        let outcome = async {
            let mut out = out;
            let mut hasher = Hasher::new();
            let mut size = 0u64;
            transfer.report(0, total);
            // Each chunk within the read timeout: a service that stops sending ends the
            // download (its partial file removed) instead of holding it open for ever.
            let limits = self.client.limits();
            let mut body = res.bytes_stream();
            loop {
                if transfer.cancelled() {
                    return Err(what());
                }
                let chunk = tokio::select! {
                    biased;
                    _ = transfer.wait_cancelled() => return Err(what()),
                    c = tokio::time::timeout(limits.read_timeout, body.next()) => c,
                };
                let chunk = match chunk {
                    Err(_) => return Err(crate::answer::stalled(&url, size as usize, limits).error),
                    Ok(None) => break,
                    Ok(Some(Err(e))) => {
                        return Err(crate::answer::cut_short(&url, &e, size, (total != 0).then_some(total), limits))
                    }
                    Ok(Some(Ok(chunk))) => chunk,
                };
                hasher.update(&chunk);
                out.write_all(&chunk).await.map_err(|e| Error::local_file(&partial, e))?;
                size += chunk.len() as u64;
                transfer.report(size, total);
            }
            out.flush().await.map_err(|e| Error::local_file(&partial, e))?;
            out.sync_all().await.map_err(|e| Error::local_file(&partial, e))?;
            if total != 0 && size != total {
                return Err(Error::Protocol {
                    url: url.to_string(),
                    reason: format!("the download ended after {size} of {total} bytes"),
                });
            }
            Ok((hasher.hex(), size))
        }
        .await;
        let (sha256, size) = outcome?;
        tokio::fs::rename(&partial, target).await.map_err(|e| Error::local_file(target, e))?;
        part.kept();
        Ok(Downloaded { path: target.to_owned(), size, sha256, file_name, content_type })
    }
}

/// The partial file of a download: `<target>.part` (or `<target>.<n>.part` when that name is
/// taken: a file already there is never overwritten), removed when dropped unless kept.
struct PartFile {
    path: PathBuf,
    keep: bool,
}

impl PartFile {
    async fn create(target: &Path) -> Result<(tokio::fs::File, PartFile)> {
        for n in 0..100u32 {
            let mut name = target.as_os_str().to_owned();
            if n > 0 {
                name.push(format!(".{n}"));
            }
            name.push(".part");
            let path = PathBuf::from(name);
            match tokio::fs::OpenOptions::new().write(true).create_new(true).open(&path).await {
                Ok(file) => return Ok((file, PartFile { path, keep: false })),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::local_file(&path, e)),
            }
        }
        Err(Error::invalid(
            "target",
            format!("{}.part and 99 more partial files exist beside it; remove them", target.display()),
        ))
    }

    /// The file was renamed to the target: nothing to remove.
    fn kept(mut self) {
        self.keep = true;
    }
}

impl Drop for PartFile {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_and_dispositions() {
        assert_eq!(guess_content_type("notes.MD"), "text/markdown");
        assert_eq!(guess_content_type("fw-1.0.bin"), "application/octet-stream");
        assert_eq!(guess_content_type("noext"), "application/octet-stream");
        assert_eq!(disposition_file_name("attachment; filename=\"fw.bin\"").as_deref(), Some("fw.bin"));
        assert_eq!(disposition_file_name("attachment"), None);
        // A name from the service never carries a folder, a way up or control characters.
        assert_eq!(disposition_file_name("attachment; filename=\"../../.bashrc\"").as_deref(), Some(".bashrc"));
        assert_eq!(disposition_file_name("attachment; filename=\"a\\\\b/c.bin\"").as_deref(), Some("c.bin"));
        assert_eq!(disposition_file_name("attachment; filename=\"..\"").as_deref(), None);
        // Found by fuzz/service_headers: dots and spaces only.
        assert_eq!(disposition_file_name("attachment; filename=\".   .  . \"").as_deref(), None);
        assert_eq!(disposition_file_name("attachment; filename=\" . \"").as_deref(), None);
        assert_eq!(disposition_file_name("attachment; filename=\"x\u{1b}[31m\n.bin\"").as_deref(), Some("x[31m.bin"));
    }

    #[test]
    fn a_disposition_filename_star_comes_first_decoded_as_rfc_8187_says() {
        let name = |v: &str| disposition_file_name(v);
        let both = "attachment; filename=\"fallback.bin\"; filename*=UTF-8''na%C3%AFve%20fw.bin";
        assert_eq!(name(both).as_deref(), Some("naïve fw.bin"));
        assert_eq!(name("attachment; FILENAME*=utf-8'en'%E2%82%AC.bin").as_deref(), Some("€.bin"));
        assert_eq!(name("attachment; filename*=ISO-8859-1''caf%E9.bin").as_deref(), Some("café.bin"));
        assert_eq!(name("attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd").as_deref(), Some("passwd"));
        // A charset it cannot read, or bytes that are not UTF-8: the plain filename.
        assert_eq!(name("attachment; filename*=KOI8-R''%C1; filename=plain.bin").as_deref(), Some("plain.bin"));
        assert_eq!(name("attachment; filename*=UTF-8''%FF; filename=plain.bin").as_deref(), Some("plain.bin"));
        // Names in any case; a quoted `;` and escaped quote are the name's.
        assert_eq!(name("Attachment; FileName=\"a;b \\\"c\\\".bin\"").as_deref(), Some("a;b \"c\".bin"));
        assert_eq!(name("attachment; filename=plain.bin").as_deref(), Some("plain.bin"));
    }
}
