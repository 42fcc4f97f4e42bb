//! The app layer opens without waiting for the built-in simulator: the window's first screen
//! (the active profile, its address, the fleet database) is known at once, while the simulator
//! seeds its demo data in the background; what asks the service waits for it, or says why it
//! could not start. One test: the console reads its folders from the process's environment.

use dcs_api::firmware::ModuleFilter;
use dcs_console::Console;
use futures::TryStreamExt;

const SEED: u64 = 5;

fn use_folders(dir: &std::path::Path) {
    std::env::set_var("DCS_CONFIG", dir.join("config.toml"));
    std::env::set_var("DCS_DATA_DIR", dir.join("data"));
    std::env::set_var("DCS_SIM_SEED", SEED.to_string());
    std::env::set_var("DCS_SIM_DEVICES", "5");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_opens_before_the_simulator_serves_and_the_service_waits_for_it() {
    // A simulator that cannot start (its data file's path is a folder): the console opens all
    // the same, on the built-in profile at its bound address; asking the service says why.
    let broken = tempfile::tempdir().unwrap();
    use_folders(broken.path());
    std::fs::create_dir_all(broken.path().join("data").join(format!("simulator-seed-{SEED}.sqlite"))).unwrap();
    let console = Console::start().await.expect("the console opens without waiting for the simulator");
    let current = console.current().await;
    assert!(current.simulator());
    assert!(current.base_url.starts_with("http://127.0.0.1:"), "{}", current.base_url);
    assert!(console.fleet().is_ok(), "the fleet database opens");
    let refused = console.session().await.err().expect("the service cannot be asked");
    assert!(refused.to_string().contains("the built-in simulator could not start"), "{refused}");
    drop(console);

    // A fresh data folder: the session waits until the simulator serves, then the demo data
    // is there (a request sent before would have met no server, only the listen queue).
    let fresh = tempfile::tempdir().unwrap();
    use_folders(fresh.path());
    let console = Console::start().await.unwrap();
    let session = console.session().await.expect("the simulator starts");
    assert_eq!(session.base_url, console.current().await.base_url);
    let modules: Vec<_> =
        session.client.firmware().modules(&ModuleFilter::default()).unwrap().try_collect().await.unwrap();
    assert!(!modules.is_empty(), "the demo data set is seeded");
    // The simulated clock is the simulator's once it serves.
    assert!(console.service_clock(&session).await.rate > 1.0);

    drop(session);
    drop(console);

    // The seeding runs below the app's priority, on a thread of its own (src/background.rs): it
    // took a core from the web view while the first screen was drawn. Seen from outside, as the
    // system sees it: the thread's nice value in /proc, while it seeds a fleet big enough to watch.
    #[cfg(target_os = "linux")]
    {
        let big = tempfile::tempdir().unwrap();
        use_folders(big.path());
        std::env::set_var("DCS_SIM_DEVICES", "400");
        let ours = nice_of("self/stat");
        let console = Console::start().await.unwrap();
        let mut seen = Vec::new();
        let waited = tokio::spawn(async move { console.session().await.map(|_| ()) });
        while !waited.is_finished() {
            for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
                let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
                if comm.trim() == "dcs-sim-seed" {
                    seen.push(nice_of(&format!("self/task/{}/stat", task.file_name().to_string_lossy())));
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        waited.await.unwrap().expect("the simulator starts");
        seen.sort();
        seen.dedup();
        assert!(!seen.is_empty(), "the seeding ran on a thread named dcs-sim-seed");
        assert!(
            seen.contains(&(ours + dcs_console::background::NICER).min(19)),
            "the seeding thread ran at nice {seen:?}, the test's thread at {ours}"
        );
    }
}

/// The nice value in `/proc/<path>` (a `stat` file: field 19, after the command's parentheses).
#[cfg(target_os = "linux")]
fn nice_of(path: &str) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{path}")).unwrap_or_default();
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(16))
        .and_then(|n| n.parse().ok())
        .unwrap_or(i32::MIN)
}
