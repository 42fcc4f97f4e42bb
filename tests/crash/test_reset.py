"""Mid-reset of the simulator: `dcs sim --data FILE` killed with SIGKILL while it answers
`POST /_sim/reset` (the demo data set emptied and written again), then started again on the same
file. Its data file must pass `PRAGMA integrity_check`, and hold the whole data set (every device
with a firmware state per module of its specification, as many rows of each kind as a fresh
data set): a reset cut in the middle must leave either the old state or the new one."""

import contextlib
import sqlite3
import threading
import time
import urllib.error
from collections import Counter

from conftest import POINTS, integrity, report_loop

DEVICES = 200
# What a data set is made of: each table's row count must come back after every kill.
TABLES = ["clients", "api_keys", "device_specifications", "firmware_modules", "firmware_packages", "devices",
          "firmware_states", "connector_bindings"]


def census(sim) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(sim.data, timeout=10)) as db:
        counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
        # Devices missing a state of a module of their specification.
        counts["devices without a state"] = db.execute(
            "SELECT count(*) FROM devices d JOIN firmware_modules m ON m.device_specification_id = "
            "d.device_specification_id LEFT JOIN firmware_states s ON s.device_id = d.id AND s.module_id = m.id "
            "WHERE s.device_id IS NULL"
        ).fetchone()[0]
    return counts


def reset_in_background(sim, answered: threading.Event) -> threading.Thread:
    def post():
        with contextlib.suppress(urllib.error.URLError, ConnectionError, OSError):
            sim.admin("POST", "/_sim/reset", timeout=60)
            answered.set()

    thread = threading.Thread(target=post, daemon=True)
    thread.start()
    return thread


def test_mid_reset(sim_factory, rng):
    sim = sim_factory(DEVICES)
    fresh = census(sim)
    assert fresh["devices without a state"] == 0 and fresh["firmware_states"] > 0, fresh

    # The window: one reset answered.
    t = time.monotonic()
    sim.admin("POST", "/_sim/reset", timeout=60)
    window = time.monotonic() - t
    assert census(sim) == fresh
    print(f"window: {window:.2f}s")

    landed, failures = Counter(), []
    for point in range(POINTS):
        delay = rng.uniform(0, window)
        answered = threading.Event()
        thread = reset_in_background(sim, answered)
        time.sleep(delay)
        sim.kill()
        thread.join(10)
        ok = integrity(sim.data)
        after_kill = census(sim)
        if answered.is_set():
            where = "after the answer"
        else:
            where = "during the reset" if after_kill == fresh else "during the reset, data set cut"
        landed[where] += 1
        problems = [] if ok == "ok" else [f"integrity_check after the kill: {ok}"]
        try:
            sim.start()
        except AssertionError:
            said = sim.log.read_text().strip().splitlines()[-1:]
            failures.append(f"kill point {point} (after {delay:.3f}s, {where}): it does not start again: {said}")
            # The next kill point needs a simulator: a new data file.
            sim.kill()
            for suffix in ("", "-wal", "-shm"):
                sim.data.with_name(sim.data.name + suffix).unlink(missing_ok=True)
            sim.start()
            continue
        ok = integrity(sim.data)
        if ok != "ok":
            problems.append(f"integrity_check after the restart: {ok}")
        now = census(sim)
        if now != fresh:
            problems.append(
                "after the restart: " + ", ".join(f"{k} {now[k]} (fresh {fresh[k]})" for k in now if now[k] != fresh[k])
            )
        if problems:
            failures.append(f"kill point {point} (after {delay:.3f}s, {where}): {problems}")

    report_loop("mid-reset", POINTS, POINTS - len(failures), landed, failures)
