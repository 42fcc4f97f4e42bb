//! What the dashboard reads from the fleet database: the modules and their health, the overview
//! of one module, the device table (filters, sort, windows of rows, CSV) and the history.

use std::collections::BTreeMap;
use std::path::Path;

use dcs_api::firmware::StateFilter;
use dcs_api::model::DeviceId;
use dcs_api::Client;
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, params_from_iter, OptionalExtension};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{ms_to_text, FleetDb, FleetError, Result, Scope};

pub use super::NO_STATUS;
/// Statuses after which nothing more happens until the target changes (simulator, A-37).
pub const FINAL_STATUSES: &[&str] = &["SUCCEEDED", "FAILED", "CANCELLED"];

/// A module with the health of its devices.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ModuleSummary {
    pub module_id: String,
    pub name: String,
    pub spec_id: Option<String>,
    pub spec_name: Option<String>,
    pub devices: u32,
    /// Devices whose current version differs from their target.
    pub drift: u32,
    pub failed: u32,
    /// Devices with an update under way (neither final nor without a target).
    pub updating: u32,
    /// The most common current version and how many run it.
    pub top_version: Option<String>,
    pub top_version_devices: u32,
}

/// One bar of a chart.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Count {
    /// What a filter takes (a version, a status, an id); "none" for absent.
    pub key: String,
    pub label: String,
    pub count: u32,
}

/// Failures that give the same reason.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FailureGroup {
    pub details: String,
    pub count: u32,
    /// The target version the devices failed to reach.
    pub target: Option<String>,
    pub latest: Option<String>,
}

/// The dashboard of one module.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ModuleOverview {
    pub module: ModuleSummary,
    pub by_version: Vec<Count>,
    pub by_status: Vec<Count>,
    pub by_target: Vec<Count>,
    /// Devices per owner (for a reseller acting as itself: its own and its customers').
    pub by_customer: Vec<Count>,
    pub failures: Vec<FailureGroup>,
    /// Versions of the module's packages, and whether their firmware file is uploaded.
    pub packages: Vec<PackageVersion>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PackageVersion {
    pub version: String,
    pub has_file: bool,
}

/// Names for owners' ids (the profile's customers); the rest are shown by id.
pub type Names = BTreeMap<Uuid, String>;

/// Every module with states in `scope`, by specification name then module name.
pub fn modules(db: &FleetDb, scope: Scope) -> Result<Vec<ModuleSummary>> {
    summaries(db, scope, None)
}

/// A counted value (`k1`..`k4` of `state_counts`) as text: absent (an empty blob there) as `none`.
fn key_text(k: &str) -> String {
    format!("CASE WHEN typeof({k}) = 'blob' THEN 'none' ELSE {k} END")
}

/// A counted value as kept: absent as an empty blob.
fn key_null(k: &str) -> String {
    format!("CASE WHEN typeof({k}) = 'blob' THEN NULL ELSE {k} END")
}

/// The summaries of every module of `scope`, or of `only` that one, from the maintained counts
/// (a few rows per module, whatever the number of states) before the names are joined.
fn summaries(db: &FleetDb, scope: Scope, only: Option<&str>) -> Result<Vec<ModuleSummary>> {
    let conn = db.conn();
    // One module's counts are a range of the counts' key (scope, dim, module), every module's
    // the range of the dimension.
    let only_module = if only.is_some() { "AND module_id = ?2" } else { "AND ?2 IS NULL" };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT g.module_id, COALESCE(m.name, g.module_id), COALESCE(m.spec_id, g.spec_id), sp.name,
                g.n, g.drift, g.failed, g.updating
         FROM (SELECT module_id,
                      (SELECT o.k1 FROM state_counts o WHERE o.scope = ?1 AND o.dim = 'o'
                           AND o.module_id = c.module_id AND typeof(o.k1) = 'text'
                       ORDER BY o.k1 DESC LIMIT 1) AS spec_id,
                      sum(n) AS n,
                      sum(CASE WHEN typeof(k2) = 'text' AND k1 IS NOT k2 THEN n ELSE 0 END) AS drift,
                      sum(CASE WHEN k3 = 'FAILED' THEN n ELSE 0 END) AS failed,
                      sum(CASE WHEN typeof(k3) = 'text' AND k3 NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED')
                               THEN n ELSE 0 END) AS updating
               FROM state_counts c WHERE scope = ?1 AND dim = 'g' {only_module}
               GROUP BY module_id HAVING n > 0) g
         LEFT JOIN modules m ON m.scope = ?1 AND m.module_id = g.module_id
         LEFT JOIN specs sp ON sp.scope = ?1 AND sp.spec_id = COALESCE(m.spec_id, g.spec_id)
         ORDER BY sp.name, 2"
    ))?;
    let mut out: Vec<ModuleSummary> = stmt
        .query_map(params![scope.0, only], |r| {
            Ok(ModuleSummary {
                module_id: r.get(0)?,
                name: r.get(1)?,
                spec_id: r.get(2)?,
                spec_name: r.get(3)?,
                devices: r.get::<_, i64>(4)? as u32,
                drift: r.get::<_, i64>(5)? as u32,
                failed: r.get::<_, i64>(6)? as u32,
                updating: r.get::<_, i64>(7)? as u32,
                top_version: None,
                top_version_devices: 0,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut top = conn.prepare_cached(
        "SELECT k1, sum(n) AS n FROM state_counts WHERE scope = ?1 AND module_id = ?2 AND dim = 'g'
             AND typeof(k1) = 'text' GROUP BY k1 ORDER BY n DESC, k1 LIMIT 1",
    )?;
    for m in &mut out {
        if let Some((v, n)) = top
            .query_row(params![scope.0, m.module_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .optional()?
        {
            m.top_version = Some(v);
            m.top_version_devices = n as u32;
        }
    }
    Ok(out)
}

/// The overview of one module, from the maintained counts.
pub fn overview(db: &FleetDb, scope: Scope, module_id: &str, names: &Names) -> Result<ModuleOverview> {
    let module = summaries(db, scope, Some(module_id))?.into_iter().next().ok_or_else(|| {
        FleetError::invalid("moduleId", format!("no states of module {module_id} are known; scan first"))
    })?;
    let conn = db.conn();
    let counts = |dim: &str, k: &str| -> Result<Vec<Count>> {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {}, sum(n) AS n FROM state_counts WHERE scope = ?1 AND module_id = ?2 AND dim = ?3
             GROUP BY 1 ORDER BY n DESC, 1",
            key_text(k)
        ))?;
        let rows = stmt.query_map(params![scope.0, module_id, dim], |r| {
            let key: String = r.get(0)?;
            Ok(Count { label: key.clone(), key, count: r.get::<_, i64>(1)? as u32 })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    };
    let by_version = counts("g", "k1")?;
    let by_status = counts("g", "k3")?;
    let by_target = counts("g", "k2")?;
    let mut by_customer = counts("o", "k2")?;
    for c in &mut by_customer {
        if let Some(name) = c.key.parse::<Uuid>().ok().and_then(|id| names.get(&id)) {
            c.label = name.clone();
        }
    }
    let failures = failure_groups(&conn, scope, module_id)?;
    let packages = packages_of(&conn, scope, module_id)?;
    Ok(ModuleOverview { module, by_version, by_status, by_target, by_customer, failures, packages })
}

/// How failures without details are shown.
const NO_DETAILS: &str = "(no details given)";

/// A module's failed states grouped by details and target, the most first (at most 50). Counts
/// from the maintained counts; the latest of a group from the partial index of failed states
/// (one seek a group).
fn failure_groups(conn: &rusqlite::Connection, scope: Scope, module_id: &str) -> Result<Vec<FailureGroup>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {}, {}, sum(n) FROM state_counts WHERE scope = ?1 AND module_id = ?2 AND dim = 'g' AND k3 = 'FAILED'
         GROUP BY k4, k2",
        key_null("k4"),
        key_null("k2")
    ))?;
    let raw = stmt
        .query_map(params![scope.0, module_id], |r| {
            Ok((r.get::<_, Option<String>>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, i64>(2)? as u32))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut latest = conn.prepare_cached(
        "SELECT status_at FROM states INDEXED BY states_failed
         WHERE scope = ?1 AND module_id = ?2 AND status = 'FAILED' AND details IS ?3 AND target IS ?4
         ORDER BY status_at DESC LIMIT 1",
    )?;
    // Details absent and details given as the placeholder are one group, as shown.
    // Per (details as shown, target): the count and the details as kept.
    type Groups = BTreeMap<(String, Option<String>), (u32, Vec<Option<String>>)>;
    let mut groups = Groups::new();
    for (details, target, n) in raw {
        let g = groups.entry((details.clone().unwrap_or_else(|| NO_DETAILS.into()), target)).or_default();
        g.0 += n;
        g.1.push(details);
    }
    let mut sorted: Vec<_> = groups.into_iter().collect();
    sorted.sort_by(|((d1, t1), (n1, _)), ((d2, t2), (n2, _))| n2.cmp(n1).then(d1.cmp(d2)).then(t1.cmp(t2)));
    sorted.truncate(50);
    let mut out = Vec::with_capacity(sorted.len());
    for ((details, target), (n, raw_details)) in sorted {
        let mut newest: Option<i64> = None;
        for d in raw_details {
            let at: Option<i64> =
                latest.query_row(params![scope.0, module_id, d, target], |r| r.get(0)).optional()?.flatten();
            newest = newest.max(at);
        }
        out.push(FailureGroup { details, target, count: n, latest: newest.map(ms_to_text) });
    }
    Ok(out)
}

fn packages_of(conn: &rusqlite::Connection, scope: Scope, module_id: &str) -> Result<Vec<PackageVersion>> {
    let mut stmt = conn.prepare_cached(
        "SELECT version, has_file FROM packages WHERE scope = ?1 AND module_id = ?2 ORDER BY version",
    )?;
    let rows = stmt
        .query_map(params![scope.0, module_id], |r| Ok(PackageVersion { version: r.get(0)?, has_file: r.get(1)? }))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The package versions of a module known from the last full scan.
pub fn packages(db: &FleetDb, scope: Scope, module_id: &str) -> Result<Vec<PackageVersion>> {
    packages_of(&db.conn(), scope, module_id)
}

/// Devices of every module per owner, for resellers: who has how many devices, drifting, failed.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CustomerSummary {
    pub client_id: Option<String>,
    pub label: String,
    pub devices: u32,
    pub states: u32,
    pub drift: u32,
    pub failed: u32,
}

pub fn customers(db: &FleetDb, scope: Scope, names: &Names) -> Result<Vec<CustomerSummary>> {
    let conn = db.conn();
    let mut stmt = conn.prepare_cached(
        "SELECT client_id, count(DISTINCT device_id), count(*),
                sum(target IS NOT NULL AND current IS NOT target), sum(status = 'FAILED')
         FROM states WHERE scope = ?1 GROUP BY client_id ORDER BY 2 DESC",
    )?;
    let rows = stmt.query_map([scope.0], |r| {
        let id: Option<String> = r.get(0)?;
        Ok(CustomerSummary {
            label: id
                .as_deref()
                .and_then(|i| i.parse::<Uuid>().ok())
                .and_then(|u| names.get(&u).cloned())
                .or_else(|| id.clone())
                .unwrap_or_else(|| "(no owner given)".into()),
            client_id: id,
            devices: r.get::<_, i64>(1)? as u32,
            states: r.get::<_, i64>(2)? as u32,
            drift: r.get::<_, i64>(3)? as u32,
            failed: r.get::<_, i64>(4)? as u32,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The whole scope at a glance (the app's Home): states per update status over every module,
/// devices, drift, and the failures grouped by reason.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FleetHealth {
    /// Firmware states held (one per device and module).
    pub states: u32,
    /// Distinct devices.
    pub devices: u32,
    pub modules: u32,
    /// States per update status ("none": never had a target), the most first.
    pub by_status: Vec<Count>,
    /// States whose current version differs from their target.
    pub drift: u32,
    /// Failed states grouped by reason over every module, the latest failure first.
    pub failures: Vec<FailureReason>,
}

/// Failed states that give the same reason, over every module.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FailureReason {
    pub details: String,
    pub count: u32,
    /// Modules with such a failure.
    pub modules: u32,
    /// The module with the most of them (where to look first).
    pub module_id: String,
    pub latest: Option<String>,
}

/// The scope's health; at most `max_reasons` failure reasons.
pub fn health(db: &FleetDb, scope: Scope, max_reasons: u32) -> Result<FleetHealth> {
    let conn = db.conn();
    let (states, modules, drift) = conn.query_row(
        "SELECT COALESCE(sum(n), 0), count(DISTINCT module_id),
                COALESCE(sum(CASE WHEN typeof(k2) = 'text' AND k1 IS NOT k2 THEN n END), 0)
         FROM state_counts WHERE scope = ?1 AND dim = 'g'",
        [scope.0],
        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)),
    )?;
    // Distinct devices are not counted as the states are written: one walk of the device index.
    let devices: i64 =
        conn.query_row("SELECT count(DISTINCT device_id) FROM states WHERE scope = ?1", [scope.0], |r| r.get(0))?;
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {}, sum(n) AS n FROM state_counts WHERE scope = ?1 AND dim = 'g' GROUP BY 1 ORDER BY n DESC, 1",
        key_text("k3")
    ))?;
    let by_status = stmt
        .query_map([scope.0], |r| {
            let key: String = r.get(0)?;
            Ok(Count { label: key.clone(), key, count: r.get::<_, i64>(1)? as u32 })
        })?
        .collect::<rusqlite::Result<_>>()?;
    // Per reason and module first, so each reason can name the module with the most of it.
    let mut stmt = conn.prepare_cached(
        "SELECT COALESCE(details, '(no details given)'), module_id, count(*), max(status_at)
         FROM states WHERE scope = ?1 AND status = 'FAILED' GROUP BY 1, 2",
    )?;
    // Per reason: the states, the modules, the module with the most and the latest failure (ms).
    let mut reasons: BTreeMap<String, (FailureReason, u32, Option<i64>)> = BTreeMap::new();
    let rows = stmt.query_map([scope.0], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)? as u32, r.get::<_, Option<i64>>(3)?))
    })?;
    for row in rows {
        let (details, module_id, n, latest) = row?;
        let (reason, most, newest) = reasons.entry(details.clone()).or_insert_with(|| {
            (FailureReason { details, count: 0, modules: 0, module_id: module_id.clone(), latest: None }, 0, None)
        });
        reason.count += n;
        reason.modules += 1;
        if n > *most || (n == *most && module_id < reason.module_id) {
            *most = n;
            reason.module_id = module_id;
        }
        *newest = (*newest).max(latest);
    }
    let mut failures: Vec<(FailureReason, Option<i64>)> = reasons
        .into_values()
        .map(|(mut r, _, newest)| {
            r.latest = newest.map(ms_to_text);
            (r, newest)
        })
        .collect();
    // The latest failure first, then the most frequent.
    failures.sort_by(|(a, at), (b, bt)| bt.cmp(at).then(b.count.cmp(&a.count)).then(a.details.cmp(&b.details)));
    let mut failures: Vec<FailureReason> = failures.into_iter().map(|(r, _)| r).collect();
    failures.truncate(max_reasons as usize);
    Ok(FleetHealth {
        states: states as u32,
        devices: devices as u32,
        modules: modules as u32,
        by_status,
        drift: drift as u32,
        failures,
    })
}

// ---------------------------------------------------------------------------------------------
// The device table

/// Filters and order of the device table. Every field is optional; `device` is a device in any
/// of the seven forms (resolved to its UUID first, see [`resolve_device`]) or the start of a UUID.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct DeviceQuery {
    pub module_id: Option<String>,
    /// Current version; "none" for devices that report none.
    pub version: Option<String>,
    pub target: Option<String>,
    /// Update status; "none" for devices that never had a target.
    pub status: Option<String>,
    pub spec_id: Option<String>,
    pub client_id: Option<String>,
    pub device: Option<String>,
    /// Only devices whose current version differs from their target.
    pub drift: bool,
    /// Only stuck devices: a target not reached, and a status (else a target) older than this
    /// time (RFC 3339; the app sends now minus the module's stuck threshold).
    pub stuck_before: Option<String>,
    /// Only the devices of a cell or movement of the last comparison of two moments.
    pub compared: Option<super::compare::ComparedCell>,
    /// A table column, `-` in front for descending: device, module, version, target, status,
    /// statusAt, targetAt.
    pub sort: Option<String>,
}

/// One row of the device table.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeviceRow {
    /// `<deviceId>/<moduleId>`: what the table selects by.
    pub key: String,
    pub device_id: String,
    pub module_id: String,
    pub module: String,
    pub spec: Option<String>,
    pub client_id: Option<String>,
    pub current: Option<String>,
    pub target: Option<String>,
    pub status: Option<String>,
    pub details: Option<String>,
    pub status_at: Option<String>,
    pub target_at: Option<String>,
}

pub const SORT_COLUMNS: &[(&str, &str)] = &[
    ("device", "s.device_id"),
    ("module", "module_name"),
    ("version", "s.current"),
    ("target", "s.target"),
    ("status", "s.status"),
    ("statusAt", "s.status_at"),
    ("targetAt", "s.target_at"),
];

/// Where-clause and parameters of a query (with `s` the states table).
fn where_clause(scope: Scope, q: &DeviceQuery, device: Option<&DeviceMatch>) -> Result<(String, Vec<SqlValue>)> {
    let mut sql = String::from("s.scope = ?");
    let mut args: Vec<SqlValue> = vec![SqlValue::Integer(scope.0)];
    let eq = |sql: &mut String, args: &mut Vec<SqlValue>, column: &str, value: &Option<String>| {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            if v == NO_STATUS && column != "s.module_id" {
                sql.push_str(&format!(" AND {column} IS NULL"));
            } else {
                sql.push_str(&format!(" AND {column} = ?"));
                args.push(SqlValue::Text(v.to_owned()));
            }
        }
    };
    eq(&mut sql, &mut args, "s.module_id", &q.module_id);
    eq(&mut sql, &mut args, "s.current", &q.version);
    eq(&mut sql, &mut args, "s.target", &q.target);
    eq(&mut sql, &mut args, "s.status", &q.status);
    eq(&mut sql, &mut args, "s.spec_id", &q.spec_id);
    eq(&mut sql, &mut args, "s.client_id", &q.client_id);
    if q.drift {
        sql.push_str(" AND s.target IS NOT NULL AND s.current IS NOT s.target");
    }
    if let Some(t) = crate::filters::parse_time("stuckBefore", q.stuck_before.as_deref())? {
        sql.push_str(
            " AND s.target IS NOT NULL AND s.current IS NOT s.target AND COALESCE(s.status_at, s.target_at) < ?",
        );
        args.push(SqlValue::Integer(super::to_ms(t)));
    }
    if let Some(cell) = &q.compared {
        let (cond, more) = cell.condition();
        sql.push_str(&cond);
        args.extend(more);
    }
    match device {
        Some(DeviceMatch::Exact(id)) => {
            sql.push_str(" AND s.device_id = ?");
            args.push(SqlValue::Text(id.to_string()));
        }
        Some(DeviceMatch::Prefix(p)) => {
            sql.push_str(" AND s.device_id >= ? AND s.device_id < ?");
            args.push(SqlValue::Text(p.clone()));
            args.push(SqlValue::Text(format!("{p}\u{10FFFF}")));
        }
        None => {}
    }
    Ok((sql, args))
}

/// The sort asked for: its column and whether descending (`None`: the default order).
fn parse_sort(sort: Option<&str>) -> Result<Option<(&'static str, bool)>> {
    let Some(sort) = sort.filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let (name, desc) = match sort.strip_prefix('-') {
        Some(n) => (n, true),
        None => (sort, false),
    };
    let column = SORT_COLUMNS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c).ok_or_else(|| {
        let names: Vec<&str> = SORT_COLUMNS.iter().map(|(n, _)| *n).collect();
        FleetError::invalid("sort", format!("must be one of {} (with `-` for descending)", names.join(", ")))
    })?;
    Ok(Some((column, desc)))
}

/// The table's order: the column, then device and module, all in the column's direction (a
/// descending sort is the ascending one reversed, absent values last either way).
fn order_clause(sort: Option<&str>) -> Result<String> {
    let Some((column, desc)) = parse_sort(sort)? else {
        return Ok("s.device_id, s.module_id".into());
    };
    let dir = if desc { "DESC" } else { "ASC" };
    Ok(format!("{column} {dir} NULLS LAST, s.device_id {dir}, s.module_id {dir}"))
}

/// How the device filter matches.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceMatch {
    Exact(Uuid),
    /// The start of a device UUID (lower case), at least 4 characters.
    Prefix(String),
}

/// Turns the device filter as typed into a match: a UUID or DVNUUID form directly, an IMEI or
/// DevEUI form through the service (the states list takes every form and answers with the
/// UUID, A-41), or the start of a UUID.
pub async fn resolve_device(client: &Client, raw: &str) -> Result<DeviceMatch> {
    let raw = raw.trim();
    match DeviceId::parse(raw) {
        Ok(id) => {
            if let Some(uuid) = id.as_uuid() {
                return Ok(DeviceMatch::Exact(uuid));
            }
            let filter = StateFilter { device_id: Some(raw.to_owned()), limit: Some(1), ..Default::default() };
            let (page, _) = client.firmware().states_page(&filter).await?;
            match page.items.first() {
                Some(s) => Ok(DeviceMatch::Exact(s.device_id)),
                None => Err(FleetError::invalid("device", format!("the service knows no device {id}"))),
            }
        }
        Err(e) => {
            let lower = raw.to_ascii_lowercase();
            if lower.len() >= 4 && lower.len() < 36 && lower.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
                Ok(DeviceMatch::Prefix(lower))
            } else {
                Err(FleetError::invalid(
                    "device",
                    format!("{e}; or type the start of a device UUID (at least 4 hex characters)"),
                ))
            }
        }
    }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DeviceRow> {
    let device_id: String = r.get(0)?;
    let module_id: String = r.get(1)?;
    Ok(DeviceRow {
        key: format!("{device_id}/{module_id}"),
        device_id,
        module_id,
        module: r.get(2)?,
        spec: r.get(3)?,
        client_id: r.get(4)?,
        current: r.get(5)?,
        target: r.get(6)?,
        status: r.get(7)?,
        details: r.get(8)?,
        status_at: r.get::<_, Option<i64>>(9)?.map(ms_to_text),
        target_at: r.get::<_, Option<i64>>(10)?.map(ms_to_text),
    })
}

/// How many rows match: from the maintained counts when the query filters on at most one
/// counted column (and the module), else from the positions of the query's order (built once,
/// and what the following windows start from).
pub fn count(db: &FleetDb, scope: Scope, q: &DeviceQuery, device: Option<&DeviceMatch>) -> Result<u32> {
    let set = |v: &Option<String>| v.as_deref().filter(|v| !v.is_empty()).map(str::to_owned);
    // The filters as conditions on one grouping's values (all of `g`, or all of `o`).
    let g: Vec<(&str, String)> = [("k1", &q.version), ("k2", &q.target), ("k3", &q.status)]
        .into_iter()
        .filter_map(|(k, v)| set(v).map(|v| (k, v)))
        .collect();
    let o: Vec<(&str, String)> =
        [("k2", &q.client_id), ("k1", &q.spec_id)].into_iter().filter_map(|(k, v)| set(v).map(|v| (k, v))).collect();
    let only_counted = q.compared.is_none() && q.stuck_before.as_deref().is_none_or(str::is_empty);
    if device.is_none() && only_counted && (o.is_empty() || (g.is_empty() && !q.drift)) {
        let (dim, on) = if o.is_empty() { ("g", g) } else { ("o", o) };
        let mut sql = String::from(
            "SELECT COALESCE(sum(n), 0) FROM state_counts WHERE scope = ? AND dim = ? AND (? IS NULL OR module_id = ?)",
        );
        let module = set(&q.module_id);
        let mut args = vec![
            SqlValue::Integer(scope.0),
            SqlValue::Text(dim.into()),
            module.clone().map_or(SqlValue::Null, SqlValue::Text),
            module.map_or(SqlValue::Null, SqlValue::Text),
        ];
        for (k, v) in on {
            sql.push_str(&format!(" AND {k} = ?"));
            args.push(if v == NO_STATUS { SqlValue::Blob(Vec::new()) } else { SqlValue::Text(v) });
        }
        if q.drift {
            sql.push_str(" AND typeof(k2) = 'text' AND k1 IS NOT k2");
        }
        let n: i64 = db.conn().query_row(&sql, params_from_iter(args), |r| r.get(0))?;
        return Ok(n as u32);
    }
    let conn = db.conn();
    let plan = plan(&conn, scope, q, device)?;
    walked(db, &conn, &plan, None, |a| a.total.unwrap_or_default())
}

/// A window of the matching rows in the query's order, at any depth in about the same time: it
/// starts from the nearest of the order's positions (every few hundred rows' keys, found by
/// walking the order's index as deep as a window was asked for, and kept until the data change)
/// and reads on by keyset, skipping fewer rows than lie between two positions. The top of an
/// order costs no walk: a new order, or the same after a refresh changed the states, shows its
/// first rows at once however many there are.
pub fn rows(
    db: &FleetDb,
    scope: Scope,
    q: &DeviceQuery,
    device: Option<&DeviceMatch>,
    offset: u32,
    limit: u32,
) -> Result<Vec<DeviceRow>> {
    let limit = limit.min(5000);
    let conn = db.conn();
    let plan = plan(&conn, scope, q, device)?;
    if limit == 0 {
        // Nothing to show (the query was still checked): no walk down to the offset for it.
        return Ok(Vec::new());
    }
    // The nearest position at or before the offset: its segment, keys and how far it lies before.
    let start = walked(db, &conn, &plan, Some(offset), |a| {
        let mark = (offset / a.every) as usize;
        if a.total.is_some_and(|total| offset >= total) {
            return None;
        }
        a.marks.get(mark).map(|(seg, key)| (*seg, key.clone(), offset - mark as u32 * a.every))
    })?;
    let Some((first, key, mut skip)) = start else {
        return Ok(Vec::new());
    };
    let mut keys: Vec<(String, String)> = Vec::with_capacity(limit as usize);
    for (i, seg) in plan.segments.iter().enumerate().skip(first) {
        let from = (i == first).then_some(key.as_slice());
        let want = limit - keys.len() as u32;
        let mut stmt = conn.prepare_cached(&segment_sql(&plan, seg, from.is_some(), true))?;
        let mut args = plan.args.clone();
        args.extend(seg.args.iter().cloned());
        args.extend(from.into_iter().flatten().cloned());
        // The rows to skip are read and counted here: they may run past the segment's end.
        args.push(SqlValue::Integer((skip + want) as i64));
        let found = stmt.query_map(params_from_iter(args), |r| Ok((r.get(0)?, r.get(1)?)))?;
        for k in found {
            let k = k?;
            if skip > 0 {
                skip -= 1;
            } else {
                keys.push(k);
            }
        }
        if keys.len() as u32 >= limit {
            break;
        }
    }
    let mut one = conn.prepare_cached(
        "SELECT s.device_id, s.module_id, COALESCE(m.name, s.module_id), sp.name,
                s.client_id, s.current, s.target, s.status, s.details, s.status_at, s.target_at
         FROM states s
         LEFT JOIN modules m ON m.scope = s.scope AND m.module_id = s.module_id
         LEFT JOIN specs sp ON sp.scope = s.scope AND sp.spec_id = s.spec_id
         WHERE s.scope = ?1 AND s.module_id = ?2 AND s.device_id = ?3",
    )?;
    keys.iter().map(|(m, d)| Ok(one.query_row(params![scope.0, m, d], row)?)).collect()
}

/// Positions of the device table's recent orders, kept against the data's generation.
pub struct Positions {
    generation: Option<(u64, i64)>,
    orders: std::collections::HashMap<String, Anchors>,
    /// Rows between two positions at the least, and positions kept per order at most
    /// ([`MIN_EVERY`], [`MAX_MARKS`]; smaller in tests).
    spacing: (u32, usize),
    /// Rows stepped through by walks so far (what tests check the walks' depth by).
    stepped: u64,
    /// Rows the connection changed as bookkeeping (FleetDb::bookkeeping): left out of the
    /// generation the positions are kept against.
    bookkept: u64,
}

impl Default for Positions {
    fn default() -> Self {
        Positions {
            generation: None,
            orders: Default::default(),
            spacing: (MIN_EVERY, MAX_MARKS),
            stepped: 0,
            bookkept: 0,
        }
    }
}

impl Positions {
    pub(crate) fn stepped(&self) -> u64 {
        self.stepped
    }

    /// Forgets every position and keeps them `every` rows apart, at most `max_marks` an order.
    pub(crate) fn respace(&mut self, every: u32, max_marks: usize) {
        self.orders.clear();
        self.spacing = (every, max_marks);
    }

    pub(crate) fn bookkeeping(&mut self, rows: u64) {
        self.bookkept += rows;
    }
}

/// The positions of one order found so far: the segment and keys of every `every`-th row from
/// the first, and, once the walk reached the end, the rows in all.
pub(crate) struct Anchors {
    every: u32,
    marks: Vec<(usize, Vec<SqlValue>)>,
    total: Option<u32>,
}

/// At most this many positions are kept per order (more rows: further apart).
const MAX_MARKS: usize = 4096;
/// Rows between two positions at the least (the walk notes one row in this many).
const MIN_EVERY: u32 = 32;
/// Orders kept at once.
const MAX_ORDERS: usize = 16;

/// A query's order as runs of one index each: the rows of `cond` in the order of `keys` (every
/// key in the plan's direction), through `index` where given.
struct Segment {
    cond: String,
    args: Vec<SqlValue>,
    keys: Vec<&'static str>,
    index: Option<&'static str>,
}

struct Plan {
    filter: String,
    args: Vec<SqlValue>,
    desc: bool,
    segments: Vec<Segment>,
    /// What the positions are kept under.
    id: String,
}

/// The index of a sortable column (mod.rs), ordered by the column, device and module.
fn column_index(column: &str) -> Option<&'static str> {
    Some(match column {
        "s.current" => "states_by_current",
        "s.target" => "states_by_target",
        "s.status" => "states_by_status",
        "s.status_at" => "states_by_status_at",
        "s.target_at" => "states_by_target_at",
        _ => return None,
    })
}

fn plan(conn: &rusqlite::Connection, scope: Scope, q: &DeviceQuery, device: Option<&DeviceMatch>) -> Result<Plan> {
    let (filter, args) = where_clause(scope, q, device)?;
    let sort = parse_sort(q.sort.as_deref())?;
    let desc = sort.is_some_and(|(_, d)| d);
    // In device order, an equality filter on an indexed column walks that column's index (its
    // rows of one value are in device order).
    let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
    let by_filter = if set(&q.status) {
        Some("states_by_status")
    } else if set(&q.version) {
        Some("states_by_current")
    } else if set(&q.target) {
        Some("states_by_target")
    } else {
        None
    };
    let device_keys = vec!["s.device_id", "s.module_id"];
    // Sorted by a column the filter fixes: in device order (the order within one value).
    let fixed = |column: &str| match column {
        "s.status" => set(&q.status),
        "s.current" => set(&q.version),
        "s.target" => set(&q.target),
        _ => false,
    };
    let sort = sort.map(|(column, d)| if fixed(column) { ("s.device_id", d) } else { (column, d) });
    let segments = match sort {
        None | Some(("s.device_id", _)) => vec![Segment {
            cond: "1".into(),
            args: vec![],
            keys: device_keys,
            index: by_filter.or(Some("states_device_order")),
        }],
        Some(("module_name", _)) => {
            // A module at a time, by name (modules of one name together).
            let mut stmt = conn.prepare_cached(
                "SELECT COALESCE(m.name, c.module_id) AS name, c.module_id
                 FROM (SELECT DISTINCT module_id FROM state_counts WHERE scope = ?1) c
                 LEFT JOIN modules m ON m.scope = ?1 AND m.module_id = c.module_id
                 WHERE ?2 IS NULL OR c.module_id = ?2 ORDER BY 1, 2",
            )?;
            let only = q.module_id.as_deref().filter(|m| !m.is_empty());
            let named = stmt
                .query_map(params![scope.0, only], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut segments: Vec<Segment> = Vec::new();
            let mut last: Option<String> = None;
            for (name, module) in named {
                if last.as_ref() == Some(&name) {
                    let seg = segments.last_mut().expect("a segment of this name");
                    seg.cond = format!("s.module_id IN ({})", vec!["?"; seg.args.len() + 1].join(", "));
                    seg.args.push(SqlValue::Text(module));
                    seg.index = by_filter;
                } else {
                    segments.push(Segment {
                        cond: "s.module_id = ?".into(),
                        args: vec![SqlValue::Text(module)],
                        keys: device_keys.clone(),
                        index: by_filter,
                    });
                }
                last = Some(name);
            }
            if desc {
                segments.reverse();
            }
            segments
        }
        Some((column, _)) => vec![
            Segment {
                cond: format!("{column} IS NOT NULL"),
                args: vec![],
                keys: vec![column, "s.device_id", "s.module_id"],
                index: column_index(column),
            },
            Segment { cond: format!("{column} IS NULL"), args: vec![], keys: device_keys, index: column_index(column) },
        ],
    };
    for index in segments.iter().filter_map(|s| s.index) {
        super::ensure_index(conn, index)?;
    }
    let id = format!("{filter} {args:?} {:?}", q.sort);
    Ok(Plan { filter, args, desc, segments, id })
}

/// The rows of a segment in order: their module and device (then the other keys), from the
/// keys given (inclusive) when `from`, the first few of them when `window` (LIMIT last).
fn segment_sql(plan: &Plan, seg: &Segment, from: bool, window: bool) -> String {
    let dir = if plan.desc { "DESC" } else { "ASC" };
    let keys = seg.keys.join(", ");
    let order: Vec<String> = seg.keys.iter().map(|k| format!("{k} {dir}")).collect();
    let indexed = seg.index.map(|i| format!("INDEXED BY {i}")).unwrap_or_default();
    let start = if from {
        format!(" AND ({keys}) {} ({})", if plan.desc { "<=" } else { ">=" }, vec!["?"; seg.keys.len()].join(", "))
    } else {
        String::new()
    };
    format!(
        "SELECT s.module_id, s.device_id, {keys} FROM states s {indexed} WHERE {} AND {}{start} ORDER BY {}{}",
        plan.filter,
        seg.cond,
        order.join(", "),
        if window { " LIMIT ?" } else { "" }
    )
}

/// Answers `answer` of `plan`'s positions once they reach past row `until` (or the end; `None`:
/// to the end). Positions are kept while the data are unchanged; a walk goes on from the last
/// one found, as deep as asked and no deeper.
fn walked<T>(
    db: &FleetDb,
    conn: &rusqlite::Connection,
    plan: &Plan,
    until: Option<u32>,
    answer: impl FnOnce(&Anchors) -> T,
) -> Result<T> {
    let (changes, other) = FleetDb::generation(conn)?;
    let mut kept = db.windows.lock().unwrap_or_else(|p| p.into_inner());
    let kept = &mut *kept;
    let generation = (changes - kept.bookkept, other);
    if kept.generation != Some(generation) {
        kept.orders.clear();
        kept.generation = Some(generation);
    }
    if !kept.orders.contains_key(&plan.id) && kept.orders.len() >= MAX_ORDERS {
        kept.orders.clear();
    }
    let (every, max_marks) = kept.spacing;
    let anchors =
        kept.orders.entry(plan.id.clone()).or_insert_with(|| Anchors { every, marks: Vec::new(), total: None });
    walk(conn, plan, anchors, until, max_marks, &mut kept.stepped)?;
    Ok(answer(anchors))
}

/// Walks `plan`'s order on from the last position in `a` until past row `until` or the end,
/// noting a position every `a.every` rows (twice as far apart, and half of them dropped, when
/// more than `max_marks`).
fn walk(
    conn: &rusqlite::Connection,
    plan: &Plan,
    a: &mut Anchors,
    until: Option<u32>,
    max_marks: usize,
    stepped: &mut u64,
) -> Result<()> {
    let reached = |a: &Anchors| a.total.is_some() || until.is_some_and(|u| (a.marks.len() as u32) * a.every > u);
    if reached(a) {
        return Ok(());
    }
    // From the last position (its own row again, already counted), else from the first row.
    let (first, mut from) = match a.marks.last() {
        Some((seg, key)) => (*seg, Some(key.clone())),
        None => (0, None),
    };
    let mut row = a.marks.len().saturating_sub(1) as u32 * a.every;
    for (i, seg) in plan.segments.iter().enumerate().skip(first) {
        let from = from.take();
        let mut stmt = conn.prepare_cached(&segment_sql(plan, seg, from.is_some(), false))?;
        let mut args = plan.args.clone();
        args.extend(seg.args.iter().cloned());
        args.extend(from.into_iter().flatten());
        let mut found = stmt.query(params_from_iter(args))?;
        while let Some(r) = found.next()? {
            *stepped += 1;
            if row == a.marks.len() as u32 * a.every {
                let key = (0..seg.keys.len()).map(|k| r.get::<_, SqlValue>(k + 2)).collect::<rusqlite::Result<_>>()?;
                a.marks.push((i, key));
                if a.marks.len() > max_marks {
                    a.marks = std::mem::take(&mut a.marks).into_iter().step_by(2).collect();
                    a.every *= 2;
                }
            }
            row += 1;
            if reached(a) {
                return Ok(());
            }
        }
    }
    a.total = Some(row);
    Ok(())
}

/// Walks `q`'s order on by `step` rows past its deepest position kept (a step of 0 walks
/// nothing); answers whether rows are left past the positions. `since` holds the data's
/// generation the walk began under: once the data changed (a write dropped the positions), it
/// answers false without walking, so a walk never starts over under a scan's writes.
pub fn walk_on(
    db: &FleetDb,
    scope: Scope,
    q: &DeviceQuery,
    device: Option<&DeviceMatch>,
    step: u32,
    since: &mut Option<(u64, i64)>,
) -> Result<bool> {
    let conn = db.conn();
    let plan = plan(&conn, scope, q, device)?;
    let depth = walked(db, &conn, &plan, Some(0), |a| a.total.is_none().then_some(a.marks.len() as u32 * a.every))?;
    let now = db.windows.lock().unwrap_or_else(|p| p.into_inner()).generation;
    if since.is_some_and(|g| Some(g) != now) {
        return Ok(false);
    }
    *since = now;
    match depth {
        Some(depth) if step > 0 => walked(db, &conn, &plan, Some(depth.saturating_add(step)), |a| a.total.is_none()),
        depth => Ok(depth.is_some()),
    }
}

/// [`rows`] by `LIMIT ... OFFSET`: every row before the window is walked. What the windows are
/// checked against (tests, benchmark).
pub fn rows_by_offset(
    db: &FleetDb,
    scope: Scope,
    q: &DeviceQuery,
    device: Option<&DeviceMatch>,
    offset: u32,
    limit: u32,
) -> Result<Vec<DeviceRow>> {
    let (filter, mut args) = where_clause(scope, q, device)?;
    let order = order_clause(q.sort.as_deref())?;
    // The window is cut on the states alone (an index walk past `offset` keys), and only its rows
    // are joined to the names: joining first would join every row skipped.
    let (inner_join, inner_order) = if order.contains("module_name") {
        (
            "LEFT JOIN modules m ON m.scope = s.scope AND m.module_id = s.module_id",
            order.replace("module_name", "COALESCE(m.name, s.module_id)"),
        )
    } else {
        ("", order.clone())
    };
    args.push(SqlValue::Integer(limit.min(5000) as i64));
    args.push(SqlValue::Integer(offset as i64));
    args.push(SqlValue::Integer(scope.0));
    let conn = db.conn();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT s.device_id, s.module_id, COALESCE(m.name, s.module_id) AS module_name, sp.name,
                s.client_id, s.current, s.target, s.status, s.details, s.status_at, s.target_at
         FROM (SELECT s.module_id AS km, s.device_id AS kd FROM states s {inner_join}
               WHERE {filter} ORDER BY {inner_order} LIMIT ? OFFSET ?) w
         JOIN states s ON s.scope = ? AND s.module_id = w.km AND s.device_id = w.kd
         LEFT JOIN modules m ON m.scope = s.scope AND m.module_id = s.module_id
         LEFT JOIN specs sp ON sp.scope = s.scope AND sp.spec_id = s.spec_id
         ORDER BY {order}"
    ))?;
    let rows = stmt.query_map(params_from_iter(args), row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Rows chosen in the table: all that match the query except `keys`, or only `keys`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    pub all: bool,
    /// `<deviceId>/<moduleId>` keys ([`DeviceRow::key`]).
    pub keys: Vec<String>,
}

/// Every selected row, in the query's order.
pub fn selected(
    db: &FleetDb,
    scope: Scope,
    q: &DeviceQuery,
    device: Option<&DeviceMatch>,
    sel: &Selection,
) -> Result<Vec<DeviceRow>> {
    const WINDOW: u32 = 5000;
    let keys: std::collections::HashSet<&str> = sel.keys.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    let mut offset = 0u32;
    loop {
        let batch = rows(db, scope, q, device, offset, WINDOW)?;
        let n = batch.len() as u32;
        out.extend(batch.into_iter().filter(|r| keys.contains(r.key.as_str()) != sel.all));
        if n < WINDOW {
            break;
        }
        offset += n;
    }
    Ok(out)
}

/// Writes the selected rows (or every matching row) as CSV; answers the number of rows.
pub fn write_csv(
    db: &FleetDb,
    scope: Scope,
    q: &DeviceQuery,
    device: Option<&DeviceMatch>,
    sel: Option<&Selection>,
    names: &Names,
    path: &Path,
) -> Result<u32> {
    let rows = selected(db, scope, q, device, sel.unwrap_or(&Selection { all: true, keys: Vec::new() }))?;
    let fail = |e: dcs_api::Error| FleetError::invalid("path", format!("could not write {}: {e}", path.display()));
    let mut w = crate::csv_file::CsvFile::create(
        path,
        &[
            "deviceId",
            "moduleId",
            "module",
            "deviceSpecification",
            "clientId",
            "customer",
            "currentFirmwareVersion",
            "targetFirmwareVersion",
            "firmwareUpdateStatus",
            "firmwareUpdateStatusDetails",
            "firmwareUpdateStatusModifiedAt",
            "targetFirmwareVersionModifiedAt",
        ],
    )
    .map_err(fail)?;
    for r in &rows {
        let customer = r.client_id.as_deref().and_then(|c| c.parse::<Uuid>().ok()).and_then(|c| names.get(&c)).cloned();
        let o = |v: &Option<String>| v.clone().unwrap_or_default();
        w.row([
            r.device_id.clone(),
            r.module_id.clone(),
            r.module.clone(),
            o(&r.spec),
            o(&r.client_id),
            customer.unwrap_or_default(),
            o(&r.current),
            o(&r.target),
            o(&r.status),
            o(&r.details),
            o(&r.status_at),
            o(&r.target_at),
        ])
        .map_err(fail)?;
    }
    w.finish().map_err(fail)?;
    Ok(rows.len() as u32)
}

/// Cells that start like a formula are made inert (one rule for every CSV the console writes).
pub use crate::csv_file::inert_cell;

// ---------------------------------------------------------------------------------------------
// History

/// How long an unchanged module goes without a new snapshot (so the timeline still has points).
pub const SNAPSHOT_HEARTBEAT_MS: i64 = 10 * 60 * 1000;

/// Counts per status of every module now, stored as a snapshot at `at` (this computer's clock)
/// where they changed since the module's last snapshot or that one is older than the heartbeat.
/// Answers how many modules got a snapshot.
pub fn snapshot(db: &FleetDb, scope: Scope, at: i64) -> Result<u32> {
    db.bookkeeping(|conn| take_snapshot(conn, scope, at))
}

fn take_snapshot(conn: &mut rusqlite::Connection, scope: Scope, at: i64) -> Result<u32> {
    let tx = conn.transaction()?;
    let mut per_module: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT module_id, {}, sum(n) FROM state_counts WHERE scope = ?1 AND dim = 'g' GROUP BY 1, 2",
            key_text("k3")
        ))?;
        let rows =
            stmt.query_map([scope.0], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))?;
        for row in rows {
            let (module, status, n) = row?;
            per_module.entry(module).or_default().insert(status, n as u32);
        }
    }
    let mut written = 0;
    {
        let mut last = tx.prepare_cached(
            "SELECT taken_at, counts FROM snapshots WHERE scope = ?1 AND module_id = ?2 ORDER BY taken_at DESC LIMIT 1",
        )?;
        let mut insert = tx.prepare_cached(
            "INSERT OR REPLACE INTO snapshots (scope, module_id, taken_at, counts) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (module, counts) in &per_module {
            let text = serde_json::to_string(counts).expect("counts serialise");
            let previous: Option<(i64, String)> =
                last.query_row(params![scope.0, module], |r| Ok((r.get(0)?, r.get(1)?))).optional()?;
            let due = match &previous {
                None => true,
                Some((taken, old)) => *old != text || at - taken >= SNAPSHOT_HEARTBEAT_MS,
            };
            if due {
                insert.execute(params![scope.0, module, at, text])?;
                written += 1;
            }
        }
    }
    tx.commit()?;
    Ok(written)
}

/// One point of the timeline.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct HistoryPoint {
    pub at: String,
    /// Devices per status ("none": no target).
    pub counts: BTreeMap<String, u32>,
}

/// A module's snapshots since `since` (this computer's clock, ms), oldest first, at most
/// `max_points` (evenly thinned, the newest always kept).
pub fn history(
    db: &FleetDb,
    scope: Scope,
    module_id: &str,
    since: Option<i64>,
    max_points: usize,
) -> Result<Vec<HistoryPoint>> {
    let conn = db.conn();
    let mut stmt = conn.prepare_cached(
        "SELECT taken_at, counts FROM snapshots WHERE scope = ?1 AND module_id = ?2 AND taken_at >= ?3 ORDER BY taken_at",
    )?;
    let rows = stmt.query_map(params![scope.0, module_id, since.unwrap_or(0)], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
    })?;
    let all: Vec<(i64, String)> = rows.collect::<rusqlite::Result<_>>()?;
    let step = all.len().div_ceil(max_points.max(2)).max(1);
    let last = all.len().saturating_sub(1);
    Ok(all
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0 || *i == last)
        .map(|(_, (at, counts))| HistoryPoint {
            at: ms_to_text(at),
            counts: serde_json::from_str(&counts).unwrap_or_default(),
        })
        .collect())
}

/// The start of a rollout's wave, for marks on the history timeline.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct WaveStart {
    /// When its first target was set (this computer's clock).
    pub at: String,
    pub rollout_id: String,
    pub version: String,
    /// 1 for the first wave.
    pub wave: u32,
    /// Targets set in the wave so far.
    pub devices: u32,
}

/// The wave starts of a module's rollouts since `since` (ms, this computer's clock), oldest first.
pub fn wave_starts(db: &FleetDb, scope: Scope, module_id: &str, since: Option<i64>) -> Result<Vec<WaveStart>> {
    let conn = db.conn();
    let mut stmt = conn.prepare_cached(
        "SELECT r.id, r.version, d.wave, min(d.set_at) AS at, count(*)
         FROM rollouts r JOIN rollout_devices d ON d.rollout = r.id
         WHERE r.scope = ?1 AND r.module_id = ?2 AND d.set_at IS NOT NULL
         GROUP BY r.id, d.wave HAVING at >= ?3 ORDER BY at, r.id, d.wave",
    )?;
    let rows = stmt.query_map(params![scope.0, module_id, since.unwrap_or(0)], |r| {
        Ok(WaveStart {
            rollout_id: r.get(0)?,
            version: r.get(1)?,
            wave: r.get::<_, i64>(2)? as u32 + 1,
            at: ms_to_text(r.get(3)?),
            devices: r.get::<_, i64>(4)? as u32,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_that_start_like_formulas_are_made_inert() {
        for bad in ["=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(super::inert_cell(bad.to_owned()), format!("'{bad}"));
        }
        for good in ["", "1.2.0", "FAILED", "3fa85f64-5717-4562-b3fc-2c963f66afa6", "a=b"] {
            assert_eq!(super::inert_cell(good.to_owned()), good);
        }
    }
}
