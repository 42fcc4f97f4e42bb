//! The one place every write the client sends is seen: a [`WriteAudit`] set in the
//! [`crate::ClientConfig`] records each write (any method but GET, and every file upload)
//! before it is sent, and completes the record with its outcome afterwards. The console's audit
//! log is one; the client itself keeps nothing.

use std::fmt;

use url::Url;

use crate::error::{Error, Result};

/// A write about to be sent.
#[derive(Debug, Clone, Copy)]
pub struct Write<'a> {
    pub method: &'a str,
    /// The address it goes to (the base URL with its path and query).
    pub url: &'a Url,
    /// The JSON body, as it will be sent (secrets included: the recorder removes them).
    pub body: Option<&'a [u8]>,
    /// The file of an upload.
    pub file: Option<FileWrite<'a>>,
}

/// The file an upload sends.
#[derive(Debug, Clone, Copy)]
pub struct FileWrite<'a> {
    pub name: &'a str,
    pub size: u64,
    /// Its SHA-256 when known before sending (else computed while sending: see [`Outcome`]).
    pub sha256: Option<&'a str>,
}

/// What came of a write.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// The service took it: its status, and for an upload the SHA-256 of what was sent.
    Done { status: u16, sha256: Option<&'a str> },
    /// It failed; [`Outcome::certainty`] says whether the service may still have applied it.
    Failed(&'a Error),
}

/// Whether a write happened, as far as the client can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Certainty {
    /// The service answered that it took it.
    Done,
    /// The service answered with a refusal: nothing changed.
    Refused,
    /// Refused before it was sent (bad input, a file that cannot be read).
    NotSent,
    /// No answer came back (a network failure, an answer cut short, a cancel mid-way): the
    /// service may or may not have applied it.
    Unknown,
}

impl Outcome<'_> {
    pub fn certainty(&self) -> Certainty {
        match self {
            Outcome::Done { .. } => Certainty::Done,
            Outcome::Failed(e) => match e {
                Error::Api { .. } | Error::WrongCredentials { .. } | Error::ServiceNotGranted { .. } => {
                    Certainty::Refused
                }
                Error::InvalidInput { .. } | Error::LocalFile { .. } => Certainty::NotSent,
                Error::Network { .. } | Error::Protocol { .. } | Error::Cancelled { .. } => Certainty::Unknown,
            },
        }
    }
}

/// Identifies a recorded write to its recorder, to complete it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(pub u64);

/// Records writes. `begin` runs before anything is sent; when it fails, the write is not sent
/// and its error is the caller's. `end` runs once per successful `begin`, whatever the outcome
/// (unless the process stops first: the record then has no outcome, which reads as unknown).
pub trait WriteAudit: Send + Sync {
    fn begin(&self, write: &Write<'_>) -> Result<Ticket>;
    fn end(&self, ticket: Ticket, outcome: &Outcome<'_>);
    /// Records an action of the caller's own that sends nothing by itself (a rollout paused),
    /// as the same actor. Done at once; its error is the caller's.
    fn note(&self, action: &Note<'_>) -> Result<()>;
}

/// An action recorded by [`WriteAudit::note`].
#[derive(Debug, Clone, Copy)]
pub struct Note<'a> {
    /// What was done, as `area.verb` (`rollout.pause`).
    pub operation: &'a str,
    /// What it was done to (ids).
    pub targets: &'a [String],
    /// What the operator chose (JSON, without secrets).
    pub details: &'a serde_json::Value,
}

impl crate::Client {
    /// Records `note` where this client records its writes (nowhere when it has no recorder).
    pub fn note(&self, note: &Note<'_>) -> Result<()> {
        match self.audit() {
            Some(audit) => audit.note(note),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for dyn WriteAudit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WriteAudit")
    }
}

/// Whether a request of `method` writes (everything but GET and HEAD).
pub(crate) fn writes(method: &reqwest::Method) -> bool {
    !matches!(*method, reqwest::Method::GET | reqwest::Method::HEAD)
}
