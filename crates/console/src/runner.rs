//! The runner (`dcs serve`): a headless driver that refreshes the fleet of the scopes it is
//! given and moves their rollouts on exactly as the app does ([`ops::rollouts::step`]), with no
//! window and no terminal; it answers `/healthz` and `/metrics` (Prometheus) on a loopback
//! address by default, and ends between two steps when told to stop (SIGTERM), letting go of
//! the rollouts it drove so another driver takes them over at once.
//!
//! It adds no copy of any rollout rule: every step is the use case's, every lease the store's.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dcs_api::Client;
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::fleet::rollout::{self, RolloutState, StepOutcome};
use crate::fleet::scan::ScanKind;
use crate::fleet::service::{FleetService, FULL_SCAN_EVERY};
use crate::fleet::{FleetError, Result, ScopeKey};
use crate::ops::{rollouts as ops, FleetCtx};
use crate::set_target::SetTarget;

/// One scope the runner serves: a profile's service, acting as itself or for one customer.
pub struct Target {
    /// In words, for logs and metrics: `prod` or `prod/Acme`.
    pub label: String,
    pub client: Client,
    pub profile: String,
    pub set_target: Option<SetTarget>,
    pub acting: Option<Uuid>,
    pub key: ScopeKey,
}

pub struct Options {
    /// Time between two rounds of refreshes and steps.
    pub interval: Duration,
    /// Where `/healthz` and `/metrics` answer (none: not at all).
    pub listen: Option<SocketAddr>,
}

/// What the endpoints answer from: each scope's last refresh and its rollouts, as of the last
/// round.
#[derive(Default)]
struct Status {
    started: Option<Instant>,
    interval: Duration,
    scopes: BTreeMap<String, ScopeStatus>,
}

#[derive(Default, Clone)]
struct ScopeStatus {
    last_ok: Option<Instant>,
    last_error: Option<String>,
    errors: u64,
    rollouts: Vec<RolloutFigures>,
}

#[derive(Clone)]
struct RolloutFigures {
    id: String,
    module: String,
    version: String,
    state: &'static str,
    wave: u32,
    waves: u32,
    driven_here: bool,
    outcomes: [(&'static str, u32); 6],
}

type Shared = Arc<Mutex<Status>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Status> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs until `stop` is cancelled: each round refreshes every target's scope and steps its
/// running rollouts (those whose lease this runner holds or can take), then waits `interval`.
/// Answers once it has let go of its leases.
pub async fn serve(
    fleet: Arc<FleetService>,
    targets: Vec<Target>,
    options: Options,
    stop: CancellationToken,
) -> Result<()> {
    if targets.is_empty() {
        return Err(FleetError::invalid("scopes", "give the runner at least one profile (or customer) to serve"));
    }
    let status: Shared = Arc::new(Mutex::new(Status {
        started: Some(Instant::now()),
        interval: options.interval,
        ..Default::default()
    }));
    if let Some(addr) = options.listen {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| FleetError::invalid("listen", format!("cannot listen on {addr}: {e}")))?;
        let bound = listener.local_addr().map_err(|e| FleetError::Internal(e.to_string()))?;
        tracing::info!(listen = %bound, "answering /healthz and /metrics");
        let app = endpoints(status.clone());
        let stopped = stop.clone();
        tokio::spawn(async move {
            let served = axum::serve(listener, app).with_graceful_shutdown(async move { stopped.cancelled().await });
            if let Err(e) = served.await {
                tracing::error!(error = %e, "the health and metrics endpoints stopped");
            }
        });
    }
    tracing::info!(
        driver = %fleet.driver().id,
        host = %fleet.driver().host,
        scopes = %targets.iter().map(|t| t.label.as_str()).collect::<Vec<_>>().join(", "),
        lease_seconds = fleet.driver().lease.as_secs_f64(),
        interval_seconds = options.interval.as_secs_f64(),
        "runner started"
    );
    while !stop.is_cancelled() {
        for t in &targets {
            if stop.is_cancelled() {
                break;
            }
            if let Err(e) = fleet.keep_leases() {
                tracing::warn!(error = %e, "could not renew this runner's leases");
            }
            round(&fleet, t, &status).await;
        }
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = tokio::time::sleep(options.interval) => {}
        }
    }
    let released = fleet.release()?;
    tracing::info!(released, "runner stopped; its rollouts were let go of");
    Ok(())
}

/// One target's refresh and step, recorded for the endpoints.
async fn round(fleet: &FleetService, t: &Target, status: &Shared) {
    let scope = match fleet.db().scope(&t.key) {
        Ok(s) => s,
        Err(e) => {
            record_error(status, t, &e);
            return;
        }
    };
    let ctx = FleetCtx {
        client: &t.client,
        profile: &t.profile,
        set_target: t.set_target.as_ref(),
        acting: t.acting,
        fleet,
        scope,
    };
    let kind = match fleet.db().scope_info_with(scope, 0) {
        Ok(info) if full_due(info.last_full_scan.as_deref()) => ScanKind::Full,
        _ => ScanKind::Incremental,
    };
    match ops::step(&ctx, kind).await {
        Ok(moved) => {
            for (id, outcome) in &moved {
                log_outcome(t, id, outcome);
            }
            let figures = figures(fleet, scope);
            let mut s = lock(status);
            let entry = s.scopes.entry(t.label.clone()).or_default();
            entry.last_ok = Some(Instant::now());
            entry.last_error = None;
            match figures {
                Ok(f) => entry.rollouts = f,
                Err(e) => tracing::warn!(scope = %t.label, error = %e, "could not read the rollouts for the metrics"),
            }
        }
        Err(e) => record_error(status, t, &e),
    }
}

fn full_due(last_full: Option<&str>) -> bool {
    let Some(t) =
        last_full.and_then(|t| time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok())
    else {
        return true;
    };
    (time::OffsetDateTime::now_utc() - t).whole_seconds() >= FULL_SCAN_EVERY.as_secs() as i64
}

fn record_error(status: &Shared, t: &Target, e: &FleetError) {
    tracing::warn!(scope = %t.label, error = %e, "refresh failed; trying again next round");
    let mut s = lock(status);
    let entry = s.scopes.entry(t.label.clone()).or_default();
    entry.errors += 1;
    entry.last_error = Some(e.to_string());
}

fn log_outcome(t: &Target, id: &str, outcome: &StepOutcome) {
    match outcome {
        StepOutcome::Waiting => tracing::debug!(scope = %t.label, rollout = %id, "waiting for the devices"),
        StepOutcome::Elsewhere { driver } => {
            tracing::debug!(scope = %t.label, rollout = %id, driver = %driver.label, "driven by another driver")
        }
        StepOutcome::WaveStarted { wave, set, refused } => {
            tracing::info!(scope = %t.label, rollout = %id, wave = wave + 1, set, refused, "wave started")
        }
        StepOutcome::Paused { reason } => tracing::warn!(scope = %t.label, rollout = %id, %reason, "rollout paused"),
        StepOutcome::Completed => tracing::info!(scope = %t.label, rollout = %id, "rollout completed"),
        other => tracing::info!(scope = %t.label, rollout = %id, outcome = ?other, "rollout moved"),
    }
}

/// The scope's running and paused rollouts, and those that ended in the last hour.
fn figures(fleet: &FleetService, scope: crate::fleet::Scope) -> Result<Vec<RolloutFigures>> {
    let hour_ago = time::OffsetDateTime::now_utc() - time::Duration::hours(1);
    Ok(rollout::list(fleet.db(), scope)?
        .into_iter()
        .filter(|v| {
            matches!(v.state, RolloutState::Running | RolloutState::Paused)
                || time::OffsetDateTime::parse(&v.updated_at, &time::format_description::well_known::Rfc3339)
                    .is_ok_and(|t| t > hour_ago)
        })
        .map(|v| {
            let t = &v.total;
            RolloutFigures {
                state: match v.state {
                    RolloutState::Running => "running",
                    RolloutState::Paused => "paused",
                    RolloutState::Completed => "completed",
                    RolloutState::Aborted => "aborted",
                },
                wave: (v.current_wave + 1).max(0) as u32,
                waves: v.waves.len() as u32,
                driven_here: v.driver.as_ref().is_some_and(|d| d.this && !d.expired),
                outcomes: [
                    ("succeeded", t.succeeded),
                    ("failed", t.failed),
                    ("refused", t.refused),
                    ("replaced", t.replaced),
                    ("updating", t.updating),
                    ("pending", t.size.saturating_sub(t.set + t.refused)),
                ],
                id: v.id,
                module: v.module_name,
                version: v.version,
            }
        })
        .collect())
}

fn endpoints(status: Shared) -> axum::Router {
    use axum::http::{header, StatusCode};
    use axum::routing::get;
    let health = status.clone();
    axum::Router::new()
        .route(
            "/healthz",
            get(move || {
                let (ok, text) = healthz(&lock(&health));
                async move { (if ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE }, text) }
            }),
        )
        .route(
            "/metrics",
            get(move || {
                let body = metrics(&lock(&status));
                async move {
                    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], body)
                }
            }),
        )
}

/// Healthy while every scope was refreshed within three rounds (or the runner is younger than
/// that): a runner that cannot reach its service or database says so, and which scope.
fn healthz(s: &Status) -> (bool, String) {
    let allowed = s.interval * 3 + Duration::from_secs(60);
    let young = s.started.is_some_and(|t| t.elapsed() < allowed);
    let mut lines = Vec::new();
    let mut ok = true;
    for (label, scope) in &s.scopes {
        match scope.last_ok {
            Some(t) if t.elapsed() < allowed => {
                lines.push(format!("{label}: refreshed {} s ago", t.elapsed().as_secs()))
            }
            _ if young => lines.push(format!("{label}: starting")),
            last => {
                ok = false;
                lines.push(format!(
                    "{label}: not refreshed {}{}",
                    last.map_or("yet".to_owned(), |t| format!("for {} s", t.elapsed().as_secs())),
                    scope.last_error.as_ref().map(|e| format!(" ({e})")).unwrap_or_default()
                ));
            }
        }
    }
    if s.scopes.is_empty() {
        lines.push(if young { "starting".into() } else { "no scope refreshed".into() });
        ok = young;
    }
    (ok, format!("{}\n{}\n", if ok { "ok" } else { "unhealthy" }, lines.join("\n")))
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ScopeLabels {
    scope: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RolloutLabels {
    scope: String,
    rollout: String,
    module: String,
    version: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    scope: String,
    rollout: String,
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    scope: String,
    rollout: String,
    outcome: String,
}

/// The Prometheus text of the last round's figures.
fn metrics(s: &Status) -> String {
    let mut registry = Registry::default();
    let age = Family::<ScopeLabels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    let errors = Family::<ScopeLabels, prometheus_client::metrics::counter::Counter>::default();
    let state = Family::<StateLabels, Gauge>::default();
    let wave = Family::<RolloutLabels, Gauge>::default();
    let waves = Family::<RolloutLabels, Gauge>::default();
    let devices = Family::<OutcomeLabels, Gauge>::default();
    let driven = Gauge::<i64>::default();
    let mut here = 0;
    for (label, scope) in &s.scopes {
        let l = ScopeLabels { scope: label.clone() };
        if let Some(t) = scope.last_ok {
            age.get_or_create(&l).set(t.elapsed().as_secs_f64());
        }
        errors.get_or_create(&l).inc_by(scope.errors);
        for r in &scope.rollouts {
            let rl = RolloutLabels {
                scope: label.clone(),
                rollout: r.id.clone(),
                module: r.module.clone(),
                version: r.version.clone(),
            };
            for st in ["running", "paused", "completed", "aborted"] {
                let sl = StateLabels { scope: label.clone(), rollout: r.id.clone(), state: st.into() };
                state.get_or_create(&sl).set((r.state == st) as i64);
            }
            wave.get_or_create(&rl).set(r.wave as i64);
            waves.get_or_create(&rl).set(r.waves as i64);
            for (outcome, n) in r.outcomes {
                let ol = OutcomeLabels { scope: label.clone(), rollout: r.id.clone(), outcome: outcome.into() };
                devices.get_or_create(&ol).set(n as i64);
            }
            here += r.driven_here as i64;
        }
    }
    driven.set(here);
    registry.register("dcs_refresh_age_seconds", "Seconds since the scope's last successful refresh", age);
    registry.register("dcs_refresh_errors", "Refreshes of the scope that failed", errors);
    registry.register("dcs_rollout_state", "The rollout's state: 1 for the state it is in", state);
    registry.register("dcs_rollout_wave", "The wave under way (1-based; 0 before the first)", wave);
    registry.register("dcs_rollout_waves", "Waves of the rollout's plan", waves);
    registry.register("dcs_rollout_devices", "Devices of the rollout by outcome", devices);
    registry.register("dcs_rollouts_driven", "Rollouts this runner holds the lease of", driven);
    let mut out = String::new();
    encode(&mut out, &registry).expect("writing to a String cannot fail");
    out
}
