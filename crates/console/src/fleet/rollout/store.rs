//! The SQL of rollouts: the plan saved with its devices in waves, its state and events, the
//! device states a plan is resolved against, and what a step claims and records.

use std::collections::{HashMap, HashSet};

use dcs_api::model::FirmwareState;
use rand::seq::SliceRandom;
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::hold::{HangWarning, Hold};
use super::lease::{check_and_renew, Lease};
use super::plan::RetryPolicy;
use super::plan::{wave_sizes, DeviceChoice, LateDevices, RolloutPlan, DEFAULT_HANG_MINUTES};
use super::schedule::Schedule;
use super::targets::SetResult;
use super::versions::Candidate;
use crate::fleet::{now_ms, FleetDb, FleetError, Result, Scope};

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
    pub(super) fn as_str(self) -> &'static str {
        match self {
            RolloutState::Running => "running",
            RolloutState::Paused => "paused",
            RolloutState::Completed => "completed",
            RolloutState::Aborted => "aborted",
        }
    }
    pub(super) fn parse(s: &str) -> RolloutState {
        match s {
            "running" => RolloutState::Running,
            "paused" => RolloutState::Paused,
            "completed" => RolloutState::Completed,
            _ => RolloutState::Aborted,
        }
    }
}

/// Saves a previewed plan as a running rollout (no target is set yet: [`advance`](super::advance) starts the
/// first wave). Answers its id.
pub fn create(
    client: &dcs_api::Client,
    db: &FleetDb,
    scope: Scope,
    plan: &RolloutPlan,
    devices: &[Candidate],
) -> Result<String> {
    let id = Uuid::new_v4().to_string();
    let mut order: Vec<&Candidate> = devices.iter().collect();
    order.shuffle(&mut rand::thread_rng());
    let sizes = wave_sizes(order.len(), &plan.waves);
    let now = now_ms();
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT INTO rollouts (id, scope, module_id, version, waves, success_threshold, error_threshold, selection, state,
                               current_wave, created_at, updated_at, schedule, approval, approved_wave, hang_minutes, retry, late)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running', -1, ?9, ?9, ?10, ?11, 0, ?12, ?13, ?14)",
        params![
            id,
            scope.0,
            plan.module_id,
            plan.version,
            serde_json::to_string(&plan.waves).expect("numbers serialise"),
            plan.success_threshold,
            plan.error_threshold,
            serde_json::to_string(&plan.devices).expect("choice serialises"),
            now,
            plan.schedule.as_ref().map(|s| serde_json::to_string(s).expect("schedule serialises")),
            plan.approval,
            plan.hang_minutes.unwrap_or(DEFAULT_HANG_MINUTES),
            plan.retry.as_ref().map(|r| serde_json::to_string(r).expect("policy serialises")),
            plan.late.as_str(),
        ],
    )?;
    let taken = taken_by_others(&tx, scope, &plan.module_id, order.iter().map(|(d, ..)| *d))?;
    if taken > 0 {
        return Err(FleetError::Conflict(format!(
            "{taken} of the devices joined another running or paused rollout of the module since the preview; \
             preview again (two rollouts never target the same device)"
        )));
    }
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
    drop(conn);
    let details = serde_json::json!({
        "schedule": plan.schedule,
        "approval": plan.approval,
        "retry": plan.retry,
        "late": plan.late,
        "moduleId": plan.module_id,
        "version": plan.version,
        "waves": plan.waves,
        "successThreshold": plan.success_threshold,
        "errorThreshold": plan.error_threshold,
        "devices": devices.len(),
    });
    crate::audit::note(client, "rollout.start", &id, details)?;
    Ok(id)
}

fn waves_text(waves: &[f64]) -> String {
    waves.iter().map(|w| format!("{w}%")).collect::<Vec<_>>().join(", ")
}

pub(super) fn event(conn: &rusqlite::Connection, rollout: &str, at: i64, message: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO rollout_events (rollout, at, message) VALUES (?1, ?2, ?3)",
        params![rollout, at, message],
    )?;
    Ok(())
}

/// A rollout as its row holds it.
pub(super) struct Row {
    pub(super) id: String,
    pub(super) module_id: String,
    pub(super) version: String,
    pub(super) waves: Vec<f64>,
    pub(super) success: f64,
    pub(super) error: f64,
    pub(super) devices: DeviceChoice,
    pub(super) state: RolloutState,
    pub(super) reason: Option<String>,
    pub(super) current: i32,
    pub(super) created: i64,
    pub(super) updated: i64,
    pub(super) schedule: Option<Schedule>,
    /// Waves after the first wait for the operator's "Continue".
    pub(super) approval: bool,
    /// The highest wave the operator let start.
    pub(super) approved: i32,
    /// What holds the next wave back now, as recorded (its event is written once).
    pub(super) hold: Option<Hold>,
    /// When the current wave started.
    pub(super) wave_started: Option<i64>,
    /// Minutes without a change in the current wave before the hang warning (0: never).
    pub(super) hang_minutes: u32,
    /// What the current wave's devices looked like at the last step, and since when.
    pub(super) move_key: Option<String>,
    pub(super) last_move: Option<i64>,
    /// The hang warning raised for the current stillness, if any.
    pub(super) hang: Option<HangWarning>,
    pub(super) retry: Option<RetryPolicy>,
    /// Where devices that appear after the start go.
    pub(super) late: LateDevices,
}

pub(super) fn load(conn: &rusqlite::Connection, id: &str) -> Result<Option<(Scope, Row)>> {
    Ok(conn
        .query_row(
            "SELECT scope, id, module_id, version, waves, success_threshold, error_threshold, selection, state, reason,
                    current_wave, created_at, updated_at, schedule, approval, approved_wave, hold, wave_started_at,
                    hang_minutes, move_key, last_move_at, hang, retry, late
             FROM rollouts WHERE id = ?1",
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
                        schedule: r.get::<_, Option<String>>(13)?.and_then(|s| serde_json::from_str(&s).ok()),
                        approval: r.get::<_, Option<bool>>(14)?.unwrap_or(false),
                        approved: r.get::<_, Option<i32>>(15)?.unwrap_or(0),
                        hold: r.get::<_, Option<String>>(16)?.and_then(|s| serde_json::from_str(&s).ok()),
                        wave_started: r.get(17)?,
                        hang_minutes: r.get::<_, Option<u32>>(18)?.unwrap_or(DEFAULT_HANG_MINUTES),
                        move_key: r.get(19)?,
                        last_move: r.get(20)?,
                        hang: r.get::<_, Option<String>>(21)?.and_then(|s| serde_json::from_str(&s).ok()),
                        retry: r.get::<_, Option<String>>(22)?.and_then(|s| serde_json::from_str(&s).ok()),
                        late: r.get::<_, Option<String>>(23)?.map_or(LateDevices::None, |s| LateDevices::parse(&s)),
                    },
                ))
            },
        )
        .optional()?)
}

pub(super) fn set_state(
    conn: &rusqlite::Connection,
    id: &str,
    state: RolloutState,
    reason: Option<&str>,
    message: &str,
) -> Result<()> {
    let now = now_ms();
    conn.execute(
        "UPDATE rollouts SET state = ?2, reason = ?3, updated_at = ?4, hold = NULL WHERE id = ?1",
        params![id, state.as_str(), reason, now],
    )?;
    event(conn, id, now, message)
}

/// Devices whose update under this rollout has not finished (targets set, or sent before an
/// interruption and found on the service, still on the way).
pub fn unfinished(db: &FleetDb, id: &str) -> Result<Vec<Uuid>> {
    let conn = db.conn();
    let (scope, row) = load_known(&conn, id)?;
    let mut stmt = conn.prepare_cached(
        "SELECT d.device_id FROM rollout_devices d
         LEFT JOIN states s ON s.scope = ?2 AND s.module_id = ?3 AND s.device_id = d.device_id
         WHERE d.rollout = ?1 AND (d.set_at IS NOT NULL OR d.sending_at IS NOT NULL) AND s.target IS ?4
           AND (s.status IS NULL OR s.status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED'))",
    )?;
    let rows = stmt.query_map(params![id, scope.0, row.module_id, row.version], |r| r.get::<_, String>(0))?;
    Ok(rows.filter_map(|r| r.ok()?.parse().ok()).collect())
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

/// Scopes with a running rollout (to go on with them after a restart).
pub fn running_scopes(db: &FleetDb) -> Result<Vec<Scope>> {
    let conn = db.conn();
    let mut stmt = conn.prepare_cached("SELECT DISTINCT scope FROM rollouts WHERE state = 'running'")?;
    let rows = stmt.query_map([], |r| Ok(Scope(r.get(0)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The scope a rollout belongs to.
pub fn scope_of(db: &FleetDb, id: &str) -> Result<Scope> {
    let conn = db.conn();
    load_known(&conn, id).map(|(s, _)| s)
}

/// The rollout `id`, or the rule that there is none.
pub(super) fn load_known(conn: &rusqlite::Connection, id: &str) -> Result<(Scope, Row)> {
    load(conn, id)?.ok_or_else(|| FleetError::invalid("rolloutId", format!("no rollout {id}")))
}

/// The module's name, or its id when the scan has not named it.
pub(super) fn module_name(conn: &rusqlite::Connection, scope: Scope, module_id: &str) -> Result<String> {
    Ok(conn
        .query_row("SELECT name FROM modules WHERE scope = ?1 AND module_id = ?2", params![scope.0, module_id], |r| {
            r.get(0)
        })
        .optional()?
        .unwrap_or_else(|| module_id.to_owned()))
}

/// Records what holds the rollout's next wave back, with its event (the step calls it only
/// when the hold is new or changed).
pub(super) fn record_hold(db: &FleetDb, id: &str, hold: &Hold) -> Result<()> {
    let conn = db.conn();
    let now = now_ms();
    conn.execute(
        "UPDATE rollouts SET hold = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, serde_json::to_string(hold).expect("hold serialises"), now],
    )?;
    event(&conn, id, now, &hold.message)
}

/// What the devices of wave `wave` look like now, as one key that changes when any of them
/// changes (its status, the time of its status or target), compared step to step.
pub(super) fn move_key(db: &FleetDb, scope: Scope, row: &Row, wave: u32) -> Result<String> {
    let conn = db.conn();
    let key: (i64, i64, i64, i64) = conn.query_row(
        "SELECT count(s.device_id), coalesce(sum(s.status_at), 0), coalesce(sum(s.target_at), 0),
                coalesce(sum(length(s.status) * 7 + length(coalesce(s.target, '')) * 13), 0)
         FROM rollout_devices d LEFT JOIN states s ON s.scope = ?3 AND s.module_id = ?4 AND s.device_id = d.device_id
         WHERE d.rollout = ?1 AND d.wave = ?2",
        params![row.id, wave, scope.0, row.module_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    Ok(format!("{}:{}:{}:{}", key.0, key.1, key.2, key.3))
}

/// Records that the current wave moved (a new key) at `now`, clearing any hang warning.
pub(super) fn record_move(db: &FleetDb, id: &str, key: &str, now: i64) -> Result<()> {
    db.conn().execute(
        "UPDATE rollouts SET move_key = ?2, last_move_at = ?3, hang = NULL WHERE id = ?1",
        params![id, key, now],
    )?;
    Ok(())
}

/// The devices of wave `wave` whose update under the rollout has not finished: how many, and
/// the first ten ids.
pub(super) fn unmoved(db: &FleetDb, scope: Scope, row: &Row, wave: u32) -> Result<(u32, Vec<String>)> {
    let conn = db.conn();
    let mut stmt = conn.prepare_cached(
        "SELECT d.device_id FROM rollout_devices d
         LEFT JOIN states s ON s.scope = ?3 AND s.module_id = ?4 AND s.device_id = d.device_id
         WHERE d.rollout = ?1 AND d.wave = ?2 AND d.set_at IS NOT NULL AND s.target IS ?5
           AND (s.status IS NULL OR s.status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED'))
         ORDER BY d.device_id",
    )?;
    let ids: Vec<String> = stmt
        .query_map(params![row.id, wave, scope.0, row.module_id, row.version], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok((ids.len() as u32, ids.into_iter().take(10).collect()))
}

/// Records the hang warning, with its event.
pub(super) fn record_hang(db: &FleetDb, id: &str, warning: &HangWarning, now: i64) -> Result<()> {
    let conn = db.conn();
    conn.execute(
        "UPDATE rollouts SET hang = ?2 WHERE id = ?1",
        params![id, serde_json::to_string(warning).expect("warning serialises")],
    )?;
    event(&conn, id, now, &warning.message)
}

/// The operator lets wave `wave` start: recorded with its event, the hold cleared.
pub(super) fn approve_wave(conn: &rusqlite::Connection, id: &str, wave: u32, message: &str) -> Result<()> {
    let now = now_ms();
    conn.execute(
        "UPDATE rollouts SET approved_wave = ?2, hold = NULL, updated_at = ?3 WHERE id = ?1",
        params![id, wave, now],
    )?;
    event(conn, id, now, message)
}

/// The devices of the module that running or paused rollouts have, with the rollout of each.
pub(super) fn active_devices(db: &FleetDb, scope: Scope, module: &str) -> Result<HashMap<Uuid, String>> {
    let conn = db.conn();
    let mut stmt = conn.prepare_cached(
        "SELECT d.device_id, r.id FROM rollouts r JOIN rollout_devices d ON d.rollout = r.id
         WHERE r.scope = ?1 AND r.module_id = ?2 AND r.state IN ('running', 'paused')",
    )?;
    let rows = stmt.query_map(params![scope.0, module], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    let mut map = HashMap::new();
    for row in rows {
        let (d, r) = row?;
        if let Ok(d) = d.parse() {
            map.insert(d, r);
        }
    }
    Ok(map)
}

/// How many of `devices` a running or paused rollout of the module already has (checked again
/// in the transaction that saves a new rollout).
fn taken_by_others(
    tx: &rusqlite::Transaction,
    scope: Scope,
    module: &str,
    devices: impl Iterator<Item = Uuid>,
) -> Result<u32> {
    Ok(taken(tx, scope, module, devices)?.len() as u32)
}

/// Those of `devices` a running or paused rollout of the module has, in the transaction that
/// is about to add them to a rollout (two rollouts never target the same device).
pub(super) fn taken(
    tx: &rusqlite::Transaction,
    scope: Scope,
    module: &str,
    devices: impl Iterator<Item = Uuid>,
) -> Result<HashSet<Uuid>> {
    let mut stmt = tx.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM rollout_devices d JOIN rollouts r ON r.id = d.rollout
         WHERE d.device_id = ?1 AND r.scope = ?2 AND r.module_id = ?3 AND r.state IN ('running', 'paused'))",
    )?;
    let mut out = HashSet::new();
    for d in devices {
        if stmt.query_row(params![d.to_string(), scope.0, module], |r| r.get::<_, bool>(0))? {
            out.insert(d);
        }
    }
    Ok(out)
}

/// Every device with a state of the module, as a plan's candidate.
pub(super) fn known_states(db: &FleetDb, scope: Scope, module: &str) -> Result<HashMap<Uuid, Candidate>> {
    let conn = db.conn();
    let mut stmt = conn
        .prepare_cached("SELECT device_id, current, target, status FROM states WHERE scope = ?1 AND module_id = ?2")?;
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
    Ok(map)
}

/// Why a wave's targets are claimed for sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Claim {
    /// The wave starts.
    Start,
    /// Its start was interrupted (a crash, a lost connection): the rest of its targets.
    Resume,
    /// Devices that appeared after the rollout started joined it while under way.
    TakeIn,
}

/// Marks wave `wave` as under way (when `resume` is false) and answers its devices whose target
/// is still to set, in one transaction with the wave's event. A crash can stop a wave's start
/// at any point; the wave is then resumed by the next step: a device never sent is sent, one
/// that was being sent is taken as set when its state carries the version (its request reached
/// the service before the crash), else sent again. So each target goes to the service once.
pub(super) fn claim_wave(
    db: &FleetDb,
    scope: Scope,
    row: &Row,
    wave: u32,
    claim: Claim,
    now: i64,
) -> Result<Vec<Uuid>> {
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    if claim == Claim::Start {
        tx.execute(
            "UPDATE rollouts SET current_wave = ?2, updated_at = ?3, wave_started_at = ?3, hold = NULL WHERE id = ?1",
            params![row.id, wave, now],
        )?;
    }
    let found = tx.execute(
        "UPDATE rollout_devices SET set_at = ?3
         WHERE rollout = ?1 AND wave = ?2 AND set_at IS NULL AND error IS NULL AND sending_at IS NOT NULL
           AND device_id IN (SELECT device_id FROM states WHERE scope = ?4 AND module_id = ?5 AND target IS ?6)",
        params![row.id, wave, now, scope.0, row.module_id, row.version],
    )? as u32;
    let to_send: Vec<Uuid> = {
        let mut stmt = tx.prepare_cached(
            "SELECT device_id FROM rollout_devices WHERE rollout = ?1 AND wave = ?2 AND set_at IS NULL AND error IS NULL",
        )?;
        let rows = stmt.query_map(params![row.id, wave], |r| r.get::<_, String>(0))?;
        rows.filter_map(|r| r.ok()?.parse().ok()).collect()
    };
    let message = match claim {
        Claim::Resume => format!(
            "Wave {} resumed after an interruption: {found} targets found set on the service, {} to set",
            wave + 1,
            to_send.len()
        ),
        Claim::Start => format!("Wave {} starting: {} targets to set", wave + 1, to_send.len()),
        Claim::TakeIn => format!("Wave {}: {} targets of devices taken in to set", wave + 1, to_send.len()),
    };
    event(&tx, &row.id, now, &message)?;
    tx.commit()?;
    Ok(to_send)
}

/// Marks `devices` as being sent under `lease`, with its fencing number (committed before their
/// requests go out, so that after a crash only these are in doubt). Refused, nothing marked,
/// unless the lease is still the rollout's and the rollout running ([`check_and_renew`]).
pub(super) fn mark_sending(db: &FleetDb, id: &str, devices: &[Uuid], lease: &Lease) -> Result<()> {
    let mut conn = db.conn();
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    check_and_renew(&tx, lease)?;
    {
        let now = now_ms();
        let mut mark = tx.prepare_cached(
            "UPDATE rollout_devices SET sending_at = ?3, sent_fence = ?4 WHERE rollout = ?1 AND device_id = ?2",
        )?;
        for d in devices {
            mark.execute(params![id, d.to_string(), now, lease.fence])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Records what setting some of a wave's targets answered, in one transaction: the states the
/// service answered, and each device's set time or refusal.
pub(super) fn record_sets(db: &FleetDb, scope: Scope, id: &str, results: &[SetResult]) -> Result<()> {
    let states: Vec<FirmwareState> = results.iter().filter_map(|(_, r)| r.as_ref().ok().cloned().flatten()).collect();
    let mut conn = db.conn();
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    crate::fleet::states::write_answers(&tx, scope, &states)?;
    {
        let now = now_ms();
        let mut ok =
            tx.prepare_cached("UPDATE rollout_devices SET set_at = ?3 WHERE rollout = ?1 AND device_id = ?2")?;
        let mut err =
            tx.prepare_cached("UPDATE rollout_devices SET error = ?3 WHERE rollout = ?1 AND device_id = ?2")?;
        for (device, result) in results {
            match result {
                Ok(_) => ok.execute(params![id, device.to_string(), now])?,
                Err(e) => err.execute(params![id, device.to_string(), e.to_string()])?,
            };
        }
    }
    tx.commit()?;
    Ok(())
}

/// Records that wave `wave`'s targets are all sent, with how many were set and refused (also
/// those recorded before an interruption). Answers the two counts.
pub(super) fn wave_started(db: &FleetDb, id: &str, wave: u32, version: &str) -> Result<(u32, u32)> {
    let conn = db.conn();
    let (set, refused, first): (u32, u32, Option<String>) = conn.query_row(
        "SELECT coalesce(sum(set_at IS NOT NULL), 0), coalesce(sum(error IS NOT NULL), 0), min(error)
         FROM rollout_devices WHERE rollout = ?1 AND wave = ?2",
        params![id, wave],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let mut message = format!("Wave {} started: target {version} set on {set} devices", wave + 1);
    if let Some(why) = first {
        message.push_str(&format!("; {refused} refused (for example: {why})"));
    }
    event(&conn, id, now_ms(), &message)?;
    Ok((set, refused))
}
