#!/usr/bin/env bash
# Benchmark (not a test) of the simulator's GET throughput and latency on this machine.
#   1. Throughput: wrk, 2 threads, 64 connections, 10 s, on two list operations.
#   2. Latency at a fixed rate: hey, 1,000 requests/s for 10 s (10 workers x 100/s), p50/p99.
# Load generator and simulator share the machine's cores, as they would on a developer's box.
# Usage: bench/sim-http.sh        (builds the release `dcs` first)
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

ensure_packages wrk hey curl
ensure_rust
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
log "building dcs (release)"
(cd "$ROOT" && cargo build --release -q -p dcs-cli)
DCS="$CARGO_TARGET_DIR/release/dcs"

start_bench_sim "$DCS" "$(mktemp -d)" 10 1
bench_credentials "$DCS" 1
auth="Authorization: Bearer $token"

echo
echo "simulator at $url ($(nproc) cores), release build"
for path in "/firmware/modules?limit=50" "/firmware/states?limit=50"; do
  curl -sf -H "$auth" "$url$path" -o /dev/null || die "GET $path failed"
  echo
  echo "== throughput: wrk -t2 -c64 -d10s GET $path"
  wrk -t2 -c64 -d10s --latency -H "$auth" "$url$path" | grep -E 'Requests/sec|Latency  |99%|Non-2xx'
  echo "== latency at 1,000 requests/s: hey -z 10s -c 10 -q 100 GET $path"
  hey -z 10s -c 10 -q 100 -H "$auth" "$url$path" | grep -E 'Requests/sec|50%|99%|Status code|\[200\]' | sed 's/^ */  /'
done
