//! `dcs fleet ...` and `dcs rollout ...`: the rollout dashboard's core (`dcs_console::fleet`)
//! from the command line, on the same fleet database as the app. The scope (profile, service,
//! customer) is the one this command acts in, named as the app names it.
//!
//! The CLI has no background timer: `dcs rollout watch` is the loop that refreshes the states,
//! takes a history snapshot and moves the rollout on, until it completes, pauses or is aborted.

use std::cell::Cell;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Args, Subcommand};
use dcs_console::fleet::query::{self, DeviceQuery, ModuleSummary};
use dcs_console::fleet::rollout::{
    self, DeviceChoice, Downgrade, PlanPreview, RolloutPlan, RolloutState, RolloutView, StepOutcome,
};
use dcs_console::fleet::scan::{self, ScanKind, ScanProgress, ScanReport};
use dcs_console::fleet::service::FleetService;
use dcs_console::fleet::{now_ms, EmbeddedBy, FleetDb, FleetError, Scope};
use indicatif::ProgressBar;
use tokio_util::sync::CancellationToken;

use crate::output::{self, opt};
use crate::{invalid, Ctx};

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
    /// A module's devices per update status over time (one point per change, kept across runs).
    #[command(after_help = "Example:\n  dcs fleet history 3f0e... --hours 24")]
    History {
        /// The module's id (or its exact name).
        module_id: String,
        /// Only the last N hours.
        #[arg(long)]
        hours: Option<u32>,
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
    }

    fn query(&self, module_id: Option<String>, sort: Option<String>) -> DeviceQuery {
        DeviceQuery {
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
            sort,
        }
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

#[derive(Subcommand)]
pub enum RolloutCommand {
    /// What a rollout would do: its problems field by field, or its devices per wave.
    #[command(
        after_help = "Example:\n  dcs rollout preview --module 3f0e... --version 1.4.0 --all --waves 1,10,50,100"
    )]
    Preview(PlanArgs),
    /// Start a rollout: sets the targets of the first wave now (asks first; --yes to skip).
    /// `dcs rollout watch` (or the app) moves it on.
    #[command(
        after_help = "Examples:\n  dcs rollout start --module 3f0e... --version 1.4.0 --all --waves 1,10,50,100 --success 95 --error 5\n  \
        dcs rollout start --module 3f0e... --version 1.4.0 --device-list devices.txt --yes\n  \
        dcs rollout start --module 3f0e... --version 1.4.0 --status FAILED --waves 100\n  \
        dcs rollout start --module 3f0e... --version 1.2.0 --all --allow-downgrade --yes"
    )]
    Start {
        #[command(flatten)]
        plan: PlanArgs,
        /// Roll out a version older than what some of the chosen devices run (they go back to
        /// it). Without it such a plan is refused, even with --yes.
        #[arg(long)]
        allow_downgrade: bool,
    },
    /// The rollouts of this profile/customer, newest first.
    List,
    /// One rollout: its waves and latest events.
    Show {
        /// The rollout's id (`dcs rollout list`).
        id: String,
    },
    /// Pause a running rollout: no new wave starts; updates under way go on.
    Pause {
        /// The rollout's id (`dcs rollout list`).
        id: String,
    },
    /// Resume a paused rollout, with new thresholds if given; the next wave may start at once.
    #[command(after_help = "Example:\n  dcs rollout resume 6a1c... --error 10")]
    Resume {
        /// The rollout's id (`dcs rollout list`).
        id: String,
        /// New success threshold (percent).
        #[arg(long)]
        success: Option<f64>,
        /// New error threshold (percent).
        #[arg(long)]
        error: Option<f64>,
    },
    /// Abort a rollout for good (asks first; --yes to skip).
    #[command(after_help = "Example:\n  dcs rollout abort 6a1c... --reset --yes")]
    Abort {
        /// The rollout's id (`dcs rollout list`).
        id: String,
        /// Also reset the targets of devices whose update has not finished (the service cancels
        /// those updates).
        #[arg(long)]
        reset: bool,
    },
    /// Move a rollout on until it completes, pauses or is aborted: refresh the states, start the
    /// next wave when the thresholds allow, print a line per change. Ctrl-C stops watching only.
    #[command(after_help = "Example:\n  dcs rollout watch 6a1c... --interval 5")]
    Watch {
        /// The rollout's id (`dcs rollout list`).
        id: String,
        /// Seconds between refreshes.
        #[arg(long, default_value_t = 5.0)]
        interval: f64,
    },
}

#[derive(Args)]
pub struct PlanArgs {
    /// The module's id (or its exact name).
    #[arg(long)]
    module: String,
    /// The package version to roll out (its firmware file uploaded).
    #[arg(long)]
    version: String,
    /// Every device with a state of the module.
    #[arg(long, conflicts_with = "device_list")]
    all: bool,
    /// A file of device ids in any form (UUID, imei:..., deveui:...), separated by lines,
    /// commas or spaces; `-` for standard input.
    #[arg(long, value_name = "FILE|-")]
    device_list: Option<String>,
    #[command(flatten)]
    filters: Filters,
    /// Cumulative percentages of the devices, rising, the last 100.
    #[arg(long, default_value = "1,10,50,100")]
    waves: String,
    /// Percent of a wave's devices that must succeed before the next wave starts.
    #[arg(long, default_value_t = 95.0)]
    success: f64,
    /// Percent of failed devices (of the started waves) above which the rollout pauses.
    #[arg(long, default_value_t = 5.0)]
    error: f64,
}

/// The fleet database this command uses.
fn open_db(arg: &DbArg) -> anyhow::Result<FleetDb> {
    let path = match &arg.db {
        Some(p) => p.clone(),
        None => match std::env::var_os("DCS_DATA_DIR") {
            Some(dir) => PathBuf::from(dir).join("fleet.sqlite"),
            None => FleetDb::default_path()
                .context("this system has no data folder for the fleet database; give --db PATH")?,
        },
    };
    Ok(FleetDb::open(&path)?)
}

fn thousands(n: u32) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
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
        FleetCommand::Scan { full } => {
            let kind = if full { ScanKind::Full } else { ScanKind::Incremental };
            let report = scan_with_progress(ctx, &db, scope, kind).await?;
            query::snapshot(&db, scope, now_ms())?;
            if ctx.json {
                return output::print_json(&report);
            }
            print_report(&report);
            Ok(())
        }
        FleetCommand::Modules => {
            let modules = query::modules(&db, scope)?;
            if ctx.json {
                return output::print_json(&modules);
            }
            if modules.is_empty() {
                eprintln!("no firmware states of {} are known yet; run `dcs fleet scan`", ctx.scope);
                return Ok(());
            }
            output::table(
                &[
                    "MODULE",
                    "NAME",
                    "DEVICE SPECIFICATION",
                    "DEVICES",
                    "DRIFT",
                    "FAILED",
                    "UPDATING",
                    "MOST RUN VERSION",
                ],
                modules
                    .iter()
                    .map(|m| {
                        vec![
                            m.module_id.clone(),
                            m.name.clone(),
                            m.spec_name.clone().or_else(|| m.spec_id.clone()).unwrap_or_else(|| "-".into()),
                            m.devices.to_string(),
                            m.drift.to_string(),
                            m.failed.to_string(),
                            m.updating.to_string(),
                            m.top_version
                                .as_ref()
                                .map(|v| format!("{v} ({})", m.top_version_devices))
                                .unwrap_or_else(|| "-".into()),
                        ]
                    })
                    .collect(),
            );
            scope_footer(&db, scope)
        }
        FleetCommand::Overview { module_id: raw } => {
            let id = module_id(&db, scope, &raw, "moduleId")?;
            let o = query::overview(&db, scope, &id, &ctx.customer_names)?;
            if ctx.json {
                return output::print_json(&o);
            }
            let m = &o.module;
            output::fields(&[
                ("module", format!("{} ({})", m.name, m.module_id)),
                (
                    "device specification",
                    m.spec_name.clone().or_else(|| m.spec_id.clone()).unwrap_or_else(|| "-".into()),
                ),
                ("devices", m.devices.to_string()),
                ("drift", format!("{} (current version differs from the target)", m.drift)),
                ("failed", m.failed.to_string()),
                ("updating", m.updating.to_string()),
            ]);
            for (title, counts) in [
                ("CURRENT VERSION", &o.by_version),
                ("STATUS", &o.by_status),
                ("TARGET", &o.by_target),
                ("OWNER", &o.by_customer),
            ] {
                println!();
                output::table(
                    &[title, "DEVICES", "SHARE"],
                    counts
                        .iter()
                        .map(|c| vec![c.label.clone(), c.count.to_string(), share(c.count, m.devices)])
                        .collect(),
                );
            }
            println!();
            if o.failures.is_empty() {
                println!("no failures");
            } else {
                output::table(
                    &["FAILURE", "TARGET", "DEVICES", "LATEST"],
                    o.failures
                        .iter()
                        .map(|f| vec![f.details.clone(), opt(&f.target), f.count.to_string(), opt(&f.latest)])
                        .collect(),
                );
            }
            println!();
            output::table(
                &["PACKAGE VERSION", "FIRMWARE FILE"],
                o.packages
                    .iter()
                    .map(|p| vec![p.version.clone(), if p.has_file { "uploaded" } else { "missing" }.into()])
                    .collect(),
            );
            Ok(())
        }
        FleetCommand::Customers => {
            let rows = query::customers(&db, scope, &ctx.customer_names)?;
            if ctx.json {
                return output::print_json(&rows);
            }
            output::table(
                &["OWNER", "ID", "DEVICES", "STATES", "DRIFT", "FAILED"],
                rows.iter()
                    .map(|c| {
                        vec![
                            c.label.clone(),
                            opt(&c.client_id),
                            c.devices.to_string(),
                            c.states.to_string(),
                            c.drift.to_string(),
                            c.failed.to_string(),
                        ]
                    })
                    .collect(),
            );
            Ok(())
        }
        FleetCommand::Devices(a) => devices(ctx, &db, scope, a).await,
        FleetCommand::History { module_id: raw, hours } => {
            let id = module_id(&db, scope, &raw, "moduleId")?;
            let since = hours.map(|h| now_ms() - h as i64 * 3_600_000);
            let points = query::history(&db, scope, &id, since, 600)?;
            if ctx.json {
                return output::print_json(&points);
            }
            let mut statuses: Vec<&String> = points.iter().flat_map(|p| p.counts.keys()).collect();
            statuses.sort();
            statuses.dedup();
            let mut headers = vec!["AT"];
            headers.extend(statuses.iter().map(|s| s.as_str()));
            output::table(
                &headers,
                points
                    .iter()
                    .map(|p| {
                        let mut row = vec![p.at.clone()];
                        row.extend(statuses.iter().map(|s| p.counts.get(*s).copied().unwrap_or(0).to_string()));
                        row
                    })
                    .collect(),
            );
            Ok(())
        }
    }
}

fn share(n: u32, of: u32) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.1}%", n as f64 * 100.0 / of as f64)
    }
}

/// When the shown figures were read.
fn scope_footer(db: &FleetDb, scope: Scope) -> anyhow::Result<()> {
    let info = db.scope_info(scope)?;
    eprintln!(
        "{} states; last refresh {}, last full scan {}",
        thousands(info.states),
        info.last_refresh.as_deref().unwrap_or("never"),
        info.last_full_scan.as_deref().unwrap_or("never")
    );
    Ok(())
}

async fn devices(ctx: &Ctx, db: &FleetDb, scope: Scope, a: DevicesArgs) -> anyhow::Result<()> {
    let module = match &a.module {
        Some(m) => Some(module_id(db, scope, m, "module")?),
        None => None,
    };
    let mut filters = a.filters.clone();
    if a.version.is_some() {
        filters.current = a.version.clone();
    }
    let q = filters.query(module, a.sort.clone());
    let device = match q.device.as_deref().filter(|d| !d.trim().is_empty()) {
        Some(raw) => Some(query::resolve_device(&ctx.client, raw).await?),
        None => None,
    };
    if let Some(path) = &a.csv {
        let n = query::write_csv(db, scope, &q, device.as_ref(), None, &ctx.customer_names, path)?;
        if ctx.json {
            return output::print_json(&serde_json::json!({ "rows": n, "path": path }));
        }
        println!("wrote {} rows to {}", thousands(n), path.display());
        return Ok(());
    }
    if a.limit == 0 || a.limit > 5000 {
        return Err(invalid("limit", format!("must be from 1 to 5000, got {}", a.limit)));
    }
    let total = query::count(db, scope, &q, device.as_ref())?;
    let rows = query::rows(db, scope, &q, device.as_ref(), a.offset, a.limit)?;
    if ctx.json {
        return output::print_json(&serde_json::json!({ "total": total, "offset": a.offset, "rows": rows }));
    }
    output::table(
        &["DEVICE", "MODULE", "CURRENT", "TARGET", "STATUS", "STATUS CHANGED", "DETAILS"],
        rows.iter()
            .map(|r| {
                vec![
                    r.device_id.clone(),
                    r.module.clone(),
                    opt(&r.current),
                    opt(&r.target),
                    opt(&r.status),
                    opt(&r.status_at),
                    opt(&r.details),
                ]
            })
            .collect(),
    );
    let shown_to = a.offset as usize + rows.len();
    if rows.is_empty() {
        eprintln!("no rows of {} match", thousands(total));
    } else {
        eprintln!(
            "rows {}-{} of {}{}",
            a.offset + 1,
            shown_to,
            thousands(total),
            if shown_to < total as usize { format!("; next: --offset {shown_to}") } else { String::new() }
        );
    }
    Ok(())
}

/// Cancels `token` on Ctrl-C until dropped.
struct CtrlC(tokio::task::JoinHandle<()>);

impl CtrlC {
    fn cancels(token: &CancellationToken) -> CtrlC {
        let token = token.clone();
        CtrlC(tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                token.cancel();
            }
        }))
    }
}

impl Drop for CtrlC {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A refresh of `scope` with its progress on stderr (a live line on a terminal, else a line a
/// second), cancelled by Ctrl-C.
async fn scan_with_progress(ctx: &Ctx, db: &FleetDb, scope: Scope, kind: ScanKind) -> anyhow::Result<ScanReport> {
    let cancel = CancellationToken::new();
    let _ctrl_c = CtrlC::cancels(&cancel);
    let live = !ctx.json && std::io::stderr().is_terminal();
    let plain = !ctx.json && !live;
    let bar = if live { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
    bar.enable_steady_tick(Duration::from_millis(120));
    bar.set_message("asking the service for its latest change");
    let last_line = Cell::new(Instant::now());
    let started = Instant::now();
    let line = |p: &ScanProgress| {
        let secs = (p.elapsed_ms as f64 / 1000.0).max(0.001);
        let of = p.expected.map(|e| format!(" of about {}", thousands(e))).unwrap_or_default();
        format!(
            "{} scan: {} pages, {}{of} states, {:.0} states/s",
            if p.kind == ScanKind::Full { "full" } else { "incremental" },
            p.pages,
            thousands(p.states),
            p.states as f64 / secs
        )
    };
    let result = scan::refresh(&ctx.client, db, scope, kind, &cancel, |p| {
        if live {
            bar.set_message(line(p));
        } else if plain && last_line.get().elapsed() >= Duration::from_secs(1) {
            last_line.set(Instant::now());
            eprintln!("{}", line(p));
        }
    })
    .await;
    bar.finish_and_clear();
    match result {
        Ok(r) => Ok(r),
        Err(FleetError::Cancelled) => {
            let held = db.scope_info(scope).map(|i| i.states).unwrap_or(0);
            Err(anyhow::Error::from(dcs_api::Error::Cancelled { what: "the scan".into() }).context(format!(
                "after {:.1} s; the states read stay in the fleet database ({} held), and the next refresh starts from the previous watermark",
                started.elapsed().as_secs_f64(),
                thousands(held)
            )))
        }
        Err(e) => Err(e.into()),
    }
}

fn print_report(r: &ScanReport) {
    let secs = (r.elapsed_ms as f64 / 1000.0).max(0.001);
    println!(
        "{} scan: {} states in {} pages, {:.2} s ({:.0} states/s); {} changed, {} removed",
        if r.kind == ScanKind::Full { "full" } else { "incremental" },
        thousands(r.states),
        r.pages,
        secs,
        r.states as f64 / secs,
        thousands(r.changed),
        thousands(r.removed)
    );
    println!("refresh mode: {}", r.mode.text);
    match &r.watermark {
        Some(w) if r.mode.incremental => {
            println!("next incremental refresh: states modified since {w} (service clock)")
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Rollouts

fn parse_waves(s: &str) -> anyhow::Result<Vec<f64>> {
    s.split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.trim_end_matches('%').parse::<f64>().map_err(|_| {
                invalid("waves", format!("`{w}` is not a percentage; give rising percentages such as 1,10,50,100"))
            })
        })
        .collect()
}

fn plan_of(db: &FleetDb, scope: Scope, a: &PlanArgs) -> anyhow::Result<RolloutPlan> {
    let module_id = module_id(db, scope, &a.module, "moduleId")?;
    let devices = if a.all {
        if a.filters.any() {
            return Err(invalid("devices", "--all takes no filters; give either --all or filters such as --status"));
        }
        DeviceChoice::All
    } else if let Some(src) = &a.device_list {
        if a.filters.any() {
            return Err(invalid("devices", "--device-list takes no filters; give either the list or filters"));
        }
        let mut text = String::new();
        if src == "-" {
            std::io::stdin().read_to_string(&mut text).context("reading the device list from standard input")?;
        } else {
            text = std::fs::read_to_string(src)
                .map_err(|e| invalid("deviceList", format!("could not read {src}: {e}")))?;
        }
        DeviceChoice::List { text }
    } else if a.filters.any() {
        DeviceChoice::Query { query: a.filters.query(None, None), selection: None }
    } else {
        return Err(invalid("devices", "choose the devices: --all, --device-list FILE|-, or filters such as --status FAILED or --version-filter 1.2.0"));
    };
    Ok(RolloutPlan {
        module_id,
        version: a.version.trim().to_owned(),
        devices,
        waves: parse_waves(&a.waves)?,
        success_threshold: a.success,
        error_threshold: a.error,
    })
}

/// An incremental refresh before a rollout decision, when the scope was scanned before.
async fn quiet_refresh(ctx: &Ctx, db: &FleetDb, scope: Scope) -> anyhow::Result<()> {
    if db.scope_info(scope)?.watermark.is_some() {
        scan::refresh(&ctx.client, db, scope, ScanKind::Incremental, &CancellationToken::new(), |_| {}).await?;
        query::snapshot(db, scope, now_ms())?;
    }
    Ok(())
}

/// What a downgrade does, in words: how many devices go back to `version` and from which.
fn downgrade_text(d: &Downgrade, version: &str) -> String {
    let rest = if d.devices > d.newest_devices {
        format!(" ({} in all run a version newer than {version})", thousands(d.devices))
    } else {
        String::new()
    };
    format!(
        "{version} is a DOWNGRADE: {} of the chosen devices would go back from {} to {version}{rest}",
        thousands(d.newest_devices),
        d.newest
    )
}

fn print_preview(p: &PlanPreview, version: &str) {
    if let Some(d) = &p.downgrade {
        // On stderr, so it is seen even when the table goes to a file.
        eprintln!("warning: {}", downgrade_text(d, version));
    }
    output::fields(&[
        ("module", p.module_name.clone()),
        ("devices to update", thousands(p.devices)),
        ("already on the version", thousands(p.already_on_version)),
        ("updating to another version", format!("{} (their updates are replaced)", thousands(p.updating_elsewhere))),
        (
            "waves",
            p.wave_sizes.iter().enumerate().map(|(i, n)| format!("{}: {n}", i + 1)).collect::<Vec<_>>().join(", "),
        ),
        ("target version", format!("{version}{}", if p.downgrade.is_some() { " (downgrade)" } else { "" })),
    ]);
    if !p.wave_budgets.is_empty() {
        println!();
        output::table(
            &["WAVE", "DEVICES", "GOES ON AT", "TOLERATES", "PAUSES ABOVE"],
            p.wave_budgets
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    vec![
                        (i + 1).to_string(),
                        thousands(b.size),
                        format!("{} ok", thousands(b.needed)),
                        format!("{} {}", thousands(b.tolerates), if b.tolerates == 1 { "failure" } else { "failures" }),
                        format!("{} failed of {}", thousands(b.failures_before_pause), thousands(b.started_devices)),
                    ]
                })
                .collect(),
        );
    }
}

/// The problems of a preview as one error naming the first field, the rest listed after it.
fn problems_error(p: &PlanPreview) -> Option<anyhow::Error> {
    let first = p.problems.first()?;
    let mut rule = first.rule.clone();
    for other in &p.problems[1..] {
        rule.push_str(&format!("; {}: {}", other.field, other.rule));
    }
    Some(invalid(&first.field, rule))
}

pub async fn run_rollout(ctx: &Ctx, dbarg: &DbArg, command: RolloutCommand) -> anyhow::Result<()> {
    let db = Arc::new(open_db(dbarg)?);
    let scope = db.scope(&ctx.fleet_key)?;
    match command {
        RolloutCommand::Preview(a) => {
            let plan = plan_of(&db, scope, &a)?;
            quiet_refresh(ctx, &db, scope).await?;
            let (preview, _) = rollout::preview(&ctx.client, &db, scope, &plan).await?;
            if ctx.json {
                output::print_json(&preview)?;
            } else {
                print_preview(&preview, &plan.version);
            }
            match problems_error(&preview) {
                Some(e) => Err(e),
                None => Ok(()),
            }
        }
        RolloutCommand::Start { plan: a, allow_downgrade } => {
            can_set_targets(ctx)?;
            let plan = plan_of(&db, scope, &a)?;
            quiet_refresh(ctx, &db, scope).await?;
            let (preview, devices) = rollout::preview(&ctx.client, &db, scope, &plan).await?;
            if let Some(e) = problems_error(&preview) {
                return Err(e);
            }
            if !ctx.json {
                print_preview(&preview, &plan.version);
            }
            if let Some(d) = &preview.downgrade {
                if !allow_downgrade {
                    return Err(invalid(
                        "version",
                        format!(
                            "{}; nothing was started. Give --allow-downgrade to roll it out anyway",
                            downgrade_text(d, &plan.version)
                        ),
                    ));
                }
            }
            let sizes: Vec<String> = preview.wave_sizes.iter().map(u32::to_string).collect();
            ctx.confirm(&format!(
                "Start a {}rollout of {} to {} on {} devices in {} waves of {} (the first wave's targets are set now, \
                 the next wave's once {}% of a wave succeeded; it pauses above {}% failed)",
                if preview.downgrade.is_some() { "DOWNGRADE " } else { "" },
                preview.module_name,
                plan.version,
                thousands(preview.devices),
                sizes.len(),
                sizes.join(", "),
                plan.success_threshold,
                plan.error_threshold
            ))?;
            let id = rollout::create(&db, scope, &plan, &devices)?;
            rollout::advance(&ctx.client, ctx.set_target.as_ref(), &db, &id).await?;
            let view = rollout::get(&db, &id)?;
            if ctx.json {
                return output::print_json(&view);
            }
            print_view(&view);
            println!("\nmove it on with: dcs rollout watch {id}");
            Ok(())
        }
        RolloutCommand::List => {
            let all = rollout::list(&db, scope)?;
            if ctx.json {
                return output::print_json(&all);
            }
            output::table(
                &["ID", "MODULE", "VERSION", "STATE", "WAVE", "SUCCEEDED", "FAILED", "UPDATING", "CREATED"],
                all.iter()
                    .map(|v| {
                        vec![
                            v.id.clone(),
                            v.module_name.clone(),
                            v.version.clone(),
                            state_name(v.state).into(),
                            format!("{}/{}", v.current_wave + 1, v.waves.len()),
                            format!("{}/{}", v.total.succeeded, v.total.size),
                            (v.total.failed + v.total.refused).to_string(),
                            v.total.updating.to_string(),
                            v.created_at.clone(),
                        ]
                    })
                    .collect(),
            );
            Ok(())
        }
        RolloutCommand::Show { id } => {
            own(&db, scope, &id)?;
            let view = rollout::get(&db, &id)?;
            if ctx.json {
                return output::print_json(&view);
            }
            print_view(&view);
            Ok(())
        }
        RolloutCommand::Pause { id } => {
            own(&db, scope, &id)?;
            let view = rollout::pause(&db, &id)?;
            if ctx.json {
                return output::print_json(&view);
            }
            println!("rollout {id} paused: no new wave starts; updates under way go on");
            Ok(())
        }
        RolloutCommand::Resume { id, success, error } => {
            own(&db, scope, &id)?;
            can_set_targets(ctx)?;
            rollout::resume(&db, &id, success, error)?;
            quiet_refresh(ctx, &db, scope).await?;
            let outcome = rollout::advance(&ctx.client, ctx.set_target.as_ref(), &db, &id).await?;
            let view = rollout::get(&db, &id)?;
            if ctx.json {
                return output::print_json(&view);
            }
            println!("rollout {id} resumed: {}", outcome_text(&outcome, &view));
            Ok(())
        }
        RolloutCommand::Abort { id, reset } => {
            own(&db, scope, &id)?;
            let view = rollout::get(&db, &id)?;
            if reset {
                can_set_targets(ctx)?;
            }
            let what = if reset {
                let n = rollout::unfinished(&db, &id)?.len();
                format!("resetting the targets of {n} devices whose update has not finished (the service cancels those updates)")
            } else {
                "leaving the updates under way to go on (--reset would reset their targets)".to_owned()
            };
            ctx.confirm(&format!(
                "Abort rollout {id} ({} to {}, {} of {} devices updated) for good, {what},",
                view.module_name, view.version, view.total.succeeded, view.total.size
            ))?;
            let (view, n) = rollout::abort(&ctx.client, ctx.set_target.as_ref(), &db, &id, reset).await?;
            if ctx.json {
                return output::print_json(&view);
            }
            println!("rollout {id} aborted{}", if reset { format!("; {n} targets reset") } else { String::new() });
            Ok(())
        }
        RolloutCommand::Watch { id, interval } => {
            if !(interval.is_finite() && interval > 0.0 && interval <= 3600.0) {
                return Err(invalid("interval", format!("must be from 0 to 3600 seconds, got {interval}")));
            }
            own(&db, scope, &id)?;
            can_set_targets(ctx)?;
            watch(ctx, &db, scope, &id, Duration::from_secs_f64(interval)).await
        }
    }
}

/// Refuses rollouts that set targets where that cannot work: on the in-process simulator (it
/// ends with this command) or with a profile that has no set-target operation (the reference
/// shows none, so the console never guesses one; the app's answer, from the same core).
fn can_set_targets(ctx: &Ctx) -> anyhow::Result<()> {
    if ctx.fleet_key.is_embedded(EmbeddedBy::Cli) {
        anyhow::bail!(
            "rollouts are unavailable on the in-process simulator: it ends with this command, so nothing would go on with the rollout. \
             Run `dcs sim` and use a profile made for it (`dcs sim` prints the `dcs profile add` line)"
        );
    }
    if ctx.set_target.is_none() {
        let name = &ctx.profile_name;
        anyhow::bail!(
            "rollouts are unavailable: profile `{name}` has no set-target operation. The service's API documentation does not describe \
             how a target version is set, so dcs does not guess; scans and the fleet commands work without it. To enable rollouts, \
             add the operation your service documents to a stored profile: `dcs profile edit {name} --set-target-method PUT \
             --set-target-path '/...{{deviceId}}...' --set-target-body '{{...: {{version}}}}'`, then try it with \
             `dcs profile test-set-target {name} --device UUID --module UUID`"
        );
    }
    Ok(())
}

/// Refuses a rollout of another profile, service or customer, naming it.
fn own(db: &FleetDb, scope: Scope, id: &str) -> anyhow::Result<()> {
    let of = rollout::scope_of(db, id)?;
    if of != scope {
        let key = db.scope_key(of)?;
        let whose = key
            .map(|k| {
                format!(
                    "profile `{}` at {}{}",
                    k.profile,
                    k.base_url,
                    k.customer.map(|c| format!(", acting for customer {c}")).unwrap_or_default()
                )
            })
            .unwrap_or_else(|| "another scope".into());
        return Err(invalid("rolloutId", format!("rollout {id} belongs to {whose}; run the command there")));
    }
    Ok(())
}

fn state_name(s: RolloutState) -> &'static str {
    match s {
        RolloutState::Running => "running",
        RolloutState::Paused => "paused",
        RolloutState::Completed => "completed",
        RolloutState::Aborted => "aborted",
    }
}

fn print_view(v: &RolloutView) {
    output::fields(&[
        ("rollout", v.id.clone()),
        ("module", format!("{} ({})", v.module_name, v.module_id)),
        ("version", v.version.clone()),
        (
            "state",
            format!("{}{}", state_name(v.state), v.reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default()),
        ),
        ("thresholds", format!("success {}%, error {}%", v.success_threshold, v.error_threshold)),
        (
            "devices",
            format!(
                "{} ({} updated, {} failed, {} updating)",
                v.total.size,
                v.total.succeeded,
                v.total.failed + v.total.refused,
                v.total.updating
            ),
        ),
        ("created", v.created_at.clone()),
    ]);
    println!();
    output::table(
        &["WAVE", "UP TO", "DEVICES", "SET", "SUCCEEDED", "FAILED", "REPLACED", "UPDATING", "REFUSED"],
        v.waves
            .iter()
            .map(|w| {
                vec![
                    format!("{}{}", w.index + 1, if w.index as i32 == v.current_wave { " *" } else { "" }),
                    format!("{}%", w.percent),
                    w.size.to_string(),
                    w.set.to_string(),
                    w.succeeded.to_string(),
                    w.failed.to_string(),
                    w.replaced.to_string(),
                    w.updating.to_string(),
                    w.refused.to_string(),
                ]
            })
            .collect(),
    );
    println!();
    for e in v.events.iter().take(10) {
        println!("{}  {}", e.at, e.message);
    }
}

/// One line of a rollout's progress: the wave under way and the whole.
fn progress_line(v: &RolloutView) -> String {
    let wave = match v.waves.get(v.current_wave.max(0) as usize) {
        Some(w) if v.current_wave >= 0 => format!(
            "wave {}/{} ({} devices): {} succeeded, {} failed, {} updating",
            w.index + 1,
            v.waves.len(),
            w.size,
            w.succeeded,
            w.failed + w.refused,
            w.updating
        ),
        _ => "no wave started".into(),
    };
    format!("{wave}; all: {}/{} updated ({})", v.total.succeeded, v.total.size, share(v.total.succeeded, v.total.size))
}

fn outcome_text(o: &StepOutcome, v: &RolloutView) -> String {
    match o {
        StepOutcome::Waiting => format!("{}; waiting for the devices", progress_line(v)),
        StepOutcome::WaveStarted { wave, set, refused } => {
            format!(
                "wave {} started: {set} targets set{}",
                wave + 1,
                if *refused > 0 { format!(", {refused} refused") } else { String::new() }
            )
        }
        StepOutcome::Paused { reason } => format!("paused: {reason}"),
        StepOutcome::Completed => format!("completed: {}", v.reason.clone().unwrap_or_default()),
    }
}

async fn watch(ctx: &Ctx, db: &Arc<FleetDb>, scope: Scope, id: &str, interval: Duration) -> anyhow::Result<()> {
    // The app's refresh: an incremental scan, a history snapshot, and each running rollout of
    // the scope moved on; this one's step is printed.
    let service = FleetService::new(db.clone());
    let cancel = CancellationToken::new();
    let _ctrl_c = CtrlC::cancels(&cancel);
    let mut last = String::new();
    let stopped = |v: &RolloutView| -> anyhow::Result<()> {
        match v.state {
            RolloutState::Completed => Ok(()),
            RolloutState::Running => unreachable!("watched until it stops running"),
            other => anyhow::bail!(
                "rollout {id} is {}: {}",
                state_name(other),
                v.reason.as_deref().unwrap_or("no reason given")
            ),
        }
    };
    loop {
        let view = rollout::get(db, id)?;
        if view.state != RolloutState::Running {
            if ctx.json {
                output::print_json(&view)?;
            } else {
                println!("{}", progress_line(&view));
                println!(
                    "rollout {id} {}{}",
                    state_name(view.state),
                    view.reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default()
                );
            }
            return stopped(&view);
        }
        let refreshed = tokio::select! {
            _ = cancel.cancelled() => None,
            r = service.refresh_stepped(&ctx.client, ctx.set_target.as_ref(), scope, ScanKind::Incremental) => Some(r),
        };
        let moved = match refreshed {
            None | Some(Err(FleetError::Cancelled)) => return Err(stopped_watching(id)),
            Some(r) => r?.1,
        };
        let outcome = moved.into_iter().find(|(of, _)| of == id).map_or(StepOutcome::Waiting, |(_, o)| o);
        let view = rollout::get(db, id)?;
        if !ctx.json {
            let line = match &outcome {
                StepOutcome::Waiting => progress_line(&view),
                other => outcome_text(other, &view),
            };
            if line != last {
                println!("{}  {line}", time_now());
                last = line;
            }
        }
        if view.state != RolloutState::Running {
            continue;
        }
        tokio::select! {
            _ = cancel.cancelled() => return Err(stopped_watching(id)),
            _ = tokio::time::sleep(interval) => {}
        }
    }
}

fn stopped_watching(id: &str) -> anyhow::Error {
    anyhow::Error::from(dcs_api::Error::Cancelled { what: "watching".into() })
        .context(format!("rollout {id} is still running; `dcs rollout watch {id}` (or the app) goes on with it"))
}

fn time_now() -> String {
    let t = time::OffsetDateTime::now_utc();
    format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second())
}
