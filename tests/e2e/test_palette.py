"""The command palette and the device page, in the real app on the built-in simulator: Ctrl+K
finds a device by its IMEI and opens its page (ids, firmware states, downlinks); the page's
items open their screens; the palette lists what was opened first next time, finds a module by
a fuzzy piece of its name, and does actions (a new downlink, a new package of the module chosen
next) by name and by their keys. A device in a table opens its page too."""

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from conftest import screenshot, service, service_get_as
from test_downlinks import rows, service_names
from test_profiles import wait_css


def chord(d, *keys):
    """Ctrl with `keys` (Shift among them where given)."""
    a = ActionChains(d).key_down(Keys.CONTROL)
    for k in keys[:-1]:
        a = a.key_down(k)
    a = a.send_keys(keys[-1])
    for k in keys[:-1]:
        a = a.key_up(k)
    a.key_up(Keys.CONTROL).perform()


def open_palette(d):
    chord(d, "k")
    field = wait_css(d, "[data-testid=palette-input]", 10)
    WebDriverWait(d, 10).until(lambda x: x.switch_to.active_element == field)
    return field


def options(d):
    return [(o.get_attribute("data-key"), o.get_attribute("textContent")) for o in d.find_elements(By.CSS_SELECTOR, "[data-testid=palette-option]")]


def first_option(d, key_prefix, timeout=30):
    """Waits until the first option's key starts with `key_prefix`; answers its key."""

    def first(x):
        found = options(x)
        return found[0][0] if found and found[0][0].startswith(key_prefix) else False

    return WebDriverWait(d, timeout).until(first)


def test_the_palette_finds_a_device_by_imei_and_opens_its_page(app, artifacts, demo_key):
    d = app
    d.set_window_size(1200, 780)
    wait_css(d, "[data-testid=home]", 30)
    base_url, token = service(d, demo_key)
    names = service_names(base_url, token)
    status, states = service_get_as(base_url, "/firmware/states?limit=200", token, None)
    assert status == 200, states
    imeis = {name: value for (form, value), name in names.items() if form == "imei"}
    uuid, imei = next(
        (s["deviceId"], imeis[names[("uuid", s["deviceId"])]]) for s in states["items"] if names.get(("uuid", s["deviceId"])) in imeis
    )
    name = names[("uuid", uuid)]

    # Ctrl+K, the IMEI typed: the device comes first, by name; Enter opens its page.
    field = open_palette(d)
    screenshot(d, artifacts / "palette-empty.png")
    field.send_keys(imei)
    assert first_option(d, "device:") == f"device:{uuid}"
    assert name in options(d)[0][1]
    screenshot(d, artifacts / "palette-device-by-imei.png")
    field.send_keys(Keys.ENTER)
    page = wait_css(d, f"[data-testid=device-view][data-uuid='{uuid}']", 30)
    assert d.find_element(By.CSS_SELECTOR, "[data-testid=device-title]").text == name
    ids = page.find_element(By.CSS_SELECTOR, "[data-testid=device-ids]").text
    assert uuid in ids and f"urn:dev:imei:{imei}" in ids
    modules = {s["moduleId"] for s in states["items"] if s["deviceId"] == uuid}
    WebDriverWait(d, 10).until(lambda x: len(x.find_elements(By.CSS_SELECTOR, "[data-testid=device-state]")) == len(modules))
    assert not d.find_elements(By.CSS_SELECTOR, "[data-testid=device-problem]")
    screenshot(d, artifacts / "device-page.png")

    # A downlink of the page opens in the Downlinks screen; Back is the area it came from.
    downlinks = d.find_elements(By.CSS_SELECTOR, "[data-testid=device-downlink] .link-button")
    if downlinks:
        downlinks[0].click()
        wait_css(d, "[data-testid=downlink-detail]", 30)
        assert d.find_element(By.CSS_SELECTOR, "[data-testid=nav-downlinks]").get_attribute("aria-current") == "page"
        d.find_element(By.CSS_SELECTOR, "[data-testid=downlink-detail] button[aria-label=Close]").click()

    # Next time, the device is the first recent item, before the actions.
    open_palette(d)
    assert first_option(d, "device:") == f"device:{uuid}"
    assert d.find_element(By.CSS_SELECTOR, ".palette-group").get_attribute("textContent") == "Recent"
    # A module by a fuzzy piece of its name (the first letters of its words).
    module = next(iter(modules))
    status, detail = service_get_as(base_url, f"/firmware/modules/{module}", token, None)
    assert status == 200, detail
    fuzzy = "".join(w[:3] for w in detail["name"].split())
    field = d.switch_to.active_element
    field.send_keys(fuzzy)
    WebDriverWait(d, 30).until(lambda x: any(k == f"module:{module}" for k, _ in options(x)))
    screenshot(d, artifacts / "palette-module-fuzzy.png")
    field.send_keys(Keys.ESCAPE)
    WebDriverWait(d, 10).until(lambda x: not x.find_elements(By.CSS_SELECTOR, "[data-testid=palette]"))

    # An action by name: a new downlink opens its composer.
    field = open_palette(d)
    field.send_keys("new down")
    assert first_option(d, "new-downlink", 10)
    field.send_keys(Keys.ENTER)
    composer = wait_css(d, "dialog[open][data-testid$=composer]", 20)
    composer.find_element(By.CSS_SELECTOR, "button[aria-label=Close]").click()

    # By its keys: a new package asks for the module first, then opens the form of that module.
    WebDriverWait(d, 10).until(lambda x: not x.find_elements(By.CSS_SELECTOR, "dialog[open]"))
    chord(d, Keys.SHIFT, "P")
    field = wait_css(d, "[data-testid=palette-input]", 10)
    WebDriverWait(d, 10).until(lambda x: "module" in x.find_element(By.CSS_SELECTOR, "#palette-title").get_attribute("textContent"))
    field.send_keys(fuzzy)
    assert first_option(d, "new-package:") == f"new-package:{module}"
    field.send_keys(Keys.ENTER)
    form = wait_css(d, "[data-testid=new-package-dialog]", 20)
    assert detail["name"] in form.text
    screenshot(d, artifacts / "palette-new-package.png")


def test_a_device_in_a_table_opens_its_page(app, artifacts):
    d = app
    wait_css(d, "[data-testid=home]", 30)
    d.find_element(By.CSS_SELECTOR, "[data-testid=nav-downlinks]").click()
    rows(d)
    row = wait_css(d, "[data-testid=downlink-row] [data-testid=device-label]", 30)
    uuid = WebDriverWait(d, 30).until(lambda _: row.get_attribute("data-uuid"))
    ActionChains(d).move_to_element(row).perform()
    row.find_element(By.CSS_SELECTOR, "[data-testid=open-device]").click()
    wait_css(d, f"[data-testid=device-view][data-uuid='{uuid}']", 30)
    WebDriverWait(d, 30).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=device-downlink]"))
    d.find_element(By.CSS_SELECTOR, "[data-testid=device-back]").click()
    wait_css(d, "[data-testid=downlink-row]", 30)
