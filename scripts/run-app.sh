#!/usr/bin/env bash
# Sets up what is missing, builds, and starts the console on the built-in simulator.
# Usage: scripts/run-app.sh        (idempotent; quick once everything is installed)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_packages "${APP_PACKAGES[@]}"
ensure_rust
ensure_ui_deps
build_ui
build_app
log "starting the Device Connectivity Console"
exec "${CARGO_TARGET_DIR:-$ROOT/target}/debug/dcs-console" "$@"
