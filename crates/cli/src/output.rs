//! What `dcs` prints: tables for people, JSON for scripts, errors on stderr with an exit code
//! per category.

use std::process::ExitCode;

use dcs_api::model::FirmwareModule;
use dcs_api::{Error, ErrorCode};

pub fn modules(modules: &[FirmwareModule], json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(modules)?);
        return Ok(());
    }
    let name_w = modules.iter().map(|m| m.name.len()).max().unwrap_or(4).max(4);
    println!("{:<36}  {:<name_w$}  {:<36}  ATTRIBUTE", "ID", "NAME", "DEVICE SPECIFICATION");
    for m in modules {
        println!("{:<36}  {:<name_w$}  {:<36}  {}", m.id, m.name, m.device_specification_id, m.firmware_version_attribute_name);
    }
    Ok(())
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

pub fn report_error(e: &anyhow::Error, json: bool) -> ExitCode {
    let api = e.downcast_ref::<Error>();
    let code = api.map(Error::code);
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
