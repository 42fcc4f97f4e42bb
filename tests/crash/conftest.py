"""What the crash tests share: the real `dcs` binary, a `dcs sim` with a data file in another
process (so the service outlives the client's crashes), a profile whose secret is in the OS
keychain, SIGKILL after a random delay, and the summary line of each loop.

Needs a D-Bus session with an unlocked keyring: scripts/test-session.sh in CI, /tmp/run-session.sh
or any desktop session locally. Knobs:
- DCS_CRASH_POINTS: kill points per loop (default 50; scripts/crash.sh N for long runs).
- DCS_CRASH_SEED: the random seed (printed with every summary line, so a failure can be replayed).
- DCS_BINARY: another `dcs` to test (default: $CARGO_TARGET_DIR/debug/dcs).
"""

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))  # shared.py, shared with tests/e2e
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
DCS = Path(os.environ.get("DCS_BINARY", TARGET / "debug" / "dcs"))
POINTS = int(os.environ.get("DCS_CRASH_POINTS", "50"))
# One seed and one summary file for the run, also when pytest-xdist runs the loops in several
# processes: the first process sets them in the environment, which the others inherit.
os.environ.setdefault("DCS_CRASH_SEED", str(random.SystemRandom().randrange(1, 2**31)))
SEED = int(os.environ["DCS_CRASH_SEED"])
if "DCS_CRASH_SUMMARY" not in os.environ:
    os.environ["DCS_CRASH_SUMMARY"] = tempfile.mkstemp(prefix="dcs-crash-", suffix=".txt")[1]
SUMMARY = Path(os.environ["DCS_CRASH_SUMMARY"])
# The simulator's demo data set.
SIM_SEED = "5"
# The set-target operation `dcs sim` prints for `dcs profile add` (the reference variant).
SET_TARGET = [
    "--set-target-method",
    "PUT",
    "--set-target-path",
    "/firmware/states/{deviceId}/{moduleId}",
    "--set-target-body",
    '{"targetFirmwareVersion": {version}}',
]
# Settings of the caller's that would point `dcs` elsewhere.
CALLER_VARS = [
    "DCS_BASE_URL",
    "DCS_AUTH_URL",
    "DCS_CLIENT_ID",
    "DCS_CLIENT_SECRET",
    "DCS_PROFILE",
    "DCS_SIM_VARIANT",
]

def pytest_terminal_summary(terminalreporter):
    if hasattr(terminalreporter.config, "workerinput"):
        return  # a pytest-xdist worker: the controller prints them
    lines = SUMMARY.read_text().splitlines() if SUMMARY.exists() else []
    if lines:
        terminalreporter.section("crash loops")
        for line in sorted(lines):
            terminalreporter.write_line(line)
    SUMMARY.unlink(missing_ok=True)


def report_loop(loop: str, points: int, recovered: int, landed: dict, failures: list[str], note: str = "") -> None:
    """Keeps a loop's summary line for the end of the run (and prints it now, for -s): its kill
    points tried and recovered, where they landed and its seed; then fails on its failures."""
    line = (
        f"{loop}: {points} kill points, {recovered} recovered, kills landed: "
        + ", ".join(f"{k} {n}" for k, n in sorted(landed.items()))
        + (f"; {note}" if note else "")
        + f" (DCS_CRASH_SEED={SEED})"
    )
    with open(SUMMARY, "a") as f:
        f.write(line + "\n")
    print(line)
    assert not failures, "\n".join(failures)


@pytest.fixture
def rng(request) -> random.Random:
    """The loop's random numbers: DCS_CRASH_SEED and the test's name."""
    return random.Random(f"{SEED}:{request.node.name}")


def kill_after(proc: subprocess.Popen, delay: float) -> bool:
    """SIGKILL `proc` `delay` seconds after now; answers whether it was still running then."""
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return True
    return False


def kill_when(proc: subprocess.Popen, condition, timeout: float) -> bool:
    """SIGKILL `proc` as soon as `condition()` holds (polled every few milliseconds), or after
    `timeout` seconds; answers whether it was still running then."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if condition() or time.monotonic() > deadline:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.005)
    return False


def integrity(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(path, timeout=10)) as db:
        return ";".join(r[0] for r in db.execute("PRAGMA integrity_check"))


def read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to a SQLite file another process writes (WAL)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    db.execute("PRAGMA busy_timeout = 10000")
    return db


class Sim:
    """`dcs sim --data FILE` in another process, restartable on the same file."""

    def __init__(self, data: Path, devices: int, log: Path):
        self.data, self.devices, self.log = data, devices, log
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.url = ""

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k not in CALLER_VARS}
        args = [str(DCS), "sim", "--port", str(self.port), "--seed", SIM_SEED, "--data", str(self.data)]
        args += ["--devices-per-client", str(self.devices)]
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
        first = self.proc.stdout.readline().strip()
        assert first.startswith("Simulator") and "http://127.0.0.1:" in first, f"dcs sim said: {first!r}"
        self.url = first.rsplit(" ", 1)[1]
        # Restarts listen on the same port, so the profile stays right.
        self.port = int(self.url.rsplit(":", 1)[1])
        deadline = time.monotonic() + 60
        while True:
            try:
                self.admin("GET", "/_sim/info")
                return
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "dcs sim does not answer"
                time.sleep(0.05)

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def admin(self, method: str, path: str, body: dict | None = None, timeout: float = 30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=timeout) as res:
            text = res.read()
            return json.loads(text) if text else None

    def latency(self, ms: int) -> None:
        self.admin("PUT", "/_sim/faults", {"latencyMs": ms})

    def speed(self, speed: float) -> None:
        self.admin("PUT", "/_sim/clock", {"speed": speed})

    def db(self) -> sqlite3.Connection:
        """The service's own state, read-only (what it holds, without asking the client under test)."""
        return read_only(self.data)


class Dcs:
    """`dcs` with its own config file and data folder, the profile `crash` as its default."""

    def __init__(self, tmp: Path):
        self.config = tmp / "config.toml"
        self.data = tmp / "dcs-data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.fleet_db = self.data / "fleet.sqlite"
        self.profile = f"crash-{os.getpid()}-{tmp.name}"[:60]
        self.env = {k: v for k, v in os.environ.items() if k not in CALLER_VARS}
        # Leases of rollouts (one driver at a time) of 2 s: a killed `dcs rollout watch`, app or
        # runner holds its rollout that long before the next driver takes it over, not a minute.
        self.env.update(
            DCS_CONFIG=str(self.config), DCS_DATA_DIR=str(self.data), DCS_PROFILE=self.profile, DCS_LEASE_SECONDS="2"
        )

    def args(self, args: list[str]) -> list[str]:
        return [str(DCS), *args]

    def run(self, *args: str, timeout: float = 120, check: bool = True, stdin: str | None = None):
        out = subprocess.run(
            self.args(list(args)), env=self.env, capture_output=True, text=True, timeout=timeout, input=stdin
        )
        if check:
            assert out.returncode == 0, f"dcs {' '.join(args)}: exit {out.returncode}: {out.stderr.strip()}"
        return out

    def json(self, *args: str, timeout: float = 120):
        return json.loads(self.run("--json", *args, timeout=timeout).stdout)

    def spawn(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(
            self.args(list(args)),
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def add_profile(self, sim: Sim) -> None:
        """The profile of the brief's users: `dcs profile add` with the demo reseller's secret on
        stdin, into the OS keychain."""
        key = json.loads(self.run("sim", "demo-key", "--seed", SIM_SEED, "--json").stdout)
        self.tenant = key["tenant"]
        env = dict(self.env)
        env.pop("DCS_PROFILE")
        subprocess.run(
            self.args(["profile", "add", self.profile, "--base-url", sim.url, "--client-id", key["clientId"]])
            + SET_TARGET,
            env=env,
            input=key["clientSecret"] + "\n",
            capture_output=True,
            text=True,
            check=True,
        )
        shown = self.run("profile", "show", self.profile).stdout
        assert "stored" in shown.lower() or "keychain" in shown.lower(), shown

    def remove_profile(self) -> None:
        self.run("--yes", "profile", "remove", self.profile, check=False)


@pytest.fixture
def sim_factory(tmp_path):
    sims: list[Sim] = []

    def make(devices: int, name: str = "sim.db") -> Sim:
        sim = Sim(tmp_path / name, devices, tmp_path / f"{name}.log")
        sims.append(sim)
        sim.start()
        return sim

    yield make
    for sim in sims:
        sim.kill()


@pytest.fixture
def dcs(tmp_path):
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        pytest.fail("no D-Bus session: run under scripts/test-session.sh or /tmp/run-session.sh (the keychain)")
    assert DCS.exists(), f"build dcs first (cargo build -p dcs-cli): {DCS} is missing"
    client = Dcs(tmp_path)
    yield client
    client.remove_profile()


def service_states(sim: Sim, tenant: str) -> dict[tuple[str, str], str | None]:
    """(module, device) -> target of every firmware state the profile's scope sees on the service:
    the reseller's own (its customers' are seen acting for them, another scope)."""
    with contextlib.closing(sim.db()) as db:
        rows = db.execute(
            "SELECT module_id, device_id, target_version FROM firmware_states WHERE client_id = ?", (tenant,)
        )
        return {(m, d): t for m, d, t in rows}


def fleet_states(path: Path) -> list[tuple[str, str, str | None]]:
    """Every (module, device, target) row of the fleet database's one scope (none before `dcs`
    made its tables: a kill can land before)."""
    with contextlib.closing(read_only(path)) as db:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'states'").fetchone():
            return []
        scopes = [r[0] for r in db.execute("SELECT id FROM scopes")]
        assert len(scopes) <= 1, f"one scope expected, found {scopes}"
        return list(db.execute("SELECT module_id, device_id, target FROM states"))
