//! Letting go of the app's own code once it has started. Starting runs code that an idle app
//! never runs again: the built-in simulator's schema and seed, the fleet database's opening, the
//! windows', tray's and IPC's set-up. Linux maps a program's code page by page as it is touched,
//! and more around each (whole page-cache folios), and keeps it mapped; in the release app that
//! was 21 MiB of its 34 MB binary at idle, the biggest item of its idle memory over WebKitGTK's
//! own floor. Asked once start-up is over, the kernel reclaims the executable's read-only pages
//! (`MADV_PAGEOUT`, Linux 5.4); what the app runs afterwards is read in again as it is touched.
//! The binary's pages that hold data of their own (its relocated, then read-only, tables and its
//! writable data) are left as they are: reclaiming those would mean writing them to swap.

/// What [`release_own_code`] asked the kernel to reclaim.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Released {
    /// The executable's mappings asked for.
    pub mappings: usize,
    /// The executable's code as it was just before: `size_kib` is what was asked for (not all
    /// of it was resident).
    pub before: OwnCode,
}

/// The executable's mappings now: what [`release_own_code`] would ask for, and the rest.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct OwnCode {
    /// KiB of the read-only mappings that hold only the file's contents: their size, and how much
    /// of it is resident.
    pub size_kib: u64,
    pub resident_kib: u64,
    /// KiB resident of the executable's other mappings (writable, or relocated: the process's own).
    pub data_resident_kib: u64,
}

/// The executable's mappings now, from `/proc/self/smaps` (elsewhere than Linux, nothing).
pub fn own_code() -> std::io::Result<OwnCode> {
    #[cfg(target_os = "linux")]
    return Ok(code_of(&own_mappings()?));
    #[cfg(not(target_os = "linux"))]
    Ok(OwnCode::default())
}

#[cfg(target_os = "linux")]
fn code_of(mappings: &[Mapping]) -> OwnCode {
    let mut code = OwnCode::default();
    for m in mappings {
        if m.reclaimable() {
            code.size_kib += ((m.end - m.start) / 1024) as u64;
            code.resident_kib += m.rss_kib;
        } else {
            code.data_resident_kib += m.rss_kib;
        }
    }
    code
}

/// Asks the kernel to reclaim the pages of this process's executable that hold only the file's
/// own read-only contents. Elsewhere than Linux, nothing (and no error).
pub fn release_own_code() -> std::io::Result<Released> {
    #[cfg(target_os = "linux")]
    {
        let mappings = own_mappings()?;
        let mut released = Released { mappings: 0, before: code_of(&mappings) };
        for m in mappings.iter().filter(|m| m.reclaimable()) {
            // SAFETY: the range is a whole mapping of this process, page-aligned as the kernel
            // lists it; MADV_PAGEOUT changes no contents (a reclaimed page is read from the file
            // again when touched), so no reference into it is invalidated.
            let asked = unsafe { libc::madvise(m.start as *mut libc::c_void, m.end - m.start, libc::MADV_PAGEOUT) };
            if asked != 0 {
                return Err(std::io::Error::last_os_error());
            }
            released.mappings += 1;
        }
        Ok(released)
    }
    #[cfg(not(target_os = "linux"))]
    Ok(Released::default())
}

/// One mapping of the executable, from `/proc/self/smaps`.
#[cfg(target_os = "linux")]
#[derive(Debug)]
struct Mapping {
    start: usize,
    end: usize,
    writable: bool,
    /// KiB of it that are the process's own (copied on write, as relocated tables are).
    anonymous_kib: u64,
    /// KiB of it resident.
    rss_kib: u64,
}

#[cfg(target_os = "linux")]
impl Mapping {
    fn reclaimable(&self) -> bool {
        !self.writable && self.anonymous_kib == 0
    }
}

/// The mappings of this process's executable (by its path, as `/proc/self/exe` names it, so a
/// binary replaced on disk while it runs, "(deleted)", is still found).
#[cfg(target_os = "linux")]
fn own_mappings() -> std::io::Result<Vec<Mapping>> {
    let exe = std::fs::read_link("/proc/self/exe")?;
    let exe = exe.to_string_lossy();
    let smaps = std::fs::read_to_string("/proc/self/smaps")?;
    let mut found: Vec<Mapping> = Vec::new();
    let mut current = false;
    for line in smaps.lines() {
        if let Some(m) = mapping_header(line) {
            current = m.1 == exe;
            if current {
                found.push(m.0);
            }
        } else if current {
            let last = found.last_mut().expect("a mapping precedes its fields");
            let kib = |rest: &str| rest.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap_or(0);
            if let Some(rest) = line.strip_prefix("Anonymous:") {
                last.anonymous_kib = kib(rest);
            } else if let Some(rest) = line.strip_prefix("Rss:") {
                last.rss_kib = kib(rest);
            }
        }
    }
    Ok(found)
}

/// A header line of `smaps` (`start-end perms offset dev inode path`) as its mapping and path;
/// `None` for the lines of fields under it.
#[cfg(target_os = "linux")]
fn mapping_header(line: &str) -> Option<(Mapping, &str)> {
    let mut fields = line.splitn(6, ' ');
    let (range, perms) = (fields.next()?, fields.next()?);
    let (start, end) = range.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    if perms.len() != 4 {
        return None;
    }
    let path = fields.nth(3).unwrap_or("").trim_start();
    let writable = perms.as_bytes()[1] == b'w';
    Some((Mapping { start, end, writable, anonymous_kib: 0, rss_kib: 0 }, path))
}

// What the kernel does with the pages is tested in tests/resident.rs, a process of its own: here
// the other tests' threads run code beside it and read much of it back in at once.
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn headers_are_told_from_fields_and_keep_paths_with_spaces() {
        let (m, path) =
            mapping_header("55f7306d6000-55f731ed2000 r-xp 007e2000 fd:01 1234 /opt/a b/dcs (deleted)").unwrap();
        assert_eq!((m.start, m.end, m.writable), (0x55f7306d6000, 0x55f731ed2000, false));
        assert_eq!(path, "/opt/a b/dcs (deleted)");
        let (m, path) = mapping_header("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 ").unwrap();
        assert!(m.writable);
        assert_eq!(path, "");
        assert!(mapping_header("Rss:                 100 kB").is_none());
        assert!(mapping_header("VmFlags: rd ex mr mw me").is_none());
    }
}
