#!/usr/bin/env bash
# Benchmark (not a test) of the fleet database at a million states: the dashboard's aggregates
# (query::modules + the biggest module's query::overview, from the maintained counts) and
# windows of 100 rows of the device table at offsets 0, 100k, 500k and 900k in every sort order,
# without a filter, with a status and with a module, against the plain LIMIT/OFFSET query in the
# same run (examples/fleet_window.rs, which checks each window equals it). The first window at
# each depth includes the walk that finds the positions down to it (the rows it stepped through
# are printed: one at the top of an order); the next windows start from them. Then a first jump
# to 900k in a new order as the app makes it (FleetService::rows), once the walk ahead that its
# top window started in the background is done (how long that took is printed too).
# The states are synthesised and written through the console's own write path
# (scan::write_page, 1,000 a transaction, devices in id order as a full scan writes them), not
# read from a simulator; a database already holding them is reused. Then the write path's cost
# of the counts and the table's indexes: the same states written with and without them.
# Usage: bench/fleet-window.sh [states, default 1000000] [database, default /var/tmp/dcs-fleet-window/fleet-<states>.sqlite]
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

states="${1:-1000000}"
db="${2:-/var/tmp/dcs-fleet-window/fleet-$states.sqlite}"
ensure_rust
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
log "building the driver (release)"
(cd "$ROOT" && cargo build --release -q -p dcs-console --example fleet_window)
BIN="$CARGO_TARGET_DIR/release/examples/fleet_window"
mkdir -p "$(dirname "$db")"
out="$(mktemp /var/tmp/dcs-fleet-window.XXXXXX)"
log "aggregates and windows over $states states ($db)"
"$BIN" "$db" "$states" 3 | tee "$out" | grep -v '"sort"' || true
log "the write path with and without the indexes (200,000 states each)"
"$BIN" --write-cost "$(dirname "$db")" 200000 | tee -a "$out"
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(f"\n{'filter':18} {'sort':11} {'offset':>8} | {'first ms':>9} {'walked':>8} {'next ms':>8} | {'OFFSET ms':>9} | ratio (OFFSET / next)")
for r in (r for r in rows if "sort" in r):
    print(f"{r['filter']:18} {r['sort'] or '(default)':11} {r['offset']:>8} | {r['firstMs']:9.1f} {r['walked']:>8} {r['nextMs']:8.2f} | {r['offsetMs']:9.1f} | {r['ratio']:.0f}x   load {r['loadavg'].split()[0]}")
PY
