"""Updates of the app itself, against an update server of the test's own (a manifest and a
package on 127.0.0.1, signed with a key made for the run by the Tauri CLI's signer; the debug
build takes that key's public half from DCS_E2E_UPDATE_PUBKEY, a release build only its own).

A build made without an update address checks nothing until given one; a bad address is refused
naming the field and the rule and stays typed. A check shows the newer version and its release
notes before anything is downloaded. A package whose signature does not match, or whose
signature was made for another version (a manifest pairing a new version number with an older
package), is refused and nothing is kept. The right one is checked and, this build being no
installed package, kept in the data folder. At the next start the app tells of the newer version
by itself."""

import hashlib
import http.server
import json
import secrets
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from conftest import ROOT, app_env, app_session, screenshot
from test_profiles import click, type_into, wait_css, wait_text

SIGNER = ROOT / "ui" / "node_modules" / ".bin" / "tauri"
NEW = "99.0.0"
NOTES = """## What is new in 99.0.0

- Rollouts **pause** on a threshold.
- <img src=x onerror="document.title='pwned'"> stays text.
"""


def signer(*args: str) -> None:
    out = subprocess.run([str(SIGNER), "signer", *args], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


class Quiet(http.server.SimpleHTTPRequestHandler):
    """The folder's files, and `/slow.deb`: 50 MB announced, sent at about 160 KB/s."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path != "/slow.deb":
            return super().do_GET()
        self.send_response(200)
        self.send_header("Content-Length", str(50_000_000))
        self.end_headers()
        try:
            for _ in range(3000):
                self.wfile.write(b"\0" * 16384)
                time.sleep(0.1)
        except OSError:
            pass


class UpdateServer:
    """Serves a folder on 127.0.0.1; `manifest(...)` writes its latest.json."""

    def __init__(self, root: Path):
        self.root = root
        handler = partial(Quiet, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def manifest(self, signature: str, url: str | None = None) -> None:
        """latest.json as the bundles workflow writes it (scripts/update-manifest.py, from the
        signed package in the served folder), its signatures then replaced by `signature` (and
        its packages' address by `url`)."""
        (self.root / "linux").mkdir(exist_ok=True)
        out, notes = self.root / "linux" / "latest.json", self.root.parent / "notes.md"
        notes.write_text(NOTES)
        made = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "update-manifest.py"), "--version", NEW, "--base-url", self.url,
             "--notes-file", str(notes), "--pub-date", "2026-11-20T10:00:00Z", "--out", str(out), str(self.root)],
            capture_output=True, text=True, timeout=30,
        )
        assert made.returncode == 0, made.stderr
        body = json.loads(out.read_text())
        assert set(body["platforms"]) == {"linux-x86_64", "linux-x86_64-deb"}, body
        for entry in body["platforms"].values():
            entry["signature"] = signature
            entry["url"] = url or entry["url"]
        out.write_text(json.dumps(body))

    def close(self):
        self.httpd.shutdown()


@pytest.fixture
def release(tmp_path):
    """A key pair, a package signed for 99.0.0, its bytes signed for 98.0.0, and other bytes
    signed for 99.0.0; and the server."""
    keys = tmp_path / "keys"
    keys.mkdir()
    signer("generate", "--ci", "-p", "", "-w", str(keys / "updater.key"))
    root = tmp_path / "srv"
    root.mkdir()
    package = root / f"dcs-console_{NEW}_amd64.deb"
    package.write_bytes(b"!<arch>\n" + secrets.token_bytes(200_000))
    other = tmp_path / "other.deb"
    other.write_bytes(secrets.token_bytes(1000))
    older = tmp_path / "older.deb"
    older.write_bytes(package.read_bytes())

    def sign(path: Path, version: str) -> str:
        signer("sign", "-f", str(keys / "updater.key"), "-p", "", "--app-version", version, str(path))
        return Path(f"{path}.sig").read_text().strip()

    server = UpdateServer(root)
    yield {
        "pubkey": (keys / "updater.key.pub").read_text().strip(),
        "server": server,
        "package": package,
        "good": sign(package, NEW),
        "tampered": sign(other, NEW),
        "older": sign(older, "98.0.0"),
    }
    server.close()


def kept(folder: Path) -> list[Path]:
    return list(folder.iterdir()) if folder.exists() else []


def open_check(d):
    click(d, "[data-testid=check-updates]")
    return wait_css(d, "[data-testid=update-dialog]", 10)


def check_again(d):
    click(d, "[data-testid=update-check-again]")
    wait_css(d, "[data-testid=update-offer]", 20)


def test_an_update_is_shown_with_its_notes_checked_against_its_signature_and_kept(display, tmp_path, artifacts, release):
    env = app_env(tmp_path, {"DCS_E2E_UPDATE_PUBKEY": release["pubkey"]})
    server = release["server"]
    kept_dir = tmp_path / "app-data" / "updates"
    with open(tmp_path / "tauri-driver.log", "w") as log, app_session(env, log) as d:
        d.set_window_size(1200, 780)
        wait_css(d, "[data-testid=home]", 30)
        click(d, "[data-testid=nav-settings]")

        # No address in this build: off, and a check says where to give one.
        wait_text(d, "[data-testid=updates-state]", "made without an update address")
        open_check(d)
        wait_text(d, "[data-testid=update-error]", "Settings → Updates", 20)
        click(d, "[data-testid=update-close]")

        # A bad address: refused, named, still typed; nothing kept.
        type_into(d, "endpoint", "ftp://127.0.0.1/latest.json")
        click(d, "[data-testid=updates-save]")
        wait_text(d, "[data-testid=error-endpoint]", "must start with https://")
        assert d.find_element(By.ID, "endpoint").get_attribute("value") == "ftp://127.0.0.1/latest.json"
        screenshot(d, artifacts / "updates-address-refused.png")

        # The test server's address, with the updater's {{target}} variable.
        server.manifest(release["tampered"])
        type_into(d, "endpoint", f"{server.url}/{{{{target}}}}/latest.json")
        click(d, "[data-testid=updates-save]")
        wait_css(d, "[data-testid=updates-saved]")
        wait_text(d, "[data-testid=updates-state]", "(your address)")

        # The offer: version and notes before anything is downloaded; the notes' HTML is text.
        open_check(d)
        offer = wait_css(d, "[data-testid=update-offer]", 20)
        assert offer.get_attribute("data-version") == NEW
        notes = d.find_element(By.CSS_SELECTOR, "[data-testid=update-notes]")
        assert "Rollouts pause on a threshold." in notes.text
        assert notes.find_elements(By.TAG_NAME, "strong"), "the notes are Markdown"
        assert not notes.find_elements(By.TAG_NAME, "img")
        assert d.title != "pwned"
        assert not kept(kept_dir)
        screenshot(d, artifacts / "update-offer-1200x780.png")
        d.set_window_size(900, 560)
        screenshot(d, artifacts / "update-offer-900x560.png")
        d.set_window_size(1200, 780)

        # Bytes that are not the signed package: refused, nothing kept.
        click(d, "[data-testid=update-get]")
        wait_text(d, "[data-testid=update-error]", "signature", 30)
        assert "does not match" in d.find_element(By.CSS_SELECTOR, "[data-testid=update-error]").text
        assert not kept(kept_dir)
        screenshot(d, artifacts / "update-signature-refused.png")

        # The real package, but its signature made for 98.0.0: a downgrade dressed as 99.0.0.
        server.manifest(release["older"])
        check_again(d)
        click(d, "[data-testid=update-get]")
        wait_text(d, "[data-testid=update-error]", "signature", 30)
        assert not kept(kept_dir)

        # The right one: checked, and kept (this build runs from its folder, not a package).
        server.manifest(release["good"])
        check_again(d)
        click(d, "[data-testid=update-get]")
        done = wait_css(d, "[data-testid=update-done]", 60)
        assert done.get_attribute("data-kind") == "kept", done.text
        path = Path(d.find_element(By.CSS_SELECTOR, "[data-testid=update-kept-path]").text)
        assert path == kept_dir / release["package"].name
        assert hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(release["package"].read_bytes()).digest()
        assert not [p for p in kept_dir.iterdir() if p.name.endswith(".part")]
        screenshot(d, artifacts / "update-kept.png")
        click(d, "[data-testid=update-close]")

        # A slow package: its progress shown, and stopped at the operator's word.
        server.manifest(release["good"], f"{server.url}/slow.deb")
        open_check(d)
        wait_css(d, "[data-testid=update-offer]", 20)
        click(d, "[data-testid=update-get]")
        wait_text(d, "[data-testid=update-progress]", "of 47.7 MiB downloaded", 30)
        screenshot(d, artifacts / "update-downloading.png")
        click(d, "[data-testid=update-cancel]")
        wait_text(d, "[data-testid=update-error]", "cancelled", 20)
        assert kept(kept_dir) == [path], "nothing of the stopped download is kept"
        click(d, "[data-testid=update-close]")

    # The next start checks by itself and says so; the banner opens the offer.
    with open(tmp_path / "tauri-driver-2.log", "w") as log, app_session(env, log) as d:
        d.set_window_size(1200, 780)
        wait_text(d, "[data-testid=update-available]", f"Version {NEW}", 40)
        screenshot(d, artifacts / "update-available-banner.png")
        click(d, "[data-testid=update-available-open]")
        assert wait_css(d, "[data-testid=update-offer]", 20).get_attribute("data-version") == NEW


def test_the_manifest_script_names_each_platform_and_refuses_what_does_not_match(tmp_path):
    """scripts/update-manifest.py on a release's artifacts as the bundles workflow downloads them
    (no app): each signed package under the updater's name for it, the fallbacks, and refusals."""

    def run(*paths: Path, version: str = "1.2.0") -> subprocess.CompletedProcess:
        cmd = [sys.executable, str(ROOT / "scripts" / "update-manifest.py"), "--version", version,
               "--base-url", "https://u.example.com/1.2.0/", "--out", str(tmp_path / "latest.json"), *map(str, paths)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30)

    art = tmp_path / "artifacts"
    files = {
        "dcs-console-x86_64-unknown-linux-gnu/bundle/deb/dcs-console_1.2.0_amd64.deb": "linux-x86_64-deb",
        "dcs-console-aarch64-apple-darwin/bundle/macos/Device Connectivity Console.app.tar.gz": "darwin-aarch64-app",
        "dcs-console-x86_64-apple-darwin/bundle/macos/Device Connectivity Console.app.tar.gz": "darwin-x86_64-app",
        "dcs-console-x86_64-pc-windows-msvc/bundle/msi/dcs-console_1.2.0_x64_en-US.msi": "windows-x86_64-msi",
        "dcs-console-x86_64-pc-windows-msvc/bundle/nsis/dcs-console_1.2.0_x64-setup.exe": "windows-x86_64-nsis",
    }
    for rel, key in files.items():
        (art / rel).parent.mkdir(parents=True, exist_ok=True)
        (art / rel).write_bytes(b"package")
        Path(f"{art / rel}.sig").write_text(f"sig-of-{key}\n")
    (art / "dcs-console-x86_64-pc-windows-msvc/bundle/msi/unsigned.msi").write_bytes(b"not an updater artifact")

    out = run(art)
    assert out.returncode == 0, out.stderr
    body = json.loads((tmp_path / "latest.json").read_text())
    assert body["version"] == "1.2.0"
    got = {k: v["signature"] for k, v in body["platforms"].items()}
    assert got == {
        **{key: f"sig-of-{key}" for key in files.values()},
        "linux-x86_64": "sig-of-linux-x86_64-deb",
        "darwin-aarch64": "sig-of-darwin-aarch64-app",
        "darwin-x86_64": "sig-of-darwin-x86_64-app",
        "windows-x86_64": "sig-of-windows-x86_64-nsis",
    }
    assert body["platforms"]["darwin-aarch64-app"]["url"] == "https://u.example.com/1.2.0/Device%20Connectivity%20Console.app.tar.gz"

    # Another version's package, a signature alone, nothing signed: refused, naming why.
    assert "not a package of version 1.3.0" in run(art, version="1.3.0").stderr
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "dcs-console_1.2.0_amd64.deb.sig").write_text("x")
    assert "a signature without its package" in run(alone).stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no signed package found" in run(empty).stderr
