"""Benchmark (not a test): how quickly the app shows its first screen under Xvfb, and how much
memory it holds once idle. The app is `DCS_APP_BINARY` (the installed one when the installer
test runs this) or the debug build. Three starts; for each: the time from asking WebDriver for a
session (which starts the app) to the firmware modules on screen, then, after 10 s idle, the
resident memory of the app and of its WebKit processes (RSS, and PSS, which shares the pages of
common libraries out among the processes that map them, so the sum does not count them twice).

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

from conftest import APP, app_session  # noqa: E402
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


def app_pid() -> int:
    out = subprocess.run(["pgrep", "-n", "-f", f"^{APP}"], capture_output=True, text=True).stdout.split()
    return int(out[0])


def one_start(work: Path) -> tuple[float, dict[str, tuple[int, int]]]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(work / "config"), XDG_DATA_HOME=str(work / "data"))
    started = []
    with app_session(env, on_start=lambda: started.append(time.monotonic())) as app:
        # The first screen is Home, ready once its fleet health is read (empty on a fresh start).
        WebDriverWait(app, 60, poll_frequency=0.02).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=home-health-empty], [data-testid=home-totals]")
        )
        first_screen = time.monotonic() - started[0]
        time.sleep(IDLE_SECONDS)
        memory: dict[str, tuple[int, int]] = {}
        for p in tree_of(app_pid()):
            rss, pss = kib(p, "status", "VmRSS:"), kib(p, "smaps_rollup", "Pss:")
            old = memory.get(name(p), (0, 0))
            memory[name(p)] = (old[0] + rss, old[1] + pss)
        return first_screen, memory


def main() -> None:
    print(f"app: {APP} ({APP.stat().st_size / 2**20:.1f} MiB)")
    times, memories = [], []
    for i in range(3):
        with tempfile.TemporaryDirectory(prefix="dcs-idle.") as work:
            t, m = one_start(Path(work))
        times.append(t)
        memories.append(m)
        rss = sum(v[0] for v in m.values()) / 1024
        pss = sum(v[1] for v in m.values()) / 1024
        parts = ", ".join(f"{k} {v[0] / 1024:.1f}/{v[1] / 1024:.1f}" for k, v in sorted(m.items()))
        print(f"start {i + 1}: first screen after {t:.2f} s; idle RSS {rss:.1f} MiB, PSS {pss:.1f} MiB ({parts}; RSS/PSS MiB)")
    rss = statistics.median(sum(v[0] for v in m.values()) for m in memories) / 1024
    pss = statistics.median(sum(v[1] for v in m.values()) for m in memories) / 1024
    print(f"median of 3: first screen after {statistics.median(times):.2f} s; idle RSS {rss:.1f} MiB, PSS {pss:.1f} MiB (aim: under 120 MB in all)")


if __name__ == "__main__":
    main()
