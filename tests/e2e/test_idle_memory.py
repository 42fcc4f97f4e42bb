"""Once started, the app lets go of the code only its start ran (dcs_console::resident): the kernel
takes back its executable's read-only pages a few seconds after the first page has loaded, and the
app goes on working, reading back in what it runs."""

import os
import shutil
import time
from pathlib import Path

import conftest

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import HOME_READY, app_env, app_pids, app_session, open_firmware


def code_kib(pid: int) -> tuple[int, int]:
    """KiB of the executable's read-only pages that hold only the file's contents (the pages the app
    lets go of): resident now, and in all."""
    exe, resident, size, own, fields = Path(f"/proc/{pid}/exe").readlink().as_posix(), 0, 0, False, {}

    def close():
        nonlocal resident, size
        if own and fields.get("Anonymous", 0) == 0:
            resident += fields.get("Rss", 0)
            size += fields.get("Size", 0)

    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split(maxsplit=5)
        if "-" in head[0] and len(head) >= 5 and len(head[1]) == 4:
            close()
            own, fields = len(head) == 6 and head[5] == exe and head[1][1] != "w", {}
        elif line.split(":")[0] in ("Rss", "Size", "Anonymous"):
            fields[line.split(":")[0]] = int(line.split()[1])
    close()
    return resident, size


def test_the_app_lets_go_of_the_code_its_start_ran_and_still_works(display, tmp_path, monkeypatch):
    # The kernel leaves the pages another process maps too: another test's app, started from the
    # same file beside this one (`pytest -n 2`), kept 41 of these 42 MiB. So this app runs from
    # a copy of its own, beside the build (on its disk: pages of a file in memory, tmpfs, would
    # need swap to be let go of).
    own = conftest.APP.with_name(f"{conftest.APP.name}.own-{os.getpid()}")
    shutil.copy2(conftest.APP, own)
    # Written pages are let go of only once on disk.
    with open(own, "rb+") as f:
        os.fsync(f.fileno())
    monkeypatch.setattr(conftest, "APP", own)
    try:
        lets_go_of_its_start_up_code(app_env(tmp_path), tmp_path)
    finally:
        own.unlink()


def lets_go_of_its_start_up_code(env: dict, tmp_path: Path) -> None:
    with open(tmp_path / "tauri-driver.log", "w") as log, app_session(env, log) as driver:
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, HOME_READY))
        [pid] = app_pids(env)
        # Start-up touches code all over the binary, and Linux maps whole page-cache folios around
        # what is touched: 35 to 45 MiB of the debug build's 61 stayed resident at idle before.
        # The app lets go of it a few seconds after its page has loaded (under load, that may be
        # before its first screen is drawn).
        seen, size = [], code_kib(pid)[1]
        assert size > 0, "the app's executable is mapped"
        deadline = time.monotonic() + 30
        while not seen or seen[-1] * 3 > size and time.monotonic() < deadline:
            seen.append(code_kib(pid)[0])
            time.sleep(0.5)
        assert seen[-1] * 3 <= size, f"resident KiB of the app's {size} KiB of code, every 0.5 s from the first screen: {seen}"

        # What the app runs next is read in again: another area opens and lists what it did.
        assert open_firmware(driver), "the Firmware area lists the simulator's modules"
