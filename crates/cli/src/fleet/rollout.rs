//! `dcs rollout ...`: its commands, the plan they take, and the checks before a rollout moves.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use dcs_console::fleet::rollout::DriverKind;
use dcs_console::fleet::rollout::{self, schedule, DeviceChoice, RetryPolicy, RolloutPlan, Schedule, Window};
use dcs_console::fleet::service::FleetService;
use dcs_console::fleet::{EmbeddedBy, FleetDb, Scope};
use dcs_console::ops::rollouts as ops;
use dcs_console::ops::{Confirmed, FleetCtx};

use super::print::{outcome_text, print_preview, print_view, state_name, thousands};
use super::watch::watch;
use super::{module_id, open_db, DbArg, Filters};
use crate::output;
use crate::{invalid, Ctx};

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
    /// Rehearse a plan before anything is sent: it runs on a simulator seeded from the fleet
    /// database's copy of the chosen devices, whose updates take as long and fail as often as
    /// the models say (--model, first match; else fail=5,download=1-10,install=0.5-3), on a fast
    /// clock. Prints when each wave would start, meet its threshold and end, where a threshold
    /// would pause it, and the failures to expect.
    #[command(after_help = "Examples:
  dcs rollout rehearse --module 3f0e... --version 1.4.0 --all --waves 1,10,50,100 --success 95 --error 5
  \
        dcs rollout rehearse --module 3f0e... --version 1.4.0 --all --model connection=lora,fail=12,download=5-30,install=1-4 \\\n    --model fail=3,download=1-10,install=0.5-3\n\n\
        A model: comma-separated key=value: fail=PERCENT, download=MIN-MAX and install=MIN-MAX (minutes),\n\
        optionally module=ID and connection=lora|http|mqtt (from the service's binding lists).")]
    Rehearse {
        #[command(flatten)]
        plan: PlanArgs,
        /// How the updates of the devices it matches go (repeat; the first match counts).
        #[arg(long = "model", value_name = "RULE")]
        models: Vec<String>,
        /// Seconds between the refreshes that will move the rollout (`dcs rollout watch
        /// --interval`): the rehearsal steps as often.
        #[arg(long, default_value_t = 5)]
        interval: u32,
    },
    /// The rollouts of this profile/customer, newest first.
    List,
    /// One rollout: its waves and latest events.
    Show {
        /// The rollout's id (`dcs rollout list`).
        id: String,
    },
    /// Write a rollout's report: a self-contained HTML file (prints well; a PDF through the
    /// browser's print dialog) and/or the same facts as JSON (to a file, or with the global
    /// --json on stdout).
    #[command(
        after_help = "Examples:\n  dcs rollout report 9d5f8a4e-... --html rollout.html --json-file rollout.json\n  \
        dcs --json rollout report 9d5f8a4e-... > rollout.json"
    )]
    Report {
        /// The rollout's id (`dcs rollout list`).
        id: String,
        /// Where to write the HTML report (replaced if it exists).
        #[arg(long, value_name = "FILE")]
        html: Option<std::path::PathBuf>,
        /// Where to write the JSON report (replaced if it exists).
        #[arg(long, value_name = "FILE")]
        json_file: Option<std::path::PathBuf>,
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
    /// Let the wave a rollout holds for approval start (rollouts started with --approval); it
    /// starts now, or when its schedule allows.
    #[command(after_help = "Example:\n  dcs rollout continue 6a1c...")]
    Continue {
        /// The rollout's id (`dcs rollout list`).
        id: String,
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
    /// No wave starts before this: RFC 3339 (2026-11-30T21:00:00Z) or a local date and time
    /// (2026-11-30T22:00) in --time-zone.
    #[arg(long, value_name = "TIME")]
    start_at: Option<String>,
    /// A maintenance window waves may start in, DAYS/HH:MM-HH:MM in --time-zone (repeat for
    /// more); an end at or before the start ends the next day. Days: mon..sun, ranges
    /// (mon-fri) and lists (sat,sun).
    #[arg(long = "window", value_name = "DAYS/FROM-TO")]
    windows: Vec<String>,
    /// The time zone of --start-at and --window (IANA, e.g. Europe/Berlin); default: this
    /// machine's, else UTC.
    #[arg(long, value_name = "ZONE")]
    time_zone: Option<String>,
    /// Least minutes between the starts of two waves.
    #[arg(long, value_name = "N")]
    minutes_between_waves: Option<u32>,
    /// Each wave after the first waits for `dcs rollout continue` (or "Continue" in the app).
    #[arg(long)]
    approval: bool,
    /// Warn when the wave under way has seen no change for this many minutes, naming the
    /// devices that did not move (0: never; default 120).
    #[arg(long, value_name = "MINUTES")]
    hang_minutes: Option<u32>,
    /// Retry a failed device (set its target again) up to N times (0: never).
    #[arg(long, value_name = "N", default_value_t = 0)]
    retries: u32,
    /// Minutes after a failure before its retry.
    #[arg(long, value_name = "MINUTES", default_value_t = 5)]
    retry_delay_minutes: u32,
    /// Never retry a failure whose reason contains this (case-insensitive; repeat for more),
    /// e.g. --no-retry-for signature --no-retry-for incompatible.
    #[arg(long, value_name = "WORDS")]
    no_retry_for: Vec<String>,
    /// Devices that appear after the start (a later refresh first sees their state) and match
    /// --all or the filters: none (left out), current (into the wave under way) or next (into
    /// the next wave).
    #[arg(long, value_name = "WHERE", default_value = "none", value_parser = ["none", "current", "next"])]
    late: String,
}

/// The plan's schedule from the flags, if any schedule flag is given.
fn schedule_of(a: &PlanArgs) -> anyhow::Result<Option<Schedule>> {
    if a.start_at.is_none() && a.windows.is_empty() && a.minutes_between_waves.is_none() && a.time_zone.is_none() {
        return Ok(None);
    }
    let windows = a.windows.iter().enumerate().map(|(i, w)| parse_window(i, w)).collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Some(Schedule {
        time_zone: a.time_zone.clone().or_else(schedule::system_zone).unwrap_or_else(|| "UTC".into()),
        start_at: a.start_at.clone(),
        windows,
        minutes_between_waves: a.minutes_between_waves.unwrap_or(0),
    }))
}

/// `mon-fri/22:00-04:00` as a window (the schedule's check judges the days and times).
fn parse_window(i: usize, raw: &str) -> anyhow::Result<Window> {
    let field = format!("schedule.windows[{i}]");
    let bad = || invalid(&field, format!("`{raw}` is not DAYS/HH:MM-HH:MM (for example mon-fri/22:00-04:00)"));
    let (days, hours) = raw.trim().split_once('/').ok_or_else(bad)?;
    let (from, to) = hours.split_once('-').ok_or_else(bad)?;
    const ORDER: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    let mut out = Vec::new();
    for part in days.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let pos = |d: &str| ORDER.iter().position(|o| o.eq_ignore_ascii_case(d.trim()));
                let (Some(a), Some(b)) = (pos(a), pos(b)) else {
                    return Err(invalid(&format!("{field}.days"), format!("`{part}` is not a range of mon..sun")));
                };
                // mon-fri, and fri-mon across the weekend.
                let mut d = a;
                loop {
                    out.push(ORDER[d].to_owned());
                    if d == b {
                        break;
                    }
                    d = (d + 1) % 7;
                }
            }
            None => out.push(part.to_owned()),
        }
    }
    Ok(Window { days: out, from: from.trim().to_owned(), to: to.trim().to_owned() })
}

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
        DeviceChoice::Query { query: a.filters.query(None, None)?, selection: None }
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
        schedule: schedule_of(a)?,
        approval: a.approval,
        hang_minutes: a.hang_minutes,
        retry: (a.retries > 0).then(|| RetryPolicy {
            times: a.retries,
            delay_minutes: a.retry_delay_minutes,
            never_for: a.no_retry_for.clone(),
        }),
        late: rollout::LateDevices::parse(&a.late),
    })
}

pub async fn run_rollout(ctx: &Ctx, dbarg: &DbArg, command: RolloutCommand) -> anyhow::Result<()> {
    let db = Arc::new(open_db(dbarg)?);
    let scope = db.scope(&ctx.fleet_key)?;
    let service = FleetService::new(db.clone(), DriverKind::Cli);
    let fleet = fleet_ctx(ctx, &service, scope);
    let done = run_on(ctx, &fleet, command).await;
    // A rollout this command stepped is let go of at once: the app or a runner takes it over
    // without waiting for the lease to run out.
    service.release()?;
    done
}

/// The use cases' context for this command's scope.
fn fleet_ctx<'a>(ctx: &'a Ctx, service: &'a FleetService, scope: Scope) -> FleetCtx<'a> {
    FleetCtx {
        client: &ctx.client,
        profile: &ctx.profile_name,
        set_target: ctx.set_target.as_ref(),
        acting: ctx.fleet_key.customer,
        fleet: service,
        scope,
    }
}

/// What the operator confirms in this command: its scope (the prompt names it; --yes skips it).
fn confirmed(ctx: &Ctx) -> Confirmed {
    Confirmed::for_customer(ctx.fleet_key.customer)
}

async fn run_on(ctx: &Ctx, fleet: &FleetCtx<'_>, command: RolloutCommand) -> anyhow::Result<()> {
    match command {
        RolloutCommand::Preview(a) => preview(ctx, fleet, &a).await,
        RolloutCommand::Start { plan: a, allow_downgrade } => start(ctx, fleet, &a, allow_downgrade).await,
        RolloutCommand::Rehearse { plan, models, interval } => rehearse(ctx, fleet, &plan, &models, interval).await,
        RolloutCommand::List => list(ctx, fleet),
        RolloutCommand::Show { id } => {
            let view = ops::get(fleet, &id)?;
            if ctx.json {
                return output::print_json(&view);
            }
            print_view(&view);
            Ok(())
        }
        RolloutCommand::Report { id, html, json_file } => {
            if html.is_none() && json_file.is_none() && !ctx.json {
                return Err(invalid(
                    "--html",
                    "give --html FILE, --json-file FILE or both (or --json for the report on stdout)",
                ));
            }
            let customer = ctx.fleet_key.customer.and_then(|c| ctx.customer_names.get(&c).cloned());
            let report = ops::report(fleet, &id, customer).await?;
            rollout::report::write(&report, html.as_deref(), json_file.as_deref())?;
            if ctx.json && json_file.is_none() {
                return output::print_json(&report);
            }
            for p in html.iter().chain(json_file.iter()) {
                eprintln!("wrote {}", p.display());
            }
            Ok(())
        }
        RolloutCommand::Pause { id } => {
            let view = ops::pause(fleet, &id, &confirmed(ctx)).await?;
            if ctx.json {
                return output::print_json(&view);
            }
            println!("rollout {id} paused: no new wave starts; updates under way go on");
            Ok(())
        }
        RolloutCommand::Resume { id, success, error } => resume(ctx, fleet, &id, success, error).await,
        RolloutCommand::Continue { id } => approve(ctx, fleet, &id).await,
        RolloutCommand::Abort { id, reset } => abort(ctx, fleet, &id, reset).await,
        RolloutCommand::Watch { id, interval } => {
            if !(interval.is_finite() && interval > 0.0 && interval <= 3600.0) {
                return Err(invalid("interval", format!("must be from 0 to 3600 seconds, got {interval}")));
            }
            ops::own(fleet, &id)?;
            can_set_targets(ctx, fleet)?;
            watch(ctx, fleet, &id, Duration::from_secs_f64(interval)).await
        }
    }
}

/// `dcs rollout preview`: the plan's table, then its problems as the error.
async fn preview(ctx: &Ctx, fleet: &FleetCtx<'_>, a: &PlanArgs) -> anyhow::Result<()> {
    let plan = plan_of(fleet.db(), fleet.scope, a)?;
    let preview = ops::preview(fleet, &plan).await?;
    if ctx.json {
        output::print_json(&preview)?;
    } else {
        print_preview(&preview, &plan.version);
    }
    match ops::problems(&preview) {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// One `--model` rule: `key=value` pairs separated by commas.
fn model_of(text: &str) -> anyhow::Result<rollout::ModelRule> {
    let mut rule = rollout::ModelRule { module_id: None, ..rollout::rehearse::DEFAULT_MODEL };
    let bad = |rule: String| invalid("--model", format!("{rule} (in `{text}`)"));
    let range = |key: &str, v: &str| -> anyhow::Result<[f64; 2]> {
        let (lo, hi) = v.split_once('-').unwrap_or((v, v));
        match (lo.trim().parse::<f64>(), hi.trim().parse::<f64>()) {
            (Ok(lo), Ok(hi)) => Ok([lo, hi]),
            _ => Err(bad(format!("{key} must be minutes as LEAST-MOST (e.g. 1-10), got `{v}`"))),
        }
    };
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(bad(format!("each part is key=value, got `{pair}`")));
        };
        let value = value.trim();
        match key.trim() {
            "module" => rule.module_id = Some(value.to_owned()),
            "connection" => rule.connection = Some(value.to_ascii_lowercase()),
            "fail" => {
                rule.fail_percent = value
                    .trim_end_matches('%')
                    .parse()
                    .map_err(|_| bad(format!("fail must be a percent, got `{value}`")))?
            }
            "download" => rule.download_minutes = range("download", value)?,
            "install" => rule.install_minutes = range("install", value)?,
            other => {
                return Err(bad(format!("unknown key `{other}`: use module, connection, fail, download, install")))
            }
        }
    }
    Ok(rule)
}

/// Minutes as `22 min`, `3 h 05 min` or `2 d 04 h`.
fn duration_text(minutes: f64) -> String {
    let m = minutes.round() as i64;
    match m {
        m if m < 60 => format!("{m} min"),
        m if m < 24 * 60 => format!("{} h {:02} min", m / 60, m % 60),
        m => format!("{} d {:02} h", m / (24 * 60), m % (24 * 60) / 60),
    }
}

/// `dcs rollout rehearse`: the plan run on a simulator of the fleet's copy; nothing is sent.
async fn rehearse(
    ctx: &Ctx,
    fleet: &FleetCtx<'_>,
    a: &PlanArgs,
    models: &[String],
    interval: u32,
) -> anyhow::Result<()> {
    let models = models.iter().map(|m| model_of(m)).collect::<anyhow::Result<Vec<_>>>()?;
    let plan = plan_of(fleet.db(), fleet.scope, a)?;
    if !(1..=3600).contains(&interval) {
        return Err(invalid("interval", format!("must be from 1 to 3600 seconds, got {interval}")));
    }
    let cancel = tokio_util::sync::CancellationToken::new();
    let r = ops::rehearse(fleet, &plan, &models, interval, &cancel).await?;
    if ctx.json {
        return output::print_json(&r);
    }
    println!(
        "Rehearsal of {} {} on {} devices (nothing was sent to the service)",
        r.module_name,
        r.version,
        thousands(r.devices)
    );
    let at = |m: Option<f64>| m.map_or_else(|| "-".to_owned(), duration_text);
    output::table(
        &[
            "WAVE",
            "DEVICES",
            "STARTS AFTER",
            "THRESHOLD MET AFTER",
            "ALL FINAL AFTER",
            "SUCCEEDED",
            "FAILED",
            "RETRIES",
        ],
        r.waves
            .iter()
            .map(|w| {
                vec![
                    (w.wave + 1).to_string(),
                    thousands(w.devices),
                    at(w.start_minutes),
                    at(w.threshold_minutes),
                    at(w.end_minutes),
                    thousands(w.succeeded),
                    thousands(w.failed),
                    w.retries.to_string(),
                ]
            })
            .collect(),
    );
    for e in &r.events {
        println!("  after {}: {}", duration_text(e.minutes), e.message);
    }
    match r.end {
        rollout::RehearsalEnd::Completed => println!("Completes after {}", duration_text(r.minutes)),
        rollout::RehearsalEnd::Paused => println!(
            "Pauses after {}: {}",
            duration_text(r.minutes),
            r.pause_reason.as_deref().unwrap_or("a threshold")
        ),
        rollout::RehearsalEnd::Unfinished => {
            println!("Still running after {} (the rehearsal stops there)", duration_text(r.minutes))
        }
    }
    if r.trials > 1 {
        println!(
            "Median of {} trials: from {} to {}{}",
            r.trials,
            duration_text(r.least_minutes),
            duration_text(r.most_minutes),
            if r.paused_trials > 0 && r.end != rollout::RehearsalEnd::Paused {
                format!("; {} of them paused", r.paused_trials)
            } else {
                String::new()
            }
        );
    }
    println!(
        "Expected failures: {} of {} devices ({} retries)",
        thousands(r.failures),
        thousands(r.devices),
        r.retries
    );
    let models: Vec<String> = r
        .by_model
        .iter()
        .map(|(m, n)| match m {
            Some(i) => format!("model {}: {}", i + 1, thousands(*n)),
            None => format!("default model: {}", thousands(*n)),
        })
        .collect();
    println!("Devices by model: {}", models.join(", "));
    if !r.connections.is_empty() {
        let kinds: Vec<String> = r.connections.iter().map(|(k, n)| format!("{k} {}", thousands(*n))).collect();
        println!("Connection kinds from the binding lists: {}", kinds.join(", "));
    }
    println!(
        "Rehearsed in {:.1} s ({} steps of the simulated clock, {} s apart while devices move)",
        r.elapsed_ms as f64 / 1000.0,
        r.steps,
        r.step_seconds
    );
    Ok(())
}

/// `dcs rollout start`: the plan checked and confirmed, its first wave's targets set.
async fn start(ctx: &Ctx, fleet: &FleetCtx<'_>, a: &PlanArgs, allow_downgrade: bool) -> anyhow::Result<()> {
    can_set_targets(ctx, fleet)?;
    let plan = plan_of(fleet.db(), fleet.scope, a)?;
    // What the operator is asked to confirm: the plan as it stands now (start checks it again).
    let preview = ops::preview(fleet, &plan).await?;
    if let Some(e) = ops::problems(&preview) {
        return Err(e.into());
    }
    if !ctx.json {
        print_preview(&preview, &plan.version);
    }
    if let (Some(d), false) = (&preview.downgrade, allow_downgrade) {
        return Err(invalid(
            "version",
            format!("{}; nothing was started. Give --allow-downgrade to roll it out anyway", d.text(&plan.version)),
        ));
    }
    let sizes: Vec<String> = preview.wave_sizes.iter().map(u32::to_string).collect();
    ctx.confirm(&format!(
        "Start a {}rollout of {} to {} on {} devices in {} waves of {} (the first wave's targets are set now, \
         the next wave's once {}% of a wave succeeded; it {})",
        if preview.downgrade.is_some() { "DOWNGRADE " } else { "" },
        preview.module_name,
        plan.version,
        thousands(preview.devices),
        sizes.len(),
        sizes.join(", "),
        plan.success_threshold,
        if plan.error_threshold >= 100.0 {
            "never pauses for failures".to_owned()
        } else {
            format!("pauses above {}% failed", plan.error_threshold)
        }
    ))?;
    let view = ops::start(fleet, &plan, &confirmed(ctx), allow_downgrade).await?;
    if ctx.json {
        return output::print_json(&view);
    }
    print_view(&view);
    println!("\nmove it on with: dcs rollout watch {} (or the app, or a runner: dcs serve)", view.id);
    Ok(())
}

/// `dcs rollout list`: the rollouts of the scope, newest first.
fn list(ctx: &Ctx, fleet: &FleetCtx<'_>) -> anyhow::Result<()> {
    let all = ops::list(fleet)?;
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

/// `dcs rollout resume`: new thresholds if given, then the rollout moved on at once.
async fn resume(
    ctx: &Ctx,
    fleet: &FleetCtx<'_>,
    id: &str,
    success: Option<f64>,
    error: Option<f64>,
) -> anyhow::Result<()> {
    can_set_targets(ctx, fleet)?;
    let (view, outcome) = ops::resume(fleet, id, success, error, &confirmed(ctx)).await?;
    if ctx.json {
        return output::print_json(&view);
    }
    println!("rollout {id} resumed: {}", outcome_text(&outcome, &view));
    Ok(())
}

/// `dcs rollout continue`: the held wave approved, then the rollout moved on at once.
async fn approve(ctx: &Ctx, fleet: &FleetCtx<'_>, id: &str) -> anyhow::Result<()> {
    can_set_targets(ctx, fleet)?;
    let (view, outcome) = ops::approve(fleet, id, &confirmed(ctx)).await?;
    if ctx.json {
        return output::print_json(&view);
    }
    println!("rollout {id} continues: {}", outcome_text(&outcome, &view));
    Ok(())
}

/// `dcs rollout abort`: confirmed, then stopped for good, with its unfinished targets reset if asked.
async fn abort(ctx: &Ctx, fleet: &FleetCtx<'_>, id: &str, reset: bool) -> anyhow::Result<()> {
    let view = ops::get(fleet, id)?;
    if reset {
        can_set_targets(ctx, fleet)?;
    }
    let what = if reset {
        let n = ops::unfinished(fleet, id)?;
        format!(
            "resetting the targets of {n} devices whose update has not finished (the service cancels those updates)"
        )
    } else {
        "leaving the updates under way to go on (--reset would reset their targets)".to_owned()
    };
    ctx.confirm(&format!(
        "Abort rollout {id} ({} to {}, {} of {} devices updated) for good, {what},",
        view.module_name, view.version, view.total.succeeded, view.total.size
    ))?;
    let (view, n) = ops::abort(fleet, id, reset, &confirmed(ctx)).await?;
    if ctx.json {
        return output::print_json(&view);
    }
    println!("rollout {id} aborted{}", if reset { format!("; {n} targets reset") } else { String::new() });
    Ok(())
}

/// Refuses rollouts that set targets where that cannot work: on the in-process simulator (it
/// ends with this command: a front end's own fact), or, as every front end does, with a profile
/// that has no set-target operation ([`FleetCtx::operation`]).
fn can_set_targets(ctx: &Ctx, fleet: &FleetCtx<'_>) -> anyhow::Result<()> {
    if ctx.fleet_key.is_embedded(EmbeddedBy::Cli) {
        anyhow::bail!(
            "rollouts are unavailable on the in-process simulator: it ends with this command, so nothing would go on with the rollout. \
             Run `dcs sim` and use a profile made for it (`dcs sim` prints the `dcs profile add` line)"
        );
    }
    fleet.operation()?;
    Ok(())
}
