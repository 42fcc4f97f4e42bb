"""State reaches the web view as pushes from Rust, never by a UI timer asking (issue 17): an idle
Home or Rollouts dashboard calls no command at all, and a scan's progress and end reach the
dashboard without the UI asking for the status. Counted with the opt-in IPC recorder."""

import time

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import ipc_calls as calls, record_ipc
from test_profiles import wait_css

STALE = (StaleElementReferenceException,)
IDLE = 10


def idle_calls(driver, seconds=IDLE) -> list[str]:
    """The commands called while the screen is left alone for `seconds`."""
    before = len(calls(driver))
    time.sleep(seconds)
    return calls(driver)[before:]


def test_idle_screens_ask_nothing_and_a_scan_is_pushed(app):
    wait_css(app, "[data-testid=home]", 60)
    record_ipc(app, "#/home")
    wait_css(app, "[data-testid=home]", 60)
    time.sleep(2)
    assert idle_calls(app) == [], "Home asked Rust while nothing happened"

    # The dashboard's first opening scans; its progress and end arrive without a status asked.
    before = len(calls(app))
    app.execute_script("location.hash = '#/rollouts'")
    WebDriverWait(app, 120, ignored_exceptions=STALE).until(
        lambda d: "Last full scan" in "".join(e.text for e in d.find_elements(By.CSS_SELECTOR, "[data-testid=scan-last]"))
    )
    time.sleep(1)  # the recorder notes a call once its answer is read
    opening = calls(app)[before:]
    assert opening.count("fleetStatus") <= 1 and opening.count("fleetScan") == 1, opening
    box = wait_css(app, "[data-testid=auto-refresh]", 60)
    if box.is_selected():
        box.click()
    WebDriverWait(app, 10).until(lambda d: not d.find_element(By.CSS_SELECTOR, "[data-testid=auto-refresh]").is_selected())
    time.sleep(2)
    assert idle_calls(app) == [], "the dashboard asked Rust while nothing happened"

    # A scan asked for: its answer shows it under way, later pushes show it ended.
    before = len(calls(app))
    when = "[data-testid=scan-last] time"
    last = app.find_element(By.CSS_SELECTOR, when).get_attribute("datetime")
    wait_css(app, "[data-testid=scan-full]", 60).click()
    WebDriverWait(app, 120, ignored_exceptions=STALE).until(
        lambda d: (e := d.find_elements(By.CSS_SELECTOR, when)) and e[0].get_attribute("datetime") != last
    )
    during = calls(app)[before:]
    assert during.count("fleetScan") == 1 and "fleetStatus" not in during, during
