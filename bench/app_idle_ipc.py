"""Benchmark (not a test): IPC calls per minute the web view makes while nothing happens, on
Home and on the Rollouts dashboard (issue 17: state is pushed by Rust, no UI timer asks it).

A fresh start of the debug build (`DCS_APP_BINARY` to point elsewhere) with its built-in
simulator; the opt-in IPC recorder (`localStorage["dcs.recordIpc"]`, `window.__dcsIpcLog`) counts
every command the UI calls. For each screen: open it, let it settle (the dashboard's first scan
ends), then count the calls over IDLE seconds. The dashboard is measured twice: with the
automatic refresh as it starts (every 15 s, which itself changes what is shown) and with it
switched off (nothing changes at all). Prints one line per measure and the commands called.

By hand (inside Xvfb and a D-Bus session, as the end-to-end tests run):
`CARGO_TARGET_DIR=... /tmp/run-session.sh .venv/bin/python bench/app_idle_ipc.py [seconds]`."""

import collections
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from conftest import SEED, app_session, fresh_web_storage, ipc_calls as calls, record_ipc  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from test_profiles import wait_css  # noqa: E402

IDLE_SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
SETTLE_SECONDS = 5.0
STALE = (StaleElementReferenceException,)


def measure(driver, label: str) -> float:
    time.sleep(SETTLE_SECONDS)
    before = len(calls(driver))
    time.sleep(IDLE_SECONDS)
    during = calls(driver)[before:]
    per_minute = len(during) * 60.0 / IDLE_SECONDS
    by_cmd = collections.Counter(during)
    detail = ", ".join(f"{c} {n}" for c, n in by_cmd.most_common()) or "none"
    print(f"{label}: {len(during)} calls in {IDLE_SECONDS:.0f} s = {per_minute:.1f} per minute ({detail})", flush=True)
    return per_minute


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env.update(
            DCS_SIM_SEED=SEED,
            XDG_CONFIG_HOME=f"{tmp}/config",
            XDG_DATA_HOME=env.get("XDG_DATA_HOME", f"{tmp}/data"),
            XDG_CACHE_HOME=f"{tmp}/cache",
            DCS_DATA_DIR=f"{tmp}/app-data",
        )
        fresh_web_storage(env)
        with app_session(env) as driver:
            wait_css(driver, "[data-testid=home]", 90)
            record_ipc(driver, "#/home")
            wait_css(driver, "[data-testid=home]", 90)
            measure(driver, "home, before any scan")

            driver.execute_script("location.hash = '#/rollouts'")
            WebDriverWait(driver, 120, ignored_exceptions=STALE).until(
                lambda d: "Last full scan" in "".join(e.text for e in d.find_elements(By.CSS_SELECTOR, "[data-testid=scan-last]"))
            )
            measure(driver, "rollouts dashboard, auto refresh every 15 s")

            box = wait_css(driver, "[data-testid=auto-refresh]", 90)
            if box.is_selected():
                box.click()
            WebDriverWait(driver, 10).until(lambda d: not d.find_element(By.CSS_SELECTOR, "[data-testid=auto-refresh]").is_selected())
            measure(driver, "rollouts dashboard, auto refresh off")

            driver.execute_script("location.hash = '#/home'")
            wait_css(driver, "[data-testid=home-health]", 90)
            measure(driver, "home, after a scan, auto refresh off")


if __name__ == "__main__":
    main()
