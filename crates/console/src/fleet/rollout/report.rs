//! A rollout's report: one self-contained HTML file (no outside assets: its styles and chart are
//! inline, readable printed) and the same facts as JSON, for a customer or a manager. What it
//! holds: the customer, the module and version with the firmware file's SHA-256, the waves and
//! thresholds, when each wave started and ended, per-wave and total outcomes, failures grouped by
//! reason with their devices, the update statuses of its devices over time, its events (pauses,
//! resumes and why) and the audit entries that concern it (who did what).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use rusqlite::params;
use serde::Serialize;

use super::store::load_known;
use super::view::{get, RolloutEvent, WaveView};
use crate::audit::{AuditLog, Record as AuditRecord};
use crate::fleet::{ms_to_text, now_ms, FleetDb, Result};

/// A device's state now: target, status, details, when its status was stamped.
type NowState = (Option<String>, Option<String>, Option<String>, Option<i64>);

/// Points of the status chart.
const CHART_POINTS: usize = 60;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutReport {
    pub generated_at: String,
    pub generated_by: String,
    pub rollout_id: String,
    pub state: String,
    pub reason: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub profile: String,
    pub base_url: String,
    /// The customer acted for (`None`: the profile's own environment).
    pub customer: Option<String>,
    pub customer_label: Option<String>,
    pub module_id: String,
    pub module_name: String,
    pub version: String,
    pub firmware_sha256: Option<String>,
    /// Where the SHA-256 comes from, or why it is not known.
    pub firmware_sha256_source: String,
    pub success_threshold: f64,
    pub error_threshold: f64,
    pub waves: Vec<ReportWave>,
    pub total: WaveView,
    pub failures: Vec<FailureGroup>,
    pub timeline: Vec<TimelinePoint>,
    /// Oldest first.
    pub events: Vec<RolloutEvent>,
    pub audit: Vec<AuditRecord>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportWave {
    #[serde(flatten)]
    pub wave: WaveView,
    pub started_at: Option<String>,
    /// When its last device reached a final status (none while any is under way).
    pub ended_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FailureGroup {
    pub reason: String,
    pub devices: Vec<String>,
}

/// The number of the rollout's devices in each update status at one moment.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct TimelinePoint {
    pub at: String,
    pub counts: BTreeMap<String, u32>,
}

/// What the caller knows beyond the fleet database: the customer's label, the audit log's
/// records (read once), and the firmware file's SHA-256 when it found one (else the audit
/// log's upload entry is used).
#[derive(Debug, Default, Clone)]
pub struct ReportInputs {
    pub customer_label: Option<String>,
    pub audit: Vec<AuditRecord>,
    /// The package of the rollout's version, when known (to find its upload in the audit log).
    pub package_id: Option<String>,
    /// A SHA-256 found otherwise, and how.
    pub sha256: Option<(String, String)>,
}

/// The report of rollout `id` as the fleet database and the audit log hold it now.
pub fn build(db: &FleetDb, id: &str, inputs: &ReportInputs) -> Result<RolloutReport> {
    let view = get(db, id)?;
    let conn = db.conn();
    let (scope, row) = load_known(&conn, id)?;
    let (profile, base_url, customer): (String, String, Option<String>) =
        conn.query_row("SELECT profile, base_url, customer FROM scopes WHERE id = ?1", [scope.0], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;

    // Each device: its wave, when its target was set, a refusal, and its statuses over time.
    let mut devices: Vec<(String, u32, Option<i64>, Option<String>)> = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT device_id, wave, COALESCE(set_at, sending_at), error FROM rollout_devices WHERE rollout = ?1 ORDER BY device_id",
        )?;
        let rows = stmt.query_map([id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u32, r.get(2)?, r.get(3)?)))?;
        for r in rows {
            devices.push(r?);
        }
    }
    let mut history: HashMap<String, Vec<(i64, String)>> = HashMap::new();
    let mut now_state: HashMap<String, NowState> = HashMap::new();
    {
        let mut past = conn.prepare_cached(
            "SELECT status, status_at FROM state_history WHERE scope = ?1 AND module_id = ?2 AND device_id = ?3 AND status IS NOT NULL AND status_at IS NOT NULL ORDER BY id",
        )?;
        let mut current = conn.prepare_cached(
            "SELECT target, status, details, status_at FROM states WHERE scope = ?1 AND module_id = ?2 AND device_id = ?3",
        )?;
        for (device, ..) in &devices {
            let mut points: Vec<(i64, String)> = past
                .query_map(params![scope.0, row.module_id, device], |r| Ok((r.get(1)?, r.get(0)?)))?
                .collect::<rusqlite::Result<_>>()?;
            if let Ok(s) = current.query_row(params![scope.0, row.module_id, device], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            }) {
                let s: NowState = s;
                if let (Some(status), Some(at)) = (&s.1, s.3) {
                    points.push((at, status.clone()));
                }
                now_state.insert(device.clone(), s);
            }
            points.sort_by_key(|p| p.0);
            history.insert(device.clone(), points);
        }
    }
    drop(conn);

    // Waves: started at the first target set; ended when every device is final.
    let waves = view
        .waves
        .iter()
        .map(|w| {
            let mine: Vec<&(String, u32, Option<i64>, Option<String>)> =
                devices.iter().filter(|d| d.1 == w.index).collect();
            let started = mine.iter().filter_map(|d| d.2).min();
            let mut ended = None;
            if w.started && !mine.is_empty() && w.updating == 0 {
                // A device ended when its status last changed, never before its target was set
                // (a status stamped earlier was there before the rollout).
                ended = mine
                    .iter()
                    .map(|d| match (now_state.get(&d.0).and_then(|s| s.3), d.2) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    })
                    .collect::<Option<Vec<i64>>>()
                    .and_then(|ts| ts.into_iter().max());
            }
            ReportWave { wave: w.clone(), started_at: started.map(ms_to_text), ended_at: ended.map(ms_to_text) }
        })
        .collect();

    // Failures by reason: the service's detail of a failed update, or the refusal of the target.
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (device, _, _, error) in &devices {
        if let Some(e) = error {
            groups.entry(format!("target not set: {e}")).or_default().push(device.clone());
            continue;
        }
        if let Some((target, Some(status), details, _)) = now_state.get(device) {
            if status == "FAILED" && target.as_deref() == Some(row.version.as_str()) {
                let reason =
                    details.clone().filter(|d| !d.trim().is_empty()).unwrap_or_else(|| "no reason given".into());
                groups.entry(reason).or_default().push(device.clone());
            }
        }
    }
    let mut failures: Vec<FailureGroup> =
        groups.into_iter().map(|(reason, devices)| FailureGroup { reason, devices }).collect();
    failures.sort_by(|a, b| b.devices.len().cmp(&a.devices.len()).then(a.reason.cmp(&b.reason)));

    let end = history.values().flat_map(|p| p.iter().map(|x| x.0)).max().unwrap_or(row.updated).max(row.updated);
    let timeline = timeline(&history, row.created, end.max(row.created + 1));

    let mut events = view.events.clone();
    events.reverse();
    let audit = audit_of(&inputs.audit, id, &devices.iter().map(|d| d.0.clone()).collect::<Vec<_>>(), row.created, end);
    let (firmware_sha256, firmware_sha256_source) = match (&inputs.sha256, &inputs.package_id) {
        (Some((sha, how)), _) => (Some(sha.clone()), how.clone()),
        (None, Some(package)) => match uploaded_sha256(&inputs.audit, package) {
            Some((sha, seq)) => {
                (Some(sha), format!("recorded when the file was uploaded from this computer (audit entry {seq})"))
            }
            None => (
                None,
                "not known: the service does not tell it, and the file was not uploaded from this computer".into(),
            ),
        },
        _ => (None, "not known: the package of this version was not found".into()),
    };
    Ok(RolloutReport {
        generated_at: ms_to_text(now_ms()),
        generated_by: format!("dcs-console {}", env!("CARGO_PKG_VERSION")),
        rollout_id: view.id.clone(),
        state: view.state.as_str().to_owned(),
        reason: view.reason.clone(),
        created_at: view.created_at.clone(),
        updated_at: view.updated_at.clone(),
        profile,
        base_url,
        customer,
        customer_label: inputs.customer_label.clone(),
        module_id: view.module_id.clone(),
        module_name: view.module_name.clone(),
        version: view.version.clone(),
        firmware_sha256,
        firmware_sha256_source,
        success_threshold: view.success_threshold,
        error_threshold: view.error_threshold,
        waves,
        total: view.total.clone(),
        failures,
        timeline,
        events,
        audit,
    })
}

/// The statuses of the devices at [`CHART_POINTS`] moments from `start` to `end` (a device
/// counts from its first status seen; before it, it is not counted).
fn timeline(history: &HashMap<String, Vec<(i64, String)>>, start: i64, end: i64) -> Vec<TimelinePoint> {
    let step = ((end - start) as f64 / (CHART_POINTS - 1) as f64).max(1.0);
    (0..CHART_POINTS)
        .map(|i| {
            let t = if i + 1 == CHART_POINTS { end } else { start + (step * i as f64) as i64 };
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            for points in history.values() {
                let at = points.partition_point(|p| p.0 <= t);
                if at > 0 {
                    *counts.entry(points[at - 1].1.clone()).or_default() += 1;
                }
            }
            TimelinePoint { at: ms_to_text(t), counts }
        })
        .collect()
}

/// The audit records of the rollout: its own (start, pause, resume, abort) and the targets set
/// on its devices while it ran.
fn audit_of(records: &[AuditRecord], id: &str, devices: &[String], start: i64, end: i64) -> Vec<AuditRecord> {
    let from = ms_to_text(start - 60_000);
    let to = ms_to_text(end + 3_600_000);
    records
        .iter()
        .filter(|r| {
            r.targets.iter().any(|t| t == id)
                || (r.operation == "target.set"
                    && r.at.as_str() >= from.as_str()
                    && r.at.as_str() <= to.as_str()
                    && r.targets.first().is_some_and(|d| devices.contains(d)))
        })
        .cloned()
        .collect()
}

/// The SHA-256 of the firmware file of `package` as uploaded from this computer, and its entry.
fn uploaded_sha256(records: &[AuditRecord], package: &str) -> Option<(String, u64)> {
    records
        .iter()
        .rev()
        .find(|r| r.operation == "firmware-file.upload" && r.result == "done" && r.targets.iter().any(|t| t == package))
        .and_then(|r| r.sha256.clone().map(|s| (s, r.seq)))
}

/// Writes the report as HTML and/or JSON (each beside its target, then renamed over it).
pub fn write(
    report: &RolloutReport,
    html_path: Option<&Path>,
    json_path: Option<&Path>,
) -> std::result::Result<(), dcs_api::Error> {
    use crate::csv_file::write_replacing;
    if let Some(p) = html_path {
        write_replacing(p, |out| out.write_all(html(report).as_bytes()))?;
    }
    if let Some(p) = json_path {
        write_replacing(p, |out| serde_json::to_writer_pretty(out, report).map_err(std::io::Error::from))?;
    }
    Ok(())
}

/// Text made safe inside HTML.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The colour of a status in the chart: the known ones fixed, any other from a small palette by
/// its name (so a status the reference does not list is drawn as it came).
fn colour(status: &str) -> &'static str {
    const OTHERS: [&str; 5] = ["#8e6bbf", "#d08c2e", "#5a8fa8", "#b0577c", "#7a8a3c"];
    match status {
        "SUCCEEDED" => "#2f9e5b",
        "FAILED" => "#d2433b",
        "CANCELLED" => "#8a8f98",
        "PENDING" => "#3d7be0",
        "DOWNLOADING" | "INSTALLING" | "UPDATING" | "IN_PROGRESS" => "#e0b03d",
        other => OTHERS[other.bytes().map(usize::from).sum::<usize>() % OTHERS.len()],
    }
}

/// The statuses over time as an inline SVG line chart (one line per status).
fn chart(points: &[TimelinePoint]) -> String {
    let (w, h, pad) = (720.0, 240.0, 36.0);
    let statuses: Vec<&String> = {
        let mut s: Vec<&String> = points.iter().flat_map(|p| p.counts.keys()).collect();
        s.sort();
        s.dedup();
        s
    };
    let max = points.iter().flat_map(|p| p.counts.values()).copied().max().unwrap_or(0).max(1) as f64;
    let n = points.len().max(2) as f64 - 1.0;
    let mut svg = format!(
        r#"<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="Update statuses of the rollout's devices over time" xmlns="http://www.w3.org/2000/svg">"#
    );
    let _ = write!(
        svg,
        r##"<line x1="{pad}" y1="{y}" x2="{x2}" y2="{y}" stroke="#999" stroke-width="1"/>"##,
        y = h - pad,
        x2 = w - 8.0
    );
    let _ =
        write!(svg, r##"<line x1="{pad}" y1="8" x2="{pad}" y2="{y}" stroke="#999" stroke-width="1"/>"##, y = h - pad);
    let _ = write!(
        svg,
        r##"<text x="{x}" y="14" font-size="11" text-anchor="end" fill="#555">{max}</text>"##,
        x = pad - 4.0
    );
    let _ = write!(
        svg,
        r##"<text x="{x}" y="{y}" font-size="11" text-anchor="end" fill="#555">0</text>"##,
        x = pad - 4.0,
        y = h - pad
    );
    if let (Some(first), Some(last)) = (points.first(), points.last()) {
        let _ = write!(
            svg,
            r##"<text x="{pad}" y="{y}" font-size="11" fill="#555">{}</text>"##,
            esc(&first.at),
            y = h - pad + 16.0
        );
        let _ = write!(
            svg,
            r##"<text x="{x}" y="{y}" font-size="11" text-anchor="end" fill="#555">{}</text>"##,
            esc(&last.at),
            x = w - 8.0,
            y = h - pad + 16.0
        );
    }
    for s in &statuses {
        let coords: Vec<String> = points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let v = p.counts.get(*s).copied().unwrap_or(0) as f64;
                format!("{:.1},{:.1}", pad + (w - pad - 8.0) * i as f64 / n, (h - pad) - (h - pad - 8.0) * v / max)
            })
            .collect();
        let _ = write!(
            svg,
            r#"<polyline data-status="{}" fill="none" stroke="{}" stroke-width="2" points="{}"/>"#,
            esc(s),
            colour(s),
            coords.join(" ")
        );
    }
    svg.push_str("</svg>");
    let mut legend = String::from(r#"<p class="legend">"#);
    for s in &statuses {
        let last = points.last().and_then(|p| p.counts.get(*s)).copied().unwrap_or(0);
        let _ =
            write!(legend, r#"<span><i style="background:{}"></i>{} ({last} at the end)</span> "#, colour(s), esc(s));
    }
    legend.push_str("</p>");
    svg + &legend
}

/// The report as one HTML document with everything inline.
pub fn html(r: &RolloutReport) -> String {
    let customer = match (&r.customer, &r.customer_label) {
        (Some(id), Some(label)) => format!("{} ({})", esc(label), esc(id)),
        (Some(id), None) => esc(id),
        (None, _) => "the profile's own environment".into(),
    };
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Rollout report: {module} {version}</title><style>{CSS}</style></head><body>
<h1>Rollout of {module} version {version}</h1>
<p class="sub">Rollout <code>{id}</code> · {state}{reason} · generated {gen} by {by}</p>
<section><h2>Summary</h2><dl>
<dt>Customer</dt><dd data-field="customer">{customer}</dd>
<dt>Service</dt><dd>{base} (profile {profile})</dd>
<dt>Module</dt><dd>{module} <code>{module_id}</code></dd>
<dt>Version</dt><dd data-field="version">{version}</dd>
<dt>Firmware file SHA-256</dt><dd data-field="sha256"><code>{sha}</code><br><small>{sha_source}</small></dd>
<dt>Thresholds</dt><dd>next wave when {success}% of a wave succeeded; pause when over {error}% of started waves failed</dd>
<dt>Started</dt><dd>{created}</dd><dt>Last change</dt><dd>{updated}</dd>
</dl></section>"#,
        module = esc(&r.module_name),
        version = esc(&r.version),
        id = esc(&r.rollout_id),
        state = esc(&r.state),
        reason = r.reason.as_deref().map(|x| format!(" ({})", esc(x))).unwrap_or_default(),
        gen = esc(&r.generated_at),
        by = esc(&r.generated_by),
        base = esc(&r.base_url),
        profile = esc(&r.profile),
        module_id = esc(&r.module_id),
        sha = esc(r.firmware_sha256.as_deref().unwrap_or("—")),
        sha_source = esc(&r.firmware_sha256_source),
        success = r.success_threshold,
        error = r.error_threshold,
        created = esc(&r.created_at),
        updated = esc(&r.updated_at),
        CSS = CSS,
    );
    o.push_str(r#"<section><h2>Waves</h2><table class="waves"><thead><tr><th>Wave</th><th>Share</th><th>Devices</th><th>Started</th><th>Ended</th><th>Succeeded</th><th>Failed</th><th>Refused</th><th>Replaced</th><th>Under way</th></tr></thead><tbody>"#);
    let row = |o: &mut String, name: &str, w: &WaveView, started: &str, ended: &str, class: &str| {
        let _ = write!(
            o,
            r#"<tr class="{class}"><td>{name}</td><td>{}%</td><td data-field="devices">{}</td><td>{}</td><td>{}</td><td data-field="succeeded">{}</td><td data-field="failed">{}</td><td data-field="refused">{}</td><td>{}</td><td>{}</td></tr>"#,
            w.percent,
            w.size,
            esc(started),
            esc(ended),
            w.succeeded,
            w.failed,
            w.refused,
            w.replaced,
            w.updating
        );
    };
    for w in &r.waves {
        let started = w.started_at.clone().unwrap_or_else(|| "not started".into());
        let ended = w.ended_at.clone().unwrap_or_else(|| if w.wave.started { "under way".into() } else { "—".into() });
        row(&mut o, &format!("{}", w.wave.index + 1), &w.wave, &started, &ended, "wave");
    }
    row(&mut o, "Total", &r.total, "", "", "total");
    o.push_str("</tbody></table></section>");
    o.push_str("<section><h2>Update statuses over time</h2>");
    o.push_str(&chart(&r.timeline));
    o.push_str("</section>");
    o.push_str(r#"<section><h2>Failures by reason</h2>"#);
    if r.failures.is_empty() {
        o.push_str("<p>No device failed.</p>");
    } else {
        o.push_str(
            r#"<table class="failures"><thead><tr><th>Reason</th><th>Devices</th><th>Which</th></tr></thead><tbody>"#,
        );
        for f in &r.failures {
            let _ = write!(
                o,
                r#"<tr><td>{}</td><td>{}</td><td class="ids">{}</td></tr>"#,
                esc(&f.reason),
                f.devices.len(),
                f.devices.iter().map(|d| esc(d)).collect::<Vec<_>>().join("<br>")
            );
        }
        o.push_str("</tbody></table>");
    }
    o.push_str("</section><section><h2>Events</h2><table><thead><tr><th>When</th><th>What</th></tr></thead><tbody>");
    for e in &r.events {
        let _ = write!(o, "<tr><td>{}</td><td>{}</td></tr>", esc(&e.at), esc(&e.message));
    }
    o.push_str("</tbody></table></section><section><h2>Audit entries</h2>");
    if r.audit.is_empty() {
        o.push_str("<p>No audit entry of this computer concerns this rollout.</p>");
    } else {
        o.push_str(r#"<table class="audit"><thead><tr><th>#</th><th>When</th><th>Operation</th><th>Concerns</th><th>Outcome</th><th>By</th></tr></thead><tbody>"#);
        for a in &r.audit {
            let _ = write!(
                o,
                r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="ids">{}</td><td>{}{}</td><td>{} ({}, {})</td></tr>"#,
                a.seq,
                esc(&a.at),
                esc(&a.operation),
                a.targets.iter().map(|t| esc(t)).collect::<Vec<_>>().join("<br>"),
                esc(&a.result),
                a.status.map(|s| format!(" {s}")).unwrap_or_default(),
                esc(&a.os_user),
                esc(&a.profile),
                esc(&a.source)
            );
        }
        o.push_str("</tbody></table>");
    }
    o.push_str("</section></body></html>\n");
    o
}

const CSS: &str = "body{font:14px/1.45 system-ui,sans-serif;color:#1d2330;margin:24px auto;max-width:980px;padding:0 16px}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px;border-bottom:1px solid #d9dde5;padding-bottom:4px}\
.sub{color:#5b6474;margin:0}dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}dt{color:#5b6474}dd{margin:0;overflow-wrap:anywhere}\
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e3e6ec;vertical-align:top}\
th{background:#f3f5f8}tr.total td{font-weight:600;border-top:2px solid #c9ced8}.ids{font-family:ui-monospace,monospace;font-size:12px;overflow-wrap:anywhere}\
code{font-family:ui-monospace,monospace;font-size:12px;overflow-wrap:anywhere}.chart{width:100%;height:auto;max-width:720px}\
.legend span{margin-right:14px;white-space:nowrap}.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}\
@media print{body{margin:0;max-width:none;font-size:11pt}h2{break-after:avoid}tr{break-inside:avoid}section{break-inside:auto}a{color:inherit}}";

/// [`build`] with what the service and this computer tell: the package of the rollout's version,
/// and the firmware file's SHA-256 from its upload in the audit log, else from the file itself
/// downloaded into a temporary folder and hashed (the service does not tell it).
pub async fn gather(
    client: &dcs_api::Client,
    db: &FleetDb,
    id: &str,
    customer_label: Option<String>,
) -> Result<RolloutReport> {
    let view = get(db, id)?;
    let audit = match AuditLog::default_location() {
        Some(log) => crate::audit::records(log.entries()?),
        None => Vec::new(),
    };
    let mut inputs = ReportInputs { customer_label, audit, ..Default::default() };
    let module: uuid::Uuid =
        view.module_id.parse().map_err(|_| crate::fleet::FleetError::invalid("moduleId", "is not a UUID"))?;
    if let Some(package) = crate::set_target::package_of(client, module, &view.version).await? {
        inputs.package_id = Some(package.to_string());
        if uploaded_sha256(&inputs.audit, &package.to_string()).is_none() {
            let dir = tempfile::tempdir()
                .map_err(|source| dcs_api::Error::LocalFile { path: "a temporary folder".into(), source })?;
            let target = dir.path().join("firmware");
            match client.firmware().download_firmware_file(package, &target, &Default::default()).await {
                Ok(d) => {
                    inputs.sha256 = Some((
                        d.sha256,
                        format!("computed from the file downloaded for this report ({} bytes)", d.size),
                    ))
                }
                Err(e) => tracing::info!(error = %e, "the firmware file could not be downloaded for the report"),
            }
        }
    }
    build(db, id, &inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_statuses_the_reference_does_not_list_are_drawn() {
        assert_eq!(esc(r#"<script>"a"&'b'</script>"#), "&lt;script&gt;&quot;a&quot;&amp;&#39;b&#39;&lt;/script&gt;");
        let mut history = HashMap::new();
        history.insert("a".to_string(), vec![(10, "PENDING".to_string()), (50, "SUCCEEDED".to_string())]);
        history.insert("b".to_string(), vec![(20, "PENDING".to_string()), (90, "NEW_STATUS".to_string())]);
        let t = timeline(&history, 0, 100);
        assert_eq!(t.len(), CHART_POINTS);
        assert!(t[0].counts.is_empty(), "nothing seen before the first status");
        let last = &t[CHART_POINTS - 1].counts;
        assert_eq!((last.get("SUCCEEDED"), last.get("NEW_STATUS")), (Some(&1), Some(&1)));
        let svg = chart(&t);
        assert!(svg.contains(r#"data-status="NEW_STATUS""#) && svg.contains("(1 at the end)"), "{svg}");
    }
}
