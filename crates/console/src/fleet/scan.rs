//! Copying a scope's firmware states into the fleet database, page by page.
//!
//! A **full scan** reads every state in the service's default order and then forgets states the
//! service no longer has. An **incremental refresh** asks only for states modified since a
//! watermark. Neither the `modifiedSince` filter nor a `modifiedAt` sort of `GET /firmware/states`
//! is in the reference: it shows `cursor`, `limit`, `sort` and `clientId` ("further parameters:
//! not shown"), and a state has no `modifiedAt` (section 2.5). The simulator takes both (A-41);
//! another service may refuse them or ignore them. So every refresh finds out from the answers
//! themselves, per scope, and the fleet database remembers what it learnt and when ([`Support`],
//! [`RefreshMode`]).
//!
//! **A state's time** is the later of its target's and its status's times ([`modified_at`]),
//! compared as instants, never as text (the service may write them in any ISO 8601 form). A state
//! with neither time is no evidence either way.
//!
//! **A refusal** is a 4xx answer other than 401, 403, 408 and 429 (those are about the caller or
//! the moment, not the request's parameters) to a request with the parameter, while the same
//! request without it is accepted. Nothing else counts as a refusal: a request failing both ways
//! fails the refresh.
//!
//! **The watermark request** `sort=-modifiedAt` asks for the service's latest change.
//! - Refused → [`Support::Refused`].
//! - Ignored: on every full scan, and whenever the support is not known or was learnt more than
//!   [`RECHECK_AFTER_MS`] ago, it asks for [`ORDER_SAMPLE`] states. If the states of that page
//!   that have a time are not in non-increasing order of it → [`Support::Ignored`]; in that
//!   order with at least two different times → [`Support::Supported`]. Fewer than two different
//!   times (the latest changes may be one batch, stamped at one instant) ask for as many states
//!   the other way, `sort=modifiedAt`: not in non-decreasing order, or any later than the first
//!   page's latest → [`Support::Ignored`]; in that order with two different times →
//!   [`Support::Supported`]; else (or if that request fails) nothing is decided.
//!
//! **`modifiedSince`**, sent by every incremental refresh (the watermark less the overlap, below;
//! in milliseconds when the service's times have them, else in whole seconds, rounded down):
//! - Refused → [`Support::Refused`]; the refresh goes on as a full scan.
//! - Ignored: a state on any page whose time is more than [`SLACK_MS`] before the instant sent
//!   (a service filtering by its own coarser clock may round the instant down by less) →
//!   [`Support::Ignored`]; the refresh starts again as a full scan. A service applying the filter
//!   never answers such a state. The size of the answer alone decides nothing: every state may
//!   have changed since (a rollout to the whole fleet), and then a full read is the right answer.
//! - Otherwise → [`Support::Supported`].
//!
//! **Without `modifiedSince`** refreshes are full scans: every state is read, the database writes
//! only the rows that differ (the report's `changed`), and states the service no longer has are
//! forgotten. The timer keeps the user's interval, counted from the end of the previous scan, so
//! scans never overlap. A refused or ignored `modifiedSince` is tried again once what was learnt
//! is [`RECHECK_AFTER_MS`] old (the service may have changed).
//!
//! **The watermark** is in the service's clock, never this computer's. With the sort, it is the
//! time of the latest state asked for before reading: every change made after that request is
//! stamped at or after it, so the next refresh sees it even if this one missed it. The newest
//! states may show no time (a state reporting only its version has neither a target's nor a
//! status's): the watermark request asks for [`ORDER_SAMPLE`] states and takes the first time
//! among them, which is no later than the untimed ones' (a watermark too early reads more, never
//! less).
//!
//! **The overlap**: the next refresh also reaches back before the watermark, for a change stamped
//! just before the watermark request but committed after it (a write under way while it was
//! asked). Such a write is under way while the service's clock moves, and that clock may run at
//! any rate (a simulator's runs fast or slow), so the overlap is measured in it, never fixed: the
//! service clock's progress while the previous refresh read, as its states show it (the span of
//! the times after the watermark among the states read: changes committed while it read; not
//! from the watermark, which may be long before the clock), plus that progress's rate over
//! [`OVERLAP_MARGIN_MS`] of this computer's time. A service where at most one instant's changes
//! were committed while the refresh read shows no progress: the next refresh asks from the
//! watermark itself (the states stamped at it are read again). A write under way across the
//! watermark request while nothing else was committed during the reading, or longer than the
//! overlap, is left to the next full scan (hourly). A database from before the overlap was
//! measured reaches back [`OVERLAP_MS`] once.
//! Without the sort, the watermark is the latest time among the states read, less the scan's
//! duration: a change the scan missed was stamped after the scan started, and no state read was
//! stamped later than the scan's end; the overlap is then [`OVERLAP_MS`] (with no watermark
//! request there is no measure of the clock). Reading in the service's default order keeps
//! paging sound while states change: a state's time only grows, so the set `modifiedSince`
//! selects only gains members during a scan, and the `next` links (by offset or by key) never
//! skip one (at worst a state is read twice, which the upsert absorbs).

use std::collections::HashSet;
use std::time::Instant;

use dcs_api::firmware::{Embed, ModuleFilter, PackageFilter, StateFilter};
use dcs_api::model::FirmwareState;
use dcs_api::Client;
use futures::TryStreamExt;
use rusqlite::params;
use serde::Serialize;
use time::OffsetDateTime;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::first_counts::FirstCounts;
use super::states::write_states;
pub use super::states::{remove_states, write_page};
use super::{from_ms, ms_to_text, now_ms, to_ms, FleetDb, FleetError, Result, Scope};

/// How far before the watermark an incremental refresh reaches back (in the service's clock)
/// when the overlap was not measured (module doc: without the sort, or a database from before).
pub const OVERLAP_MS: i64 = 2 * 60 * 1000;
/// This computer's time over which the clock's progress is added again to the next overlap (module doc).
pub const OVERLAP_MARGIN_MS: i64 = 1000;
/// States asked for per page: the simulator's maximum (the reference shows none). A service that
/// refuses it is asked again by the client's pager with a size it accepts, or its default.
pub const PAGE_SIZE: u32 = 1000;
/// States asked for to see whether `sort=-modifiedAt` orders them.
pub const ORDER_SAMPLE: u32 = 50;
/// How much earlier than the `modifiedSince` sent a state's time must be to show the filter ignored.
pub const SLACK_MS: i64 = 1000;
/// What was learnt of a refused or ignored parameter is checked again after this long (a day).
pub const RECHECK_AFTER_MS: i64 = 24 * 3600 * 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum ScanKind {
    Full,
    Incremental,
}

/// What the service was seen to do with a parameter of `GET /firmware/states` the reference does
/// not show (`modifiedSince`, `sort=-modifiedAt`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum Support {
    /// Not asked yet (or the answers decided nothing).
    #[default]
    Unknown,
    Supported,
    /// Accepted, but the answer was not filtered or ordered by it.
    Ignored,
    /// Answered with a 4xx while the same request without it was accepted.
    Refused,
}

impl Support {
    fn as_str(self) -> &'static str {
        match self {
            Support::Unknown => "unknown",
            Support::Supported => "supported",
            Support::Ignored => "ignored",
            Support::Refused => "refused",
        }
    }

    fn parse(s: Option<&str>) -> Support {
        match s {
            Some("supported") => Support::Supported,
            Some("ignored") => Support::Ignored,
            Some("refused") => Support::Refused,
            _ => Support::Unknown,
        }
    }

    /// Worth using: supported, or not known to be otherwise.
    fn usable(self) -> bool {
        matches!(self, Support::Unknown | Support::Supported)
    }

    /// "ignores" / "refuses", for the mode's words.
    fn verb(self) -> &'static str {
        match self {
            Support::Refused => "refuses",
            _ => "ignores",
        }
    }
}

/// How a scope is refreshed, as learnt from the service (module doc), in plain words too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RefreshMode {
    /// Refreshes read only what changed (false: every refresh is a full scan).
    pub incremental: bool,
    /// What the service does with `modifiedSince`.
    pub modified_since: Support,
    /// When that was learnt (this computer's clock, RFC 3339).
    pub modified_since_checked_at: Option<String>,
    /// What the service does with `sort=-modifiedAt`.
    pub modified_at_sort: Support,
    pub modified_at_sort_checked_at: Option<String>,
    /// The mode in plain words: "incremental: …" or "full scans: this service ignores
    /// modifiedSince …".
    pub text: String,
}

/// What the database holds of a scope's support, in milliseconds.
#[derive(Debug, Clone, Copy, Default)]
struct Known {
    since: Support,
    since_at: Option<i64>,
    sort: Support,
    sort_at: Option<i64>,
    /// The overlap measured by the refresh that set the watermark (the service's clock).
    overlap: Option<i64>,
}

impl Known {
    fn mode(&self) -> RefreshMode {
        let incremental = self.since.usable();
        let text = if !incremental {
            format!(
                "full scans: this service {} modifiedSince, so every refresh reads every state and reports the rows that changed",
                self.since.verb()
            )
        } else if !self.sort.usable() {
            format!(
                "incremental: only states changed since the last refresh are read (this service {} sort=-modifiedAt, \
                 so where to start is taken from the states read)",
                self.sort.verb()
            )
        } else if self.since == Support::Unknown {
            "incremental: only states changed since the last refresh are read (not yet checked with this service)"
                .into()
        } else {
            "incremental: only states changed since the last refresh are read".into()
        };
        RefreshMode {
            incremental,
            modified_since: self.since,
            modified_since_checked_at: self.since_at.map(ms_to_text),
            modified_at_sort: self.sort,
            modified_at_sort_checked_at: self.sort_at.map(ms_to_text),
            text,
        }
    }
}

/// Whether something learnt at `at` is to be checked again at `now`.
fn stale(at: Option<i64>, now: i64) -> bool {
    at.is_none_or(|at| now - at >= RECHECK_AFTER_MS)
}

/// The scope's watermark and what is known of its service.
fn load(db: &FleetDb, scope: Scope) -> Result<(Option<i64>, Known)> {
    Ok(db.conn().query_row(
        "SELECT watermark, since_support, since_checked_at, sort_support, sort_checked_at, overlap FROM scopes WHERE id = ?1",
        [scope.0],
        |r| {
            Ok((
                r.get(0)?,
                Known {
                    since: Support::parse(r.get::<_, Option<String>>(1)?.as_deref()),
                    since_at: r.get(2)?,
                    sort: Support::parse(r.get::<_, Option<String>>(3)?.as_deref()),
                    sort_at: r.get(4)?,
                    overlap: r.get(5)?,
                },
            ))
        },
    )?)
}

/// How `scope` is refreshed, as the database remembers it.
pub fn mode(db: &FleetDb, scope: Scope) -> Result<RefreshMode> {
    Ok(load(db, scope)?.1.mode())
}

/// What the next refresh of `scope` will be when asked for `kind`: a full scan when the service
/// is known not to support `modifiedSince` (until that is to be checked again).
pub fn planned_kind(db: &FleetDb, scope: Scope, kind: ScanKind) -> Result<ScanKind> {
    let (watermark, known) = load(db, scope)?;
    Ok(plan(kind, watermark, &known, now_ms()))
}

fn plan(kind: ScanKind, watermark: Option<i64>, known: &Known, now: i64) -> ScanKind {
    let since_usable = known.since.usable() || stale(known.since_at, now);
    match (kind, watermark) {
        (ScanKind::Incremental, Some(_)) if since_usable => ScanKind::Incremental,
        _ => ScanKind::Full,
    }
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
    /// What the refresh was in the end (an incremental one that found `modifiedSince` refused or
    /// ignored went on as a full scan).
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
    /// How the scope is refreshed, with what this refresh learnt.
    pub mode: RefreshMode,
}

/// The later of a state's two modification times (it has no `modifiedAt` of its own).
pub fn modified_at(s: &FirmwareState) -> Option<OffsetDateTime> {
    match (s.target_firmware_version_modified_at, s.firmware_update_status_modified_at) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Whether an error answers the request's parameters (module doc: "a refusal"), as opposed to
/// the caller, the moment or the connection.
fn about_the_request(e: &FleetError) -> bool {
    matches!(e, FleetError::Api(dcs_api::Error::Api { status, .. })
        if (400..500).contains(status) && !matches!(status, 401 | 403 | 408 | 429))
}

/// Whether states are in non-increasing (`newest_first`) or non-decreasing order of their times
/// (those without one left out); `None` when fewer than two different times decide nothing.
fn ordered_by_time(items: &[FirmwareState], newest_first: bool) -> Option<bool> {
    let times: Vec<OffsetDateTime> = items.iter().filter_map(modified_at).collect();
    if times.iter().collect::<HashSet<_>>().len() < 2 {
        return None;
    }
    Some(times.windows(2).all(|w| if newest_first { w[0] >= w[1] } else { w[0] <= w[1] }))
}

/// Whether the service sorts by `modifiedAt` (module doc), from the first page of
/// `sort=-modifiedAt`, asking for the oldest states when that page decides nothing.
async fn sorts_by_time(client: &Client, cancel: &CancellationToken, newest: &[FirmwareState]) -> Result<Option<bool>> {
    if let Some(ordered) = ordered_by_time(newest, true) {
        return Ok(Some(ordered));
    }
    let Some(latest) = newest.iter().filter_map(modified_at).max() else { return Ok(None) };
    let filter = StateFilter { sort: Some("modifiedAt".into()), limit: Some(ORDER_SAMPLE), ..Default::default() };
    Ok(match cancellable(cancel, client.firmware().states_page(&filter)).await? {
        Ok((oldest, _)) => ordered_by_time(&oldest.items, false)
            .map(|ordered| ordered && oldest.items.iter().filter_map(modified_at).all(|t| t <= latest)),
        Err(e) => {
            tracing::info!(error = %e, "sort=modifiedAt failed: the order decides nothing");
            None
        }
    })
}

/// Refreshes `scope` from the service: incrementally when a watermark is known, `kind` is
/// [`ScanKind::Incremental`] and the service is not known to lack `modifiedSince`, else with a
/// full scan. Learns and remembers what the service supports (module doc). Progress is reported
/// after every page; `cancel` stops between pages (what was read stays, the watermark and what
/// was learnt do not move).
pub async fn refresh(
    client: &Client,
    db: &FleetDb,
    scope: Scope,
    kind: ScanKind,
    cancel: &CancellationToken,
    progress: impl Fn(&ScanProgress),
) -> Result<ScanReport> {
    let started = Instant::now();
    let now = now_ms();
    let (watermark, mut known) = load(db, scope)?;
    let mut kind = plan(kind, watermark, &known, now);
    let firmware = client.firmware();

    // The service's latest modification before reading: the next watermark, if it sorts.
    let mut latest_asked = None;
    if known.sort.usable() || stale(known.sort_at, now) {
        let check = kind == ScanKind::Full || known.sort == Support::Unknown || stale(known.sort_at, now);
        let probe = StateFilter { sort: Some("-modifiedAt".into()), limit: Some(ORDER_SAMPLE), ..Default::default() };
        match cancellable(cancel, firmware.states_page(&probe)).await?.map_err(FleetError::from) {
            Ok((page, _)) => {
                if check {
                    if let Some(ordered) = sorts_by_time(client, cancel, &page.items).await? {
                        known.sort = if ordered { Support::Supported } else { Support::Ignored };
                        known.sort_at = Some(now);
                    }
                }
                latest_asked = page.items.iter().find_map(modified_at).map(to_ms);
            }
            Err(e) if about_the_request(&e) => {
                let plain = StateFilter { limit: Some(1), ..Default::default() };
                cancellable(cancel, firmware.states_page(&plain)).await??;
                tracing::info!(error = %e, "the service refuses sort=-modifiedAt");
                known.sort = Support::Refused;
                known.sort_at = Some(now);
            }
            Err(e) => return Err(e),
        }
    }

    let mut run = Run {
        client,
        db,
        scope,
        cancel,
        progress: &progress,
        started,
        latest_read: None,
        after: latest_asked.map(|w| (w, None)),
        first: None,
        order: None,
        report: ScanReport {
            kind,
            pages: 0,
            states: 0,
            changed: 0,
            removed: 0,
            elapsed_ms: 0,
            watermark: None,
            mode: RefreshMode::default(),
        },
    };

    if kind == ScanKind::Incremental {
        let since = since_sent(watermark.unwrap_or_default(), known.overlap.unwrap_or(OVERLAP_MS));
        let filter = StateFilter { limit: Some(PAGE_SIZE), modified_since: Some(from_ms(since)), ..Default::default() };
        let outcome = run.pages(&filter, ScanKind::Incremental, None, &mut None).await;
        match outcome {
            Ok(Read::Done) => {
                known.since = Support::Supported;
                known.since_at = Some(now);
            }
            Ok(Read::Ignored) => {
                tracing::info!("the service ignores modifiedSince: a full scan instead");
                known.since = Support::Ignored;
                known.since_at = Some(now);
                kind = ScanKind::Full;
            }
            Err(Failed::First(e)) if about_the_request(&e) => {
                // Refused if the full scan's first request, the same without it, is accepted.
                tracing::info!(error = %e, "modifiedSince refused: a full scan instead");
                known.since = Support::Refused;
                known.since_at = Some(now);
                kind = ScanKind::Full;
            }
            Err(Failed::First(e) | Failed::Later(e)) => return Err(e),
        }
    }

    if kind == ScanKind::Full {
        let held: i64 = db.conn().query_row("SELECT count(*) FROM states WHERE scope = ?1", [scope.0], |r| r.get(0))?;
        let expected = (held > 0).then_some(held as u32);
        cancellable(cancel, refresh_catalogue(client, db, scope)).await??;
        // The keys a full scan sees, to forget afterwards the states the service no longer has
        // (not needed when the scope held none).
        let mut seen = expected.map(|_| HashSet::new());
        run.report.kind = ScanKind::Full;
        let filter = StateFilter { limit: Some(PAGE_SIZE), ..Default::default() };
        let deferred = if held == 0 { blocking(|| defer_indexes(db))? } else { Vec::new() };
        if !deferred.is_empty() {
            run.first = Some(FirstCounts::start(&db.conn(), scope)?);
        }
        if deferred.iter().any(|(name, _)| name == super::DEVICE_ORDER_INDEX.0) {
            run.order = Some(LiveOrder::default());
        }
        let read = run.pages(&filter, ScanKind::Full, expected, &mut seen).await;
        let first = run.first.take();
        blocking(|| restore_indexes(db, &deferred, first.as_ref()))?;
        match read {
            Ok(_) => {}
            Err(Failed::First(e) | Failed::Later(e)) => return Err(e),
        }
        if let Some(seen) = &seen {
            run.report.removed = blocking(|| forget_unseen(db, scope, seen))?;
        }
    }

    let mut report = run.report;
    let duration = started.elapsed().as_millis() as i64;
    let sorted = known.sort == Support::Supported && latest_asked.is_some();
    let next_watermark = match known.sort {
        Support::Supported => latest_asked,
        _ => run.latest_read.map(|t| t - duration),
    };
    let next_watermark = match kind {
        ScanKind::Full => next_watermark,
        // Nothing read, or an earlier one: where the last refresh started still holds.
        ScanKind::Incremental => next_watermark.max(watermark),
    };
    // The next overlap, in the service's clock (module doc).
    let overlap = match (sorted, next_watermark) {
        (true, Some(_)) => Some(measured_overlap(run.after.and_then(|(_, span)| span), duration)),
        _ => None,
    };
    let stamp = now_ms();
    db.bookkeeping(|conn| {
        Ok(conn.execute(
            "UPDATE scopes SET watermark = ?2, last_refresh_at = ?3,
             last_full_at = CASE WHEN ?4 THEN ?3 ELSE last_full_at END,
             since_support = ?5, since_checked_at = ?6, sort_support = ?7, sort_checked_at = ?8,
             overlap = ?9
         WHERE id = ?1",
            params![
                scope.0,
                next_watermark,
                stamp,
                kind == ScanKind::Full,
                (known.since != Support::Unknown).then(|| known.since.as_str()),
                known.since_at,
                (known.sort != Support::Unknown).then(|| known.sort.as_str()),
                known.sort_at,
                overlap,
            ],
        )?)
    })?;
    report.watermark = next_watermark.map(ms_to_text);
    report.elapsed_ms = started.elapsed().as_millis() as u32;
    report.mode = known.mode();
    Ok(report)
}

/// The `modifiedSince` sent for `watermark` less `overlap` (ms): in milliseconds when the
/// watermark has them (the service keeps them), else in whole seconds, rounded down (it may keep
/// no finer times).
fn since_sent(watermark: i64, overlap: i64) -> i64 {
    let since = watermark.saturating_sub(overlap.max(0));
    if watermark.rem_euclid(1000) == 0 {
        since.div_euclid(1000) * 1000
    } else {
        since
    }
}

/// The overlap of the next refresh (module doc), in the service's clock: `span` is the earliest
/// and the latest time after the watermark among the states read, and reading them took
/// `reading` ms of this computer's time.
fn measured_overlap(span: Option<(i64, i64)>, reading: i64) -> i64 {
    let progress = span.map_or(0, |(first, last)| last.saturating_sub(first)).max(0);
    let margin = progress as f64 * OVERLAP_MARGIN_MS as f64 / reading.max(1) as f64;
    progress.saturating_add(margin.ceil().min(i64::MAX as f64 / 2.0) as i64)
}

/// How a reading of pages ended.
enum Read {
    Done,
    /// A state older than the `modifiedSince` asked for: the filter was ignored.
    Ignored,
}

/// Why a reading of pages failed: its first request (which may be about its parameters) or a
/// later one.
enum Failed {
    First(FleetError),
    Later(FleetError),
}

/// One refresh's reading and its counts.
struct Run<'a, P> {
    client: &'a Client,
    db: &'a FleetDb,
    scope: Scope,
    cancel: &'a CancellationToken,
    progress: &'a P,
    started: Instant,
    /// The latest time among the states read.
    latest_read: Option<i64>,
    /// The watermark asked for, and the earliest and latest times after it among the states read.
    after: Option<(i64, Option<(i64, i64)>)>,
    /// A first scan's counts, while it inserts its states uncounted (defer_indexes).
    first: Option<FirstCounts>,
    /// A first scan's default order index, kept while the pages come in its order.
    order: Option<LiveOrder>,
    report: ScanReport,
}

/// Pages read ahead of the writing at most (each up to [`PAGE_SIZE`] states), and so written in
/// one transaction at most: a first scan of 110k states wrote its pages one transaction each,
/// and the database's log took each index's and table's last pages again at every commit.
const PAGES_AHEAD: usize = 8;

impl<P: Fn(&ScanProgress)> Run<'_, P> {
    /// Reads the pages of `filter`, writing each, adding the keys seen to `seen`. With a
    /// `modifiedSince` in `filter`, stops at the first state older than it.
    ///
    /// The pages are read by a task of their own, up to [`PAGES_AHEAD`] ahead of the writing,
    /// and the writing takes every page already read into one transaction: while the service
    /// answers faster than the database writes, pages are written several at a time; else each
    /// as it comes. Pages are written in the order they came, and those read before a failure
    /// are written before it is answered, as if written one by one.
    async fn pages(
        &mut self,
        filter: &StateFilter,
        kind: ScanKind,
        expected: Option<u32>,
        seen: &mut Option<HashSet<(Uuid, Uuid)>>,
    ) -> std::result::Result<Read, Failed> {
        let firmware = self.client.firmware();
        let older = filter.modified_since.map(|t| t - time::Duration::milliseconds(SLACK_MS));
        // A page size the service refuses is asked again by the client's pager (dcs_api::paging).
        let (first, mut next) = cancellable(self.cancel, firmware.states_page(filter))
            .await
            .map_err(Failed::First)?
            .map_err(|e| Failed::First(e.into()))?;
        // Each page with whether it is the last: a reading that stops before its last page
        // (a panic) is an error, never the end of the list.
        let (tx, mut rx) = tokio::sync::mpsc::channel(PAGES_AHEAD);
        let client = self.client.clone();
        let mut arrived = Some(Ok((first.items, next.is_none())));
        // Stopped when this returns, however it returns.
        let _reading = tokio_util::task::AbortOnDropHandle::new(tokio::spawn(async move {
            while let Some(url) = next.take() {
                let page = client.firmware().states_page_at(&url).await.map(|(page, link)| {
                    next = link;
                    (page.items, next.is_none())
                });
                let failed = page.is_err();
                if tx.send(page).await.is_err() || failed {
                    break;
                }
            }
        }));
        let stopped = || Failed::Later(FleetError::Internal("the reading of the pages stopped".into()));
        loop {
            // This page and every one already read (the first failure ends the batch and the
            // reading; an ignored filter ends them before its page).
            let mut batch: Vec<Vec<FirmwareState>> = Vec::new();
            let mut end: Option<std::result::Result<Read, Failed>> = None;
            while let Some(page) = arrived.take() {
                match page {
                    Ok((items, _)) if older.is_some_and(|o| items.iter().filter_map(modified_at).any(|t| t < o)) => {
                        end = Some(Ok(Read::Ignored));
                    }
                    Ok((items, true)) => {
                        batch.push(items);
                        end = Some(Ok(Read::Done));
                    }
                    Ok((items, false)) => {
                        batch.push(items);
                        if batch.len() < PAGES_AHEAD {
                            arrived = match rx.try_recv() {
                                Ok(page) => Some(page),
                                Err(tokio::sync::mpsc::error::TryRecvError::Empty) => None,
                                Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => {
                                    end = Some(Err(stopped()));
                                    None
                                }
                            };
                        }
                    }
                    Err(e) => end = Some(Err(Failed::Later(e.into()))),
                }
            }
            self.write(&batch, kind, expected, seen)?;
            if let Some(end) = end {
                return end;
            }
            if self.cancel.is_cancelled() {
                return Err(Failed::Later(FleetError::Cancelled));
            }
            arrived = Some(cancellable(self.cancel, rx.recv()).await.map_err(Failed::Later)?.ok_or_else(stopped)?);
        }
    }

    /// Writes `pages` (in the order they came) in one transaction, and counts them.
    fn write(
        &mut self,
        pages: &[Vec<FirmwareState>],
        kind: ScanKind,
        expected: Option<u32>,
        seen: &mut Option<HashSet<(Uuid, Uuid)>>,
    ) -> std::result::Result<(), Failed> {
        if pages.is_empty() {
            return Ok(());
        }
        let all = || pages.iter().flatten();
        if let Some(seen) = seen.as_mut() {
            seen.extend(all().map(|s| (s.module_id, s.device_id)));
        }
        if let Some(t) = all().filter_map(modified_at).max().map(to_ms) {
            self.latest_read = Some(self.latest_read.map_or(t, |l| l.max(t)));
        }
        if let Some((w, span)) = self.after.as_mut() {
            for t in all().filter_map(modified_at).map(to_ms).filter(|t| *t > *w) {
                *span = Some(span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
            }
        }
        let (db, scope, mut first) = (self.db, self.scope, self.first.as_mut());
        if let Some(order) = self.order.as_mut() {
            blocking(|| pages.iter().try_for_each(|items| order.page(db, items))).map_err(Failed::Later)?;
        }
        let written = blocking(|| {
            let mut conn = db.conn();
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let mut n = 0;
            for items in pages {
                n += match first.as_deref_mut() {
                    Some(first) => first.insert(&tx, items)?,
                    None => write_states(&tx, scope, items)?,
                };
            }
            tx.commit()?;
            Ok(n)
        });
        self.report.changed += written.map_err(Failed::Later)?;
        for items in pages {
            self.report.pages += 1;
            self.report.states += items.len() as u32;
            (self.progress)(&ScanProgress {
                kind,
                pages: self.report.pages,
                states: self.report.states,
                expected,
                elapsed_ms: self.started.elapsed().as_millis() as u32,
            });
        }
        Ok(())
    }
}

/// Runs `fut` unless `cancel` fires first.
async fn cancellable<T>(cancel: &CancellationToken, fut: impl std::future::Future<Output = T>) -> Result<T> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(FleetError::Cancelled),
        out = fut => Ok(out),
    }
}

/// Before a full scan into a `states` table that holds no state at all (a new database: the
/// first scan of a million states), drops its secondary indexes and triggers, answering their
/// definitions, and marks the counts to be recounted ([`super::RECOUNT_PENDING`]): the scan
/// inserts its states uncounted ([`FirstCounts`]), and [`restore_indexes`] builds each index once
/// from the sorted states at the end and writes the counts once, where keeping them costs each
/// index a random insertion per state (most of a first scan's writing at a million, once the
/// indexes outgrow the page cache) (the default order's is made again as the pages come when they
/// come in its order: [`LiveOrder`]). A crash in between loses nothing: opening the database
/// creates the schema's missing indexes and triggers, and recounts what the mark says.
pub(super) fn defer_indexes(db: &FleetDb) -> Result<Vec<(String, String)>> {
    let mut conn = db.conn();
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let empty: bool = tx.query_row("SELECT NOT EXISTS (SELECT 1 FROM states)", [], |r| r.get(0))?;
    if !empty {
        return Ok(Vec::new());
    }
    let defs: Vec<(String, String, String)> = tx
        .prepare(
            "SELECT name, sql, type FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name = 'states'
                 AND sql IS NOT NULL",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (name, _, kind) in &defs {
        tx.execute_batch(&format!("DROP {kind} \"{}\"", name.replace('"', "\"\"")))?;
    }
    tx.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?1, 'a first scan')", [super::RECOUNT_PENDING])?;
    tx.commit()?;
    Ok(defs.into_iter().map(|(name, sql, _)| (name, sql)).collect())
}

/// The default order's index during a first scan (which [`defer_indexes`] dropped): made again
/// at the first page if that page comes in its order (device, then module), and kept while the
/// pages do, so each state is added at the index's end as it is written; dropped again at the
/// first page out of that order, to be built at the end as the others are ([`restore_indexes`]
/// makes only those missing). The simulator lists the states in that order; a service
/// listing them otherwise gets the index built at the end. The keys are compared as [`Uuid`]s,
/// whose order is that of the lowercase text the index sorts. A first scan of 330k states took
/// about a tenth less time than building it at the end; of a million, about the same (issue 19).
#[derive(Default)]
pub(super) enum LiveOrder {
    /// No page yet.
    #[default]
    Waiting,
    /// Made, and kept while the pages came in its order: the last page's last key.
    Kept((Uuid, Uuid)),
    /// Dropped, or never made: [`restore_indexes`] builds it at the end.
    GivenUp,
}

impl LiveOrder {
    /// Before `items` (the next page) are written: makes, keeps or drops the index; the database
    /// is touched only to make or drop it.
    pub(super) fn page(&mut self, db: &FleetDb, items: &[FirmwareState]) -> Result<()> {
        let (Some(first), Some(last)) = (items.first(), items.last()) else { return Ok(()) };
        let key = |s: &FirmwareState| (s.device_id, s.module_id);
        let in_order = items.iter().map(key).is_sorted();
        *self = match *self {
            LiveOrder::GivenUp => LiveOrder::GivenUp,
            LiveOrder::Waiting if in_order => {
                db.conn().execute_batch(&super::index_sql(&super::DEVICE_ORDER_INDEX))?;
                LiveOrder::Kept(key(last))
            }
            LiveOrder::Waiting => LiveOrder::GivenUp,
            LiveOrder::Kept(before) if in_order && before <= key(first) => LiveOrder::Kept(key(last)),
            LiveOrder::Kept(_) => {
                db.conn().execute_batch(&format!("DROP INDEX IF EXISTS {}", super::DEVICE_ORDER_INDEX.0))?;
                LiveOrder::GivenUp
            }
        };
        Ok(())
    }
}

/// Creates again the indexes [`defer_indexes`] dropped (those another connection has not made
/// meanwhile), in one transaction.
/// Answers whether the counts were the first scan's own (else recounted or left as they were).
pub(super) fn restore_indexes(db: &FleetDb, defs: &[(String, String)], first: Option<&FirstCounts>) -> Result<bool> {
    if defs.is_empty() {
        return Ok(false);
    }
    let mut conn = db.conn();
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for (name, sql) in defs {
        let present: bool =
            tx.query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = ?1)", [name], |r| r.get(0))?;
        if !present {
            tx.execute_batch(sql)?;
        }
    }
    // The first scan inserted its states uncounted: its own counts if they hold, else every state
    // counted once.
    let own = first.map(|f| f.write(&tx)).transpose()?.unwrap_or(false);
    if !own {
        db.recounts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tx.execute_batch(&format!(
            "DELETE FROM state_counts; INSERT INTO state_counts (scope, module_id, dim, k1, k2, k3, k4, n) {}",
            super::recount_sql()
        ))?;
    }
    tx.execute("DELETE FROM settings WHERE key = ?1", [super::RECOUNT_PENDING])?;
    tx.commit()?;
    Ok(own)
}

/// After a full scan: forgets the states of `scope` it did not see (the service no longer has
/// them), with their history and counts (states::remove_states). Answers how many.
fn forget_unseen(db: &FleetDb, scope: Scope, seen: &HashSet<(Uuid, Uuid)>) -> Result<u32> {
    let gone: Vec<(Uuid, Uuid)> = {
        let conn = db.conn();
        let mut stmt = conn.prepare("SELECT module_id, device_id FROM states WHERE scope = ?1")?;
        let rows = stmt.query_map([scope.0], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut gone = Vec::new();
        for row in rows {
            let (m, d) = row?;
            // Keys are written from Uuids (states.rs): one that is not cannot have been seen.
            if let (Ok(m), Ok(d)) = (m.parse(), d.parse()) {
                if !seen.contains(&(m, d)) {
                    gone.push((m, d));
                }
            }
        }
        gone
    };
    super::states::remove_states(db, scope, &gone)
}

/// Runs blocking database work without holding up the async runtime's other tasks (on a
/// multi-threaded runtime, as the app's; inline on a single-threaded one).
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// Modules, their packages (versions, and whether the firmware file is there) and the names of
/// the device specifications, for the dashboard's labels and the rollout's version choice.
pub async fn refresh_catalogue(client: &Client, db: &FleetDb, scope: Scope) -> Result<()> {
    let firmware = client.firmware();
    let modules: Vec<_> =
        firmware.modules(&ModuleFilter { limit: Some(PAGE_SIZE), ..Default::default() })?.try_collect().await?;
    let filter =
        PackageFilter { embed: vec![Embed::DeviceSpecification], limit: Some(PAGE_SIZE), ..Default::default() };
    let packages: Vec<_> = firmware.packages(&filter)?.try_collect().await?;
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM modules WHERE scope = ?1", [scope.0])?;
    tx.execute("DELETE FROM packages WHERE scope = ?1", [scope.0])?;
    for m in &modules {
        tx.execute(
            "INSERT INTO modules (scope, module_id, name, spec_id) VALUES (?1, ?2, ?3, ?4)",
            params![scope.0, m.id.to_string(), m.name, m.device_specification_id.to_string()],
        )?;
    }
    for p in &packages {
        tx.execute(
            "INSERT OR REPLACE INTO packages (scope, module_id, version, has_file) VALUES (?1, ?2, ?3, ?4)",
            params![scope.0, p.module_id.to_string(), p.firmware_version, p.firmware_file_name.is_some()],
        )?;
        if let Some(spec) = p.embedded.as_ref().and_then(|e| e.device_specification.as_ref()) {
            tx.execute(
                "INSERT OR REPLACE INTO specs (scope, spec_id, name) VALUES (?1, ?2, ?3)",
                params![scope.0, spec.id.to_string(), spec.name],
            )?;
        }
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::DEVICE_ORDER_INDEX;
    use super::*;

    fn state(target_at: Option<i64>, status_at: Option<i64>) -> FirmwareState {
        let mut s: FirmwareState =
            serde_json::from_value(serde_json::json!({"moduleId": Uuid::new_v4(), "deviceId": Uuid::new_v4()}))
                .unwrap();
        s.target_firmware_version_modified_at = target_at.map(from_ms);
        s.firmware_update_status_modified_at = status_at.map(from_ms);
        s
    }

    #[test]
    fn a_first_scan_keeps_its_default_order_index_while_the_pages_come_in_its_order() {
        let db = FleetDb::in_memory().unwrap();
        let scope = db.scope(&super::super::ScopeKey::new("t", "http://t", None)).unwrap();
        let has_index = || -> bool {
            db.conn()
                .query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = ?1)", [DEVICE_ORDER_INDEX.0], |r| {
                    r.get(0)
                })
                .unwrap()
        };
        let mut states: Vec<FirmwareState> = (0..40).map(|_| state(None, None)).collect();
        states.sort_by_key(|s| (s.device_id, s.module_id));
        let run = |pages: &[&[FirmwareState]]| -> Vec<bool> {
            let deferred = defer_indexes(&db).unwrap();
            assert!(deferred.iter().any(|(n, _)| n == DEVICE_ORDER_INDEX.0) && !has_index());
            let mut order = LiveOrder::default();
            let mut present = Vec::new();
            for page in pages {
                order.page(&db, page).unwrap();
                write_page(&db, scope, page).unwrap();
                present.push(has_index());
            }
            restore_indexes(&db, &deferred, None).unwrap();
            assert!(has_index(), "made at the end when not kept");
            assert!(db.counts_differences().unwrap().is_empty());
            let n: i64 = db.conn().query_row("SELECT count(*) FROM states", [], |r| r.get(0)).unwrap();
            assert_eq!(n as usize, pages.iter().map(|p| p.len()).sum::<usize>());
            db.conn().execute("DELETE FROM states", []).unwrap();
            present
        };
        // In order: made at the first page and kept.
        assert_eq!(run(&[&states[..10], &states[10..20], &states[20..]]), [true, true, true]);
        // A page starting before the last one ended: dropped, built at the end.
        assert_eq!(run(&[&states[..10], &states[20..30], &states[10..20]]), [true, true, false]);
        // A page out of order within itself, or a first page out of order: never made.
        let mut shuffled = states[..10].to_vec();
        shuffled.swap(2, 7);
        assert_eq!(run(&[&states[10..20], &shuffled]), [true, false]);
        assert_eq!(run(&[&shuffled, &states[10..]]), [false, false]);
    }

    #[test]
    fn the_order_is_judged_by_the_later_time_and_only_with_two_different_times() {
        let later_first = [state(Some(5), Some(9)), state(None, None), state(Some(7), None), state(Some(7), Some(1))];
        assert_eq!(ordered_by_time(&later_first, true), Some(true));
        assert_eq!(ordered_by_time(&later_first, false), Some(false));
        // 9 (status) before 10 (target): not by the later of the two times.
        assert_eq!(ordered_by_time(&[state(Some(1), Some(9)), state(Some(10), Some(2))], true), Some(false));
        assert_eq!(ordered_by_time(&[state(Some(1), Some(9)), state(Some(10), Some(2))], false), Some(true));
        let one_instant = [state(Some(3), None), state(None, Some(3)), state(None, None)];
        assert_eq!((ordered_by_time(&one_instant, true), ordered_by_time(&one_instant, false)), (None, None));
        assert_eq!(ordered_by_time(&[], true), None);
    }

    #[test]
    fn the_overlap_is_the_service_clocks_progress_while_reading_and_its_rate_over_the_margin() {
        // Nothing read past the watermark, or one instant's changes: no overlap.
        assert_eq!(measured_overlap(None, 200), 0);
        assert_eq!(measured_overlap(Some((7_000, 7_000)), 200), 0);
        // 2 s of the service's clock in 200 ms of reading (10x): 2 s, and 10 s for the margin.
        assert_eq!(measured_overlap(Some((5_000, 7_000)), 200), 2_000 + 10 * OVERLAP_MARGIN_MS);
        assert!(measured_overlap(Some((0, i64::MAX / 4)), 0) > 0, "no overflow");
    }

    #[test]
    fn since_keeps_the_services_precision() {
        // Times with milliseconds: sent as they are.
        assert_eq!(since_sent(10_250, 0), 10_250);
        assert_eq!(since_sent(10_250, 100), 10_150);
        // Whole seconds: rounded down to a whole second.
        assert_eq!(since_sent(10_000, 0), 10_000);
        assert_eq!(since_sent(10_000, 1), 9_000);
        assert_eq!(since_sent(10_000, OVERLAP_MS), 10_000 - OVERLAP_MS);
        assert_eq!(since_sent(-500, 0), -500);
    }

    #[test]
    fn a_missing_parameter_means_full_scans_until_checked_again_a_day_later() {
        let now = 10 * RECHECK_AFTER_MS;
        let known = |since, at| Known { since, since_at: Some(at), ..Default::default() };
        let wm = Some(1);
        assert_eq!(plan(ScanKind::Incremental, wm, &Known::default(), now), ScanKind::Incremental);
        assert_eq!(plan(ScanKind::Incremental, None, &Known::default(), now), ScanKind::Full);
        assert_eq!(plan(ScanKind::Full, wm, &known(Support::Supported, now), now), ScanKind::Full);
        for s in [Support::Ignored, Support::Refused] {
            assert_eq!(plan(ScanKind::Incremental, wm, &known(s, now - 1000), now), ScanKind::Full);
            assert_eq!(plan(ScanKind::Incremental, wm, &known(s, now - RECHECK_AFTER_MS), now), ScanKind::Incremental);
        }
        assert!(known(Support::Refused, 0).mode().text.starts_with("full scans: this service refuses modifiedSince"));
        assert!(known(Support::Ignored, 0).mode().text.starts_with("full scans: this service ignores modifiedSince"));
    }
}
