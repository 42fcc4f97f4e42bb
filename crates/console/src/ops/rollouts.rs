//! Rollouts, once for every front end. The behaviour chosen where the app and `dcs` had drifted:
//!
//! - **A refresh before a decision.** Preview, start, resume, continue and rehearsal first read
//!   what changed on the service since the last refresh (an incremental scan, when the scope
//!   was scanned before), so they judge the fleet as it is, not as the last timer tick saw it.
//! - **One piece of fleet work at a time.** Every change runs as this process's only fleet work
//!   ([`FleetService::exclusive`]): no scan or step of this process interleaves with it.
//! - **Moved on by whoever holds the lease.** A start, resume or continue takes the step at once
//!   as this process's driver ([`crate::fleet::rollout::lease`]); when another driver (a runner,
//!   another console) holds the rollout's lease, the change is recorded and that driver moves
//!   the rollout on at its next step.

use tokio_util::sync::CancellationToken;

use super::{Confirmed, FleetCtx};
use crate::fleet::query::DeviceQuery;
use crate::fleet::rollout::{self, ModelRule, PlanPreview, Rehearsal, RolloutPlan, RolloutView, StepOutcome};
use crate::fleet::scan::{self, ScanKind};
use crate::fleet::stuck::{self, ResetOutcome};
use crate::fleet::{now_ms, query, FleetError, Result};

/// An incremental refresh before a decision, when the scope was scanned before (the caller
/// holds the fleet's work, or needs no exclusivity).
async fn refresh_first(ctx: &FleetCtx<'_>) -> Result<()> {
    if ctx.db().scope_info(ctx.scope)?.watermark.is_some() {
        scan::refresh(ctx.client, ctx.db(), ctx.scope, ScanKind::Incremental, &CancellationToken::new(), |_| {})
            .await?;
        query::snapshot(ctx.db(), ctx.scope, now_ms())?;
    }
    Ok(())
}

/// Refuses a rollout of another profile, service or customer, naming it.
pub fn own(ctx: &FleetCtx<'_>, id: &str) -> Result<()> {
    let of = rollout::scope_of(ctx.db(), id)?;
    if of != ctx.scope {
        let whose = ctx
            .db()
            .scope_key(of)?
            .map(|k| {
                format!(
                    "profile `{}` at {}{}",
                    k.profile,
                    k.base_url,
                    k.customer.map(|c| format!(", acting for customer {c}")).unwrap_or_default()
                )
            })
            .unwrap_or_else(|| "another profile or customer".into());
        return Err(FleetError::ContextChanged(format!(
            "rollout {id} belongs to {whose}; switch to it (in dcs: --profile and --customer) and try again"
        )));
    }
    Ok(())
}

/// The problems of a preview as one error naming every field and its rule.
pub fn problems(p: &PlanPreview) -> Option<FleetError> {
    (!p.problems.is_empty())
        .then(|| FleetError::Invalid(p.problems.iter().map(|p| crate::FieldError::new(&p.field, &p.rule)).collect()))
}

/// What a plan would do: its problems field by field, or its devices per wave.
pub async fn preview(ctx: &FleetCtx<'_>, plan: &RolloutPlan) -> Result<PlanPreview> {
    refresh_first(ctx).await?;
    Ok(rollout::preview(ctx.client, ctx.db(), ctx.scope, plan).await?.0)
}

/// Starts a rollout: the plan checked again against the fleet as it is now, saved, and its
/// first wave started by this process (which then drives it). A plan that rolls some devices
/// back to an older version is refused unless `allow_downgrade`.
pub async fn start(
    ctx: &FleetCtx<'_>,
    plan: &RolloutPlan,
    confirmed: &Confirmed,
    allow_downgrade: bool,
) -> Result<RolloutView> {
    ctx.check(confirmed)?;
    let op = ctx.operation()?;
    let id = ctx
        .fleet
        .exclusive(async {
            refresh_first(ctx).await?;
            let (preview, devices) = rollout::preview(ctx.client, ctx.db(), ctx.scope, plan).await?;
            if let Some(e) = problems(&preview) {
                return Err(e);
            }
            if let (Some(d), false) = (&preview.downgrade, allow_downgrade) {
                return Err(FleetError::invalid(
                    "version",
                    format!(
                        "{}; nothing was started. Confirm the downgrade to roll it out anyway (in dcs: --allow-downgrade)",
                        d.text(&plan.version)
                    ),
                ));
            }
            let id = rollout::create(ctx.client, ctx.db(), ctx.scope, plan, &devices)?;
            rollout::advance(ctx.client, Some(op), ctx.db(), &id, ctx.fleet.driver()).await?;
            Ok(id)
        })
        .await?;
    rollout::get(ctx.db(), &id)
}

/// One rollout of the scope.
pub fn get(ctx: &FleetCtx<'_>, id: &str) -> Result<RolloutView> {
    own(ctx, id)?;
    rollout::get(ctx.db(), id)
}

/// The rollouts of the scope, newest first.
pub fn list(ctx: &FleetCtx<'_>) -> Result<Vec<RolloutView>> {
    rollout::list(ctx.db(), ctx.scope)
}

/// Pauses a running rollout: no new wave starts (whoever drives it); updates under way go on.
pub async fn pause(ctx: &FleetCtx<'_>, id: &str, confirmed: &Confirmed) -> Result<RolloutView> {
    ctx.check(confirmed)?;
    own(ctx, id)?;
    ctx.fleet.exclusive(async { rollout::pause(ctx.client, ctx.db(), id) }).await
}

/// Resumes a paused rollout, with new thresholds if given, and moves it on at once: answers the
/// view and what the step did.
pub async fn resume(
    ctx: &FleetCtx<'_>,
    id: &str,
    success_threshold: Option<f64>,
    error_threshold: Option<f64>,
    confirmed: &Confirmed,
) -> Result<(RolloutView, StepOutcome)> {
    ctx.check(confirmed)?;
    own(ctx, id)?;
    let op = ctx.operation()?;
    ctx.fleet
        .exclusive(async {
            rollout::resume(ctx.client, ctx.db(), id, success_threshold, error_threshold)?;
            refresh_first(ctx).await?;
            let outcome = rollout::advance(ctx.client, Some(op), ctx.db(), id, ctx.fleet.driver()).await?;
            Ok((rollout::get(ctx.db(), id)?, outcome))
        })
        .await
}

/// Lets the wave a rollout holds for approval start (the operator's "Continue"), and moves it
/// on at once (the wave starts now, or waits for its schedule).
pub async fn approve(ctx: &FleetCtx<'_>, id: &str, confirmed: &Confirmed) -> Result<(RolloutView, StepOutcome)> {
    ctx.check(confirmed)?;
    own(ctx, id)?;
    let op = ctx.operation()?;
    ctx.fleet
        .exclusive(async {
            rollout::approve(ctx.client, ctx.db(), id)?;
            refresh_first(ctx).await?;
            let outcome = rollout::advance(ctx.client, Some(op), ctx.db(), id, ctx.fleet.driver()).await?;
            Ok((rollout::get(ctx.db(), id)?, outcome))
        })
        .await
}

/// What an abort with reset would reset: the devices whose update under the rollout has not
/// finished.
pub fn unfinished(ctx: &FleetCtx<'_>, id: &str) -> Result<u32> {
    own(ctx, id)?;
    Ok(rollout::unfinished(ctx.db(), id)?.len() as u32)
}

/// Aborts a rollout for good (its driver sends nothing more for it); with `reset_unfinished`,
/// resets the targets of the devices still updating. Answers the view and how many were reset.
pub async fn abort(
    ctx: &FleetCtx<'_>,
    id: &str,
    reset_unfinished: bool,
    confirmed: &Confirmed,
) -> Result<(RolloutView, u32)> {
    ctx.check(confirmed)?;
    own(ctx, id)?;
    let op = if reset_unfinished { Some(ctx.operation()?) } else { ctx.set_target };
    ctx.fleet.exclusive(rollout::abort(ctx.client, op, ctx.db(), id, reset_unfinished)).await
}

/// Resets the targets of the module's devices that `query` names (the stuck ones); `expected`
/// is the number the operator confirmed (nothing is sent when the query now names another).
pub async fn reset_stuck(
    ctx: &FleetCtx<'_>,
    module_id: &str,
    query: &DeviceQuery,
    expected: u32,
    confirmed: &Confirmed,
) -> Result<ResetOutcome> {
    ctx.check(confirmed)?;
    let op = ctx.operation()?;
    ctx.fleet
        .exclusive(stuck::reset_targets(ctx.client, Some(op), ctx.db(), ctx.scope, module_id, query, expected))
        .await
}

/// A rehearsal of a plan: nothing is sent to the service (it runs on a simulator of the
/// fleet's copy with the operator's models), stepping every `step_secs` of its clock.
pub async fn rehearse(
    ctx: &FleetCtx<'_>,
    plan: &RolloutPlan,
    models: &[ModelRule],
    step_secs: u32,
    cancel: &CancellationToken,
) -> Result<Rehearsal> {
    refresh_first(ctx).await?;
    rollout::rehearse(ctx.client, ctx.db(), ctx.scope, plan, models, step_secs, cancel).await
}

/// A rollout's report, with the customer's label when acting for one.
pub async fn report(
    ctx: &FleetCtx<'_>,
    id: &str,
    customer_label: Option<String>,
) -> Result<rollout::report::RolloutReport> {
    own(ctx, id)?;
    rollout::report::gather(ctx.client, ctx.db(), id, customer_label).await
}

/// One refresh of the scope and one step of each of its running rollouts, as this process's
/// driver (what `dcs rollout watch`, the app's timer and the runner do over and over): answers
/// how each rollout moved, by id.
pub async fn step(ctx: &FleetCtx<'_>, kind: ScanKind) -> Result<Vec<(String, StepOutcome)>> {
    Ok(ctx.fleet.refresh_stepped(ctx.client, ctx.set_target, ctx.scope, kind).await?.1)
}
