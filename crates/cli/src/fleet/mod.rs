//! `dcs fleet ...` and `dcs rollout ...`: the rollout dashboard's core (`dcs_console::fleet`)
//! from the command line, on the same fleet database as the app. The scope (profile, service,
//! customer) is the one this command acts in, named as the app names it.
//!
//! The CLI has no background timer: `dcs rollout watch` is the loop that refreshes the states,
//! takes a history snapshot and moves the rollout on, until it completes, pauses or is aborted.

mod print;
mod rollout;
mod scan;
mod views;
mod watch;

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use dcs_console::fleet::compare;
use dcs_console::fleet::query::{self, DeviceQuery, ModuleSummary};
use dcs_console::fleet::{now_ms, FleetDb, Scope};

use crate::{invalid, Ctx};

pub use rollout::{run_rollout, RolloutCommand};

#[derive(Args)]
pub struct DbArg {
    /// The fleet database (default: fleet.sqlite in $DCS_DATA_DIR, else in the console's data
    /// folder, the file the app uses).
    #[arg(long, global = true, value_name = "PATH")]
    db: Option<PathBuf>,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant, reason = "parsed once from the command line")]
pub enum FleetCommand {
    /// Copy the firmware states of this profile/customer into the fleet database: incrementally
    /// (only what changed since the last scan), or every state with --full. Ctrl-C cancels;
    /// what was read stays.
    #[command(
        after_help = "Examples:\n  dcs fleet scan --full\n  dcs --profile prod --customer Northwind fleet scan --json"
    )]
    Scan {
        /// Read every state (also the first scan of a scope, and the only way to forget states
        /// the service no longer has).
        #[arg(long)]
        full: bool,
    },
    /// Every module with its devices, drift (current differs from target), failures and updates.
    #[command(after_help = "Example:\n  dcs fleet modules --json")]
    Modules,
    /// One module: devices by version, status, target and owner, failures, package versions.
    #[command(after_help = "Example:\n  dcs fleet overview 3f0e8f4c-5b1a-4d2e-9c8b-7a6f5e4d3c2b")]
    Overview {
        /// The module's id (or its exact name).
        module_id: String,
    },
    /// Devices, states and drift per owner (a reseller's own and its customers').
    Customers,
    /// The device table: one row per device and module, filtered and sorted; --csv writes every
    /// matching row to a file.
    #[command(after_help = "Examples:\n  dcs fleet devices --module 3f0e... --status FAILED\n  \
        dcs fleet devices --drift --sort -statusAt --limit 20\n  dcs fleet devices --module 3f0e... --csv devices.csv")]
    Devices(DevicesArgs),
    /// One device: its ids, firmware states per module with the states before (the fleet
    /// database's), the rollouts it was in, its downlinks of every kind and its bindings.
    #[command(
        after_help = "Examples:\n  dcs fleet device imei:490154203237518\n  dcs fleet device urn:dev:deveui:0011aabbccddeeff --json"
    )]
    Device {
        /// The device, in any of the seven id forms.
        id: String,
    },
    /// A module's devices per update status over time (one point per change, kept across runs).
    #[command(after_help = "Example:\n  dcs fleet history 3f0e... --hours 24")]
    History {
        /// The module's id (or its exact name).
        module_id: String,
        /// Only the last N hours.
        #[arg(long)]
        hours: Option<u32>,
    },
    /// Two moments of the fleet compared, per module: devices that moved forward, went back,
    /// failed, stayed stuck longer than --stuck-hours, changed otherwise, or are new; and the
    /// matrix of update status at --from by status at --to. Moments as RFC 3339 or
    /// `2026-01-05 08:00` (UTC); the scans are the times `dcs fleet history` lists.
    #[command(after_help = "Examples:\n  dcs fleet diff --from 2026-11-27T08:00:00Z\n  \
        dcs fleet diff --from 2026-11-26T08:00:00Z --to 2026-11-27T08:00:00Z --module 3f0e... --stuck-hours 12 --json")]
    Diff {
        /// The first moment.
        #[arg(long)]
        from: String,
        /// The second moment (default: now).
        #[arg(long)]
        to: Option<String>,
        /// Only this module (its id or exact name); default: every module.
        #[arg(long)]
        module: Option<String>,
        /// Hours without a change after which a device short of its target counts as stuck
        /// (default: the module's threshold set in the app, else 24).
        #[arg(long)]
        stuck_hours: Option<f64>,
    },
}

/// The device table's filters, as `dcs fleet devices` and the rollout's device choice take them.
#[derive(Args, Clone, Default)]
pub struct Filters {
    /// Current firmware version (`none`: devices that report none).
    #[arg(long = "version-filter", value_name = "VERSION")]
    current: Option<String>,
    /// Target firmware version (`none`: no target).
    #[arg(long)]
    target: Option<String>,
    /// Update status: SUCCEEDED, FAILED, CANCELLED, ... (`none`: never had a target).
    #[arg(long)]
    status: Option<String>,
    /// Device specification id.
    #[arg(long)]
    spec: Option<String>,
    /// Owner (client) id.
    #[arg(long)]
    client: Option<String>,
    /// A device in any id form (UUID, imei:..., deveui:..., ...) or the start of its UUID.
    #[arg(long)]
    device: Option<String>,
    /// Only devices whose current version differs from their target.
    #[arg(long)]
    drift: bool,
    /// Only stuck devices: short of their target, their status unchanged for more than this
    /// many hours.
    #[arg(long, value_name = "HOURS")]
    stuck_hours: Option<f64>,
}

impl Filters {
    fn any(&self) -> bool {
        self.current.is_some()
            || self.target.is_some()
            || self.status.is_some()
            || self.spec.is_some()
            || self.client.is_some()
            || self.device.is_some()
            || self.drift
            || self.stuck_hours.is_some()
    }

    fn query(&self, module_id: Option<String>, sort: Option<String>) -> anyhow::Result<DeviceQuery> {
        let stuck_before = match self.stuck_hours {
            None => None,
            Some(h) => {
                let h = compare::check_hours(h)?;
                Some(dcs_console::fleet::ms_to_text(now_ms() - (h * 3_600_000.0) as i64))
            }
        };
        Ok(DeviceQuery {
            module_id,
            version: self.current.clone(),
            target: self.target.clone(),
            status: self.status.as_deref().map(|s| {
                if s.eq_ignore_ascii_case(query::NO_STATUS) {
                    s.to_ascii_lowercase()
                } else {
                    s.to_ascii_uppercase()
                }
            }),
            spec_id: self.spec.clone(),
            client_id: self.client.clone(),
            device: self.device.clone(),
            drift: self.drift,
            stuck_before,
            compared: None,
            sort,
        })
    }
}

#[derive(Args)]
pub struct DevicesArgs {
    /// The module's id (or its exact name).
    #[arg(long)]
    module: Option<String>,
    /// Current firmware version (`none`: devices that report none).
    #[arg(long)]
    version: Option<String>,
    #[command(flatten)]
    filters: Filters,
    /// A column, `-` in front for descending: device, module, version, target, status,
    /// statusAt, targetAt.
    #[arg(long, allow_hyphen_values = true)]
    sort: Option<String>,
    /// Rows shown (at most 5000).
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// Rows skipped.
    #[arg(long, default_value_t = 0)]
    offset: u32,
    /// Write every matching row (not only the window) to this CSV file.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
}

/// The fleet database this command uses.
pub(crate) fn open_db(arg: &DbArg) -> anyhow::Result<FleetDb> {
    let path = match &arg.db {
        Some(p) => p.clone(),
        None => dcs_console::data_dir()
            .map(|dir| dir.join("fleet.sqlite"))
            .context("this system has no data folder for the fleet database; give --db PATH")?,
    };
    Ok(FleetDb::open(&path)?)
}

/// A module id as typed: an id the database knows, else an exact name (any case) of one module.
fn module_id(db: &FleetDb, scope: Scope, raw: &str, field: &str) -> anyhow::Result<String> {
    let modules = query::modules(db, scope)?;
    if modules.is_empty() {
        return Err(invalid(
            field,
            "no firmware states of this profile/customer are known; run `dcs fleet scan` first",
        ));
    }
    if let Some(m) = modules.iter().find(|m| m.module_id.eq_ignore_ascii_case(raw.trim())) {
        return Ok(m.module_id.clone());
    }
    let named: Vec<&ModuleSummary> = modules.iter().filter(|m| m.name.eq_ignore_ascii_case(raw.trim())).collect();
    match named.as_slice() {
        [one] => Ok(one.module_id.clone()),
        [] => Err(invalid(
            field,
            format!("no states of module `{raw}` are known (see `dcs fleet modules`, or scan again)"),
        )),
        many => Err(invalid(
            field,
            format!(
                "{} modules are named `{raw}`; give the id: {}",
                many.len(),
                many.iter().map(|m| m.module_id.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

pub async fn run(ctx: &Ctx, db: &DbArg, command: FleetCommand) -> anyhow::Result<()> {
    let db = open_db(db)?;
    let scope = db.scope(&ctx.fleet_key)?;
    match command {
        FleetCommand::Scan { full } => scan::scan(ctx, &db, scope, full).await,
        FleetCommand::Modules => views::modules(ctx, &db, scope),
        FleetCommand::Overview { module_id: raw } => views::overview(ctx, &db, scope, &raw),
        FleetCommand::Customers => views::customers(ctx, &db, scope),
        FleetCommand::Devices(a) => views::devices(ctx, &db, scope, a).await,
        FleetCommand::Device { id } => views::device(ctx, &db, scope, &id).await,
        FleetCommand::History { module_id: raw, hours } => views::history(ctx, &db, scope, &raw, hours),
        FleetCommand::Diff { from, to, module, stuck_hours } => {
            views::diff(ctx, &db, scope, views::DiffArgs { from, to, module, stuck_hours })
        }
    }
}
