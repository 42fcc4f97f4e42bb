"""Benchmark (not a test): the rollout dashboard of the real app over a fleet of 100,000+
firmware states, and whether the UI stays responsive while the app scans it.

In the page, while the app's first full scan runs (and again once it is idle, as the baseline
of the same run): the gaps between animation frames, the delay of a timer the page asks for
every 50 ms (event-loop lag), and the round trip of a command to Rust (`fleet_status`). Then the
device table over every state: how long rows take to fill in after a jump to a random place.
Prints the figures and the ratios scanning / idle.

Run by bench/app-fleet.sh (it builds the app and sets up the display and D-Bus session)."""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from conftest import app_session  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

DEVICES = int(os.environ.get("DCS_BENCH_DEVICES", "38000"))

# Samples the page for `ms`: frame gaps (rAF), timer lag (a 50 ms timer's delay past its due
# time) and IPC round trips (`fleet_status`, one at a time). Answers the raw samples.
PROBE = """
const [ms, done] = [arguments[0], arguments[arguments.length - 1]];
const frames = [], lags = [], ipc = [];
const end = performance.now() + ms;
let last = performance.now();
function frame(t) { frames.push(t - last); last = t; if (t < end) requestAnimationFrame(frame); }
requestAnimationFrame((t) => { last = t; requestAnimationFrame(frame); });
function timer() { const due = performance.now() + 50; setTimeout(() => { lags.push(performance.now() - due); if (performance.now() < end) timer(); }, 50); }
timer();
async function calls() {
  while (performance.now() < end) {
    const t0 = performance.now();
    await window.__TAURI_INTERNALS__.invoke("fleet_status");
    ipc.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
}
calls().then(() => setTimeout(() => done({ frames, lags, ipc }), 100));
"""

# Jumps the device table to `n` random rows and times until the rows in view show their content
# (no placeholder left). Answers the times in ms.
JUMPS = """
const [n, done] = [arguments[0], arguments[arguments.length - 1]];
const body = document.querySelector('[data-testid=device-table] .vt-scroll');
const times = [];
let i = 0;
// Filled: the row at the new position is rendered and no row in the DOM is a placeholder.
function filled(target) {
  const rows = [...document.querySelectorAll('[data-testid=device-table] [data-index]')];
  return rows.some((r) => Number(r.dataset.index) === target) && rows.every((r) => r.hasAttribute('data-key'));
}
function next() {
  if (i++ >= n) return done({ times, height: body.scrollHeight });
  body.scrollTop = Math.random() * (body.scrollHeight - body.clientHeight);
  const target = Math.floor(body.scrollTop / 28) + 2;
  const t0 = performance.now();
  (function wait() {
    if (filled(target)) { times.push(performance.now() - t0); setTimeout(next, 30); }
    else if (performance.now() - t0 > 10000) { times.push(NaN); next(); }
    else requestAnimationFrame(wait);
  })();
}
next();
"""


def pct(xs, p):
    xs = sorted(x for x in xs if x == x)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def summary(s):
    f, lag, ipc = s["frames"], s["lags"], s["ipc"]
    return {
        "frames": len(f),
        "frame p50 ms": pct(f, 50),
        "frame p95 ms": pct(f, 95),
        "frame max ms": max(f) if f else float("nan"),
        "frames > 50 ms": sum(1 for x in f if x > 50),
        "timer lag p95 ms": pct(lag, 95),
        "timer lag max ms": max(lag) if lag else float("nan"),
        "ipc p50 ms": pct(ipc, 50),
        "ipc p95 ms": pct(ipc, 95),
        "ipc calls": len(ipc),
    }


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="dcs-fleet-bench.", dir="/var/tmp"))
    env = dict(
        os.environ,
        XDG_CONFIG_HOME=str(work / "config"),
        DCS_DATA_DIR=str(work / "data"),
        DCS_SIM_SEED="7",
        DCS_SIM_DEVICES=str(DEVICES),
    )
    t0 = time.monotonic()
    with app_session(env) as d:
        d.set_window_size(1400, 900)
        # The simulator seeds its data set on the first start: wait for the first screen.
        WebDriverWait(d, 600).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=service-url]"))
        started = time.monotonic() - t0
        d.execute_script("location.hash = '#/rollouts'")
        WebDriverWait(d, 60).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=scan-progress]"))
        d.set_script_timeout(120)
        during = d.execute_async_script(PROBE, 4000)
        scanning_still = bool(d.find_elements(By.CSS_SELECTOR, "[data-testid=scan-progress]"))
        WebDriverWait(d, 600).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=module-item]"))
        status = d.execute_async_script("const done = arguments[0]; window.__TAURI_INTERNALS__.invoke('fleet_status').then(done)")
        last = status["last"]
        idle = d.execute_async_script(PROBE, 4000)
        # Overview of the biggest module: the aggregate as the UI asks for it.
        module = d.execute_async_script(
            "const done = arguments[0]; window.__TAURI_INTERNALS__.invoke('fleet_home').then((h) => done(h.modules.sort((a, b) => b.devices - a.devices)[0]))"
        )
        agg = d.execute_async_script(
            "const [id, done] = arguments; const t = []; (async () => { for (let i = 0; i < 5; i++) { const t0 = performance.now();"
            " await window.__TAURI_INTERNALS__.invoke('fleet_home'); await window.__TAURI_INTERNALS__.invoke('fleet_overview', { moduleId: id });"
            " t.push(performance.now() - t0); } done(t); })()",
            module["moduleId"],
        )
        d.find_element(By.CSS_SELECTOR, "[data-testid=fleet-tab-devices]").click()
        WebDriverWait(d, 60).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=device-table] [data-key]"))
        count = d.find_element(By.CSS_SELECTOR, "[data-testid=device-count]").text
        dom_rows = d.execute_script("return document.querySelectorAll('[data-testid=device-table] [data-index]').length")
        jumps = d.execute_async_script(JUMPS, 30)

    s_during, s_idle = summary(during), summary(idle)
    print(f"fleet: {last['states']:,} firmware states of the demo reseller ({DEVICES:,} devices per client), app started in {started:.1f} s")
    print(f"first full scan in the app: {last['elapsedMs'] / 1000:.2f} s, {last['pages']} pages, "
          f"{last['states'] / (last['elapsedMs'] / 1000):,.0f} states/s (still scanning after the probe: {scanning_still})")
    print(f"aggregate (fleet_home + fleet_overview of a {module['devices']:,}-device module, from the page): "
          f"median {pct(agg, 50):.0f} ms of 5")
    print(f"device table: {count}; {dom_rows} rows in the DOM; after a jump to a random row, filled in "
          f"median {pct(jumps['times'], 50):.0f} ms, p95 {pct(jumps['times'], 95):.0f} ms (30 jumps)")
    print()
    print(f"{'page, 4 s':<22}{'while scanning':>16}{'idle':>12}{'ratio':>9}")
    for k in s_during:
        a, b = s_during[k], s_idle[k]
        ratio = f"{a / b:.2f}" if isinstance(b, (int, float)) and b else "-"
        print(f"{k:<22}{a:>16.1f}{b:>12.1f}{ratio:>9}")
    print()
    print(json.dumps({"during": s_during, "idle": s_idle, "scan": last, "aggregate_ms": agg, "jumps_ms": jumps["times"]}))


if __name__ == "__main__":
    main()
