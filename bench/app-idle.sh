#!/usr/bin/env bash
# Benchmark (not a test): the app's first screen and idle memory against WebKitGTK's floor, the
# smallest Tauri window (bench/tauri-floor), built here with the workspace's tauri version (its
# Cargo.lock copied in, offline) and measured in the same run (see bench/app_idle.py). Uses the
# debug build the test command makes, or with --release both as they ship (release profile: thin
# LTO, stripped), under Xvfb in a private D-Bus session.
# Usage: bench/app-idle.sh [--release]
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

profile=debug
case "${1:-}" in
  --release) profile=release ;;
  "") ;;
  *) die "usage: bench/app-idle.sh [--release]" ;;
esac
flag=(); [ "$profile" = release ] && flag=(--release)

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
floor="$ROOT/bench/tauri-floor"
cp "$ROOT/Cargo.lock" "$floor/Cargo.lock"
log "building the floor window (bench/tauri-floor, $profile)"
(cd "$floor" && cargo build -q --offline "${flag[@]}")
export DCS_FLOOR_BINARY="$CARGO_TARGET_DIR/$profile/tauri-floor"
if [ "$profile" = release ]; then
  log "building the app (release)"
  ensure_ui_deps
  (cd "$ROOT/ui" && npm run -s build >/dev/null)
  (cd "$ROOT" && cargo build -q --release -p dcs-app "${APP_FEATURES[@]}")
  export DCS_APP_BINARY="$CARGO_TARGET_DIR/release/dcs-console"
fi
run_app_bench "$ROOT/bench/app_idle.py"
