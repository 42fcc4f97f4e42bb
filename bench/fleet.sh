#!/usr/bin/env bash
# Benchmark (not a test) of the fleet database against what a user would otherwise write, in one
# run on the same simulator, release builds, on this machine:
#   seeding:  `dcs sim` with one scope (the demo reseller) of 100,000+ firmware states
#   a) full scan:    `dcs fleet scan --full --json` into a fresh DCS_DATA_DIR
#   b) baseline:     bench/fleet_baseline.py: urllib paging `limit=1000` following `next`,
#                    rows into sqlite3 (one executemany per page)
#   c) aggregation:  the dashboard's aggregates (every module's summary + the biggest module's
#                    overview) by query::modules + query::overview over the scanned database
#                    (examples/fleet_aggregate.rs, median of 5), vs collections.Counter over the
#                    rows in memory and vs GROUP BY in sqlite3 from Python; the three must agree
#   d) incremental refresh (`dcs fleet scan --json`) with nothing changed, and after ~1% of the
#                    targets were set (the baseline has no incremental form: it scans again)
# Usage: bench/fleet.sh [devices-per-client, default 40000]
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

per_client="${1:-40000}"
ensure_packages curl time python3
ensure_rust
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
log "building dcs and the aggregation driver (release)"
(cd "$ROOT" && cargo build --release -q -p dcs-cli && cargo build --release -q -p dcs-console --example fleet_aggregate)
DCS="$CARGO_TARGET_DIR/release/dcs"
AGG="$CARGO_TARGET_DIR/release/examples/fleet_aggregate"
BASELINE="$ROOT/bench/fleet_baseline.py"

work="$(mktemp -d /var/tmp/dcs-fleet-bench.XXXXXX)"
log "seeding the simulator: $per_client devices per client (speed 0.001: devices stand still)"
t0="$(date +%s.%N)"
start_bench_sim "$DCS" "$work" 300 1 --devices-per-client "$per_client" --speed 0.001
seed_s="$(python3 -c "import sys; print(f'{$(date +%s.%N) - $t0:.2f}')")"
bench_credentials "$DCS" 1
export DCS_CLIENT_SECRET="$secret" BENCH_TOKEN="$token"
dcs=("$DCS" --base-url "$url" --client-id "$id")
# The simulator listens before its device engine has applied the seeded updates that are already
# due (at most 5,000 steps a pass): wait until an incremental refresh of a scratch database finds
# nothing changed, so every figure below reads the same states.
log "waiting for the simulator's devices to settle"
t0="$(date +%s.%N)"
DCS_DATA_DIR="$work/settle" "${dcs[@]}" fleet scan --full --json > /dev/null
settled=""
for _ in $(seq 30); do
  changed="$(DCS_DATA_DIR="$work/settle" "${dcs[@]}" fleet scan --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["changed"])')"
  [ "$changed" = 0 ] && { settled=1; break; }
  sleep 1
done
[ -n "$settled" ] || die "the simulator's states still change after 30 refreshes"
settle_s="$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")"
export DCS_DATA_DIR="$work/data"

# Runs a command under GNU time; prints "seconds max_rss_kib"; its stdout goes to $work/stdout.
timed() { /usr/bin/time -f '%e %M' -o "$work/time" "$@" > "$work/stdout"; cat "$work/time"; }

log "a) dcs fleet scan --full"
read -r full_s full_rss < <(timed "${dcs[@]}" fleet scan --full --json)
cp "$work/stdout" "$work/full.json"
log "b) the Python baseline: urllib + sqlite3, then Counter and GROUP BY"
read -r base_s base_rss < <(timed python3 "$BASELINE" scan "$url" "$work/baseline.sqlite")
cp "$work/stdout" "$work/baseline.json"
log "c) query::modules + query::overview over the scanned database"
"$AGG" "$DCS_DATA_DIR/fleet.sqlite" "(command line)" "$url" 5 > "$work/ours.json"
biggest="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["biggest"])' < "$work/ours.json")"
read -r cli_modules_s _ < <(timed "${dcs[@]}" fleet modules --json)
read -r cli_overview_s _ < <(timed "${dcs[@]}" fleet overview "$biggest" --json)
log "d) incremental refresh, nothing changed"
read -r inc0_s _ < <(timed "${dcs[@]}" fleet scan --json)
cp "$work/stdout" "$work/inc0.json"
log "d) setting ~1% of the targets, then an incremental refresh"
python3 "$BASELINE" set-targets "$url" 0.01 7 > "$work/set.json"
read -r inc1_s _ < <(timed "${dcs[@]}" fleet scan --json)
cp "$work/stdout" "$work/inc1.json"

python3 - "$work" "$per_client" "$seed_s s (then $settle_s s until the devices settle)" "$full_s" "$full_rss" "$base_s" "$base_rss" "$cli_modules_s" "$cli_overview_s" "$inc0_s" "$inc1_s" <<'PY'
import json, os, sys
work, per_client, seed_s, full_s, full_rss, base_s, base_rss, cli_mod_s, cli_ov_s, inc0_s, inc1_s = sys.argv[1:]
load = lambda n: json.load(open(os.path.join(work, n)))
full, base, ours, inc0, inc1, put = (load(n) for n in ("full.json", "baseline.json", "ours.json", "inc0.json", "inc1.json", "set.json"))
full_s, base_s, inc0_s, inc1_s = map(float, (full_s, base_s, inc0_s, inc1_s))

# The scans and the three aggregations must agree before any figure counts.
if full["states"] != base["states"]:
    sys.exit(f"the scans disagree: dcs {full['states']} states, baseline {base['states']}")
if full["states"] < 100_000:
    sys.exit(f"only {full['states']} states: give more devices per client")
agg = base["aggregates"]
for k in ("modules", "biggest", "byVersion", "byStatus", "byTarget", "byCustomer"):
    if ours[k] != agg[k]:
        if isinstance(ours[k], dict):
            diff = {m: (ours[k].get(m), agg[k].get(m)) for m in set(ours[k]) | set(agg[k]) if ours[k].get(m) != agg[k].get(m)}
            print(json.dumps(dict(list(diff.items())[:3])), file=sys.stderr)
        sys.exit(f"the aggregates disagree on {k}")
if ours["failureGroups"] != min(agg["failureGroups"], 50):
    sys.exit("the aggregates disagree on the failure groups")

n = full["states"]
ours_agg = ours["modulesMs"] + ours["overviewMs"]
rows = [
    ("seed the simulator until it listens", f"{per_client} devices per client", f"{seed_s}", "", ""),
    (f"full scan of {n:,} states", f"urllib + sqlite3: {base['scanS']:.2f} s in process, {base_s:.2f} s wall ({n / base['scanS']:,.0f}/s)",
     f"{full['elapsedMs'] / 1000:.2f} s in process, {full_s:.2f} s wall, {full['pages']} pages ({n / (full['elapsedMs'] / 1000):,.0f}/s)",
     f"{base['scanS'] / (full['elapsedMs'] / 1000):.1f}x as fast", f"RSS {int(full_rss) / 1024:.0f} vs {int(base_rss) / 1024:.0f} MiB"),
    (f"aggregate: {len(ours['modules'])} modules' summaries + the biggest's overview",
     f"Counter in memory: {base['counterMs']:.0f} ms; GROUP BY: {base['groupbyMs']:.0f} ms",
     f"{ours_agg:.1f} ms (modules {ours['modulesMs']:.1f} + overview {ours['overviewMs']:.1f})",
     f"{base['counterMs'] / ours_agg:.1f}x / {base['groupbyMs'] / ours_agg:.1f}x as fast", ""),
    ("the same through the CLI (process, wall)", "", f"modules {float(cli_mod_s):.2f} s, overview {float(cli_ov_s):.2f} s", "", ""),
    ("refresh, nothing changed", f"scan again: {base['scanS']:.2f} s",
     f"{inc0['elapsedMs'] / 1000:.2f} s ({inc0_s:.2f} s wall): {inc0['states']} read, {inc0['changed']} changed",
     f"{base['scanS'] / (inc0['elapsedMs'] / 1000):.0f}x as fast", ""),
    (f"refresh after {put['set']:,} targets set ({put['set'] / put['of']:.1%})", f"scan again: {base['scanS']:.2f} s",
     f"{inc1['elapsedMs'] / 1000:.2f} s ({inc1_s:.2f} s wall): {inc1['states']:,} read, {inc1['changed']:,} changed",
     f"{base['scanS'] / (inc1['elapsedMs'] / 1000):.0f}x as fast", ""),
]
print()
print(f"{'':58} | {'what users would write':60} | {'dcs fleet':70} | ratio")
for what, baseline, mine, ratio, note in rows:
    print(f"{what:58} | {baseline:60} | {mine:70} | {ratio} {note}")
print(json.dumps({"states": n, "seed": seed_s, "full": full, "baselineScanS": base["scanS"], "baselineWallS": base_s,
                  "fullWallS": full_s, "counterMs": base["counterMs"], "groupbyMs": base["groupbyMs"],
                  "modulesMs": ours["modulesMs"], "overviewMs": ours["overviewMs"], "inc0": inc0, "inc1": inc1, "set": put}))
PY
