"""Mid-upload: `dcs firmware files upload` of a few-MB file killed with SIGKILL at random points,
then run again. The service must end with exactly one package of the version and its firmware
file of the right size and SHA-256 (not zero, not two), no partly written file in its files
folder or beside the local file, and the repeated command succeeds or says clearly that the
package already has its file."""

import contextlib
import hashlib
import time
from collections import Counter

from conftest import POINTS, integrity, kill_after, report_loop

DEVICES = 50
LATENCY_MS = 50
SIZE = 6 * 1024 * 1024  # more than the loopback socket buffers: the service reads while the client writes


def stored_files(sim) -> set[str]:
    folder = sim.data.with_name(sim.data.name + ".files")
    return {p.name for p in folder.iterdir()} if folder.exists() else set()


def check_upload(sim, module: str, version: str, digest: str, retry) -> list[str]:
    problems = []
    if retry.returncode != 0 and not (retry.returncode == 6 and "already has its firmware file" in retry.stderr):
        problems.append(f"the repeated upload: exit {retry.returncode}: {retry.stderr.strip()}")
    with contextlib.closing(sim.db()) as db:
        packages = list(
            db.execute(
                "SELECT id FROM firmware_packages WHERE module_id = ? AND firmware_version = ?", (module, version)
            )
        )
        if len(packages) != 1:
            return problems + [f"{len(packages)} packages of {version}"]
        files = list(
            db.execute(
                "SELECT sha256, size, path FROM firmware_files WHERE package_id = ? AND kind = 'firmware'", packages[0]
            )
        )
        referenced = {r[0] for r in db.execute("SELECT path FROM firmware_files WHERE path IS NOT NULL")}
    if len(files) != 1:
        return problems + [f"{len(files)} firmware files for the package of {version}"]
    sha, size, path = files[0]
    if (sha, size) != (digest, SIZE):
        problems.append(f"the service holds {size} bytes with SHA-256 {sha}, not {SIZE} with {digest}")
    on_disk = sim.data.with_name(sim.data.name + ".files") / path
    if hashlib.sha256(on_disk.read_bytes()).hexdigest() != digest:
        problems.append("the stored file's bytes differ from the uploaded file's")
    # A dropped request removes its partly written file as it ends; give it a moment.
    for _ in range(50):
        orphans = stored_files(sim) - referenced
        if not orphans:
            break
        time.sleep(0.02)
    if orphans:
        problems.append(f"files in the service's folder no package refers to: {sorted(orphans)}")
    return problems


def test_mid_upload(sim_factory, dcs, rng, tmp_path):
    sim = sim_factory(DEVICES)
    dcs.add_profile(sim)
    with contextlib.closing(sim.db()) as db:
        module, spec = db.execute(
            "SELECT id, device_specification_id FROM firmware_modules WHERE client_id = ? ORDER BY id LIMIT 1",
            (dcs.tenant,),
        ).fetchone()
    folder = tmp_path / "upload"
    folder.mkdir()
    firmware = folder / "fw.bin"
    firmware.write_bytes(rng.randbytes(SIZE))
    digest = hashlib.sha256(firmware.read_bytes()).hexdigest()
    sim.latency(LATENCY_MS)

    def package(version: str) -> str:
        return dcs.json(
            "firmware", "packages", "create", "--device-specification-id", spec, "--module-id", module,
            "--firmware-version", version,
        )["id"]

    # The window: the whole upload command when nothing kills it.
    first = package("8.0.0")
    t = time.monotonic()
    dcs.run("firmware", "files", "upload", first, str(firmware))
    window = time.monotonic() - t
    print(f"window: {window:.2f}s")

    landed, failures = Counter(), []
    for point in range(POINTS):
        version = f"8.{point + 1}.0"
        pid = package(version)
        before = stored_files(sim)
        delay = rng.uniform(0, window)
        proc = dcs.spawn("firmware", "files", "upload", pid, str(firmware))
        killed = kill_after(proc, delay)
        with contextlib.closing(sim.db()) as db:
            has_file = db.execute(
                "SELECT count(*) FROM firmware_files WHERE package_id = ? AND kind = 'firmware'", (pid,)
            ).fetchone()[0]
        if not killed:
            where = "after the end"
        elif has_file:
            where = "after the service stored it"
        elif stored_files(sim) - before:
            where = "while the service wrote it"
        else:
            where = "before the service wrote anything"
        landed[where] += 1
        retry = dcs.run("firmware", "files", "upload", pid, str(firmware), check=False)
        problems = check_upload(sim, module, version, digest, retry)
        leftovers = sorted(p.name for p in folder.iterdir() if p.name != "fw.bin")
        if leftovers:
            problems.append(f"files left beside the uploaded one: {leftovers}")
        if problems:
            failures.append(f"kill point {point} (after {delay:.3f}s, {where}): {problems}")

    ok = integrity(sim.data)
    report_loop("mid-upload", POINTS, POINTS - len(failures), landed, failures)
    assert ok == "ok", f"the simulator's data file: {ok}"
