"""The first screen (issue 16): a fresh start opens on Home, which says what to do first; once the
fleet is scanned from there, its counts per update status, devices, drift and failure reasons
equal what the simulator's service lists over HTTP, and each count opens the device table on it.
The area, the dashboard's tab, its filters and its sort are remembered: a second start of the
app on the same folders (the web view's storage in XDG_DATA_HOME) opens where the first left.
The device table shows 20 rows or more at 1200x780. Screenshots at 1200x780 and 900x560, light
and dark."""

import re
from collections import Counter

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import app_env, app_session, fresh_web_storage, screenshot, service
from test_downlinks import get, set_speed
from test_profiles import click, wait_css, wait_text
from test_rollouts import device_count, settle

STALE = (StaleElementReferenceException,)


def number(text: str) -> int:
    return int(re.sub(r"[^0-9]", "", text))


def all_states(base_url, token):
    """Every firmware state, straight from the service (pages of 100: both variants serve them)."""
    out, path = [], "/firmware/states?limit=100"
    while path:
        page = get(base_url, token, path)
        out.extend(page["items"])
        path = page.get("next")
        if path and path.startswith("http"):
            path = path[len(base_url) :]
    return out


def scan_from_home(d):
    """Starts the first scan from Home's first step and waits for the counts."""
    steps = WebDriverWait(d, 30, ignored_exceptions=STALE).until(
        lambda x: [s.get_attribute("data-step") for s in x.find_elements(By.CSS_SELECTOR, "[data-testid=home-step]")] or False
    )
    assert steps[0] == "scan", steps
    assert "package" in steps and "profile" in steps, steps
    click(d, "[data-testid=home-scan]")
    WebDriverWait(d, 120, ignored_exceptions=STALE).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=home-totals]"))


def shown_counts(d):
    def read(x):
        items = x.find_elements(By.CSS_SELECTOR, "[data-testid=home-status]")
        out = {i.get_attribute("data-status"): number(i.find_element(By.CSS_SELECTOR, "[data-testid=home-status-count]").get_attribute("innerText")) for i in items}
        return out or False

    return WebDriverWait(d, 20, ignored_exceptions=STALE).until(read)


# Rows of the device table wholly inside both the window and the table's scrolled area.
ROWS_IN_VIEW = """
const box = document.querySelector('[data-testid=device-table] .vt-scroll').getBoundingClientRect();
const rows = [...document.querySelectorAll('[data-testid=device-table] .vt-row')].filter((r) => {
  const b = r.getBoundingClientRect();
  return b.height > 0 && b.top >= Math.max(0, box.top) && b.bottom <= Math.min(innerHeight, box.bottom);
});
return {rows: rows.length, height: rows.length ? rows[0].getBoundingClientRect().height : 0,
        lines: rows.filter((r) => r.getBoundingClientRect().height > 30).length,
        doc_overflow_x: document.documentElement.scrollWidth - document.documentElement.clientWidth};
"""


def test_home_counts_equal_the_service_and_the_app_opens_where_it_was_left(display, tmp_path, artifacts, demo_key):
    env = app_env(tmp_path)
    web_data = fresh_web_storage(env)
    log = open(tmp_path / "tauri-driver.log", "w")

    with app_session(env, log) as d:
        d.set_window_size(1200, 780)
        # A first start opens on Home, first in the nav.
        wait_css(d, "[data-testid=home]", 30)
        assert wait_css(d, "main h1").text == "Home"
        nav = [a.get_attribute("data-testid") for a in d.find_elements(By.CSS_SELECTOR, ".nav [data-testid^=nav-]")]
        assert nav[0] == "nav-home", nav
        assert d.find_element(By.CSS_SELECTOR, "[data-testid=nav-home]").get_attribute("aria-current") == "page"
        assert "Not scanned yet" in wait_text(d, "[data-testid=home-refreshed]", "Not scanned yet", 20)
        screenshot(d, artifacts / "home-first-start.png")
        # (The dashboard's code is fetched only once Rollouts is about to be opened: test_first_screen.)

        # Devices stand still while Home is compared with the service.
        base_url, token = service(d, demo_key)
        set_speed(base_url, 0.001)
        settle(base_url)
        scan_from_home(d)
        states = all_states(base_url, token)
        by_status = Counter(s.get("firmwareUpdateStatus") or "none" for s in states)
        assert shown_counts(d) == dict(by_status)
        assert number(d.find_element(By.CSS_SELECTOR, "[data-testid=home-states]").text) == len(states)
        assert number(d.find_element(By.CSS_SELECTOR, "[data-testid=home-devices]").text) == len({s["deviceId"] for s in states})
        assert number(d.find_element(By.CSS_SELECTOR, "[data-testid=home-modules]").text) == len({s["moduleId"] for s in states})
        drift = sum(1 for s in states if s.get("targetFirmwareVersion") and s.get("currentFirmwareVersion") != s["targetFirmwareVersion"])
        assert number(d.find_element(By.CSS_SELECTOR, "[data-testid=home-drift-count]").text) == drift
        failed = [s for s in states if s.get("firmwareUpdateStatus") == "FAILED"]
        reasons = Counter(s.get("firmwareUpdateStatusDetails") or "(no details given)" for s in failed)
        rows = d.find_elements(By.CSS_SELECTOR, "[data-testid=home-failure]")
        assert len(rows) == min(8, len(reasons))
        for r in rows:
            reason, count = r.find_elements(By.CSS_SELECTOR, "td")[:2]
            assert reasons[reason.get_attribute("innerText").strip()] == number(count.text), r.text
        assert "Refreshed" in wait_text(d, "[data-testid=home-refreshed]", "Refreshed", 20)
        # Scanned: the first steps are gone (rollouts are set up on the simulator profile).
        assert not d.find_elements(By.CSS_SELECTOR, "[data-testid=home-step]")
        screenshot(d, artifacts / "home-1200x780-light.png")
        d.set_window_size(900, 560)
        assert d.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
        screenshot(d, artifacts / "home-900x560-light.png")
        d.set_window_size(1200, 780)

        # A count opens the device table on it: the failed states, as many as Home said.
        click(d, "[data-testid=home-status][data-status=FAILED]")
        shown, text = device_count(d, "status FAILED")
        assert shown == len(failed), text
        assert d.find_element(By.CSS_SELECTOR, "[data-testid=fleet-tab-devices]").get_attribute("aria-selected") == "true"
        # Sorted by when the status changed, newest first.
        header = next(h for h in d.find_elements(By.CSS_SELECTOR, "[data-testid=device-table] [role=columnheader]") if "Status since" in h.text)
        header.find_element(By.CSS_SELECTOR, "button").click()
        WebDriverWait(d, 10, ignored_exceptions=STALE).until(
            lambda x: next(h for h in x.find_elements(By.CSS_SELECTOR, "[data-testid=device-table] [role=columnheader]") if "Status since" in h.text).get_attribute("aria-sort") == "ascending"
        )
        header = next(h for h in d.find_elements(By.CSS_SELECTOR, "[data-testid=device-table] [role=columnheader]") if "Status since" in h.text)
        header.find_element(By.CSS_SELECTOR, "button").click()
        WebDriverWait(d, 10, ignored_exceptions=STALE).until(
            lambda x: next(h for h in x.find_elements(By.CSS_SELECTOR, "[data-testid=device-table] [role=columnheader]") if "Status since" in h.text).get_attribute("aria-sort") == "descending"
        )
        # The web view's storage is where the next start will read it.
        assert d.execute_script("return localStorage.getItem('dcs.ui.area')") == '"rollouts"'

    assert web_data.is_dir() and any(web_data.rglob("*")), f"nothing kept in {web_data}"

    # Started again on the same folders: the dashboard, its Devices tab, the filter and the sort.
    with app_session(env, log) as d:
        d.set_window_size(1200, 780)
        wait_css(d, "[data-testid=fleet-tab-devices][aria-selected=true]", 30)
        assert d.find_element(By.CSS_SELECTOR, "[data-testid=nav-rollouts]").get_attribute("aria-current") == "page"
        assert not d.find_elements(By.CSS_SELECTOR, "[data-testid=home]")
        assert Select(wait_css(d, "[data-testid=filter-status]")).first_selected_option.get_attribute("value") == "FAILED"
        # The app's simulator started again at its own speed, so devices may have moved since:
        # they stand still again, and the table's count follows the service's at its next refresh.
        base_url, token = service(d, demo_key)
        set_speed(base_url, 0.001)
        settle(base_url)
        failed = [s for s in all_states(base_url, token) if s.get("firmwareUpdateStatus") == "FAILED"]
        WebDriverWait(d, 60, ignored_exceptions=STALE).until(lambda x: device_count(x, "status FAILED", 30)[0] == len(failed))
        header = WebDriverWait(d, 20, ignored_exceptions=STALE).until(
            lambda x: next((h for h in x.find_elements(By.CSS_SELECTOR, "[data-testid=device-table] [role=columnheader]") if "Status since" in h.text), False)
        )
        assert header.get_attribute("aria-sort") == "descending"
        # Back to Home: the next start opens there.
        click(d, "[data-testid=nav-home]")
        wait_css(d, "[data-testid=home-totals]", 30)
        assert d.execute_script("return localStorage.getItem('dcs.ui.area')") == '"home"'
    log.close()


@pytest.mark.parametrize("app", [{"GTK_THEME": "Adwaita:dark"}, {"GTK_THEME": "Adwaita"}], indirect=True, ids=["dark", "light"])
def test_the_device_table_shows_twenty_rows_at_1200x780(app, demo_key, artifacts):
    d = app
    theme = "dark" if d.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches") else "light"
    d.set_window_size(1200, 780)
    wait_css(d, "[data-testid=home]", 30)
    scan_from_home(d)
    screenshot(d, artifacts / f"home-1200x780-{theme}.png")
    d.set_window_size(900, 560)
    screenshot(d, artifacts / f"home-900x560-{theme}.png")
    d.set_window_size(1200, 780)

    click(d, "[data-testid=nav-rollouts]")
    click(d, "[data-testid=fleet-tab-devices]")
    device_count(d, "every device", 30)
    WebDriverWait(d, 20, ignored_exceptions=STALE).until(
        lambda x: len([r for r in x.find_elements(By.CSS_SELECTOR, "[data-testid=device-table] [data-key]")]) >= 20
    )
    # Device names come in from the service's device list.
    WebDriverWait(d, 20, ignored_exceptions=STALE).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=device-table] [data-testid=device-name]"))
    screenshot(d, artifacts / f"devices-1200x780-{theme}.png")
    m = d.execute_script(ROWS_IN_VIEW)
    assert m["rows"] >= 20, m
    assert m["lines"] == 0 and m["height"] <= 26, m
    assert m["doc_overflow_x"] <= 0, m
    d.set_window_size(900, 560)
    screenshot(d, artifacts / f"devices-900x560-{theme}.png")
    small = d.execute_script(ROWS_IN_VIEW)
    assert small["rows"] >= 5 and small["doc_overflow_x"] <= 0, small
    print("device table rows in view:", {"1200x780": m["rows"], "900x560": small["rows"]})

    # The overview and the history, looked at in both sizes; a chart answers the pointer.
    d.set_window_size(1200, 780)
    click(d, "[data-testid=fleet-tab-overview]")
    wait_css(d, "[data-testid=chart-version] canvas", 20)
    kpis = d.execute_script("return [...document.querySelectorAll('.kpi')].map(k => Math.round(k.getBoundingClientRect().top))")
    assert len(kpis) == 5 and len(set(kpis)) == 1, f"the five figures on one row at 1200 px: {kpis}"
    health = d.find_elements(By.CSS_SELECTOR, "[data-testid=module-health]")
    assert health and all(re.search(r"(failed|updating|not on target|settled)", h.text) for h in health), [h.text for h in health]
    canvas = d.find_element(By.CSS_SELECTOR, "[data-testid=bars-version] canvas")
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(d).move_to_element_with_offset(canvas, 0, -int(canvas.size["height"] / 2) + 20).perform()
    screenshot(d, artifacts / f"overview-1200x780-{theme}.png")
    d.execute_script("document.querySelector('main').scrollTop = 400")
    screenshot(d, artifacts / f"overview-scrolled-1200x780-{theme}.png")
    # The module list stays in view while the overview scrolls.
    top = d.execute_script("return document.querySelector('[data-testid=module-list]').getBoundingClientRect().top")
    assert 0 <= top < 200, top
    d.set_window_size(900, 560)
    d.execute_script("document.querySelector('main').scrollTop = 0")
    screenshot(d, artifacts / f"overview-900x560-{theme}.png")
    d.set_window_size(1200, 780)
    click(d, "[data-testid=fleet-tab-history]")
    caption = wait_text(d, "[data-testid=history-caption]", "snapshots", 20)
    title = d.find_element(By.CSS_SELECTOR, "[data-testid=history-chart] h3").text
    # A fleet scanned seconds ago has seconds of history: the title says so, not "Last 24 hours".
    assert "all there is so far" in title or "one snapshot" in title, (title, caption)
    screenshot(d, artifacts / f"history-1200x780-{theme}.png")
    d.set_window_size(900, 560)
    screenshot(d, artifacts / f"history-900x560-{theme}.png")
