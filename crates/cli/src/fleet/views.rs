//! What `dcs fleet devices` shows, and the footer of the fleet tables.

use dcs_console::fleet::query;
use dcs_console::fleet::{FleetDb, Scope};

use super::print::thousands;
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
    let q = filters.query(module, a.sort.clone());
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
    let shown_to = a.offset as usize + rows.len();
    if rows.is_empty() {
        eprintln!("no rows of {} match", thousands(total));
    } else {
        eprintln!(
            "rows {}-{} of {}{}",
            a.offset + 1,
            shown_to,
            thousands(total),
            if shown_to < total as usize { format!("; next: --offset {shown_to}") } else { String::new() }
        );
    }
    Ok(())
}
