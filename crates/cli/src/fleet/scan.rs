//! `dcs fleet scan`'s refresh with its progress on stderr, cancelled by Ctrl-C.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use dcs_console::fleet::scan::{self, ScanKind, ScanProgress, ScanReport};
use dcs_console::fleet::{now_ms, query, FleetDb, FleetError, Scope};
use indicatif::ProgressBar;
use tokio_util::sync::CancellationToken;

use super::print::{print_report, thousands};
use crate::{output, Ctx};

/// Cancels `token` on Ctrl-C until dropped.
pub(super) struct CtrlC(tokio::task::JoinHandle<()>);

impl CtrlC {
    pub(super) fn cancels(token: &CancellationToken) -> CtrlC {
        let token = token.clone();
        CtrlC(tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                token.cancel();
            }
        }))
    }
}

impl Drop for CtrlC {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A refresh of `scope` with its progress on stderr (a live line on a terminal, else a line a
/// second), cancelled by Ctrl-C.
pub(super) async fn scan_with_progress(
    ctx: &Ctx,
    db: &FleetDb,
    scope: Scope,
    kind: ScanKind,
) -> anyhow::Result<ScanReport> {
    let cancel = CancellationToken::new();
    let _ctrl_c = CtrlC::cancels(&cancel);
    let live = !ctx.json && std::io::stderr().is_terminal();
    let plain = !ctx.json && !live;
    let bar = if live { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
    bar.enable_steady_tick(Duration::from_millis(120));
    bar.set_message("asking the service for its latest change");
    let last_line = Cell::new(Instant::now());
    let started = Instant::now();
    let line = |p: &ScanProgress| {
        let secs = (p.elapsed_ms as f64 / 1000.0).max(0.001);
        let of = p.expected.map(|e| format!(" of about {}", thousands(e))).unwrap_or_default();
        format!(
            "{} scan: {} pages, {}{of} states, {:.0} states/s",
            if p.kind == ScanKind::Full { "full" } else { "incremental" },
            p.pages,
            thousands(p.states),
            p.states as f64 / secs
        )
    };
    let result = scan::refresh(&ctx.client, db, scope, kind, &cancel, |p| {
        if live {
            bar.set_message(line(p));
        } else if plain && last_line.get().elapsed() >= Duration::from_secs(1) {
            last_line.set(Instant::now());
            eprintln!("{}", line(p));
        }
    })
    .await;
    bar.finish_and_clear();
    match result {
        Ok(r) => Ok(r),
        Err(FleetError::Cancelled) => {
            let held = db.scope_info(scope).map(|i| i.states).unwrap_or(0);
            Err(anyhow::Error::from(dcs_api::Error::Cancelled { what: "the scan".into() }).context(format!(
                "after {:.1} s; the states read stay in the fleet database ({} held), and the next refresh starts from the previous watermark",
                started.elapsed().as_secs_f64(),
                thousands(held)
            )))
        }
        Err(e) => Err(e.into()),
    }
}

/// `dcs fleet scan`: a refresh, then a history snapshot, then its report.
pub(super) async fn scan(ctx: &Ctx, db: &FleetDb, scope: Scope, full: bool) -> anyhow::Result<()> {
    let kind = if full { ScanKind::Full } else { ScanKind::Incremental };
    let report = scan_with_progress(ctx, db, scope, kind).await?;
    query::snapshot(db, scope, now_ms())?;
    if ctx.json {
        return output::print_json(&report);
    }
    print_report(&report);
    Ok(())
}
