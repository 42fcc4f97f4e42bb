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

out="$(mktemp)"
"$DCS" sim --port 0 --seed 1 > "$out" &
sim=$!
trap 'kill $sim 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.1; done
url="$(head -1 "$out" | awk '{print $NF}')"
key="$("$DCS" sim demo-key --seed 1 --json)"
id="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["clientId"])' <<<"$key")"
secret="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["clientSecret"])' <<<"$key")"
token="$(curl -sf "$url/api/v3/idp/oidc/token" -H 'Content-Type: application/json' \
  -d "{\"grant_type\":\"client_credentials\",\"audience\":\"4dc82561-f65f-523g-dek9-6c79ec314f02\",\"client_id\":\"$id\",\"client_secret\":\"$secret\"}" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"
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
