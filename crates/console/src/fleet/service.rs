//! The fleet as a long-lived service of the app (and anything else that keeps one): one scan at
//! a time with its progress and a way to cancel it, the refresh timer's decisions, the step of
//! the running rollouts after every refresh, and the answer to "can targets be set here?" (yes
//! when the profile has a set-target operation: the reference shows none, so nothing is probed).
//!
//! Every change of what [`FleetService::status`] or the rollout counts answer (a scan started,
//! a page read, a scan ended, a rollout moved, the settings changed) is signalled on a
//! [`tokio::sync::watch`] channel ([`FleetService::changes`]): the app forwards it to the web
//! view as an event, so nothing has to ask again and again whether something changed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dcs_api::Client;
use serde::Serialize;
use tokio::sync::{broadcast, watch, OwnedMutexGuard};
use tokio_util::sync::CancellationToken;

use super::query::{self, DeviceMatch};
use super::rollout::{self, Driver, DriverKind, StepOutcome};
use super::scan::{self, RefreshMode, ScanKind, ScanProgress, ScanReport};
use super::{now_ms, FleetDb, FleetError, Result, Scope, ScopeInfo};
use crate::set_target::SetTarget;
use crate::Profile;

/// The refresh interval when none was chosen.
pub const DEFAULT_INTERVAL_SECS: u32 = 15;
/// A full scan at least this often (an incremental refresh cannot see a state disappear).
pub const FULL_SCAN_EVERY: Duration = Duration::from_secs(3600);

/// Rows a walk ahead of the device table steps at a time (a few milliseconds of the database
/// at a million rows, which a window asked for meanwhile waits at most).
pub const WALK_AHEAD_STEP: u32 = 25_000;

/// What the dashboard shows of the fleet's work for one scope.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FleetStatus {
    /// The scan under way in this scope, if one is.
    pub scanning: Option<ScanProgress>,
    /// A scan of another scope is under way (this one's waits).
    pub busy_elsewhere: bool,
    pub last: Option<ScanReport>,
    /// Why the last refresh failed, if it did.
    pub error: Option<String>,
    pub info: ScopeInfo,
    /// Grows with every finished refresh or rollout change: the UI reloads what it shows then.
    pub revision: u32,
    pub interval_seconds: u32,
    /// How often refreshes really start: the interval counts from the end of the previous one
    /// (refreshes never overlap), so this is the interval plus the last refresh's duration.
    pub effective_interval_seconds: u32,
    pub auto_refresh: bool,
    pub running_rollouts: u32,
    /// Paused rollouts: they wait for the operator (resume or abort).
    pub paused_rollouts: u32,
    /// Incremental refreshes, or full scans because the service refuses or ignores
    /// `modifiedSince` ([`scan`]'s module doc), in plain words too.
    pub mode: RefreshMode,
}

/// Whether the rollout actions can set targets with this profile.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Availability {
    pub available: bool,
    /// In plain words: the operation used, or why there is none.
    pub reason: String,
    /// The profile whose setting decides it.
    pub profile: String,
    /// The operation, as `PUT /firmware/states/{deviceId}/{moduleId}`, when there is one.
    pub operation: Option<String>,
}

/// Whether rollouts can set targets with `profile`: only with its set-target operation, never
/// by guessing at the service.
pub fn set_target_availability(profile: &Profile) -> Availability {
    match &profile.set_target {
        Some(op) => Availability {
            available: true,
            reason: format!("targets are set with the set-target operation of profile `{}`: {}", profile.name, op.summary()),
            profile: profile.name.clone(),
            operation: Some(op.summary()),
        },
        None => Availability {
            available: false,
            reason: format!(
                "profile `{}` has no set-target operation. The service's API documentation does not describe how a target \
                 version is set, so the console does not guess; monitoring works without it",
                profile.name
            ),
            profile: profile.name.clone(),
            operation: None,
        },
    }
}

#[derive(Default)]
struct Inner {
    scanning: Option<(Scope, ScanProgress)>,
    cancel: Option<CancellationToken>,
    last: HashMap<Scope, ScanReport>,
    error: HashMap<Scope, String>,
    revision: u32,
    interval: Option<u32>,
    paused: bool,
    last_refresh: HashMap<Scope, Instant>,
    /// When the last refresh of each scope began, and the time between the last two beginnings:
    /// how often refreshes really come (the interval, the refresh itself, the timer's second).
    began: HashMap<Scope, Instant>,
    period: HashMap<Scope, Duration>,
    devices: HashMap<(Scope, String), DeviceMatch>,
    /// States held per scope, counted once after each change (the status is read after each change).
    counts: HashMap<Scope, u32>,
}

pub struct FleetService {
    db: Arc<FleetDb>,
    inner: Mutex<Inner>,
    /// One scan or rollout step at a time.
    work: Arc<tokio::sync::Mutex<()>>,
    /// Counts the changes of the status (see the module doc).
    changed: watch::Sender<u64>,
    /// Each move of a rollout (a wave started, a pause, the end), as it happens.
    moves: broadcast::Sender<RolloutMoved>,
    /// Counts the device table's windows asked for: a walk ahead goes on while it is the last
    /// window's ([`FleetService::rows`]).
    windows: Arc<AtomicU64>,
    /// This process as a driver of rollouts: it moves on only those whose lease it holds.
    driver: Driver,
    /// When [`FleetService::keep_leases`] last renewed them.
    renewed: Mutex<Option<Instant>>,
}

/// A rollout moved on by the fleet's timer: what notifications are raised from.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutMoved {
    pub rollout: String,
    pub outcome: StepOutcome,
}

/// A refresh registered (the work lock held, its progress shown by [`FleetService::status`] at
/// once) and not yet run: [`FleetService::run`] runs it.
pub struct Begun {
    _work: OwnedMutexGuard<()>,
    cancel: CancellationToken,
    scope: Scope,
    kind: ScanKind,
}

impl FleetService {
    /// The service over `db` as a driver of `kind` (see [`rollout::lease`]), with the refresh
    /// interval and switch kept there.
    pub fn new(db: Arc<FleetDb>, kind: DriverKind) -> FleetService {
        Self::with_driver(db, Driver::new(kind))
    }

    /// The service over `db` as `driver`.
    pub fn with_driver(db: Arc<FleetDb>, driver: Driver) -> FleetService {
        let interval = db
            .setting("refresh_interval")
            .ok()
            .flatten()
            .and_then(|v| v.parse().ok())
            .filter(|s| (5..=3600).contains(s));
        let paused = db.setting("auto_refresh").ok().flatten().is_some_and(|v| v == "off");
        let inner = Inner { interval, paused, ..Default::default() };
        FleetService {
            db,
            inner: Mutex::new(inner),
            work: Arc::new(tokio::sync::Mutex::new(())),
            changed: watch::Sender::new(0),
            moves: broadcast::Sender::new(64),
            windows: Default::default(),
            driver,
            renewed: Mutex::new(None),
        }
    }

    /// Renews the leases this process holds, at most every third of a lease (the app's timer
    /// calls it every second): its rollouts stay its own between refreshes that come less often
    /// than a lease lasts. Only live leases are renewed: one that ran out was another's to take.
    pub fn keep_leases(&self) -> Result<()> {
        let mut last = self.renewed.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_some_and(|t| t.elapsed() < self.driver.lease / 3) {
            return Ok(());
        }
        *last = Some(Instant::now());
        drop(last);
        rollout::lease::renew_all(&self.db, &self.driver).map(|_| ())
    }

    /// This process as a driver of rollouts.
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// Lets go of every rollout this process drives (it stops cleanly): another driver takes
    /// them over at once instead of after their leases expire.
    pub fn release(&self) -> Result<u32> {
        rollout::lease::release(&self.db, &self.driver)
    }

    /// A receiver of every rollout move from now on (one that falls 64 behind loses the oldest).
    pub fn moves(&self) -> broadcast::Receiver<RolloutMoved> {
        self.moves.subscribe()
    }

    /// A receiver told of every change of the status or the rollout counts of any scope (the
    /// value is a count of changes; only that it changed matters).
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Tells the receivers of [`FleetService::changes`] that something changed.
    fn touch(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub fn db(&self) -> &FleetDb {
        &self.db
    }

    /// A window of the device table ([`query::rows`]). Then, until another window is asked for
    /// or the data change, its order is walked on to the end in the background, a step of
    /// [`WALK_AHEAD_STEP`] rows at a time (the database is free between two), so that a jump
    /// deep into the table finds a position near it: a first jump to row 900,000 of a million
    /// otherwise walks there on the spot (135 to 345 ms).
    pub fn rows(
        &self,
        scope: Scope,
        q: &query::DeviceQuery,
        device: Option<&DeviceMatch>,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<query::DeviceRow>> {
        let rows = query::rows(&self.db, scope, q, device, offset, limit)?;
        let turn = self.windows.fetch_add(1, Ordering::Relaxed) + 1;
        let mut since = None;
        if query::walk_on(&self.db, scope, q, device, 0, &mut since).unwrap_or(false) {
            let (db, windows, q, device) = (self.db.clone(), self.windows.clone(), q.clone(), device.cloned());
            let walk = move || {
                while windows.load(Ordering::Relaxed) == turn {
                    match query::walk_on(&db, scope, &q, device.as_ref(), WALK_AHEAD_STEP, &mut since) {
                        Ok(true) => std::thread::sleep(Duration::from_millis(1)),
                        _ => break,
                    }
                }
            };
            // Without a thread the next window walks as far as it needs, as before.
            let _ = std::thread::Builder::new().name("dcs-walk-ahead".into()).spawn(walk);
        }
        Ok(rows)
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn status(&self, scope: Scope) -> Result<FleetStatus> {
        let cached = self.inner().counts.get(&scope).copied();
        let info = match cached {
            Some(n) => self.db.scope_info_with(scope, n)?,
            None => {
                let info = self.db.scope_info(scope)?;
                self.inner().counts.insert(scope, info.states);
                info
            }
        };
        let counts = rollout::counts(&self.db, scope)?;
        let mode = scan::mode(&self.db, scope)?;
        let i = self.inner();
        let interval_seconds = i.interval.unwrap_or(DEFAULT_INTERVAL_SECS);
        let last_secs = i.last.get(&scope).map_or(0, |r| r.elapsed_ms.div_ceil(1000));
        Ok(FleetStatus {
            scanning: i.scanning.as_ref().filter(|(s, _)| *s == scope).map(|(_, p)| p.clone()),
            busy_elsewhere: i.scanning.as_ref().is_some_and(|(s, _)| *s != scope),
            last: i.last.get(&scope).cloned(),
            error: i.error.get(&scope).cloned(),
            info,
            revision: i.revision,
            interval_seconds,
            effective_interval_seconds: interval_seconds + last_secs,
            auto_refresh: !i.paused,
            running_rollouts: counts.running,
            paused_rollouts: counts.paused,
            mode,
        })
    }

    /// Sets the refresh interval (5 s to 1 h) and whether the timer refreshes at all; both are
    /// kept in the database for the next start.
    pub fn set_refresh(&self, seconds: u32, auto: bool) -> Result<()> {
        if !(5..=3600).contains(&seconds) {
            return Err(FleetError::invalid(
                "intervalSeconds",
                format!("must be from 5 to 3600 seconds, got {seconds}"),
            ));
        }
        self.db.set_setting("refresh_interval", &seconds.to_string())?;
        self.db.set_setting("auto_refresh", if auto { "on" } else { "off" })?;
        {
            let mut i = self.inner();
            i.interval = Some(seconds);
            i.paused = !auto;
            i.revision += 1;
        }
        self.touch();
        Ok(())
    }

    /// What the timer should do for `scope` now: nothing, or a refresh of that kind. A scope is
    /// refreshed by the timer once it was scanned (the first scan is the user's) or while a
    /// rollout of it runs; never while a scan runs, and an interval after the last one ended.
    /// A full scan when the service lacks `modifiedSince` (said by [`FleetStatus::mode`]).
    pub fn due(&self, scope: Scope) -> Result<Option<ScanKind>> {
        // Asked every second: the times only, no count of the states.
        let info = self.db.scope_info_with(scope, 0)?;
        let running = !rollout::running(&self.db, scope)?.is_empty();
        let i = self.inner();
        if i.scanning.is_some() || (i.paused && !running) {
            return Ok(None);
        }
        let interval = Duration::from_secs(i.interval.unwrap_or(DEFAULT_INTERVAL_SECS) as u64);
        if info.last_refresh.is_none() && !running {
            return Ok(None);
        }
        if i.last_refresh.get(&scope).is_some_and(|t| t.elapsed() < interval) {
            return Ok(None);
        }
        let full_due = info.last_full_scan.is_none()
            || info
                .last_full_scan
                .as_deref()
                .and_then(|t| time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok())
                .is_some_and(|t| {
                    (time::OffsetDateTime::now_utc() - t).whole_seconds() >= FULL_SCAN_EVERY.as_secs() as i64
                });
        drop(i);
        Ok(Some(if full_due { ScanKind::Full } else { scan::planned_kind(&self.db, scope, ScanKind::Incremental)? }))
    }

    /// Records that a refresh of `scope` could not even start (no session): the timer waits a
    /// whole interval before trying again.
    pub fn note_failure(&self, scope: Scope, reason: String) {
        let mut i = self.inner();
        i.last_refresh.insert(scope, Instant::now());
        if i.error.get(&scope) != Some(&reason) {
            i.error.insert(scope, reason);
            i.revision += 1;
            drop(i);
            self.touch();
        }
    }

    /// Cancels the scan under way; answers whether there was one.
    pub fn cancel(&self) -> bool {
        match self.inner().cancel.take() {
            Some(c) => {
                c.cancel();
                true
            }
            None => false,
        }
    }

    /// Refreshes `scope` through `client`, then takes a history snapshot and moves the scope's
    /// running rollouts on with the profile's set-target operation `op`. With `wait` false,
    /// answers `None` at once if other work is under way.
    pub async fn refresh(
        &self,
        client: &Client,
        op: Option<&SetTarget>,
        scope: Scope,
        kind: ScanKind,
        wait: bool,
    ) -> Result<Option<ScanReport>> {
        let work = if wait {
            self.work.clone().lock_owned().await
        } else {
            match self.work.clone().try_lock_owned() {
                Ok(g) => g,
                Err(_) => return Ok(None),
            }
        };
        let begun = self.begin(work, scope, kind)?;
        self.run(begun, client, op).await.map(Some)
    }

    /// Registers a refresh of `scope` the caller will [`run`](FleetService::run) (in the
    /// background): when this answers, [`FleetService::status`] already shows it under way.
    /// Refused while a scan runs; waits for a rollout action of the operator to end.
    pub async fn start(&self, scope: Scope, kind: ScanKind) -> Result<Begun> {
        let work = match self.work.clone().try_lock_owned() {
            Ok(g) => g,
            Err(_) if self.inner().scanning.is_some() => {
                return Err(FleetError::Conflict("a scan is already under way; wait for it or cancel it".into()))
            }
            Err(_) => self.work.clone().lock_owned().await,
        };
        self.begin(work, scope, kind)
    }

    /// Shows the refresh under way (with what it will be: a full scan where the service lacks
    /// modifiedSince) and makes it cancellable; the caller holds the work lock.
    fn begin(&self, work: OwnedMutexGuard<()>, scope: Scope, kind: ScanKind) -> Result<Begun> {
        let cancel = CancellationToken::new();
        let planned = scan::planned_kind(&self.db, scope, kind)?;
        {
            let mut i = self.inner();
            i.cancel = Some(cancel.clone());
            i.scanning =
                Some((scope, ScanProgress { kind: planned, pages: 0, states: 0, expected: None, elapsed_ms: 0 }));
            let now = Instant::now();
            if let Some(before) = i.began.insert(scope, now) {
                i.period.insert(scope, now - before);
            }
        }
        self.touch();
        Ok(Begun { _work: work, cancel, scope, kind })
    }

    /// How often the refreshes of `scope` really come: the time between the last two
    /// beginnings when they came from the timer (at most twice the interval plus the last
    /// refresh's duration), else the interval plus that duration.
    pub fn refresh_period(&self, scope: Scope) -> Duration {
        let i = self.inner();
        let interval = Duration::from_secs(i.interval.unwrap_or(DEFAULT_INTERVAL_SECS) as u64);
        let last = Duration::from_millis(i.last.get(&scope).map_or(0, |r| r.elapsed_ms as u64));
        let planned = interval + last;
        // A longer gap is a pause of the timer or a refresh asked for by hand, not its beat.
        i.period.get(&scope).copied().filter(|p| *p >= interval && *p <= planned * 2).unwrap_or(planned)
    }

    /// Runs a registered refresh: the scan, a history snapshot, then a step of the scope's
    /// running rollouts; the work lock is let go when it ends.
    pub async fn run(&self, begun: Begun, client: &Client, op: Option<&SetTarget>) -> Result<ScanReport> {
        self.run_stepped(begun, client, op).await.map(|(report, _)| report)
    }

    /// As [`FleetService::refresh`] (waiting for other work), answering also how each running
    /// rollout of the scope moved, by id: what `dcs rollout watch` prints.
    pub async fn refresh_stepped(
        &self,
        client: &Client,
        op: Option<&SetTarget>,
        scope: Scope,
        kind: ScanKind,
    ) -> Result<(ScanReport, Vec<(String, StepOutcome)>)> {
        let begun = self.begin(self.work.clone().lock_owned().await, scope, kind)?;
        self.run_stepped(begun, client, op).await
    }

    /// [`FleetService::run`], with how each running rollout moved.
    async fn run_stepped(
        &self,
        begun: Begun,
        client: &Client,
        op: Option<&SetTarget>,
    ) -> Result<(ScanReport, Vec<(String, StepOutcome)>)> {
        let Begun { _work, cancel, scope, kind } = begun;
        let result = scan::refresh(client, &self.db, scope, kind, &cancel, |p| {
            {
                let mut i = self.inner();
                i.scanning = Some((scope, p.clone()));
                // A page was written: the next status counts again.
                i.counts.remove(&scope);
            }
            self.touch();
        })
        .await;
        // The rollouts move on from what was just read, before the screen reloads (its reads
        // share the database's connection) and before the history snapshot: a wave starts with
        // the refresh that shows the one before it met its threshold, not seconds after it.
        let moved = match &result {
            Ok(_) => self.step_rollouts(client, op, scope).await,
            Err(_) => Ok(Vec::new()),
        };
        {
            let mut i = self.inner();
            i.scanning = None;
            i.cancel = None;
            i.last_refresh.insert(scope, Instant::now());
            i.counts.remove(&scope);
            i.revision += 1;
            match &result {
                Ok(report) => {
                    i.last.insert(scope, report.clone());
                    i.error.remove(&scope);
                }
                Err(e) => {
                    i.error.insert(scope, e.to_string());
                }
            }
        }
        self.touch();
        let report = result?;
        query::snapshot(&self.db, scope, now_ms())?;
        Ok((report, moved?))
    }

    /// Moves the scope's running rollouts on (the caller holds no lock; right after a refresh's
    /// scan).
    async fn step_rollouts(
        &self,
        client: &Client,
        op: Option<&SetTarget>,
        scope: Scope,
    ) -> Result<Vec<(String, StepOutcome)>> {
        let mut outcomes = Vec::new();
        for id in rollout::running(&self.db, scope)? {
            let outcome = match rollout::advance(client, op, &self.db, &id, &self.driver).await {
                // The lease was lost mid-step (another driver took it over, or the rollout was
                // stopped): nothing more was sent, and the others go on.
                Err(FleetError::NotDriver(why)) => {
                    tracing::warn!(rollout = %id, %why, "rollout step stopped");
                    continue;
                }
                other => other?,
            };
            if matches!(outcome, StepOutcome::Elsewhere { .. }) {
                outcomes.push((id, outcome));
                continue;
            }
            if outcome != StepOutcome::Waiting {
                tracing::info!(rollout = %id, ?outcome, "rollout moved");
                self.inner().revision += 1;
                self.touch();
                // No receiver is no error: nobody listens (the CLI).
                let _ = self.moves.send(RolloutMoved { rollout: id.clone(), outcome: outcome.clone() });
            }
            outcomes.push((id, outcome));
        }
        Ok(outcomes)
    }

    /// Runs `f` as the only fleet work under way (a rollout started, paused, resumed or
    /// aborted by the operator), then marks the change.
    pub async fn exclusive<T>(&self, f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        let _guard = self.work.lock().await;
        let out = f.await;
        {
            let mut i = self.inner();
            i.revision += 1;
            i.counts.clear();
        }
        self.touch();
        out
    }

    /// The device filter as typed, resolved once per scope (an IMEI or DevEUI asks the service).
    pub async fn device_match(&self, client: &Client, scope: Scope, raw: Option<&str>) -> Result<Option<DeviceMatch>> {
        let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        if let Some(m) = self.inner().devices.get(&(scope, raw.to_owned())) {
            return Ok(Some(m.clone()));
        }
        let m = query::resolve_device(client, raw).await?;
        self.inner().devices.insert((scope, raw.to_owned()), m.clone());
        Ok(Some(m))
    }
}
