#!/usr/bin/env bash
# Benchmark (not a test): the rollout dashboard of the real app over 100,000+ firmware states:
# the app's first full scan, the aggregates, the device table, and the page's responsiveness
# while the scan runs next to the same figures idle (see bench/app_fleet.py). Uses the debug
# build the test command makes (SQLite is optimised in it); run under Xvfb in a private D-Bus
# session. The simulator seeds DCS_BENCH_DEVICES devices per client (38,000: about 40 s).
# Usage: bench/app-fleet.sh
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

run_app_bench "$ROOT/bench/app_fleet.py"
