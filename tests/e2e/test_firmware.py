"""The firmware workspace on the app's own simulator: specifications, modules and packages
browsed and filtered exactly as the service holds them; a package's description changed and a
package deleted, each after a confirmation, and checked over HTTP."""

import json
import urllib.request

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import open_firmware, screenshot, service, service_get_as
from test_profiles import click, type_into, wait_css, wait_text

# Lists re-render while they load; an element found a moment ago may be gone: look again.
STALE = (StaleElementReferenceException,)


def all_items(base_url, token, path):
    items = []
    while path:
        status, page = service_get_as(base_url, path, token, None)
        assert status == 200, page
        items += page["items"]
        path = page.get("next")
        if path and path.startswith("http"):
            path = path[len(base_url) :]
    return items


def send(base_url, token, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base_url + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=10) as res:
        raw = res.read()
        return json.loads(raw) if raw else None


def package_rows(driver):
    def loaded(d):
        # The first page is in once no loading state shows outside the "more" row at the end.
        if d.execute_script("return [...document.querySelectorAll('[data-testid=loading]')].some(e => !e.closest('.sentinel'))"):
            return False
        return [r.get_attribute("data-id") for r in d.find_elements(By.CSS_SELECTOR, "[data-testid=package-row]")] or False

    try:
        return WebDriverWait(driver, 30, ignored_exceptions=STALE).until(loaded)
    except Exception:
        print("BODY:", driver.execute_script("return document.body.innerText"))
        raise


def test_browse_filter_edit_and_delete_packages(app, demo_key, artifacts):
    open_firmware(app)
    base_url, token = service(app, demo_key)

    # Device specifications: every specification that has modules, named from its packages.
    modules = all_items(base_url, token, "/firmware/modules?limit=100")
    click(app, "[data-testid=tab-specifications]")
    rows = WebDriverWait(app, 30, ignored_exceptions=STALE).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=spec-row]"))
    assert len(rows) == len({m["deviceSpecificationId"] for m in modules})
    screenshot(app, artifacts / "firmware-specifications.png")

    # Packages of one module of one specification, newest first: exactly the service's.
    module = sorted(modules, key=lambda m: m["name"])[0]
    click(app, "[data-testid=tab-packages]")
    package_rows(app)
    Select(wait_css(app, "[data-testid=filter-spec]")).select_by_value(module["deviceSpecificationId"])
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(
        lambda d: any(o.get_attribute("value") == module["id"] for o in d.find_elements(By.CSS_SELECTOR, "[data-testid=filter-module] option"))
    )
    Select(app.find_element(By.CSS_SELECTOR, "[data-testid=filter-module]")).select_by_value(module["id"])
    held = all_items(base_url, token, f"/firmware/packages?moduleId={module['id']}&sort=-createdAt&limit=100")
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: package_rows(d) == [p["id"] for p in held])
    assert module["name"] in app.find_element(By.CSS_SELECTOR, "[data-testid=package-row]").get_attribute("textContent")
    screenshot(app, artifacts / "firmware-packages.png")

    # A package made for this test, so deleting it disturbs nothing else.
    extra = send(
        base_url,
        token,
        "POST",
        "/firmware/packages",
        {"deviceSpecificationId": module["deviceSpecificationId"], "moduleId": module["id"], "firmwareVersion": "0.0.1-e2e"},
    )
    click(app, "[data-testid=tab-modules]")
    click(app, "[data-testid=tab-packages]")
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: extra["id"] in package_rows(d))

    # Edit the description: the fixed fields say why; a bad value is named inline.
    # The row by selector, looked up on every attempt: the list reloads after a write.
    extra_row = f"[data-testid=package-row][data-id='{extra['id']}']"
    click(app, "[data-testid=edit-package]", extra_row)
    wait_text(app, "[data-testid=fixed-fields-why]", "only the description")
    type_into(app, "description", "caf\u00e9 build")
    wait_text(app, "[data-testid=error-description]", "printable")
    type_into(app, "description", "Field trial build for the e2e test")
    WebDriverWait(app, 10, ignored_exceptions=STALE).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid=error-description]"))
    screenshot(app, artifacts / "firmware-edit-description.png")
    click(app, "[data-testid=save-description]")
    wait_text(app, "[data-testid=confirm-acting]", "your own environment")
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=firmware-notice]", "Saved the description")
    assert send(base_url, token, "GET", f"/firmware/packages/{extra['id']}")["description"] == "Field trial build for the e2e test"

    # Delete it, after a confirmation that says what goes.
    click(app, "[data-testid=delete-package]", extra_row)
    body = wait_text(app, "[data-testid=confirm-dialog]", "cannot be undone")
    assert "0.0.1-e2e" in body
    screenshot(app, artifacts / "firmware-delete-confirm.png")
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=firmware-notice]", "Deleted package 0.0.1-e2e")
    status, _ = service_get_as(base_url, f"/firmware/packages/{extra['id']}", token, None)
    assert status == 404
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: extra["id"] not in package_rows(d))
