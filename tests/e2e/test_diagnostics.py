"""Logs and diagnostics: the app writes its log to a file a day in the data folder's `logs`
(shown in Settings > Help), and the diagnostics bundle of a run, written by `dcs diagnostics`
from the same data folder and profiles file as the app's Help > Save diagnostics, holds the
run's log lines but none of its secrets or tokens, at the most verbose log level."""

import json
import subprocess
import zipfile

from conftest import DCS, app_env, app_session, screenshot
from test_home import scan_from_home
from test_profiles import click, wait_css, wait_text


def test_a_runs_diagnostics_hold_its_logs_and_none_of_its_secrets(display, tmp_path, artifacts, demo_key):
    env = app_env(tmp_path)
    env["DCS_LOG"] = "trace,tao=warn,wry=warn"
    logs = tmp_path / "app-data" / "logs"
    with open(tmp_path / "tauri-driver.log", "w") as log, app_session(env, log) as d:
        wait_css(d, "[data-testid=home]", 30)
        scan_from_home(d)
        click(d, "[data-testid=nav-settings]")
        assert wait_text(d, "[data-testid=log-folder]", str(logs), 20) == str(logs)
        screenshot(d, artifacts / "settings-help.png")
        # Every answer the page got, for the check below: the web view has no secret either.
        page = d.execute_script("return document.documentElement.outerHTML")

    bundle = tmp_path / "diagnostics.zip"
    out = subprocess.run([str(DCS), "--json", "diagnostics", str(bundle)], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        assert summary["entries"] == names
        assert {"about.json", "profiles.toml", "fleet.json", "data-folder.json"} <= set(names), names
        log_names = [n for n in names if n.startswith("logs/dcs-console.") and n.endswith(".log")]
        assert log_names, names
        text = "\n".join(z.read(n).decode("utf-8", "replace") for n in names)
    # The run's own lines: its requests (at trace level) and its scan.
    assert "/firmware/states" in text, "the scan's requests are in the log"
    assert "\x1b[" not in text, "no terminal colour codes in the log files"
    fleet = json.loads(z_read(bundle, "fleet.json"))
    assert sum(s["states"] for s in fleet["scopes"]) > 0, fleet
    # None of the run's secrets or tokens: the demo key's secret, and any bearer token (a JWT's
    # header starts `eyJ`), in the bundle or in the page.
    secret = demo_key["clientSecret"]
    for where, body in (("the bundle", text), ("the page", page)):
        assert secret not in body, f"the client secret is in {where}"
        assert "eyJ" not in body, f"a token is in {where}"
        assert "Bearer " not in body, f"an Authorization header is in {where}"


def z_read(path, name):
    with zipfile.ZipFile(path) as z:
        return z.read(name).decode()
