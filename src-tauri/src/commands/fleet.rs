//! The rollout dashboard's commands: the fleet of the active scope (profile, service, customer)
//! as the local fleet database holds it, its scans, and rollouts in waves. Reads come from the
//! database; scans and rollout steps go to the service.

use std::collections::BTreeMap;
use std::sync::Arc;

use dcs_console::fleet::compare::{self, CompareRequest, Comparison};
use dcs_console::fleet::query::{
    self, CustomerSummary, DeviceQuery, DeviceRow, FleetHealth, HistoryPoint, ModuleOverview, ModuleSummary, Names,
    Selection, WaveStart,
};
use dcs_console::fleet::rollout::{self, PlanPreview, RolloutPlan, RolloutView};
use dcs_console::fleet::scan::ScanKind;
use dcs_console::fleet::service::{set_target_availability, Availability, FleetService, FleetStatus};
use dcs_console::fleet::stuck::{self, ResetOutcome, StuckSummary};
use dcs_console::fleet::{FleetError, Scope};
use dcs_console::ops::rollouts as ops;
use dcs_console::ops::{Confirmed, FleetCtx};
use serde::{Deserialize, Serialize};
use tauri::State;
use uuid::Uuid;

use crate::error::CommandError;
use crate::state::{Answer as _, AppState, Session};

/// The active session, ready to ask its service, its fleet service and its scope.
async fn open(state: &AppState) -> Result<(Arc<Session>, Arc<FleetService>, Scope), CommandError> {
    let (session, fleet, scope) = open_local(state).await?;
    state.ready(&session).await?;
    Ok((session, fleet, scope))
}

/// As [`open`], for what reads the fleet database only: it does not wait for the service (the
/// built-in simulator seeding in the background), so the first screen does not either.
pub(crate) async fn open_local(state: &AppState) -> Result<(Arc<Session>, Arc<FleetService>, Scope), CommandError> {
    let session = state.current().await;
    let fleet = state.fleet()?.clone();
    let scope = fleet.db().scope(&state.scope_key(&session))?;
    Ok((session, fleet, scope))
}

/// Names of owners: the profile's customers.
fn names(session: &Session) -> Names {
    session.profile.customers.iter().map(|c| (c.id, c.label.clone())).collect::<BTreeMap<Uuid, String>>()
}

/// What the dashboard opens with.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct FleetHome {
    pub status: FleetStatus,
    pub modules: Vec<ModuleSummary>,
    /// Devices per owner in this scope.
    pub customers: Vec<CustomerSummary>,
    /// For a reseller: each of its customers' scopes this console has scanned.
    pub customer_scopes: Vec<CustomerScope>,
    pub set_target: Availability,
}

/// A reseller's customer as last scanned by this console.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CustomerScope {
    pub customer_id: Uuid,
    pub label: String,
    pub states: u32,
    pub devices: u32,
    pub drift: u32,
    pub failed: u32,
    pub last_refresh: Option<String>,
    pub active: bool,
}

/// The scan state of the active scope (read when a view opens; changes come as `FleetChanged` events).
#[tauri::command]
#[specta::specta]
pub async fn fleet_status(state: State<'_, AppState>) -> Result<FleetStatus, CommandError> {
    let (_, fleet, scope) = open_local(&state).await?;
    Ok(fleet.status(scope)?)
}

#[tauri::command]
#[specta::specta]
pub async fn fleet_home(state: State<'_, AppState>) -> Result<FleetHome, CommandError> {
    let (session, fleet, scope) = open_local(&state).await?;
    let names = names(&session);
    let mut customer_scopes = Vec::new();
    let own_key = state.scope_key(&session);
    for c in &session.profile.customers {
        let key = dcs_console::fleet::ScopeKey { customer: Some(c.id), ..own_key.clone() };
        // A customer never scanned has no scope yet (and gets none from being shown).
        let (info, sums) = match fleet.db().find_scope(&key)? {
            Some(s) => (fleet.db().scope_info(s)?, query::customers(fleet.db(), s, &names)?),
            None => (Default::default(), Vec::new()),
        };
        customer_scopes.push(CustomerScope {
            customer_id: c.id,
            label: c.label.clone(),
            states: info.states,
            devices: sums.iter().map(|x| x.devices).sum(),
            drift: sums.iter().map(|x| x.drift).sum(),
            failed: sums.iter().map(|x| x.failed).sum(),
            last_refresh: info.last_refresh,
            active: Some(c.id) == session.acting.customer_id(),
        });
    }
    Ok(FleetHome {
        status: fleet.status(scope)?,
        modules: query::modules(fleet.db(), scope)?,
        customers: query::customers(fleet.db(), scope, &names)?,
        customer_scopes,
        set_target: set_target_availability(&session.profile),
    })
}

/// Starts a scan of the active scope in the background (full, or incremental from the last
/// watermark): registered before the answer, which shows it under way; its progress comes as
/// `FleetChanged` events.
#[tauri::command]
#[specta::specta]
pub async fn fleet_scan(state: State<'_, AppState>, full: bool) -> Result<FleetStatus, CommandError> {
    let (session, fleet, scope) = open(&state).await?;
    let current = fleet.status(scope)?;
    if current.scanning.is_some() || current.busy_elsewhere {
        return Err(FleetError::Conflict("a scan is already under way; wait for it or cancel it".into()).into());
    }
    let kind = if full { ScanKind::Full } else { ScanKind::Incremental };
    let begun = fleet.start(scope, kind).await?;
    let (bg_fleet, bg_session) = (fleet.clone(), session.clone());
    tauri::async_runtime::spawn(async move {
        if let Err(e) = bg_fleet.run(begun, &bg_session.client, bg_session.profile.set_target.as_ref()).await {
            tracing::warn!(error = %e, "fleet scan ended with an error");
        }
    });
    Ok(fleet.status(scope)?)
}

/// Cancels the scan under way; answers whether there was one.
#[tauri::command]
#[specta::specta]
pub async fn fleet_cancel_scan(state: State<'_, AppState>) -> Result<bool, CommandError> {
    Ok(state.fleet()?.cancel())
}

/// Sets how often the fleet is refreshed (5 to 3600 s) and whether the timer runs.
#[tauri::command]
#[specta::specta]
pub async fn fleet_set_refresh(
    state: State<'_, AppState>,
    interval_seconds: u32,
    auto: bool,
) -> Result<FleetStatus, CommandError> {
    let (_, fleet, scope) = open_local(&state).await?;
    fleet.set_refresh(interval_seconds, auto)?;
    Ok(fleet.status(scope)?)
}

#[tauri::command]
#[specta::specta]
pub async fn fleet_overview(state: State<'_, AppState>, module_id: String) -> Result<ModuleOverview, CommandError> {
    let (session, fleet, scope) = open_local(&state).await?;
    Ok(query::overview(fleet.db(), scope, &module_id, &names(&session))?)
}

/// How many rows of the device table match.
#[tauri::command]
#[specta::specta]
pub async fn fleet_count(state: State<'_, AppState>, query: DeviceQuery) -> Result<u32, CommandError> {
    let (session, fleet, scope) = open(&state).await?;
    session
        .run(async {
            let device = fleet.device_match(&session.client, scope, query.device.as_deref()).await?;
            query::count(fleet.db(), scope, &query, device.as_ref())
        })
        .await
}

/// A window of the device table.
#[tauri::command]
#[specta::specta]
pub async fn fleet_rows(
    state: State<'_, AppState>,
    query: DeviceQuery,
    offset: u32,
    limit: u32,
) -> Result<Vec<DeviceRow>, CommandError> {
    let (session, fleet, scope) = open(&state).await?;
    session
        .run(async {
            let device = fleet.device_match(&session.client, scope, query.device.as_deref()).await?;
            fleet.rows(scope, &query, device.as_ref(), offset, limit)
        })
        .await
}

/// Writes the selected rows (or all that match) to `path` as CSV; answers how many. `path` must
/// come from `pick_save_file` in this run (refused before anything is written otherwise).
#[tauri::command]
#[specta::specta]
pub async fn fleet_export_csv(
    state: State<'_, AppState>,
    picked: State<'_, crate::picked::Picked>,
    query: DeviceQuery,
    selection: Option<Selection>,
    path: String,
) -> Result<u32, CommandError> {
    let path = picked.check(crate::picked::Use::Write, "path", &path)?;
    let (session, fleet, scope) = open(&state).await?;
    let device = session.run(fleet.device_match(&session.client, scope, query.device.as_deref())).await?;
    let names = names(&session);
    let fleet2 = fleet.clone();
    let written = tauri::async_runtime::spawn_blocking(move || {
        query::write_csv(fleet2.db(), scope, &query, device.as_ref(), selection.as_ref(), &names, &path)
    })
    .await
    .map_err(|j| FleetError::Storage(j.to_string()))?;
    Ok(written?)
}

/// A module's history over the last `hours` (all of it when absent).
#[tauri::command]
#[specta::specta]
pub async fn fleet_history(
    state: State<'_, AppState>,
    module_id: String,
    hours: Option<u32>,
) -> Result<Vec<HistoryPoint>, CommandError> {
    let (_, fleet, scope) = open_local(&state).await?;
    let since = hours.map(|h| dcs_console::fleet::now_ms() - h as i64 * 3_600_000);
    Ok(query::history(fleet.db(), scope, &module_id, since, 600)?)
}

/// The starts of a module's rollout waves over the last `hours` (all when absent): marks on
/// the history timeline.
#[tauri::command]
#[specta::specta]
pub async fn fleet_wave_starts(
    state: State<'_, AppState>,
    module_id: String,
    hours: Option<u32>,
) -> Result<Vec<WaveStart>, CommandError> {
    let (_, fleet, scope) = open_local(&state).await?;
    let since = hours.map(|h| dcs_console::fleet::now_ms() - h as i64 * 3_600_000);
    Ok(query::wave_starts(fleet.db(), scope, &module_id, since)?)
}

/// Two moments of a module compared, device by device (console::fleet::compare); its devices
/// are kept so that a cell opens the device table filtered to them (`compared` of the query).
#[tauri::command]
#[specta::specta]
pub async fn fleet_compare(state: State<'_, AppState>, request: CompareRequest) -> Result<Comparison, CommandError> {
    let (_, fleet, scope) = open_local(&state).await?;
    let fleet2 = fleet.clone();
    let out = tauri::async_runtime::spawn_blocking(move || compare::compare(fleet2.db(), scope, &request, true))
        .await
        .map_err(|j| FleetError::Storage(j.to_string()))?;
    Ok(out?)
}

/// A module's stuck devices, by its threshold.
#[tauri::command]
#[specta::specta]
pub async fn fleet_stuck(state: State<'_, AppState>, module_id: String) -> Result<StuckSummary, CommandError> {
    let (_, fleet, scope) = open_local(&state).await?;
    Ok(stuck::summary(fleet.db(), scope, &module_id, dcs_console::fleet::now_ms())?)
}

/// Sets a module's stuck threshold (hours); answers its stuck devices by it.
#[tauri::command]
#[specta::specta]
pub async fn fleet_set_stuck_hours(
    state: State<'_, AppState>,
    module_id: String,
    hours: f64,
) -> Result<StuckSummary, CommandError> {
    let (_, fleet, scope) = open_local(&state).await?;
    compare::set_stuck_hours(fleet.db(), &module_id, hours)?;
    Ok(stuck::summary(fleet.db(), scope, &module_id, dcs_console::fleet::now_ms())?)
}

/// Resets the targets of the module's devices the query names (the stuck ones): `expected` is
/// the number the operator confirmed and `actingFor` the customer the confirmation named
/// (refused, nothing sent, when either differs).
#[tauri::command]
#[specta::specta]
pub async fn fleet_reset_targets(
    state: State<'_, AppState>,
    module_id: String,
    query: DeviceQuery,
    expected: u32,
    acting_for: Option<Uuid>,
) -> Result<ResetOutcome, CommandError> {
    let (session, fleet, scope) = open(&state).await?;
    let confirmed = Confirmed::for_customer(acting_for);
    session.run(ops::reset_stuck(&ctx(&session, &fleet, scope), &module_id, &query, expected, &confirmed)).await
}

/// The active scope at a glance, for the Home screen: states per status over every module,
/// devices, drift and the most recent failure reasons.
#[tauri::command]
#[specta::specta]
pub async fn fleet_health(state: State<'_, AppState>) -> Result<FleetHealth, CommandError> {
    let (_, fleet, scope) = open_local(&state).await?;
    Ok(query::health(fleet.db(), scope, 8)?)
}

/// The use cases' context for the active session: its client, profile, customer, this app's
/// fleet service (its driver) and scope.
fn ctx<'a>(session: &'a Session, fleet: &'a FleetService, scope: Scope) -> FleetCtx<'a> {
    FleetCtx {
        client: &session.client,
        profile: &session.profile.name,
        set_target: session.profile.set_target.as_ref(),
        acting: session.acting.customer_id(),
        fleet,
        scope,
    }
}

/// What a plan would do: its problems field by field, or its devices per wave.
#[tauri::command]
#[specta::specta]
pub async fn rollout_preview(state: State<'_, AppState>, plan: RolloutPlan) -> Result<PlanPreview, CommandError> {
    let (session, fleet, scope) = open(&state).await?;
    session.run(ops::preview(&ctx(&session, &fleet, scope), &plan)).await
}

/// A rehearsal of a plan (nothing is sent to the service: it runs on a simulator of the fleet's
/// copy with the operator's models). Read-only calls only, so no set-target operation is needed.
#[tauri::command]
#[specta::specta]
pub async fn rollout_rehearse(
    state: State<'_, AppState>,
    plan: RolloutPlan,
    models: Vec<rollout::ModelRule>,
) -> Result<rollout::Rehearsal, CommandError> {
    let (session, fleet, scope) = open(&state).await?;
    // The rehearsal steps as often as this app's refreshes will move the rollout, on the
    // service's clock (the built-in simulator's runs fast).
    let period = fleet.refresh_period(scope).as_secs_f64();
    let rate = state.service_clock(&session).await.rate;
    let step = (period * rate).round().clamp(1.0, rollout::rehearse::MAX_STEP_SECS as f64) as u32;
    let cancel = tokio_util::sync::CancellationToken::new();
    session.run(ops::rehearse(&ctx(&session, &fleet, scope), &plan, &models, step, &cancel)).await
}

/// Starts a rollout: checks the plan again, saves it, and starts its first wave (this window
/// then drives it). `allowDowngrade`: the operator confirmed rolling devices back.
#[tauri::command]
#[specta::specta]
pub async fn rollout_start(
    state: State<'_, AppState>,
    plan: RolloutPlan,
    allow_downgrade: bool,
    acting_for: Option<Uuid>,
) -> Result<RolloutView, CommandError> {
    let (session, fleet, scope) = open(&state).await?;
    let confirmed = Confirmed::for_customer(acting_for);
    session.run(ops::start(&ctx(&session, &fleet, scope), &plan, &confirmed, allow_downgrade)).await
}

/// The rollouts of the active scope, newest first.
#[tauri::command]
#[specta::specta]
pub async fn rollouts(state: State<'_, AppState>) -> Result<Vec<RolloutView>, CommandError> {
    let (session, fleet, scope) = open_local(&state).await?;
    Ok(ops::list(&ctx(&session, &fleet, scope))?)
}

/// Running and paused rollouts of the active scope, for the navigation and the status bar
/// (read once per profile and customer, then pushed in `FleetChanged`; a scope never opened has
/// none and is not created by asking).
#[tauri::command]
#[specta::specta]
pub async fn rollout_counts(state: State<'_, AppState>) -> Result<rollout::RolloutCounts, CommandError> {
    let session = state.current().await;
    let fleet = state.fleet()?.clone();
    match fleet.db().find_scope(&state.scope_key(&session))? {
        Some(scope) => Ok(rollout::counts(fleet.db(), scope)?),
        None => Ok(Default::default()),
    }
}

#[tauri::command]
#[specta::specta]
pub async fn rollout_pause(
    state: State<'_, AppState>,
    id: String,
    acting_for: Option<Uuid>,
) -> Result<RolloutView, CommandError> {
    let (session, fleet, scope) = open_local(&state).await?;
    session.run(ops::pause(&ctx(&session, &fleet, scope), &id, &Confirmed::for_customer(acting_for))).await
}

/// Resumes a paused rollout, with new thresholds if given, and moves it on at once.
#[tauri::command]
#[specta::specta]
pub async fn rollout_resume(
    state: State<'_, AppState>,
    id: String,
    success_threshold: Option<f64>,
    error_threshold: Option<f64>,
    acting_for: Option<Uuid>,
) -> Result<RolloutView, CommandError> {
    let (session, fleet, scope) = open(&state).await?;
    let c = ctx(&session, &fleet, scope);
    let confirmed = Confirmed::for_customer(acting_for);
    session.run(async { Ok(ops::resume(&c, &id, success_threshold, error_threshold, &confirmed).await?.0) }).await
}

/// Lets the wave a rollout holds for approval start (the operator's "Continue"), and moves the
/// rollout on at once (the wave starts now, or waits for its schedule).
#[tauri::command]
#[specta::specta]
pub async fn rollout_continue(
    state: State<'_, AppState>,
    id: String,
    acting_for: Option<Uuid>,
) -> Result<RolloutView, CommandError> {
    let (session, fleet, scope) = open(&state).await?;
    let c = ctx(&session, &fleet, scope);
    let confirmed = Confirmed::for_customer(acting_for);
    session.run(async { Ok(ops::approve(&c, &id, &confirmed).await?.0) }).await
}

/// What an abort would reset: devices whose update under the rollout has not finished.
#[tauri::command]
#[specta::specta]
pub async fn rollout_unfinished(state: State<'_, AppState>, id: String) -> Result<u32, CommandError> {
    let (session, fleet, scope) = open_local(&state).await?;
    Ok(ops::unfinished(&ctx(&session, &fleet, scope), &id)?)
}

/// Aborts a rollout; with `resetUnfinished`, resets the targets of devices still updating.
#[tauri::command]
#[specta::specta]
pub async fn rollout_abort(
    state: State<'_, AppState>,
    id: String,
    reset_unfinished: bool,
    acting_for: Option<Uuid>,
) -> Result<RolloutView, CommandError> {
    let (session, fleet, scope) = open(&state).await?;
    let c = ctx(&session, &fleet, scope);
    let confirmed = Confirmed::for_customer(acting_for);
    session.run(async { Ok(ops::abort(&c, &id, reset_unfinished, &confirmed).await?.0) }).await
}

/// Writes the report of a rollout of the active scope: as HTML when `format` is `html`, else as
/// JSON, to `path` (chosen in the save dialog in this run). Answers the path written.
#[tauri::command]
#[specta::specta]
pub async fn rollout_report(
    state: State<'_, AppState>,
    picked: State<'_, crate::picked::Picked>,
    id: String,
    format: ReportFormat,
    path: String,
) -> Result<String, CommandError> {
    let path = picked.check(crate::picked::Use::Write, "path", &path)?;
    let (session, fleet, scope) = open(&state).await?;
    let label = session.acting.customer_id().and_then(|c| names(&session).get(&c).cloned());
    let report = session.run(ops::report(&ctx(&session, &fleet, scope), &id, label)).await?;
    let written = path.clone();
    tauri::async_runtime::spawn_blocking(move || match format {
        ReportFormat::Html => rollout::report::write(&report, Some(&written), None),
        ReportFormat::Json => rollout::report::write(&report, None, Some(&written)),
    })
    .await
    .map_err(|j| FleetError::Storage(j.to_string()))??;
    Ok(path.display().to_string())
}

/// The form of a rollout report.
#[derive(Debug, Clone, Copy, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum ReportFormat {
    Html,
    Json,
}
