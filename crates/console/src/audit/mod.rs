//! The audit log: every write made through the app or `dcs`, recorded before it is sent and
//! completed with its outcome, in one file both write (`audit.jsonl` in the data folder).
//!
//! - **What is recorded.** A `write` entry before a request goes out (when, profile, API key id,
//!   acting-for customer, OS user, operation, target ids, the request without secrets, the
//!   file's size and SHA-256), then an `outcome` entry naming it (done, refused with the service's
//!   status and problem, not sent, or unknown). Actions of the console's own (a rollout paused,
//!   a profile changed) are one `local` entry. A write whose outcome never came (the process
//!   stopped, no answer) reads as unknown.
//! - **Hash chain.** Each line ends in `"hash":"<sha256>"`, the SHA-256 of the line before that
//!   member, which holds `prev`, the hash of the line before. Changing a byte breaks that line's
//!   hash; removing a line breaks the next one's `prev`; removing the last lines is seen against
//!   `audit.head` (the last entry's number and hash). [`verify`] names the first broken entry.
//!   The chain proves the file was not edited without rewriting every later hash; a person who
//!   can rewrite the whole file and its head can forge it (nothing outside this computer holds a
//!   copy).
//! - **Several writers.** The app and `dcs` append under an exclusive lock of the file; each
//!   line is one `write` followed by `fsync`, then the head is replaced (a temporary file renamed
//!   over it).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write as _};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use dcs_api::audit::{Certainty, Note, Outcome, Ticket, Write, WriteAudit};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::set_target::SetTarget;

mod view;
pub use view::{records, Check, ExportFormat, Filter, Listed, Record};

/// The log's file name in the data folder.
pub const FILE: &str = "audit.jsonl";
/// The file holding the last entry's number and hash.
pub const HEAD: &str = "audit.head";
/// `prev` of the first entry.
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// What ends every line: `,"hash":"` + 64 hex + `"}`.
const HASH_TAIL: usize = 9 + 64 + 2;
/// A request summary longer than this (as JSON) is replaced by its size.
const MAX_REQUEST: usize = 4096;
/// Strings of a request summary are cut to this many characters.
const MAX_STRING: usize = 256;
/// Items of an array kept in a request summary.
const MAX_ITEMS: usize = 20;

/// One line of the log. Which members are present depends on `kind`; readers keep what they
/// do not know.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub seq: u64,
    /// RFC 3339, UTC, milliseconds.
    pub at: String,
    /// `write`, `outcome` or `local`.
    pub kind: String,
    /// An outcome's write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<Actor>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// The request (or a local action's details) without secrets, long values cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileInfo>,
    /// `done`, `refused`, `not sent` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The refusal's problem title and detail, or the error in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The SHA-256 of an uploaded file as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    pub prev: String,
}

/// Who made a write: the program, the profile and key, the customer acted for, the OS user.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    /// `app` or `cli`.
    pub source: String,
    pub profile: String,
    pub key_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_label: Option<String>,
    pub os_user: String,
}

/// The file an upload sent.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FileInfo {
    pub name: String,
    pub size: u64,
}

/// An error of the audit log: its file and what went wrong.
#[derive(Debug, thiserror::Error)]
#[error("the audit log {path}: {source}")]
pub struct AuditError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

impl From<AuditError> for dcs_api::Error {
    fn from(e: AuditError) -> Self {
        dcs_api::Error::LocalFile { path: e.path, source: e.source }
    }
}

impl From<AuditError> for crate::Error {
    fn from(e: AuditError) -> Self {
        crate::Error::Api(e.into())
    }
}

/// A write refused because it could not be recorded first.
fn not_recorded(e: AuditError) -> dcs_api::Error {
    let source = std::io::Error::new(
        e.source.kind(),
        format!("{}; the write could not be recorded in the audit log, so it was not sent", e.source),
    );
    dcs_api::Error::LocalFile { path: e.path, source }
}

/// Which program writes: `app` once the app says so, else `cli`.
static SOURCE: OnceLock<&'static str> = OnceLock::new();

/// Names the program that writes (the app calls this at start; `dcs` need not).
pub fn set_source(source: &'static str) {
    let _ = SOURCE.set(source);
}

fn source() -> &'static str {
    SOURCE.get().copied().unwrap_or("cli")
}

/// The OS account running this process (from the system, not from `USER`).
pub fn os_user() -> String {
    whoami::username().unwrap_or_else(|_| "unknown".to_owned())
}

/// Now, as entries write it: UTC to the millisecond, always 24 characters (so text order is
/// time order).
fn now() -> String {
    use time::macros::format_description;
    let f = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    time::OffsetDateTime::now_utc().format(&f).unwrap_or_default()
}

/// The audit log of one data folder.
#[derive(Debug, Clone)]
pub struct AuditLog {
    dir: PathBuf,
}

/// The head: the last entry's number and hash.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
struct Head {
    seq: u64,
    hash: String,
}

impl AuditLog {
    /// The log in `dir` (the data folder).
    pub fn at(dir: impl Into<PathBuf>) -> AuditLog {
        AuditLog { dir: dir.into() }
    }

    /// The log of this process's data folder ([`crate::data_dir`]), if there is one.
    pub fn default_location() -> Option<AuditLog> {
        crate::data_dir().map(AuditLog::at)
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    fn head_path(&self) -> PathBuf {
        self.dir.join(HEAD)
    }

    fn err(&self, source: std::io::Error) -> AuditError {
        AuditError { path: self.path().display().to_string(), source }
    }

    /// Appends `entry` (its `seq` and `prev` are set here) and answers its number.
    pub fn append(&self, mut entry: Entry) -> Result<u64, AuditError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| self.err(e))?;
        let mut file =
            OpenOptions::new().read(true).append(true).create(true).open(self.path()).map_err(|e| self.err(e))?;
        file.lock().map_err(|e| self.err(e))?;
        let (last, torn) = last_entry(&mut file).map_err(|e| self.err(e))?;
        let last = match last {
            Some(last) => last,
            None => self.read_head().unwrap_or(Head { seq: 0, hash: GENESIS.to_owned() }),
        };
        entry.seq = last.seq + 1;
        entry.prev = last.hash;
        let (mut line, hash) = seal(&entry);
        if torn {
            // A line cut short by a stop mid-write stays (verify reports it); this one starts anew.
            line.insert(0, '\n');
        }
        line.push('\n');
        file.write_all(line.as_bytes()).map_err(|e| self.err(e))?;
        let head = self.place_head(&Head { seq: entry.seq, hash }).map_err(|e| self.err(e))?;
        // The lock is held only while the chain moves on (the last entry read, this one and the
        // head written), not across the disk's syncs: a process stopped while it holds the lock
        // (SIGSTOP, a debugger) stops every other writer of this data folder. Then both are made
        // durable before the write this entry records is sent: the line first, then the head
        // (on ext4's default data=ordered, a head renamed after the line was written never
        // reaches the disk before it).
        file.unlock().map_err(|e| self.err(e))?;
        file.sync_data().map_err(|e| self.err(e))?;
        if let Ok(head) = File::open(head) {
            head.sync_all().map_err(|e| self.err(e))?;
        }
        Ok(entry.seq)
    }

    /// Writes the head beside the log and renames it into place, unsynced (the caller holds the
    /// log's lock, and syncs after letting go of it); answers its path.
    fn place_head(&self, head: &Head) -> std::io::Result<PathBuf> {
        let bytes = serde_json::to_vec(head).map_err(std::io::Error::other)?;
        let path = self.head_path();
        // Beside it, readable by this user only, under a name of its own.
        let mut temp = tempfile::NamedTempFile::new_in(&self.dir)?;
        temp.write_all(&bytes)?;
        temp.persist(&path).map_err(|e| e.error)?;
        Ok(path)
    }

    fn read_head(&self) -> Option<Head> {
        serde_json::from_slice(&std::fs::read(self.head_path()).ok()?).ok()
    }

    /// Every entry that reads as one, in order (broken lines are left out: [`AuditLog::verify`]
    /// names them).
    pub fn entries(&self) -> Result<Vec<Entry>, AuditError> {
        let file = match File::open(self.path()) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.err(e)),
        };
        let mut out = Vec::new();
        for line in BufReader::new(file).split(b'\n') {
            let line = line.map_err(|e| self.err(e))?;
            if let Some((body, _)) = split_hash(&line) {
                if let Ok(entry) = parse_body(body) {
                    out.push(entry);
                }
            }
        }
        Ok(out)
    }

    /// Checks the chain from the first entry to the head.
    pub fn verify(&self) -> Result<Verified, AuditError> {
        let file = match File::open(self.path()) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(match self.read_head() {
                    Some(head) if head.seq > 0 => Verified::broken(
                        0,
                        0,
                        Some(1),
                        format!("the log file is missing, but its head says it held {} entries", head.seq),
                    ),
                    _ => Verified { entries: 0, broken: None },
                })
            }
            Err(e) => return Err(self.err(e)),
        };
        let mut prev = GENESIS.to_owned();
        let mut seq = 0u64;
        let mut lines = 0u64;
        for line in BufReader::new(file).split(b'\n') {
            let line = line.map_err(|e| self.err(e))?;
            lines += 1;
            let next = seq + 1;
            let Some((body, claimed)) = split_hash(&line) else {
                return Ok(Verified::broken(
                    seq,
                    lines,
                    Some(next),
                    "this line is not a whole entry (cut short, or its hash was changed)".into(),
                ));
            };
            let entry = match parse_body(body) {
                Ok(e) => e,
                Err(e) => {
                    return Ok(Verified::broken(
                        seq,
                        lines,
                        Some(next),
                        format!("this line does not read as an entry ({e})"),
                    ))
                }
            };
            if dcs_api::files::sha256_hex(body) != claimed {
                return Ok(Verified::broken(
                    seq,
                    lines,
                    Some(entry.seq),
                    "its content does not match its hash: it was changed after it was written".into(),
                ));
            }
            if entry.prev != prev || entry.seq != next {
                let why = if entry.seq > next {
                    format!("entries {next} to {} before it are missing", entry.seq - 1)
                } else {
                    "the entry before it was removed, replaced or moved".to_owned()
                };
                return Ok(Verified::broken(seq, lines, Some(entry.seq), why));
            }
            prev = claimed.to_owned();
            seq = entry.seq;
        }
        // The head: the last lines removed show here. One entry past the head is a stop between
        // the line's write and the head's.
        if let Some(head) = self.read_head() {
            if head.seq > seq {
                return Ok(Verified::broken(
                    seq,
                    lines,
                    Some(seq + 1),
                    format!(
                        "entries {} to {} at the end were removed (the head says {} entries)",
                        seq + 1,
                        head.seq,
                        head.seq
                    ),
                ));
            }
            if head.seq == seq && head.hash != prev {
                return Ok(Verified::broken(
                    seq,
                    lines,
                    Some(seq),
                    "the last entry does not match the head: it was replaced".into(),
                ));
            }
        }
        Ok(Verified { entries: seq, broken: None })
    }
}

/// What [`AuditLog::verify`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "AuditVerified", rename_all = "camelCase")]
pub struct Verified {
    /// Entries checked and found whole, from the first.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub entries: u64,
    pub broken: Option<Broken>,
}

/// The first entry that fails the check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "AuditBroken", rename_all = "camelCase")]
pub struct Broken {
    /// Its number, when it can be read (else the number it should have had).
    #[cfg_attr(feature = "specta", specta(type = Option<f64>))]
    pub seq: Option<u64>,
    /// Its line in the file, from 1.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub line: u64,
    pub reason: String,
}

impl Verified {
    fn broken(good: u64, line: u64, seq: Option<u64>, reason: String) -> Verified {
        Verified { entries: good, broken: Some(Broken { seq, line, reason }) }
    }
}

/// The line of `entry` (without its newline) and its hash.
fn seal(entry: &Entry) -> (String, String) {
    let json = serde_json::to_string(entry).expect("an entry serializes");
    let body = &json[..json.len() - 1];
    let hash = dcs_api::files::sha256_hex(body.as_bytes());
    (format!("{body},\"hash\":\"{hash}\"}}"), hash)
}

/// A line's body (before its hash member) and the hash it claims, when it ends as a line does.
fn split_hash(line: &[u8]) -> Option<(&[u8], &str)> {
    let n = line.len();
    if n < HASH_TAIL + 2 || !line.ends_with(b"\"}") || &line[n - HASH_TAIL..n - HASH_TAIL + 9] != b",\"hash\":\"" {
        return None;
    }
    let hash = std::str::from_utf8(&line[n - 66..n - 2]).ok()?;
    hash.bytes().all(|b| b.is_ascii_hexdigit()).then_some((&line[..n - HASH_TAIL], hash))
}

fn parse_body(body: &[u8]) -> serde_json::Result<Entry> {
    let mut json = Vec::with_capacity(body.len() + 1);
    json.extend_from_slice(body);
    json.push(b'}');
    serde_json::from_slice(&json)
}

/// The last whole entry of the file (its number and hash), and whether the file ends in a
/// line cut short.
fn last_entry(file: &mut File) -> std::io::Result<(Option<Head>, bool)> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok((None, false));
    }
    // Lines are a few KiB at most (requests are summarised): the last 256 KiB hold the last one.
    let start = len.saturating_sub(256 * 1024);
    file.seek(SeekFrom::Start(start))?;
    let mut tail = Vec::with_capacity((len - start) as usize);
    file.read_to_end(&mut tail)?;
    let torn = tail.last() != Some(&b'\n');
    for line in tail.split(|b| *b == b'\n').rev() {
        if let Some((body, hash)) = split_hash(line) {
            if let Ok(entry) = parse_body(body) {
                return Ok((Some(Head { seq: entry.seq, hash: hash.to_owned() }), torn));
            }
        }
    }
    Ok((None, torn))
}

// ---- The recorder the client calls ([`dcs_api::audit`]). ----

/// Records the writes of one client as one actor into a log.
pub struct Recorder {
    log: AuditLog,
    actor: Actor,
    /// The service's base path, taken off request paths to name operations.
    base_path: String,
    /// The profile's set-target operation, to name its requests `target.set`.
    set_target: Option<SetTarget>,
}

impl Recorder {
    pub fn new(log: AuditLog, actor: Actor, base_url: &url::Url, set_target: Option<SetTarget>) -> Recorder {
        Recorder { log, actor, base_path: base_url.path().to_owned(), set_target }
    }

    /// The recorder of a connected profile, in this process's data folder; none without one.
    pub fn for_profile(
        profile: &crate::Profile,
        base_url: &url::Url,
        customer: Option<Uuid>,
    ) -> Option<Arc<dyn WriteAudit>> {
        let log = AuditLog::default_location()?;
        let actor = Actor {
            source: source().to_owned(),
            profile: profile.name.clone(),
            key_id: profile.client_id.clone(),
            customer,
            customer_label: customer
                .and_then(|id| profile.customers.iter().find(|c| c.id == id))
                .map(|c| c.label.clone())
                .filter(|l| !l.is_empty()),
            os_user: os_user(),
        };
        let set_target = profile.set_target.clone().or_else(|| profile.is_simulator().then(SetTarget::simulator));
        Some(Arc::new(Recorder::new(log, actor, base_url, set_target)))
    }
}

impl WriteAudit for Recorder {
    fn begin(&self, write: &Write<'_>) -> Result<Ticket, dcs_api::Error> {
        let path = write.url.path();
        let rel = path.strip_prefix(self.base_path.as_str()).unwrap_or(path).trim_start_matches('/');
        let body: Option<Value> = write.body.map(|b| serde_json::from_slice(b).unwrap_or(Value::Null));
        let (operation, targets) = name_write(write.method, rel, write.url, body.as_ref(), self.set_target.as_ref());
        let request = match (&body, write.body) {
            (Some(Value::Null), Some(b)) => Some(serde_json::json!({ "bytes": b.len() })),
            (Some(v), _) => Some(summarise(v)),
            _ => None,
        };
        let entry = Entry {
            at: now(),
            kind: "write".into(),
            actor: Some(self.actor.clone()),
            operation: Some(operation),
            method: Some(write.method.to_owned()),
            path: Some(match write.url.query() {
                Some(q) => format!("{path}?{q}"),
                None => path.to_owned(),
            }),
            targets,
            request,
            file: write.file.map(|f| FileInfo { name: f.name.to_owned(), size: f.size }),
            sha256: write.file.and_then(|f| f.sha256.map(str::to_owned)),
            ..Entry::default()
        };
        Ok(Ticket(self.log.append(entry).map_err(not_recorded)?))
    }

    fn end(&self, ticket: Ticket, outcome: &Outcome<'_>) {
        let mut entry = Entry { at: now(), kind: "outcome".into(), of: Some(ticket.0), ..Entry::default() };
        entry.result = Some(result_name(outcome.certainty()).to_owned());
        match outcome {
            Outcome::Done { status, sha256 } => {
                entry.status = Some(*status);
                entry.sha256 = sha256.map(str::to_owned);
            }
            Outcome::Failed(e) => {
                entry.status = match e {
                    dcs_api::Error::Api { status, .. } => Some(*status),
                    _ => None,
                };
                entry.error = Some(cut(&e.to_string(), 2000));
            }
        }
        // The write went out: an outcome that cannot be recorded leaves it reading as unknown,
        // which is what it then is to the log.
        if let Err(e) = self.log.append(entry) {
            tracing::error!(error = %e, write = ticket.0, "the outcome of a write could not be recorded");
        }
    }

    fn note(&self, note: &Note<'_>) -> Result<(), dcs_api::Error> {
        let entry = Entry {
            at: now(),
            kind: "local".into(),
            actor: Some(self.actor.clone()),
            operation: Some(note.operation.to_owned()),
            targets: note.targets.to_vec(),
            request: Some(summarise(note.details)),
            result: Some("done".into()),
            ..Entry::default()
        };
        self.log.append(entry).map_err(not_recorded)?;
        Ok(())
    }
}

impl Actor {
    /// This process acting on `name` (a profile), outside a connection.
    pub fn local(name: &str, profile: Option<&crate::Profile>) -> Actor {
        Actor {
            source: source().to_owned(),
            profile: name.to_owned(),
            key_id: profile.map(|p| p.client_id.clone()).unwrap_or_default(),
            customer: None,
            customer_label: None,
            os_user: os_user(),
        }
    }
}

/// The profile changes from `before` to `after`: operation, profile and what changed (names of
/// the changed settings; no secret is in a profile).
pub fn profile_changes(before: &crate::Config, after: &crate::Config) -> Vec<(&'static str, String, Value)> {
    let mut out = Vec::new();
    for p in &after.profiles {
        match before.profile(&p.name) {
            None => out.push((
                "profile.create",
                p.name.clone(),
                serde_json::json!({ "baseUrl": p.base_url, "clientId": p.client_id, "customers": p.customers.len() }),
            )),
            Some(old) if old != p => {
                let (a, b) =
                    (serde_json::to_value(old).unwrap_or_default(), serde_json::to_value(p).unwrap_or_default());
                let mut changed: Vec<String> = Vec::new();
                if let (Some(a), Some(b)) = (a.as_object(), b.as_object()) {
                    changed = a.keys().chain(b.keys()).filter(|k| a.get(*k) != b.get(*k)).cloned().collect();
                    changed.sort();
                    changed.dedup();
                }
                out.push(("profile.update", p.name.clone(), serde_json::json!({ "changed": changed })));
            }
            Some(_) => {}
        }
    }
    for p in &before.profiles {
        if after.profile(&p.name).is_none() {
            out.push(("profile.delete", p.name.clone(), serde_json::json!({ "baseUrl": p.base_url })));
        }
    }
    if before.default_profile != after.default_profile {
        let name = after.default_profile.clone().unwrap_or_else(|| crate::SIMULATOR_PROFILE.to_owned());
        out.push(("profile.default", name, serde_json::json!({ "was": before.default_profile })));
    }
    out
}

/// Records what the operator did to item `id` (a rollout paused) in the audit log of
/// `client`, as its actor; the writes it leads to are recorded as they are sent.
pub fn note(client: &dcs_api::Client, operation: &str, id: &str, details: Value) -> Result<(), dcs_api::Error> {
    client.note(&Note { operation, targets: &[id.to_owned()], details: &details })
}

/// Records that the keychain's secret of `profile` was `what` (stored, replaced, removed), in
/// this process's data folder; never the secret. A failure is logged: the keychain has changed.
pub fn note_secret(profile: &str, what: &str) {
    let Some(log) = AuditLog::default_location() else { return };
    let details = serde_json::json!({ "secret": what });
    if let Err(e) = note_local(&log, Actor::local(profile, None), "profile.secret", vec![profile.to_owned()], &details)
    {
        tracing::error!(error = %e, "a secret change could not be recorded in the audit log");
    }
}

/// Records a local action by `actor` outside a client (a profile changed).
pub fn note_local(
    log: &AuditLog,
    actor: Actor,
    operation: &str,
    targets: Vec<String>,
    details: &Value,
) -> Result<(), AuditError> {
    log.append(Entry {
        at: now(),
        kind: "local".into(),
        actor: Some(actor),
        operation: Some(operation.to_owned()),
        targets,
        request: Some(summarise(details)),
        result: Some("done".into()),
        ..Entry::default()
    })
    .map(|_| ())
}

pub fn result_name(c: Certainty) -> &'static str {
    match c {
        Certainty::Done => "done",
        Certainty::Refused => "refused",
        Certainty::NotSent => "not sent",
        Certainty::Unknown => "unknown",
    }
}

fn cut(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_owned();
    }
    format!("{}… ({n} characters)", s.chars().take(max).collect::<String>())
}

/// Whether a member of that name holds a secret (a password, key, token or shared secret).
fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["password", "secret", "token", "credential", "authorization"].iter().any(|w| n.contains(w)) || n.ends_with("key")
}

/// `v` without secrets, long strings and arrays cut, and as a whole no longer than
/// [`MAX_REQUEST`] (else its size alone).
pub fn summarise(v: &Value) -> Value {
    fn walk(v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(cut(s, MAX_STRING)),
            Value::Array(items) => {
                let mut out: Vec<Value> = items.iter().take(MAX_ITEMS).map(walk).collect();
                if items.len() > MAX_ITEMS {
                    out.push(Value::String(format!("… {} more", items.len() - MAX_ITEMS)));
                }
                Value::Array(out)
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let v = if secret_name(k) && !v.is_null() { Value::String("***".into()) } else { walk(v) };
                        (cut(k, MAX_STRING), v)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let out = walk(v);
    let size = serde_json::to_string(&out).map(|s| s.len()).unwrap_or(usize::MAX);
    if size > MAX_REQUEST {
        serde_json::json!({ "summary": format!("{size} bytes of JSON, too long to keep") })
    } else {
        out
    }
}

/// The operation a request is (`package.create`, `downlink.send`...) and the ids it concerns.
fn name_write(
    method: &str,
    rel: &str,
    url: &url::Url,
    body: Option<&Value>,
    set_target: Option<&SetTarget>,
) -> (String, Vec<String>) {
    let seg: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
    let field = |name: &str| {
        body.and_then(|b| b.get(name)).and_then(|v| match v {
            Value::String(s) => Some(cut(s, MAX_STRING)),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    };
    let mut targets: Vec<String> = Vec::new();
    let forced = url.query_pairs().any(|(k, v)| k == "forced" && v == "true");
    let op = match (method, seg.as_slice()) {
        ("POST", ["firmware", "packages"]) => {
            targets.extend(field("moduleId"));
            targets.extend(field("firmwareVersion"));
            "package.create"
        }
        ("PUT", ["firmware", "packages", id]) => {
            targets.push((*id).to_owned());
            "package.update"
        }
        ("DELETE", ["firmware", "packages", id]) => {
            targets.push((*id).to_owned());
            "package.delete"
        }
        ("POST", ["firmware", "packages", id, "firmware-file"]) => {
            targets.push((*id).to_owned());
            "firmware-file.upload"
        }
        ("POST", ["firmware", "packages", id, "release-notes-file"]) => {
            targets.push((*id).to_owned());
            "release-notes.upload"
        }
        ("DELETE", ["firmware", "packages", id, "release-notes-file"]) => {
            targets.push((*id).to_owned());
            "release-notes.delete"
        }
        ("POST", ["downlinks"]) | ("POST", [_, "downlinks"]) => {
            // An actuator downlink names its device in its method (section 2.6).
            let in_method = body.and_then(|b| b.pointer("/method/deviceId")).and_then(Value::as_str);
            targets.extend(field("deviceId").or(in_method.map(|d| cut(d, MAX_STRING))));
            "downlink.send"
        }
        ("DELETE", ["downlinks", id]) | ("DELETE", [_, "downlinks", id]) => {
            targets.push((*id).to_owned());
            if forced {
                "downlink.force-cancel"
            } else {
                "downlink.cancel"
            }
        }
        ("POST", ["api", "actuator", "downlinks"]) => {
            if let Some(Value::Array(records)) = body {
                targets.extend(records.iter().filter_map(|r| r.get("bn")?.as_str()).take(MAX_ITEMS).map(str::to_owned));
            }
            "downlink.send"
        }
        ("POST", [_, "bindings"]) => {
            targets.extend(field("deviceId"));
            "binding.create"
        }
        ("PUT", [_, "bindings", id]) => {
            targets.push((*id).to_owned());
            targets.extend(field("deviceId"));
            "binding.update"
        }
        ("DELETE", [_, "bindings", id]) => {
            targets.push((*id).to_owned());
            "binding.delete"
        }
        _ => match set_target.and_then(|op| slots(op, method, &seg)) {
            Some(slots) => {
                targets.extend(slots);
                "target.set"
            }
            None => "other",
        },
    };
    (op.to_owned(), targets)
}

/// The values of the slots of `op`'s path when `method` and `seg` are a request of it.
fn slots(op: &SetTarget, method: &str, seg: &[&str]) -> Option<Vec<String>> {
    if !op.method.eq_ignore_ascii_case(method) {
        return None;
    }
    let pattern: Vec<&str> = op.path.split('/').filter(|s| !s.is_empty()).collect();
    if pattern.len() != seg.len() {
        return None;
    }
    let mut out = Vec::new();
    for (p, s) in pattern.iter().zip(seg) {
        if p.starts_with('{') && p.ends_with('}') {
            out.push(percent_decode(s));
        } else if p != s {
            return None;
        }
    }
    Some(out)
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(op: &str) -> Entry {
        Entry {
            at: now(),
            kind: "local".into(),
            actor: Some(Actor {
                source: "cli".into(),
                profile: "p".into(),
                key_id: "k".into(),
                os_user: "u".into(),
                ..Actor::default()
            }),
            operation: Some(op.into()),
            targets: vec![format!("{op}-target")],
            result: Some("done".into()),
            ..Entry::default()
        }
    }

    fn log_with(n: u64) -> (tempfile::TempDir, AuditLog) {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::at(dir.path());
        for i in 1..=n {
            assert_eq!(log.append(local(&format!("op{i}"))).unwrap(), i);
        }
        (dir, log)
    }

    fn lines(log: &AuditLog) -> Vec<Vec<u8>> {
        std::fs::read(log.path())
            .unwrap()
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    fn write_lines(log: &AuditLog, lines: &[Vec<u8>]) {
        let mut out = lines.join(&b'\n');
        out.push(b'\n');
        std::fs::write(log.path(), out).unwrap();
    }

    #[test]
    fn a_whole_log_verifies_and_reads_back_in_order() {
        let (_d, log) = log_with(5);
        assert_eq!(log.verify().unwrap(), Verified { entries: 5, broken: None });
        let ops: Vec<_> = log.entries().unwrap().into_iter().map(|e| e.operation.unwrap()).collect();
        assert_eq!(ops, ["op1", "op2", "op3", "op4", "op5"]);
        // An empty or absent log is whole.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(AuditLog::at(empty.path()).verify().unwrap(), Verified { entries: 0, broken: None });
    }

    #[test]
    fn any_one_byte_changed_names_that_entry() {
        let (_d, log) = log_with(5);
        let original = lines(&log);
        // Every byte of entry 3, changed in turn (to a different character of the same kind).
        for i in 0..original[2].len() {
            let mut changed = original.clone();
            let b = changed[2][i];
            changed[2][i] = if b.is_ascii_digit() {
                if b == b'9' {
                    b'0'
                } else {
                    b + 1
                }
            } else if b == b'x' {
                b'y'
            } else {
                b'x'
            };
            write_lines(&log, &changed);
            let v = log.verify().unwrap();
            let broken = v.broken.unwrap_or_else(|| panic!("byte {i} changed unseen"));
            assert_eq!((broken.line, v.entries), (3, 2), "byte {i}: {broken:?}");
            assert!(broken.seq == Some(3) || broken.seq.is_some(), "{broken:?}");
        }
        write_lines(&log, &original);
        assert!(log.verify().unwrap().broken.is_none());
    }

    #[test]
    fn removed_entries_are_named_in_the_middle_and_at_the_end() {
        let (_d, log) = log_with(5);
        let original = lines(&log);
        let mut gap = original.clone();
        gap.remove(2);
        write_lines(&log, &gap);
        let b = log.verify().unwrap().broken.unwrap();
        assert_eq!((b.seq, b.line), (Some(4), 3), "{b:?}");
        assert!(b.reason.contains("entries 3 to 3"), "{}", b.reason);

        // The last two removed: the head still says five.
        write_lines(&log, &original[..3]);
        let b = log.verify().unwrap().broken.unwrap();
        assert_eq!(b.seq, Some(4), "{b:?}");
        assert!(b.reason.contains("entries 4 to 5 at the end were removed"), "{}", b.reason);

        // The log file gone, its head left.
        std::fs::remove_file(log.path()).unwrap();
        assert!(log.verify().unwrap().broken.unwrap().reason.contains("missing"));
    }

    #[test]
    fn a_line_cut_short_is_reported_and_the_log_goes_on_after_it() {
        let (_d, log) = log_with(3);
        let mut bytes = std::fs::read(log.path()).unwrap();
        bytes.extend_from_slice(br#"{"seq":4,"at":"2026"#);
        std::fs::write(log.path(), &bytes).unwrap();
        // The next entry chains to the last whole one, on a line of its own.
        assert_eq!(log.append(local("after")).unwrap(), 4);
        assert_eq!(log.entries().unwrap().last().unwrap().operation.as_deref(), Some("after"));
        let b = log.verify().unwrap().broken.unwrap();
        assert_eq!(b.line, 4, "{b:?}");
        assert!(b.reason.contains("not a whole entry"), "{}", b.reason);
    }

    #[test]
    fn writers_at_once_each_get_their_own_number_and_the_chain_holds() {
        let (_d, log) = log_with(0);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let log = log.clone();
                std::thread::spawn(move || {
                    (0..40).map(|i| log.append(local(&format!("t{t}-{i}"))).unwrap()).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seqs: Vec<u64> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        seqs.sort();
        assert_eq!(seqs, (1..=160).collect::<Vec<_>>());
        assert_eq!(log.verify().unwrap(), Verified { entries: 160, broken: None });
    }

    #[test]
    fn summaries_hold_no_secret_and_stay_short() {
        let body = serde_json::json!({
            "deviceId": "imei:490154203237518",
            "password": "Sup3r-secret-password-123456!",
            "appKey": "00112233445566778899AABBCCDDEEFF",
            "nested": { "sharedSecret": "s3cr3t", "token": "t0k", "fine": "x".repeat(1000) },
            "list": (0..50).collect::<Vec<_>>(),
            "absent": null,
        });
        let s = summarise(&body);
        let text = s.to_string();
        for secret in ["Sup3r-secret", "00112233445566778899", "s3cr3t", "t0k"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert_eq!(s["password"], "***");
        assert_eq!(s["nested"]["sharedSecret"], "***");
        assert_eq!(s["deviceId"], "imei:490154203237518");
        assert!(s["nested"]["fine"].as_str().unwrap().contains("(1000 characters)"));
        assert_eq!(s["list"].as_array().unwrap().len(), MAX_ITEMS + 1);
        let huge =
            serde_json::json!({ "items": (0..20).map(|i| "y".repeat(250) + &i.to_string()).collect::<Vec<_>>() });
        assert!(summarise(&huge)["summary"].as_str().unwrap().contains("too long"));
    }

    #[test]
    fn writes_are_named_by_their_request() {
        let base = url::Url::parse("https://h.example/pre/").unwrap();
        let name = |method: &str, path: &str, body: Option<Value>| {
            let url = base.join(path).unwrap();
            let rel = url.path().strip_prefix("/pre/").unwrap().to_owned();
            name_write(method, &rel, &url, body.as_ref(), Some(&SetTarget::simulator()))
        };
        let id = "7d7a1c7e-0d5c-4c55-9f8a-2b8c8f3b0a11";
        assert_eq!(
            name("POST", "firmware/packages", Some(serde_json::json!({"moduleId": id, "firmwareVersion": "1.2"}))),
            ("package.create".into(), vec![id.into(), "1.2".into()])
        );
        assert_eq!(
            name("DELETE", &format!("firmware/packages/{id}/release-notes-file"), None).0,
            "release-notes.delete"
        );
        assert_eq!(
            name("POST", "lora/downlinks", Some(serde_json::json!({"deviceId": "deveui:0011223344556677"}))),
            ("downlink.send".into(), vec!["deveui:0011223344556677".into()])
        );
        assert_eq!(
            name("POST", "downlinks", Some(serde_json::json!({"method": {"type": "reboot", "deviceId": "imei:1"}}))),
            ("downlink.send".into(), vec!["imei:1".into()])
        );
        assert_eq!(name("DELETE", &format!("downlinks/{id}?forced=true"), None).0, "downlink.force-cancel");
        assert_eq!(name("DELETE", &format!("mqtt/downlinks/{id}"), None).0, "downlink.cancel");
        assert_eq!(
            name("PUT", &format!("mqtt/bindings/{id}"), Some(serde_json::json!({"deviceId": "urn:x"}))),
            ("binding.update".into(), vec![id.into(), "urn:x".into()])
        );
        assert_eq!(
            name("PUT", &format!("firmware/states/imei%3A490154203237518/{id}"), None),
            ("target.set".into(), vec!["imei:490154203237518".into(), id.into()])
        );
        assert_eq!(name("POST", "somewhere/else", None).0, "other");
    }
}
