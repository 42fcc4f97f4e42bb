"""A rollout that does not depend on one open window: started in the app against a service of
its own (`dcs sim` in another process, through a profile with the set-target operation), it goes
on with the app closed while a runner (`dcs serve`) on the same fleet database runs; the app
opened again shows it further on, with the runner named as its driver, and the service set each
device's target once."""

import subprocess
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import DCS, app_env, app_session, screenshot
from test_downlinks import set_speed
from test_profiles import click, type_into, wait_css, wait_text
from test_rollouts import STALE, number, open_dashboard, rollout_card, state_of, target_sets, waves_started

# The simulator's own set-target operation, as `dcs sim` prints it for `dcs profile add`.
SET_TARGET = [
    "--set-target-method", "PUT", "--set-target-path", "/firmware/states/{deviceId}/{moduleId}",
    "--set-target-body", '{"targetFirmwareVersion": {version}}',
]
# Leases of a few seconds: the runner takes over soon after the app is gone.
LEASE = "3"


def driver_of(d, rollout_id):
    line = d.find_element(By.CSS_SELECTOR, f"[data-testid=rollout][data-id='{rollout_id}'] [data-testid=rollout-driver]")
    return line.get_attribute("data-kind"), line.get_attribute("data-this"), line.get_attribute("innerText")


def test_a_rollout_started_in_the_app_goes_on_with_a_runner_while_the_app_is_closed(display, sim_process, demo_key, tmp_path, artifacts):
    base_url, _ = sim_process
    env = app_env(tmp_path, {"DCS_LEASE_SECONDS": LEASE})
    subprocess.run(
        [str(DCS), "profile", "add", "team", "--base-url", base_url, "--client-id", demo_key["clientId"], "--default", *SET_TARGET],
        input=demo_key["clientSecret"] + "\n", text=True, env=env, check=True, capture_output=True,
    )
    log = open(tmp_path / "tauri-driver.log", "w")
    runner_log = open(tmp_path / "runner.log", "w")
    runner = None
    try:
        with app_session(env, log) as d:
            d.set_window_size(1200, 780)
            wait_text(d, "[data-testid=service-url]", "127.0.0.1", 20)
            modules = open_dashboard(d)
            module_id = modules[0].get_attribute("data-module")
            # Devices update within seconds, so a wave meets its threshold soon after it starts.
            set_speed(base_url, 300)
            click(d, "[data-testid=new-rollout]")
            Select(wait_css(d, "[data-testid=wizard-module]")).select_by_value(module_id)
            type_into(d, "wizard-waves", "10, 50, 100")
            type_into(d, "wizard-success", "50")
            type_into(d, "wizard-error", "100")
            wait_text(d, "[data-testid=wizard-preview]", "Wave 3 (100%)", 20)
            devices = number(d.find_element(By.CSS_SELECTOR, "[data-testid=preview-devices]").text)
            click(d, "[data-testid=wizard-start]")
            wait_css(d, "[data-testid=confirm-acting]")
            click(d, "[data-testid=confirm-ok]")
            rollout_id = rollout_card(d).get_attribute("data-id")
            # This window drives it, and says what quitting does.
            WebDriverWait(d, 20, ignored_exceptions=STALE).until(lambda x: driver_of(x, rollout_id)[:2] == ("app", "true"))
            assert "If you quit the app, a runner" in driver_of(d, rollout_id)[2]
            screenshot(d, artifacts / "runner-driven-by-this-window.png")
            # The devices stand still: the rollout is in wave 1 when the window goes.
            set_speed(base_url, 0.001)
            assert waves_started(d, rollout_id)[:2] == [True, False], waves_started(d, rollout_id)
            assert state_of(d, rollout_id) == "running"

        # The app is closed (its lease runs out); the runner takes the rollout over and moves it on.
        runner = subprocess.Popen(
            [str(DCS), "--profile", "team", "serve", "--interval", "0.5", "--listen", "off", "--lease-seconds", LEASE],
            env=env, stdout=subprocess.DEVNULL, stderr=runner_log,
        )
        set_speed(base_url, 300)
        deadline = time.monotonic() + 90
        while True:
            sets = target_sets(base_url, module_id)
            if sum(1 for n in sets.values() if n) >= devices:
                break
            assert runner.poll() is None, f"the runner ended: {(tmp_path / 'runner.log').read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"the runner did not start the last wave: {len(sets)} sets"
            time.sleep(0.5)
        set_speed(base_url, 0.001)

        # Opened again (in the dark theme, for its screenshots): the rollout is further on, driven
        # by the runner, which the card names.
        with app_session({**env, "GTK_THEME": "Adwaita:dark"}, log) as d:
            d.set_window_size(1200, 780)
            open_dashboard(d)
            click(d, "[data-testid=fleet-tab-rollouts]")
            rollout_card(d, rollout_id)
            WebDriverWait(d, 30, ignored_exceptions=STALE).until(lambda x: waves_started(x, rollout_id) == [True, True, True])
            kind, this, text = WebDriverWait(d, 30, ignored_exceptions=STALE).until(
                lambda x: (found := driver_of(x, rollout_id))[0] == "runner" and found
            )
            assert this == "false" and text.startswith("Moved on by runner on ") and "goes on with this window closed" in text, text
            screenshot(d, artifacts / "runner-driven-by-a-runner.png")
            d.set_window_size(900, 560)
            rollout_card(d, rollout_id)
            screenshot(d, artifacts / "runner-driven-by-a-runner-900-dark.png")
            events = d.find_element(By.CSS_SELECTOR, f"[data-testid=rollout][data-id='{rollout_id}'] [data-testid=rollout-events]")
            d.execute_script("arguments[0].closest('details').open = true", events)
            assert "runner on" in events.get_attribute("innerText") and "drives the rollout now" in events.get_attribute("innerText")
        # Each device of the rollout had its target set once on the service, by whichever driver.
        sets = target_sets(base_url, module_id)
        moved = {dev: n for dev, n in sets.items() if n}
        assert len(moved) == devices and set(moved.values()) == {1}, moved
    finally:
        if runner:
            runner.terminate()
            assert runner.wait(20) == 0, (tmp_path / "runner.log").read_text()[-2000:]
        runner_log.close()
        log.close()
