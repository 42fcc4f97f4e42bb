//! Rollouts in waves, run by the console: the service only sets a target version per device, so
//! the plan, its waves and thresholds live here, in the fleet database, and a step
//! ([`advance`]) moves each running rollout on after every refresh of the states.
//!
//! The rules (after hawkBit's groups and AWS IoT Jobs' rollout rates and abort criteria):
//!
//! - The devices are shuffled once and cut into waves by cumulative percentages (for example
//!   1, 10, 50, 100): wave `i` holds the devices from `w[i-1]%` to `w[i]%` of the list, at
//!   least one each. Devices that already run the version are left out.
//! - A wave starts by setting every device's target. The next wave starts once the share of the
//!   current wave's devices that **succeeded** reaches the success threshold.
//! - The rollout **pauses** when the share of failed devices among all devices of the started
//!   waves passes the error threshold (0%: at the first failure; a target the service refused
//!   counts as failed), or when a wave ends (every device final) short of the success threshold.
//! - Pausing stops new waves; updates under way go on. Resuming may change the thresholds.
//!   Aborting stops the rollout for good and, if asked, resets the targets of the devices whose
//!   update has not finished (the service then cancels it).
//! - A device whose target was changed by someone else counts as **replaced**: final, not a
//!   success.

use std::collections::{HashMap, HashSet};

use dcs_api::model::{DeviceId, FirmwareState};
use dcs_api::Client;
use futures::{stream, StreamExt};
use rand::seq::SliceRandom;
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::set_target::{self, SetTarget};

use super::query::{self, DeviceQuery, Selection};
use super::{ms_to_text, now_ms, FleetDb, FleetError, Result, Scope};

/// Targets set at the same time when a wave starts.
pub const PARALLEL_SETS: usize = 8;

/// Which devices a rollout is for.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum DeviceChoice {
    /// Every device with a state of the module.
    All,
    /// The device table's rows matching a query (the module is the rollout's), optionally only
    /// those selected.
    Query { query: DeviceQuery, selection: Option<Selection> },
    /// A pasted list of device ids in any of the seven forms, separated by commas, spaces or lines.
    List { text: String },
}

/// A rollout as the operator plans it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RolloutPlan {
    pub module_id: String,
    pub version: String,
    pub devices: DeviceChoice,
    /// Cumulative percentages of the devices, rising, the last 100.
    pub waves: Vec<f64>,
    /// Percent of a wave's devices that must succeed before the next wave starts.
    pub success_threshold: f64,
    /// Percent of failed devices (of the started waves) above which the rollout pauses.
    pub error_threshold: f64,
}

/// One broken rule of a plan.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PlanProblem {
    pub field: String,
    pub rule: String,
}

/// What a plan would do, before it is started.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PlanPreview {
    pub problems: Vec<PlanProblem>,
    pub module_name: String,
    /// Devices the rollout would update.
    pub devices: u32,
    /// Devices of the choice left out because they already run the version.
    pub already_on_version: u32,
    /// Devices of the choice with an update to another version under way (it is replaced).
    pub updating_elsewhere: u32,
    /// Devices per wave.
    pub wave_sizes: Vec<u32>,
    /// What each wave tolerates before the rollout stops going on (same rules as [`advance`]).
    pub wave_budgets: Vec<WaveBudget>,
    /// The target is older than what some of the devices to update run.
    pub downgrade: Option<Downgrade>,
    /// The current versions of the chosen devices (those that report one), with how many run
    /// each, most first: what the app compares the target with to call it a downgrade (the
    /// order of versions is the app's, not the service's, which states none).
    pub running: Vec<RunningVersion>,
}

/// A current version and how many of the chosen devices run it.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RunningVersion {
    pub version: String,
    pub devices: u32,
}

/// What one wave of a plan tolerates, by the rules of [`advance`].
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct WaveBudget {
    pub size: u32,
    /// Devices that must succeed before the next wave starts (the last: before it completes).
    pub needed: u32,
    /// Devices that may fail (or be cancelled or refused) and the wave still goes on:
    /// `size - needed`.
    pub tolerates: u32,
    /// Devices of the waves up to this one.
    pub started_devices: u32,
    /// Failures among those the error threshold allows before the rollout pauses.
    pub failures_before_pause: u32,
}

/// The smallest number of a wave's `size` devices that meets the success threshold (in the
/// comparison [`advance`] makes).
pub fn needed(size: u32, success_threshold: f64) -> u32 {
    let meets = |k: u32| pct(k, size) >= success_threshold;
    let mut k = ((size as f64 * success_threshold / 100.0).ceil().max(0.0) as u32).min(size);
    while k > 0 && meets(k - 1) {
        k -= 1;
    }
    while k < size && !meets(k) {
        k += 1;
    }
    k
}

/// How many failures among `devices` the error threshold allows before the rollout pauses (in
/// the comparison [`advance`] makes: it pauses when the failed share passes the threshold).
pub fn failures_before_pause(devices: u32, error_threshold: f64) -> u32 {
    let pauses = |k: u32| k > 0 && pct(k, devices) > error_threshold;
    let mut k = ((devices as f64 * error_threshold / 100.0).floor().max(0.0) as u32).min(devices);
    while pauses(k) {
        k -= 1;
    }
    while k < devices && !pauses(k + 1) {
        k += 1;
    }
    k
}

/// The budget of each wave of `sizes`.
pub fn wave_budgets(sizes: &[u32], success_threshold: f64, error_threshold: f64) -> Vec<WaveBudget> {
    let mut started = 0;
    sizes
        .iter()
        .map(|&size| {
            started += size;
            let needed = needed(size, success_threshold);
            WaveBudget {
                size,
                needed,
                tolerates: size - needed,
                started_devices: started,
                failures_before_pause: failures_before_pause(started, error_threshold),
            }
        })
        .collect()
}

/// A target older than what some devices run: the newest version they run, how many run it,
/// and how many run any version newer than the target.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Downgrade {
    pub newest: String,
    pub newest_devices: u32,
    pub devices: u32,
}

/// The order of firmware versions (the service states none), the same as the app's
/// `ui/src/lib/version.ts` (both are checked against `version_order.json`): parts split at `.`
/// and `-`; two numeric parts compare as numbers, others as text; a version that is another
/// plus more parts is newer, unless the next part starts a pre-release (`1.2.0-rc1 < 1.2.0`).
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    fn parts(v: &str) -> Vec<(&str, bool)> {
        let mut out = Vec::new();
        let mut pre = false;
        let mut start = 0;
        let v = v.trim();
        for (i, c) in v.char_indices() {
            if c == '.' || c == '-' {
                out.push((&v[start..i], pre));
                pre = c == '-';
                start = i + 1;
            }
        }
        out.push((&v[start..], pre));
        out
    }
    fn digits(a: &str, b: &str) -> std::cmp::Ordering {
        let (x, y) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
        x.len().cmp(&y.len()).then_with(|| x.cmp(y))
    }
    let is_num = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let (pa, pb) = (parts(a), parts(b));
    for i in 0..pa.len().max(pb.len()) {
        match (pa.get(i), pb.get(i)) {
            (None, Some(y)) => return if y.1 { Greater } else { Less },
            (Some(x), None) => return if x.1 { Less } else { Greater },
            (Some(x), Some(y)) => {
                if x.1 != y.1 {
                    return if x.1 { Less } else { Greater };
                }
                let c = if is_num(x.0) && is_num(y.0) { digits(x.0, y.0) } else { x.0.cmp(y.0) };
                if c != Equal {
                    return c;
                }
            }
            (None, None) => break,
        }
    }
    Equal
}

/// Whether `target` is older than what some of `running` run.
pub fn downgrade_of(target: &str, running: &[RunningVersion]) -> Option<Downgrade> {
    let mut out: Option<Downgrade> = None;
    for r in running.iter().filter(|r| r.devices > 0 && compare_versions(&r.version, target).is_gt()) {
        match &mut out {
            None => out = Some(Downgrade { newest: r.version.clone(), newest_devices: r.devices, devices: r.devices }),
            Some(d) => {
                d.devices += r.devices;
                match compare_versions(&r.version, &d.newest) {
                    std::cmp::Ordering::Greater => {
                        d.newest = r.version.clone();
                        d.newest_devices = r.devices;
                    }
                    std::cmp::Ordering::Equal => d.newest_devices += r.devices,
                    std::cmp::Ordering::Less => {}
                }
            }
        }
    }
    out
}

/// The current versions of `candidates`, most devices first (ties by version text).
fn running_versions(candidates: &[Candidate]) -> Vec<RunningVersion> {
    let mut counts: HashMap<&str, u32> = HashMap::new();
    for (_, current, _, _) in candidates {
        if let Some(v) = current.as_deref() {
            *counts.entry(v).or_default() += 1;
        }
    }
    let mut out: Vec<RunningVersion> =
        counts.into_iter().map(|(version, devices)| RunningVersion { version: version.to_owned(), devices }).collect();
    out.sort_by(|a, b| b.devices.cmp(&a.devices).then_with(|| a.version.cmp(&b.version)));
    out
}

/// Checks the parts of a plan that need no devices.
pub fn check_shape(db: &FleetDb, scope: Scope, plan: &RolloutPlan) -> Vec<PlanProblem> {
    let mut problems: Vec<PlanProblem> = Vec::new();
    fn push(problems: &mut Vec<PlanProblem>, field: &str, rule: String) {
        problems.push(PlanProblem { field: field.into(), rule });
    }
    if let Err(rule) = dcs_api::model::validate::firmware_version(&plan.version) {
        push(&mut problems, "version", rule.to_string());
    } else {
        match query::packages(db, scope, &plan.module_id) {
            Ok(pkgs) => match pkgs.iter().find(|p| p.version == plan.version) {
                None => push(
                    &mut problems,
                    "version",
                    format!("the module has no package with version {} (scan again after creating it)", plan.version),
                ),
                Some(p) if !p.has_file => push(
                    &mut problems,
                    "version",
                    format!("package {} has no firmware file uploaded yet", plan.version),
                ),
                Some(_) => {}
            },
            Err(e) => push(&mut problems, "version", e.to_string()),
        }
    }
    if plan.waves.is_empty() {
        push(&mut problems, "waves", "give at least one wave (for example 1, 10, 50, 100)".into());
    } else if plan.waves.len() > 20 {
        push(&mut problems, "waves", "at most 20 waves".into());
    } else {
        let mut last = 0.0;
        for (i, w) in plan.waves.iter().enumerate() {
            if !w.is_finite() || *w <= last || *w > 100.0 {
                push(
                    &mut problems,
                    "waves",
                    format!("wave {}: {w}% must be above the wave before ({last}%) and at most 100%", i + 1),
                );
                break;
            }
            last = *w;
        }
        if last != 100.0 && problems.iter().all(|p| p.field != "waves") {
            push(&mut problems, "waves", format!("the last wave must reach 100% (it reaches {last}%)"));
        }
    }
    for (field, v) in [("successThreshold", plan.success_threshold), ("errorThreshold", plan.error_threshold)] {
        if !v.is_finite() || !(0.0..=100.0).contains(&v) {
            push(&mut problems, field, format!("must be a percentage from 0 to 100, got {v}"));
        }
    }
    if plan.success_threshold == 0.0 && problems.iter().all(|p| p.field != "successThreshold") {
        push(
            &mut problems,
            "successThreshold",
            "must be above 0%: a wave must succeed somewhat before the next starts".into(),
        );
    }
    problems
}

/// The devices a choice names that have a state of the module: (device, current, target, status).
type Candidate = (Uuid, Option<String>, Option<String>, Option<String>);

/// Resolves the choice to devices of the module, or the rule each broken part breaks.
pub async fn resolve(
    client: &Client,
    db: &FleetDb,
    scope: Scope,
    plan: &RolloutPlan,
) -> Result<std::result::Result<Vec<Candidate>, Vec<PlanProblem>>> {
    let module = &plan.module_id;
    let known: HashMap<Uuid, Candidate> = {
        let conn = db.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT device_id, current, target, status FROM states WHERE scope = ?1 AND module_id = ?2",
        )?;
        let rows = stmt.query_map(params![scope.0, module], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })?;
        let mut map = HashMap::new();
        for row in rows {
            let (d, c, t, s) = row?;
            if let Ok(id) = d.parse::<Uuid>() {
                map.insert(id, (id, c, t, s));
            }
        }
        map
    };
    if known.is_empty() {
        return Ok(Err(vec![PlanProblem {
            field: "moduleId".into(),
            rule: "no device states of this module are known; scan first".into(),
        }]));
    }
    let ids: Vec<Uuid> = match &plan.devices {
        DeviceChoice::All => known.keys().copied().collect(),
        DeviceChoice::Query { query, selection } => {
            let mut q = query.clone();
            q.module_id = Some(module.clone());
            let device = match q.device.as_deref().filter(|d| !d.trim().is_empty()) {
                Some(raw) => Some(query::resolve_device(client, raw).await?),
                None => None,
            };
            let sel = selection.clone().unwrap_or(Selection { all: true, keys: Vec::new() });
            query::selected(db, scope, &q, device.as_ref(), &sel)?
                .iter()
                .filter_map(|r| r.device_id.parse().ok())
                .collect()
        }
        DeviceChoice::List { text } => {
            let mut problems = Vec::new();
            let entries: Vec<&str> =
                text.split(|c: char| c.is_whitespace() || c == ',' || c == ';').filter(|s| !s.is_empty()).collect();
            if entries.is_empty() {
                return Ok(Err(vec![PlanProblem {
                    field: "devices".into(),
                    rule: "paste at least one device id".into(),
                }]));
            }
            let mut parsed = Vec::new();
            for (i, e) in entries.iter().enumerate() {
                match DeviceId::parse(e) {
                    Ok(id) => parsed.push((i, e.to_string(), id)),
                    Err(err) => problems.push((i, format!("#{} `{e}`: {err}", i + 1))),
                }
            }
            let jobs: Vec<_> = parsed
                .into_iter()
                .map(|(i, raw, id)| {
                    let client = client.clone();
                    async move {
                        let found = match id.as_uuid() {
                            Some(u) => Ok(Some(u)),
                            None => {
                                let filter = dcs_api::firmware::StateFilter {
                                    device_id: Some(raw.clone()),
                                    module_id: None,
                                    limit: Some(1),
                                    ..Default::default()
                                };
                                client
                                    .firmware()
                                    .states_page(&filter)
                                    .await
                                    .map(|(p, _)| p.items.first().map(|s| s.device_id))
                            }
                        };
                        (i, raw, found)
                    }
                })
                .collect();
            let lookups = stream::iter(jobs).buffer_unordered(PARALLEL_SETS).collect::<Vec<_>>().await;
            let mut ids = Vec::new();
            let mut sorted = lookups;
            sorted.sort_by_key(|(i, _, _)| *i);
            for (i, raw, found) in sorted {
                match found {
                    Ok(Some(u)) if known.contains_key(&u) => ids.push(u),
                    Ok(Some(u)) => {
                        problems.push((i, format!("#{} `{raw}`: device {u} has no state of this module", i + 1)))
                    }
                    Ok(None) => problems.push((i, format!("#{} `{raw}`: the service knows no such device", i + 1))),
                    Err(e) => problems.push((i, format!("#{} `{raw}`: {e}", i + 1))),
                }
            }
            if !problems.is_empty() {
                problems.sort_by_key(|(i, _)| *i);
                let n = problems.len();
                let mut rule = problems.into_iter().take(10).map(|(_, m)| m).collect::<Vec<_>>().join("; ");
                if n > 10 {
                    rule.push_str(&format!("; and {} more", n - 10));
                }
                return Ok(Err(vec![PlanProblem { field: "devices".into(), rule }]));
            }
            ids
        }
    };
    let mut seen = HashSet::new();
    let out: Vec<Candidate> =
        ids.into_iter().filter(|id| seen.insert(*id)).filter_map(|id| known.get(&id).cloned()).collect();
    if out.is_empty() {
        return Ok(Err(vec![PlanProblem {
            field: "devices".into(),
            rule: "the choice holds no device of this module".into(),
        }]));
    }
    Ok(Ok(out))
}

/// Cuts `n` devices into waves at the cumulative percentages `waves` (each at least one device
/// while devices remain).
pub fn wave_sizes(n: usize, waves: &[f64]) -> Vec<u32> {
    let mut sizes = Vec::with_capacity(waves.len());
    let mut taken = 0usize;
    for (i, w) in waves.iter().enumerate() {
        let end = if i + 1 == waves.len() { n } else { ((w / 100.0) * n as f64).ceil() as usize };
        let end = end.max(taken + 1).min(n);
        sizes.push((end - taken) as u32);
        taken = end;
    }
    sizes
}

/// The preview of a plan: its problems, or how many devices each wave would update.
pub async fn preview(
    client: &Client,
    db: &FleetDb,
    scope: Scope,
    plan: &RolloutPlan,
) -> Result<(PlanPreview, Vec<Candidate>)> {
    let module_name = module_name(db, scope, &plan.module_id)?;
    let mut p = PlanPreview {
        problems: check_shape(db, scope, plan),
        module_name,
        devices: 0,
        already_on_version: 0,
        updating_elsewhere: 0,
        wave_sizes: vec![],
        wave_budgets: vec![],
        downgrade: None,
        running: vec![],
    };
    let candidates = match resolve(client, db, scope, plan).await? {
        Ok(c) => c,
        Err(problems) => {
            p.problems.extend(problems);
            return Ok((p, Vec::new()));
        }
    };
    p.running = running_versions(&candidates);
    p.downgrade = downgrade_of(&plan.version, &p.running);
    let (on, rest): (Vec<Candidate>, Vec<Candidate>) =
        candidates.into_iter().partition(|(_, current, _, _)| current.as_deref() == Some(plan.version.as_str()));
    p.already_on_version = on.len() as u32;
    p.updating_elsewhere = rest
        .iter()
        .filter(|(_, _, target, status)| {
            target.as_deref().is_some_and(|t| t != plan.version)
                && status.as_deref().is_some_and(|s| !query::FINAL_STATUSES.contains(&s))
        })
        .count() as u32;
    p.devices = rest.len() as u32;
    if rest.is_empty() && p.problems.is_empty() {
        p.problems.push(PlanProblem {
            field: "devices".into(),
            rule: format!("every chosen device already runs {}", plan.version),
        });
    }
    if p.problems.iter().all(|x| x.field != "waves") {
        p.wave_sizes = wave_sizes(rest.len(), &plan.waves);
        p.wave_budgets = wave_budgets(&p.wave_sizes, plan.success_threshold, plan.error_threshold);
    }
    Ok((p, rest))
}

fn module_name(db: &FleetDb, scope: Scope, module_id: &str) -> Result<String> {
    let conn = db.conn();
    Ok(conn
        .query_row("SELECT name FROM modules WHERE scope = ?1 AND module_id = ?2", params![scope.0, module_id], |r| {
            r.get(0)
        })
        .optional()?
        .unwrap_or_else(|| module_id.to_owned()))
}

/// Where a rollout stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum RolloutState {
    Running,
    Paused,
    Completed,
    Aborted,
}

impl RolloutState {
    fn as_str(self) -> &'static str {
        match self {
            RolloutState::Running => "running",
            RolloutState::Paused => "paused",
            RolloutState::Completed => "completed",
            RolloutState::Aborted => "aborted",
        }
    }
    fn parse(s: &str) -> RolloutState {
        match s {
            "running" => RolloutState::Running,
            "paused" => RolloutState::Paused,
            "completed" => RolloutState::Completed,
            _ => RolloutState::Aborted,
        }
    }
}

/// Saves a previewed plan as a running rollout (no target is set yet: [`advance`] starts the
/// first wave). Answers its id.
pub fn create(db: &FleetDb, scope: Scope, plan: &RolloutPlan, devices: &[Candidate]) -> Result<String> {
    let id = Uuid::new_v4().to_string();
    let mut order: Vec<&Candidate> = devices.iter().collect();
    order.shuffle(&mut rand::thread_rng());
    let sizes = wave_sizes(order.len(), &plan.waves);
    let now = now_ms();
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT INTO rollouts (id, scope, module_id, version, waves, success_threshold, error_threshold, selection, state,
                               current_wave, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running', -1, ?9, ?9)",
        params![
            id,
            scope.0,
            plan.module_id,
            plan.version,
            serde_json::to_string(&plan.waves).expect("numbers serialise"),
            plan.success_threshold,
            plan.error_threshold,
            serde_json::to_string(&plan.devices).expect("choice serialises"),
            now
        ],
    )?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO rollout_devices (rollout, device_id, wave, previous_target) VALUES (?1, ?2, ?3, ?4)",
        )?;
        let mut it = order.iter();
        for (wave, size) in sizes.iter().enumerate() {
            for (device, _, target, _) in it.by_ref().take(*size as usize) {
                insert.execute(params![id, device.to_string(), wave as i64, target])?;
            }
        }
    }
    event(
        &tx,
        &id,
        now,
        &format!(
            "Planned: {} devices in {} waves ({}) to {}",
            order.len(),
            sizes.len(),
            waves_text(&plan.waves),
            plan.version
        ),
    )?;
    tx.commit()?;
    Ok(id)
}

fn waves_text(waves: &[f64]) -> String {
    waves.iter().map(|w| format!("{w}%")).collect::<Vec<_>>().join(", ")
}

fn event(conn: &rusqlite::Connection, rollout: &str, at: i64, message: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO rollout_events (rollout, at, message) VALUES (?1, ?2, ?3)",
        params![rollout, at, message],
    )?;
    Ok(())
}

/// One wave's devices by outcome.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct WaveView {
    pub index: u32,
    /// The cumulative percentage it ends at.
    pub percent: f64,
    pub size: u32,
    pub started: bool,
    /// Targets set (accepted by the service).
    pub set: u32,
    pub succeeded: u32,
    pub failed: u32,
    /// Cancelled by the service, or the target changed by someone else.
    pub replaced: u32,
    pub updating: u32,
    /// Targets the service refused.
    pub refused: u32,
    /// Devices that must succeed before the next wave starts (the last wave: before the
    /// rollout completes), at the rollout's success threshold now.
    pub needed: u32,
}

impl WaveView {
    fn finished(&self) -> u32 {
        self.succeeded + self.failed + self.replaced + self.refused
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RolloutEvent {
    pub at: String,
    pub message: String,
}

/// A rollout as the dashboard shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RolloutView {
    pub id: String,
    pub module_id: String,
    pub module_name: String,
    pub version: String,
    pub state: RolloutState,
    /// Why it paused, completed or was aborted.
    pub reason: Option<String>,
    /// The wave under way (0-based); -1 before the first starts.
    pub current_wave: i32,
    pub success_threshold: f64,
    pub error_threshold: f64,
    pub devices: DeviceChoice,
    pub waves: Vec<WaveView>,
    pub total: WaveView,
    /// Failures among the devices of the started waves, and how many the error threshold
    /// allows before the rollout pauses.
    pub error_budget: ErrorBudget,
    pub created_at: String,
    pub updated_at: String,
    /// Newest first, at most 100.
    pub events: Vec<RolloutEvent>,
}

/// The error threshold over the started waves, as [`advance`] checks it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ErrorBudget {
    /// Devices of the started waves.
    pub devices: u32,
    /// Of those, failed or refused.
    pub failed: u32,
    /// Failures the threshold allows before it pauses.
    pub tolerated: u32,
}

struct Row {
    id: String,
    module_id: String,
    version: String,
    waves: Vec<f64>,
    success: f64,
    error: f64,
    devices: DeviceChoice,
    state: RolloutState,
    reason: Option<String>,
    current: i32,
    created: i64,
    updated: i64,
}

fn load(conn: &rusqlite::Connection, id: &str) -> Result<Option<(Scope, Row)>> {
    Ok(conn
        .query_row(
            "SELECT scope, id, module_id, version, waves, success_threshold, error_threshold, selection, state, reason,
                    current_wave, created_at, updated_at FROM rollouts WHERE id = ?1",
            [id],
            |r| {
                Ok((
                    Scope(r.get(0)?),
                    Row {
                        id: r.get(1)?,
                        module_id: r.get(2)?,
                        version: r.get(3)?,
                        waves: serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or_default(),
                        success: r.get(5)?,
                        error: r.get(6)?,
                        devices: serde_json::from_str(&r.get::<_, String>(7)?).unwrap_or(DeviceChoice::All),
                        state: RolloutState::parse(&r.get::<_, String>(8)?),
                        reason: r.get(9)?,
                        current: r.get(10)?,
                        created: r.get(11)?,
                        updated: r.get(12)?,
                    },
                ))
            },
        )
        .optional()?)
}

fn wave_views(conn: &rusqlite::Connection, scope: Scope, row: &Row) -> Result<Vec<WaveView>> {
    let mut stmt = conn.prepare_cached(
        "SELECT d.wave, count(*),
                sum(d.set_at IS NOT NULL),
                sum(d.error IS NOT NULL),
                sum(d.set_at IS NOT NULL AND s.target IS ?4 AND s.status = 'SUCCEEDED'),
                sum(d.set_at IS NOT NULL AND s.target IS ?4 AND s.status = 'FAILED'),
                sum(d.set_at IS NOT NULL AND (s.target IS NOT ?4 OR s.status = 'CANCELLED'))
         FROM rollout_devices d
         LEFT JOIN states s ON s.scope = ?2 AND s.module_id = ?3 AND s.device_id = d.device_id
         WHERE d.rollout = ?1 GROUP BY d.wave ORDER BY d.wave",
    )?;
    let mut waves: Vec<WaveView> = row
        .waves
        .iter()
        .enumerate()
        .map(|(i, p)| WaveView {
            index: i as u32,
            percent: *p,
            started: (i as i32) <= row.current,
            ..Default::default()
        })
        .collect();
    let rows = stmt.query_map(params![row.id, scope.0, row.module_id, row.version], |r| {
        Ok((r.get::<_, i64>(0)?, [r.get::<_, i64>(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?]))
    })?;
    for r in rows {
        let (wave, [size, set, refused, ok, failed, replaced]) = r?;
        if let Some(w) = waves.get_mut(wave as usize) {
            w.size = size as u32;
            w.set = set as u32;
            w.refused = refused as u32;
            w.succeeded = ok as u32;
            w.failed = failed as u32;
            w.replaced = replaced as u32;
            w.updating = (set - ok - failed - replaced).max(0) as u32;
            w.needed = needed(w.size, row.success);
        }
    }
    Ok(waves)
}

fn total(waves: &[WaveView]) -> WaveView {
    let mut t = WaveView { index: 0, percent: 100.0, started: waves.iter().any(|w| w.started), ..Default::default() };
    for w in waves {
        t.size += w.size;
        t.set += w.set;
        t.succeeded += w.succeeded;
        t.failed += w.failed;
        t.replaced += w.replaced;
        t.updating += w.updating;
        t.refused += w.refused;
    }
    t
}

fn view_of(conn: &rusqlite::Connection, scope: Scope, row: Row) -> Result<RolloutView> {
    let waves = wave_views(conn, scope, &row)?;
    let mut stmt = conn.prepare_cached(
        "SELECT at, message FROM rollout_events WHERE rollout = ?1 ORDER BY at DESC, rowid DESC LIMIT 100",
    )?;
    let events = stmt
        .query_map([&row.id], |r| Ok(RolloutEvent { at: ms_to_text(r.get(0)?), message: r.get(1)? }))?
        .collect::<rusqlite::Result<_>>()?;
    let module_name = conn
        .query_row(
            "SELECT name FROM modules WHERE scope = ?1 AND module_id = ?2",
            params![scope.0, row.module_id],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or_else(|| row.module_id.clone());
    let started: Vec<&WaveView> = waves.iter().filter(|w| w.started).collect();
    let devices = started.iter().map(|w| w.size).sum();
    let error_budget = ErrorBudget {
        devices,
        failed: started.iter().map(|w| w.failed + w.refused).sum(),
        tolerated: failures_before_pause(devices, row.error),
    };
    Ok(RolloutView {
        total: total(&waves),
        error_budget,
        waves,
        id: row.id,
        module_id: row.module_id,
        module_name,
        version: row.version,
        state: row.state,
        reason: row.reason,
        current_wave: row.current,
        success_threshold: row.success,
        error_threshold: row.error,
        devices: row.devices,
        created_at: ms_to_text(row.created),
        updated_at: ms_to_text(row.updated),
        events,
    })
}

/// One rollout.
pub fn get(db: &FleetDb, id: &str) -> Result<RolloutView> {
    let conn = db.conn();
    let (scope, row) = load(&conn, id)?.ok_or_else(|| FleetError::invalid("rolloutId", format!("no rollout {id}")))?;
    view_of(&conn, scope, row)
}

/// The rollouts of a scope, newest first.
pub fn list(db: &FleetDb, scope: Scope) -> Result<Vec<RolloutView>> {
    let ids: Vec<String> = {
        let conn = db.conn();
        let mut stmt = conn.prepare_cached("SELECT id FROM rollouts WHERE scope = ?1 ORDER BY created_at DESC")?;
        let rows = stmt.query_map([scope.0], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    ids.iter().map(|id| get(db, id)).collect()
}

/// Scopes with a running rollout (to go on with them after a restart).
pub fn running_scopes(db: &FleetDb) -> Result<Vec<Scope>> {
    let conn = db.conn();
    let mut stmt = conn.prepare_cached("SELECT DISTINCT scope FROM rollouts WHERE state = 'running'")?;
    let rows = stmt.query_map([], |r| Ok(Scope(r.get(0)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn set_state(
    conn: &rusqlite::Connection,
    id: &str,
    state: RolloutState,
    reason: Option<&str>,
    message: &str,
) -> Result<()> {
    let now = now_ms();
    conn.execute(
        "UPDATE rollouts SET state = ?2, reason = ?3, updated_at = ?4 WHERE id = ?1",
        params![id, state.as_str(), reason, now],
    )?;
    event(conn, id, now, message)
}

/// Pauses a running rollout by hand.
pub fn pause(db: &FleetDb, id: &str) -> Result<RolloutView> {
    {
        let conn = db.conn();
        let (_, row) = load(&conn, id)?.ok_or_else(|| FleetError::invalid("rolloutId", format!("no rollout {id}")))?;
        if row.state != RolloutState::Running {
            return Err(FleetError::Conflict(format!("the rollout is {}, not running", row.state.as_str())));
        }
        set_state(&conn, id, RolloutState::Paused, Some("paused by the operator"), "Paused by the operator")?;
    }
    get(db, id)
}

/// Resumes a paused rollout, with new thresholds if given (the step then decides at once
/// whether it must pause again).
pub fn resume(
    db: &FleetDb,
    id: &str,
    success_threshold: Option<f64>,
    error_threshold: Option<f64>,
) -> Result<RolloutView> {
    {
        let conn = db.conn();
        let (_, row) = load(&conn, id)?.ok_or_else(|| FleetError::invalid("rolloutId", format!("no rollout {id}")))?;
        if row.state != RolloutState::Paused {
            return Err(FleetError::Conflict(format!("the rollout is {}, not paused", row.state.as_str())));
        }
        for (field, v) in [("successThreshold", success_threshold), ("errorThreshold", error_threshold)] {
            if let Some(v) = v {
                if !v.is_finite() || !(0.0..=100.0).contains(&v) || (field == "successThreshold" && v == 0.0) {
                    return Err(FleetError::invalid(
                        field,
                        format!("must be a percentage above 0 and at most 100, got {v}"),
                    ));
                }
            }
        }
        let success = success_threshold.unwrap_or(row.success);
        let error = error_threshold.unwrap_or(row.error);
        conn.execute(
            "UPDATE rollouts SET success_threshold = ?2, error_threshold = ?3 WHERE id = ?1",
            params![id, success, error],
        )?;
        let changed = if success != row.success || error != row.error {
            format!(" with thresholds success {success}%, error {error}%")
        } else {
            String::new()
        };
        set_state(&conn, id, RolloutState::Running, None, &format!("Resumed by the operator{changed}"))?;
    }
    get(db, id)
}

/// Devices whose update under this rollout has not finished (targets set, still on the way).
pub fn unfinished(db: &FleetDb, id: &str) -> Result<Vec<Uuid>> {
    let conn = db.conn();
    let (scope, row) = load(&conn, id)?.ok_or_else(|| FleetError::invalid("rolloutId", format!("no rollout {id}")))?;
    let mut stmt = conn.prepare_cached(
        "SELECT d.device_id FROM rollout_devices d
         LEFT JOIN states s ON s.scope = ?2 AND s.module_id = ?3 AND s.device_id = d.device_id
         WHERE d.rollout = ?1 AND d.set_at IS NOT NULL AND s.target IS ?4
           AND (s.status IS NULL OR s.status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED'))",
    )?;
    let rows = stmt.query_map(params![id, scope.0, row.module_id, row.version], |r| r.get::<_, String>(0))?;
    Ok(rows.filter_map(|r| r.ok()?.parse().ok()).collect())
}

/// Aborts a rollout for good; with `reset_unfinished`, resets the target of every device whose
/// update has not finished (the service cancels those updates). Answers the view and the
/// number of targets reset.
///
/// Resetting needs the profile's set-target operation (`op`); without one nothing changes.
pub async fn abort(
    client: &Client,
    op: Option<&SetTarget>,
    db: &FleetDb,
    id: &str,
    reset_unfinished: bool,
) -> Result<(RolloutView, u32)> {
    let op = match (op, reset_unfinished) {
        (None, true) => return Err(FleetError::invalid("resetUnfinished", NO_OPERATION)),
        (op, _) => op,
    };
    let (scope, module_id) = {
        let conn = db.conn();
        let (scope, row) =
            load(&conn, id)?.ok_or_else(|| FleetError::invalid("rolloutId", format!("no rollout {id}")))?;
        if matches!(row.state, RolloutState::Completed | RolloutState::Aborted) {
            return Err(FleetError::Conflict(format!("the rollout is already {}", row.state.as_str())));
        }
        // Stop first, so no step starts a wave while the targets are reset.
        set_state(&conn, id, RolloutState::Aborted, Some("aborted by the operator"), "Aborted by the operator")?;
        (scope, row.module_id)
    };
    let mut reset = 0u32;
    if reset_unfinished {
        let devices = unfinished(db, id)?;
        let module: Uuid = module_id.parse().map_err(|_| FleetError::invalid("moduleId", "is not a UUID"))?;
        let op = op.expect("checked above");
        let results = set_targets(client, op, &devices, module, None, None).await;
        let mut failures = Vec::new();
        for (device, result) in results {
            match result {
                Ok(state) => {
                    if let Some(state) = state {
                        super::scan::write_page(db, scope, std::slice::from_ref(&state))?;
                    }
                    reset += 1;
                }
                Err(e) => failures.push(format!("{device}: {e}")),
            }
        }
        let conn = db.conn();
        let mut message = format!("Reset the targets of {reset} devices whose update had not finished");
        if !failures.is_empty() {
            message.push_str(&format!(
                "; {} could not be reset ({})",
                failures.len(),
                failures.into_iter().take(3).collect::<Vec<_>>().join("; ")
            ));
        }
        event(&conn, id, now_ms(), &message)?;
    }
    Ok((get(db, id)?, reset))
}

/// Why a rollout cannot set targets: the profile has no set-target operation.
pub const NO_OPERATION: &str = "the profile has no set-target operation, so targets cannot be set or reset; \
     the service's API documentation does not describe one. Add the operation your service documents to the profile \
     (in the app: Settings > the profile > \"Set-target operation\"; in dcs: `dcs profile edit NAME \
     --set-target-method ... --set-target-path ... --set-target-body ...`)";

/// Sets (or resets, `version` `None`) the target of each device with the profile's operation.
/// An answer that reads as the device's new state is kept (`Some`); another service may answer
/// something else, or nothing, and the next refresh reads the state.
async fn set_targets(
    client: &Client,
    op: &SetTarget,
    devices: &[Uuid],
    module: Uuid,
    version: Option<&str>,
    package: Option<Uuid>,
) -> Vec<(Uuid, std::result::Result<Option<FirmwareState>, dcs_api::Error>)> {
    let version = version.map(str::to_owned);
    let jobs: Vec<_> = devices
        .iter()
        .map(|&d| {
            let (client, version, op) = (client.clone(), version.clone(), op.clone());
            async move {
                let result = set_target::send(&client, &op, &DeviceId::Uuid(d), module, version.as_deref(), package)
                    .await
                    .map(|answer| answer.state().filter(|s| s.device_id == d && s.module_id == module));
                (d, result)
            }
        })
        .collect();
    stream::iter(jobs).buffer_unordered(PARALLEL_SETS).collect().await
}

/// What one step did to a rollout.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum StepOutcome {
    /// Nothing to do yet.
    Waiting,
    /// A wave started (its index) with this many targets set and refused.
    WaveStarted {
        wave: u32,
        set: u32,
        refused: u32,
    },
    Paused {
        reason: String,
    },
    Completed,
}

/// Moves one running rollout on, from the states the database holds now (refresh first). A
/// wave's targets are set with the profile's set-target operation `op`; without one the
/// rollout pauses, saying why, instead of starting a wave.
pub async fn advance(client: &Client, op: Option<&SetTarget>, db: &FleetDb, id: &str) -> Result<StepOutcome> {
    let (scope, row, waves) = {
        let conn = db.conn();
        let (scope, row) =
            load(&conn, id)?.ok_or_else(|| FleetError::invalid("rolloutId", format!("no rollout {id}")))?;
        if row.state != RolloutState::Running {
            return Ok(StepOutcome::Waiting);
        }
        let waves = wave_views(&conn, scope, &row)?;
        (scope, row, waves)
    };
    let pause = |reason: String| -> Result<StepOutcome> {
        let conn = db.conn();
        set_state(&conn, id, RolloutState::Paused, Some(&reason), &format!("Paused: {reason}"))?;
        Ok(StepOutcome::Paused { reason })
    };
    if row.current >= 0 {
        let started = &waves[..=(row.current as usize).min(waves.len() - 1)];
        let size: u32 = started.iter().map(|w| w.size).sum();
        let failed: u32 = started.iter().map(|w| w.failed + w.refused).sum();
        if failed > 0 && size > 0 && pct(failed, size) > row.error {
            return pause(format!(
                "error threshold passed: {failed} of {size} devices of the started waves failed ({:.1}% > {}%)",
                pct(failed, size),
                row.error
            ));
        }
        let wave = &waves[row.current as usize];
        let success = pct(wave.succeeded, wave.size);
        let last = row.current as usize + 1 == waves.len();
        if success < row.success {
            if wave.finished() >= wave.size {
                return pause(format!(
                    "wave {} ended with {} of {} devices updated ({:.1}%), below the {}% success threshold",
                    row.current + 1,
                    wave.succeeded,
                    wave.size,
                    success,
                    row.success
                ));
            }
            return Ok(StepOutcome::Waiting);
        }
        if last {
            let t = total(&waves);
            if t.finished() >= t.size {
                let conn = db.conn();
                let reason = format!(
                    "{} of {} devices updated to {}, {} failed, {} replaced or cancelled, {} refused",
                    t.succeeded, t.size, row.version, t.failed, t.replaced, t.refused
                );
                set_state(&conn, id, RolloutState::Completed, Some(&reason), &format!("Completed: {reason}"))?;
                return Ok(StepOutcome::Completed);
            }
            return Ok(StepOutcome::Waiting);
        }
    }
    // Start the next wave.
    let Some(op) = op else {
        return pause(NO_OPERATION.to_owned());
    };
    let module: Uuid = row.module_id.parse().map_err(|_| FleetError::invalid("moduleId", "is not a UUID"))?;
    let package = if op.uses_package() {
        match set_target::package_of(client, module, &row.version).await? {
            Some(p) => Some(p),
            None => {
                return pause(format!(
                    "the service lists no package {} of the module, whose id the set-target operation needs",
                    row.version
                ))
            }
        }
    } else {
        None
    };
    let next = (row.current + 1) as u32;
    let devices: Vec<Uuid> = {
        let conn = db.conn();
        conn.execute(
            "UPDATE rollouts SET current_wave = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, next, now_ms()],
        )?;
        let mut stmt = conn.prepare_cached("SELECT device_id FROM rollout_devices WHERE rollout = ?1 AND wave = ?2 AND set_at IS NULL AND error IS NULL")?;
        let rows = stmt.query_map(params![id, next], |r| r.get::<_, String>(0))?;
        rows.filter_map(|r| r.ok()?.parse().ok()).collect()
    };
    let results = set_targets(client, op, &devices, module, Some(&row.version), package).await;
    let (mut set, mut refused) = (0u32, 0u32);
    let mut first_refusal = None;
    {
        let states: Vec<FirmwareState> =
            results.iter().filter_map(|(_, r)| r.as_ref().ok().cloned().flatten()).collect();
        super::scan::write_page(db, scope, &states)?;
        let conn = db.conn();
        let now = now_ms();
        let mut ok =
            conn.prepare_cached("UPDATE rollout_devices SET set_at = ?3 WHERE rollout = ?1 AND device_id = ?2")?;
        let mut err =
            conn.prepare_cached("UPDATE rollout_devices SET error = ?3 WHERE rollout = ?1 AND device_id = ?2")?;
        for (device, result) in &results {
            match result {
                Ok(_) => {
                    ok.execute(params![id, device.to_string(), now])?;
                    set += 1;
                }
                Err(e) => {
                    err.execute(params![id, device.to_string(), e.to_string()])?;
                    refused += 1;
                    first_refusal.get_or_insert_with(|| e.to_string());
                }
            }
        }
        let mut message = format!("Wave {} started: target {} set on {set} devices", next + 1, row.version);
        if let Some(why) = &first_refusal {
            message.push_str(&format!("; {refused} refused (first: {why})"));
        }
        event(&conn, id, now, &message)?;
    }
    Ok(StepOutcome::WaveStarted { wave: next, set, refused })
}

fn pct(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Rollouts of a scope by state: running and paused (what the app shows outside the dashboard).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RolloutCounts {
    pub running: u32,
    pub paused: u32,
}

pub fn counts(db: &FleetDb, scope: Scope) -> Result<RolloutCounts> {
    let conn = db.conn();
    let (running, paused) = conn.query_row(
        "SELECT coalesce(sum(state = 'running'), 0), coalesce(sum(state = 'paused'), 0) FROM rollouts WHERE scope = ?1",
        [scope.0],
        |r| Ok((r.get::<_, u32>(0)?, r.get::<_, u32>(1)?)),
    )?;
    Ok(RolloutCounts { running, paused })
}

/// The running rollouts of a scope.
pub fn running(db: &FleetDb, scope: Scope) -> Result<Vec<String>> {
    let conn = db.conn();
    let mut stmt =
        conn.prepare_cached("SELECT id FROM rollouts WHERE scope = ?1 AND state = 'running' ORDER BY created_at")?;
    let rows = stmt.query_map([scope.0], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The scope a rollout belongs to.
pub fn scope_of(db: &FleetDb, id: &str) -> Result<Scope> {
    let conn = db.conn();
    load(&conn, id)?.map(|(s, _)| s).ok_or_else(|| FleetError::invalid("rolloutId", format!("no rollout {id}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wave_needs_the_fewest_successes_that_meet_the_threshold() {
        // The example: 95% of 39 devices is 37.05, so 38 must succeed: 1 may fail.
        assert_eq!(needed(39, 95.0), 38);
        assert_eq!(wave_budgets(&[39], 95.0, 5.0)[0].tolerates, 1);
        assert_eq!(needed(20, 95.0), 19, "exactly 95% meets it");
        assert_eq!(needed(3, 95.0), 3);
        assert_eq!(needed(1, 0.5), 1);
        assert_eq!(needed(100, 100.0), 100);
        assert_eq!(needed(0, 95.0), 0);
        // The same comparison as advance: the found count meets it, one fewer does not.
        for size in 1..300u32 {
            for t in [0.5, 1.0, 33.3, 50.0, 66.7, 90.0, 95.0, 99.0, 99.9, 100.0] {
                let k = needed(size, t);
                assert!(pct(k, size) >= t, "{size} {t}");
                assert!(k == 0 || pct(k - 1, size) < t, "{size} {t}");
            }
        }
    }

    #[test]
    fn the_error_threshold_allows_the_most_failures_that_do_not_pass_it() {
        assert_eq!(failures_before_pause(3, 5.0), 0, "1 of 3 is 33%: the first failure pauses");
        assert_eq!(failures_before_pause(20, 5.0), 1, "1 of 20 is exactly 5%: not above");
        assert_eq!(failures_before_pause(42, 5.0), 2);
        assert_eq!(failures_before_pause(275, 0.0), 0);
        assert_eq!(failures_before_pause(10, 100.0), 10);
        assert_eq!(failures_before_pause(0, 5.0), 0);
        for devices in 1..300u32 {
            for e in [0.0, 1.0, 5.0, 12.5, 50.0, 99.0] {
                let k = failures_before_pause(devices, e);
                assert!(!(k > 0 && pct(k, devices) > e), "{devices} {e}");
                assert!(k == devices || pct(k + 1, devices) > e, "{devices} {e}");
            }
        }
    }

    #[test]
    fn budgets_follow_the_waves() {
        let b = wave_budgets(&[3, 24, 111, 137], 95.0, 5.0);
        assert_eq!(b.iter().map(|w| w.needed).collect::<Vec<_>>(), [3, 23, 106, 131]);
        assert_eq!(b.iter().map(|w| w.tolerates).collect::<Vec<_>>(), [0, 1, 5, 6]);
        assert_eq!(b.iter().map(|w| w.started_devices).collect::<Vec<_>>(), [3, 27, 138, 275]);
        assert_eq!(b.iter().map(|w| w.failures_before_pause).collect::<Vec<_>>(), [0, 1, 6, 13]);
    }

    #[test]
    fn versions_are_ordered_as_the_app_orders_them() {
        let fixture: serde_json::Value = serde_json::from_str(include_str!("version_order.json")).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() > 10);
        for c in cases {
            let (a, b, want) = (c[0].as_str().unwrap(), c[1].as_str().unwrap(), c[2].as_i64().unwrap());
            assert_eq!(compare_versions(a, b) as i64, want, "{a} vs {b}");
            assert_eq!(compare_versions(b, a) as i64, -want, "{b} vs {a}");
        }
    }

    #[test]
    fn a_target_older_than_what_devices_run_is_a_downgrade() {
        let running = |v: &[(&str, u32)]| {
            v.iter().map(|(v, n)| RunningVersion { version: (*v).into(), devices: *n }).collect::<Vec<_>>()
        };
        let fleet = running(&[("1.2.1", 240), ("1.2.0", 30), ("1.1.0", 5)]);
        assert_eq!(
            downgrade_of("1.2.0", &fleet),
            Some(Downgrade { newest: "1.2.1".into(), newest_devices: 240, devices: 240 })
        );
        assert_eq!(
            downgrade_of("1.1.0", &fleet),
            Some(Downgrade { newest: "1.2.1".into(), newest_devices: 240, devices: 270 })
        );
        assert_eq!(downgrade_of("1.2.1", &fleet), None);
        assert_eq!(downgrade_of("1.3.0", &fleet), None);
        assert_eq!(downgrade_of("1.0.0", &running(&[("1.10.0", 1)])).map(|d| d.devices), Some(1));
    }
}
