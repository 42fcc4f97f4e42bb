//! What the dashboard shows of a rollout: its waves by outcome, the error budget and the events,
//! read from the database.

use rusqlite::params;
use serde::Serialize;

use super::budget::{failures_before_pause, needed};
use super::hold::{HangWarning, Hold};
use super::lease::DriverView;
use super::plan::DeviceChoice;
use super::plan::{LateDevices, RetryPolicy};
use super::retry::RETRYING;
use super::schedule::Schedule;
use super::store::{load_known, module_name, RolloutState, Row};
use crate::fleet::{ms_to_text, FleetDb, Result, Scope};

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
    /// Failed devices whose retry is scheduled or under way (counted as updating, not failed).
    pub retrying: u32,
    /// Devices retried at least once, and the retries sent.
    pub retried: u32,
    pub retries: u32,
    /// Devices that must succeed before the next wave starts (the last wave: before the
    /// rollout completes), at the rollout's success threshold now.
    pub needed: u32,
}

impl WaveView {
    pub(super) fn finished(&self) -> u32 {
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
    pub schedule: Option<Schedule>,
    /// Waves after the first wait for the operator's "Continue".
    pub approval: bool,
    /// What holds the next wave back now (running rollouts only).
    pub hold: Option<Hold>,
    /// When the current wave started.
    pub wave_started_at: Option<String>,
    /// Minutes without a change in the wave under way before it warns (0: never).
    pub hang_minutes: u32,
    /// The wave under way has not moved for that long (running rollouts only).
    pub hang: Option<HangWarning>,
    pub retry: Option<RetryPolicy>,
    /// Where devices that appear after the start go.
    pub late: LateDevices,
    /// Who moves it on (the holder of its lease), if a driver ever stepped it.
    pub driver: Option<DriverView>,
}

/// The error threshold over the started waves, as [`advance`](super::advance) checks it.
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

pub(super) fn wave_views(conn: &rusqlite::Connection, scope: Scope, row: &Row) -> Result<Vec<WaveView>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT d.wave, count(*),
                sum(d.set_at IS NOT NULL),
                sum(d.error IS NOT NULL),
                sum(d.set_at IS NOT NULL AND s.target IS ?4 AND s.status = 'SUCCEEDED'),
                sum(d.set_at IS NOT NULL AND s.target IS ?4 AND s.status = 'FAILED' AND NOT {RETRYING}),
                sum(d.set_at IS NOT NULL AND (s.target IS NOT ?4 OR s.status = 'CANCELLED')),
                sum(d.set_at IS NOT NULL AND s.target IS ?4 AND s.status = 'FAILED' AND {RETRYING}),
                sum(coalesce(d.retries, 0) > 0),
                sum(coalesce(d.retries, 0))
         FROM rollout_devices d
         LEFT JOIN states s ON s.scope = ?2 AND s.module_id = ?3 AND s.device_id = d.device_id
         WHERE d.rollout = ?1 GROUP BY d.wave ORDER BY d.wave"
    ))?;
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
        Ok((
            r.get::<_, i64>(0)?,
            [
                r.get::<_, i64>(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
                r.get(9)?,
            ],
        ))
    })?;
    for r in rows {
        let (wave, [size, set, refused, ok, failed, replaced, retrying, retried, retries]) = r?;
        if let Some(w) = waves.get_mut(wave as usize) {
            w.size = size as u32;
            w.set = set as u32;
            w.refused = refused as u32;
            w.succeeded = ok as u32;
            w.failed = failed as u32;
            w.replaced = replaced as u32;
            w.retrying = retrying as u32;
            w.retried = retried as u32;
            w.retries = retries as u32;
            w.updating = (set - ok - failed - replaced).max(0) as u32;
            w.needed = needed(w.size, row.success);
        }
    }
    Ok(waves)
}

pub(super) fn total(waves: &[WaveView]) -> WaveView {
    let mut t = WaveView { index: 0, percent: 100.0, started: waves.iter().any(|w| w.started), ..Default::default() };
    for w in waves {
        t.size += w.size;
        t.set += w.set;
        t.succeeded += w.succeeded;
        t.failed += w.failed;
        t.replaced += w.replaced;
        t.updating += w.updating;
        t.refused += w.refused;
        t.retrying += w.retrying;
        t.retried += w.retried;
        t.retries += w.retries;
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
    let module_name = module_name(conn, scope, &row.module_id)?;
    let driver = super::lease::driver_of(conn, &row.id)?;
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
        hold: row.hold.filter(|_| row.state == RolloutState::Running),
        schedule: row.schedule,
        approval: row.approval,
        wave_started_at: row.wave_started.map(ms_to_text),
        hang_minutes: row.hang_minutes,
        hang: row.hang.filter(|_| row.state == RolloutState::Running),
        retry: row.retry,
        late: row.late,
        driver,
    })
}

/// One rollout.
pub fn get(db: &FleetDb, id: &str) -> Result<RolloutView> {
    let conn = db.conn();
    let (scope, row) = load_known(&conn, id)?;
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
