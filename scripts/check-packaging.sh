#!/usr/bin/env bash
# Checks the packaging of the headless runner (`dcs serve`, docs/runner.md), with nothing built:
# - the systemd unit packaging/systemd/dcs-runner@.service: the settings it must have, then
#   `systemd-analyze verify` of an instance (dcs-runner@test.service) with ExecStart pointed at
#   an executable that exists here ($DCS_BIN when set, else /bin/true; the installer test
#   verifies the installed unit with the installed /usr/bin/dcs), failing on any complaint about
#   the unit, and its exposure score by `systemd-analyze security --offline` (printed, not judged);
# - packaging/Containerfile and .dockerignore (scripts/check-containerfile.py, which also runs the
#   health check's command against a local HTTP server);
# - that src-tauri/tauri.conf.json puts dcs and the unit into the .deb, from the paths build_deb
#   stages them at, and gives the package no maintainer script (so nothing enables the unit).
# Usage: scripts/check-packaging.sh      (scripts/test.sh runs it)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

unit="$ROOT/packaging/systemd/dcs-runner@.service"
fail() { die "packaging: $*"; }

command -v systemd-analyze >/dev/null 2>&1 || ensure_packages systemd
command -v systemd-analyze >/dev/null 2>&1 || fail "systemd-analyze is missing (Debian package systemd)"

log "packaging: the runner's systemd unit ($(systemd-analyze --version | head -n 1))"
text="$(<"$unit")"
# What the unit must say, each line exactly (docs/runner.md and dcs serve rely on them).
for line in \
  'ExecStart=/usr/bin/dcs serve --profile %i --log-format json $DCS_RUNNER_ARGS' \
  'DynamicUser=yes' \
  'StateDirectory=dcs-runner/%i' 'Environment=DCS_DATA_DIR=%S/dcs-runner/%i' \
  'ConfigurationDirectory=dcs-runner' 'Environment=DCS_CONFIG=%E/dcs-runner/config.toml' \
  'LoadCredential=dcs-client-secret:/etc/dcs-runner/%i.secret' \
  'ProtectSystem=strict' 'ProtectHome=yes' 'PrivateTmp=yes' 'PrivateDevices=yes' 'NoNewPrivileges=yes' \
  'ProtectKernelTunables=yes' 'ProtectKernelModules=yes' 'ProtectKernelLogs=yes' 'ProtectControlGroups=yes' \
  'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' 'RestrictNamespaces=yes' 'LockPersonality=yes' \
  'MemoryDenyWriteExecute=yes' 'RestrictRealtime=yes' 'SystemCallArchitectures=native' \
  'SystemCallFilter=@system-service' 'CapabilityBoundingSet=' 'UMask=0077' \
  'Restart=on-failure' 'KillSignal=SIGTERM' 'TimeoutStopSec=30' 'WantedBy=multi-user.target'; do
  grep -qxF -- "$line" <<<"$text" || fail "$unit lacks the line: $line"
done
# No secret in the environment or on the command line (the credential is the only way in).
if grep -nE '^(Environment|ExecStart)=.*(SECRET|secret)' <<<"$text"; then
  fail "$unit passes a secret in the environment or on the command line (above)"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
exe="${DCS_BIN:-/bin/true}"
[ -x "$exe" ] || fail "DCS_BIN=$exe is not an executable"
# The template under its own name, the binary's path swapped; the instance is verified.
printf '%s\n' "${text//\/usr\/bin\/dcs/$exe}" > "$work/dcs-runner@.service"
instance="$work/dcs-runner@test.service"
# verify exits 0 on unknown settings and bad values (it only prints them): any line about the
# unit fails the check; lines about other units (the system's own) are shown, not judged.
if ! out="$(systemd-analyze verify --man=no "$instance" 2>&1)"; then
  fail "systemd-analyze verify failed:
$out"
fi
if grep -q 'dcs-runner@' <<<"$out"; then
  fail "systemd-analyze verify complains about the unit:
$out"
fi
[ -z "$out" ] || printf '%s\n' "$out" >&2
echo "  systemd-analyze verify: dcs-runner@test.service, ExecStart=$exe ... : no complaint"

# --offline (systemd 250 and later): the score of the unit file alone, no running manager needed.
help="$(systemd-analyze --help)"
if grep -q -- '--offline' <<<"$help"; then
  # LC_ALL=C: the same ASCII table whatever the locale (UTF-8 has other marks and arrows).
  out="$(LC_ALL=C systemd-analyze security --offline=true --no-pager "$instance" 2>&1)" \
    || fail "systemd-analyze security failed:
$out"
  score="$(sed -n 's/.*Overall exposure level for [^:]*: *//p' <<<"$out")"
  [ -n "$score" ] || fail "systemd-analyze security gave no score:
$out"
  echo "  systemd-analyze security: exposure $score (0 is the least exposed, 10 the most); counted against it:"
  # The rows with a figure in the last column: the settings that add to the score.
  awk 'NR > 1 && $NF ~ /^[0-9]+[.][0-9]+$/ { printf "    %-40s %s\n", $2, $NF }' <<<"$out"
else
  echo "  systemd-analyze security: this systemd has no --offline (250 or later needed); no score"
fi

log "packaging: the Containerfile"
python3 "$ROOT/scripts/check-containerfile.py"

log "packaging: what the .deb installs beside the app (tauri.conf.json)"
python3 - "$ROOT" "$DEB_STAGING" <<'PY' || fail "src-tauri/tauri.conf.json does not package dcs and the unit as build_deb expects"
import json, os, sys
root, staging = sys.argv[1], sys.argv[2]
tauri = os.path.join(root, "src-tauri")
deb = json.load(open(os.path.join(tauri, "tauri.conf.json")))["bundle"]["linux"]["deb"]
files = deb.get("files", {})

def src(dest):
    """The source of `dest`, which the map gives relative to src-tauri (the Tauri CLI runs there)."""
    return os.path.normpath(os.path.join(tauri, files.get(dest, "/nonexistent")))


wanted = {
    "/usr/bin/dcs": os.path.join(staging, "dcs"),
    "/lib/systemd/system/dcs-runner@.service": os.path.join(root, "packaging", "systemd", "dcs-runner@.service"),
}
ok = True
for dest, path in wanted.items():
    good = src(dest) == os.path.normpath(path)
    ok &= good
    print(f"  {'ok' if good else 'FAILED'}: {dest} from {os.path.relpath(path, root)} ({files.get(dest)})")
scripts = [k for k in ("preInstallScript", "postInstallScript", "preRemoveScript", "postRemoveScript") if deb.get(k)]
ok &= not scripts
print(f"  {'ok' if not scripts else 'FAILED'}: no maintainer script (nothing enables or starts the unit) {scripts or ''}")
sys.exit(0 if ok else 1)
PY
log "packaging: all checks passed"
