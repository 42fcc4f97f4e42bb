//! `dcs_console::resident` against the kernel, in a process of its own: with one test, no other
//! thread runs code beside it and reads pages back in as they are let go of (in the library's
//! test binary, beside 125 other tests, 28 of 35 MiB were back at once). The app as a whole is
//! checked by tests/e2e/test_idle_memory.py.

#![cfg(target_os = "linux")]

use dcs_console::resident::{own_code, release_own_code};

/// Reads a byte of every page of the executable's readable mappings, so that all are resident.
fn touch_own_mappings() {
    let exe = std::fs::read_link("/proc/self/exe").unwrap();
    let exe = exe.to_string_lossy();
    for line in std::fs::read_to_string("/proc/self/maps").unwrap().lines() {
        let fields: Vec<&str> = line.splitn(6, ' ').collect();
        if fields.len() == 6 && fields[5].trim_start() == exe && fields[1].starts_with('r') {
            let (start, end) = fields[0].split_once('-').unwrap();
            let (start, end) = (usize::from_str_radix(start, 16).unwrap(), usize::from_str_radix(end, 16).unwrap());
            for page in (start..end).step_by(4096) {
                // SAFETY: a readable mapping of this process's executable, which stays mapped.
                unsafe { std::ptr::read_volatile(page as *const u8) };
            }
        }
    }
}

#[test]
fn the_executables_own_read_only_pages_leave_memory_and_its_data_stays() {
    touch_own_mappings();
    let before = own_code().unwrap();
    assert!(before.size_kib > 0 && before.resident_kib * 10 >= before.size_kib * 9, "all touched: {before:?}");
    let released = release_own_code().unwrap();
    let after = own_code().unwrap();
    assert!(released.mappings >= 1 && released.before.size_kib >= before.size_kib, "{released:?}, {before:?}");
    // Without the release, all of it stays. The code run since (the return, reading `smaps`) is
    // read back in, whole page-cache folios around each page: in this 2 MB binary that was 100
    // KiB here and 596 KiB in a CI run.
    assert!(after.resident_kib * 2 < before.resident_kib, "{before:?} -> {after:?}");
    assert!(
        after.data_resident_kib * 2 >= before.data_resident_kib,
        "the process's own pages stay: {before:?} -> {after:?}"
    );
}
