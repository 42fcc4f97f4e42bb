#!/usr/bin/env bash
# Sets up what is missing and builds the installable Linux package: the release app with the UI
# embedded, bundled as a .deb (desktop entry, icons, WebKitGTK dependencies).
# Usage: scripts/bundle.sh          (prints the .deb's path; macOS and Windows: .github/workflows/bundles.yml)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_packages "${APP_PACKAGES[@]}"
ensure_rust
ensure_ui_deps
build_ui
deb="$(build_deb)"
log "built $deb ($(du -h "$deb" | cut -f1))"
echo "$deb"
