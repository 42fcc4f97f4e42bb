#!/usr/bin/env bash
# Benchmark (not a test): the app's first screen and idle memory against WebKitGTK's floor, the
# smallest Tauri window (bench/tauri-floor), built here with the workspace's tauri version (its
# Cargo.lock copied in, offline) and measured in the same run (see bench/app_idle.py). Uses the
# debug build the test command makes, under Xvfb in a private D-Bus session.
# Usage: bench/app-idle.sh
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
floor="$ROOT/bench/tauri-floor"
cp "$ROOT/Cargo.lock" "$floor/Cargo.lock"
log "building the floor window (bench/tauri-floor)"
(cd "$floor" && cargo build -q --offline)
export DCS_FLOOR_BINARY="$CARGO_TARGET_DIR/debug/tauri-floor"
run_app_bench "$ROOT/bench/app_idle.py"
