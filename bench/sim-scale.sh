#!/usr/bin/env bash
# Benchmark (not a test) of seeding the simulator at scale, on this machine, release build:
#   listen:  seconds from `dcs sim --devices-per-client N` starting to it listening
#   settle:  seconds more until the device engine has applied every seeded update already due
#            (`dueSteps` of GET /_sim/info is 0; a simulator without it: no state of any client
#            is still PENDING, DOWNLOADING or INSTALLING with its seeded modification time)
#   rss:     peak RSS of the simulator over the run (GNU time %M), and its CPU time (the
#            machine is shared: CPU seconds say what the wall-clock figures cannot under load)
#   pages:   cost of a page of GET /firmware/states?limit=1000 at the start of the demo
#            reseller's list and at its end (its last page, reached by following `next`), in the
#            default order and sorted by -modifiedAt (median of 20 each)
# Usage: bench/sim-scale.sh [devices-per-client...]   (default 10000; 91000 gives ~1M states
#        in the demo reseller's scope and 1.14M in the simulator); DCS=<binary> to skip the build
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

ensure_packages curl time python3
if [ -z "${DCS:-}" ]; then
  ensure_rust
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
  log "building dcs (release)"
  (cd "$ROOT" && cargo build --release -q -p dcs-cli)
  DCS="$CARGO_TARGET_DIR/release/dcs"
fi

for per_client in "${@:-10000}"; do
  work="$(mktemp -d /var/tmp/dcs-sim-scale.XXXXXX)"
  echo "load before: $(cat /proc/loadavg)"
  t0="$(date +%s.%N)"
  /usr/bin/time -f '%M %U %S' -o "$work/rss" "$DCS" sim --port 0 --seed 1 --devices-per-client "$per_client" --speed 0.001 \
    > "$work/sim.out" 2> /dev/null &
  timer=$!
  for _ in $(seq 6000); do grep -q listening "$work/sim.out" && break; sleep 0.05; done
  grep -q listening "$work/sim.out" || die "the simulator did not start within 300 s"
  listen_s="$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")"
  url="$(head -1 "$work/sim.out" | awk '{print $NF}')"
  key="$("$DCS" sim demo-key --seed 1 --json)"
  python3 - "$url" "$key" "$listen_s" "$per_client" <<'PY'
import json, statistics, sys, time, urllib.parse, urllib.request
url, key, listen_s, per_client = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
t0 = time.time()
def token(key_id, secret):
    body = json.dumps({"grant_type": "client_credentials", "audience": "4dc82561-f65f-523g-dek9-6c79ec314f02",
                       "client_id": key_id, "client_secret": secret}).encode()
    req = urllib.request.Request(url + "/api/v3/idp/oidc/token", body, {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))["access_token"]
def get(tok, path):
    req = urllib.request.Request(path if path.startswith("http") else url + path, headers={"Authorization": "Bearer " + tok})
    return json.load(urllib.request.urlopen(req))
secret = key["clientSecret"]
tokens = [token(key["clientId"], secret)] + [token("sim-" + s, secret + "-" + s) for s in ("northwind", "contoso", "fabrikam", "tailspin")]
def unsettled():
    for tok in tokens:
        for status in ("PENDING", "DOWNLOADING", "INSTALLING"):
            if get(tok, f"/firmware/states?limit=1&firmwareUpdateStatus={status}&modifiedBefore=2026-06-01T00:00:00Z")["items"]:
                return True
    return False
def due():
    # A simulator that counts its due steps says so; else the API shows it (a heavier question).
    return json.load(urllib.request.urlopen(url + "/_sim/info")).get("dueSteps")
if due() is not None:
    unsettled = lambda: due() > 0
while unsettled():
    if time.time() - t0 > 1200:
        sys.exit("not settled after 1200 s")
    time.sleep(0.2)
settle_s = time.time() - t0
tok = tokens[0]
def timed(path, n=20):
    times = []
    for _ in range(n):
        s = time.perf_counter(); get(tok, path); times.append(time.perf_counter() - s)
    return statistics.median(times) * 1000
total, last, page = 0, None, "/firmware/states?limit=1000"
while page:
    p = get(tok, page); total += len(p["items"]); last, page = page, p.get("next")
print(f"devices per client {per_client}: {total} states in the demo reseller's own list")
print(f"  listen {listen_s:.1f} s, then settle {settle_s:.1f} s")
for name, first in (("default order", "/firmware/states?limit=50"), ("sort=-modifiedAt", "/firmware/states?limit=50&sort=-modifiedAt")):
    page, end = first.replace("limit=50", "limit=1000"), None
    while page:
        p = get(tok, page); end, page = page, p.get("next")
    print(f"  {name}: page of 1000 at the start {timed(first.replace('limit=50', 'limit=1000')):.1f} ms, at the end {timed(end):.1f} ms;"
          f" page of 50 at the start {timed(first):.1f} ms")
PY
  kill "$(pgrep -P $timer)" 2>/dev/null || true
  wait $timer 2>/dev/null || true
  read -r rss user sys < <(tail -1 "$work/rss")
  echo "  peak RSS of the simulator: $(( rss / 1024 )) MiB; CPU over the whole run: ${user} s user + ${sys} s system"
  echo "load after: $(cat /proc/loadavg)"
  rm -rf "$work"
done
