"""Benchmark (not a test): a firmware file uploaded through the real app, the way a drop does
it, with the resident memory of the app's process sampled every 50 ms from before the drop to
the end of the upload. Prints the file size, the app's baseline, peak and growth, the time for
the checksum shown and for the upload (which reuses it: one more read, the file sent and hashed
on the way), next to `sha256sum && curl` on the same file against the same simulator, and the
load average it ran under.

Run by bench/app-upload.sh (it builds the app and sets up the display and D-Bus session)."""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from conftest import APP, app_session, open_firmware, service_token, service_url  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from dropping import drop_file_on  # noqa: E402


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def app_pid() -> int:
    out = subprocess.run(["pgrep", "-n", "-f", str(APP)], capture_output=True, text=True).stdout.split()
    return int(out[0])


def main() -> None:
    size_mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    work = Path(tempfile.mkdtemp(prefix="dcs-app-bench.", dir="/var/tmp"))
    firmware = work / "firmware.bin"
    with open(firmware, "wb") as f:
        for _ in range(size_mib):
            f.write(os.urandom(1 << 20))
    size = firmware.stat().st_size

    env = dict(os.environ, XDG_CONFIG_HOME=str(work / "config"))
    try:
        with app_session(env) as app:
            run(app, firmware, size)
    finally:
        subprocess.run(["rm", "-rf", str(work)])


def run(app, firmware: Path, size: int) -> None:
    open_firmware(app, 60)
    base_url = service_url(app).rstrip("/")
    key = json.loads(subprocess.run([str(APP.parent / "dcs"), "sim", "demo-key", "--json"], capture_output=True, text=True, check=True).stdout)
    token = service_token(base_url, key)

    def post(path, body):
        req = urllib.request.Request(base_url + path, data=json.dumps(body).encode(), method="POST")
        req.add_header("Authorization", f"Bearer {token}")
        req.add_header("Content-Type", "application/json")
        return json.load(urllib.request.urlopen(req, timeout=30))

    with urllib.request.urlopen(urllib.request.Request(base_url + "/firmware/modules?limit=2", headers={"Authorization": f"Bearer {token}"})) as r:
        modules = json.load(r)["items"]
    packages = [
        post("/firmware/packages", {"deviceSpecificationId": m["deviceSpecificationId"], "moduleId": m["id"], "firmwareVersion": "9.0.0-bench"})
        for m in modules
    ]

    load_before = Path("/proc/loadavg").read_text().split()[:3]
    pid = app_pid()
    app.find_element(By.CSS_SELECTOR, "[data-testid=tab-packages]").click()
    row = WebDriverWait(app, 30).until(
        lambda d: d.find_element(By.CSS_SELECTOR, f"[data-testid=package-row][data-id='{packages[0]['id']}']")
    )
    time.sleep(1)
    baseline = rss_kib(pid)
    samples = []
    start = time.monotonic()
    drop_file_on(app, row, str(firmware))
    WebDriverWait(app, 600, poll_frequency=0.05).until(
        lambda d: samples.append(rss_kib(pid)) or d.find_elements(By.CSS_SELECTOR, "[data-testid=staged-sha256]")
        and len(d.find_element(By.CSS_SELECTOR, "[data-testid=staged-sha256]").text) == 64
    )
    hashed = time.monotonic() - start
    app.find_element(By.CSS_SELECTOR, "[data-testid=upload-firmware]").click()
    WebDriverWait(app, 10).until(lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=confirm-ok]").is_displayed())
    app.find_element(By.CSS_SELECTOR, "[data-testid=confirm-ok]").click()
    up_start = time.monotonic()
    WebDriverWait(app, 1200, poll_frequency=0.05).until(
        lambda d: samples.append(rss_kib(pid)) or d.find_elements(By.CSS_SELECTOR, "[data-testid=upload-result]")
    )
    uploaded = time.monotonic() - up_start
    peak = max(samples)

    # What a user would otherwise do, on the same file and simulator.
    t0 = time.monotonic()
    sha = subprocess.run(["sha256sum", str(firmware)], capture_output=True, text=True, check=True).stdout.split()[0]
    subprocess.run(
        ["curl", "-sf", "-o", "/dev/null", "-H", f"Authorization: Bearer {token}", "-H", "Expect:",
         "-F", f"file=@{firmware}", "-F", f"checksum={sha}",
         f"{base_url}/firmware/packages/{packages[1]['id']}/firmware-file"],
        check=True,
    )
    pair = time.monotonic() - t0
    app_total = hashed + uploaded
    mib = 1024
    print(f"file:                   {size / 2**20:.0f} MiB")
    print(f"load average:           {' '.join(load_before)} before, {' '.join(Path('/proc/loadavg').read_text().split()[:3])} after")
    print(f"app: checksum shown in  {hashed:.2f} s; upload (one read: sent, hashed on the way) {uploaded:.2f} s; total {app_total:.2f} s")
    print(f"sha256sum && curl:      {pair:.2f} s  -> app/pair time ratio {app_total / pair:.2f}")
    print(f"app RSS: baseline {baseline / mib:.1f} MiB, peak {peak / mib:.1f} MiB, growth {(peak - baseline) / mib:.1f} MiB "
          f"({(peak - baseline) * 1024 / size * 100:.2f} % of the file), {len(samples)} samples")


if __name__ == "__main__":
    main()
