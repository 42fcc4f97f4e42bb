//! A rehearsal: the plan run, before anything is sent to the service, against a simulator seeded
//! from the fleet database's copy of the chosen devices (same devices, module, versions and
//! states), whose updates take as long and fail as often as the operator's models say, on a
//! clock moved on in jumps. The same code runs it as a real rollout (`create`, `advance_at`,
//! the refreshes), over real HTTP to the simulator, into a fleet database of its own.
//!
//! What it answers: when each wave would start, meet its success threshold and end, whether
//! and when a threshold would pause the rollout, and the failures to expect.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use dcs_api::bindings::BindingFilter;
use dcs_api::Client;
use dcs_sim::rehearsal::{CopiedDevice, FleetCopy, UpdateModel, UpdateModels};
use dcs_sim::SimOptions;
use futures::{Stream, StreamExt as _};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::budget::pct;
use super::hold::HoldKind;
use super::plan::RolloutPlan;
use super::step::StepOutcome;
use super::store::load_known;
use super::versions::Candidate;
use super::view::wave_views;
use crate::fleet::scan::{self, ScanKind};
use crate::fleet::{to_ms, FleetDb, FleetError, Result, Scope, ScopeKey};
use crate::set_target::SetTarget;
use crate::FieldError;

/// How the updates of the devices a rule matches go, as the operator models them.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ModelRule {
    /// The module the rule is for (its id); none: any module.
    #[serde(default)]
    pub module_id: Option<String>,
    /// The connection kind the rule is for (`lora`, `http`, `mqtt`), as the service's binding
    /// lists give it; none: any device.
    #[serde(default)]
    pub connection: Option<String>,
    /// Percent of updates that fail.
    pub fail_percent: f64,
    /// Minutes the download takes, from the device starting it: least and most.
    pub download_minutes: [f64; 2],
    /// Minutes the install takes: least and most.
    pub install_minutes: [f64; 2],
}

/// The model of a device no rule matches.
pub const DEFAULT_MODEL: ModelRule = ModelRule {
    module_id: None,
    connection: None,
    fail_percent: 5.0,
    download_minutes: [1.0, 10.0],
    install_minutes: [0.5, 3.0],
};

/// Connection kinds a rule may name: those with binding lists.
pub const CONNECTIONS: &[&str] = &["lora", "http", "mqtt"];
/// The most rules a rehearsal takes.
pub const MAX_RULES: usize = 20;
/// The longest step a model allows: a week.
pub const MAX_STEP_MINUTES: f64 = 7.0 * 24.0 * 60.0;
/// The simulated time a rehearsal runs for at most.
pub const MAX_DAYS: i64 = 31;

impl ModelRule {
    /// Every rule it breaks, its fields named `models[i].<field>`.
    fn check(&self, i: usize) -> Vec<FieldError> {
        let field = |f: &str| format!("models[{i}].{f}");
        let mut out = Vec::new();
        if let Some(m) = &self.module_id {
            if Uuid::parse_str(m).is_err() {
                out.push(FieldError::new(field("moduleId"), format!("must be a module's id (a UUID), got `{m}`")));
            }
        }
        if let Some(c) = &self.connection {
            if !CONNECTIONS.contains(&c.as_str()) {
                out.push(FieldError::new(
                    field("connection"),
                    format!("must be one of {}, got `{c}`", CONNECTIONS.join(", ")),
                ));
            }
        }
        if !(self.fail_percent.is_finite() && (0.0..=100.0).contains(&self.fail_percent)) {
            out.push(FieldError::new(
                field("failPercent"),
                format!("must be from 0 to 100, got {}", self.fail_percent),
            ));
        }
        for (name, [lo, hi]) in [("downloadMinutes", self.download_minutes), ("installMinutes", self.install_minutes)] {
            let ok = lo.is_finite() && hi.is_finite() && lo >= 0.0 && lo <= hi && hi <= MAX_STEP_MINUTES;
            if !ok {
                out.push(FieldError::new(
                    field(name),
                    format!("must be a least and a most from 0 to {MAX_STEP_MINUTES} minutes (a week), the least first, got {lo} to {hi}"),
                ));
            }
        }
        out
    }

    fn matches(&self, module: &str, kinds: Option<&Vec<&'static str>>) -> bool {
        self.module_id.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(module))
            && self.connection.as_deref().is_none_or(|c| kinds.is_some_and(|k| k.contains(&c)))
    }

    fn model(&self) -> UpdateModel {
        let secs = |m: f64| (m * 60.0).round() as u32;
        UpdateModel {
            fail_percent: self.fail_percent,
            download_secs: (secs(self.download_minutes[0]), secs(self.download_minutes[1])),
            install_secs: (secs(self.install_minutes[0]), secs(self.install_minutes[1])),
        }
    }
}

/// Every rule the models break.
pub fn check_models(models: &[ModelRule]) -> Vec<FieldError> {
    if models.len() > MAX_RULES {
        return vec![FieldError::new("models", format!("at most {MAX_RULES} rules, got {}", models.len()))];
    }
    models.iter().enumerate().flat_map(|(i, m)| m.check(i)).collect()
}

/// One wave as rehearsed; times in minutes after the rollout started.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct WaveRehearsal {
    pub wave: u32,
    pub devices: u32,
    /// When its targets were set (none: it never started).
    pub start_minutes: Option<f64>,
    /// When enough of its devices had succeeded for the next wave (or the completion).
    pub threshold_minutes: Option<f64>,
    /// When every device of it was final.
    pub end_minutes: Option<f64>,
    pub succeeded: u32,
    pub failed: u32,
    /// Devices retried, and the retries sent.
    pub retried: u32,
    pub retries: u32,
}

/// How a rehearsal ended.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum RehearsalEnd {
    Completed,
    Paused,
    /// Still running after [`MAX_DAYS`] of simulated time.
    Unfinished,
}

/// Something the rehearsal met on its way, at a time after the start.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RehearsalEvent {
    pub minutes: f64,
    pub message: String,
}

/// What a rehearsal found.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Rehearsal {
    pub module_name: String,
    pub version: String,
    pub devices: u32,
    pub waves: Vec<WaveRehearsal>,
    pub end: RehearsalEnd,
    /// Minutes from the start to the completion, the pause or the give-up.
    pub minutes: f64,
    /// Why it paused (the same words a real rollout's pause gives).
    pub pause_reason: Option<String>,
    /// Devices whose update failed for good (failed or refused, not being retried) at the end.
    pub failures: u32,
    pub retries: u32,
    /// Holds (schedule, approval, counted as given at once), hang warnings and retries, in order.
    pub events: Vec<RehearsalEvent>,
    /// Devices per model: the rule's index (none: [`DEFAULT_MODEL`]) and how many.
    pub by_model: Vec<(Option<u32>, u32)>,
    /// Devices of each connection kind the binding lists gave (read only when a rule names one).
    pub connections: Vec<(String, u32)>,
    /// Real time the rehearsal took, and the refreshes and steps it ran.
    pub elapsed_ms: u32,
    pub steps: u32,
    /// Simulated seconds between two steps while devices move.
    pub step_seconds: u32,
    /// Trials run (each draws the devices' fates anew), how many of them paused, and the
    /// shortest and longest of their lengths in minutes.
    pub trials: u32,
    pub paused_trials: u32,
    pub least_minutes: f64,
    pub most_minutes: f64,
}

/// The longest step a caller may ask for (an hour: the longest refresh interval).
pub const MAX_STEP_SECS: u32 = 3600;
/// The longest jump over a quiet time (retries and hang warnings are seen within it).
const MAX_JUMP_SECS: i64 = 15 * 60;
/// Trials of a rehearsal: each draws the devices' fates anew; the answer takes their medians.
pub const TRIALS: u32 = 3;
/// The rehearsal's simulator clock barely moves by itself: the rehearsal moves it.
const STOPPED: f64 = 1e-6;

/// Rehearses `plan` for `scope` of `db` with `models`: checked and resolved as a start would
/// (the preview's rules, read-only calls to the service), then run on a simulator of its own,
/// stepped every `step_secs` of simulated time while devices move: as often as the real rollout
/// will be (its refreshes' interval plus their duration, on the service's clock), so that what
/// the rehearsal says of a wave includes the wait for the refresh that sees it.
pub async fn rehearse(
    client: &Client,
    db: &FleetDb,
    scope: Scope,
    plan: &RolloutPlan,
    models: &[ModelRule],
    step_secs: u32,
    cancel: &CancellationToken,
) -> Result<Rehearsal> {
    if !(1..=MAX_STEP_SECS).contains(&step_secs) {
        return Err(FleetError::invalid(
            "stepSeconds",
            format!("must be from 1 to {MAX_STEP_SECS} seconds, got {step_secs}"),
        ));
    }
    if let Some(p) = check_models(models).into_iter().next() {
        return Err(FleetError::invalid(&p.field, &p.rule));
    }
    let (preview, candidates) = super::preview(client, db, scope, plan).await?;
    if let Some(p) = preview.problems.first() {
        return Err(FleetError::invalid(&p.field, &p.rule));
    }
    let kinds =
        if models.iter().any(|m| m.connection.is_some()) { connection_kinds(client).await? } else { HashMap::new() };
    let (copy, updates, by_model, connections) =
        copy_of(db, scope, plan, &preview.module_name, &candidates, models, &kinds)?;
    let (copy, updates) = (Arc::new(copy), Arc::new(updates));
    let started = Instant::now();
    let mut trials = Vec::with_capacity(TRIALS as usize);
    for trial in 0..TRIALS {
        let opts = SimOptions {
            seed: 1 + trial as u64,
            speed: STOPPED,
            copy: Some(copy.clone()),
            models: Some(updates.clone()),
            ..Default::default()
        };
        trials.push(trial_run(opts, plan, &candidates, step_secs, cancel).await?);
    }
    let mut out = combine(trials);
    out.module_name = preview.module_name;
    out.by_model = by_model;
    out.connections = connections;
    out.elapsed_ms = started.elapsed().as_millis().min(u32::MAX as u128) as u32;
    Ok(out)
}

/// One trial: the plan on a simulator of its own with `opts` (its seed draws the devices' fates).
async fn trial_run(
    opts: SimOptions,
    plan: &RolloutPlan,
    candidates: &[Candidate],
    step_secs: u32,
    cancel: &CancellationToken,
) -> Result<Rehearsal> {
    let sim = crate::simulator::start(opts).await.map_err(|e| FleetError::Setup(format!("the rehearsal: {e}")))?;
    let rdb = FleetDb::in_memory()?;
    let rscope =
        rdb.scope(&ScopeKey { profile: "rehearsal".into(), base_url: sim.running.base_url(), customer: None })?;
    let mut run = Run {
        client: &sim.client,
        sim: &sim.sim,
        db: &rdb,
        scope: rscope,
        op: SetTarget::simulator(),
        step: time::Duration::seconds(step_secs as i64),
        started: sim.sim.now(),
        waves: Vec::new(),
        events: Vec::new(),
        steps: 0,
    };
    let out = run.go(plan, candidates, cancel).await;
    sim.running.shutdown().await;
    out
}

/// The trials as one answer: each figure the median of the trials' (a time only when most
/// trials reached it), the end most trials came to, with the events of the trial whose length
/// is the median, and the spread of the lengths.
fn combine(mut trials: Vec<Rehearsal>) -> Rehearsal {
    fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> Option<T> {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        v.get(v.len() / 2).copied()
    }
    let n = trials.len();
    let times = |f: &dyn Fn(&Rehearsal) -> Option<f64>| {
        let v: Vec<f64> = trials.iter().filter_map(f).collect();
        if v.len() * 2 > n {
            median(v)
        } else {
            None
        }
    };
    let counts = |f: &dyn Fn(&Rehearsal) -> u32| median(trials.iter().map(f).collect()).unwrap_or(0);
    let waves: Vec<WaveRehearsal> = (0..trials[0].waves.len())
        .map(|i| WaveRehearsal {
            wave: i as u32,
            devices: counts(&|t| t.waves.get(i).map_or(0, |w| w.devices)),
            start_minutes: times(&|t| t.waves.get(i)?.start_minutes),
            threshold_minutes: times(&|t| t.waves.get(i)?.threshold_minutes),
            end_minutes: times(&|t| t.waves.get(i)?.end_minutes),
            succeeded: counts(&|t| t.waves.get(i).map_or(0, |w| w.succeeded)),
            failed: counts(&|t| t.waves.get(i).map_or(0, |w| w.failed)),
            retried: counts(&|t| t.waves.get(i).map_or(0, |w| w.retried)),
            retries: counts(&|t| t.waves.get(i).map_or(0, |w| w.retries)),
        })
        .collect();
    let paused = trials.iter().filter(|t| t.end == RehearsalEnd::Paused).count() as u32;
    let completed = trials.iter().filter(|t| t.end == RehearsalEnd::Completed).count() as u32;
    let end = if paused * 2 > n as u32 {
        RehearsalEnd::Paused
    } else if completed * 2 > n as u32 {
        RehearsalEnd::Completed
    } else {
        RehearsalEnd::Unfinished
    };
    let lengths: Vec<f64> = trials.iter().map(|t| t.minutes).collect();
    let (least, most) = lengths.iter().fold((f64::MAX, 0.0f64), |(a, b), m| (a.min(*m), b.max(*m)));
    let failures = counts(&|t| t.failures);
    let retries = counts(&|t| t.retries);
    let steps = trials.iter().map(|t| t.steps).sum();
    // The trial of the median length among those that ended as most did tells the events.
    let mut of_end: Vec<usize> = (0..n).filter(|i| trials[*i].end == end).collect();
    of_end.sort_by(|a, b| trials[*a].minutes.partial_cmp(&trials[*b].minutes).unwrap_or(std::cmp::Ordering::Equal));
    let pick = of_end.get(of_end.len() / 2).copied().unwrap_or(0);
    let picked = trials.swap_remove(pick);
    Rehearsal {
        waves,
        end,
        minutes: median(lengths).unwrap_or(picked.minutes),
        failures,
        retries,
        steps,
        trials: n as u32,
        paused_trials: paused,
        least_minutes: least,
        most_minutes: most,
        ..picked
    }
}

/// Each device's connection kinds, from the service's LoRa, HTTP and MQTT binding lists (a
/// binding naming its device in a form other than the id is not matched).
async fn connection_kinds(client: &Client) -> Result<HashMap<Uuid, Vec<&'static str>>> {
    let mut kinds: HashMap<Uuid, Vec<&'static str>> = HashMap::new();
    let filter = BindingFilter::default();
    let b = client.bindings();
    collect(&mut kinds, "lora", b.lora().list(&filter)?, |x| x.device_id.clone()).await?;
    collect(&mut kinds, "http", b.http().list(&filter)?, |x| x.device_id.clone()).await?;
    collect(&mut kinds, "mqtt", b.mqtt().list(&filter)?, |x| x.device_id.clone()).await?;
    Ok(kinds)
}

async fn collect<T>(
    kinds: &mut HashMap<Uuid, Vec<&'static str>>,
    kind: &'static str,
    items: impl Stream<Item = std::result::Result<T, dcs_api::Error>>,
    device: impl Fn(&T) -> String,
) -> Result<()> {
    let mut items = std::pin::pin!(items);
    while let Some(item) = items.next().await {
        if let Ok(id) = Uuid::parse_str(&device(&item?)) {
            let k = kinds.entry(id).or_default();
            if !k.contains(&kind) {
                k.push(kind);
            }
        }
    }
    Ok(())
}

type Copied = (FleetCopy, UpdateModels, Vec<(Option<u32>, u32)>, Vec<(String, u32)>);

/// The copy of the chosen devices the rehearsal's simulator is seeded with, and the model of
/// each device (the first rule that matches it, else [`DEFAULT_MODEL`]).
fn copy_of(
    db: &FleetDb,
    scope: Scope,
    plan: &RolloutPlan,
    module_name: &str,
    candidates: &[Candidate],
    rules: &[ModelRule],
    kinds: &HashMap<Uuid, Vec<&'static str>>,
) -> Result<Copied> {
    let module_id: Uuid =
        plan.module_id.parse().map_err(|_| FleetError::invalid("moduleId", "is not a module's id (a UUID)"))?;
    let conn = db.conn();
    let spec_id: Option<String> = conn
        .query_row("SELECT spec_id FROM modules WHERE scope = ?1 AND module_id = ?2", (scope.0, &plan.module_id), |r| {
            r.get(0)
        })
        .unwrap_or(None);
    let mut versions: Vec<String> = conn
        .prepare("SELECT version FROM packages WHERE scope = ?1 AND module_id = ?2")?
        .query_map((scope.0, &plan.module_id), |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if !versions.contains(&plan.version) {
        versions.push(plan.version.clone());
    }
    let mut updates = UpdateModels::default();
    let mut counts: HashMap<Option<u32>, u32> = HashMap::new();
    let mut per_kind: HashMap<&str, u32> = HashMap::new();
    let devices = candidates
        .iter()
        .map(|(id, current, target, status)| {
            let k = kinds.get(id);
            for kind in k.into_iter().flatten() {
                *per_kind.entry(kind).or_default() += 1;
            }
            let rule = rules.iter().position(|r| r.matches(&plan.module_id, k));
            let model = rule.map_or(&DEFAULT_MODEL, |i| &rules[i]).model();
            updates.by_device.insert(*id, model);
            *counts.entry(rule.map(|i| i as u32)).or_default() += 1;
            CopiedDevice {
                id: *id,
                connection: k.and_then(|k| k.first()).map_or("http", |k| k).to_owned(),
                current: current.clone(),
                target: target.clone(),
                status: status.clone(),
                details: None,
            }
        })
        .collect();
    let copy = FleetCopy {
        module_id,
        module_name: module_name.to_owned(),
        spec_id: spec_id.and_then(|s| s.parse().ok()).unwrap_or_else(Uuid::new_v4),
        versions,
        devices,
    };
    let mut by_model: Vec<(Option<u32>, u32)> = counts.into_iter().collect();
    by_model.sort_by_key(|(r, _)| r.map_or(u32::MAX, |r| r));
    let mut connections: Vec<(String, u32)> = per_kind.into_iter().map(|(k, n)| (k.to_owned(), n)).collect();
    connections.sort();
    Ok((copy, updates, by_model, connections))
}

/// One rehearsal under way.
struct Run<'a> {
    client: &'a Client,
    sim: &'a dcs_sim::Simulator,
    db: &'a FleetDb,
    scope: Scope,
    op: SetTarget,
    step: time::Duration,
    started: time::OffsetDateTime,
    waves: Vec<WaveRehearsal>,
    events: Vec<RehearsalEvent>,
    steps: u32,
}

impl Run<'_> {
    /// Simulated minutes since the start, to the second (the stopped clock creeps by nanoseconds).
    fn minutes(&self) -> f64 {
        (self.sim.now() - self.started).whole_seconds() as f64 / 60.0
    }

    fn note(&mut self, message: String) {
        let minutes = self.minutes();
        self.events.push(RehearsalEvent { minutes, message });
    }

    async fn refresh(&self, cancel: &CancellationToken) -> Result<()> {
        scan::refresh(self.client, self.db, self.scope, ScanKind::Incremental, cancel, |_| {}).await.map(|_| ())
    }

    async fn go(
        &mut self,
        plan: &RolloutPlan,
        candidates: &[Candidate],
        cancel: &CancellationToken,
    ) -> Result<Rehearsal> {
        self.refresh(cancel).await?;
        let id = super::create(self.client, self.db, self.scope, plan, candidates)?;
        // The rehearsal's own database has one driver: this.
        let driver = super::Driver::new(super::DriverKind::Cli).with_lease(std::time::Duration::from_secs(3600));
        let limit = time::Duration::days(MAX_DAYS);
        let (end, reason) = loop {
            if cancel.is_cancelled() {
                return Err(FleetError::Conflict("the rehearsal was stopped".into()));
            }
            let now = self.sim.now();
            if now - self.started > limit {
                break (RehearsalEnd::Unfinished, None);
            }
            let outcome = super::advance_at(self.client, Some(&self.op), self.db, &id, &driver, to_ms(now)).await?;
            self.steps += 1;
            let mut jump = None;
            match outcome {
                StepOutcome::Completed => {
                    self.observe(&id)?;
                    break (RehearsalEnd::Completed, None);
                }
                StepOutcome::Paused { reason } => {
                    self.observe(&id)?;
                    self.note(format!("Paused: {reason}"));
                    break (RehearsalEnd::Paused, Some(reason));
                }
                StepOutcome::Held { hold } if hold.kind == HoldKind::Approval => {
                    self.note(format!("{} (counted as approved at once)", hold.message));
                    super::approve(self.client, self.db, &id)?;
                    continue;
                }
                StepOutcome::Held { hold } => {
                    self.note(hold.message.clone());
                    jump = hold.until.as_deref().and_then(text_to_ms).map(|until| until - to_ms(now));
                }
                StepOutcome::Hanging { warning } => self.note(warning.message),
                StepOutcome::Retrying { scheduled, sent } if sent > 0 => {
                    self.note(format!("{sent} failed devices retried ({scheduled} more failures to retry)"))
                }
                _ => {}
            }
            self.observe(&id)?;
            let by = match jump {
                Some(ms) if ms > 0 => time::Duration::milliseconds(ms),
                _ => self.quiet_jump(now),
            };
            self.sim.advance_clock(by).map_err(|e| FleetError::Internal(format!("the rehearsal's simulator: {e}")))?;
            self.refresh(cancel).await?;
        };
        let view = super::get(self.db, &id)?;
        let failures = view.waves.iter().map(|w| w.failed + w.refused).sum();
        Ok(Rehearsal {
            module_name: String::new(),
            version: plan.version.clone(),
            devices: candidates.len() as u32,
            waves: std::mem::take(&mut self.waves),
            end,
            minutes: self.minutes(),
            pause_reason: reason,
            failures,
            retries: view.waves.iter().map(|w| w.retries).sum(),
            events: std::mem::take(&mut self.events),
            by_model: vec![],
            connections: vec![],
            elapsed_ms: 0,
            steps: self.steps,
            step_seconds: self.step.whole_seconds() as u32,
            trials: 1,
            paused_trials: u32::from(end == RehearsalEnd::Paused),
            least_minutes: self.minutes(),
            most_minutes: self.minutes(),
        })
    }

    /// The next jump of the clock: a step while devices move, up to the next device step due
    /// when none is due sooner (never past [`MAX_JUMP_SECS`]).
    fn quiet_jump(&self, now: time::OffsetDateTime) -> time::Duration {
        let (step, most) = (self.step, self.step.max(time::Duration::seconds(MAX_JUMP_SECS)));
        // A jump over a quiet time stays a whole number of steps: the refreshes keep their beat.
        let steps = |d: time::Duration| step * ((d.as_seconds_f64() / step.as_seconds_f64()).floor().max(1.0) as i32);
        match self.sim.store().next_step_due() {
            Ok(Some(due)) if due - now > step => steps((due - now).min(most)),
            Ok(None) => steps(most),
            _ => step,
        }
    }

    /// Reads the waves' figures and notes when each met its threshold and ended.
    fn observe(&mut self, id: &str) -> Result<()> {
        // The waves alone, as the step reads them (not the whole view with its events).
        let (waves, success) = {
            let conn = self.db.conn();
            let (scope, row) = load_known(&conn, id)?;
            (wave_views(&conn, scope, &row)?, row.success)
        };
        let minutes = self.minutes();
        if self.waves.is_empty() {
            self.waves =
                waves.iter().map(|w| WaveRehearsal { wave: w.index, devices: w.size, ..Default::default() }).collect();
        }
        for (r, w) in self.waves.iter_mut().zip(&waves) {
            if !w.started {
                continue;
            }
            r.start_minutes.get_or_insert(minutes);
            r.succeeded = w.succeeded;
            r.failed = w.failed + w.refused;
            r.retried = w.retried;
            r.retries = w.retries;
            if r.threshold_minutes.is_none() && w.size > 0 && pct(w.succeeded, w.size) >= success {
                r.threshold_minutes = Some(minutes);
            }
            if r.end_minutes.is_none() && w.finished() >= w.size && w.retrying == 0 {
                r.end_minutes = Some(minutes);
            }
        }
        Ok(())
    }
}

/// An RFC 3339 time as milliseconds since the epoch.
fn text_to_ms(text: &str) -> Option<i64> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok().map(to_ms)
}
