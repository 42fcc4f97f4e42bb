//! The log as the screen and `dcs audit list` show it: one record per write (its entry and its
//! outcome joined) or local action, filtered, and exported as CSV or JSON Lines.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{AuditLog, Entry};
use crate::links::LinkKind;
use crate::FieldError;

/// One write or local action with what came of it.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "AuditRecord", rename_all = "camelCase")]
pub struct Record {
    /// The number of its first entry.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub seq: u64,
    pub at: String,
    /// When its outcome was recorded.
    pub finished_at: Option<String>,
    /// `write` (sent to the service) or `local` (the console's own).
    pub kind: String,
    pub source: String,
    pub profile: String,
    pub key_id: String,
    pub customer: Option<String>,
    pub customer_label: Option<String>,
    pub os_user: String,
    pub operation: String,
    pub method: Option<String>,
    pub path: Option<String>,
    pub targets: Vec<String>,
    /// The request without secrets (or a local action's details), as JSON text.
    pub request: Option<String>,
    pub file_name: Option<String>,
    #[cfg_attr(feature = "specta", specta(type = Option<f64>))]
    pub file_size: Option<u64>,
    pub sha256: Option<String>,
    /// `done`, `refused`, `not sent` or `unknown` (no outcome came back).
    pub result: String,
    pub status: Option<u16>,
    pub error: Option<String>,
    /// Where to look when the outcome is unknown: what may have been made or changed.
    pub check: Option<Check>,
}

/// What to look at to learn whether a write of unknown outcome happened.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "AuditCheck", rename_all = "camelCase")]
pub struct Check {
    pub text: String,
    pub kind: LinkKind,
    pub id: String,
}

/// What the list shows, as typed; empty members match everything.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "AuditFilter", rename_all = "camelCase", default)]
pub struct Filter {
    /// From this time on (the forms of [`crate::filters::parse_time`]).
    pub since: Option<String>,
    /// Before this time.
    pub until: Option<String>,
    /// A customer's id or part of its label; `own` for the profile's own environment.
    pub customer: Option<String>,
    /// An operation or its area (`downlink` matches `downlink.send` and `downlink.cancel`).
    pub operation: Option<String>,
    /// Part of a device id (or any target id) the write concerns.
    pub device: Option<String>,
    /// `done`, `refused`, `not sent` or `unknown`.
    pub result: Option<String>,
}

/// The results a filter may name.
pub const RESULTS: [&str; 4] = ["done", "refused", "not sent", "unknown"];

struct Checked {
    since: Option<time::OffsetDateTime>,
    until: Option<time::OffsetDateTime>,
    customer: Option<String>,
    operation: Option<String>,
    device: Option<String>,
    result: Option<String>,
}

fn text(s: &Option<String>) -> Option<String> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

impl Filter {
    /// The filter checked: each refused member named with its rule.
    fn check(&self) -> Result<Checked, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut time = |field: &str, v: &Option<String>| match crate::filters::parse_time(field, v.as_deref()) {
            Ok(t) => t,
            Err(e) => {
                errors.push(e);
                None
            }
        };
        let since = time("since", &self.since);
        let until = time("until", &self.until);
        let result = text(&self.result).map(|r| r.to_ascii_lowercase());
        if let Some(r) = &result {
            if !RESULTS.contains(&r.as_str()) {
                errors.push(FieldError::new("result", format!("must be one of {}", RESULTS.join(", "))));
            }
        }
        if let (Some(s), Some(u)) = (since, until) {
            if s >= u {
                errors.push(FieldError::new("until", "must be after since"));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Checked {
            since,
            until,
            customer: text(&self.customer).map(|s| s.to_lowercase()),
            operation: text(&self.operation).map(|s| s.to_lowercase()),
            device: text(&self.device).map(|s| s.to_lowercase()),
            result,
        })
    }
}

impl Checked {
    fn matches(&self, r: &Record) -> bool {
        let at = || time::OffsetDateTime::parse(&r.at, &time::format_description::well_known::Rfc3339).ok();
        if let Some(since) = self.since {
            if at().is_none_or(|t| t < since) {
                return false;
            }
        }
        if let Some(until) = self.until {
            if at().is_none_or(|t| t >= until) {
                return false;
            }
        }
        if let Some(c) = &self.customer {
            let ok = match (&r.customer, c.as_str()) {
                (None, "own") => true,
                (None, _) => false,
                (Some(id), c) => {
                    id.to_lowercase() == c || r.customer_label.as_deref().is_some_and(|l| l.to_lowercase().contains(c))
                }
            };
            if !ok {
                return false;
            }
        }
        if let Some(op) = &self.operation {
            let o = r.operation.to_lowercase();
            if !(o == *op || o.starts_with(&format!("{op}."))) {
                return false;
            }
        }
        if let Some(d) = &self.device {
            if !r.targets.iter().any(|t| t.to_lowercase().contains(d.as_str())) {
                return false;
            }
        }
        if let Some(res) = &self.result {
            if r.result != *res {
                return false;
            }
        }
        true
    }
}

/// Joins each write with its outcome, newest last.
pub fn records(entries: Vec<Entry>) -> Vec<Record> {
    let mut outcomes: HashMap<u64, Entry> = HashMap::new();
    let mut firsts = Vec::new();
    for e in entries {
        match (e.kind.as_str(), e.of) {
            ("outcome", Some(of)) => {
                outcomes.insert(of, e);
            }
            ("outcome", None) => {}
            _ => firsts.push(e),
        }
    }
    firsts
        .into_iter()
        .map(|e| {
            let outcome = outcomes.remove(&e.seq);
            let actor = e.actor.clone().unwrap_or_default();
            let operation = e.operation.clone().unwrap_or_else(|| "other".into());
            let (result, finished_at, status, error, sha256) = match (&outcome, e.kind.as_str()) {
                (Some(o), _) => (
                    o.result.clone().unwrap_or_else(|| "unknown".into()),
                    Some(o.at.clone()),
                    o.status,
                    o.error.clone(),
                    o.sha256.clone().or(e.sha256.clone()),
                ),
                (None, "write") => ("unknown".into(), None, None, None, e.sha256.clone()),
                (None, _) => (
                    e.result.clone().unwrap_or_else(|| "done".into()),
                    None,
                    e.status,
                    e.error.clone(),
                    e.sha256.clone(),
                ),
            };
            let check = (result == "unknown").then(|| check_for(&operation, &e)).flatten();
            Record {
                seq: e.seq,
                at: e.at,
                finished_at,
                kind: e.kind,
                source: actor.source,
                profile: actor.profile,
                key_id: actor.key_id,
                customer: actor.customer.map(|c| c.to_string()),
                customer_label: actor.customer_label,
                os_user: actor.os_user,
                operation,
                method: e.method,
                path: e.path,
                targets: e.targets,
                request: e.request.map(|v| v.to_string()),
                file_name: e.file.as_ref().map(|f| f.name.clone()),
                file_size: e.file.map(|f| f.size),
                sha256,
                result,
                status,
                error,
                check,
            }
        })
        .collect()
}

/// Where to look for the effect of a write whose outcome is unknown.
fn check_for(operation: &str, e: &Entry) -> Option<Check> {
    let first = e.targets.first()?.clone();
    let (kind, text) = match operation {
        "package.create" => (LinkKind::Module, "See whether the module has a package of this version now"),
        "package.update" | "package.delete" => (LinkKind::Package, "Open the package to see whether it changed"),
        "firmware-file.upload" | "release-notes.upload" | "release-notes.delete" => {
            (LinkKind::Package, "Open the package to see which files it has")
        }
        "downlink.send" | "target.set" | "binding.create" => {
            (LinkKind::Device, "Open the device to see its downlinks, bindings and target")
        }
        "downlink.cancel" | "downlink.force-cancel" => (LinkKind::Downlink, "Open the downlink to see its status"),
        "binding.update" | "binding.delete" => (LinkKind::Binding, "Open the binding to see whether it changed"),
        _ => return None,
    };
    Some(Check { text: text.into(), kind, id: first })
}

impl AuditLog {
    /// The records that pass `filter`, newest first, at most `limit` (and how many passed).
    pub fn list(&self, filter: &Filter, limit: usize) -> Result<Listed, crate::Error> {
        let checked = filter.check().map_err(crate::Error::Invalid)?;
        let mut all: Vec<Record> = records(self.entries()?).into_iter().filter(|r| checked.matches(r)).collect();
        let total = all.len();
        all.reverse();
        all.truncate(limit);
        Ok(Listed { records: all, total: total as u32 })
    }

    /// Writes the records that pass `filter`, oldest first, to `path` as CSV or JSON Lines;
    /// answers how many.
    pub fn export(&self, filter: &Filter, format: ExportFormat, path: &Path) -> Result<u32, crate::Error> {
        let checked = filter.check().map_err(crate::Error::Invalid)?;
        let rows = records(self.entries()?).into_iter().filter(|r| checked.matches(r));
        match format {
            ExportFormat::Csv => {
                let mut csv = crate::csv_file::CsvFile::create(path, &CSV_HEADER)?;
                for r in rows {
                    csv.row(csv_row(r))?;
                }
                Ok(csv.finish()?)
            }
            ExportFormat::Jsonl => {
                let mut n = 0u32;
                crate::csv_file::write_replacing(path, |out| {
                    for r in rows {
                        serde_json::to_writer(&mut *out, &r)?;
                        out.write_all(b"\n")?;
                        n += 1;
                    }
                    Ok(())
                })?;
                Ok(n)
            }
        }
    }
}

/// The columns of a CSV export.
pub const CSV_HEADER: [&str; 19] = [
    "seq",
    "at",
    "finishedAt",
    "result",
    "status",
    "operation",
    "targets",
    "customer",
    "customerLabel",
    "profile",
    "keyId",
    "osUser",
    "source",
    "method",
    "path",
    "fileName",
    "sha256",
    "request",
    "error",
];

fn csv_row(r: Record) -> Vec<String> {
    let o = |v: Option<String>| v.unwrap_or_default();
    vec![
        r.seq.to_string(),
        r.at,
        o(r.finished_at),
        r.result,
        r.status.map(|s| s.to_string()).unwrap_or_default(),
        r.operation,
        r.targets.join(" "),
        o(r.customer),
        o(r.customer_label),
        r.profile,
        r.key_id,
        r.os_user,
        r.source,
        o(r.method),
        o(r.path),
        o(r.file_name),
        o(r.sha256),
        o(r.request),
        o(r.error),
    ]
}

/// A page of the list.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "AuditPage", rename_all = "camelCase")]
pub struct Listed {
    pub records: Vec<Record>,
    /// How many passed the filter in all.
    pub total: u32,
}

/// How an export is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "AuditExportFormat", rename_all = "camelCase")]
pub enum ExportFormat {
    Csv,
    Jsonl,
}
