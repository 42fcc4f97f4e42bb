#!/usr/bin/env python3
"""Writes the update manifest (latest.json) the app's updater reads, from the bundles
workflow's signed artifacts.

    update-manifest.py --version 1.2.0 --base-url https://updates.example.com/1.2.0 \
        [--notes-file NOTES.md] [--pub-date 2026-11-27T12:00:00Z] --out latest.json ARTIFACTS...

Every package with a `.sig` beside it (the Tauri bundler writes one for each updater artifact
when the signing key is given) becomes a platform entry, `{os}-{arch}-{installer}` as the
updater looks it up first, its URL the base URL and the file's name. Each `{os}-{arch}` also
gets the entry the updater falls back to for a copy not installed from a package: the .deb,
else the AppImage on Linux; the .app on macOS; the NSIS installer, else the .msi on Windows.
A package of another version, or a `.sig` without its package, stops the script: a manifest
must never point a version at another's package.
"""

import argparse
import datetime
import json
import re
import sys
import urllib.parse
from pathlib import Path

# The updater's names of the architectures, from the bundlers' spellings in file names.
ARCHES = {"x86_64": "x86_64", "amd64": "x86_64", "x64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64", "i686": "i686", "i386": "i686", "x86": "i686"}
# An architecture as a word of a name (`_amd64.deb`, `-x64-setup.exe`, `x86_64-unknown-...`).
ARCH_WORD = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(ARCHES) + r")(?![A-Za-z0-9])")
# What the updater falls back to when it knows no installer, per system (first found wins).
FALLBACK = {"linux": ["deb", "appimage"], "darwin": ["app"], "windows": ["nsis", "msi"]}


def kind_of(name: str) -> tuple[str, str] | None:
    """(os, installer) of an updater artifact's file name, or None."""
    if name.endswith(".deb"):
        return "linux", "deb"
    if name.endswith(".rpm"):
        return "linux", "rpm"
    if name.endswith(".AppImage") or name.endswith(".AppImage.tar.gz"):
        return "linux", "appimage"
    if name.endswith(".app.tar.gz"):
        return "darwin", "app"
    if name.endswith(".msi"):
        return "windows", "msi"
    if name.endswith("-setup.exe"):
        return "windows", "nsis"
    return None


def arch_of(path: Path) -> str:
    """The architecture named in the file's name or, for a macOS archive, the nearest folder
    that names one (the workflow's artifact, named after its target)."""
    for part in [path.name, *reversed(path.parent.parts)]:
        if m := ARCH_WORD.search(part):
            return ARCHES[m.group(1)]
    raise SystemExit(f"{path}: no architecture in its name or folder")


def manifest(version: str, base_url: str, notes: str, pub_date: str, artifacts: list[Path]) -> dict:
    platforms: dict[str, dict] = {}
    installers: dict[str, dict[str, dict]] = {}
    for root in artifacts:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for sig in (f for f in files if f.name.endswith(".sig")):
            package = sig.with_name(sig.name.removesuffix(".sig"))
            if not package.is_file():
                raise SystemExit(f"{sig}: a signature without its package")
            kind = kind_of(package.name)
            if kind is None:
                raise SystemExit(f"{package}: not an updater artifact the updater installs")
            if version not in package.name and kind[1] != "app":
                raise SystemExit(f"{package}: not a package of version {version}")
            os_name, installer = kind
            key = f"{os_name}-{arch_of(package)}"
            entry = {"signature": sig.read_text().strip(), "url": f"{base_url.rstrip('/')}/{urllib.parse.quote(package.name)}"}
            platforms[f"{key}-{installer}"] = entry
            installers.setdefault(key, {})[installer] = entry
    if not platforms:
        raise SystemExit("no signed package found: was the signing key given to the build?")
    for key, found in installers.items():
        first = next((found[i] for i in FALLBACK[key.split("-")[0]] if i in found), None)
        if first:
            platforms[key] = first
    return {"version": version, "notes": notes, "pub_date": pub_date, "platforms": dict(sorted(platforms.items()))}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--version", required=True)
    p.add_argument("--base-url", required=True, help="where the packages are published")
    p.add_argument("--notes-file", type=Path)
    p.add_argument("--pub-date", default=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("artifacts", nargs="+", type=Path)
    a = p.parse_args()
    notes = a.notes_file.read_text() if a.notes_file else ""
    body = manifest(a.version, a.base_url, notes, a.pub_date, a.artifacts)
    a.out.write_text(json.dumps(body, indent=2) + "\n")
    print(f"{a.out}: version {a.version}, {len(body['platforms'])} platform entries", file=sys.stderr)


if __name__ == "__main__":
    main()
