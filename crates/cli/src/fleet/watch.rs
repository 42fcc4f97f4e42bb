//! `dcs rollout watch`: the loop that moves a rollout on, as the app's timer does.

use std::time::Duration;

use dcs_console::fleet::rollout::{self, RolloutState, RolloutView, StepOutcome};
use dcs_console::fleet::scan::ScanKind;
use dcs_console::fleet::FleetError;
use dcs_console::ops::rollouts as ops;
use dcs_console::ops::FleetCtx;
use tokio_util::sync::CancellationToken;

use super::print::{hold_text, outcome_text, progress_line, state_name};
use super::scan::CtrlC;
use crate::output;
use crate::Ctx;

pub(super) async fn watch(ctx: &Ctx, fleet: &FleetCtx<'_>, id: &str, interval: Duration) -> anyhow::Result<()> {
    // The app's refresh: an incremental scan, a history snapshot, and each running rollout of
    // the scope moved on (those whose lease this process holds or takes); this one's step is
    // printed, or who else drives it.
    let db = fleet.db();
    let cancel = CancellationToken::new();
    let _ctrl_c = CtrlC::cancels(&cancel);
    let mut last = String::new();
    loop {
        let view = rollout::get(db, id)?;
        if view.state != RolloutState::Running {
            return stopped(ctx, id, &view);
        }
        let refreshed = tokio::select! {
            _ = cancel.cancelled() => None,
            r = ops::step(fleet, ScanKind::Incremental) => Some(r),
        };
        let moved = match refreshed {
            None | Some(Err(FleetError::Cancelled)) => return Err(stopped_watching(id)),
            Some(r) => r?,
        };
        let outcome = moved.into_iter().find(|(of, _)| of == id).map_or(StepOutcome::Waiting, |(_, o)| o);
        let view = rollout::get(db, id)?;
        if !ctx.json {
            let line = step_line(&outcome, &view);
            if line != last {
                println!("{}  {line}", time_now());
                last = line;
            }
        }
        if view.state != RolloutState::Running {
            continue;
        }
        tokio::select! {
            _ = cancel.cancelled() => return Err(stopped_watching(id)),
            _ = tokio::time::sleep(interval) => {}
        }
    }
}

/// The rollout's last line (or its view with --json), and an error unless it completed.
fn stopped(ctx: &Ctx, id: &str, view: &RolloutView) -> anyhow::Result<()> {
    if ctx.json {
        output::print_json(view)?;
    } else {
        println!("{}", progress_line(view));
        println!(
            "rollout {id} {}{}",
            state_name(view.state),
            view.reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default()
        );
    }
    match view.state {
        RolloutState::Completed => Ok(()),
        RolloutState::Running => unreachable!("watched until it stops running"),
        other => anyhow::bail!(
            "rollout {id} is {}: {}",
            state_name(other),
            view.reason.as_deref().unwrap_or("no reason given")
        ),
    }
}

/// The line a refresh prints: the progress while waiting, else what the step did.
fn step_line(outcome: &StepOutcome, view: &RolloutView) -> String {
    match outcome {
        StepOutcome::Elsewhere { driver } => format!(
            "{}; moved on by {}{}",
            progress_line(view),
            driver.label,
            driver.last_step_seconds_ago.map(|s| format!(", last step {s} s ago")).unwrap_or_default()
        ),
        StepOutcome::Waiting => match hold_text(view) {
            Some(hold) => format!("{}; {hold}", progress_line(view)),
            None => progress_line(view),
        },
        other => outcome_text(other, view),
    }
}

fn stopped_watching(id: &str) -> anyhow::Error {
    anyhow::Error::from(dcs_api::Error::Cancelled { what: "watching".into() })
        .context(format!("rollout {id} is still running; `dcs rollout watch {id}` (or the app) goes on with it"))
}

fn time_now() -> String {
    let t = time::OffsetDateTime::now_utc();
    format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second())
}
