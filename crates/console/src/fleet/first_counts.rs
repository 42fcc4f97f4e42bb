//! A first scan's counts, kept in memory while it inserts its states uncounted.
//!
//! A full scan into an empty `states` table inserts its states without moving `state_counts`
//! (scan::defer_indexes marks the counts to be recounted should it never end). Counting its
//! states afterwards is a GROUP BY that sorts every state twice: a third of a first scan's time
//! at 110,000 states. Instead the scan inserts each state with `INSERT OR IGNORE` and counts it
//! here as it goes, with the tally every writer of states counts with (states::Tally); at the
//! end these counts are written as they are, unless something else could have changed the
//! states meanwhile. Then the GROUP BY is done as before:
//! - a state came twice (the insert was ignored: the service answered it on two pages);
//! - anything else wrote to the database: another connection committed (`data_version`), or
//!   this one changed rows the scan did not (its total of changed rows);
//! - the scope holds another number of states than were counted.

use std::collections::HashMap;

use dcs_api::model::FirmwareState;
use rusqlite::{Connection, Transaction};
use uuid::Uuid;

use super::states::{columns, module, state_values, write_states, Counts, Hasher, Tally, NOW_MS};
use super::{FleetDb, Result, Scope};

/// What a state's counts are grouped by (states::groupings reads no other columns): its module,
/// specification and owner, and its current version, target, status and details.
type CountedBy<'a> = (Uuid, Option<Uuid>, Option<Uuid>, [Option<&'a str>; 4]);

/// What a first scan counted.
pub(crate) struct FirstCounts {
    scope: Scope,
    /// The counts of the states inserted.
    counts: Counts,
    /// States inserted and counted.
    inserted: i64,
    /// Rows the scan changed through the connection, to tell apart anyone else's changes.
    changed: u64,
    /// The connection's generation when the scan began uncounted (FleetDb::generation).
    since: (u64, i64),
    /// False once a state came twice.
    exact: bool,
}

impl FirstCounts {
    /// Starts counting; `conn` is the connection the scan writes through, right after
    /// scan::defer_indexes.
    pub(crate) fn start(conn: &Connection, scope: Scope) -> Result<FirstCounts> {
        Ok(FirstCounts {
            scope,
            counts: Counts::default(),
            inserted: 0,
            changed: 0,
            since: FleetDb::generation(conn)?,
            exact: true,
        })
    }

    /// Inserts a page of states in the caller's transaction, counting those inserted; a state
    /// already there is written as states::write_states writes it, and the counts are then left
    /// to a recount. Answers how many states were new or changed.
    pub(crate) fn insert(&mut self, tx: &Transaction<'_>, items: &[FirmwareState]) -> Result<u32> {
        let mut written = 0u32;
        // The mark that the counts are to be recounted if this scan never ends, set again if
        // another process's opening recounted them and took it away meanwhile (then the states'
        // writers were not only this scan: its counts are left to a recount).
        let marked = tx.execute(
            "INSERT OR IGNORE INTO settings (key, value) VALUES (?1, 'a first scan')",
            [super::RECOUNT_PENDING],
        )?;
        if marked == 1 {
            self.exact = false;
        }
        // The page's states inserted, by the columns they are counted by (each kind with one of
        // its states, and how many), so that states alike are tallied once: a million states come
        // in a few dozen kinds, and a state is hashed here by its ids rather than by their texts.
        let mut page: HashMap<CountedBy<'_>, (&FirmwareState, i64), Hasher> = HashMap::default();
        {
            let mut insert = tx.prepare_cached(&format!(
                "INSERT OR IGNORE INTO states (scope, module_id, device_id, spec_id, client_id, project_id, current,
                                               target, target_at, status, details, status_at, seen_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, {NOW_MS})"
            ))?;
            for s in items {
                if insert.execute(rusqlite::params_from_iter(state_values(self.scope, s)))? == 1 {
                    let texts = [
                        s.current_firmware_version.as_deref(),
                        s.target_firmware_version.as_deref(),
                        s.firmware_update_status.as_ref().map(|st| st.as_str()),
                        s.firmware_update_status_details.as_deref(),
                    ];
                    let key = (s.module_id, s.device_specification_id, s.client_id, texts);
                    page.entry(key).or_insert((s, 0)).1 += 1;
                    self.inserted += 1;
                    self.changed += 1;
                    written += 1;
                } else {
                    self.exact = false;
                    let n = write_states(tx, self.scope, std::slice::from_ref(s))?;
                    self.changed += u64::from(n);
                    written += n;
                }
            }
        }
        let kinds: Vec<_> = page.into_values().map(|(s, n)| (state_values(self.scope, s), n)).collect();
        let mut tally = Tally::default();
        for (values, n) in &kinds {
            tally.moved_by(module(values), None, Some(columns(values)), *n);
        }
        self.counts.add(tally);
        Ok(written)
    }

    /// Whether these counts are the states' counts: see the module's comment.
    fn hold(&self, tx: &Transaction<'_>) -> Result<bool> {
        if !self.exact {
            return Ok(false);
        }
        let (changes, other) = FleetDb::generation(tx)?;
        if other != self.since.1 || changes != self.since.0 + self.changed {
            return Ok(false);
        }
        let held: i64 = tx.query_row("SELECT count(*) FROM states", [], |r| r.get(0))?;
        Ok(held == self.inserted)
    }

    /// Writes the counts into the emptied `state_counts` if they hold; answers whether they did
    /// (else the caller recounts).
    pub(crate) fn write(&self, tx: &Transaction<'_>) -> Result<bool> {
        if !self.hold(tx)? {
            return Ok(false);
        }
        tx.execute("DELETE FROM state_counts", [])?;
        self.counts.write(tx, self.scope)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use dcs_api::model::firmware::UpdateStatus;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::fleet::scan::{defer_indexes, restore_indexes, write_page};
    use crate::fleet::ScopeKey;

    /// States of a few modules, with every value sometimes absent, failures with and without
    /// details, and a status this console does not know.
    fn states(rng: &mut rand::rngs::StdRng, n: usize) -> Vec<FirmwareState> {
        let modules: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
        let owners: Vec<Uuid> = (0..2).map(|_| Uuid::new_v4()).collect();
        let some = |rng: &mut rand::rngs::StdRng, v: &str| rng.gen_bool(0.8).then(|| v.to_owned());
        (0..n)
            .map(|_| {
                let status = match rng.gen_range(0..5) {
                    0 => None,
                    1 => Some(UpdateStatus::Failed),
                    2 => Some(UpdateStatus::Succeeded),
                    3 => Some(UpdateStatus::Pending),
                    _ => Some(UpdateStatus::Unknown("PAUSED".into())),
                };
                let version = format!("1.{}.0", rng.gen_range(0..3));
                let details = ["", "none", "battery low"][rng.gen_range(0..3)];
                FirmwareState {
                    module_id: modules[rng.gen_range(0..modules.len())],
                    device_id: Uuid::new_v4(),
                    device_specification_id: rng.gen_bool(0.7).then(|| modules[0]),
                    client_id: rng.gen_bool(0.9).then(|| owners[rng.gen_range(0..owners.len())]),
                    project_id: None,
                    current_firmware_version: some(rng, &version),
                    target_firmware_version: some(rng, "2.0.0"),
                    target_firmware_version_modified_at: None,
                    firmware_update_status: status,
                    firmware_update_status_details: some(rng, details),
                    firmware_update_status_modified_at: None,
                    extra: Default::default(),
                }
            })
            .collect()
    }

    /// A first scan of `pages` through FirstCounts, `between` run after its first page; answers
    /// whether the counts written were its own.
    fn first_scan(db: &FleetDb, scope: Scope, pages: &[Vec<FirmwareState>], between: impl FnOnce()) -> bool {
        let deferred = defer_indexes(db).unwrap();
        assert!(deferred.iter().any(|(n, _)| n == "states_device_order"), "{deferred:?}");
        let marked = || db.setting(crate::fleet::RECOUNT_PENDING).unwrap().is_some();
        assert!(marked(), "a first scan under way marks the counts to be recounted");
        let mut first = FirstCounts::start(&db.conn(), scope).unwrap();
        let mut between = Some(between);
        for page in pages {
            let mut conn = db.conn();
            let tx = conn.transaction().unwrap();
            first.insert(&tx, page).unwrap();
            tx.commit().unwrap();
            drop(conn);
            if let Some(f) = between.take() {
                f();
            }
        }
        let own = restore_indexes(db, &deferred, Some(&first)).unwrap();
        assert!(!marked(), "the mark outlived the scan");
        own
    }

    fn assert_counts_agree(db: &FleetDb) {
        let diff = db.counts_differences().unwrap();
        assert!(diff.is_empty(), "the counts differ from a recount: {diff:#?}");
        let n: i64 = db.conn().query_row("SELECT sum(n) FROM state_counts WHERE dim = 'o'", [], |r| r.get(0)).unwrap();
        let held: i64 = db.conn().query_row("SELECT count(*) FROM states", [], |r| r.get(0)).unwrap();
        assert_eq!(n, held);
    }

    #[test]
    fn a_first_scan_writes_its_own_counts_equal_to_a_recount() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let db = FleetDb::in_memory().unwrap();
        let scope = db.scope(&ScopeKey::new("p", "http://127.0.0.1:1/", None)).unwrap();
        let pages: Vec<_> = (0..5).map(|_| states(&mut rng, 300)).collect();
        assert!(first_scan(&db, scope, &pages, || {}), "the scan's counts were not used");
        assert_counts_agree(&db);
    }

    #[test]
    fn a_state_answered_twice_is_counted_once_by_a_recount() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(8);
        let db = FleetDb::in_memory().unwrap();
        let scope = db.scope(&ScopeKey::new("p", "http://127.0.0.1:1/", None)).unwrap();
        let mut pages: Vec<_> = (0..3).map(|_| states(&mut rng, 200)).collect();
        // The first page's first state again on the last page, moved on meanwhile.
        let again = FirmwareState {
            firmware_update_status: Some(UpdateStatus::Succeeded),
            current_firmware_version: Some("9.9.9".into()),
            ..pages[0][0].clone()
        };
        pages[2].push(again);
        assert!(!first_scan(&db, scope, &pages, || {}));
        assert_counts_agree(&db);
    }

    #[test]
    fn a_state_written_by_anyone_else_meanwhile_leaves_the_counts_to_a_recount() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let pages: Vec<_> = (0..3).map(|_| states(&mut rng, 200)).collect();
        let other = states(&mut rng, 3);
        // The same connection (a rollout's write in this process).
        let db = FleetDb::in_memory().unwrap();
        let scope = db.scope(&ScopeKey::new("p", "http://127.0.0.1:1/", None)).unwrap();
        assert!(!first_scan(&db, scope, &pages, || {
            write_page(&db, scope, &other[..1]).unwrap();
        }));
        assert_counts_agree(&db);
        // Another connection (another process), changing a state the scan wrote.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.sqlite");
        let db = FleetDb::open(&path).unwrap();
        let scope = db.scope(&ScopeKey::new("p", "http://127.0.0.1:1/", None)).unwrap();
        let changed = pages[0][0].device_id.to_string();
        assert!(!first_scan(&db, scope, &pages, || {
            let c = Connection::open(&path).unwrap();
            c.execute("UPDATE states SET status = 'CANCELLED' WHERE device_id = ?1", [&changed]).unwrap();
        }));
        assert_counts_agree(&db);
    }
}
