#!/usr/bin/env bash
# Benchmark (not a test): a firmware file dropped on a package in the real app and uploaded,
# with the app process's resident memory sampled from before the drop to the end, next to
# `sha256sum && curl` on the same file (see bench/app_upload.py). Uses the debug build the test
# command makes (sha2 is optimised in it); run under Xvfb in a private D-Bus session.
# Usage: bench/app-upload.sh [size-in-MiB, default 1024]
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

run_app_bench "$ROOT/bench/app_upload.py" "${1:-1024}"
