#!/usr/bin/env bash
# Long runs of the crash tests (tests/crash): N random kill points per loop (default 50, as in the
# test command), e.g. `scripts/crash.sh 1000`; further arguments pick test files (default: all).
# Builds dcs and the app, then runs the loops side by side (pytest-xdist) inside a private D-Bus
# session with an unlocked gnome-keyring (lib.sh, private_session; the profile's secret lives in
# the keychain). DCS_CRASH_SEED=<seed> replays a run (every summary line prints its seed).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
export DCS_CRASH_POINTS="${1:-50}"
shift || true
[ $# -gt 0 ] || set -- "$ROOT/tests/crash"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
ensure_rust
ensure_ui_deps
ensure_e2e_python
build_ui
build_app
log "crash loops: $DCS_CRASH_POINTS kill points each"
private_session "$VENV/bin/python" -m pytest -q -p no:cacheprovider -n 3 "$@"
