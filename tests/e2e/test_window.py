"""The app as a desktop app: its window comes back at the size it was left with, a second launch
hands its `dcs-console://` link to the app already running on the data folder and ends (that app
opens the item), and a launch with a link opens the item at once. The links come from
`dcs open --print`, as an operator would get them."""

import json
import subprocess
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import APP, DCS, app_env, app_session, create_package, screenshot, service, service_get_as
from test_downlinks import get, service_names
from test_profiles import wait_css, wait_text
from test_rollouts import device_count

def link_of(kind: str, item: str) -> str:
    """The item's link as `dcs open --print --json` writes it."""
    out = subprocess.run([str(DCS), "open", kind, item, "--print", "--json"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["opened"] is False
    return answer["link"]


def second_launch(env: dict, *args: str) -> subprocess.CompletedProcess:
    """Launches the app again on the same data folder; it must end by itself, at once."""
    started = time.monotonic()
    done = subprocess.run([str(APP), *args], env=env, capture_output=True, text=True, timeout=30)
    assert time.monotonic() - started < 15, "the second launch took its time"
    return done


def test_the_window_comes_back_at_the_size_it_was_left_with(display, tmp_path, artifacts):
    env = app_env(tmp_path)
    state_file = tmp_path / "config" / "io.dcsconsole.app" / ".window-state.json"
    with open(tmp_path / "tauri-driver.log", "w") as log:
        with app_session(env, log) as d:
            wait_css(d, "[data-testid=home]", 30)
            first = d.get_window_size()
            assert (first["width"], first["height"]) == (1200, 780), first
            d.set_window_size(1000, 640)
            # Saved once the window stays still: no clean close is needed (the session ends the
            # app the way a crash would).
            WebDriverWait(d, 10).until(lambda _: state_file.exists() and json.loads(state_file.read_text())["main"]["width"] == 1000)
        with app_session(env, log) as d:
            wait_css(d, "[data-testid=home]", 30)
            size = d.get_window_size()
            assert (size["width"], size["height"]) == (1000, 640), size
            screenshot(d, artifacts / "window-size-restored-1000x640.png")


def test_a_second_launch_hands_its_link_to_the_running_app_and_ends(display, tmp_path, artifacts, demo_key):
    env = app_env(tmp_path)
    with open(tmp_path / "tauri-driver.log", "w") as log, app_session(env, log) as d:
        wait_css(d, "[data-testid=home]", 30)
        base_url, token = service(d, demo_key)
        module, pkg = create_package(base_url, token, "9.8.7-link")
        windows = d.window_handles

        # A package's link: the running app shows its files, the second launch ends at once.
        done = second_launch(env, link_of("package", pkg["id"].upper()))
        assert done.returncode == 0, done.stderr
        assert "already runs on this data folder" in done.stdout + done.stderr
        dialog = wait_css(d, "[data-testid=package-files-dialog]", 20)
        assert "9.8.7-link" in dialog.find_element(By.CSS_SELECTOR, "#files-title").text
        assert d.find_element(By.CSS_SELECTOR, "[data-testid=nav-firmware]").get_attribute("aria-current") == "page"
        assert d.window_handles == windows, "no second window"
        assert d.execute_script("return document.hasFocus()"), "the window has the focus"
        screenshot(d, artifacts / "link-package-files.png")
        d.find_element(By.CSS_SELECTOR, "[data-testid=package-files-dialog] button[aria-label=Close]").click()

        # A module's link opens its detail.
        second_launch(env, link_of("module", module["id"]))
        assert wait_text(d, "[data-testid=module-detail-name]", module["name"], 20)
        d.find_element(By.CSS_SELECTOR, "[data-testid=module-detail-close]").click()

        # A downlink's link names no kind: the app finds it among the kinds (here LoRa's).
        lora = get(base_url, token, "/lora/downlinks?limit=1")["items"][0]
        second_launch(env, link_of("downlink", lora["id"]))
        detail = wait_css(d, "[data-testid=downlink-detail]", 30)
        assert d.find_element(By.CSS_SELECTOR, "[data-testid=nav-downlinks]").get_attribute("aria-current") == "page"
        assert lora["id"] in wait_text(d, "[data-testid=downlink-detail]", lora["id"], 20)
        screenshot(d, artifacts / "link-downlink.png")
        detail.find_element(By.CSS_SELECTOR, "button[aria-label=Close]").click()

        # A malformed link changes nothing and says what is wrong with it.
        second_launch(env, "dcs-console://rollout/not-a-uuid")
        alert = wait_css(d, "[data-testid=link-error]", 20)
        assert "id: a rollout id is a UUID" in alert.text, alert.text
        screenshot(d, artifacts / "link-malformed.png")


def test_a_launch_with_a_link_opens_its_item(display, tmp_path, artifacts, demo_key):
    env = app_env(tmp_path)
    with open(tmp_path / "tauri-driver.log", "w") as log:
        # A device of the fleet, named by its IMEI, as an operator would have it from elsewhere.
        with app_session(env, log) as d:
            wait_css(d, "[data-testid=home]", 30)
            base_url, token = service(d, demo_key)
            status, states = service_get_as(base_url, "/firmware/states?limit=50", token, None)
            assert status == 200, states
            names = service_names(base_url, token)
            by_name = {name: value for (form, value), name in names.items() if form == "imei"}
            device = next(
                f"imei:{by_name[names[('uuid', s['deviceId'])]]}" for s in states["items"] if names.get(("uuid", s["deviceId"])) in by_name
            )
        with app_session(env, log, args=[link_of("device", device)]) as d:
            # The device's page, named by the listing; from there, its rows in the device table
            # (the rollout dashboard's Devices tab).
            page = wait_css(d, "[data-testid=device-view][data-uuid]", 60)
            assert device.removeprefix("imei:") in page.find_element(By.CSS_SELECTOR, "[data-testid=device-ids]").text
            uuid = page.get_attribute("data-uuid")
            assert names[("uuid", uuid)] == d.find_element(By.CSS_SELECTOR, "[data-testid=device-title]").text
            screenshot(d, artifacts / "link-device-page-at-launch.png")
            wait_css(d, "[data-testid=device-in-table]", 10).click()
            WebDriverWait(d, 60).until(lambda x: x.find_elements(By.CSS_SELECTOR, "[data-testid=nav-rollouts][aria-current=page]"))
            field = wait_css(d, "#devices-device-filter", 60)
            assert field.get_attribute("value") == uuid
            rows, _ = device_count(d, uuid, 90)
            assert rows >= 1
            assert not d.find_elements(By.CSS_SELECTOR, "[data-testid=device-filter-error]")
            screenshot(d, artifacts / "link-device-at-launch.png")


def test_keyboard_shortcuts_switch_areas_and_list_themselves(display, tmp_path, artifacts):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    env = app_env(tmp_path)
    with open(tmp_path / "tauri-driver.log", "w") as log, app_session(env, log) as d:
        wait_css(d, "[data-testid=home]", 30)
        current = lambda area: d.find_elements(By.CSS_SELECTOR, f"[data-testid=nav-{area}][aria-current=page]")  # noqa: E731
        chord = lambda key: ActionChains(d).key_down(Keys.CONTROL).send_keys(key).key_up(Keys.CONTROL).perform()  # noqa: E731
        chord("2")
        WebDriverWait(d, 10).until(lambda _: current("firmware"))
        assert d.find_element(By.CSS_SELECTOR, "[data-testid=nav-firmware]").get_attribute("aria-keyshortcuts") == "Control+2"
        # From inside a field too (Ctrl+digit types nothing).
        field = wait_css(d, "input", 20)
        field.click()
        chord("4")
        WebDriverWait(d, 10).until(lambda _: current("downlinks"))
        # `?` in a field is a character; outside one it opens the sheet, which lists the keys.
        d.find_element(By.CSS_SELECTOR, "main h1").click()
        ActionChains(d).send_keys("?").perform()
        sheet = wait_css(d, "[data-testid=shortcuts]", 10)
        screenshot(d, artifacts / "shortcuts-sheet.png")
        text = sheet.get_attribute("innerText")
        for keys in ("Ctrl", "Go to Firmware", "Go to Settings", "Escape"):
            assert keys in text, text
        # Not behind the open sheet: the area stays.
        chord("1")
        assert current("downlinks")
        ActionChains(d).send_keys(Keys.ESCAPE).perform()
        WebDriverWait(d, 10).until(lambda x: not x.find_elements(By.CSS_SELECTOR, "[data-testid=shortcuts]"))
        chord("7")
        WebDriverWait(d, 10).until(lambda _: current("settings"))
