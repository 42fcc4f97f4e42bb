"""Uploading a firmware file through the app, the way a drop does it: the file dropped on a
package row (a Tauri drag-drop event carrying its path, as the OS sends it), its SHA-256
computed in Rust and shown, a cancelled upload leaving nothing, then the upload with progress
landing in the simulator byte for byte; release notes viewed safely and deleted."""

import hashlib
import json
import os
import urllib.request

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import audit_rows, create_package, open_firmware, screenshot, service, service_get_as
from dropping import drop_file_on
from test_firmware import package_rows, send
from test_profiles import click, wait_css, wait_text

STALE = (StaleElementReferenceException,)


def raw_get(base_url, path, token):
    req = urllib.request.Request(base_url + path)
    req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=30) as res:
        return res.read()


def set_faults(base_url, faults):
    req = urllib.request.Request(base_url + "/_sim/faults", data=json.dumps(faults).encode(), method="PUT")
    req.add_header("Content-Type", "application/json")
    urllib.request.urlopen(req, timeout=10).read()


# Every text the progress line shows, in order (an observer, so a short-lived one is caught too).
RECORD_TRANSFER_TEXTS = """
window.__transferTexts = [];
const record = () => document.querySelectorAll('[data-testid=transfer-text]').forEach((e) => {
  const t = e.textContent, all = window.__transferTexts;
  if (all[all.length - 1] !== t) all.push(t);
});
window.__transferObserver?.disconnect();
window.__transferObserver = new MutationObserver(record);
window.__transferObserver.observe(document.body, { subtree: true, childList: true, characterData: true });
"""


def upload_over_http(base_url, token, package_id, name, data, kind="firmware-file"):
    boundary = "e2eboundary"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
        f"Content-Type: application/octet-stream\r\n\r\n"
    ).encode() + data + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(base_url + f"/firmware/packages/{package_id}/{kind}", data=body, method="POST")
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    urllib.request.urlopen(req, timeout=10).read()


def test_drop_upload_with_progress_and_release_notes(app, demo_key, artifacts, tmp_path):
    open_firmware(app)
    base_url, token = service(app, demo_key)
    module, pkg = create_package(base_url, token, "3.0.0-e2e")
    firmware = tmp_path / "fw-3.0.0.bin"
    firmware.write_bytes(os.urandom(24 * 1024 * 1024 + 123))
    sha = hashlib.sha256(firmware.read_bytes()).hexdigest()

    click(app, "[data-testid=tab-packages]")
    WebDriverWait(app, 30, ignored_exceptions=STALE).until(lambda d: pkg["id"] in package_rows(d))
    row = app.find_element(By.CSS_SELECTOR, f"[data-testid=package-row][data-id='{pkg['id']}']")
    drop_file_on(app, row, str(firmware))

    # Staged: the checksum is computed in Rust and shown before anything is sent.
    wait_css(app, "[data-testid=package-files-dialog]")
    wait_text(app, "[data-testid=staged-sha256]", sha, 60)
    assert "once" in app.find_element(By.CSS_SELECTOR, "[data-testid=dropzone]").text
    screenshot(app, artifacts / "firmware-file-staged.png")

    # A slow service: the upload is cancelled while it runs; nothing is stored, the file stays chosen.
    set_faults(base_url, {"latencyMs": 8000})
    try:
        click(app, "[data-testid=upload-firmware]")
        wait_text(app, "[data-testid=confirm-dialog]", "Once only")
        screenshot(app, artifacts / "firmware-file-confirm.png")
        app.execute_script(RECORD_TRANSFER_TEXTS)
        click(app, "[data-testid=confirm-ok]")
        wait_css(app, "[data-testid=transfer-cancel]", 30)
        screenshot(app, artifacts / "firmware-file-uploading.png")
        click(app, "[data-testid=transfer-cancel]")
        wait_text(app, "[data-testid=package-files-dialog] [data-testid=error]", "cancelled", 30)
    finally:
        set_faults(base_url, {})
    assert sha in app.find_element(By.CSS_SELECTOR, "[data-testid=staged-sha256]").text
    assert "firmwareFileName" not in send(base_url, token, "GET", f"/firmware/packages/{pkg['id']}")

    # The upload itself: progress, then the attributes the service answered.
    click(app, "[data-testid=upload-firmware]")
    click(app, "[data-testid=confirm-ok]")
    result = wait_text(app, "[data-testid=upload-result]", "Uploaded", 120)
    assert firmware.name in result
    screenshot(app, artifacts / "firmware-file-uploaded.png")
    # The checksum shown was reused: the progress line only ever said "Uploaded ...", never a
    # checksum pass starting again at 0 B.
    texts = app.execute_script("window.__transferObserver.disconnect(); return window.__transferTexts")
    assert any(t.startswith("Uploaded ") for t in texts), texts
    assert all(t.startswith("Uploaded ") or t == "Starting…" for t in texts), texts
    # The file now held shows its size and SHA-256.
    assert wait_text(app, "[data-testid=firmware-file-sha256]", sha) == sha
    assert app.find_element(By.CSS_SELECTOR, "[data-testid=firmware-file-size]").text == "24.0 MiB"
    held = send(base_url, token, "GET", f"/firmware/packages/{pkg['id']}")
    assert held["firmwareFileName"] == firmware.name
    assert raw_get(base_url, f"/firmware/packages/{pkg['id']}/firmware-file", token) == firmware.read_bytes()
    assert "cannot be replaced" in app.find_element(By.CSS_SELECTOR, "[data-testid=firmware-file-name]").text

    # Release notes (uploaded here over HTTP: the app's own upload goes through the native
    # file dialog): rendered safely, then deleted after a confirmation.
    notes = "# 3.0.0\n\n- faster boot\n\n<script>window.__pwned = 1</script>\n\n[site](javascript:alert(1))\n"
    boundary = "e2eboundary"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"notes.md\"\r\n"
        f"Content-Type: text/markdown\r\n\r\n{notes}\r\n--{boundary}--\r\n"
    ).encode()
    req = urllib.request.Request(base_url + f"/firmware/packages/{pkg['id']}/release-notes-file", data=body, method="POST")
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    urllib.request.urlopen(req, timeout=10).read()
    click(app, "[data-testid=close-files]")
    WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid=package-files-dialog]"))
    WebDriverWait(app, 30, ignored_exceptions=STALE).until(
        lambda d: d.find_element(By.CSS_SELECTOR, f"[data-testid=package-row][data-id='{pkg['id']}']")
    )
    click(app, "[data-testid=package-files]", f"[data-testid=package-row][data-id='{pkg['id']}']")
    # Opened again, the file uploaded earlier still shows its size and SHA-256.
    assert wait_text(app, "[data-testid=firmware-file-sha256]", sha) == sha
    click(app, "[data-testid=view-notes]")
    rendered = wait_css(app, "[data-testid=release-notes-text]")
    assert rendered.find_element(By.CSS_SELECTOR, "h1").text == "3.0.0"
    assert not rendered.find_elements(By.CSS_SELECTOR, "script")
    assert app.execute_script("return window.__pwned === undefined")
    assert not [a for a in rendered.find_elements(By.CSS_SELECTOR, "a") if "javascript" in (a.get_attribute("href") or "")]
    screenshot(app, artifacts / "release-notes.png")
    click(app, "[data-testid=delete-notes]")
    wait_text(app, "[data-testid=confirm-dialog]", "notes.md")
    click(app, "[data-testid=confirm-ok]")
    wait_text(app, "[data-testid=release-notes-name]", "None yet")
    status, _ = service_get_as(base_url, f"/firmware/packages/{pkg['id']}/release-notes-file", token, None)
    assert status == 404

    # A firmware file uploaded elsewhere (over HTTP): the service tells neither size nor SHA-256;
    # the dialog offers to read it through, and then shows both.
    _, other = create_package(base_url, token, "3.0.1-e2e", module)
    data = os.urandom(300_000)
    upload_over_http(base_url, token, other["id"], "fw-3.0.1.bin", data)
    click(app, "[data-testid=close-files]")
    WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid=package-files-dialog]"))
    click(app, "[data-testid=tab-modules]")
    click(app, "[data-testid=tab-packages]")
    WebDriverWait(app, 30, ignored_exceptions=STALE).until(lambda d: other["id"] in package_rows(d))
    click(app, "[data-testid=package-files]", f"[data-testid=package-row][data-id='{other['id']}']")
    wait_text(app, "[data-testid=firmware-file-size]", "not known yet")
    click(app, "[data-testid=check-firmware-file]")
    assert wait_text(app, "[data-testid=firmware-file-sha256]", hashlib.sha256(data).hexdigest(), 30)
    assert app.find_element(By.CSS_SELECTOR, "[data-testid=firmware-file-size]").text == "293 KiB"
    screenshot(app, artifacts / "firmware-file-checked.png")

    # The app's writes in its audit log, in order: the upload cancelled mid-way (the service may
    # or may not have it: unknown, with the package to look at), the upload with the SHA-256 of
    # what was sent, and the release notes deleted (what went over HTTP here is not the app's).
    click(app, "[data-testid=close-files]")
    WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid=package-files-dialog]"))
    assert audit_rows(app) == [("firmware-file.upload", "unknown"), ("firmware-file.upload", "done"), ("release-notes.delete", "done")]
    click(app, "[data-testid=audit-open]", "[data-testid=audit-row][data-result=unknown]")
    assert "may or may not" in wait_text(app, "[data-testid=audit-unknown]", "Open package")
    assert pkg["id"] in app.find_element(By.CSS_SELECTOR, "[data-testid=audit-check]").text
    screenshot(app, artifacts / "audit-unknown.png")
    click(app, "[data-testid=audit-record-close]")
    WebDriverWait(app, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid=audit-record]"))
    click(app, "[data-testid=audit-open]", "[data-testid=audit-row][data-result=done][data-operation='firmware-file.upload']")
    record = wait_text(app, "[data-testid=audit-record]", sha)
    assert pkg["id"] in record and firmware.name in record, record
