//! Devices that appear after a rollout started: a device whose state of the module this console
//! first saw after the rollout was created (a refresh brought it), that the rollout's choice
//! (all devices of the module, or its filter) names, that does not already run the version and
//! that no running or paused rollout of the module has. The plan says where they go: nowhere,
//! the wave under way, or the next one.

use std::collections::HashSet;

use dcs_api::Client;
use rusqlite::params;
use uuid::Uuid;

use super::plan::{DeviceChoice, LateDevices};
use super::preview::query_ids;
use super::store::{event, taken, Row};
use crate::fleet::{FleetDb, Result, Scope};

/// Takes the late devices of a running rollout into their wave; answers the wave and how many
/// joined (none when no device joined or the plan leaves them out).
pub(super) async fn take_in(
    client: &Client,
    db: &FleetDb,
    scope: Scope,
    row: &Row,
    now_ms: i64,
) -> Result<Option<(u32, u32)>> {
    if row.late == LateDevices::None || row.waves.is_empty() {
        return Ok(None);
    }
    let mut fresh = late_states(db, scope, row)?;
    if fresh.is_empty() {
        return Ok(None);
    }
    match &row.devices {
        DeviceChoice::All => {}
        // The filter as the device table applies it now (its device match asks the service).
        DeviceChoice::Query { query, selection } => {
            let named: HashSet<Uuid> =
                query_ids(client, db, scope, &row.module_id, query, selection.as_ref()).await?.into_iter().collect();
            fresh.retain(|(d, _)| named.contains(d));
        }
        // A pasted list is fixed (the preview refuses the plan).
        DeviceChoice::List { .. } => return Ok(None),
    }
    if fresh.is_empty() {
        return Ok(None);
    }
    let last = row.waves.len() as i32 - 1;
    let wave = match row.late {
        LateDevices::Current => row.current.max(0),
        _ => (row.current + 1).min(last),
    } as u32;
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    let mut joined = 0u32;
    {
        // Checked in the transaction: another rollout may have taken one since.
        let others = taken(&tx, scope, &row.module_id, fresh.iter().map(|(d, _)| *d))?;
        let mut insert = tx.prepare_cached(
            "INSERT OR IGNORE INTO rollout_devices (rollout, device_id, wave, previous_target) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (device, target) in fresh.iter().filter(|(d, _)| !others.contains(d)) {
            joined += insert.execute(params![row.id, device.to_string(), wave, target])? as u32;
        }
    }
    if joined == 0 {
        return Ok(None);
    }
    let when = if wave as i32 == row.current { "under way" } else { "next" };
    event(
        &tx,
        &row.id,
        now_ms,
        &format!(
            "Took in {joined} {} that appeared after the start into wave {} ({when})",
            if joined == 1 { "device" } else { "devices" },
            wave + 1
        ),
    )?;
    tx.commit()?;
    Ok(Some((wave, joined)))
}

/// The module's devices first seen after the rollout was created that it does not have and that
/// do not run its version, with their target now.
fn late_states(db: &FleetDb, scope: Scope, row: &Row) -> Result<Vec<(Uuid, Option<String>)>> {
    let conn = db.conn();
    let mut stmt = conn.prepare_cached(
        "SELECT s.device_id, s.target FROM states s
         WHERE s.scope = ?1 AND s.module_id = ?2 AND s.seen_at > ?3 AND s.current IS NOT ?4
           AND NOT EXISTS (SELECT 1 FROM rollout_devices d WHERE d.rollout = ?5 AND d.device_id = s.device_id)",
    )?;
    let rows = stmt.query_map(params![scope.0, row.module_id, row.created, row.version, row.id], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
    })?;
    let mut out = Vec::new();
    for r in rows {
        let (d, target) = r?;
        if let Ok(d) = d.parse() {
            out.push((d, target));
        }
    }
    Ok(out)
}
