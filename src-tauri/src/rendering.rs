//! How the web view draws on Linux. WebKitGTK composites the page with OpenGL by default; on a
//! machine without a GPU (a VM, a remote desktop, Xvfb) that OpenGL is Mesa's software
//! rasteriser, and a scrolled frame of the device table cost 300 to 500 ms of the web process's
//! CPU there (bench/app-fleet.sh), where WebKit's own non-composited drawing paints the same
//! frame in tens of milliseconds and holds about 80 MiB less. So without a GPU render node the
//! app starts WebKit in that mode (`WEBKIT_DISABLE_COMPOSITING_MODE=1`, WebKit's own switch);
//! with one it keeps WebKit's default. Either way the operator's setting wins:
//! `WEBKIT_DISABLE_COMPOSITING_MODE` set to anything, or `DCS_GPU_COMPOSITING=1` to keep
//! composited drawing on software OpenGL.
//!
//! WebKitWebDriver's screenshot command answers once and then hangs in this mode, so the
//! end-to-end tests take their screenshots from the X display (tests/e2e/conftest.py).

/// WebKit's switch for its non-composited drawing.
pub const WEBKIT_SWITCH: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
/// Ours to keep WebKit's composited drawing without a GPU.
pub const KEEP_COMPOSITING: &str = "DCS_GPU_COMPOSITING";

/// Whether to turn WebKit's compositing off: only when nobody chose already (neither variable
/// set to a value) and the machine has no GPU render node.
pub fn compositing_off(webkit_switch: Option<&str>, keep: Option<&str>, has_gpu: bool) -> bool {
    webkit_switch.is_none() && keep.is_none_or(|v| v.trim().is_empty() || v.trim() == "0") && !has_gpu
}

/// A DRM render node (`/dev/dri/renderD*`): what a GPU driver gives OpenGL to draw with.
pub fn has_gpu() -> bool {
    std::fs::read_dir("/dev/dri")
        .map(|dir| dir.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD")))
        .unwrap_or(false)
}

/// Applies the rule to this process's environment, which WebKit's processes inherit. Call it
/// first thing, before any thread starts (the environment is not thread-safe).
pub fn choose() {
    if cfg!(target_os = "linux")
        && compositing_off(
            std::env::var(WEBKIT_SWITCH).ok().as_deref(),
            std::env::var(KEEP_COMPOSITING).ok().as_deref(),
            has_gpu(),
        )
    {
        std::env::set_var(WEBKIT_SWITCH, "1");
    }
}

#[cfg(test)]
mod tests {
    use super::compositing_off;

    #[test]
    fn compositing_is_turned_off_only_without_a_gpu_and_without_a_choice() {
        assert!(compositing_off(None, None, false));
        assert!(!compositing_off(None, None, true), "a GPU keeps WebKit's default");
        assert!(!compositing_off(Some("0"), None, false), "WebKit's own switch, set, wins");
        assert!(!compositing_off(Some(""), None, false), "set, even empty, is a choice");
        assert!(!compositing_off(None, Some("1"), false), "DCS_GPU_COMPOSITING=1 keeps compositing");
        assert!(compositing_off(None, Some("0"), false));
        assert!(compositing_off(None, Some(""), false));
    }
}
