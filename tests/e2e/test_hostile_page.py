"""A page that turned hostile (issue 18): whatever the web view asks, Rust reads and writes only
files the user picked in this run, and the CSP keeps inline styles and other origins out."""

import json

from conftest import create_package, open_firmware, screenshot, service
from test_firmware import send


def test_file_commands_refuse_paths_the_user_did_not_pick(app, demo_key, artifacts, tmp_path):
    open_firmware(app)
    base_url, token = service(app, demo_key)
    _, pkg = create_package(base_url, token, "3.0.1-hostile")
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN KEY-----\n")
    bashrc = tmp_path / "bashrc"
    bashrc.write_text("original\n")
    answers = app.execute_async_script(
        """
        const [pkg, secret, bashrc, done] = arguments;
        const t = window.__TAURI_INTERNALS__;
        const events = [];
        const channel = () => "__CHANNEL__:" + t.transformCallback((m) => events.push(m));
        (async () => {
          const out = [];
          for (const [cmd, args] of [
            ["hash_file", { path: secret, onProgress: channel() }],
            ["hash_file", { path: "/etc/passwd", onProgress: channel() }],
            ["upload_firmware_file", { request: { packageId: pkg, path: secret, fileName: null, contentType: null, actingFor: null, sha256: null }, onProgress: channel() }],
            ["upload_release_notes", { request: { packageId: pkg, path: "/etc/passwd", fileName: null, contentType: null, actingFor: null, sha256: null }, onProgress: channel() }],
            ["download_release_notes", { request: { packageId: pkg, target: bashrc }, onProgress: channel() }],
          ]) {
            try { out.push([cmd, "accepted", await t.invoke(cmd, args)]); } catch (e) { out.push([cmd, "refused", e]); }
          }
          done({ out, events });
        })();
        """,
        pkg["id"],
        str(secret),
        str(bashrc),
    )
    for cmd, outcome, answer in answers["out"]:
        assert outcome == "refused", (cmd, answer)
        assert answer.get("field") in ("path", "target") and "in this run of the app" in answer.get("message", ""), (cmd, answer)
    # No transfer job started: a progress message would carry its job id.
    assert not [e for e in answers["events"] if isinstance(e, dict) and "job" in json.dumps(e).lower()], answers["events"]
    assert bashrc.read_text() == "original\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("bashrc")) == ["bashrc"]
    got = send(base_url, token, "GET", f"/firmware/packages/{pkg['id']}", None)
    assert not got.get("firmwareFileName") and not got.get("releaseNotesFileName"), got

    # The CSP: an inline style attribute written into the page is not applied (no
    # 'unsafe-inline'), while the app's own styles set through the CSSOM are.
    applied = app.execute_script(
        """
        const d = document.createElement("div");
        d.innerHTML = '<span style="color: rgb(255, 0, 1)">x</span>';
        document.body.appendChild(d);
        const c = getComputedStyle(d.firstChild).color;
        d.remove();
        return c;
        """
    )
    assert applied != "rgb(255, 0, 1)", applied
    screenshot(app, artifacts / "hostile-page-firmware.png")
