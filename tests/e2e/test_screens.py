"""The tour (issue 16): every screen and the main dialogs at the minimum window (900x560) and at
1200x780, light and dark, in the real app on its own simulator.

At 1200x780 axe-core finds no serious or critical accessibility violation on any screen or
dialog, in either theme (contrast included). At 900x560 nothing scrolls sideways (the document,
the main area, a dialog's body), and every
dialog's main button is inside the window without scrolling. In a row of controls (filters, a
toolbar, a dialog's buttons) buttons, inputs and selects have one height. Each screen is saved
as a screenshot (artifacts/screens/), and the rows each list shows at 1200x780 are written to
artifacts/screens.json.
"""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import DCS, screenshot

SIZES = [(900, 560), (1200, 780)]
STALE = (StaleElementReferenceException,)

# Measured in the page: rows wholly inside the window, sideways overflow of the document, the
# main area and any open dialog's body, and rows of controls whose heights differ.
MEASURE = """
const vh = innerHeight, vw = innerWidth;
const shown = (e) => e.offsetParent !== null && e.getBoundingClientRect().height > 0;
const rows = [...document.querySelectorAll('main tbody tr:not(.sentinel):not(.row-detail), main .vt-row')].filter(shown);
const inView = rows.filter((r) => { const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= vh; });
const hs = inView.map((r) => r.getBoundingClientRect().height).sort((a, b) => a - b);
const doc = document.documentElement, main = document.querySelector('main');
const over = (e) => e.scrollWidth - e.clientWidth;
const dialogs = [...document.querySelectorAll('dialog[open] .dialog-scroll')];
const ROWS = '.filters, .view-head, .table-toolbar, .form-actions, .dialog-actions, .scanbar, .secret-input, .picker-row, .resume-row';
const CONTROLS = 'button.button, input:not([type=checkbox]):not([type=radio]):not([type=file]), select';
const uneven = [];
for (const row of document.querySelectorAll(ROWS)) {
  if (!shown(row)) continue;
  // Controls of this row itself (not of a row nested in it, nor of a table inside it).
  const own = [...row.querySelectorAll(CONTROLS)].filter((c) => shown(c) && c.closest(ROWS) === row && !c.closest('td, .vt-row'));
  const heights = [...new Set(own.map((c) => Math.round(c.getBoundingClientRect().height)))];
  if (heights.length > 1) uneven.push(`${row.className}: ${heights.join('/')} px (${own.map((c) => c.dataset.testid || c.tagName.toLowerCase()).join(', ')})`);
}
// Row actions cut off by their table's box (they must stay in view).
let actionsHidden = 0;
for (const wrap of document.querySelectorAll('main .table-wrap')) {
  if (!shown(wrap)) continue;
  const w = wrap.getBoundingClientRect();
  for (const btn of wrap.querySelectorAll('tbody .button')) {
    if (!shown(btn)) continue;
    const r = btn.getBoundingClientRect();
    if (r.bottom < w.top || r.top > w.bottom || r.top > vh) continue; // scrolled out vertically
    if (r.right > Math.min(w.right, vw) + 1 || r.left < w.left - 1) actionsHidden++;
  }
}
return {
  actions_hidden: actionsHidden,
  rows_loaded: rows.length,
  rows_visible: inView.length,
  row_height_median: hs.length ? hs[Math.floor(hs.length / 2)] : null,
  doc_overflow_x: over(doc),
  main_overflow_x: main ? over(main) : 0,
  dialog_overflow_x: dialogs.length ? Math.max(...dialogs.map(over)) : 0,
  uneven_rows: uneven,
};
"""

IN_VIEW = """
const e = arguments[0], b = e.getBoundingClientRect();
const at = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
return {top: b.top, bottom: b.bottom, left: b.left, right: b.right, vw: innerWidth, vh: innerHeight,
        inside: b.top >= 0 && b.left >= 0 && b.bottom <= innerHeight && b.right <= innerWidth,
        on_top: !!at && (at === e || e.contains(at))};
"""


def find(d, selector, timeout=30):
    return WebDriverWait(d, timeout, ignored_exceptions=STALE).until(
        lambda x: next((e for e in x.find_elements(By.CSS_SELECTOR, selector) if e.is_displayed()), False)
    )


def press(d, selector, timeout=30):
    """Clicks the first shown element (scrolled into view by script, as a user would scroll)."""

    def attempt(x):
        for e in x.find_elements(By.CSS_SELECTOR, selector):
            if e.is_displayed() and e.is_enabled():
                x.execute_script("arguments[0].scrollIntoView({block: 'nearest'})", e)
                e.click()
                return True
        return False

    WebDriverWait(d, timeout, ignored_exceptions=STALE).until(attempt)


def area(d, name):
    press(d, f"[data-testid=nav-{name}]")


def settle(d, seconds=0.4):
    time.sleep(seconds)


# axe-core (the UI's dev dependency, pinned in ui/package-lock.json), run in the page.
AXE = (Path(__file__).resolve().parents[2] / "ui" / "node_modules" / "axe-core" / "axe.min.js").read_text()


def axe_violations(d, impacts=("serious", "critical")):
    """axe-core's violations of `impacts` on the page as it is (a screen, or an open dialog over
    it), each with the first few elements it concerns."""
    if not d.execute_script("return !!window.axe"):
        d.execute_script(AXE)
    found = d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then("
        "  (r) => done(r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,"
        "    targets: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}))),"
        "  (e) => done([{id: 'axe-error', impact: 'critical', help: String(e), targets: []}]));"
    )
    return [v for v in found if v["impact"] in impacts]


class Tour:
    def __init__(self, driver, theme, folder):
        self.d, self.theme, self.folder = driver, theme, folder
        self.size = None
        self.results = {}
        self.problems = []

    def key(self, name):
        return f"{name}@{self.size[0]}x{self.size[1]}@{self.theme}"

    def record(self, name):
        m = self.d.execute_script(MEASURE)
        key = self.key(name)
        self.results[key] = m
        if self.size == (900, 560):
            for what in ("doc_overflow_x", "main_overflow_x", "dialog_overflow_x", "actions_hidden"):
                if m[what] > 0:
                    unit = "buttons cut off" if what == "actions_hidden" else "px"
                    self.problems.append(f"{key}: {what} {m[what]} {unit}")
        for row in m["uneven_rows"]:
            self.problems.append(f"{key}: controls of one row differ in height: {row}")
        if self.size == (1200, 780):
            for v in axe_violations(self.d):
                self.problems.append(f"{key}: axe {v['impact']} {v['id']} ({v['help']}): {v['targets']}")
        screenshot(self.d, self.folder / f"{key}.png")
        return m

    def primary_in_view(self, name, selector):
        el = find(self.d, selector)
        pos = self.d.execute_script(IN_VIEW, el)
        self.results[self.key(name)]["primary"] = pos
        if not (pos["inside"] and pos["on_top"]):
            self.problems.append(f"{self.key(name)}: main button {selector} not in view: {pos}")

    def dialog(self, name, opener, testid, primary):
        """Opens a dialog, measures it and its main button, closes it with its X."""
        opener()
        find(self.d, f"[data-testid={testid}]")
        settle(self.d, 0.6)
        self.record(name)
        self.primary_in_view(name, primary)
        press(self.d, f"[data-testid={testid}-x]")
        try:
            WebDriverWait(self.d, 5).until(lambda x: not x.find_elements(By.CSS_SELECTOR, f"dialog[open][data-testid={testid}]"))
        except TimeoutException:
            # The form counted as changed: discard (nothing was typed on the tour).
            press(self.d, "[data-testid=confirm-ok]")
            WebDriverWait(self.d, 5).until(lambda x: not x.find_elements(By.CSS_SELECTOR, f"dialog[open][data-testid={testid}]"))


def visit_all(t: Tour):
    d = t.d
    if d.find_elements(By.CSS_SELECTOR, "[data-testid=nav-home]"):
        area(d, "home")
        settle(d, 1.5)
        t.record("home")

    # Firmware
    area(d, "firmware")
    press(d, "[data-testid=tab-specifications]")
    settle(d, 1)
    t.record("firmware-specifications")
    press(d, "[data-testid=tab-modules]")
    # The app remembers the filters (the packages step sets one): every module, as on a first visit.
    for clear in d.find_elements(By.XPATH, "//*[@data-testid='filters']//button[normalize-space()='Clear filters']"):
        clear.click()
    find(d, "[data-testid=module-row]")
    settle(d)
    t.record("firmware-modules")
    t.dialog("dialog-new-package", lambda: press(d, "[data-testid=new-package]"), "new-package-dialog", "[data-testid=create-package]")
    t.dialog("dialog-module-detail", lambda: press(d, "[data-testid=module-details]"), "module-detail", "[data-testid=module-detail-close]")
    press(d, "[data-testid=show-packages]")
    find(d, "[data-testid=packages-table] tbody tr")
    settle(d, 1)
    t.record("firmware-packages")
    t.dialog("dialog-package-files", lambda: press(d, "[data-testid=package-files]"), "package-files-dialog", "[data-testid=close-files]")

    # Rollouts (the first visit scans the fleet)
    area(d, "rollouts")
    # The app remembers the last tab: start from the overview.
    press(d, "[data-testid=fleet-tab-overview]", 180)
    find(d, "[data-testid=module-item]", 180)
    settle(d, 1)
    t.record("rollouts-overview")
    press(d, "[data-testid=fleet-tab-devices]")
    Select(find(d, "[data-testid=filter-module]")).select_by_index(1)
    find(d, ".vt-row:not(.vt-placeholder)", 60)
    settle(d, 1)
    t.record("rollouts-devices")
    # A device's page, from its row, and back.
    press(d, ".vt-row:not(.vt-placeholder) [data-testid=open-device]")
    find(d, "[data-testid=device-state]", 60)
    settle(d, 1)
    t.record("device-page")
    press(d, "[data-testid=device-back]")
    press(d, "[data-testid=fleet-tab-history]")
    settle(d, 1.5)
    t.record("rollouts-history")
    # Two moments compared: the first scan with now.
    press(d, "[data-testid=compare-run]")
    find(d, "[data-testid=compare-result]", 60)
    d.execute_script("document.querySelector('[data-testid=compare-result]').scrollIntoView({block: 'end'})")
    settle(d, 0.5)
    t.record("rollouts-history-compare")
    press(d, "[data-testid=fleet-tab-rollouts]")
    settle(d, 1)
    t.record("rollouts-rollouts")
    if d.find_elements(By.CSS_SELECTOR, "[data-testid=new-rollout]"):
        t.dialog("dialog-rollout-wizard", lambda: press(d, "[data-testid=new-rollout]"), "rollout-wizard", "[data-testid=wizard-start]")

    # Downlinks: each kind's list; the actuator, beta and one connection-specific composer
    area(d, "downlinks")
    find(d, "[data-testid^=kind-]")
    kinds = [e.get_attribute("data-testid") for e in d.find_elements(By.CSS_SELECTOR, "[data-testid^=kind-]")]
    for kind in kinds:
        press(d, f"[data-testid={kind}]")
        settle(d, 1.5)
        t.record(f"downlinks-{kind[5:]}")
        if kind == "kind-actuator":
            t.dialog("dialog-actuator-composer", lambda: press(d, "[data-testid=new-downlink]"), "actuator-composer", "[data-testid=send-downlink]")
            t.dialog("dialog-beta-composer", lambda: press(d, "[data-testid=new-beta-downlink]"), "beta-composer", "[data-testid=send-beta-downlink]")
        elif kind in ("kind-lora", "kind-http"):
            t.dialog(
                f"dialog-connection-composer-{kind[5:]}",
                lambda: press(d, "[data-testid=new-downlink]"),
                "connection-composer",
                "[data-testid=send-connection-downlink]",
            )

    # Bindings: each kind with its editor
    area(d, "bindings")
    find(d, "[data-testid^=kind-]")
    kinds = [e.get_attribute("data-testid") for e in d.find_elements(By.CSS_SELECTOR, "[data-testid^=kind-]")]
    for kind in kinds:
        press(d, f"[data-testid={kind}]")
        settle(d, 1.5)
        t.record(f"bindings-{kind[5:]}")
        t.dialog(f"dialog-binding-editor-{kind[5:]}", lambda: press(d, "[data-testid=new-binding]"), "binding-editor", "[data-testid=save-binding]")

    # The audit log (what the tour's app wrote, if anything) and the shared filters
    area(d, "audit")
    find(d, "[data-testid=audit-filters]")
    settle(d)
    t.record("audit")

    # Settings and the profile editor
    area(d, "settings")
    find(d, "[data-testid=profiles-table]")
    settle(d)
    t.record("settings")
    t.dialog("dialog-profile-editor", lambda: press(d, "[data-testid=add-profile]"), "profile-editor-dialog", "[data-testid=save-profile]")

    # The command palette, with the app's actions listed.
    palette = lambda: ActionChains(d).key_down(Keys.CONTROL).send_keys("k").key_up(Keys.CONTROL).perform()  # noqa: E731
    t.dialog("dialog-palette", palette, "palette", "[data-testid=palette-input]")


def seed_audit(data_dir: Path) -> None:
    """Writes made with `dcs` into the app's data folder, for the audit screen to show: a package
    with a long version, and one the service refuses (a version the module has)."""
    env = {**os.environ, "DCS_DATA_DIR": str(data_dir)}
    run = lambda *a: subprocess.run([str(DCS), *a], env=env, capture_output=True, text=True, timeout=120)  # noqa: E731
    module = json.loads(run("--json", "firmware", "modules", "list").stdout)[0]
    packages = json.loads(run("--json", "firmware", "packages", "list", "--module-id", module["id"]).stdout)
    ids = ["--module-id", module["id"], "--device-specification-id", module["deviceSpecificationId"]]
    for version in ("10.20.30-release-candidate.2026-11-27.build.123456789", packages[0]["firmwareVersion"]):
        run("firmware", "packages", "create", *ids, "--firmware-version", version)


@pytest.mark.parametrize(
    "app,theme",
    [({"GTK_THEME": "Adwaita"}, "light"), ({"GTK_THEME": "Adwaita:dark"}, "dark")],
    indirect=["app"],
    ids=["light", "dark"],
)
def test_every_screen_at_both_sizes(app, theme, artifacts, tmp_path):
    d = app
    seed_audit(Path(os.environ.get("DCS_DATA_DIR", tmp_path / "app-data")))
    assert d.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches") == (theme == "dark")
    folder = artifacts / "screens"
    folder.mkdir(parents=True, exist_ok=True)
    tour = Tour(d, theme, folder)
    # The accessibility check works in this web view: a button with no name is reported.
    d.execute_script("const b = document.createElement('button'); b.id = 'axe-probe'; document.body.append(b);")
    assert any(v["id"] == "button-name" for v in axe_violations(d)), "axe-core found nothing wrong with a nameless button"
    d.execute_script("document.getElementById('axe-probe').remove()")
    for size in SIZES:
        d.set_window_size(*size)
        settle(d, 0.5)
        tour.size = size
        got = d.execute_script("return [innerWidth, innerHeight]")
        assert abs(got[0] - size[0]) <= 2 and abs(got[1] - size[1]) <= 40, got
        visit_all(tour)

    out = artifacts / "screens.json"
    saved = json.loads(out.read_text()) if out.exists() else {}
    saved[theme] = tour.results
    saved[f"rows_visible_1200x780_{theme}"] = {
        k.split("@")[0]: f"{v['rows_visible']} of {v['rows_loaded']} loaded"
        for k, v in tour.results.items()
        if "@1200x780@" in k and v["rows_loaded"] and not k.startswith(("dialog-", "profile-editor"))
    }
    out.write_text(json.dumps(saved, indent=1, sort_keys=True))

    assert not tour.problems, "\n" + "\n".join(tour.problems)
    # Every list shows rows at both sizes (the device table showed none at 900x560).
    for k, v in tour.results.items():
        if k.startswith(("firmware-modules", "firmware-packages", "rollouts-devices")):
            assert v["rows_visible"] > 0, (k, v)
