"""Connector bindings on the app's own simulator: for LoRa, HTTP and MQTT a binding is created for
a device of that kind that had none (a bad value named inline first), edited with a full PUT that
keeps the stored secret, and checked over HTTP; a secret is revealed and equals the service's; a
LoRa binding is synced from the network server; one binding is deleted after a confirmation."""

import hashlib
import json
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import VARIANT, open_firmware, screenshot, service, service_get_as
from test_firmware import all_items
from test_profiles import click, type_into, wait_css, wait_text

STALE = (StaleElementReferenceException,)


def get(base_url, token, path):
    status, body = service_get_as(base_url, path, token, None)
    return status, body


def unbound_device(base_url, token, kind, prefer=None):
    """A device of `kind` (found among the kind's connection downlinks, whose devices use that
    connection) with no binding of that kind (the binding list filtered by the device is empty)."""
    seen = []
    for d in all_items(base_url, token, f"/{kind}/downlinks?limit=100"):
        if d["deviceId"] not in seen:
            seen.append(d["deviceId"])
    free = []
    for device in seen:
        status, page = get(base_url, token, f"/{kind}/bindings?deviceId={urllib.parse.quote(device)}")
        assert status == 200, page
        if not page["items"]:
            free.append(device)
    assert free, f"every {kind} device of the downlinks is bound: {seen}"
    preferred = [d for d in free if prefer and prefer(d)]
    return (preferred or free)[0]


def joins(urn):
    """A-65: a LoRa device joins unless the first byte of its DevEUI's SHA-256 is a multiple of 4."""
    deveui = urn.rstrip(":").rsplit(":", 1)[-1].lower()
    return hashlib.sha256(deveui.encode()).digest()[0] % 4 != 0


def binding_of(base_url, token, kind, device):
    status, page = get(base_url, token, f"/{kind}/bindings?deviceId={urllib.parse.quote(device)}")
    assert status == 200, page
    assert len(page["items"]) == 1, page
    return page["items"][0]


def table_rows(driver):
    """Ids of the bindings on screen once the first page is in."""

    def loaded(d):
        if d.execute_script("return [...document.querySelectorAll('[data-testid=loading]')].some(e => !e.closest('.sentinel'))"):
            return False
        errors = d.find_elements(By.CSS_SELECTOR, "[data-testid=error]")
        if errors:
            raise AssertionError("the app shows an error: " + errors[0].text)
        return [r.get_attribute("data-id") for r in d.find_elements(By.CSS_SELECTOR, "[data-testid=binding-row]")] or False

    return WebDriverWait(driver, 30, ignored_exceptions=STALE).until(loaded)


def row_css(binding_id):
    """The binding's row as a selector: what `click` looks up again on every attempt, so a list
    that reloads after a save does not leave it holding a stale row."""
    return f"[data-testid=binding-row][data-id='{binding_id}']"


def row(driver, binding_id):
    return WebDriverWait(driver, 20, ignored_exceptions=STALE).until(
        lambda d: d.find_element(By.CSS_SELECTOR, row_css(binding_id))
    )


def show_device(driver, device):
    """Narrows the list to one device with the device filter."""
    type_into(driver, "bindings-deviceId-filter", device)
    driver.find_element(By.ID, "bindings-deviceId-filter").send_keys(Keys.ENTER)


def refused_until_typed_again(driver, base_url, token, kind, binding, field):
    """The alt service never sends a secret back (A-61 alt): an edit with the secret left empty
    has nothing to keep, so the app refuses it before any write, naming the field, without a
    confirmation of a change that cannot happen; the service's binding is unchanged."""
    assert driver.find_element(By.ID, field).get_attribute("placeholder") == "not sent by the service; type it again"
    click(driver, "[data-testid=save-binding]")
    wait_text(driver, f"[data-testid=error-{field}]", "did not send the stored secret back, so it cannot be kept: type it again")
    assert not driver.find_elements(By.CSS_SELECTOR, "[data-testid=confirm-dialog]")
    status, held = get(base_url, token, f"/{kind}/bindings/{binding['id']}")
    assert status == 200 and held["modifiedAt"] == binding["modifiedAt"], held


def reveal_and_copy(driver, binding_id, secret, artifacts):
    """Reveal: masked until asked, then exactly the service's secret; Copy says it copied."""
    WebDriverWait(driver, 10, ignored_exceptions=STALE).until(
        lambda d: "\u2022" in row(d, binding_id).find_element(By.CSS_SELECTOR, "[data-testid=secret-value]").text
    )
    screenshot(driver, artifacts / "bindings-secret-masked.png")
    click(driver, "[data-testid=reveal-secret]", row_css(binding_id))
    WebDriverWait(driver, 10, ignored_exceptions=STALE).until(
        lambda d: row(d, binding_id).find_element(By.CSS_SELECTOR, "[data-testid=secret-value]").text == secret
    )
    screenshot(driver, artifacts / "bindings-secret-revealed.png")
    click(driver, "[data-testid=copy-secret]", row_css(binding_id))
    wait_text(driver, "[data-testid=secret-note]", "Copied")


def confirm(driver, expect):
    body = wait_text(driver, "[data-testid=confirm-dialog]", expect)
    wait_text(driver, "[data-testid=confirm-acting]", "your own environment")
    return body


def test_bindings_of_each_kind_created_edited_revealed_synced_and_deleted(app, demo_key, artifacts):
    run(app, demo_key, artifacts)


def run(app, demo_key, artifacts):
    open_firmware(app)
    base_url, token = service(app, demo_key)
    # Simulated time runs fast, so a LoRa device joins (1 to 5 simulated minutes) within the test.
    req = urllib.request.Request(
        base_url + "/_sim/clock", data=json.dumps({"speed": 600}).encode(), method="PUT", headers={"Content-Type": "application/json"}
    )
    urllib.request.urlopen(req, timeout=10).close()

    lora_device = unbound_device(base_url, token, "lora", prefer=joins)
    http_device = unbound_device(base_url, token, "http")
    mqtt_device = unbound_device(base_url, token, "mqtt")

    click(app, "[data-testid=nav-bindings]")
    wait_text(app, "main h1", "Bindings")

    # ---- LoRa: the list is the service's, newest first, with no key on the page.
    held = all_items(base_url, token, "/lora/bindings?sort=-createdAt&limit=100")
    on_screen = table_rows(app)
    assert on_screen == [b["id"] for b in held[: len(on_screen)]]
    page_text = app.find_element(By.CSS_SELECTOR, "[data-testid=bindings-table]").text
    if VARIANT == "alt":
        # The alt service never sends secrets (A-61 alt): the app says so instead of a mask.
        assert not any("appKey" in b for b in held), held[:1]
        assert len(app.find_elements(By.CSS_SELECTOR, "[data-testid=no-secret]")) == len(on_screen)
        assert not app.find_elements(By.CSS_SELECTOR, "[data-testid=stored-secret]")
    else:
        assert all(b["appKey"] not in page_text for b in held[: len(on_screen)])
        assert app.find_element(By.CSS_SELECTOR, "[data-testid=stored-secret]").get_attribute("data-state") == "masked"
    screenshot(app, artifacts / "bindings-lora-list.png")

    # Create: a 15-hex application server id is named inline, nothing typed is lost.
    click(app, "[data-testid=new-binding]")
    wait_css(app, "[data-testid=binding-editor]")
    type_into(app, "deviceId", lora_device)
    asid, key = secrets.token_hex(8), secrets.token_hex(16)
    type_into(app, "applicationServerId", asid[:15])
    type_into(app, "appKey", key)
    wait_text(app, "[data-testid=error-applicationServerId]", "exactly 16 hex characters")
    screenshot(app, artifacts / "bindings-editor-inline-error.png")
    type_into(app, "applicationServerId", asid)
    WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid^=error-]"))
    assert app.find_element(By.ID, "appKey").get_attribute("type") == "password", "the key is masked while typed"
    click(app, "[data-testid=save-binding]")
    confirm(app, "INVENTORY")
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=bindings-notice]", "Created the LoRa binding")
    made = binding_of(base_url, token, "lora", lora_device)
    if VARIANT == "alt":
        # No secret in the answer, and no status while INVENTORY (A-61, A-64 alt).
        assert (made["applicationServerId"], "appKey" in made, "status" in made) == (asid, False, False), made
    else:
        assert (made["applicationServerId"], made["appKey"], made["status"]) == (asid, key, "INVENTORY")

    # Edit (a full PUT) of the application server only: the key is kept without retyping it,
    # and the confirmation says the device must join again.
    show_device(app, made["deviceId"])
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: table_rows(d) == [made["id"]])
    click(app, "[data-testid=edit-binding]", row_css(made["id"]))
    asid2 = secrets.token_hex(8)
    type_into(app, "applicationServerId", asid2)
    if VARIANT == "alt":
        refused_until_typed_again(app, base_url, token, "lora", made, "appKey")
        type_into(app, "appKey", key)
        WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid^=error-]"))
    else:
        assert app.find_element(By.ID, "appKey").get_attribute("placeholder") == "stored; type to replace"
    screenshot(app, artifacts / "bindings-lora-edit.png")
    click(app, "[data-testid=save-binding]")
    body = confirm(app, "Disruptive")
    assert "INVENTORY" in body and ("replaces the app key" if VARIANT == "alt" else "keeps the stored app key") in body
    screenshot(app, artifacts / "bindings-edit-disruptive-confirm.png")
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=bindings-notice]", "Saved the LoRa binding")
    edited = binding_of(base_url, token, "lora", lora_device)
    if VARIANT == "alt":
        assert (edited["id"], edited["applicationServerId"], "appKey" in edited) == (made["id"], asid2, False), edited
        # Nothing to reveal or copy: the row says the service did not send it.
        WebDriverWait(app, 10, ignored_exceptions=STALE).until(
            lambda d: row(d, made["id"]).find_element(By.CSS_SELECTOR, "[data-testid=no-secret]").text == "not sent by the service"
        )
    else:
        assert (edited["id"], edited["applicationServerId"], edited["appKey"]) == (made["id"], asid2, key)
        reveal_and_copy(app, made["id"], edited["appKey"], artifacts)

    # Sync from the network server: the status shown is the service's afterwards.
    click(app, "[data-testid=sync-binding]", row_css(made["id"]))
    confirm(app, "network server")
    click(app, "[data-testid=confirm-ok]")
    notice = wait_text(app, "[data-testid=bindings-notice]", "Synced device", 20)
    status, synced = get(base_url, token, f"/lora/bindings/{made['id']}")
    assert status == 200
    assert synced["status"] in notice
    if joins(lora_device):
        assert synced["status"] == "ACTIVE", synced
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(
        lambda d: row(d, made["id"]).find_element(By.CSS_SELECTOR, "[data-testid=binding-status]").text == synced["status"]
    )
    screenshot(app, artifacts / "bindings-lora-synced.png")

    # ---- HTTP: the shared secret's rule is not in the reference, so the client sends a short one
    # and the service's refusal is shown beside the field, the form kept; then the generator's passes.
    click(app, "[data-testid=kind-http]")
    table_rows(app)
    Select(wait_css(app, "[data-testid=filter-type]")).select_by_value("http-senml")
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(
        lambda d: table_rows(d)
        and all(c.get_attribute("textContent") == "http-senml" for c in d.find_elements(By.CSS_SELECTOR, "[data-testid=binding-type]"))
    )
    screenshot(app, artifacts / "bindings-http-list.png")
    click(app, "[data-testid=new-binding]")
    type_into(app, "deviceId", http_device)
    Select(wait_css(app, "#type")).select_by_value("http-senml")
    type_into(app, "sharedSecret", "too-short")
    time.sleep(0.5)
    assert not app.find_elements(By.CSS_SELECTOR, "[data-testid=error-sharedSecret]")
    click(app, "[data-testid=save-binding]")
    confirm(app, "http-senml")
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=error-sharedSecret]", "16 to 64 characters")
    assert app.find_element(By.ID, "sharedSecret").get_attribute("value") == "too-short"
    status, page = get(base_url, token, f"/http/bindings?deviceId={urllib.parse.quote(http_device)}")
    assert (status, page["items"]) == (200, []), page
    screenshot(app, artifacts / "bindings-http-refused-by-service.png")
    click(app, "[data-testid=generate-secret]")
    WebDriverWait(app, 10).until(lambda d: len(d.find_element(By.ID, "sharedSecret").get_attribute("value")) == 32)
    http_secret = app.find_element(By.ID, "sharedSecret").get_attribute("value")
    WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid^=error-]"))
    click(app, "[data-testid=save-binding]")
    confirm(app, "http-senml")
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=bindings-notice]", "Created the HTTP binding")
    hb = binding_of(base_url, token, "http", http_device)
    assert (hb["type"], hb.get("sharedSecret")) == ("http-senml", None if VARIANT == "alt" else http_secret), hb

    # Edit the type only: the secret stays, and a new type is not disruptive.
    Select(wait_css(app, "[data-testid=filter-type]")).select_by_value("")
    show_device(app, hb["deviceId"])
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: table_rows(d) == [hb["id"]])
    click(app, "[data-testid=edit-binding]", row_css(hb["id"]))
    Select(wait_css(app, "#type")).select_by_value("http-streamline")
    if VARIANT == "alt":
        # Without the secret sent back, keeping it means typing it again; the app cannot know it is
        # the same one, so the confirmation says it is replaced, and that this disrupts the device.
        refused_until_typed_again(app, base_url, token, "http", hb, "sharedSecret")
        type_into(app, "sharedSecret", http_secret)
        WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid^=error-]"))
    click(app, "[data-testid=save-binding]")
    body = confirm(app, "changes the type to http-streamline")
    if VARIANT == "alt":
        assert "replaces the shared secret" in body and "Disruptive" in body, body
    else:
        assert "Disruptive" not in body
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=bindings-notice]", "Saved the HTTP binding")
    hb2 = binding_of(base_url, token, "http", http_device)
    assert (hb2["type"], hb2.get("sharedSecret")) == ("http-streamline", None if VARIANT == "alt" else http_secret), hb2

    # ---- MQTT: a weak password is named inline; the generator makes one that meets the rule.
    click(app, "[data-testid=kind-mqtt]")
    table_rows(app)
    screenshot(app, artifacts / "bindings-mqtt-list.png")
    click(app, "[data-testid=new-binding]")
    type_into(app, "deviceId", mqtt_device)
    type_into(app, "password", "password123")
    wait_text(app, "[data-testid=error-password]", "an upper-case letter")
    screenshot(app, artifacts / "bindings-mqtt-weak-password.png")
    click(app, "[data-testid=generate-secret]")
    WebDriverWait(app, 10).until(lambda d: len(d.find_element(By.ID, "password").get_attribute("value")) == 28)
    password = app.find_element(By.ID, "password").get_attribute("value")
    WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid^=error-]"))
    assert app.find_element(By.ID, "password").get_attribute("type") == "text", "a generated password is shown"
    screenshot(app, artifacts / "bindings-mqtt-generated.png")
    click(app, "[data-testid=save-binding]")
    confirm(app, "username")
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=bindings-notice]", "Created the MQTT binding")
    mb = binding_of(base_url, token, "mqtt", mqtt_device)
    assert mb.get("password") == (None if VARIANT == "alt" else password), mb
    assert mb["username"] == mqtt_device, "the service sets the username to the device URN (A-63)"

    # The username filter finds it; edit without retyping the password (a full PUT) keeps it.
    type_into(app, "bindings-username-filter", mb["username"])
    app.find_element(By.ID, "bindings-username-filter").send_keys(Keys.ENTER)
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: table_rows(d) == [mb["id"]])
    click(app, "[data-testid=edit-binding]", row_css(mb["id"]))
    if VARIANT == "alt":
        refused_until_typed_again(app, base_url, token, "mqtt", mb, "password")
        type_into(app, "password", password)
        WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid^=error-]"))
    click(app, "[data-testid=save-binding]")
    body = confirm(app, "replaces the password" if VARIANT == "alt" else "keeps the stored password")
    assert ("Disruptive" in body) == (VARIANT == "alt"), body
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=bindings-notice]", "Saved the MQTT binding")
    mb2 = binding_of(base_url, token, "mqtt", mqtt_device)
    assert mb2.get("password") == (None if VARIANT == "alt" else password) and mb2["modifiedAt"] != mb["modifiedAt"], mb2

    if VARIANT == "alt":
        # The list reloads after the save, so the row is read again until it settles.
        WebDriverWait(app, 10, ignored_exceptions=STALE).until(
            lambda d: row(d, mb["id"]).find_element(By.CSS_SELECTOR, "[data-testid=no-secret]").text
            == "not sent by the service"
        )
    else:
        # Reveal equals the service's password.
        click(app, "[data-testid=reveal-secret]", row_css(mb["id"]))
        WebDriverWait(app, 10, ignored_exceptions=STALE).until(
            lambda d: row(d, mb["id"]).find_element(By.CSS_SELECTOR, "[data-testid=secret-value]").text == password
        )

    # Delete after a confirmation that says the device is cut off and for whom.
    click(app, "[data-testid=delete-binding]", row_css(mb["id"]))
    body = confirm(app, "cannot be undone")
    assert "Disruptive" in body and mb["username"] in body
    screenshot(app, artifacts / "bindings-delete-confirm.png")
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=bindings-notice]", "Deleted the MQTT binding")
    status, _ = get(base_url, token, f"/mqtt/bindings/{mb['id']}")
    assert status == 404
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid=binding-row]"))


@pytest.mark.parametrize("app", [{"GTK_THEME": "Adwaita:dark"}], indirect=True)
def test_bindings_read_well_in_the_dark_theme(app, artifacts):
    open_firmware(app)
    click(app, "[data-testid=nav-bindings]")
    table_rows(app)
    if VARIANT == "alt":
        # No secrets come from the alt service (A-61 alt): nothing to reveal.
        wait_text(app, "[data-testid=no-secret]", "not sent by the service")
    else:
        click(app, "[data-testid=reveal-secret]")
        wait_css(app, "[data-testid=stored-secret][data-state=revealed]")
    screenshot(app, artifacts / "bindings-lora-list-dark.png")
    click(app, "[data-testid=edit-binding]")
    wait_css(app, "[data-testid=binding-editor]")
    type_into(app, "applicationServerId", "0011")
    wait_text(app, "[data-testid=error-applicationServerId]", "16 hex")
    screenshot(app, artifacts / "bindings-editor-dark.png")


def test_bindings_named_exported_and_deleted_several_at_once(app, demo_key, artifacts, tmp_path):
    """Devices by name (the service's device list), one-line rows with 20 or more in view at
    1200x780, a CSV of every MQTT binding without a password in it, and two bindings deleted
    behind one confirmation, one of them already gone: its refusal is reported, the other done."""
    import csv

    from test_downlinks import ROWS_IN_VIEW, device_key, labels_named, save_as, service_names

    open_firmware(app)
    base_url, token = service(app, demo_key)
    names = service_names(base_url, token)
    app.set_window_size(1200, 780)
    click(app, "[data-testid=nav-bindings]")
    click(app, "[data-testid=kind-mqtt]")
    on_screen = table_rows(app)
    held = all_items(base_url, token, "/mqtt/bindings?sort=-createdAt&limit=100")
    assert on_screen == [b["id"] for b in held[: len(on_screen)]]

    shown = labels_named(app, "[data-testid=binding-row]")
    for device_id, name, known in shown:
        assert known and name == names[device_key(device_id)], (device_id, name)
    m = app.execute_script(ROWS_IN_VIEW, "[data-testid=binding-row]")
    assert max(m["heights"]) <= 30 and m["visible"] >= 20, m
    print(f"FIGURE MQTT bindings rows in view at 1200x780: {m['visible']} (rows {max(m['heights'])} px)")
    screenshot(app, artifacts / "bindings-mqtt-names-1200.png")

    # CSV: every binding (all pages), devices named, no password.
    target = tmp_path / "mqtt.csv"
    click(app, "[data-testid=export-bindings]")
    save_as(target, "Export the MQTT bindings as CSV")
    notice = wait_text(app, "[data-testid=bindings-notice]", "Exported", 30)
    assert f"Exported {len(held)} MQTT bindings to {target}" in notice, notice
    text = target.read_text()
    with open(target, newline="") as f:
        got = list(csv.DictReader(f))
    assert [r["id"] for r in got] == [b["id"] for b in held]
    for r, b in zip(got, held):
        assert (r["deviceId"], r["username"]) == (b["deviceId"], b["username"]), r
        assert r["deviceName"] == names[device_key(b["deviceId"])], r
        assert r["secretStored"] == ("false" if VARIANT == "alt" else "true"), r
        if b.get("password"):
            assert b["password"] not in text, "a password in the CSV"
    assert "password" not in next(iter(csv.reader(text.splitlines()))), "no password column"

    # Two picked; the second is deleted over HTTP before the confirmation is answered.
    first, second = on_screen[0], on_screen[1]
    for binding_id in (first, second):
        click(app, "[data-testid=pick-binding]", row_css(binding_id))
    wait_text(app, "[data-testid=bindings-bulk-bar]", "2 picked")
    click(app, "[data-testid=bulk-delete]")
    title = wait_text(app, "#confirm-title", "Delete 2 MQTT bindings")
    assert "your own environment" in title, title
    wait_text(app, "[data-testid=confirm-acting]", "your own environment")
    listed = [i.get_attribute("data-id") for i in app.find_elements(By.CSS_SELECTOR, "[data-testid=bulk-delete-item]")]
    assert sorted(listed) == sorted([first, second])
    assert "Disruptive" in app.find_element(By.CSS_SELECTOR, "[data-testid=confirm-dialog]").text
    screenshot(app, artifacts / "bindings-bulk-delete-confirm.png")
    req = urllib.request.Request(f"{base_url}/mqtt/bindings/{second}", method="DELETE", headers={"Authorization": f"Bearer {token}"})
    urllib.request.urlopen(req, timeout=10).close()
    click(app, "[data-testid=confirm-ok]")
    text = wait_text(app, "[data-testid=bindings-bulk-result-text]", "Deleted", 20)
    assert text == "Deleted 1 of 2 MQTT bindings; 1 failed (see below), the others stay done.", text
    failure = app.find_element(By.CSS_SELECTOR, "[data-testid=bindings-bulk-result-failure]")
    assert failure.get_attribute("data-id") == second and "404" in failure.text, failure.text
    screenshot(app, artifacts / "bindings-bulk-delete-result.png")
    for binding_id in (first, second):
        status, _ = get(base_url, token, f"/mqtt/bindings/{binding_id}")
        assert status == 404, binding_id
