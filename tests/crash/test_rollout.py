"""Mid-wave-start: `dcs rollout start --yes` and `dcs rollout watch` killed with SIGKILL while a
wave's targets are being set, several times per rollout; after each kill the rollout is watched
again (or started again when it was not created yet), and finally watched until it completes.

Then, per rollout: the fleet database passes `PRAGMA integrity_check` and has one
rollout_devices row per device of the module; every device of every started wave has the
rollout's version as its target on the service, set exactly once (the simulator counts the
target sets of each state, `firmware_states.target_sets`); no device of a wave not started and
no state outside the rollout was touched."""

import contextlib
import math
import subprocess
import time
from collections import Counter

from conftest import POINTS, integrity, kill_after, kill_when, read_only, report_loop

DEVICES = 600  # about 157 devices per module of the reseller's own
LATENCY_MS = 50  # each set-target request lasts a window (8 at a time)
SPEED = 3000  # devices update within a second
WAVES = "10,40,100"
INTERVAL = "0.2"
KILLS_PER_ROLLOUT = 5
FINAL_TIMEOUT = 25  # seconds a last watch may take before the rollout counts as stuck


def target_sets(sim) -> dict[tuple[str, str], int] | None:
    """(device, module) -> how many times the service set that state's target; None while the
    simulator does not count them."""
    with contextlib.closing(sim.db()) as db:
        columns = {r[1] for r in db.execute("PRAGMA table_info(firmware_states)")}
        if "target_sets" not in columns:
            return None
        return {(d, m): n for d, m, n in db.execute("SELECT device_id, module_id, target_sets FROM firmware_states")}


def service_targets(sim) -> dict[tuple[str, str], str | None]:
    with contextlib.closing(sim.db()) as db:
        return {(d, m): t for d, m, t in db.execute("SELECT device_id, module_id, target_version FROM firmware_states")}


def set_on_service(sim, module: str, version: str) -> int:
    with contextlib.closing(sim.db()) as db:
        return db.execute(
            "SELECT count(*) FROM firmware_states WHERE module_id = ? AND target_version = ?", (module, version)
        ).fetchone()[0]


def find_rollout(dcs, module: str, version: str) -> dict | None:
    for r in dcs.json("rollout", "list"):
        if r.get("moduleId") == module and r.get("version") == version:
            return r
    return None


def fleet_rollout(dcs, rollout_id: str):
    """(current_wave, {device: (wave, set_at)}) of a rollout in the fleet database."""
    with contextlib.closing(read_only(dcs.fleet_db)) as db:
        current = db.execute("SELECT current_wave FROM rollouts WHERE id = ?", (rollout_id,)).fetchone()[0]
        devices = db.execute("SELECT device_id, wave, set_at FROM rollout_devices WHERE rollout = ?", (rollout_id,))
        rows = list(devices)
    return current, rows


def module_devices(sim, tenant: str, module: str) -> set[str]:
    with contextlib.closing(sim.db()) as db:
        return {
            r[0]
            for r in db.execute(
                "SELECT device_id FROM firmware_states WHERE module_id = ? AND client_id = ?", (module, tenant)
            )
        }


def start_args(module: str, version: str) -> list[str]:
    return [
        "--yes",
        "rollout",
        "start",
        "--module",
        module,
        "--version",
        version,
        "--all",
        "--waves",
        WAVES,
        "--success",
        "1",
        "--error",
        "100",
    ]


def landing(dcs, sim, module: str, version: str, total: int) -> tuple[str, str]:
    """Where a kill landed: before the rollout was created, with no target set yet, in the
    middle of a wave, between waves, or after the last wave was started; and the evidence (the
    targets on the service, the set_at in the database)."""
    rollout = find_rollout(dcs, module, version)
    if rollout is None:
        return "before create", ""
    on_service = set_on_service(sim, module, version)
    current, rows = fleet_rollout(dcs, rollout["id"])
    recorded = sum(1 for _, _, at in rows if at is not None)
    started = sum(1 for _, wave, _ in rows if wave <= current)
    evidence = f"service {on_service} targets, database {recorded} set_at of {total} (wave {current})"
    if on_service == 0:
        return "created, no target set", evidence
    if on_service == total:
        return "after the last wave", evidence
    if on_service == started == recorded:
        return "between waves", evidence
    return "mid-wave", evidence


def check_rollout(dcs, sim, module, version, devices, before_targets, before_sets) -> list[str]:
    problems = []
    ok = integrity(dcs.fleet_db)
    if ok != "ok":
        problems.append(f"integrity_check: {ok}")
    rollout = find_rollout(dcs, module, version)
    if rollout is None:
        return problems + ["the rollout is not in `dcs rollout list`"]
    # --success 1 --error 100: no threshold can pause it, so a paused rollout is a recovery bug.
    if rollout.get("state") != "completed":
        problems.append(f"rollout {rollout['id']} is {rollout.get('state')}, not completed")
    current, rows = fleet_rollout(dcs, rollout["id"])
    per_device = Counter(d for d, _, _ in rows)
    if set(per_device) != devices or any(n != 1 for n in per_device.values()):
        problems.append(
            f"rollout_devices: {len(rows)} rows for {len(per_device)} devices, the module has {len(devices)}"
        )
    targets, sets = service_targets(sim), target_sets(sim)
    started = {d for d, wave, _ in rows if wave <= current}
    wrong = Counter()
    for d in devices:
        key = (d, module)
        if d in started and targets.get(key) != version:
            wrong[f"devices of started waves without the target {version} on the service"] += 1
        if d not in started and targets.get(key) != before_targets.get(key):
            wrong["devices of waves not started with their target changed"] += 1
        if sets is not None:
            n = sets[key] - before_sets.get(key, 0)
            if n != (1 if d in started else 0):
                wrong[f"devices whose target was set {n} times (wave started: {d in started})"] += 1
    problems += [f"{n} {what}" for what, n in sorted(wrong.items())]
    outside = [k for k in targets if not (k[1] == module and k[0] in devices)]
    touched = [k for k in outside if targets[k] != before_targets.get(k)]
    if sets is not None:
        touched += [k for k in outside if sets[k] != before_sets.get(k, 0)]
    if touched:
        problems.append(f"{len(touched)} states outside the rollout touched, e.g. {touched[0]}")
    return problems[:10]


def prepare(dcs, sim, tmp_path, rollouts: int) -> list[tuple[str, str]]:
    """(module, version) of each rollout: a new version of each module in turn, its package
    created and a small firmware file uploaded, then a full scan."""
    dcs.run("fleet", "scan")
    with contextlib.closing(read_only(dcs.fleet_db)) as db:
        modules = list(db.execute("SELECT module_id, spec_id FROM modules ORDER BY module_id"))
    firmware = tmp_path / "fw.bin"
    firmware.write_bytes(b"\x7fFW" * 300)
    plan = []
    for r in range(rollouts):
        module, spec = modules[r % len(modules)]
        version = f"9.{r}.0"
        package = dcs.json(
            "firmware", "packages", "create", "--device-specification-id", spec, "--module-id", module,
            "--firmware-version", version,
        )
        dcs.run("firmware", "files", "upload", package["id"], str(firmware))
        plan.append((module, version))
    dcs.run("fleet", "scan", "--full")
    return plan


def test_mid_wave_start(sim_factory, dcs, rng, tmp_path):
    sim = sim_factory(DEVICES)
    dcs.add_profile(sim)
    plan = prepare(dcs, sim, tmp_path, 1 + math.ceil(POINTS / 2))
    sim.latency(LATENCY_MS)
    sim.speed(SPEED)
    counting = target_sets(sim) is not None

    # The windows, from a rollout nothing kills: the start command, and a watch from its start
    # until every wave's targets are on the service.
    module, version = plan[0]
    devices = module_devices(sim, dcs.tenant, module)
    before_targets, before_sets = service_targets(sim), target_sets(sim) or {}
    start = dcs.spawn(*start_args(module, version))
    t, first_target = time.monotonic(), None
    while start.poll() is None:
        if first_target is None and set_on_service(sim, module, version) > 0:
            first_target = time.monotonic() - t
        time.sleep(0.01)
    assert start.returncode == 0, start.stderr.read()
    # The start command's kills land from a little before its first target is set to its end.
    start_window = (max(0.0, (first_target or 0) - 0.1), time.monotonic() - t)
    watch = dcs.spawn("rollout", "watch", find_rollout(dcs, module, version)["id"], "--interval", INTERVAL)
    t, first_wave, next_target = time.monotonic(), set_on_service(sim, module, version), None
    while (n := set_on_service(sim, module, version)) < len(devices):
        assert time.monotonic() - t < FINAL_TIMEOUT, "the calibration rollout does not start its waves"
        if next_target is None and n > first_wave:
            next_target = time.monotonic() - t
        time.sleep(0.01)
    # A watch's kills land from a little before it sets its first target (it starts, refreshes
    # and checks the thresholds first) to when every wave is started.
    watch_window = (max(0.0, (next_target or 0) - 0.1), time.monotonic() - t)
    watch.wait(FINAL_TIMEOUT)
    assert check_rollout(dcs, sim, module, version, devices, before_targets, before_sets) == []
    print("windows: start {:.2f}-{:.2f}s, watch {:.2f}-{:.2f}s".format(*start_window, *watch_window))

    landed, failures, points, recovered = Counter(), [], 0, 0
    for module, version in plan[1:]:
        if points >= POINTS:
            break
        devices = module_devices(sim, dcs.tenant, module)
        before_targets, before_sets = service_targets(sim), target_sets(sim) or {}
        kills, evidence = 0, []
        while kills < KILLS_PER_ROLLOUT and points + kills < POINTS:
            rollout = find_rollout(dcs, module, version)
            if rollout is None:
                proc, window = dcs.spawn(*start_args(module, version)), start_window
            else:
                if set_on_service(sim, module, version) == len(devices):
                    break  # every wave started: nothing left to kill in the middle of
                proc = dcs.spawn("rollout", "watch", rollout["id"], "--interval", INTERVAL)
                window = watch_window
            if rng.random() < 0.5:
                kill_after(proc, rng.uniform(*window))
            else:
                # At a chosen point: once the service has k more targets of the rollout than now
                # (k short of what is left), i.e. in the middle of setting a wave.
                was = set_on_service(sim, module, version)
                k = rng.randint(1, max(1, len(devices) - was - 1))
                kill_when(proc, lambda: set_on_service(sim, module, version) >= was + k, window[1])
            where, why = landing(dcs, sim, module, version, len(devices))
            landed[where] += 1
            evidence.append(f"{where}: {why}")
            kills += 1
        points += kills

        # Restart until the end: start if no kill let it be created, then watch to the end.
        if find_rollout(dcs, module, version) is None:
            dcs.run(*start_args(module, version))
        last = dcs.spawn("rollout", "watch", find_rollout(dcs, module, version)["id"], "--interval", INTERVAL)
        t = time.monotonic()
        try:
            last.wait(FINAL_TIMEOUT)
            # 0: completed (1 would be paused or aborted, which nothing here may cause).
            problems = [] if last.returncode == 0 else [f"watch exit {last.returncode}: {last.stderr.read()}"]
        except subprocess.TimeoutExpired:
            kill_after(last, 0)
            stuck = landing(dcs, sim, module, version, len(devices))[1]
            problems = [f"stuck: the last watch did not end in {FINAL_TIMEOUT}s ({stuck})"]
        print(f"{version}: {kills} kills, last watch {time.monotonic() - t:.2f}s")
        problems += check_rollout(dcs, sim, module, version, devices, before_targets, before_sets)
        if problems:
            failures.append(f"rollout of {version} on {module} after {kills} kills ({'; '.join(evidence)}): {problems}")
        else:
            recovered += kills

    report_loop("mid-wave-start", points, recovered, landed, failures)
    assert points >= POINTS, f"only {points} kill points: too few rollouts planned"
    assert counting, "the simulator does not count target sets (firmware_states.target_sets): exactly once unchecked"
