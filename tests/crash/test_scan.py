"""Mid-scan: `dcs fleet scan` killed with SIGKILL at random points, then an incremental scan run
to the end. The fleet database must pass `PRAGMA integrity_check` and hold exactly the states the
service holds (every key once, every target as on the service): a watermark committed ahead of
its states would make the incremental scan miss the changes, a half-written page would show as
a missing or stale row."""

import contextlib
import json
import sqlite3
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from conftest import SIM_SEED, POINTS, fleet_states, integrity, kill_after, kill_when, service_states, report_loop
from shared import service_token

DEVICES = 600  # about 1,700 states for the reseller: two pages of 1,000
LATENCY_MS = 50  # each request lasts a window a kill can land in


def change_targets(sim, tenant: str, bearer: str, rng, n: int) -> set[tuple[str, str]]:
    """Sets the target of `n` random states of the reseller's own devices on the service (as
    another tool would), each to another version of its module with a firmware file."""
    with contextlib.closing(sim.db()) as db:
        states = list(
            db.execute(
                "SELECT device_id, module_id, target_version FROM firmware_states WHERE client_id = ? ORDER BY 1, 2",
                (tenant,),
            )
        )
        versions: dict[str, list[str]] = {}
        for m, v in db.execute(
            "SELECT p.module_id, p.firmware_version FROM firmware_packages p JOIN firmware_files f "
            "ON f.package_id = p.id AND f.kind = 'firmware' ORDER BY 1, 2"
        ):
            versions.setdefault(m, []).append(v)
    changes = []
    for device, module, target in rng.sample(states, n):
        choices = [v for v in versions.get(module, []) if v != target]
        if choices:
            changes.append((device, module, rng.choice(choices)))

    def put(change):
        device, module, version = change
        body = json.dumps({"targetFirmwareVersion": version}).encode()
        req = urllib.request.Request(
            f"{sim.url}/firmware/states/{device}/{module}", data=body, method="PUT", headers={
                "Content-Type": "application/json",
                "Authorization": f"Bearer {bearer}",
            }
        )
        with urllib.request.urlopen(req, timeout=30):
            return module, device

    with ThreadPoolExecutor(len(changes) or 1) as pool:
        return set(pool.map(put, changes))


def check_fleet(dcs, sim) -> list[str]:
    """What is wrong with the fleet database against the service (nothing: [])."""
    problems = []
    ok = integrity(dcs.fleet_db)
    if ok != "ok":
        problems.append(f"integrity_check: {ok}")
    rows = fleet_states(dcs.fleet_db)
    keys = Counter((m, d) for m, d, _ in rows)
    dup = [k for k, n in keys.items() if n > 1]
    if dup:
        problems.append(f"{len(dup)} states twice, e.g. {dup[0]}")
    service = service_states(sim, dcs.tenant)
    held = {(m, d): t for m, d, t in rows}
    per_module = lambda states: Counter(m for m, _ in states)  # noqa: E731
    if per_module(held) != per_module(service):
        problems.append(f"states per module: fleet {per_module(held)} != service {per_module(service)}")
    missing = service.keys() - held.keys()
    extra = held.keys() - service.keys()
    if missing or extra:
        problems.append(f"{len(missing)} states missing, {len(extra)} the service does not have")
    stale = [k for k in service.keys() & held.keys() if service[k] != held[k]]
    if stale:
        k = stale[0]
        problems.append(f"{len(stale)} targets differ from the service's, e.g. {k}: {held[k]} != {service[k]}")
    return problems


def forget_fleet(dcs) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = dcs.fleet_db.with_name(dcs.fleet_db.name + suffix)
        if p.exists():
            p.unlink()


def test_mid_scan(sim_factory, dcs, rng):
    sim = sim_factory(DEVICES)
    dcs.add_profile(sim)
    bearer = service_token(sim.url, json.loads(dcs.run("sim", "demo-key", "--seed", SIM_SEED, "--json").stdout))
    sim.latency(LATENCY_MS)

    # The windows: how long each kind of scan lasts when nothing kills it.
    window = {}
    t = time.monotonic()
    dcs.run("fleet", "scan")
    window["first"] = time.monotonic() - t
    change_targets(sim, dcs.tenant, bearer, rng, 3)
    t = time.monotonic()
    dcs.run("fleet", "scan")
    window["incremental"] = time.monotonic() - t
    t = time.monotonic()
    dcs.run("fleet", "scan", "--full")
    window["full"] = time.monotonic() - t
    assert check_fleet(dcs, sim) == []
    print("windows:", {k: round(v, 3) for k, v in window.items()})

    landed, failures = Counter(), []
    for point in range(POINTS):
        mode = rng.choice(["first", "incremental", "full"])
        if mode == "first":
            forget_fleet(dcs)
            changed = set(service_states(sim, dcs.tenant))
        else:
            changed = change_targets(sim, dcs.tenant, bearer, rng, rng.randint(1, 5))
        service = service_states(sim, dcs.tenant)

        def written() -> int:
            """How many of the changed states the fleet database holds as the service does."""
            if not dcs.fleet_db.exists():
                return 0
            try:
                held = {(m, d): t for m, d, t in fleet_states(dcs.fleet_db)}
            except sqlite3.OperationalError:
                # Read while `dcs` changes the schema (a first scan drops and builds its
                # indexes): SQLite says "database schema has changed"; the next poll reads again.
                return 0
            return sum(1 for k in changed if k in held and held[k] == service[k])

        delay = rng.uniform(0, window[mode])
        proc = dcs.spawn("fleet", "scan", *(["--full"] if mode == "full" else []))
        if rng.random() < 0.5:
            killed = kill_after(proc, delay)
        else:
            # At a chosen point: once k of the changed states are written (a page committed).
            k = rng.randint(1, len(changed))
            killed = kill_when(proc, lambda: written() >= k, window[mode] * 2)

        # Where it landed: how much of what changed the database held when the scan died.
        if not killed:
            where = "after the end"
        else:
            seen = written()
            where = "none written" if seen == 0 else "all written" if seen == len(changed) else "part written"
        landed[f"{mode} scan, {where}"] += 1

        out = dcs.run("fleet", "scan", check=False)
        problems = check_fleet(dcs, sim) if out.returncode == 0 else [f"the scan after the kill failed: {out.stderr}"]
        if problems:
            failures.append(f"kill point {point} ({mode} scan killed, {where}): {problems}")

    report_loop("mid-scan", POINTS, POINTS - len(failures), landed, failures)
