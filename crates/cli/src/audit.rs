//! `dcs audit`: the audit log of this computer's data folder (shared with the app): list,
//! export and verify.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use dcs_console::audit::{AuditLog, ExportFormat, Filter};

use crate::output;

#[derive(Subcommand)]
pub enum AuditCommand {
    /// The newest records first: each write with its outcome, and the console's own actions.
    #[command(after_help = "Examples:\n  dcs audit list --since 2026-11-01 --operation downlink\n  \
        dcs audit list --result unknown\n  dcs audit list --device imei:490154203237518 --json")]
    List {
        #[command(flatten)]
        filter: FilterArgs,
        /// How many records at most.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Write the records (oldest first) to a file as CSV or JSON Lines.
    #[command(after_help = "Example:\n  dcs audit export --format csv --since 2026-11-01 november.csv")]
    Export {
        /// The file to write (replaced if it exists).
        file: PathBuf,
        /// csv or jsonl.
        #[arg(long, default_value = "csv")]
        format: String,
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// Check the hash chain from the first entry to the last; names the first broken entry and
    /// exits with 1 when one is.
    Verify,
}

/// What the records are filtered by.
#[derive(Args)]
pub struct FilterArgs {
    /// From this time on (RFC 3339, or `YYYY-MM-DD[ HH:MM]` in UTC).
    #[arg(long)]
    since: Option<String>,
    /// Before this time.
    #[arg(long)]
    until: Option<String>,
    /// A customer's UUID or part of its label; `own` for the profile's own environment.
    #[arg(long, value_name = "LABEL|UUID|own")]
    customer: Option<String>,
    /// An operation (`downlink.send`) or its area (`downlink`).
    #[arg(long)]
    operation: Option<String>,
    /// Part of a device id (or any id) the write concerns.
    #[arg(long)]
    device: Option<String>,
    /// done, refused, "not sent" or unknown.
    #[arg(long)]
    result: Option<String>,
}

impl From<FilterArgs> for Filter {
    fn from(a: FilterArgs) -> Filter {
        Filter {
            since: a.since,
            until: a.until,
            customer: a.customer,
            operation: a.operation,
            device: a.device,
            result: a.result,
        }
    }
}

fn log() -> anyhow::Result<AuditLog> {
    AuditLog::default_location().context("this system has no data folder for the audit log; set DCS_DATA_DIR")
}

pub fn run(command: AuditCommand, json: bool) -> anyhow::Result<()> {
    let log = log()?;
    match command {
        AuditCommand::List { filter, limit } => {
            let listed = log.list(&filter.into(), limit)?;
            if json {
                return output::print_json(&listed);
            }
            output::table(
                &["SEQ", "AT", "RESULT", "OPERATION", "TARGETS", "CUSTOMER", "PROFILE", "USER", "SOURCE"],
                listed
                    .records
                    .iter()
                    .map(|r| {
                        let result = match r.status {
                            Some(s) => format!("{} {s}", r.result),
                            None => r.result.clone(),
                        };
                        vec![
                            r.seq.to_string(),
                            r.at.clone(),
                            result,
                            r.operation.clone(),
                            r.targets.join(" "),
                            r.customer_label.clone().or(r.customer.clone()).unwrap_or_else(|| "own".into()),
                            r.profile.clone(),
                            r.os_user.clone(),
                            r.source.clone(),
                        ]
                    })
                    .collect(),
            );
            for r in listed.records.iter().filter(|r| r.result == "unknown") {
                if let Some(check) = &r.check {
                    println!(
                        "entry {}: outcome unknown. {}: dcs open {} {}",
                        r.seq,
                        check.text,
                        kind_name(check.kind),
                        check.id
                    );
                }
            }
            eprintln!("{} of {} records ({})", listed.records.len(), listed.total, log.path().display());
            Ok(())
        }
        AuditCommand::Export { file, format, filter } => {
            let format = match format.as_str() {
                "csv" => ExportFormat::Csv,
                "jsonl" => ExportFormat::Jsonl,
                other => return Err(crate::invalid("--format", format!("must be csv or jsonl, not `{other}`"))),
            };
            let n = log.export(&filter.into(), format, &file)?;
            if json {
                return output::print_json(&serde_json::json!({ "file": file, "records": n }));
            }
            println!("wrote {n} records to {}", file.display());
            Ok(())
        }
        AuditCommand::Verify => {
            let verified = log.verify()?;
            if json {
                output::print_json(&verified)?;
            }
            match verified.broken {
                None => {
                    if !json {
                        println!("{}: {} entries, the chain is whole", log.path().display(), verified.entries);
                    }
                    Ok(())
                }
                Some(b) => {
                    let which = match b.seq {
                        Some(seq) => format!("entry {seq} (line {})", b.line),
                        None => format!("line {}", b.line),
                    };
                    anyhow::bail!(
                        "{}: {which} is broken: {}; the {} entries before it are whole",
                        log.path().display(),
                        b.reason,
                        verified.entries
                    )
                }
            }
        }
    }
}

fn kind_name(kind: dcs_console::links::LinkKind) -> String {
    serde_json::to_value(kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}
