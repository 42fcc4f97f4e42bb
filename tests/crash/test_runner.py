"""The runner (`dcs serve`): exactly one driver per rollout through the lease in the fleet
database, and a driver that lost its lease never sends again.

- Killed with a second waiting: two runners (`--lease-seconds 2`) run at all times on one fleet
  database; the one holding a rollout's lease is killed with SIGKILL at a random point (after a
  random delay, or once the service has k more of the rollout's targets), a replacement is
  started at once, and the other runner takes the rollout over when the lease runs out. The
  rollout's longest standstill (no new target on the service while some are still to set) is
  measured throughout.
- Stopped past its lease: runner A is stopped (SIGSTOP) in the middle of a wave's start; runner
  B takes over when the lease runs out and finishes the wave; A is woken (SIGCONT) and must send
  nothing (the simulator's target_sets counters do not move), the targets of the wave having
  been sent under two fencing numbers.

Then, per rollout: the fleet database passes `PRAGMA integrity_check`, the rollout is completed
(its thresholds, --success 1 --error 100, allow nothing else), every device's target was set on
the service exactly once (the simulator's `firmware_states.target_sets`) and no state outside
the rollout was touched (test_rollout.py's check); every runner stopped with SIGTERM exits 0."""

import contextlib
import math
import os
import signal
import sqlite3
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import POINTS, kill_after, kill_when, read_only, report_loop
from test_rollout import (
    check_rollout,
    fleet_rollout,
    module_devices,
    prepare,
    service_targets,
    set_on_service,
    start_args,
    target_sets,
)

DEVICES = 600  # about 157 devices per module of the reseller's own: waves of 16, 47 and 94
LATENCY_MS = 50  # a request lasts a window; a wave of 94 takes about a second to start, 8 at a time
SPEED = 3000  # devices update within a second
INTERVAL = "0.2"
LEASE = 2.0  # seconds; a slice of 64 targets (8 windows) must go out within 2/3 of it
KILLS_PER_ROLLOUT = 5
MID_WAVE_MIN = max(1, POINTS * 2 // 5)  # kills that must land with some but not all of a wave set
HOLDER_TIMEOUT = 15  # seconds for a live runner to take a rollout's lease
FINAL_TIMEOUT = 10  # seconds for the runners to complete a rollout after the last kill
STANDSTILL_MAX = 10.0  # seconds a rollout may stand still (the lease's 2 s, a round, the refresh)
STOP_TIMEOUT = 5  # seconds a runner may take to end after SIGTERM (the step under way ends first)
STOP_LATENCY_MS = 60  # the SIGSTOP test: the last wave of 94 takes over a second to start
WAKE_WAIT = 4  # seconds the woken runner is watched


class Runners:
    """`dcs serve` processes on the test's fleet database, each logging to a file of its own."""

    def __init__(self, dcs, tmp_path):
        self.dcs, self.dir = dcs, tmp_path
        self.procs: list[subprocess.Popen] = []

    def start(self) -> subprocess.Popen:
        log = self.dir / f"runner-{len(self.procs)}.log"
        args = ["serve", "--interval", INTERVAL, "--lease-seconds", str(LEASE), "--listen", "off"]
        with open(log, "w") as f:
            proc = subprocess.Popen(
                self.dcs.args(args), env=self.dcs.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=f
            )
        proc.log = log
        self.procs.append(proc)
        return proc

    def live(self) -> dict[int, subprocess.Popen]:
        return {p.pid: p for p in self.procs if p.poll() is None}

    def stop(self, procs: list[subprocess.Popen] | None = None) -> list[str]:
        """SIGTERM to each (all live ones by default); answers the problems: a runner that did
        not end within STOP_TIMEOUT, or ended with another status than 0."""
        procs = list(self.live().values()) if procs is None else procs
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        problems = []
        deadline = time.monotonic() + STOP_TIMEOUT
        for p in procs:
            try:
                rc = p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                problems.append(f"runner {p.pid} did not end within {STOP_TIMEOUT}s of SIGTERM ({tail(p.log)})")
                continue
            if rc != 0:
                problems.append(f"runner {p.pid} ended with {rc} after SIGTERM ({tail(p.log)})")
        return problems

    def steps_stopped(self, procs: list[subprocess.Popen] | None = None) -> Counter:
        """Why steps of the runners (all by default) stopped for a lease lost (their log lines),
        by reason."""
        why = Counter()
        for p in self.procs if procs is None else procs:
            for line in p.log.read_text(errors="replace").splitlines():
                if "rollout step stopped" in line:
                    reason = line.split("drives rollout", 1)[-1].split(": ", 1)[-1]
                    why[reason.split(";")[0].split(" (")[0].strip()] += 1
        return why

    def kill_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGCONT)
                p.kill()
                p.wait()


def clock() -> str:
    """The wall clock as the runners' log lines give it (UTC, ms)."""
    return time.strftime("%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}"


def tail(path, lines: int = 5) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""


@pytest.fixture
def runners(dcs, tmp_path):
    r = Runners(dcs, tmp_path)
    yield r
    r.kill_all()


def rollout_id(dcs, module: str, version: str) -> str | None:
    with contextlib.closing(read_only(dcs.fleet_db)) as db:
        row = db.execute("SELECT id FROM rollouts WHERE module_id = ? AND version = ?", (module, version)).fetchone()
    return row[0] if row else None


def rollout_state(dcs, rid: str) -> str:
    with contextlib.closing(read_only(dcs.fleet_db)) as db:
        return db.execute("SELECT state FROM rollouts WHERE id = ?", (rid,)).fetchone()[0]


def lease(dcs, rid: str) -> tuple[int, int] | None:
    """(pid, fence) of the runner whose lease on the rollout has not run out, if any."""
    with contextlib.closing(read_only(dcs.fleet_db)) as db:
        return db.execute(
            "SELECT pid, fence FROM rollout_leases WHERE rollout = ? AND kind = 'runner' AND expires_at > ?",
            (rid, int(time.time() * 1000)),
        ).fetchone()


def lease_times(dcs, rid: str) -> tuple[int, int]:
    """(expires_at, acquired_at) of the rollout's lease, ms since the epoch."""
    with contextlib.closing(read_only(dcs.fleet_db)) as db:
        return db.execute("SELECT expires_at, acquired_at FROM rollout_leases WHERE rollout = ?", (rid,)).fetchone()


def wait_holder(dcs, rid: str, pids, timeout: float) -> tuple[int, int] | None:
    """(pid, fence) of the lease once one of `pids()` (live runners) holds it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            held = lease(dcs, rid)
        except sqlite3.OperationalError:
            held = None
        if held and held[0] in pids():
            return held
        time.sleep(0.02)
    return None


def wait_for(condition, timeout: float, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


def waves_of(dcs, rid: str) -> list[int]:
    """The size of each wave of the rollout, in order."""
    _, rows = fleet_rollout(dcs, rid)
    sizes = Counter(w for _, w, _ in rows)
    return [sizes[w] for w in sorted(sizes)]


def landing(dcs, sim, rid: str, module: str, version: str) -> tuple[str, str]:
    """Where a kill (or stop) landed, from the service's targets and the fleet database: before
    the rollout's first target, in the middle of a wave (some but not all of the wave under way
    on the service), with a wave's targets all sent but not all their answers recorded, with the
    next wave claimed and none of it sent, between waves, or after the last wave; and the
    evidence."""
    targets = service_targets(sim)
    current, rows = fleet_rollout(dcs, rid)
    size = Counter(w for _, w, _ in rows)
    on = Counter(w for d, w, _ in rows if targets.get((d, module)) == version)
    recorded = sum(1 for _, _, at in rows if at is not None)
    total_on = sum(on.values())
    evidence = (
        f"wave {current + 1}: {on[current]} of {size[current]} on the service; "
        f"{total_on} of {len(rows)} in all, {recorded} set_at recorded"
    )
    if total_on == len(rows):
        where = "after the last wave"
    elif total_on == 0:
        where = "before the first target"
    elif 0 < on[current] < size[current]:
        where = "mid-wave"
    elif on[current] == 0:
        where = "wave claimed, none sent"
    elif recorded < total_on:
        where = "wave sent, answers unrecorded"
    else:
        where = "between waves"
    return where, evidence


class Standstill(threading.Thread):
    """Samples the rollout's targets on the service every 50 ms from its first target to its
    last: the longest time no new one was set."""

    def __init__(self, sim, module: str, version: str, total: int):
        super().__init__(daemon=True)
        self.sim, self.module, self.version, self.total = sim, module, version, total
        self.longest, self.at = 0.0, ""
        self.series: list[tuple[float, int]] = []  # (time, targets set) at each change
        self.done = threading.Event()

    def run(self) -> None:
        last_n, last_t, t0 = 0, None, time.monotonic()
        while not self.done.wait(0.05):
            try:
                n = set_on_service(self.sim, self.module, self.version)
            except sqlite3.Error:
                continue
            now = time.monotonic()
            if n != last_n:
                last_n, last_t = n, now
                self.series.append((now, n))
            if n >= self.total:
                return
            if last_t is not None and now - last_t > self.longest:
                self.longest, self.at = now - last_t, f"{n} of {self.total} set, {last_t - t0:.1f}s in"

    def stop(self) -> None:
        self.done.set()
        self.join()

    def wave_starts(self, sizes: list[int]) -> list[float]:
        """How long each wave's start took: from its first target on the service to its last."""
        out, before = [], 0
        for size in sizes:
            first = next((t for t, n in self.series if n > before), None)
            last = next((t for t, n in self.series if n >= before + size), None)
            if first is not None and last is not None:
                out.append(last - first)
            before += size
        return out


def stale(dcs, sim, rid: str, module: str) -> str:
    """The rollout's devices whose state in the fleet database is not the service's (status or
    target): what keeps a rollout waiting when the refresh no longer reads them."""
    with contextlib.closing(sim.db()) as db:
        service = {
            d: (t, s)
            for d, t, s in db.execute(
                "SELECT device_id, target_version, status FROM firmware_states WHERE module_id = ?", (module,)
            )
        }
    with contextlib.closing(read_only(dcs.fleet_db)) as db:
        fleet = list(
            db.execute(
                "SELECT d.device_id, s.target, s.status FROM rollout_devices d JOIN rollouts r ON r.id = d.rollout "
                "JOIN states s ON s.scope = r.scope AND s.module_id = r.module_id AND s.device_id = d.device_id "
                "WHERE d.rollout = ?",
                (rid,),
            )
        )
    differ = [(d, (t, s), service.get(d)) for d, t, s in fleet if service.get(d) != (t, s)]
    if not differ:
        return "the fleet database's states of its devices are the service's"
    d, mine, theirs = differ[0]
    return f"{len(differ)} devices' states in the fleet database are not the service's, e.g. {d}: {mine} there, {theirs} on the service"


def audit_lock(dcs) -> str:
    """Who holds or waits for the lock of the audit log (audit.jsonl), from /proc/locks: a
    process stopped while holding it keeps every other one's writes waiting."""
    try:
        inode = os.stat(dcs.data / "audit.jsonl").st_ino
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError as e:
        return f"the audit log's lock unknown ({e})"
    said = []
    for line in lines:
        f = line.split()
        if len(f) >= 8 and f[-3].endswith(f":{inode}"):
            said.append(f"pid {f[-4]} {'waits for it' if f[1] == '->' else 'holds it'}")
    return "the audit log's lock: " + (", ".join(said) or "free")


def test_runner_killed_with_a_second_waiting(sim_factory, dcs, runners, rng, tmp_path):
    sim = sim_factory(DEVICES)
    dcs.add_profile(sim)
    # Up to KILLS_PER_ROLLOUT kills each, about 3.5 of them landing: a third of POINTS rollouts
    # and two to spare (each prepared one costs a package, an upload and a scan).
    plan = prepare(dcs, sim, tmp_path, 2 + math.ceil(POINTS / 3))
    sim.latency(LATENCY_MS)
    sim.speed(SPEED)
    counting = target_sets(sim) is not None
    runners.start()
    runners.start()

    # The window of a kill by delay, from a rollout nothing kills: as long as the longest wave
    # start (a runner that just took the rollout over goes on with its wave at once).
    module, version = plan[0]
    devices = module_devices(sim, dcs.tenant, module)
    before_targets, before_sets = service_targets(sim), target_sets(sim) or {}
    still = Standstill(sim, module, version, len(devices))
    still.start()
    dcs.run(*start_args(module, version))
    rid = rollout_id(dcs, module, version)
    assert wait_holder(dcs, rid, lambda: runners.live(), HOLDER_TIMEOUT), "no runner took the rollout's lease"
    assert wait_for(lambda: set_on_service(sim, module, version) == len(devices), FINAL_TIMEOUT), "runners stuck"
    calibration = []
    if not wait_for(lambda: rollout_state(dcs, rid) != "running", FINAL_TIMEOUT, 0.1):
        calibration.append(f"stuck: not completed within {FINAL_TIMEOUT}s, nothing killed ({stale(dcs, sim, rid, module)})")
    still.stop()
    calibration += check_rollout(dcs, sim, module, version, devices, before_targets, before_sets)
    starts = still.wave_starts(waves_of(dcs, rid))
    window = max([0.5, *starts])
    print(
        f"calibration: waves {waves_of(dcs, rid)} started in {', '.join(f'{d:.2f}' for d in starts)}s, "
        f"standstill {still.longest:.2f}s"
    )

    landed, points, recovered = Counter(), 0, 0
    failures = [f"rollout of {plan[0][1]} on {plan[0][0]}, nothing killed: {calibration}"] if calibration else []
    by_kind = Counter()
    longest = (0.0, "")
    for module, version in plan[1:]:
        if points >= POINTS:
            break
        devices = module_devices(sim, dcs.tenant, module)
        before_targets, before_sets = service_targets(sim), target_sets(sim) or {}
        started = dcs.run(*start_args(module, version), check=False)
        rid = rollout_id(dcs, module, version)
        if started.returncode != 0 or rid is None:
            failures.append(f"rollout of {version} on {module} did not start: {started.stderr.strip()}")
            continue
        still = Standstill(sim, module, version, len(devices))
        still.start()
        kills, evidence, problems = 0, [], []
        while kills < KILLS_PER_ROLLOUT and points + kills < POINTS:
            if set_on_service(sim, module, version) == len(devices):
                break  # every wave started: nothing left to kill in the middle of
            held = wait_holder(dcs, rid, lambda: runners.live(), HOLDER_TIMEOUT)
            if held is None:
                problems.append(f"no live runner took the lease within {HOLDER_TIMEOUT}s after {kills} kills")
                break
            proc = runners.live().get(held[0])
            if proc is None:
                continue  # it was the one just ended: look again
            if rng.random() < 0.5:
                how = "delay"
                killed = kill_after(proc, rng.uniform(0, window))
            else:
                # Once the service has k more of the rollout's targets than now (k short of what
                # is left): in the middle of setting a wave, or of a later one.
                how = "targets"
                was = set_on_service(sim, module, version)
                k = rng.randint(1, max(1, len(devices) - was - 1))
                killed = kill_when(proc, lambda: set_on_service(sim, module, version) >= was + k, FINAL_TIMEOUT)
            runners.start()  # one always waits
            if not killed:
                problems.append(f"runner {proc.pid} had ended before its kill (exit {proc.returncode}: {tail(proc.log)})")
                break
            # Its requests under way end (the simulator's latency) before the count is read; the
            # other runner cannot take over before the lease runs out (2 s after its renewal).
            time.sleep(LATENCY_MS / 1000 + 0.05)
            where, why = landing(dcs, sim, rid, module, version)
            landed[where] += 1
            by_kind[f"{how}: {where}"] += 1
            evidence.append(f"{where} (fence {held[1]}, {how}): {why}")
            kills += 1
        points += kills

        t = time.monotonic()
        if not wait_for(lambda: rollout_state(dcs, rid) != "running", FINAL_TIMEOUT, 0.1):
            problems.append(
                f"stuck: not completed {FINAL_TIMEOUT}s after the last kill "
                f"({landing(dcs, sim, rid, module, version)[1]}; {stale(dcs, sim, rid, module)})"
            )
        still.stop()
        print(f"{version}: {kills} kills, completed {time.monotonic() - t:.2f}s after the last, standstill {still.longest:.2f}s ({still.at})")
        if still.longest > longest[0]:
            longest = (still.longest, f"{version}: {still.at}")
        if still.longest > STANDSTILL_MAX:
            problems.append(f"stood still {still.longest:.1f}s ({still.at}), more than {STANDSTILL_MAX}s")
        problems += check_rollout(dcs, sim, module, version, devices, before_targets, before_sets)
        if problems:
            failures.append(f"rollout of {version} on {module} after {kills} kills ({'; '.join(evidence)}): {problems}")
        else:
            recovered += kills

    failures += runners.stop()
    print(f"steps stopped for a lease lost: {dict(runners.steps_stopped())}")
    if landed["mid-wave"] < MID_WAVE_MIN:
        failures.append(f"only {landed['mid-wave']} of {points} kills landed mid-wave, at least {MID_WAVE_MIN} needed")
    print("by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items())))
    note = (
        f"mid-wave {landed['mid-wave']} (by delay {by_kind['delay: mid-wave']}, at k targets "
        f"{by_kind['targets: mid-wave']}; at least {MID_WAVE_MIN}); longest standstill {longest[0]:.2f}s ({longest[1]})"
    )
    report_loop("runner killed, a second waiting", points, recovered, landed, failures, note)
    assert points >= POINTS, f"only {points} kill points: too few rollouts planned"
    assert counting, "the simulator does not count target sets (firmware_states.target_sets): exactly once unchecked"


def test_runner_stopped_past_its_lease_sends_nothing_when_it_wakes(sim_factory, dcs, runners, rng, tmp_path):
    sim = sim_factory(DEVICES)
    dcs.add_profile(sim)
    plan = prepare(dcs, sim, tmp_path, 3)
    sim.latency(STOP_LATENCY_MS)
    sim.speed(SPEED)
    assert target_sets(sim) is not None, "the simulator does not count target sets (firmware_states.target_sets)"

    landed, failures, recovered = Counter(), [], 0
    silent, takeovers = 0, []
    for module, version in plan:
        devices = module_devices(sim, dcs.tenant, module)
        before_targets, before_sets = service_targets(sim), target_sets(sim)
        problems, facts = [], []
        a = runners.start()
        dcs.run(*start_args(module, version))  # the first wave; its lease let go of at the end
        rid = rollout_id(dcs, module, version)
        held = wait_holder(dcs, rid, lambda: {a.pid}, HOLDER_TIMEOUT)
        assert held, f"runner A did not take the rollout's lease ({tail(a.log)})"
        b = runners.start()  # waits: A holds the lease

        # A stopped in the middle of the last wave's start (the longest): once k of its targets
        # are on the service.
        sizes = waves_of(dcs, rid)
        before_last, last = sum(sizes[:-1]), sizes[-1]
        k = rng.randint(last // 4, 3 * last // 4)
        on = wait_for(lambda: set_on_service(sim, module, version) >= before_last + k, FINAL_TIMEOUT, 0.005)
        os.kill(a.pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        facts.append(f"A (pid {a.pid}) stopped at {clock()}")
        assert on, f"A did not reach the last wave ({tail(a.log)})"
        fence_a = lease(dcs, rid)
        expires_a = lease_times(dcs, rid)[0]
        time.sleep(STOP_LATENCY_MS / 1000 + 0.2)  # its requests under way end on the service
        where, why = landing(dcs, sim, rid, module, version)
        landed[where] += 1
        facts.append(f"stopped {where}: {why}")
        if where != "mid-wave" or rollout_state(dcs, rid) != "running":
            problems.append(f"the SIGSTOP did not land mid-wave: {where} ({why})")
        if not fence_a or fence_a[0] != a.pid:
            problems.append(f"A did not hold the lease when stopped: {fence_a}")

        # B takes over once the lease ran out and sets the rest of the wave.
        held_b = wait_holder(dcs, rid, lambda: {b.pid}, HOLDER_TIMEOUT)
        if not held_b:
            problems.append(f"B did not take over within {HOLDER_TIMEOUT}s ({tail(b.log)})")
        else:
            takeover = time.monotonic() - stopped_at
            takeovers.append(takeover)
            facts.append(f"B took over {takeover:.2f}s after the stop, fence {held_b[1]}")
            acquired_b = lease_times(dcs, rid)[1]
            if acquired_b < expires_a:
                problems.append(f"B took the lease at {acquired_b}, before A's ran out at {expires_a}")
        # B sets the rest of the wave, unless A was stopped holding the data folder's audit lock
        # (a lock of this machine's processes: B then waits for A to wake, and A, its lease run
        # out, sends nothing more; B goes on under a lease taken again).
        finished = wait_for(lambda: set_on_service(sim, module, version) == len(devices), WAKE_WAIT)
        if not finished:
            facts.append(f"B waited for A to wake ({audit_lock(dcs)})")
        time.sleep(STOP_LATENCY_MS / 1000 + 0.2)
        totals = target_sets(sim)

        os.kill(a.pid, signal.SIGCONT)
        woke = time.time()
        facts.append(f"woken at {clock()}")
        time.sleep(WAKE_WAIT)
        after = target_sets(sim)
        moved = {key: (totals.get(key), n) for key, n in after.items() if totals.get(key) != n}
        if finished:
            # B had set every target: whatever moves now was sent after A woke.
            silent += not moved
            if moved:
                problems.append(
                    f"targets were set after A woke: {len(moved)} target_sets moved, e.g. {next(iter(moved.items()))}"
                )
        # Whatever B sent after the wake, no target went twice (checked below for all), and A
        # recorded no send of its own number that it marked after it woke.
        with contextlib.closing(read_only(dcs.fleet_db)) as db:
            late_marks = db.execute(
                "SELECT count(*) FROM rollout_devices WHERE rollout = ? AND sent_fence = ? AND sending_at > ?",
                (rid, fence_a[1] if fence_a else -1, int(woke * 1000)),
            ).fetchone()[0]
        if late_marks:
            problems.append(f"A marked {late_marks} targets as being sent under its old lease after it woke")
        if a.poll() is not None:
            problems.append(f"A ended after it woke: exit {a.returncode} ({tail(a.log)})")

        if not wait_for(lambda: rollout_state(dcs, rid) != "running", FINAL_TIMEOUT, 0.1):
            problems.append(f"stuck: not completed ({landing(dcs, sim, rid, module, version)[1]}; {stale(dcs, sim, rid, module)})")
        problems += check_rollout(dcs, sim, module, version, devices, before_targets, before_sets)
        with contextlib.closing(read_only(dcs.fleet_db)) as db:
            fences = sorted(
                r[0] for r in db.execute("SELECT DISTINCT sent_fence FROM rollout_devices WHERE rollout = ?", (rid,))
            )
            last_wave = sorted(
                r[0]
                for r in db.execute(
                    "SELECT DISTINCT sent_fence FROM rollout_devices WHERE rollout = ? AND wave = ?",
                    (rid, len(sizes) - 1),
                )
            )
        facts.append(f"fences {fences}, last wave's {last_wave}")
        if fence_a and held_b:
            # A's number and a later one (B's, or one taken again after B waited for A's lock):
            # the wave went out under A's lease and then under another driver's.
            if fence_a[1] not in last_wave or not [f for f in last_wave if f > fence_a[1]]:
                problems.append(f"the last wave was sent under fences {last_wave}: A's {fence_a[1]} and a later one expected")
        problems += runners.stop([a, b])
        facts.append(f"steps stopped for a lease lost: {dict(runners.steps_stopped([a, b]))}")

        print(f"{version}: " + "; ".join(facts))
        if problems:
            failures.append(f"rollout of {version} on {module} ({'; '.join(facts)}): {problems}")
        else:
            recovered += 1

    note = (
        f"nothing sent after A woke {silent} of {len(plan)} times; "
        f"B took over {max(takeovers, default=0):.2f}s after the stop at most"
    )
    report_loop("runner stopped past its lease", len(plan), recovered, landed, failures, note)
