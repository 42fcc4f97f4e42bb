"""Benchmark (not a test): how quickly the app shows its first screen under Xvfb, and how much
memory it holds once idle. The app is `DCS_APP_BINARY` (the installed one when the installer
test runs this) or the debug build. Three starts; for each: the time from asking WebDriver for a
session (which starts the app) to the firmware modules on screen, then, after 10 s idle, the
resident memory of the app and of its WebKit processes (RSS, and PSS, which shares the pages of
common libraries out among the processes that map them, so the sum does not count them twice).

With `DCS_FLOOR_BINARY` (bench/app-idle.sh builds bench/tauri-floor and sets it): the same three
starts of WebKitGTK's floor, the smallest Tauri window (one line of HTML, the same tauri version,
drawn the same way, and again with WebKit's default drawing), started the same way; then the
app's PSS as a ratio of the floor's (aim <= 1.2x) and the app process's private anonymous
memory (`Anonymous` in smaps_rollup: its heaps, Rust's and GTK's/WebKit's UI side, and thread
stacks) beside the floor's, whose difference is what the app itself holds (aim: the Rust heap
<= 40 MiB).

Run by tests/install/run.sh on the installed app (inside Xvfb and a D-Bus session); by hand:
`DCS_APP_BINARY=target/release/dcs-console .venv/bin/python bench/app_idle.py` with a DISPLAY."""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

import conftest  # noqa: E402
from conftest import APP, HOME_READY, app_session  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

IDLE_SECONDS = 10


def children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        tree.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return tree


def tree_of(pid: int) -> list[int]:
    tree, out, todo = children(), [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += tree.get(p, [])
    return out


def kib(pid: int, path: str, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/{path}").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def app_pid(binary: Path = APP) -> int:
    out = subprocess.run(["pgrep", "-n", "-f", f"^{binary}"], capture_output=True, text=True).stdout.split()
    return int(out[0])


FLOOR = os.environ.get("DCS_FLOOR_BINARY")


def tree_memory(pid: int) -> dict[str, tuple[int, int]]:
    memory: dict[str, tuple[int, int]] = {}
    for p in tree_of(pid):
        rss, pss = kib(p, "status", "VmRSS:"), kib(p, "smaps_rollup", "Pss:")
        old = memory.get(name(p), (0, 0))
        memory[name(p)] = (old[0] + rss, old[1] + pss)
    return memory


def one_start(work: Path, binary: Path, ready: str, extra: dict | None = None) -> tuple[float, dict[str, tuple[int, int]], int]:
    """One start of `binary` through WebDriver (the app, or the floor window, started the same
    way, with `extra` in its environment): the time until `ready` (CSS) is on screen, its
    memory after IDLE_SECONDS (per process name: RSS, PSS in KiB) and its own Anonymous (KiB)."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(work / "config"), XDG_DATA_HOME=str(work / "data"), **(extra or {}))
    conftest.APP = binary
    started = []
    try:
        with app_session(env, on_start=lambda: started.append(time.monotonic())) as d:
            WebDriverWait(d, 60, poll_frequency=0.02).until(lambda x: x.find_elements(By.CSS_SELECTOR, ready))
            shown = time.monotonic() - started[0]
            time.sleep(IDLE_SECONDS)
            pid = app_pid(binary)
            return shown, tree_memory(pid), kib(pid, "smaps_rollup", "Anonymous:")
    finally:
        conftest.APP = APP


# The app's first screen is Home (conftest.HOME_READY); the floor's is its one line.
FLOOR_READY = "[data-testid=floor]"


def starts(label: str, binary: Path, ready: str, extra: dict | None = None) -> tuple[float, float, float]:
    """Three starts: each printed, then the medians of the time to screen, the PSS (MiB) and the
    Anonymous (MiB)."""
    times, psses, anons = [], [], []
    for i in range(3):
        with tempfile.TemporaryDirectory(prefix="dcs-idle.") as work:
            t, m, anon = one_start(Path(work), binary, ready, extra)
        rss, pss = sum(v[0] for v in m.values()) / 1024, sum(v[1] for v in m.values()) / 1024
        times.append(t)
        psses.append(pss)
        anons.append(anon / 1024)
        parts = ", ".join(f"{k} {v[0] / 1024:.1f}/{v[1] / 1024:.1f}" for k, v in sorted(m.items()))
        print(f"{label} start {i + 1}: on screen after {t:.2f} s; idle RSS {rss:.1f} MiB, PSS {pss:.1f} MiB ({parts}; RSS/PSS MiB)")
    return statistics.median(times), statistics.median(psses), statistics.median(anons)


def main() -> None:
    print(f"app: {APP} ({APP.stat().st_size / 2**20:.1f} MiB)")
    print(f"load average: {Path('/proc/loadavg').read_text().strip()}")
    app_time, pss, anon = starts("app", APP, HOME_READY)
    print(f"app, median of 3: first screen after {app_time:.2f} s; idle PSS {pss:.1f} MiB (aim: under 120 MB in all)")
    print(f"the app process's private anonymous memory (Anonymous): median {anon:.1f} MiB")
    if FLOOR:
        # Drawn as the app draws (the same rule: src-tauri/src/rendering.rs), and with WebKit's
        # default drawing, which a minimal Tauri window gets without that rule.
        floor_time, floor_pss, floor_anon = starts("floor", Path(FLOOR), FLOOR_READY)
        default_time, default_pss, _ = starts("floor, WebKit's default drawing", Path(FLOOR), FLOOR_READY, {"DCS_GPU_COMPOSITING": "1"})
        print(f"first screen: the app {app_time:.2f} s, the floor's one line {floor_time:.2f} s: {app_time / floor_time:.2f}x, the app's own {app_time - floor_time:.2f} s (aim: the app <= 1.0 s)")
        print(f"floor (the smallest Tauri window, median of 3): PSS {floor_pss:.1f} MiB; the app's {pss:.1f} MiB = {pss / floor_pss:.2f}x (aim <= 1.2x)")
        print(f"floor with WebKit's default drawing: on screen after {default_time:.2f} s, PSS {default_pss:.1f} MiB; the app's = {pss / default_pss:.2f}x")
        print(f"Anonymous: the app process {anon:.1f} MiB, the floor's {floor_anon:.1f} MiB: the app's own {anon - floor_anon:.1f} MiB (aim: Rust heap <= 40 MiB)")
    print(f"load average: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
