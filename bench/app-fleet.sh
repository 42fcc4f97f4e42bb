#!/usr/bin/env bash
# Benchmark (not a test): the rollout dashboard of the real app over 100,000+ firmware states:
# the app's first full scan, the aggregates, the device table, and the page's responsiveness
# while the scan runs next to the same figures idle (see bench/app_fleet.py). Uses the debug
# build the test command makes (SQLite is optimised in it); run under Xvfb in a private D-Bus
# session. The simulator seeds DCS_BENCH_DEVICES devices per client (38,000: about 40 s).
# Usage: bench/app-fleet.sh
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

ensure_packages curl xvfb
ensure_rust
ensure_node
ensure_ui_deps
ensure_tauri_driver
ensure_e2e_python
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
log "building the UI, the app and dcs"
(cd "$ROOT/ui" && npm run -s build >/dev/null)
(cd "$ROOT" && cargo build -q -p dcs-cli && cargo build -q -p dcs-app "${APP_FEATURES[@]}")

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export XDG_DATA_HOME="$scratch/data" XDG_CACHE_HOME="$scratch/cache" XDG_RUNTIME_DIR="$scratch/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
dbus-run-session -- bash -c '
  Xvfb :97 -screen 0 1280x800x24 -nolisten tcp & xvfb=$!
  trap "kill $xvfb" EXIT
  sleep 1
  DISPLAY=:97 "$0" "$1"' "$VENV/bin/python" "$ROOT/bench/app_fleet.py"
