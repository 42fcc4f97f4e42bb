//! Who moves a rollout on: exactly one driver at a time, through a lease with an expiry and a
//! fencing number (after Kubernetes' client-go leader election and Kleppmann's fencing tokens).
//!
//! The app, `dcs rollout watch` and any number of `dcs serve` runners may share one fleet
//! database. Each is a [`Driver`]. Before a step a driver takes or renews the rollout's lease
//! ([`acquire`]): it gets it when nobody holds it, when the holder's lease expired, or when it
//! holds it already. Every change of holder raises the rollout's **fencing number**.
//!
//! The rules that keep a driver that lost its lease (a paused process, a slept laptop, a lost
//! network) from ever sending again for that rollout:
//!
//! - Before each slice of targets is sent, the transaction that marks the slice as being sent
//!   checks that the lease is still this driver's, with the same fencing number, not expired,
//!   and the rollout still running; it renews the lease and records the fencing number with
//!   every device of the slice ([`check_and_renew`]). Another driver's lease, or a newer number,
//!   refuses the slice: nothing of it is sent.
//! - Right before each single request goes out (after its audit record and its token, which may
//!   wait, and before each retry) the client asks the lease's [gate](Lease::gate): the driver's
//!   own deadline on the wall clock, the lease's expiry less a margin of a third of its length.
//!   A process stopped between the mark and the request (SIGSTOP, a laptop's sleep: the wall
//!   clock goes on) finds its deadline passed when it wakes and sends nothing; by then no other
//!   driver could have taken the lease yet, since the margin is still to run.
//! - Operators' actions from any console (pause, abort) change the rollout's state; a driver's
//!   next slice is refused by the state check above. Abort also raises the fencing number, so
//!   the lease of whoever drove it ends at once.
//!
//! A driver that ends cleanly lets its leases go ([`release`]), so the next driver need not
//! wait for the expiry.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use uuid::Uuid;

use crate::fleet::{ms_to_text, now_ms, FleetDb, FleetError, Result};

/// A lease lasts this long unless renewed (a step renews it; so does every slice of a wave's
/// start). `DCS_LEASE_SECONDS` or the runner's `--lease-seconds` change it.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);

/// What kind of front end drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum DriverKind {
    /// The desktop app's window.
    App,
    /// `dcs rollout watch` in a terminal, or another `dcs` command that moves a rollout once.
    Cli,
    /// `dcs serve`, the headless runner.
    Runner,
}

impl DriverKind {
    fn as_str(self) -> &'static str {
        match self {
            DriverKind::App => "app",
            DriverKind::Cli => "cli",
            DriverKind::Runner => "runner",
        }
    }
    fn parse(s: &str) -> DriverKind {
        match s {
            "app" => DriverKind::App,
            "runner" => DriverKind::Runner,
            _ => DriverKind::Cli,
        }
    }
}

/// One process that may move rollouts on: a new id each start.
#[derive(Debug, Clone)]
pub struct Driver {
    pub id: String,
    pub kind: DriverKind,
    pub host: String,
    pub pid: u32,
    /// How long its leases last unless renewed.
    pub lease: Duration,
}

impl Driver {
    /// This process as a driver of `kind`, its leases as long as `DCS_LEASE_SECONDS` says (1 to
    /// 3600), else [`DEFAULT_LEASE`].
    pub fn new(kind: DriverKind) -> Driver {
        let lease = std::env::var("DCS_LEASE_SECONDS")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && (1.0..=3600.0).contains(s))
            .map_or(DEFAULT_LEASE, Duration::from_secs_f64);
        let id = Uuid::new_v4().to_string();
        MINE.lock().unwrap_or_else(|p| p.into_inner()).push(id.clone());
        Driver {
            id,
            kind,
            host: whoami::hostname().unwrap_or_else(|_| "this computer".into()),
            pid: std::process::id(),
            lease,
        }
    }

    /// The same driver with leases of `lease`.
    pub fn with_lease(mut self, lease: Duration) -> Driver {
        self.lease = lease;
        self
    }

    fn lease_ms(&self) -> i64 {
        self.lease.as_millis().max(1) as i64
    }
}

/// A lease held: valid until its deadline, which each renewal moves on.
#[derive(Debug)]
pub struct Lease {
    pub rollout: String,
    pub fence: i64,
    driver: String,
    lease_ms: i64,
    /// Wall-clock ms after which this driver sends nothing more under the lease (shared with the
    /// [gate](Lease::gate) of its requests).
    deadline: Arc<AtomicI64>,
}

impl Lease {
    /// Whether requests may still be sent under the lease: its deadline (the expiry less a third
    /// of the lease) is not passed on the wall clock, which goes on while the process is stopped
    /// or the machine sleeps.
    pub fn valid(&self) -> bool {
        now_ms() < self.deadline.load(Ordering::Acquire)
    }

    /// What the client asks right before each set-target request goes out (after its audit
    /// record and token, which may wait): refused once the deadline passed.
    pub fn gate(&self) -> dcs_api::client::Gate {
        let deadline = self.deadline.clone();
        Arc::new(move || {
            if now_ms() < deadline.load(Ordering::Acquire) {
                Ok(())
            } else {
                Err("this console's lease on the rollout ran out before the request could go".into())
            }
        })
    }

    fn renewed(&self, at: i64) {
        self.deadline.store(deadline(at, self.lease_ms), Ordering::Release);
    }

    /// The error a send refused for this lease answers.
    pub fn lost(&self, why: &str) -> FleetError {
        FleetError::NotDriver(format!(
            "this console no longer drives rollout {}: {why}; nothing more was sent",
            self.rollout
        ))
    }
}

fn deadline(renewed_at: i64, lease_ms: i64) -> i64 {
    renewed_at + lease_ms - lease_ms / 3
}

/// Who drives a rollout, as the screens and `dcs rollout show` say it.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DriverView {
    pub kind: DriverKind,
    pub host: String,
    pub pid: u32,
    /// Whether the driver is the process that asked (this window, this command).
    pub this: bool,
    /// When its lease ends unless renewed (RFC 3339), and whether that is past: then the next
    /// driver to look takes the rollout over.
    pub expires_at: String,
    pub expired: bool,
    /// When it last moved the rollout on (its last step), and how many seconds ago.
    pub last_step_at: Option<String>,
    pub last_step_seconds_ago: Option<u32>,
    /// The fencing number of its lease (each change of driver raises it).
    pub fence: u32,
    /// In plain words: "this window", "runner on host-a (pid 812)", ...
    pub label: String,
}

/// Takes or renews the lease of rollout `id` for `driver` at `now`: answers the lease, or who
/// else holds it. One immediate transaction, so two drivers never both get it.
pub fn acquire(db: &FleetDb, id: &str, driver: &Driver, now: i64) -> Result<std::result::Result<Lease, DriverView>> {
    let mut conn = db.conn();
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let held = read(&tx, id)?;
    let ttl = driver.lease_ms();
    let fence = match held {
        Some(h) if h.holder != driver.id && h.expires_at > now => return Ok(Err(view(&h, now))),
        // Still ours: renewed, the same number.
        Some(h) if h.holder == driver.id && h.expires_at > now => {
            tx.execute(
                "UPDATE rollout_leases SET expires_at = ?2, renewed_at = ?3 WHERE rollout = ?1",
                params![id, now + ttl, now],
            )?;
            h.fence
        }
        // Nobody's, or expired (ours too: whatever we sent before is fenced off by the new number).
        Some(h) => {
            tx.execute(
                "UPDATE rollout_leases SET holder = ?2, kind = ?3, host = ?4, pid = ?5, fence = ?6, expires_at = ?7,
                        renewed_at = ?8, acquired_at = ?8 WHERE rollout = ?1",
                params![id, driver.id, driver.kind.as_str(), driver.host, driver.pid, h.fence + 1, now + ttl, now],
            )?;
            super::store::event(
                &tx,
                id,
                now,
                &format!(
                    "{} drives the rollout now (after {}{})",
                    label_of(driver),
                    h.label(),
                    if h.expires_at > 0 { ", whose lease ran out" } else { "" }
                ),
            )?;
            h.fence + 1
        }
        None => {
            tx.execute(
                "INSERT INTO rollout_leases (rollout, holder, kind, host, pid, fence, expires_at, renewed_at, acquired_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, ?7)",
                params![id, driver.id, driver.kind.as_str(), driver.host, driver.pid, now + ttl, now],
            )?;
            1
        }
    };
    tx.commit()?;
    Ok(Ok(Lease {
        rollout: id.to_owned(),
        fence,
        driver: driver.id.clone(),
        lease_ms: ttl,
        deadline: Arc::new(AtomicI64::new(deadline(now, ttl))),
    }))
}

/// In the transaction that marks targets as being sent: refuses unless `lease` is still the
/// rollout's current one (holder and number), unexpired, and the rollout running; then renews
/// it. The caller records `lease.fence` with each device it is about to send.
pub(crate) fn check_and_renew(tx: &rusqlite::Transaction, lease: &Lease) -> Result<()> {
    let now = now_ms();
    let held = read(tx, &lease.rollout)?;
    let state: Option<String> =
        tx.query_row("SELECT state FROM rollouts WHERE id = ?1", [&lease.rollout], |r| r.get(0)).optional()?;
    match held {
        Some(h) if h.holder == lease.driver && h.fence == lease.fence && h.expires_at > now => {}
        Some(h) if h.fence != lease.fence => {
            return Err(lease.lost(&format!(
                "{} took it over (fencing number {} after {})",
                h.label(),
                h.fence,
                lease.fence
            )))
        }
        _ => return Err(lease.lost("its lease ran out before this step could renew it")),
    }
    if state.as_deref() != Some("running") {
        return Err(lease.lost(&format!("the rollout is {} now", state.as_deref().unwrap_or("gone"))));
    }
    if !lease.valid() {
        return Err(lease.lost("its lease was about to run out"));
    }
    tx.execute(
        "UPDATE rollout_leases SET expires_at = ?2, renewed_at = ?3 WHERE rollout = ?1",
        params![lease.rollout, now + lease.lease_ms, now],
    )?;
    lease.renewed(now);
    Ok(())
}

/// Records that the driver of `lease` moved the rollout on (a step ended), renewing the lease.
pub(crate) fn stepped(db: &FleetDb, lease: &Lease) -> Result<()> {
    let now = now_ms();
    let n = db.conn().execute(
        "UPDATE rollout_leases SET last_step_at = ?4, expires_at = ?5, renewed_at = ?4
         WHERE rollout = ?1 AND holder = ?2 AND fence = ?3 AND expires_at > ?4",
        params![lease.rollout, lease.driver, lease.fence, now, now + lease.lease_ms],
    )?;
    if n == 1 {
        lease.renewed(now);
    }
    Ok(())
}

/// Renews every live lease `driver` holds on a running rollout (a heartbeat between steps, for
/// a driver whose steps come less often than a lease lasts: the app's refresh interval may be
/// an hour). Answers how many.
pub fn renew_all(db: &FleetDb, driver: &Driver) -> Result<u32> {
    let now = now_ms();
    Ok(db.conn().execute(
        "UPDATE rollout_leases SET expires_at = ?2 + ?3, renewed_at = ?2
         WHERE holder = ?1 AND expires_at > ?2 AND rollout IN (SELECT id FROM rollouts WHERE state = 'running')",
        params![driver.id, now, driver.lease_ms()],
    )? as u32)
}

/// Ends every lease `driver` holds (it stops cleanly): the next driver takes over at once.
pub fn release(db: &FleetDb, driver: &Driver) -> Result<u32> {
    Ok(db
        .conn()
        .execute("UPDATE rollout_leases SET expires_at = 0 WHERE holder = ?1 AND expires_at > 0", [&driver.id])?
        as u32)
}

/// Ends the lease of rollout `id`, whoever holds it, raising its fencing number (an abort):
/// its driver's next slice is refused.
pub(crate) fn revoke(tx: &rusqlite::Connection, id: &str) -> Result<()> {
    tx.execute("UPDATE rollout_leases SET expires_at = 0, fence = fence + 1 WHERE rollout = ?1", [id])?;
    Ok(())
}

/// Who drives rollout `id` now, if anyone ever did (`this` when a driver of this process).
pub fn driver_of(conn: &rusqlite::Connection, id: &str) -> Result<Option<DriverView>> {
    Ok(read(conn, id)?.map(|h| view(&h, now_ms())))
}

/// Running rollouts another process drives now (a live lease not this process's): they go on
/// whatever this process does, so closing it need not ask about them.
pub fn driven_elsewhere(db: &FleetDb) -> Result<u32> {
    let conn = db.conn();
    let mut stmt = conn.prepare_cached(
        "SELECT l.holder FROM rollout_leases l JOIN rollouts r ON r.id = l.rollout
         WHERE r.state = 'running' AND l.expires_at > ?1",
    )?;
    let holders = stmt.query_map([now_ms()], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(holders.iter().filter(|h| !is_mine(h)).count() as u32)
}

/// The drivers made in this process (a view says "this window" for theirs).
static MINE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn is_mine(id: &str) -> bool {
    MINE.lock().unwrap_or_else(|p| p.into_inner()).iter().any(|m| m == id)
}

struct Held {
    holder: String,
    kind: DriverKind,
    host: String,
    pid: u32,
    fence: i64,
    expires_at: i64,
    last_step_at: Option<i64>,
}

impl Held {
    fn label(&self) -> String {
        label(self.kind, &self.host, self.pid, false)
    }
}

fn read(conn: &rusqlite::Connection, id: &str) -> Result<Option<Held>> {
    Ok(conn
        .query_row(
            "SELECT holder, kind, host, pid, fence, expires_at, last_step_at FROM rollout_leases WHERE rollout = ?1",
            [id],
            |r| {
                Ok(Held {
                    holder: r.get(0)?,
                    kind: DriverKind::parse(&r.get::<_, String>(1)?),
                    host: r.get(2)?,
                    pid: r.get(3)?,
                    fence: r.get(4)?,
                    expires_at: r.get(5)?,
                    last_step_at: r.get(6)?,
                })
            },
        )
        .optional()?)
}

fn label(kind: DriverKind, host: &str, pid: u32, this: bool) -> String {
    match (kind, this) {
        (DriverKind::App, true) => "this window".into(),
        (DriverKind::Cli | DriverKind::Runner, true) => "this process".into(),
        (DriverKind::App, false) => format!("the app on {host}"),
        (DriverKind::Cli, false) => format!("dcs rollout watch on {host} (pid {pid})"),
        (DriverKind::Runner, false) => format!("runner on {host} (pid {pid})"),
    }
}

fn label_of(driver: &Driver) -> String {
    label(driver.kind, &driver.host, driver.pid, false)
}

fn view(h: &Held, now: i64) -> DriverView {
    let this = is_mine(&h.holder);
    DriverView {
        kind: h.kind,
        host: h.host.clone(),
        pid: h.pid,
        this,
        expires_at: ms_to_text(h.expires_at.max(0)),
        expired: h.expires_at <= now,
        last_step_at: h.last_step_at.map(ms_to_text),
        last_step_seconds_ago: h.last_step_at.map(|t| ((now - t).max(0) / 1000) as u32),
        fence: h.fence.clamp(0, u32::MAX as i64) as u32,
        label: label(h.kind, &h.host, h.pid, this),
    }
}
