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

use super::{now_ms, to_ms, FleetDb, FleetError, Result, Scope};

/// How far before the watermark an incremental refresh reaches back (in the service's clock).
pub const OVERLAP_MS: i64 = 2 * 60 * 1000;
/// States asked for per page: the simulator's maximum (the reference shows none; a service that
/// refuses it gets its default page size instead).
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
    let first = match cancellable(cancel, firmware.states_page(&filter)).await? {
        Err(e) if e.problem().is_some_and(|p| p.status == Some(400)) && is_about_limit(&e) => {
            filter.limit = None;
            cancellable(cancel, firmware.states_page(&filter)).await??
        }
        other => other?,
    };

    let scan_id = now_ms();
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
        report.changed += write_page(db, scope, scan_id, &items)?;
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

    let conn = db.conn();
    if kind == ScanKind::Full {
        report.removed = conn.execute(
            "DELETE FROM states WHERE scope = ?1 AND scan <> ?2",
            params![scope.0, scan_id],
        )? as u32;
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

fn is_about_limit(e: &dcs_api::Error) -> bool {
    e.problem().is_some_and(|p| {
        p.invalid_params.iter().any(|i| i.name == "limit")
            || p.detail.as_deref().is_some_and(|d| d.contains("limit"))
    })
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

/// Upserts one page in a transaction; answers how many states changed.
pub fn write_page(
    db: &FleetDb,
    scope: Scope,
    scan_id: i64,
    items: &[FirmwareState],
) -> Result<u32> {
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    let mut changed = 0u32;
    {
        let mut upsert = tx.prepare_cached(
            "INSERT INTO states (scope, module_id, device_id, spec_id, client_id, project_id, current, target,
                                 target_at, status, details, status_at, scan)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT (scope, module_id, device_id) DO UPDATE SET
                 spec_id = excluded.spec_id, client_id = excluded.client_id, project_id = excluded.project_id,
                 current = excluded.current, target = excluded.target, target_at = excluded.target_at,
                 status = excluded.status, details = excluded.details, status_at = excluded.status_at,
                 scan = excluded.scan
             RETURNING (SELECT 1)",
        )?;
        let mut before = tx.prepare_cached(
            "SELECT current IS ?4 AND target IS ?5 AND status IS ?6 AND status_at IS ?7
             FROM states WHERE scope = ?1 AND module_id = ?2 AND device_id = ?3",
        )?;
        for s in items {
            let status = s
                .firmware_update_status
                .as_ref()
                .map(|st| st.as_str().to_owned());
            let status_at = s.firmware_update_status_modified_at.map(to_ms);
            let same: Option<bool> = before
                .query_row(
                    params![
                        scope.0,
                        s.module_id.to_string(),
                        s.device_id.to_string(),
                        s.current_firmware_version,
                        s.target_firmware_version,
                        status,
                        status_at
                    ],
                    |r| r.get(0),
                )
                .ok();
            if same != Some(true) {
                changed += 1;
            }
            upsert.query_row(
                params![
                    scope.0,
                    s.module_id.to_string(),
                    s.device_id.to_string(),
                    s.device_specification_id.map(|u| u.to_string()),
                    s.client_id.map(|u| u.to_string()),
                    s.project_id.map(|u| u.to_string()),
                    s.current_firmware_version,
                    s.target_firmware_version,
                    s.target_firmware_version_modified_at.map(to_ms),
                    status,
                    s.firmware_update_status_details,
                    status_at,
                    scan_id
                ],
                |_| Ok(()),
            )?;
        }
    }
    tx.commit()?;
    Ok(changed)
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
