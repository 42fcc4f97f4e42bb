//! What `dcs` prints: tables for people, JSON for scripts, errors on stderr with an exit code
//! per category.

use std::fmt::Display;
use std::process::ExitCode;

use dcs_api::model::FirmwareModule;
use dcs_api::{Error, ErrorCode};
use dcs_console::fleet::FleetError;
use dcs_console::{ConfigError, SessionError};
use serde::Serialize;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub fn modules(modules: &[FirmwareModule], json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(&modules);
    }
    table(
        &["ID", "NAME", "DEVICE SPECIFICATION", "ATTRIBUTE"],
        modules
            .iter()
            .map(|m| {
                vec![
                    m.id.to_string(),
                    m.name.clone(),
                    m.device_specification_id.to_string(),
                    m.firmware_version_attribute_name.clone(),
                ]
            })
            .collect(),
    );
    Ok(())
}

/// Pretty JSON on stdout.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// A table with a header line; columns as wide as their widest cell, the last one unpadded.
pub fn table(headers: &[&str], rows: Vec<Vec<String>>) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len() - 1;
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i == last {
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        println!("{}", out.trim_end());
    };
    line(headers.to_vec());
    for row in &rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// A list of `name: value` lines for one resource.
pub fn fields(pairs: &[(&str, String)]) {
    let w = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in pairs {
        println!("{:<w$}  {}", format!("{k}:"), v, w = w + 1);
    }
}

/// An optional value, `-` when absent.
pub fn opt<T: Display>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_else(|| "-".into())
}

/// An optional timestamp in RFC 3339, `-` when absent.
pub fn ts(v: &Option<OffsetDateTime>) -> String {
    v.and_then(|t| t.format(&Rfc3339).ok()).unwrap_or_else(|| "-".into())
}

/// Exit code of each error category, stable for scripts.
pub fn exit_code(code: ErrorCode) -> u8 {
    match code {
        ErrorCode::InvalidInput => 2,
        ErrorCode::WrongCredentials | ErrorCode::ServiceNotGranted | ErrorCode::Unauthorized => 3,
        ErrorCode::Forbidden => 4,
        ErrorCode::NotFound => 5,
        ErrorCode::Conflict => 6,
        ErrorCode::RateLimited => 7,
        ErrorCode::BadRequest => 8,
        ErrorCode::Server => 9,
        ErrorCode::Network => 10,
        ErrorCode::Protocol => 11,
        ErrorCode::Cancelled => 12,
        ErrorCode::LocalFile => 13,
    }
}

/// The client's error in `e`, also when it came through connecting a profile.
pub fn api_error(e: &anyhow::Error) -> Option<&Error> {
    e.downcast_ref::<Error>()
        .or_else(|| match e.downcast_ref::<SessionError>() {
            Some(SessionError::Api(api)) => Some(api),
            _ => None,
        })
        .or_else(|| match e.downcast_ref::<FleetError>() {
            Some(FleetError::Api(api)) => Some(api),
            _ => None,
        })
}

/// The category of `e`: the client's, or that of a profile's refusal (a bad value, an unknown
/// or existing name, a customer the deprecated context switch was refused for).
fn category(e: &anyhow::Error) -> Option<ErrorCode> {
    if let Some(api) = api_error(e) {
        return Some(api.code());
    }
    if let Some(f) = e.downcast_ref::<FleetError>() {
        return match f {
            FleetError::Api(api) => Some(api.code()),
            FleetError::Invalid { .. } => Some(ErrorCode::InvalidInput),
            FleetError::Conflict(_) => Some(ErrorCode::Conflict),
            FleetError::Cancelled => Some(ErrorCode::Cancelled),
            FleetError::Db(_) | FleetError::Open { .. } => Some(ErrorCode::LocalFile),
        };
    }
    match (e.downcast_ref::<SessionError>(), e.downcast_ref::<ConfigError>()) {
        (Some(SessionError::SwitchRefused(_)), _) => Some(ErrorCode::Forbidden),
        (_, Some(ConfigError::Invalid(_) | ConfigError::UnknownProfile(_) | ConfigError::Exists(_))) => Some(ErrorCode::InvalidInput),
        _ => None,
    }
}

pub fn report_error(e: &anyhow::Error, json: bool) -> ExitCode {
    let api = api_error(e);
    let code = category(e);
    if json {
        let body = serde_json::json!({
            "error": {
                "code": code,
                "message": format!("{e:#}"),
                "problem": api.and_then(Error::problem),
            }
        });
        eprintln!("{body}");
    } else {
        eprintln!("dcs: {e:#}");
    }
    ExitCode::from(code.map(exit_code).unwrap_or(1))
}
