//! A reset, and the first seeding of a data file, is all or nothing (issue 18): an error part
//! way or a kill -9 at any moment leaves the old state or the new one, never devices without
//! their firmware states, nor a half-seeded file taken as seeded on the next start.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dcs_sim::{SimOptions, Simulator};
use rand::Rng;
use rusqlite::Connection;

/// What a data file holds, counted with SQL beside the simulator's own connection.
#[derive(Debug, PartialEq, Eq)]
struct Counts {
    devices: u64,
    states: u64,
    /// Devices with no firmware state: none in the demo data set.
    devices_without_states: u64,
    seeded: bool,
    /// Whether the row [`mark_old`] changed is still as it was changed.
    marked: bool,
}

fn counts(path: &Path) -> Counts {
    let db = Connection::open(path).unwrap();
    let check: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    let count = |sql: &str| db.query_row(sql, [], |r| r.get::<_, u64>(0)).unwrap();
    Counts {
        devices: count("SELECT COUNT(*) FROM devices"),
        states: count("SELECT COUNT(*) FROM firmware_states"),
        devices_without_states: count(
            "SELECT COUNT(*) FROM devices d WHERE NOT EXISTS (SELECT 1 FROM firmware_states s WHERE s.device_id = d.id)",
        ),
        seeded: count("SELECT COUNT(*) FROM meta WHERE key = 'seed'") == 1,
        marked: count("SELECT COUNT(*) FROM firmware_states WHERE status_details = 'the old state'") == 1,
    }
}

/// Changes one state, so that the old state can be told from a freshly seeded one.
fn mark_old(path: &Path) {
    let db = Connection::open(path).unwrap();
    db.execute(
        "UPDATE firmware_states SET status_details = 'the old state' WHERE rowid = (SELECT MIN(rowid) FROM firmware_states)",
        [],
    )
    .unwrap();
}

/// Makes the next seed fail once `after` firmware states are written, as a crash part way would.
fn fail_seed_after(path: &Path, after: u64) {
    Connection::open(path)
        .unwrap()
        .execute_batch(&format!(
            "CREATE TRIGGER fail_mid_seed BEFORE INSERT ON firmware_states
             WHEN (SELECT COUNT(*) FROM firmware_states) >= {after}
             BEGIN SELECT RAISE(ABORT, 'the test stops the seed part way'); END;"
        ))
        .unwrap();
}

fn drop_trigger(path: &Path, name: &str) {
    Connection::open(path).unwrap().execute_batch(&format!("DROP TRIGGER {name}")).unwrap();
}

/// On the default data set: a reset that fails part way leaves the whole old state, and a
/// later reset writes the whole new one. Prints how long one reset takes.
#[test]
fn a_reset_that_fails_part_way_leaves_the_old_state_whole() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sim.db");
    let sim = Simulator::new(SimOptions { data: Some(data.clone()), ..Default::default() }).unwrap();
    let seeded = counts(&data);
    assert!(seeded.devices > 5000 && seeded.states > seeded.devices && seeded.seeded, "{seeded:?}");
    assert_eq!(seeded.devices_without_states, 0);

    mark_old(&data);
    fail_seed_after(&data, seeded.states / 2);
    let err = sim.reset().expect_err("the seed fails part way");
    assert!(err.to_string().contains("the test stops the seed part way"), "{err}");
    assert_eq!(counts(&data), Counts { marked: true, ..seeded }, "the old state, whole");

    drop_trigger(&data, "fail_mid_seed");
    let started = Instant::now();
    sim.reset().unwrap();
    eprintln!("one reset of the default data set (data file, debug build): {:?}", started.elapsed());
    assert_eq!(counts(&data), Counts { marked: false, ..seeded }, "the new state, whole");
}

/// The first seeding of a new data file cut short (here by an error as the `seed` meta is
/// written, the last thing it writes) leaves nothing: the next start seeds the file whole
/// instead of failing on the rows already there or taking them as seeded.
#[test]
fn a_first_seeding_cut_short_is_done_again_whole_on_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sim.db");
    let opts = SimOptions { data: Some(data.clone()), devices_per_client: 20, ..Default::default() };
    drop(dcs_sim::Store::open(&data).unwrap());
    Connection::open(&data)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER fail_meta BEFORE INSERT ON meta
             BEGIN SELECT RAISE(ABORT, 'the test stops the seed at its meta'); END;",
        )
        .unwrap();
    assert!(Simulator::new(opts.clone()).is_err(), "the seeding fails");
    let after = counts(&data);
    assert_eq!((after.devices, after.states, after.seeded), (0, 0, false), "nothing of it is kept: {after:?}");

    drop_trigger(&data, "fail_meta");
    let sim = Simulator::new(opts).expect("the next start seeds the file");
    assert!(sim.store().is_seeded().unwrap());
    let seeded = counts(&data);
    assert!(seeded.devices == 5 * 20 && seeded.devices_without_states == 0 && seeded.seeded, "{seeded:?}");
}

const CHILD: &str = "DCS_SIM_RESET_CHILD";
const KILLS: usize = 50;
const DEVICES: u32 = 30;

/// kill -9 of a process resetting a data file over and over, at random moments, 50 times:
/// after each, the file is whole (integrity check), seeded, and holds the old state or the
/// new one, every device with its firmware states; the next start uses it as it is.
#[test]
fn a_reset_killed_at_random_moments_leaves_the_old_or_the_new_state() {
    if let Ok(path) = std::env::var(CHILD) {
        // The child: reset the file until killed.
        let sim =
            Simulator::new(SimOptions { data: Some(path.into()), devices_per_client: DEVICES, ..Default::default() })
                .unwrap();
        println!("resetting");
        loop {
            sim.reset().unwrap();
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sim.db");
    let opts = SimOptions { data: Some(data.clone()), devices_per_client: DEVICES, ..Default::default() };
    let sim = Simulator::new(opts.clone()).unwrap();
    let started = Instant::now();
    sim.reset().unwrap();
    let one_reset = started.elapsed();
    drop(sim);
    let seeded = counts(&data);
    let (mut old, mut new) = (0, 0);
    let mut rng = rand::thread_rng();
    let started = Instant::now();
    for kill in 0..KILLS {
        mark_old(&data);
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "a_reset_killed_at_random_moments_leaves_the_old_or_the_new_state", "--nocapture"])
            .env(CHILD, &data)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert!(lines.any(|l| l.unwrap() == "resetting"), "the child started");
        // Anywhere in the first reset or the start of the second.
        let delay = Duration::from_micros(rng.gen_range(0..one_reset.as_micros() as u64 * 3 / 2));
        std::thread::sleep(delay);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let after = counts(&data);
        assert_eq!(after, Counts { marked: after.marked, ..seeded }, "kill {kill} after {delay:?}");
        if after.marked {
            old += 1;
        } else {
            new += 1;
        }
        // The next start takes the file as it is, seeded.
        assert!(Simulator::new(opts.clone()).unwrap().store().is_seeded().unwrap());
    }
    eprintln!(
        "{KILLS} kills -9 during resets of {:?} each: {old} left the old state, {new} the new one, all whole ({:?})",
        one_reset,
        started.elapsed()
    );
}
