//! Copying a scope's firmware states into the fleet database, page by page.
//!
//! A **full scan** reads every state in the service's default order (device, then module) and
//! then forgets states the service no longer has. An **incremental refresh** asks only for
//! states modified since a watermark (`modifiedSince`, simulator assumption A-41).
//!
//! The watermark is in the service's clock, never this computer's: before reading, one request
//! asks for the most recently modified state (`sort=-modifiedAt&limit=1`), and its time becomes
//! the next refresh's starting point. A state has no `modifiedAt` member (section 2.5), so that
//! time is the later of its target's and its status's times. Every change made after that probe
//! is stamped at or after it, so the next refresh sees it even if this one missed it; the next
//! refresh also reaches back [`OVERLAP`] before it, for changes stamped just before the probe but
//! committed after it. Reading in the device order keeps paging sound while states change: a
//! state's modification time only grows, so the set `modifiedSince` selects only gains members
//! during a scan, and the offsets of the `next` links never skip one (at worst a state is read
//! twice, which the upsert absorbs).

use std::collections::HashSet;
use std::time::Instant;

use dcs_api::firmware::{Embed, ModuleFilter, PackageFilter, StateFilter};
use dcs_api::model::{FirmwareState, Page};
use dcs_api::Client;
use futures::TryStreamExt;
use rusqlite::params;
use serde::Serialize;
use time::OffsetDateTime;
use tokio_util::sync::CancellationToken;
use url::Url;
use uuid::Uuid;

use super::{now_ms, to_ms, FleetDb, FleetError, Result, Scope};

/// How far before the watermark an incremental refresh reaches back (in the service's clock).
pub const OVERLAP_MS: i64 = 2 * 60 * 1000;
/// States asked for per page: the simulator's maximum (the reference shows none). A service that
/// refuses it is asked again by the client's pager with a size it accepts, or its default.
pub const PAGE_SIZE: u32 = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum ScanKind {
    Full,
    Incremental,
}

/// Where a running scan is.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ScanProgress {
    pub kind: ScanKind,
    pub pages: u32,
    pub states: u32,
    /// States the scope held after its last full scan: the service never says how many there are.
    pub expected: Option<u32>,
    pub elapsed_ms: u32,
}

/// What a finished scan did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ScanReport {
    pub kind: ScanKind,
    pub pages: u32,
    /// States read (a state read twice counts twice).
    pub states: u32,
    /// States whose version, target or status differ from what the database held.
    pub changed: u32,
    /// States the service no longer has, removed (full scans only).
    pub removed: u32,
    pub elapsed_ms: u32,
    /// The next refresh's `modifiedSince` (RFC 3339), if the service has any state.
    pub watermark: Option<String>,
}

/// The later of a state's two modification times (it has no `modifiedAt` of its own).
pub fn modified_at(s: &FirmwareState) -> Option<OffsetDateTime> {
    match (
        s.target_firmware_version_modified_at,
        s.firmware_update_status_modified_at,
    ) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Refreshes `scope` from the service: incrementally when a watermark is known and `kind` is
/// [`ScanKind::Incremental`], else with a full scan. Progress is reported after every page;
/// `cancel` stops between pages (what was read stays, the watermark does not move).
pub async fn refresh(
    client: &Client,
    db: &FleetDb,
    scope: Scope,
    kind: ScanKind,
    cancel: &CancellationToken,
    progress: impl Fn(&ScanProgress),
) -> Result<ScanReport> {
    let started = Instant::now();
    let watermark: Option<i64> = db.conn().query_row(
        "SELECT watermark FROM scopes WHERE id = ?1",
        [scope.0],
        |r| r.get(0),
    )?;
    let kind = match (kind, watermark) {
        (ScanKind::Incremental, Some(_)) => ScanKind::Incremental,
        _ => ScanKind::Full,
    };
    let expected = match kind {
        ScanKind::Full => {
            let n: i64 = db.conn().query_row(
                "SELECT count(*) FROM states WHERE scope = ?1",
                [scope.0],
                |r| r.get(0),
            )?;
            (n > 0).then_some(n as u32)
        }
        ScanKind::Incremental => None,
    };
    let firmware = client.firmware();

    // The service's latest modification before reading: the next watermark.
    let probe = StateFilter {
        sort: Some("-modifiedAt".into()),
        limit: Some(1),
        ..Default::default()
    };
    let (latest, _) = cancellable(cancel, firmware.states_page(&probe)).await??;
    let next_watermark = latest.items.first().and_then(modified_at).map(to_ms);

    if kind == ScanKind::Full {
        cancellable(cancel, refresh_catalogue(client, db, scope)).await??;
    }

    let mut filter = StateFilter {
        limit: Some(PAGE_SIZE),
        ..Default::default()
    };
    if kind == ScanKind::Incremental {
        filter.modified_since = watermark.map(|w| super::from_ms(w - OVERLAP_MS));
    }
    // A page size the service refuses is asked again by the client's pager (dcs_api::paging).
    let first = cancellable(cancel, firmware.states_page(&filter)).await??;

    // The keys a full scan sees, to forget afterwards the states the service no longer has
    // (not needed when the scope held none).
    let mut seen: Option<HashSet<(Uuid, Uuid)>> = (kind == ScanKind::Full && expected.is_some()).then(HashSet::new);
    let mut report = ScanReport {
        kind,
        pages: 0,
        states: 0,
        changed: 0,
        removed: 0,
        elapsed_ms: 0,
        watermark: None,
    };
    let mut page: (Page<FirmwareState>, Option<Url>) = first;
    loop {
        let (items, next) = (page.0.items, page.1);
        // Ask for the next page while this one is written.
        let pending = next.map(|url| {
            let client = client.clone();
            tokio::spawn(async move { client.firmware().states_page_at(&url).await })
        });
        if let Some(seen) = seen.as_mut() {
            seen.extend(items.iter().map(|s| (s.module_id, s.device_id)));
        }
        report.changed += blocking(|| write_page(db, scope, &items))?;
        report.pages += 1;
        report.states += items.len() as u32;
        progress(&ScanProgress {
            kind,
            pages: report.pages,
            states: report.states,
            expected,
            elapsed_ms: started.elapsed().as_millis() as u32,
        });
        let Some(pending) = pending else { break };
        if cancel.is_cancelled() {
            pending.abort();
            return Err(FleetError::Cancelled);
        }
        page = match cancellable(cancel, pending).await? {
            Ok(result) => result?,
            Err(join) => {
                return Err(FleetError::Conflict(format!(
                    "the page request stopped: {join}"
                )))
            }
        };
    }

    if kind == ScanKind::Full {
        if let Some(seen) = &seen {
            report.removed = blocking(|| forget_unseen(db, scope, seen))?;
        }
    }
    let conn = db.conn();
    if kind == ScanKind::Full {
        conn.execute(
            "UPDATE scopes SET watermark = ?2, last_full_at = ?3, last_refresh_at = ?3 WHERE id = ?1",
            params![scope.0, next_watermark, now_ms()],
        )?;
    } else {
        conn.execute(
            "UPDATE scopes SET watermark = COALESCE(?2, watermark), last_refresh_at = ?3 WHERE id = ?1",
            params![scope.0, next_watermark, now_ms()],
        )?;
    }
    report.watermark = next_watermark.map(super::ms_to_text);
    report.elapsed_ms = started.elapsed().as_millis() as u32;
    Ok(report)
}

/// Runs `fut` unless `cancel` fires first.
async fn cancellable<T>(
    cancel: &CancellationToken,
    fut: impl std::future::Future<Output = T>,
) -> Result<T> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(FleetError::Cancelled),
        out = fut => Ok(out),
    }
}

/// Writes states in one transaction, touching only rows that differ from what the database
/// holds (an unchanged state costs one lookup). Answers how many states were new or changed.
pub fn write_page(db: &FleetDb, scope: Scope, items: &[FirmwareState]) -> Result<u32> {
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    let mut changed = 0u32;
    {
        let mut upsert = tx.prepare_cached(
            "INSERT INTO states (scope, module_id, device_id, spec_id, client_id, project_id, current, target,
                                 target_at, status, details, status_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
             ON CONFLICT (scope, module_id, device_id) DO UPDATE SET
                 spec_id = excluded.spec_id, client_id = excluded.client_id, project_id = excluded.project_id,
                 current = excluded.current, target = excluded.target, target_at = excluded.target_at,
                 status = excluded.status, details = excluded.details, status_at = excluded.status_at
             WHERE states.current IS NOT excluded.current OR states.target IS NOT excluded.target
                OR states.status IS NOT excluded.status OR states.status_at IS NOT excluded.status_at
                OR states.target_at IS NOT excluded.target_at OR states.details IS NOT excluded.details
                OR states.spec_id IS NOT excluded.spec_id OR states.client_id IS NOT excluded.client_id
                OR states.project_id IS NOT excluded.project_id",
        )?;
        for s in items {
            changed += upsert.execute(params![
                scope.0,
                s.module_id.to_string(),
                s.device_id.to_string(),
                s.device_specification_id.map(|u| u.to_string()),
                s.client_id.map(|u| u.to_string()),
                s.project_id.map(|u| u.to_string()),
                s.current_firmware_version,
                s.target_firmware_version,
                s.target_firmware_version_modified_at.map(to_ms),
                s.firmware_update_status.as_ref().map(|st| st.as_str()),
                s.firmware_update_status_details,
                s.firmware_update_status_modified_at.map(to_ms),
            ])? as u32;
        }
    }
    tx.commit()?;
    Ok(changed)
}

/// After a full scan: forgets the states of `scope` it did not see (the service no longer has
/// them). Answers how many.
fn forget_unseen(db: &FleetDb, scope: Scope, seen: &HashSet<(Uuid, Uuid)>) -> Result<u32> {
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    let gone: Vec<(String, String)> = {
        let mut stmt = tx.prepare("SELECT module_id, device_id FROM states WHERE scope = ?1")?;
        let rows = stmt.query_map([scope.0], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut gone = Vec::new();
        for row in rows {
            let (m, d) = row?;
            let key = (m.parse().unwrap_or_default(), d.parse().unwrap_or_default());
            if !seen.contains(&key) {
                gone.push((m, d));
            }
        }
        gone
    };
    {
        let mut delete = tx.prepare("DELETE FROM states WHERE scope = ?1 AND module_id = ?2 AND device_id = ?3")?;
        for (m, d) in &gone {
            delete.execute(params![scope.0, m, d])?;
        }
    }
    tx.commit()?;
    Ok(gone.len() as u32)
}

/// Runs blocking database work without holding up the async runtime's other tasks (on a
/// multi-threaded runtime, as the app's; inline on a single-threaded one).
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// Modules, their packages (versions, and whether the firmware file is there) and the names of
/// the device specifications, for the dashboard's labels and the rollout's version choice.
pub async fn refresh_catalogue(client: &Client, db: &FleetDb, scope: Scope) -> Result<()> {
    let firmware = client.firmware();
    let modules: Vec<_> = firmware
        .modules(&ModuleFilter {
            limit: Some(PAGE_SIZE),
            ..Default::default()
        })?
        .try_collect()
        .await?;
    let filter = PackageFilter {
        embed: vec![Embed::DeviceSpecification],
        limit: Some(PAGE_SIZE),
        ..Default::default()
    };
    let packages: Vec<_> = firmware.packages(&filter)?.try_collect().await?;
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM modules WHERE scope = ?1", [scope.0])?;
    tx.execute("DELETE FROM packages WHERE scope = ?1", [scope.0])?;
    for m in &modules {
        tx.execute(
            "INSERT INTO modules (scope, module_id, name, spec_id) VALUES (?1, ?2, ?3, ?4)",
            params![
                scope.0,
                m.id.to_string(),
                m.name,
                m.device_specification_id.to_string()
            ],
        )?;
    }
    for p in &packages {
        tx.execute(
            "INSERT OR REPLACE INTO packages (scope, module_id, version, has_file) VALUES (?1, ?2, ?3, ?4)",
            params![scope.0, p.module_id.to_string(), p.firmware_version, p.firmware_file_name.is_some()],
        )?;
        if let Some(spec) = p
            .embedded
            .as_ref()
            .and_then(|e| e.device_specification.as_ref())
        {
            tx.execute(
                "INSERT OR REPLACE INTO specs (scope, spec_id, name) VALUES (?1, ?2, ?3)",
                params![scope.0, spec.id.to_string(), spec.name],
            )?;
        }
    }
    tx.commit()?;
    Ok(())
}
