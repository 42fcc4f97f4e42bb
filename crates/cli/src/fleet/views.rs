//! What `dcs fleet modules`, `overview`, `customers`, `devices`, `device` and `history` show.

use dcs_console::fleet::query::{self, DeviceRow};
use dcs_console::fleet::{now_ms, FleetDb, Scope};

use super::print::{share, thousands};
use super::{module_id, DevicesArgs};
use crate::output::{self, opt};
use crate::{invalid, Ctx};

/// When the shown figures were read.
pub(super) fn scope_footer(db: &FleetDb, scope: Scope) -> anyhow::Result<()> {
    let info = db.scope_info(scope)?;
    eprintln!(
        "{} states; last refresh {}, last full scan {}",
        thousands(info.states),
        info.last_refresh.as_deref().unwrap_or("never"),
        info.last_full_scan.as_deref().unwrap_or("never")
    );
    Ok(())
}

pub(super) async fn devices(ctx: &Ctx, db: &FleetDb, scope: Scope, a: DevicesArgs) -> anyhow::Result<()> {
    let module = match &a.module {
        Some(m) => Some(module_id(db, scope, m, "module")?),
        None => None,
    };
    let mut filters = a.filters.clone();
    if a.version.is_some() {
        filters.current = a.version.clone();
    }
    let q = filters.query(module, a.sort.clone())?;
    let device = match q.device.as_deref().filter(|d| !d.trim().is_empty()) {
        Some(raw) => Some(query::resolve_device(&ctx.client, raw).await?),
        None => None,
    };
    if let Some(path) = &a.csv {
        let n = query::write_csv(db, scope, &q, device.as_ref(), None, &ctx.customer_names, path)?;
        if ctx.json {
            return output::print_json(&serde_json::json!({ "rows": n, "path": path }));
        }
        println!("wrote {} rows to {}", thousands(n), path.display());
        return Ok(());
    }
    if a.limit == 0 || a.limit > 5000 {
        return Err(invalid("limit", format!("must be from 1 to 5000, got {}", a.limit)));
    }
    let total = query::count(db, scope, &q, device.as_ref())?;
    let rows = query::rows(db, scope, &q, device.as_ref(), a.offset, a.limit)?;
    if ctx.json {
        return output::print_json(&serde_json::json!({ "total": total, "offset": a.offset, "rows": rows }));
    }
    print_rows(&rows, a.offset, total);
    Ok(())
}

/// A window of the device table, and on stderr which rows it shows of how many.
fn print_rows(rows: &[DeviceRow], offset: u32, total: u32) {
    output::table(
        &["DEVICE", "MODULE", "CURRENT", "TARGET", "STATUS", "STATUS CHANGED", "DETAILS"],
        rows.iter()
            .map(|r| {
                vec![
                    r.device_id.clone(),
                    r.module.clone(),
                    opt(&r.current),
                    opt(&r.target),
                    opt(&r.status),
                    opt(&r.status_at),
                    opt(&r.details),
                ]
            })
            .collect(),
    );
    let shown_to = offset as usize + rows.len();
    if rows.is_empty() {
        eprintln!("no rows of {} match", thousands(total));
    } else {
        eprintln!(
            "rows {}-{} of {}{}",
            offset + 1,
            shown_to,
            thousands(total),
            if shown_to < total as usize { format!("; next: --offset {shown_to}") } else { String::new() }
        );
    }
}

/// `dcs fleet modules`: every module with its devices, drift, failures and updates.
pub(super) fn modules(ctx: &Ctx, db: &FleetDb, scope: Scope) -> anyhow::Result<()> {
    let modules = query::modules(db, scope)?;
    if ctx.json {
        return output::print_json(&modules);
    }
    if modules.is_empty() {
        eprintln!("no firmware states of {} are known yet; run `dcs fleet scan`", ctx.scope);
        return Ok(());
    }
    output::table(
        &["MODULE", "NAME", "DEVICE SPECIFICATION", "DEVICES", "DRIFT", "FAILED", "UPDATING", "MOST RUN VERSION"],
        modules
            .iter()
            .map(|m| {
                vec![
                    m.module_id.clone(),
                    m.name.clone(),
                    m.spec_name.clone().or_else(|| m.spec_id.clone()).unwrap_or_else(|| "-".into()),
                    m.devices.to_string(),
                    m.drift.to_string(),
                    m.failed.to_string(),
                    m.updating.to_string(),
                    m.top_version
                        .as_ref()
                        .map(|v| format!("{v} ({})", m.top_version_devices))
                        .unwrap_or_else(|| "-".into()),
                ]
            })
            .collect(),
    );
    scope_footer(db, scope)
}

/// `dcs fleet overview`: one module by version, status, target and owner, failures, packages.
pub(super) fn overview(ctx: &Ctx, db: &FleetDb, scope: Scope, raw: &str) -> anyhow::Result<()> {
    let id = module_id(db, scope, raw, "moduleId")?;
    let o = query::overview(db, scope, &id, &ctx.customer_names)?;
    if ctx.json {
        return output::print_json(&o);
    }
    let m = &o.module;
    output::fields(&[
        ("module", format!("{} ({})", m.name, m.module_id)),
        ("device specification", m.spec_name.clone().or_else(|| m.spec_id.clone()).unwrap_or_else(|| "-".into())),
        ("devices", m.devices.to_string()),
        ("drift", format!("{} (current version differs from the target)", m.drift)),
        ("failed", m.failed.to_string()),
        ("updating", m.updating.to_string()),
    ]);
    for (title, counts) in [
        ("CURRENT VERSION", &o.by_version),
        ("STATUS", &o.by_status),
        ("TARGET", &o.by_target),
        ("OWNER", &o.by_customer),
    ] {
        println!();
        output::table(
            &[title, "DEVICES", "SHARE"],
            counts.iter().map(|c| vec![c.label.clone(), c.count.to_string(), share(c.count, m.devices)]).collect(),
        );
    }
    println!();
    if o.failures.is_empty() {
        println!("no failures");
    } else {
        output::table(
            &["FAILURE", "TARGET", "DEVICES", "LATEST"],
            o.failures
                .iter()
                .map(|f| vec![f.details.clone(), opt(&f.target), f.count.to_string(), opt(&f.latest)])
                .collect(),
        );
    }
    println!();
    output::table(
        &["PACKAGE VERSION", "FIRMWARE FILE"],
        o.packages
            .iter()
            .map(|p| vec![p.version.clone(), if p.has_file { "uploaded" } else { "missing" }.into()])
            .collect(),
    );
    Ok(())
}

/// `dcs fleet customers`: devices, states and drift per owner.
pub(super) fn customers(ctx: &Ctx, db: &FleetDb, scope: Scope) -> anyhow::Result<()> {
    let rows = query::customers(db, scope, &ctx.customer_names)?;
    if ctx.json {
        return output::print_json(&rows);
    }
    output::table(
        &["OWNER", "ID", "DEVICES", "STATES", "DRIFT", "FAILED"],
        rows.iter()
            .map(|c| {
                vec![
                    c.label.clone(),
                    opt(&c.client_id),
                    c.devices.to_string(),
                    c.states.to_string(),
                    c.drift.to_string(),
                    c.failed.to_string(),
                ]
            })
            .collect(),
    );
    Ok(())
}

/// `dcs fleet history`: a module's devices per update status over time.
pub(super) fn history(ctx: &Ctx, db: &FleetDb, scope: Scope, raw: &str, hours: Option<u32>) -> anyhow::Result<()> {
    let id = module_id(db, scope, raw, "moduleId")?;
    let since = hours.map(|h| now_ms() - h as i64 * 3_600_000);
    let points = query::history(db, scope, &id, since, 600)?;
    if ctx.json {
        return output::print_json(&points);
    }
    let mut statuses: Vec<&String> = points.iter().flat_map(|p| p.counts.keys()).collect();
    statuses.sort();
    statuses.dedup();
    let mut headers = vec!["AT"];
    headers.extend(statuses.iter().map(|s| s.as_str()));
    output::table(
        &headers,
        points
            .iter()
            .map(|p| {
                let mut row = vec![p.at.clone()];
                row.extend(statuses.iter().map(|s| p.counts.get(*s).copied().unwrap_or(0).to_string()));
                row
            })
            .collect(),
    );
    Ok(())
}

/// `dcs fleet device`: everything the console knows of one device (console::device_page).
pub(super) async fn device(ctx: &Ctx, db: &FleetDb, scope: Scope, id: &str) -> anyhow::Result<()> {
    // Names and network ids come from the device listing; without it, the page shows ids only.
    let dir = dcs_console::devices::load(&ctx.client).await.unwrap_or_else(|e| {
        eprintln!("dcs: the device listing could not be read ({e}); the device is shown by its ids");
        Default::default()
    });
    let page = dcs_console::device_page::page(&ctx.client, &dir, db, scope, id).await?;
    if ctx.json {
        return output::print_json(&page);
    }
    output::fields(&[
        ("Device", page.name.clone().unwrap_or_else(|| page.uuid.to_string())),
        ("Description", opt(&page.description)),
        ("Barcode", opt(&page.barcode)),
    ]);
    println!("\nIds");
    output::table(&["FORM", "ID"], page.forms.iter().map(|f| vec![f.form.clone(), f.value.clone()]).collect());
    println!(
        "\nFirmware{}",
        if page.states_from_service { " (the service's states now: none in the fleet database)" } else { "" }
    );
    output::table(
        &["MODULE", "CURRENT", "TARGET", "STATUS", "SINCE", "EARLIER STATES"],
        page.states
            .iter()
            .map(|s| {
                vec![
                    s.module.clone().unwrap_or_else(|| s.module_id.clone()),
                    opt(&s.current),
                    opt(&s.target),
                    match &s.details {
                        Some(d) => format!("{} ({d})", opt(&s.status)),
                        None => opt(&s.status),
                    },
                    opt(&s.status_at),
                    s.history.len().to_string(),
                ]
            })
            .collect(),
    );
    if !page.rollouts.is_empty() {
        println!("\nRollouts");
        output::table(
            &["ROLLOUT", "MODULE", "VERSION", "WAVE", "TARGET SET", "RETRIES", "STATE"],
            page.rollouts
                .iter()
                .map(|r| {
                    vec![
                        r.rollout_id.clone(),
                        r.module.clone().unwrap_or_else(|| r.module_id.clone()),
                        r.version.clone(),
                        r.wave.to_string(),
                        r.error.as_ref().map_or_else(|| opt(&r.set_at), |e| format!("failed: {e}")),
                        r.retries.to_string(),
                        r.state.clone(),
                    ]
                })
                .collect(),
        );
    }
    println!("\nDownlinks (the newest of each kind; {})", page.actuator_search);
    output::table(
        &["KIND", "ID", "STATUS", "CREATED"],
        page.downlinks
            .iter()
            .map(|d| vec![d.kind.as_str().to_owned(), d.id.clone(), d.status.clone(), opt(&d.created_at)])
            .collect(),
    );
    println!("\nBindings");
    output::table(
        &["KIND", "ID", "DETAILS"],
        page.bindings
            .iter()
            .map(|b| {
                let details: Vec<&str> =
                    [&b.status, &b.binding_type, &b.username].into_iter().flatten().map(String::as_str).collect();
                vec![b.kind.as_str().to_owned(), b.id.to_string(), details.join(" · ")]
            })
            .collect(),
    );
    for p in &page.problems {
        eprintln!("dcs: {} could not be read: {}", p.part, p.message);
    }
    Ok(())
}

/// What `dcs fleet diff` was given.
pub(super) struct DiffArgs {
    pub from: String,
    pub to: Option<String>,
    pub module: Option<String>,
    pub stuck_hours: Option<f64>,
}

/// `dcs fleet diff`: two moments compared, per module (console::fleet::compare): the movements
/// and the matrix of status at `--from` (rows) by status at `--to` (columns).
pub(super) fn diff(ctx: &Ctx, db: &FleetDb, scope: Scope, a: DiffArgs) -> anyhow::Result<()> {
    use dcs_console::fleet::compare::{self, CompareRequest};
    let modules: Vec<String> = match &a.module {
        Some(raw) => vec![module_id(db, scope, raw, "module")?],
        None => query::modules(db, scope)?.into_iter().map(|m| m.module_id).collect(),
    };
    if modules.is_empty() {
        return Err(invalid(
            "module",
            "no firmware states of this profile/customer are known; run `dcs fleet scan` first",
        ));
    }
    // The same second moment for every module ("now" read once).
    let to = a.to.clone().or_else(|| Some(dcs_console::fleet::ms_to_text(now_ms())));
    let mut out = Vec::with_capacity(modules.len());
    for id in modules {
        let hours = match a.stuck_hours {
            Some(h) => h,
            None => compare::stuck_hours(db, &id)?,
        };
        let req = CompareRequest { module_id: id, from: a.from.clone(), to: to.clone(), stuck_hours: hours };
        out.push(compare::compare(db, scope, &req, false)?);
    }
    if ctx.json {
        return output::print_json(&out);
    }
    for (i, c) in out.iter().enumerate() {
        if i > 0 {
            println!();
        }
        println!("{} ({}): {} to {}, {} devices", c.module_name, c.module_id, c.from, c.to, thousands(c.devices));
        let moved: Vec<String> = c
            .movements
            .iter()
            .filter(|m| m.count > 0)
            .map(|m| {
                let label = if m.movement == compare::Movement::Stuck {
                    format!("stuck over {} h", c.stuck_hours)
                } else {
                    m.movement.as_str().to_owned()
                };
                format!("{label} {}", thousands(m.count))
            })
            .collect();
        println!("{}", moved.join(" · "));
        let mut headers = vec!["FROM \\ TO"];
        headers.extend(c.to_statuses.iter().map(String::as_str));
        let rows = c
            .from_statuses
            .iter()
            .map(|f| {
                let mut row = vec![f.clone()];
                row.extend(c.to_statuses.iter().map(|t| {
                    let n = c.cells.iter().find(|x| &x.from_status == f && &x.to_status == t).map_or(0, |x| x.count);
                    if n == 0 {
                        "·".to_owned()
                    } else {
                        thousands(n)
                    }
                }));
                row
            })
            .collect();
        output::table(&headers, rows);
    }
    Ok(())
}
