//! Blocking work nobody waits to see: it runs on a thread of its own at a lower CPU priority
//! than the app's, so on a machine with few cores it takes what the window leaves. The built-in
//! simulator's seeding of a new data file is half a second of CPU in a release build, and it
//! starts with the app: at the same priority it took a core from the web view while the first
//! screen was being drawn (on two cores, the app's main thread, the web process and the seed).

/// How much lower than the app's: Linux's nice scale, where +10 weighs a tenth of 0.
pub const NICER: i32 = 10;

/// Runs `work` on a new thread named `name` at [`NICER`] priority (Linux, where each thread has
/// its own nice value; elsewhere at the app's) and gives its result when it ends; an error if
/// the thread could not start or `work` panicked.
pub async fn run<T: Send + 'static>(name: &str, work: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            lower_this_thread();
            let _ = tx.send(work());
        })
        .map_err(|e| format!("the thread {name} could not start: {e}"))?;
    rx.await.map_err(|_| format!("the thread {name} ended without an answer (it panicked)"))
}

/// Lowers the calling thread's priority by [`NICER`] (only ever lowered: raising it back needs a
/// privilege the app does not have, so this is for threads of their own).
fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getpriority and setpriority take no pointers. On Linux, `PRIO_PROCESS` with
        // `who` 0 is the calling thread only (its nice value is per thread, `man setpriority`).
        // getpriority may return -1 as a value: errno, cleared first, tells it from a failure.
        unsafe {
            *libc::__errno_location() = 0;
            let now = libc::getpriority(libc::PRIO_PROCESS, 0);
            if now == -1 && *libc::__errno_location() != 0 {
                return;
            }
            // Best effort: a thread that cannot be lowered still does its work.
            let _ = libc::setpriority(libc::PRIO_PROCESS, 0, (now + NICER).min(19));
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn nice() -> i32 {
        // SAFETY: no pointers; the tests' threads start at nice values where -1 is no answer.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
    }

    #[tokio::test]
    async fn the_work_runs_lower_than_its_caller_which_is_left_as_it_was() {
        let before = nice();
        let (inside, name) =
            run("dcs-test-low", || (nice(), std::thread::current().name().map(str::to_owned))).await.unwrap();
        assert_eq!(inside, (before + NICER).min(19), "the work's thread is lowered by NICER");
        assert_eq!(name.as_deref(), Some("dcs-test-low"));
        assert_eq!(nice(), before, "the caller's thread keeps its priority");
        // Each run has a thread of its own: a second one is lowered from the caller's, not twice.
        assert_eq!(run("dcs-test-low", nice).await.unwrap(), inside);
    }

    #[tokio::test]
    async fn a_panic_in_the_work_is_an_error_not_a_hang() {
        let e = run("dcs-test-panics", || -> u8 { panic!("on purpose") }).await.unwrap_err();
        assert!(e.contains("dcs-test-panics") && e.contains("panicked"), "{e}");
    }
}
