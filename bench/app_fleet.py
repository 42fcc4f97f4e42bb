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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_idle import app_pid, kib, name, tree_of  # noqa: E402
from conftest import app_session  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

DEVICES = int(os.environ.get("DCS_BENCH_DEVICES", "38000"))

# Samples the page for `ms`: frame gaps (rAF), timer lag (a 50 ms timer's delay past its due
# time) and IPC round trips (`fleet_status`, one at a time). With `scroll`, the device table is
# scrolled by 37 px every frame meanwhile, the frames showing a placeholder row are counted, and
# each frame's gap is broken down: the table's own JavaScript (the scroll handler: the
# virtualizer and Preact drawing the rows, timed from a capturing listener on the document to
# one on the table, which runs after the table's), style and layout (forced in the next frame's
# callback, before anything else runs there), and the rest (paint, composite, and waiting for the
# CPU). The `fleet_rows` calls the table makes meanwhile are timed apart (their round trip; they
# never hold a frame: rows show a placeholder until they arrive).
PROBE = """
const [ms, scroll, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const el = document.querySelector('[data-testid=device-table] .vt-scroll');
const frames = [], lags = [], ipc = [], handler = [], layout = [], fetches = [];
let blank = 0, pre = 0, js = 0;
const onPre = () => { pre = performance.now(); };
const onPost = () => { if (pre) js += performance.now() - pre; pre = 0; };
document.addEventListener('scroll', onPre, true);
if (el) el.addEventListener('scroll', onPost);
const internals = window.__TAURI_INTERNALS__;
const invoke = internals.invoke;
internals.invoke = function (cmd, ...rest) {
  if (cmd !== 'fleet_rows') return invoke.call(this, cmd, ...rest);
  const t0 = performance.now();
  const p = invoke.call(this, cmd, ...rest);
  p.then(() => fetches.push(performance.now() - t0), () => undefined);
  return p;
};
const end = performance.now() + ms;
let last = performance.now();
function frame(t) {
  const l0 = performance.now();
  document.body.offsetHeight;
  layout.push(performance.now() - l0);
  handler.push(js); js = 0;
  frames.push(t - last); last = t;
  if (scroll && el) {
    el.scrollTop += 37;
    if ([...document.querySelectorAll('[data-testid=device-table] [data-index]')].some((r) => !r.hasAttribute('data-key'))) blank++;
  }
  if (t < end) requestAnimationFrame(frame);
}
requestAnimationFrame((t) => { last = t; requestAnimationFrame(frame); });
function timer() { const due = performance.now() + 50; setTimeout(() => { lags.push(performance.now() - due); if (performance.now() < end) timer(); }, 50); }
timer();
async function calls() {
  while (performance.now() < end) {
    const t0 = performance.now();
    await invoke("fleet_status");
    ipc.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
}
calls().then(() => setTimeout(() => {
  internals.invoke = invoke;
  document.removeEventListener('scroll', onPre, true);
  if (el) el.removeEventListener('scroll', onPost);
  done({ frames, lags, ipc, blank, handler, layout, fetches });
}, 100));
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
  // The table's row height (22 px compact, 28 by default), from a row's own style.
  const rowHeight = parseFloat(document.querySelector('[data-testid=device-table] [data-index]').style.height);
  const target = Math.floor(body.scrollTop / rowHeight) + 2;
  const t0 = performance.now();
  (function wait() {
    if (filled(target)) { times.push(performance.now() - t0); setTimeout(next, 30); }
    else if (performance.now() - t0 > 10000) { times.push(NaN); next(); }
    else requestAnimationFrame(wait);
  })();
}
next();
"""


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip()


def web_memory() -> tuple[float, float]:
    """RSS and PSS (MiB) of the app's WebKit web process (the page)."""
    rss = pss = 0
    for p in tree_of(app_pid()):
        if name(p).startswith("WebKitWebProces"):
            rss += kib(p, "status", "VmRSS:")
            pss += kib(p, "smaps_rollup", "Pss:")
    return rss / 1024, pss / 1024


# Scrolls the device table to its last row and waits until the rows there are filled.
TO_END = """
const done = arguments[arguments.length - 1];
const body = document.querySelector('[data-testid=device-table] .vt-scroll');
body.scrollTop = body.scrollHeight;
const t0 = performance.now();
(function wait() {
  const rows = [...document.querySelectorAll('[data-testid=device-table] [data-index]')];
  if ((rows.length && rows.every((r) => r.hasAttribute('data-key'))) || performance.now() - t0 > 20000) done(performance.now() - t0);
  else requestAnimationFrame(wait);
})();
"""


def pct(xs, p):
    xs = sorted(x for x in xs if x == x)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def summary(s, jumps=None):
    f, lag, ipc = s["frames"], s["lags"], s["ipc"]
    # What a frame's gap holds besides the table's JavaScript and style/layout.
    rest = [g - h - l for g, h, l in zip(f, s["handler"], s["layout"])]
    out = {
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
        "frames with a blank row": s["blank"],
        "table JS p50 ms": pct(s["handler"], 50),
        "table JS p95 ms": pct(s["handler"], 95),
        "style+layout p50 ms": pct(s["layout"], 50),
        "style+layout p95 ms": pct(s["layout"], 95),
        "paint+rest p50 ms": pct(rest, 50),
        "paint+rest p95 ms": pct(rest, 95),
        "fleet_rows calls": len(s["fetches"]),
        "fleet_rows p50 ms": pct(s["fetches"], 50),
        "fleet_rows p95 ms": pct(s["fetches"], 95),
    }
    if jumps is not None:
        out["jump fill p50 ms"] = pct(jumps, 50)
        out["jump fill p95 ms"] = pct(jumps, 95)
    return out


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
        d.set_script_timeout(180)
        # The simulator seeds its data set on the first start: wait for the first screen.
        WebDriverWait(d, 600).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=service-url]"))
        started = time.monotonic() - t0
        d.execute_script("location.hash = '#/rollouts'")
        WebDriverWait(d, 60).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=scan-progress]"))
        first_probe = summary(d.execute_async_script(PROBE, 4000, False))
        WebDriverWait(d, 900).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=module-item]"))
        invoke = "const [c, a, done] = arguments; window.__TAURI_INTERNALS__.invoke(c, a).then(done)"
        first = d.execute_async_script(invoke, "fleet_status", {})["last"]
        # Keep the timer out of the figures: no refresh but the one this benchmark asks for.
        d.execute_async_script(invoke, "fleet_set_refresh", {"intervalSeconds": 3600, "auto": False})
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
        time.sleep(3)
        compositing = "off" if any(
            "WEBKIT_DISABLE_COMPOSITING_MODE=1" in Path(f"/proc/{p}/environ").read_bytes().decode(errors="replace").split("\0")
            for p in tree_of(app_pid()) if name(p).startswith("WebKitWebProces")
        ) else "on"
        web_before = web_memory()
        load_idle = loadavg()
        # Idle: the device table over every state, nothing running.
        idle = summary(d.execute_async_script(PROBE, 6000, True), d.execute_async_script(JUMPS, 20)["times"])
        to_end = d.execute_async_script(TO_END)
        time.sleep(2)
        web_after = web_memory()
        # The same while a full scan of every state runs, from the table's top again (left at
        # its last row, it had nowhere to scroll and the column measured no scrolling at all).
        d.execute_script("document.querySelector('[data-testid=device-table] .vt-scroll').scrollTop = 0")
        d.execute_script("document.querySelector('[data-testid=scan-full]').click()")
        WebDriverWait(d, 30).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=scan-progress]"))
        load_busy = loadavg()
        busy_probe = d.execute_async_script(PROBE, 6000, True)
        busy_jumps = d.execute_async_script(JUMPS, 20)["times"]
        still = bool(d.find_elements(By.CSS_SELECTOR, "[data-testid=scan-progress]"))
        during = summary(busy_probe, busy_jumps)
        WebDriverWait(d, 900).until(lambda x: not x.find_elements(By.CSS_SELECTOR, "[data-testid=scan-progress]"))
        second = d.execute_async_script(invoke, "fleet_status", {})["last"]

    rate = lambda r: r["states"] / (r["elapsedMs"] / 1000)  # noqa: E731
    print(f"fleet: {first['states']:,} firmware states of the demo reseller ({DEVICES:,} devices per client), app up in {started:.1f} s")
    print(f"first full scan in the app: {first['elapsedMs'] / 1000:.2f} s, {first['pages']} pages, {rate(first):,.0f} states/s")
    print(f"second full scan (nothing changed, table scrolled meanwhile): {second['elapsedMs'] / 1000:.2f} s, {rate(second):,.0f} states/s")
    print(f"while the first scan ran (dashboard waiting for it): timer lag p95 {first_probe['timer lag p95 ms']:.0f} ms, "
          f"IPC p50/p95 {first_probe['ipc p50 ms']:.0f}/{first_probe['ipc p95 ms']:.0f} ms")
    print(f"aggregate (fleet_home + fleet_overview of a {module['devices']:,}-device module, from the page): median {pct(agg, 50):.0f} ms of 5")
    print(f"device table: {count}; {dom_rows} rows in the DOM; WebKit compositing {compositing}")
    print(f"the page's memory (web process RSS/PSS): {web_before[0]:.0f}/{web_before[1]:.0f} MiB before scrolling, "
          f"{web_after[0]:.0f}/{web_after[1]:.0f} MiB after 6 s of scrolling, 20 jumps and a jump to the last row ({to_end:.0f} ms to fill)")
    print(f"load average: {load_idle} (idle measures), {load_busy} (while scanning)")
    print()
    print(f"{'device table, 6 s':<26}{'while scanning':>16}{'idle':>10}{'ratio':>8}")
    for k in during:
        a, b = during[k], idle[k]
        ratio = f"{a / b:.2f}" if b else "-"
        print(f"{k:<26}{a:>16.1f}{b:>10.1f}{ratio:>8}")
    print(f"(the scan was {'still' if still else 'no longer'} running when the measurements ended)")
    print()
    print(json.dumps({"during": during, "idle": idle, "first_scan": first, "second_scan": second, "aggregate_ms": agg}))


if __name__ == "__main__":
    main()
