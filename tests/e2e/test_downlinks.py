"""Downlinks on the app's own simulator, end to end: an actuator downlink composed in the UI
(device from the picker, a method variant, a bad feedback timeout named inline, the exact body
previewed), sent after a confirmation and watched to a final status in the list and in the
timeline with no reload; a LoRa dry run through the connection composer behind its warning; and
seeded downlinks cancelled, `forced` explained. Each result is checked over real HTTP.

The simulator's clock is steered through its control endpoint (PUT /_sim/clock): slowed while
the test looks at a downlink in progress, then sped up so it reaches a final status within a
bounded time (its feedback timeout, on the fast clock, at the latest)."""

import json
import time
import urllib.request
import uuid

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from conftest import VARIANT, by_variant, open_firmware, screenshot, service_get_as, service_token
from test_profiles import click, type_into, wait_css, wait_text

STALE = (StaleElementReferenceException,)
FINAL = {"DELIVERED", "FAILED", "CANCELLED"}


def service(app, demo_key):
    base_url = app.find_element(By.CSS_SELECTOR, "[data-testid=service-url]").get_attribute("data-url")
    return base_url.rstrip("/"), service_token(base_url, demo_key)


def set_speed(base_url, speed):
    """How fast the simulator's clock runs (its own control endpoint, no token)."""
    req = urllib.request.Request(
        base_url + "/_sim/clock", data=json.dumps({"speed": speed}).encode(), method="PUT", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as res:
        assert json.load(res)["speed"] == speed


def get(base_url, token, path):
    status, body = service_get_as(base_url, path, token, None)
    assert status == 200, body
    return body


def rows(driver):
    """The downlink rows once the list has loaded: [(id, status)]."""

    def loaded(d):
        if d.execute_script("return [...document.querySelectorAll('[data-testid=loading]')].some(e => !e.closest('.sentinel, .picker-list'))"):
            return False
        found = d.find_elements(By.CSS_SELECTOR, "[data-testid=downlink-row]")
        return [(r.get_attribute("data-id"), r.get_attribute("data-status")) for r in found] or False

    return WebDriverWait(driver, 30, ignored_exceptions=STALE).until(loaded)


def row_status(driver, downlink_id):
    found = driver.find_elements(By.CSS_SELECTOR, f"[data-testid=downlink-row][data-id='{downlink_id}']")
    return found[0].get_attribute("data-status") if found else None


def pick_device(driver, picker, search):
    """Opens the picker's list, searches it and picks the first device; returns its UUID."""
    click(driver, f"[data-testid={picker}-browse]")
    box = wait_css(driver, f"[data-testid={picker}-search]")
    box.send_keys(search)
    option = WebDriverWait(driver, 20, ignored_exceptions=STALE).until(
        lambda d: next((o for o in d.find_elements(By.CSS_SELECTOR, f"[data-testid={picker}-option]") if search in o.text), False)
    )
    picked = option.get_attribute("data-uuid")
    option.click()
    wait_text(driver, f"[data-testid={picker}-form]", "device UUID")
    return picked


def preview_body(driver):
    return json.loads(wait_css(driver, "[data-testid=downlink-preview]").text)


def notice_id(driver, text):
    wait_text(driver, "[data-testid=downlink-notice]", text, timeout=20)
    return driver.find_element(By.CSS_SELECTOR, "[data-testid=downlink-notice] code").text


def test_compose_send_and_watch_an_actuator_downlink(app, demo_key, artifacts):
    open_firmware(app)
    base_url, token = service(app, demo_key)
    click(app, "[data-testid=nav-downlinks]")
    seeded = rows(app)
    assert {s for _, s in seeded} & {"PENDING", "EXECUTING"}, "seeded downlinks in progress keep the list live"
    wait_text(app, "[data-testid=auto-refresh]", "refreshing every")
    screenshot(app, artifacts / "downlinks-list.png")

    # Real time: the downlink stays in progress (8 s at the least) while the test looks at it.
    set_speed(base_url, 1)
    try:
        click(app, "[data-testid=new-downlink]")
        wait_css(app, "[data-testid=actuator-composer]")
        device = pick_device(app, "device-picker", "T1")
        click(app, "[data-testid=variant-setProperty]")
        type_into(app, "method-property", "reportingInterval")
        type_into(app, "method-value", "120")
        type_into(app, "retryLimit", "2")
        type_into(app, "feedbackTimeout", "PT5M")
        rule = wait_text(app, "[data-testid=error-feedbackTimeout]", "at least 10 minutes")
        assert "PT5M" in rule
        assert app.find_elements(By.CSS_SELECTOR, "[data-testid=preview-pending]"), "no body while a rule is broken"
        screenshot(app, artifacts / "downlink-composer.png")

        type_into(app, "feedbackTimeout", "PT15M")
        WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid=error-feedbackTimeout]"))
        reference = f"e2e-{uuid.uuid4().hex[:12]}"
        type_into(app, "externalReference", reference)
        expected = {
            "method": {"type": "setProperty", "deviceId": device, "property": "reportingInterval", "value": 120},
            "retryLimit": 2,
            "feedbackTimeout": "PT15M",
            "externalReference": reference,
            "dryRun": False,
        }
        WebDriverWait(app, 10, ignored_exceptions=STALE + (ValueError,)).until(lambda d: preview_body(d) == expected)
        screenshot(app, artifacts / "downlink-preview.png")

        click(app, "[data-testid=send-downlink]")
        wait_text(app, "[data-testid=confirm-acting]", "your own environment")
        assert json.loads(app.find_element(By.CSS_SELECTOR, "[data-testid=confirm-body]").text) == expected
        assert "reportingInterval" in app.find_element(By.CSS_SELECTOR, "[data-testid=confirm-effect]").text
        screenshot(app, artifacts / "downlink-send-confirm.png")
        click(app, "[data-testid=confirm-ok]")
        sent_at = time.monotonic()
        downlink_id = notice_id(app, "Sent")

        # In the list at once, still in progress; narrowed to it by its reference.
        WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: row_status(d, downlink_id) not in (None,))
        assert row_status(app, downlink_id) not in FINAL
        q = wait_css(app, "[data-testid=filter-q]")
        q.send_keys(reference, Keys.ENTER)
        WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: [i for i, _ in rows(d)] == [downlink_id])
        wait_text(app, "[data-testid=auto-refresh]", "1 downlink is in progress")

        # Its detail: the statuses seen so far and the countdown to its feedback deadline.
        click(app, "[data-testid=downlink-details]")
        wait_css(app, "[data-testid=downlink-detail]")
        wait_text(app, "[data-testid=time-left]", "left")
        wait_text(app, "[data-testid=retries]", "of 2 retries used")
        # The detail asks every second: it sees the downlink leave PENDING (after 1 to 8 s). The alt
        # service answers a new actuator downlink ACCEPTED (a status the reference does not list)
        # for its first simulated second, then PENDING (A-30 alt); the app shows it as it came.
        first_seen = WebDriverWait(app, 30, poll_frequency=0.2, ignored_exceptions=STALE).until(
            lambda d: [e.get_attribute("data-status") for e in d.find_elements(By.CSS_SELECTOR, "[data-testid=timeline-status]")][:2]
            if len(d.find_elements(By.CSS_SELECTOR, "[data-testid=timeline-status]")) >= 2
            else False
        )
        if VARIANT == "alt":
            assert first_seen == ["ACCEPTED", "PENDING"], first_seen
        else:
            assert first_seen[0] == "PENDING" and first_seen[1] not in FINAL, first_seen
        screenshot(app, artifacts / "downlink-timeline-live.png")
    finally:
        # Now let it run: at 60x it is final within its feedback timeout (15 s) at the latest.
        set_speed(base_url, 60)

    badge = WebDriverWait(app, 40, poll_frequency=0.2, ignored_exceptions=STALE).until(
        lambda d: next(
            (e.text for e in d.find_elements(By.CSS_SELECTOR, "[data-testid=downlink-detail] h2 [data-testid=status-badge]") if e.text in FINAL),
            False,
        )
    )
    final_after = time.monotonic() - sent_at
    wait_text(app, "[data-testid=detail-live]", "Final")
    seen = [e.get_attribute("data-status") for e in app.find_elements(By.CSS_SELECTOR, "[data-testid=timeline-status]")]
    assert seen[0] == by_variant("PENDING", "ACCEPTED") and seen[-1] == badge, seen
    assert len(seen) >= 3 and all(a != b for a, b in zip(seen, seen[1:])), seen
    wait_text(app, "[data-testid=time-left]", "not waiting")
    if badge == "FAILED":
        assert app.find_element(By.CSS_SELECTOR, "[data-testid=failure-explanation]").text
    screenshot(app, artifacts / "downlink-timeline.png")
    click(app, "[data-testid=detail-close]")

    # The list followed on its own, and stops refreshing once all shown are final.
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: row_status(d, downlink_id) == badge)
    wait_text(app, "[data-testid=auto-refresh]", "All shown downlinks are final")
    assert app.find_element(By.CSS_SELECTOR, "[data-testid=auto-refresh]").get_attribute("data-active") == "false"
    screenshot(app, artifacts / "downlinks-list-final.png")

    # The service holds it with the fields sent.
    held = get(base_url, token, f"/downlinks/{downlink_id}")
    assert held["method"] == expected["method"]
    assert (held["retryLimit"], held["feedbackTimeout"], held["externalReference"], held["dryRun"]) == (2, "PT15M", reference, False)
    assert held["status"] == badge
    found = get(base_url, token, f"/downlinks?q={reference}")["items"]
    assert [d["id"] for d in found] == [downlink_id]
    print(f"FIGURE actuator downlink final ({badge}) {final_after:.1f} s after sending (1x while watched, then 60x); seen {seen}")


def test_a_lora_dry_run_behind_the_warning(app, demo_key, artifacts):
    open_firmware(app)
    base_url, token = service(app, demo_key)
    click(app, "[data-testid=nav-downlinks]")
    rows(app)
    click(app, "[data-testid=kind-lora]")
    rows(app)
    click(app, "[data-testid=new-downlink]")
    warning = wait_text(app, "[data-testid=bypass-warning]", "disrupt")
    assert "encoder" in warning
    assert app.find_element(By.CSS_SELECTOR, "[data-testid=c-dryRun]").is_selected(), "dry run is on by default"
    device = pick_device(app, "c-device-picker", "WM-3")
    type_into(app, "c-payloadHex", "0a0b")
    type_into(app, "c-fPort", "2")
    type_into(app, "c-retryLimit", "1")
    expected = {"deviceId": device, "feedbackTimeout": "PT1H", "payloadHex": "0a0b", "fPort": 2, "confirmed": True, "retryLimit": 1, "dryRun": True}
    WebDriverWait(app, 10, ignored_exceptions=STALE + (ValueError,)).until(lambda d: preview_body(d) == expected)
    app.execute_script("document.querySelector('[data-testid=connection-composer]').scrollTop = 0")
    screenshot(app, artifacts / "connection-composer-warning.png")

    # Not a dry run: the confirmation says it can disrupt this device, for whom. Backed out of.
    click(app, "[data-testid=c-dryRun]")
    wait_text(app, "[data-testid=dry-run-toggle]", "reaches the device")
    click(app, "[data-testid=send-connection-downlink]")
    disrupt = wait_text(app, "[data-testid=confirm-disrupt]", "disrupt")
    assert device in disrupt
    wait_text(app, "[data-testid=confirm-acting]", "your own environment")
    assert "Not a dry run" in app.find_element(By.CSS_SELECTOR, "[data-testid=confirm-effect]").text
    screenshot(app, artifacts / "connection-confirm-real.png")
    click(app, "[data-testid=confirm-cancel]")

    # As a dry run.
    click(app, "[data-testid=c-dryRun]")
    wait_text(app, "[data-testid=dry-run-toggle]", "Dry run: on")
    click(app, "[data-testid=send-connection-downlink]")
    wait_text(app, "[data-testid=confirm-effect]", "Dry run")
    assert not app.find_elements(By.CSS_SELECTOR, "[data-testid=confirm-disrupt]")
    click(app, "[data-testid=confirm-ok]")
    sent_at = time.monotonic()
    downlink_id = notice_id(app, "Sent the LoRa downlink as a dry run")
    WebDriverWait(app, 30, poll_frequency=0.2, ignored_exceptions=STALE).until(lambda d: row_status(d, downlink_id) == "DONE")
    print(f"FIGURE LoRa dry run DONE in the list {time.monotonic() - sent_at:.1f} s after sending (60x)")

    held = get(base_url, token, f"/lora/downlinks/{downlink_id}")
    assert {k: held[k] for k in expected} == {**expected, "deviceId": device}
    assert held["status"] == "DONE" and "lastFailureReason" not in held


def test_cancel_seeded_downlinks_with_forced_explained(app, demo_key, artifacts):
    open_firmware(app)
    base_url, token = service(app, demo_key)
    click(app, "[data-testid=nav-downlinks]")
    listed = rows(app)
    executing = next(i for i, s in listed if s == "EXECUTING")
    pending = next(i for i, s in listed if s == "PENDING")

    # Executing, without forced: the service refuses, and the app says so and what the choice is.
    click(app, "[data-testid=downlink-cancel]", f"[data-testid=downlink-row][data-id='{executing}']")
    plain = wait_text(app, "[data-testid=cancel-plain]", "without forced the service refuses")
    assert "409" in plain and "the status afterwards tells" in plain, plain
    click(app, "[data-testid=confirm-ok]")
    if VARIANT == "alt":
        # The alt service accepts every cancellation (202) and leaves an executing one running
        # (A-29 alt): the app claims no outcome, and the list, refreshed, still shows it EXECUTING.
        accepted = wait_text(app, "[data-testid=downlink-notice]", "Cancellation accepted (202)")
        assert "(forced)" not in accepted and "only the status afterwards tells" in accepted, accepted
        # The list reloads at once after the cancellation and then every 2 s while anything shown
        # is in progress: over 5 s (at least two refreshes) the row never leaves EXECUTING.
        until = time.monotonic() + 5
        while time.monotonic() < until:
            try:
                assert row_status(app, executing) == "EXECUTING"
            except STALE:
                pass
            time.sleep(0.2)
    else:
        refusal = wait_text(app, "[data-testid=downlink-notice]", "did not cancel")
        assert "409" in refusal and "forced=true" in refusal, refusal
    assert get(base_url, token, f"/downlinks/{executing}")["status"] == "EXECUTING"

    # Pending, forced chosen explicitly after reading what it does.
    # The list refreshes itself: the row is looked up on every attempt.
    click(app, "[data-testid=downlink-cancel]", f"[data-testid=downlink-row][data-id='{pending}']")
    wait_text(app, "[data-testid=cancel-plain]", "cancels it at once")
    assert "not needed" in app.find_element(By.CSS_SELECTOR, "[data-testid=cancel-forced-why]").text
    click(app, "[data-testid=cancel-forced]")
    assert app.find_element(By.CSS_SELECTOR, "[data-testid=cancel-forced]").is_selected()
    wait_text(app, "[data-testid=confirm-acting]", "your own environment")
    screenshot(app, artifacts / "downlink-cancel-confirm.png")
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=downlink-notice]", "(forced) accepted")
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(lambda d: row_status(d, pending) == "CANCELLED")
    assert get(base_url, token, f"/downlinks/{pending}")["status"] == "CANCELLED"

    # Executing, forced, from its detail: cancelled too.
    click(app, "[data-testid=downlink-details]", f"[data-testid=downlink-row][data-id='{executing}']")
    click(app, "[data-testid=detail-cancel]")
    wait_text(app, "[data-testid=cancel-forced-why]", "stops it anyway")
    click(app, "[data-testid=cancel-forced]")
    click(app, "[data-testid=confirm-ok]")
    WebDriverWait(app, 20, ignored_exceptions=STALE).until(
        lambda d: any(e.text == "CANCELLED" for e in d.find_elements(By.CSS_SELECTOR, "[data-testid=downlink-detail] h2 [data-testid=status-badge]"))
    )
    wait_text(app, "[data-testid=status-explanation]", "cancelled on request")
    # The reason CANCELLED repeats the status: explained once, not twice.
    assert not app.find_elements(By.CSS_SELECTOR, "[data-testid=failure-explanation]")
    screenshot(app, artifacts / "downlink-detail-cancelled.png")
    assert get(base_url, token, f"/downlinks/{executing}")["status"] == "CANCELLED"


@pytest.mark.parametrize("app", [{"GTK_THEME": "Adwaita:dark"}], indirect=True)
def test_downlinks_in_the_dark_theme(app, artifacts):
    open_firmware(app)
    click(app, "[data-testid=nav-downlinks]")
    listed = rows(app)
    screenshot(app, artifacts / "downlinks-list-dark.png")
    failed = next((i for i, s in listed if s == "FAILED"), listed[0][0])
    click(app, "[data-testid=downlink-details]", f"[data-testid=downlink-row][data-id='{failed}']")
    wait_css(app, "[data-testid=timeline-status]")
    screenshot(app, artifacts / "downlink-detail-dark.png")
    click(app, "[data-testid=detail-close]")
    click(app, "[data-testid=kind-mqtt]")
    rows(app)
    click(app, "[data-testid=new-downlink]")
    wait_css(app, "[data-testid=bypass-warning]")
    type_into(app, "c-topic", "a/#")
    wait_text(app, "[data-testid=error-c-topic]", "wildcards")
    app.execute_script("document.querySelector('[data-testid=connection-composer]').scrollTop = 0")
    screenshot(app, artifacts / "connection-composer-dark.png")
