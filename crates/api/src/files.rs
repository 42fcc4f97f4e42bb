//! Firmware-file and release-notes uploads and downloads (reference section 4.1), streamed
//! from and to disk: a file is never held whole in memory.
//!
//! An upload sends the file's SHA-256 as `checksum`, so the service can verify what arrived. It
//! reads the file twice (once for the checksum, once while sending it), or once when the caller
//! already knows the checksum ([`UploadOptions::checksum`]). Either way the bytes sent are hashed
//! on the way and the upload stops before its last chunk when they do not match the checksum
//! (the file changed since it was hashed). Uploads create something and are never retried. Both
//! directions report progress and can be cancelled.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use futures::StreamExt;
use reqwest::multipart::{Form, Part};
use reqwest::Method;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::io::ReaderStream;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::firmware::Firmware;
use crate::model::{validate, FileAttributes, Problem};

/// Called with (bytes transferred so far, total bytes; 0 when the total is not known).
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

const CHUNK: usize = 64 * 1024;

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

/// The refusal when the bytes read while sending are not the ones hashed.
fn changed_while_sending(path: &Path, checksum: &str) -> Error {
    Error::invalid(
        "file",
        format!(
            "{} changed since its SHA-256 ({checksum}) was computed: the bytes read while sending do not match it; the upload was stopped before its end and nothing was stored: choose the file again",
            path.display()
        ),
    )
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

/// SHA-256 of a regular file, read in chunks; with its size. Only the size the file had when
/// opened is read (and progress reported against it), so a file that grows meanwhile is read
/// to that size.
pub async fn sha256_file(path: &Path, transfer: &Transfer) -> Result<(String, u64)> {
    let (file, meta) = open_regular(path).await?;
    let total = meta.len();
    let mut file = file.take(total);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut size = 0u64;
    transfer.report(0, total);
    loop {
        if transfer.cancelled() {
            return Err(Error::Cancelled { what: format!("reading {}", path.display()) });
        }
        let n = file.read(&mut buf).await.map_err(|e| Error::local_file(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
        transfer.report(size, total.max(size));
    }
    Ok((hex::encode(hasher.finalize()), size))
}

/// The `filename` of a `Content-Disposition: attachment; filename="..."` header, made safe to
/// show or propose for saving: its last path component without control characters; none when
/// nothing is left but dots and spaces (`..`, `. . `: Windows drops trailing dots and spaces).
pub fn disposition_file_name(value: &str) -> Option<String> {
    let raw = value.split(';').map(str::trim).find_map(|p| p.strip_prefix("filename="))?.trim_matches('"');
    let last = raw.rsplit(['/', '\\']).next().unwrap_or("");
    let name: String = last.chars().filter(|c| !c.is_control()).collect();
    (!name.trim_matches(|c: char| c == '.' || c.is_whitespace()).is_empty()).then_some(name)
}

impl Firmware<'_> {
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

        // The checksum: the one known (the file unchanged since), else a first pass.
        let (checksum, total, file) = match &options.checksum {
            Some(known) => {
                let (file, meta) = open_regular(path).await?;
                known.check(path, &meta)?;
                (known.sha256.to_ascii_lowercase(), known.size, file)
            }
            None => {
                let first =
                    Transfer { progress: transfer.hashing.clone(), hashing: None, cancel: transfer.cancel.clone() };
                let (checksum, total) = sha256_file(path, &first).await?;
                let (file, _) = open_regular(path).await?;
                (checksum, total, file)
            }
        };

        // The body, streamed from the file with progress and cancellation, and hashed on the
        // way: the last chunk is held back when the bytes do not match the checksum (or the
        // file ends early), so the service never receives a complete, different file.
        let progress = transfer.clone();
        let sent = Arc::new(AtomicU64::new(0));
        let changed = Arc::new(AtomicBool::new(false));
        let mut hasher = Some(Sha256::new());
        let (sent_in, changed_in, expected) = (sent.clone(), changed.clone(), checksum.clone());
        progress.report(0, total);
        let body = ReaderStream::with_capacity(file.take(total), CHUNK).map(move |chunk| {
            if progress.cancelled() {
                return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "upload cancelled"));
            }
            let chunk = chunk?;
            let done = sent_in.fetch_add(chunk.len() as u64, Ordering::Relaxed) + chunk.len() as u64;
            if let Some(h) = hasher.as_mut() {
                h.update(&chunk);
            }
            if done >= total {
                let got = hasher.take().map(|h| hex::encode(h.finalize()));
                if got.as_deref() != Some(expected.as_str()) {
                    changed_in.store(true, Ordering::Relaxed);
                    return Err(std::io::Error::other("the file changed since it was hashed"));
                }
            }
            progress.report(done, total);
            Ok::<_, std::io::Error>(chunk)
        });
        let (sent_end, changed_end) = (sent.clone(), changed.clone());
        let short = futures::stream::once(async move {
            if sent_end.load(Ordering::Relaxed) < total {
                changed_end.store(true, Ordering::Relaxed);
                Err(std::io::Error::other("the file ended before the size it was hashed with"))
            } else {
                Ok(bytes::Bytes::new())
            }
        });
        let body = body.chain(short);
        let part = Part::stream_with_length(reqwest::Body::wrap_stream(body), total)
            .file_name(name)
            .mime_str(&content_type)
            .map_err(|e| Error::invalid("contentType", e.to_string()))?;
        let mut form = Some(Form::new().part("file", part).text("checksum", checksum.clone()));

        let what = || Error::Cancelled { what: format!("the upload of the {}", kind.what()) };
        if transfer.cancelled() {
            return Err(what());
        }
        // Never repeated: the body can be sent once, and the upload creates something.
        let send = self.client.send_streamed(Method::POST, url.clone(), false, |req| match form.take() {
            Some(form) => req.multipart(form),
            None => req,
        });
        let res = tokio::select! {
            res = send => res,
            _ = transfer.wait_cancelled() => return Err(what()),
        };
        let res = match res {
            Err(_) if transfer.cancelled() => return Err(what()),
            Err(_) if changed.load(Ordering::Relaxed) => return Err(changed_while_sending(path, &checksum)),
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
        let answer = tokio::select! {
            b = crate::answer::read(res, &url, self.client.limits()) => b?,
            _ = transfer.wait_cancelled() => return Err(what()),
        };
        crate::answer::json(&url, &answer)
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
            let mut hasher = Sha256::new();
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
            Ok((hex::encode(hasher.finalize()), size))
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
}
