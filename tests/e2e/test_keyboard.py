"""Every screen without a mouse (issue 20): in each area, reached by its keys, Tab walks through
every control shown (buttons, fields, links, each table's one tab stop: its rows and cells are
reached with the arrow keys) and each shows where the focus is; a dialog opened by its keys
keeps the focus inside it, and Escape closes it and gives the focus back."""

import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from conftest import screenshot
from test_profiles import wait_css

AREAS = [("1", "home"), ("2", "firmware"), ("3", "rollouts"), ("4", "downlinks"), ("5", "bindings"), ("6", "audit"), ("7", "settings")]

# The controls a keyboard user must reach, each tagged `data-kbd` for the walk. Inside a grid
# (roving tab stop) only its own tab stop counts; of a radio group, the checked radio.
TAG = """
const scope = document.querySelector(arguments[0]);
const closed = (e) => { const d = e.closest('details'); return d && !d.open && !e.closest('summary'); };
const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden' && !closed(e);
const SEL = 'a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';
const out = [];
let n = 0;
for (const e of scope.querySelectorAll(SEL)) {
  if (!shown(e) || e.closest('[inert]')) continue;
  const grid = e.closest('[role=grid]');
  if (grid && e !== grid && e.getAttribute('tabindex') !== '0') continue;
  if (e.type === 'radio' && !e.checked && e.form && [...e.form.elements].some((r) => r.name === e.name && r.checked)) continue;
  e.dataset.kbd = e.dataset.kbd || `k${Date.now().toString(36)}${n++}`;
  out.push({id: e.dataset.kbd, what: e.dataset.testid || e.id || e.getAttribute('aria-label') || e.textContent.trim().slice(0, 40) || e.tagName});
}
return out;
"""

# Where the focus is now, and whether it shows (an outline or a ring, on it or on the row it
# marks).
FOCUSED = """
const e = document.activeElement;
if (!e || e === document.body) return null;
const s = getComputedStyle(e);
const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
const row = e.querySelector && e.querySelector('.vt-focused');
const rowRing = row ? getComputedStyle(row).boxShadow !== 'none' : false;
// A date-time input's focus is on one of its parts, so the input never matches :focus-visible;
// its :focus ring (styles.css) is what shows it.
const fv = e.matches(':focus-visible') || (/^(date|time|datetime-local)$/.test(e.type || '') && e.matches(':focus'));
const dialog = document.querySelector('dialog[open]');
return {id: e.dataset.kbd || null, what: e.dataset.testid || e.id || e.tagName, visible: fv && (ring || rowRing),
        inDialog: !!dialog && dialog.contains(e),
        how: `focus-visible ${fv}, outline ${s.outlineStyle} ${s.outlineWidth}, shadow ${s.boxShadow}`};
"""


def settled_controls(d, scope: str) -> list[dict]:
    """The controls of `scope` once the screen stops changing them (a list that finishes loading
    re-renders its headers and rows as new elements): the same set twice, 0.5 s apart."""
    before = d.execute_script(TAG, scope)
    for _ in range(30):
        time.sleep(0.5)
        now = d.execute_script(TAG, scope)
        if [c["id"] for c in now] == [c["id"] for c in before]:
            return now
        before = now
    raise AssertionError(f"the controls of {scope} kept changing for 15 s")


def tab_walk(d, scope: str, limit: int) -> tuple[list[dict], list[dict]]:
    """Tab from the start of the page until the focus comes round again (or `limit` presses):
    the controls of `scope` and the stops reached."""
    wanted = settled_controls(d, scope)
    d.execute_script("document.activeElement && document.activeElement.blur()")
    stops = []
    for _ in range(limit):
        ActionChains(d).send_keys(Keys.TAB).perform()
        now = d.execute_script(FOCUSED)
        first = next((s["id"] for s in stops if s["id"]), None)
        if now and first and now["id"] == first:
            break
        if now:
            stops.append(now)
    return wanted, stops


def assert_reached(name: str, wanted: list[dict], stops: list[dict]):
    reached = {s["id"] for s in stops}
    missed = [w["what"] for w in wanted if w["id"] not in reached]
    assert not missed, f"{name}: Tab never reaches {missed}; it stops at {[s['what'] for s in stops]}"
    unseen = [f"{s['what']} ({s['how']})" for s in stops if not s["visible"]]
    assert not unseen, f"{name}: the focus does not show on {unseen}"


def test_every_area_is_walked_by_tab_and_dialogs_keep_the_focus(app, artifacts):
    d = app
    d.set_window_size(1200, 780)
    wait_css(d, "[data-testid=home]", 30)
    body = d.find_element(By.TAG_NAME, "body")
    for digit, area in AREAS:
        ActionChains(d).key_down(Keys.CONTROL).send_keys(digit).key_up(Keys.CONTROL).perform()
        WebDriverWait(d, 20).until(lambda x: x.find_element(By.CSS_SELECTOR, f"[data-testid=nav-{area}]").get_attribute("aria-current") == "page")
        # Loaded: its first list or card is there (a skeleton has no controls to reach yet).
        WebDriverWait(d, 30).until(lambda x: not x.find_elements(By.CSS_SELECTOR, "main .skeleton, main [aria-busy=true]"))
        wanted, stops = tab_walk(d, ".shell", 500)
        assert len(wanted) >= 8, f"{area}: only {[w['what'] for w in wanted]}"
        assert_reached(area, wanted, stops)
        print(f"{area}: {len(wanted)} controls, all reached by Tab in {len(stops)} stops")

    # A dialog opened by its keys: the focus starts in it, Tab stays in it, Escape gives it back.
    ActionChains(d).key_down(Keys.CONTROL).send_keys("4").key_up(Keys.CONTROL).perform()
    wait_css(d, "[data-testid=downlinks-table], [data-testid=downlinks]", 30)
    ActionChains(d).key_down(Keys.CONTROL).key_down(Keys.SHIFT).send_keys("d").key_up(Keys.SHIFT).key_up(Keys.CONTROL).perform()
    dialog = wait_css(d, "dialog[open]", 20)
    WebDriverWait(d, 10).until(lambda x: x.execute_script("return document.querySelector('dialog[open]').contains(document.activeElement)"))
    wanted, stops = tab_walk(d, "dialog[open]", 120)
    outside = [s["what"] for s in stops if not s["inDialog"]]
    assert not outside, f"Tab left the dialog for {outside}"
    assert_reached("the new downlink dialog", wanted, stops)
    screenshot(d, artifacts / "keyboard-dialog-focus.png")
    ActionChains(d).send_keys(Keys.ESCAPE).perform()
    WebDriverWait(d, 10).until(lambda x: not x.find_elements(By.CSS_SELECTOR, "dialog[open]"))
    del dialog, body
