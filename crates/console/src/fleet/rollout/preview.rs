//! A plan checked against the fleet database and the service: its shape, the devices its choice
//! names (a pasted list is looked up at the service), and the preview the operator confirms.

use std::collections::{HashMap, HashSet};

use dcs_api::model::DeviceId;
use dcs_api::Client;
use futures::{stream, StreamExt};
use uuid::Uuid;

use super::budget::wave_budgets;
use super::plan::{wave_sizes, DeviceChoice, LateDevices, PlanPreview, RolloutPlan, WaveEarliest, MAX_HANG_MINUTES};
use super::store::{active_devices, known_states, module_name};
use super::versions::{downgrade_of, running_versions, Candidate};
use super::PARALLEL_SETS;
use crate::fleet::query::{self, DeviceQuery, Selection};
use crate::fleet::{ms_to_text, now_ms, FleetDb, Result, Scope};
use crate::FieldError;

/// Checks the parts of a plan that need no devices.
pub fn check_shape(db: &FleetDb, scope: Scope, plan: &RolloutPlan) -> Vec<FieldError> {
    let mut problems: Vec<FieldError> = Vec::new();
    let mut push = |field: &str, rule: String| problems.push(FieldError::new(field, rule));
    if let Some(rule) = check_version(db, scope, plan) {
        push("version", rule);
    }
    if let Some(rule) = check_waves(&plan.waves) {
        push("waves", rule);
    }
    for (field, rule) in check_thresholds(plan) {
        push(field, rule);
    }
    if let Some(m) = plan.hang_minutes.filter(|m| *m > MAX_HANG_MINUTES) {
        push("hangMinutes", format!("must be from 0 (never warn) to {MAX_HANG_MINUTES} minutes (a week), got {m}"));
    }
    if let Some(Err(broken)) = plan.schedule.as_ref().map(|s| s.check(now_ms())) {
        problems.extend(broken);
    }
    if let Some(r) = &plan.retry {
        problems.extend(r.check());
    }
    if plan.late != LateDevices::None && matches!(plan.devices, DeviceChoice::List { .. }) {
        problems.push(FieldError::new(
            "late",
            "only a rollout over all devices of the module or a filter takes in devices that appear later: a pasted list is fixed",
        ));
    }
    problems
}

/// The version's rule, if it breaks one: well formed, a package of the module, with its file.
fn check_version(db: &FleetDb, scope: Scope, plan: &RolloutPlan) -> Option<String> {
    if let Err(rule) = dcs_api::model::validate::firmware_version(&plan.version) {
        return Some(rule.to_string());
    }
    match query::packages(db, scope, &plan.module_id) {
        Ok(pkgs) => match pkgs.iter().find(|p| p.version == plan.version) {
            None => Some(format!("the module has no package with version {}", plan.version)),
            Some(p) if !p.has_file => Some(format!("package {} has no firmware file uploaded yet", plan.version)),
            Some(_) => None,
        },
        Err(e) => Some(e.to_string()),
    }
}

/// The waves' rule, if they break one: 1 to 20 rising percentages, the last 100.
fn check_waves(waves: &[f64]) -> Option<String> {
    if waves.is_empty() {
        return Some("give at least one wave (for example 1, 10, 50, 100)".into());
    }
    if waves.len() > 20 {
        return Some("at most 20 waves".into());
    }
    let mut last = 0.0;
    for (i, w) in waves.iter().enumerate() {
        if !w.is_finite() || *w <= last || *w > 100.0 {
            return Some(format!("wave {}: {w}% must be above the wave before ({last}%) and at most 100%", i + 1));
        }
        last = *w;
    }
    (last != 100.0).then(|| format!("the last wave must reach 100% (it reaches {last}%)"))
}

/// The thresholds' rules they break: percentages, the success threshold above 0.
fn check_thresholds(plan: &RolloutPlan) -> Vec<(&'static str, String)> {
    let mut problems = Vec::new();
    for (field, v) in [("successThreshold", plan.success_threshold), ("errorThreshold", plan.error_threshold)] {
        if !v.is_finite() || !(0.0..=100.0).contains(&v) {
            problems.push((field, format!("must be a percentage from 0 to 100, got {v}")));
        }
    }
    if plan.success_threshold == 0.0 && problems.iter().all(|(f, _)| *f != "successThreshold") {
        problems
            .push(("successThreshold", "must be above 0%: a wave must succeed somewhat before the next starts".into()));
    }
    problems
}

/// One problem of a plan's devices.
fn one_problem(field: &str, rule: impl Into<String>) -> Vec<FieldError> {
    vec![FieldError::new(field, rule)]
}

/// Resolves the choice to devices of the module, or the rule each broken part breaks.
pub async fn resolve(
    client: &Client,
    db: &FleetDb,
    scope: Scope,
    plan: &RolloutPlan,
) -> Result<std::result::Result<Vec<Candidate>, Vec<FieldError>>> {
    let module = &plan.module_id;
    let known = known_states(db, scope, module)?;
    if known.is_empty() {
        return Ok(Err(one_problem("moduleId", "no device states of this module are known; scan first")));
    }
    let ids: Vec<Uuid> = match &plan.devices {
        DeviceChoice::All => known.keys().copied().collect(),
        DeviceChoice::Query { query, selection } => {
            query_ids(client, db, scope, module, query, selection.as_ref()).await?
        }
        DeviceChoice::List { text } => match list_ids(client, &known, text).await {
            Ok(ids) => ids,
            Err(problems) => return Ok(Err(problems)),
        },
    };
    let mut seen = HashSet::new();
    let out: Vec<Candidate> =
        ids.into_iter().filter(|id| seen.insert(*id)).filter_map(|id| known.get(&id).cloned()).collect();
    if out.is_empty() {
        return Ok(Err(one_problem("devices", "the choice holds no device of this module")));
    }
    Ok(Ok(out))
}

/// The devices of the module that the device table's query (and selection) names.
pub(crate) async fn query_ids(
    client: &Client,
    db: &FleetDb,
    scope: Scope,
    module: &str,
    query: &DeviceQuery,
    selection: Option<&Selection>,
) -> Result<Vec<Uuid>> {
    let mut q = query.clone();
    q.module_id = Some(module.to_owned());
    let device = match q.device.as_deref().filter(|d| !d.trim().is_empty()) {
        Some(raw) => Some(query::resolve_device(client, raw).await?),
        None => None,
    };
    let sel = selection.cloned().unwrap_or(Selection { all: true, keys: Vec::new() });
    Ok(query::selected(db, scope, &q, device.as_ref(), &sel)?.iter().filter_map(|r| r.device_id.parse().ok()).collect())
}

/// The devices a pasted list names, each looked up at the service unless it is a UUID; or one
/// problem naming every entry that is malformed, unknown or without a state of the module.
async fn list_ids(
    client: &Client,
    known: &HashMap<Uuid, Candidate>,
    text: &str,
) -> std::result::Result<Vec<Uuid>, Vec<FieldError>> {
    let entries = DeviceId::parse_list(text);
    if entries.is_empty() {
        return Err(one_problem("devices", "paste at least one device id"));
    }
    let mut problems = Vec::new();
    let mut parsed = Vec::new();
    for (i, (e, id)) in entries.into_iter().enumerate() {
        match id {
            Ok(id) => parsed.push((i, e.to_string(), id)),
            Err(err) => problems.push((i, format!("#{} `{e}`: {err}", i + 1))),
        }
    }
    let mut ids = Vec::new();
    for (i, raw, found) in look_up(client, parsed).await {
        match found {
            Ok(Some(u)) if known.contains_key(&u) => ids.push(u),
            Ok(Some(u)) => problems.push((i, format!("#{} `{raw}`: device {u} has no state of this module", i + 1))),
            Ok(None) => problems.push((i, format!("#{} `{raw}`: the service knows no such device", i + 1))),
            Err(e) => problems.push((i, format!("#{} `{raw}`: {e}", i + 1))),
        }
    }
    if problems.is_empty() {
        Ok(ids)
    } else {
        Err(one_problem("devices", list_rule(problems)))
    }
}

/// A pasted entry's UUID: its own, or the one the service states for it; in the entries' order.
type Lookup = (usize, String, std::result::Result<Option<Uuid>, dcs_api::Error>);

/// Looks the parsed entries up at the service, [`PARALLEL_SETS`] at a time, in their order.
async fn look_up(client: &Client, parsed: Vec<(usize, String, DeviceId)>) -> Vec<Lookup> {
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
                        client.firmware().states_page(&filter).await.map(|(p, _)| p.items.first().map(|s| s.device_id))
                    }
                };
                (i, raw, found)
            }
        })
        .collect();
    let mut lookups = stream::iter(jobs).buffer_unordered(PARALLEL_SETS).collect::<Vec<_>>().await;
    lookups.sort_by_key(|(i, _, _)| *i);
    lookups
}

/// The first ten problems of a pasted list, in its order, and how many more.
fn list_rule(mut problems: Vec<(usize, String)>) -> String {
    problems.sort_by_key(|(i, _)| *i);
    let n = problems.len();
    let mut rule = problems.into_iter().take(10).map(|(_, m)| m).collect::<Vec<_>>().join("; ");
    if n > 10 {
        rule.push_str(&format!("; and {} more", n - 10));
    }
    rule
}

/// The preview of a plan: its problems, or how many devices each wave would update.
pub async fn preview(
    client: &Client,
    db: &FleetDb,
    scope: Scope,
    plan: &RolloutPlan,
) -> Result<(PlanPreview, Vec<Candidate>)> {
    if check_version(db, scope, plan).is_some() {
        // The packages are read on full scans; one made or given its file since is read now.
        crate::fleet::scan::refresh_catalogue(client, db, scope).await?;
    }
    let module_name = module_name(&db.conn(), scope, &plan.module_id)?;
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
        in_other_rollouts: 0,
        other_rollouts: vec![],
        calendar: vec![],
    };
    let candidates = match resolve(client, db, scope, plan).await? {
        Ok(c) => c,
        Err(problems) => {
            p.problems.extend(problems);
            return Ok((p, Vec::new()));
        }
    };
    let candidates = leave_out_active(db, scope, plan, candidates, &mut p)?;
    if candidates.is_empty() {
        return Ok((p, Vec::new()));
    }
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
        p.problems.push(FieldError::new("devices", format!("every chosen device already runs {}", plan.version)));
    }
    if p.problems.iter().all(|x| x.field != "waves") {
        p.wave_sizes = wave_sizes(rest.len(), &plan.waves);
        p.wave_budgets = wave_budgets(&p.wave_sizes, plan.success_threshold, plan.error_threshold);
        if let Some(Ok(calendar)) = plan.schedule.as_ref().map(|s| s.check(now_ms())) {
            p.calendar = calendar
                .earliest_starts(now_ms(), p.wave_sizes.len())
                .into_iter()
                .enumerate()
                .map(|(i, (at, waits))| WaveEarliest {
                    wave: i as u32,
                    at: ms_to_text(at),
                    local: calendar.local_text(at),
                    waits,
                })
                .collect();
        }
    }
    Ok((p, rest))
}

/// The candidates without the devices a running or paused rollout of the module has (counted
/// in the preview, by rollout); a problem when none is left.
fn leave_out_active(
    db: &FleetDb,
    scope: Scope,
    plan: &RolloutPlan,
    candidates: Vec<Candidate>,
    p: &mut PlanPreview,
) -> Result<Vec<Candidate>> {
    let active = active_devices(db, scope, &plan.module_id)?;
    if active.is_empty() {
        return Ok(candidates);
    }
    let mut by_rollout: HashMap<String, u32> = HashMap::new();
    let kept: Vec<Candidate> = candidates
        .into_iter()
        .filter(|(d, ..)| match active.get(d) {
            Some(r) => {
                *by_rollout.entry(r.clone()).or_default() += 1;
                false
            }
            None => true,
        })
        .collect();
    p.in_other_rollouts = by_rollout.values().sum();
    let mut others: Vec<(String, u32)> = by_rollout.into_iter().collect();
    others.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    p.other_rollouts = others;
    if kept.is_empty() {
        p.problems.push(FieldError::new(
            "devices",
            format!(
                "every chosen device ({}) is in a running or paused rollout of the module ({}); two rollouts never target the same device",
                p.in_other_rollouts,
                p.other_rollouts.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(kept)
}
