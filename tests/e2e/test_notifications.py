"""Desktop notifications, caught by a stand-in notification daemon on the test's D-Bus session
(tests/e2e/notifyd.py): a rollout started in the app raises one when its second wave starts
(saying how the first ended; the first started at the operator's word), and one when it
completes; clicking the notification brings the
rollout up in the app from another screen. Closing the window while the rollout runs asks
first, and kept in the background the app goes on, its window back on the next click. Settings
keeps which kinds are raised."""

import subprocess
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import app_env, app_session, deadline, screenshot, service
from notifyd import NotificationDaemon
from test_downlinks import set_speed
from test_profiles import click, type_into, wait_css
from test_rollouts import open_dashboard, rollout_card, settle
from test_window import second_launch


def window_shown() -> bool:
    """The app's window is mapped (xdotool asks the X server of the test's display)."""
    out = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^Device Connectivity Console$"], capture_output=True, text=True)
    return bool(out.stdout.split())


def until(check, timeout: float, what: str) -> None:
    end = deadline(timeout)
    while not check():
        assert time.monotonic() < end, f"{what}: not so within {timeout} s"
        time.sleep(0.2)


@pytest.fixture
def notifyd():
    daemon = NotificationDaemon()
    yield daemon
    daemon.close()


def test_a_finished_wave_raises_a_notification_that_opens_the_rollout(display, tmp_path, artifacts, demo_key, notifyd):
    env = app_env(tmp_path, {"DCS_SIM_SPEED": "300"})
    with open(tmp_path / "tauri-driver.log", "w") as log, app_session(env, log) as d:
        d.set_window_size(1200, 780)
        base_url, _ = service(d, demo_key)
        set_speed(base_url, 0.001)
        settle(base_url)
        d.execute_script("location.hash = '#/rollouts'")
        module_id = open_dashboard(d)[0].get_attribute("data-module")

        # A rollout of two waves, the devices fast.
        set_speed(base_url, 300)
        click(d, "[data-testid=new-rollout]")
        wait_css(d, "[data-testid=rollout-wizard]")
        Select(wait_css(d, "[data-testid=wizard-module]")).select_by_value(module_id)
        type_into(d, "wizard-waves", "20, 100")
        type_into(d, "wizard-success", "10")
        type_into(d, "wizard-error", "100")
        wait_css(d, "[data-testid=wizard-preview]")
        version = d.find_element(By.CSS_SELECTOR, "[data-testid=wizard-version]").get_attribute("value")
        click(d, "[data-testid=wizard-start]")
        click(d, "[data-testid=confirm-ok]")
        rollout_id = rollout_card(d).get_attribute("data-id")
        module_name = d.find_element(By.CSS_SELECTOR, f"[data-testid=rollout][data-id='{rollout_id}']").get_attribute("textContent")

        # The second wave's start once the first finished (the first started at the operator's
        # word, in the app: no notification), then the end.
        ours = lambda n: version in n["summary"] and n["app"] == "Device Connectivity Console"  # noqa: E731
        second = notifyd.wait_for(lambda n: ours(n) and "wave 2 of 2 started" in n["summary"], 120)
        assert second["body"].startswith("Wave 1 finished: "), second
        assert "default" in second["actions"], second
        assert second["summary"].split(":")[0].removeprefix("Rollout of ").removesuffix(f" {version}") in module_name
        assert not [n for n in notifyd.seen() if ours(n) and "wave 1 of 2" in n["summary"]]
        # The devices stand still: the rollout runs on while the window is closed and back.
        set_speed(base_url, 0.001)

        # Elsewhere in the app, the notification clicked: the rollout is shown, marked.
        d.execute_script("location.hash = '#/settings'")
        wait_css(d, "[data-testid=notifications]", 20)
        notifyd.click(second["id"])
        marked = wait_css(d, f"[data-testid=rollout][data-id='{rollout_id}'][aria-current=true]", 30)
        assert d.find_element(By.CSS_SELECTOR, "[data-testid=nav-rollouts]").get_attribute("aria-current") == "page"
        screenshot(d, artifacts / "notification-opened-rollout.png")
        assert marked.is_displayed()

        # Closing the window while it runs asks first; kept in the background, the window hides
        # and starting the app again brings it back (a notification clicked since would too).
        d.execute_script("window.__TAURI_INTERNALS__.invoke('plugin:event|emit', {event: 'dcs-e2e://close', payload: null})")
        dialog = wait_css(d, "[data-testid=close-dialog]", 20)
        assert "A rollout is running" in dialog.get_attribute("textContent")
        screenshot(d, artifacts / "close-while-a-rollout-runs.png")
        # Clicked from the page, and the window then seen from the X server: WebDriver's own click
        # and commands wait for a web view to paint, which a hidden one never does.
        d.execute_script("document.querySelector('[data-testid=close-background]').click()")
        until(lambda: not window_shown(), 30, "the window hides once kept in the background")
        time.sleep(2)
        assert not window_shown(), "the window stays hidden"
        launched = second_launch(env)
        until(window_shown, 30, f"a second launch shows the window again (it ended {launched.returncode}: {launched.stderr[-2000:]})")
        wait_css(d, f"[data-testid=rollout][data-id='{rollout_id}'][aria-current=true]", 30)

        set_speed(base_url, 300)
        completed = notifyd.wait_for(lambda n: ours(n) and n["summary"].endswith("completed"), 180)
        assert "devices succeeded" in completed["body"], completed

        # Wave notifications turned off in Settings; the choice is kept.
        d.execute_script("location.hash = '#/settings'")
        box = wait_css(d, "[data-testid=notify-waves]", 20)
        assert box.is_selected()
        box.click()
        WebDriverWait(d, 10).until(lambda _: not box.is_selected())
        screenshot(d, artifacts / "settings-notifications.png")
        d.refresh()
        assert not wait_css(d, "[data-testid=notify-waves]", 30).is_selected(), "the choice is kept"
