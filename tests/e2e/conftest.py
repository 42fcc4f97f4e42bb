"""Fixtures of the end-to-end tests: a display, tauri-driver, and the real app under WebDriver.

The app is the built binary (target/debug/dcs-console with the UI embedded). tauri-driver
starts it through Debian's WebKitWebDriver; the app starts its simulator in-process, as it
does for a user with no configuration.
"""

import contextlib
import fcntl
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import InvalidSessionIdException, JavascriptException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from shared import service_token, x_display  # noqa: E402,F401 (service_token: for the tests)

TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
# The app under test: the debug build by default; the installer test points it at the installed one.
APP = Path(os.environ.get("DCS_APP_BINARY", TARGET / "debug" / "dcs-console"))
DCS = TARGET / "debug" / "dcs"
# Home's figures on screen, or what it says when there are none yet: the first screen is drawn.
HOME_READY = "[data-testid=home-health-empty], [data-testid=home-totals]"
ARTIFACTS = Path(os.environ.get("DCS_E2E_ARTIFACTS", ROOT / "tests" / "e2e" / "artifacts"))
# A seed other than the default, so the test sees the data of the simulator it configured.
SEED = "7"
# The simulator variant (docs/simulator-assumptions.md, "The alt variant"): `dcs sim` gets it as
# `--variant`; the app's built-in simulator reads the same DCS_SIM_VARIANT from its environment.
VARIANT = os.environ.get("DCS_SIM_VARIANT", "").strip() or "reference"


# How much longer every wait may take when tests run side by side (`pytest -n 2`, as the test
# command runs them): an app then shares the two cores with another test's app, upload or scan,
# and a screen that shows in 2 s alone can take 15. A wait's limit is a ceiling that a passing
# test never reaches, so raising it costs a failing test time and a passing one nothing; it is
# raised here, once, rather than in each of the suite's two hundred waits. Tests that measure
# time against time (marked `alone`) run after the others, one at a time.
PATIENCE = 3.0 if os.environ.get("PYTEST_XDIST_WORKER") else 1.0
_wait_init = WebDriverWait.__init__


def _patient_init(self, driver, timeout, *args, **kwargs):
    _wait_init(self, driver, timeout * PATIENCE, *args, **kwargs)


WebDriverWait.__init__ = _patient_init


def deadline(seconds: float) -> float:
    """The `time.monotonic()` by which a hand-written wait of `seconds` gives up (PATIENCE, as
    for `WebDriverWait`)."""
    return time.monotonic() + seconds * PATIENCE


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "alone: compares durations, so it runs after the others, one at a time (scripts/test-session.sh)"
    )


def by_variant(reference, alt):
    """What the running simulator variant does where the service reference leaves it open
    (docs/simulator-assumptions.md): a test that depends on such a choice asserts the exact
    behaviour of the variant it runs against."""
    return alt if VARIANT == "alt" else reference


def service_url(driver, timeout: float = 30) -> str:
    """The app's service address, as its status bar shows it: once the app's session info is
    read, which may come after the first screen (Home does not wait for it)."""
    return WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: next((e.get_attribute("data-url") for e in d.find_elements(By.CSS_SELECTOR, "[data-testid=service-url]")), None)
    )


def service(driver, demo_key: dict) -> tuple[str, str]:
    """The app's service address (no trailing slash) and an access token for the demo key there."""
    base_url = service_url(driver).rstrip("/")
    return base_url, service_token(base_url, demo_key)


def free_port() -> int:
    """A port free now, below the kernel's ephemeral range: a port from that range (what binding
    port 0 gives) may be handed to another process's bind(0) (an app's built-in simulator)
    before the driver that was meant to listen on it binds it."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(200):
        port = random.randrange(max(1024, low - 12000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    give_up = deadline(timeout)
    while time.monotonic() < give_up:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port} after {timeout}s")


@pytest.fixture(scope="session")
def display():
    """An X display: the caller's, or a private Xvfb."""
    with x_display() as d:
        yield d


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def demo_key() -> dict:
    """The simulator's demo reseller key for SEED, as `dcs sim demo-key` prints it."""
    out = subprocess.run([str(DCS), "sim", "demo-key", "--seed", SEED, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def app_env(tmp_path, extra: dict | None = None) -> dict:
    """The environment of an app of its own for a test: `extra` (e.g. a GTK theme), the demo
    seed, its own config, cache and data folders (`DCS_DATA_DIR`: the fleet database, the
    built-in simulator's state, the logs; XDG_DATA_HOME: the web view's storage), and the web
    view's storage forgotten (a first start). The keyring is the test session's daemon, reached
    over D-Bus: its files are where the daemon was started, not in these folders.

    XDG_DATA_HOME is the test's own: the web view keeps its local storage (the area, tab and
    filters the app remembers) there, and two tests side by side (`pytest -n 2`) sharing it
    would each read what the other's app remembered, or lose theirs when the other's test
    forgot it (a CI run: the home test's second start opened on Home, not where its first
    start had left, as the other worker's app had started meanwhile)."""
    env = dict(os.environ)
    env.update(extra or {})
    env.update(
        DCS_SIM_SEED=SEED,
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    env.setdefault("DCS_DATA_DIR", str(tmp_path / "app-data"))
    # Leases of rollouts (one driver at a time) of 5 s: an app ended in the middle of a rollout
    # holds it that long before its next start, or a runner, takes it over, not a minute.
    env.setdefault("DCS_LEASE_SECONDS", "5")
    fresh_web_storage(env)
    return env


@pytest.fixture
def app(request, display, tmp_path):
    """A WebDriver session on a fresh start of the app, with its own config and data folders.
    Parametrize indirectly with a dict to add environment variables (e.g. a GTK theme)."""
    assert APP.exists(), f"build the app first: {APP} is missing"
    env = app_env(tmp_path, getattr(request, "param", {}))
    with open(tmp_path / "tauri-driver.log", "w") as log, app_session(env, log) as driver:
        yield driver


# The web view's own data (local storage: the area, tab and filters the app remembers) lives in
# $XDG_DATA_HOME/<identifier>.
WEB_DATA = json.loads((ROOT / "src-tauri" / "tauri.conf.json").read_text())["identifier"]


def fresh_web_storage(env: dict) -> Path:
    """Forgets what the web view kept from an earlier test (each test starts as a first start);
    answers the folder, which the app's next sessions in this test share."""
    folder = Path(env["XDG_DATA_HOME"]) / WEB_DATA
    shutil.rmtree(folder, ignore_errors=True)
    return folder


def record_ipc(driver, hash_: str | None = None, timeout: float = 60) -> None:
    """Turns on the opt-in IPC recorder (`localStorage["dcs.recordIpc"]`, read at page load) and
    reloads, optionally at `hash_`; returns once the new page records. Waiting for the recorder
    itself, not for an element, is what tells the new page from the old one: the old page still
    shows its elements for a moment after `location.reload()` is asked for. A page that came back
    without it (the setting not yet stored where the new page reads it) is reloaded again."""
    go = f"location.hash = {json.dumps(hash_)}; " if hash_ else ""
    driver.execute_script("localStorage.setItem('dcs.recordIpc', '1')")
    end = deadline(timeout)
    while True:
        driver.execute_script(f"{go}location.reload();")
        try:
            WebDriverWait(driver, 20, ignored_exceptions=(StaleElementReferenceException, JavascriptException)).until(
                lambda d: d.execute_script("return document.readyState === 'complete' && Array.isArray(window.__dcsIpcLog)")
            )
            return
        except TimeoutException:
            if time.monotonic() >= end:
                raise AssertionError(
                    "the page did not come back recording IPC (only debug builds started with DCS_E2E_RECORD_IPC=1 have the recorder)"
                ) from None


def ipc_calls(driver) -> list[str]:
    """The commands the page called so far, oldest first (the recorder that record_ipc turned on)."""
    return driver.execute_script("return window.__dcsIpcLog.map(e => e.cmd)")


def rows_loaded(driver):
    """The Firmware area's module rows once loaded (fails on an error shown instead)."""
    if driver.find_elements(By.CSS_SELECTOR, "[data-testid=loading]"):
        return False
    if driver.find_elements(By.CSS_SELECTOR, "[data-testid=error]"):
        raise AssertionError("the app shows an error: " + driver.find_element(By.CSS_SELECTOR, "[data-testid=error]").text)
    return driver.find_elements(By.CSS_SELECTOR, "[data-testid=module-name]")


def open_firmware(driver, timeout: float = 30):
    """Goes to Firmware through the nav (the app opens on Home, or where it was left) and answers
    its module name cells once listed."""
    WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=nav-firmware]")
    )[0].click()
    WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=nav-firmware][aria-current=page]")
    )
    return WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(rows_loaded)


@contextlib.contextmanager
def app_session(env: dict, log=subprocess.DEVNULL, on_start=None, args=()):
    """Starts tauri-driver and, through it, the app (`APP`, with `args`) in a WebDriver session;
    `on_start` is called just before the session is asked for (the benchmarks time the start
    from there). Quits both at the end, and waits until the app has ended: the next session on
    the same data folder would otherwise hand itself to it (one app per data folder) and end."""
    # A native dialog, an OS drop or a window manager's close cannot be driven from here: the
    # debug build takes the drop and close events the tests send from the page as such when
    # told so (a release build cannot).
    env = {**env, "DCS_E2E_DROPS": "1", "DCS_E2E_RECORD_IPC": "1", "DCS_E2E_CLOSE": "1"}
    for attempt in range(3):
        port, native = free_port(), free_port()
        driver_proc = subprocess.Popen(
            ["tauri-driver", "--port", str(port), "--native-port", str(native)], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            # tauri-driver answers on `port` and hands sessions to WebKitWebDriver on `native`.
            wait_for_port(port)
            wait_for_port(native)
            options = ArgOptions()
            options.set_capability("browserName", "wry")
            options.set_capability("tauri:options", {"application": str(APP), "args": list(args)})
            if on_start:
                on_start()
            try:
                driver = new_session(f"http://127.0.0.1:{port}", options)
            except Exception:
                # Another process took one of the ports before the driver pair listened on it
                # (WebKitWebDriver: "Unable to listen for HTTP server"): new ports, a new pair.
                if attempt == 2:
                    raise
                continue
            driver.implicitly_wait(0)
            try:
                yield driver
            except Exception:
                print_screen(driver)
                raise
            finally:
                crashed = session_crashed(driver)
                with contextlib.suppress(Exception):
                    driver.quit()
                if crashed:
                    # WebKitWebDriver drops a session whose web process crashed or hung without
                    # ending the app: end it here, so a rerun (or the next test) finds its data
                    # folder free, and say so.
                    end_app(env)
                    raise WebProcessCrashed("the app's web process crashed or hung: WebKitWebDriver dropped the session (page crash or hang)")
                wait_until_ended(env)
            return
        finally:
            driver_proc.terminate()
            try:
                driver_proc.wait(10)
            except subprocess.TimeoutExpired:
                driver_proc.kill()


# What the page shows, for a failure's report: the area, its heading and the text on screen.
SCREEN = """return {hash: location.hash, area: document.querySelector('[aria-current=page]')?.getAttribute('data-testid'),
  heading: document.querySelector('main h1')?.innerText, text: document.body.innerText.slice(0, 3000)}"""


def print_screen(driver) -> None:
    """Prints what the page shows when a test fails inside a session (pytest reports it under
    "Captured stdout"), so that a CI log says what was on screen instead of only which wait
    ran out, and saves a screenshot of it in the artifacts. A session too broken to answer
    prints that it did not."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "a test").split(" ")[0]
    shot = ARTIFACTS / ("failed-" + "".join(c if c.isalnum() else "-" for c in test.split("::")[-1])[:120] + ".png")
    with contextlib.suppress(Exception):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        screenshot(driver, shot)
        print(f"--- the screen when {test} failed: {shot}")
    try:
        shown = driver.execute_script(SCREEN)
        print(f"--- on screen when the test failed: area {shown['area']!r}, heading {shown['heading']!r}, address {shown['hash']!r}")
        print(shown["text"])
        print("---")
    except Exception as e:  # noqa: BLE001 - a report of what could be seen, never a second failure
        print(f"--- the page did not say what it shows: {type(e).__name__}: {str(e)[:200]}")


class WebProcessCrashed(AssertionError):
    """The web process of the app (WebKitGTK's) crashed or hung during a test."""


def crashed_web_process(error) -> bool:
    """Whether a test's failure is its web process crashing (see `pytest_collection_modifyitems`)."""
    return isinstance(error, WebProcessCrashed) or "page crash or hang" in str(error)


def pytest_collection_modifyitems(items):
    """A test whose web process crashed or hung runs once more (pytest-rerunfailures), and the
    summary says so ("rerun"); any other failure fails at once. One CI run lost a test to such a
    crash inside WebKitGTK while typing in a form, which no rerun here reproduced."""
    for item in items:
        item.add_marker(pytest.mark.flaky(reruns=1, condition=crashed_web_process))


def session_crashed(driver) -> bool:
    """The session is gone though it was never quit: WebKitWebDriver dropped it because its web
    process crashed or hung ("session deleted because of page crash or hang"; later commands get
    "invalid session id"). Right after a crash, commands fail otherwise for a moment ("Could not
    parse script result"): asked again for up to 5 s. A test that merely failed leaves a session
    that runs a script."""
    for _ in range(10):
        try:
            driver.execute_script("return 1")
            return False
        except InvalidSessionIdException:
            return True
        except Exception:  # noqa: BLE001 (not yet told apart: asked again)
            time.sleep(0.5)
    return True


def app_pids(env: dict) -> list[int]:
    """The running apps (`APP`) of `env`'s data folder, found by their environment."""
    mark, found = f"DCS_DATA_DIR={env.get('DCS_DATA_DIR')}".encode(), []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if Path(os.readlink(proc / "exe")) == APP.resolve() and mark in (proc / "environ").read_bytes().split(b"\0"):
                    found.append(int(proc.name))
    return found


def end_app(env: dict) -> None:
    """Kills the app of `env`'s data folder, then waits until the folder is free."""
    for pid in app_pids(env):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
    wait_until_ended(env)


def wait_until_ended(env: dict, timeout: float = 15.0) -> None:
    """Waits until no app holds the data folder of `env` (its `instance.lock`, which the OS
    releases when the app's process ends)."""
    lock = Path(env.get("DCS_DATA_DIR") or Path(env["XDG_DATA_HOME"]) / "dcs-console") / "instance.lock"
    if not lock.exists():
        return
    give_up = deadline(timeout)
    with open(lock, "rb") as f:
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(f, fcntl.LOCK_UN)
                return
            except BlockingIOError:
                if time.monotonic() > give_up:
                    raise AssertionError(f"the app still holds {lock} {timeout} s after its session ended")
                time.sleep(0.1)


def new_session(url: str, options: ArgOptions, attempts: int = 5):
    """A WebDriver session; the driver pair may drop the very first connection while starting."""
    for attempt in range(attempts):
        try:
            return webdriver.Remote(command_executor=url, options=options)
        except Exception:
            if attempt == attempts - 1:
                raise
            time.sleep(0.5 * (attempt + 1))


def screenshot(driver, path: Path) -> None:
    """Saves a screenshot once WebKit has painted what the DOM holds (two animation frames): what
    the X display shows where the window is (ImageMagick's `import`), as an operator would see
    it, a dialog over the window included. Not WebKitWebDriver's own screenshot: where WebKit
    draws without compositing (the app's choice without a GPU, src-tauri/src/rendering.rs, as
    under Xvfb) that command answers once and then never again, and the session hangs."""
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "requestAnimationFrame(() => requestAnimationFrame(() => done()));"
    )
    time.sleep(0.3)
    r = driver.get_window_rect()
    subprocess.run(
        ["import", "-silent", "-window", "root", "-crop", f"{r['width']}x{r['height']}+{r['x']}+{r['y']}", "+repage", str(path)],
        check=True,
        timeout=60,
    )


def service_get(base_url: str, path: str, token: str) -> dict:
    req = urllib.request.Request(base_url.rstrip("/") + path if path.startswith("/") else path)
    req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=10) as res:
        return json.load(res)


def create_package(base_url: str, token: str, version: str, module: dict | None = None) -> tuple[dict, dict]:
    """Creates package `version` of `module` (by default the first module by name) over HTTP, as
    another tool would: answers (module, package)."""
    from test_firmware import all_items, send  # not at the top: test_firmware imports conftest

    if module is None:
        module = sorted(all_items(base_url, token, "/firmware/modules?limit=100"), key=lambda m: m["name"])[0]
    body = {"deviceSpecificationId": module["deviceSpecificationId"], "moduleId": module["id"], "firmwareVersion": version}
    return module, send(base_url, token, "POST", "/firmware/packages", body)


@pytest.fixture
def sim_process():
    """`dcs sim` in its own process on a free port, with the same seed: a service the app
    reaches over real HTTP through a profile. Yields its base URL and /_sim/info."""
    proc = subprocess.Popen(
        [str(DCS), "sim", "--port", "0", "--seed", SEED, "--devices-per-client", "50", "--variant", VARIANT],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        first = proc.stdout.readline().strip()
        base_url = first.rsplit(" ", 1)[-1]
        assert base_url.startswith("http://127.0.0.1:"), first
        with urllib.request.urlopen(base_url + "/_sim/info", timeout=10) as res:
            info = json.load(res)
        yield base_url, info
    finally:
        proc.terminate()
        proc.wait(10)


def service_get_as(base_url: str, path: str, token: str, customer: str | None):
    """GET as the reseller itself or, with `customer`, in that customer's environment. Returns
    (status, body)."""
    req = urllib.request.Request(base_url.rstrip("/") + path)
    req.add_header("Authorization", f"Bearer {token}")
    if customer:
        req.add_header("Service-Security-Context", f"client:uuid:{customer}")
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.load(res)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def type_word(driver, word):
    """Types the word a confirmation asks for, once its field can take it (the dialog opens as
    a modal a frame after it is in the page)."""
    from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException

    def attempt(d):
        el = d.find_element(By.CSS_SELECTOR, "[data-testid=confirm-typed]")
        if el.get_attribute("value"):
            el.clear()
        el.send_keys(word)
        return el.get_attribute("value") == word

    WebDriverWait(driver, 10, ignored_exceptions=(StaleElementReferenceException, ElementNotInteractableException)).until(attempt)


def audit_rows(driver, timeout: float = 20) -> list[tuple[str, str]]:
    """Opens the Audit area and answers its records, oldest first, as (operation, outcome)."""
    WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=nav-audit]")
    )[0].click()
    WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=audit-table], [data-testid=empty]")
    )
    rows = driver.execute_script(
        "return [...document.querySelectorAll('[data-testid=audit-row]')].map(r => [r.dataset.operation, r.dataset.result])"
    )
    return [tuple(r) for r in reversed(rows)]


def dcs_audit_verify(env: dict) -> subprocess.CompletedProcess:
    """`dcs audit verify` on the audit log of the app's data folder."""
    return subprocess.run([str(DCS), "audit", "verify"], env=env, capture_output=True, text=True, timeout=60)


MINIBROWSER = Path("/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser")


@contextlib.contextmanager
def browser():
    """A WebDriver session of WebKitGTK's MiniBrowser (shipped with the web engine the app runs
    on): for pages the app writes, opened as a user's browser would open them."""
    assert MINIBROWSER.exists(), f"{MINIBROWSER} is missing (package libwebkit2gtk-4.1-0)"
    port = free_port()
    driver_process = subprocess.Popen(["WebKitWebDriver", f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        options = ArgOptions()
        options.set_capability("browserName", "MiniBrowser")
        options.set_capability("webkitgtk:browserOptions", {"binary": str(MINIBROWSER), "args": ["--automation"]})
        d = new_session(f"http://127.0.0.1:{port}", options)
        try:
            yield d
        finally:
            d.quit()
    finally:
        driver_process.kill()
        driver_process.wait()
