"""A module's detail (its fields, packages and firmware states, the module filter sent to the
service only on opt-in) and the deprecated beta actuator composer (rules beside their fields,
a confirmation, the answer shown as it came), on the app's own simulator."""

import json

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import screenshot
from test_profiles import click, type_into, wait_css


def text(driver, selector):
    return driver.find_element(By.CSS_SELECTOR, selector).text


def test_a_modules_detail_and_its_states(app, artifacts):
    click(app, "[data-testid=nav-firmware]")
    wait_css(app, "[data-testid=module-details]")
    name = WebDriverWait(app, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=module-name]"))[0].get_attribute("textContent").strip()
    click(app, "[data-testid=module-details]")
    wait_css(app, "[data-testid=module-facts]")
    assert text(app, "[data-testid=module-detail-name]") == name
    created = text(app, "[data-testid=module-created]")
    # Who, in words: the service's internal `principal/<uuid>` only in the tooltip.
    assert " by API caller " in created and "principal/" not in created, created
    WebDriverWait(app, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=module-package]"))
    screenshot(app, artifacts / "module-detail.png")

    # Without the opt-in only clientId goes to the service: the module is matched here.
    click(app, "[data-testid=states-load]")
    wait_css(app, "[data-testid=states-count]")
    assert "not on the service: moduleId" in text(app, "[data-testid=states-note]")
    # With it the simulator filters: every state read is the module's, and nothing is said.
    click(app, "[data-testid=states-on-service]")
    click(app, "[data-testid=states-load]")
    count = WebDriverWait(app, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=states-count]"))[0].text
    read = count.split(" of ")[1].split(" ")[0]
    assert count.startswith(f"{read} of {read} "), count
    assert not app.find_elements(By.CSS_SELECTOR, "[data-testid=states-note]")
    screenshot(app, artifacts / "module-states.png")


def test_the_beta_composer_checks_confirms_and_shows_the_raw_answer(app, artifacts):
    click(app, "[data-testid=nav-downlinks]")
    click(app, "[data-testid=new-beta-downlink]")
    wait_css(app, "[data-testid=beta-composer]")
    # Read once shown: while the dialog opens its text can still read as empty.
    WebDriverWait(app, 10).until(lambda d: "deprecated" in text(d, "[data-testid=beta-deprecated]"))
    type_into(app, "device", "imei:350000000000001")
    type_into(app, "port", "x")
    type_into(app, "payloads", "0g")
    WebDriverWait(app, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=error-payloads]"))
    assert "DevEUI" in text(app, "[data-testid=error-device]")
    assert "integer" in text(app, "[data-testid=error-port]")
    screenshot(app, artifacts / "beta-composer-errors.png")

    # A LoRa device of the seeded data set (the actuator list shows their DevEUI URNs).
    type_into(app, "device", "deveui:70b3d57ed0000015")
    type_into(app, "port", "5")
    type_into(app, "payloads", "0a0b")
    click(app, "[data-testid=send-beta-downlink]")
    wait_css(app, "[data-testid=confirm-dialog]")
    click(app, "[data-testid=confirm-ok]")
    answer = WebDriverWait(app, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=beta-answer]"))[0].text
    json.loads(answer)  # shown as the JSON it came as
    screenshot(app, artifacts / "beta-answer.png")
