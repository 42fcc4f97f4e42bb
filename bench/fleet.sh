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
#   d) incremental refresh (`dcs fleet scan --json`) with nothing changed (against the baseline
#                    scanning again), and after ~1% of the targets were set,
#                    against reading just the states changed (`dcs firmware states list
#                    --modified-since` the first change, every page, same client) and against
#                    the Python script's incremental form (those pages into its table)
# Then the issue's table rows for this size: full scan, baseline, ratio, peak RSS of dcs and
# Python, refreshes (time, states read, share of the fleet), seeding and settling, the
# simulator's peak RSS (VmHWM), and the load average each ran under.
# Usage: bench/fleet.sh [SIZE]   SIZE: states of the demo reseller's scope, e.g. 110k (default),
#        330k, 1M; or --devices-per-client N (110k states is 40,000 devices per client)
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

size="${1:-110k}"
if [ "$size" = --devices-per-client ]; then
  per_client="${2:?--devices-per-client N}"
else
  per_client="$(python3 - "$size" <<'PY'
import re, sys
m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmM]?)", sys.argv[1]) or sys.exit(f"not a size: {sys.argv[1]} (e.g. 110k, 1M)")
states = float(m[1]) * {"": 1, "k": 1e3, "m": 1e6}[m[2].lower()]
print(max(1, round(states * 40000 / 110000)))
PY
)"
fi
ensure_packages curl time python3
ensure_rust
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
log "building dcs and the aggregation driver (release)"
(cd "$ROOT" && cargo build --release -q -p dcs-cli && cargo build --release -q -p dcs-console --example fleet_aggregate)
DCS="$CARGO_TARGET_DIR/release/dcs"
AGG="$CARGO_TARGET_DIR/release/examples/fleet_aggregate"
BASELINE="$ROOT/bench/fleet_baseline.py"

work="$(mktemp -d /var/tmp/dcs-fleet-bench.XXXXXX)"
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
log "seeding the simulator: $per_client devices per client (speed 0.001: devices stand still)"
load_seed="$(loadavg)"
t0="$(date +%s.%N)"
start_bench_sim "$DCS" "$work" 900 1 --devices-per-client "$per_client" --speed 0.001
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
while python3 -c "import sys; sys.exit($(date +%s.%N) - $t0 > 900)"; do
  changed="$(DCS_DATA_DIR="$work/settle" "${dcs[@]}" fleet scan --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["changed"])')"
  [ "$changed" = 0 ] && { settled=1; break; }
  sleep 1
done
[ -n "$settled" ] || die "the simulator's states still change after 900 s of refreshes"
rm -rf "$work/settle"
settle_s="$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")"
export DCS_DATA_DIR="$work/data"

# Runs a command under GNU time; prints "seconds max_rss_kib load-average"; its stdout goes to
# $work/stdout. What the steps before left to write back goes to the disk first (`sync`): the
# baseline's database of 700 MiB at 1M, still being written back, made the next refresh's own
# writes wait on the disk (0.58 s, and 1.18 s with its closing checkpoint's `fsync`, where the
# same refresh alone took 0.28 and 0.39 s).
timed() { local l; sync; l="$(loadavg)"; /usr/bin/time -f '%e %M' -o "$work/time" "$@" > "$work/stdout"; echo "$(cat "$work/time") $l"; }

log "a) dcs fleet scan --full"
read -r full_s full_rss full_load < <(timed "${dcs[@]}" fleet scan --full --json)
cp "$work/stdout" "$work/full.json"
log "b) the Python baseline: urllib + sqlite3, then Counter and GROUP BY"
read -r base_s base_rss base_load < <(timed python3 "$BASELINE" scan "$url" "$work/baseline.sqlite")
cp "$work/stdout" "$work/baseline.json"
log "c) query::modules + query::overview over the scanned database"
"$AGG" "$DCS_DATA_DIR/fleet.sqlite" "(command line)" "$url" 5 > "$work/ours.json"
biggest="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["biggest"])' < "$work/ours.json")"
read -r cli_modules_s _ < <(timed "${dcs[@]}" fleet modules --json)
read -r cli_overview_s _ < <(timed "${dcs[@]}" fleet overview "$biggest" --json)
log "d) incremental refresh, nothing changed"
read -r inc0_s _ inc0_load < <(timed "${dcs[@]}" fleet scan --json)
cp "$work/stdout" "$work/inc0.json"
log "d) setting ~1% of the targets, then an incremental refresh"
python3 "$BASELINE" set-targets "$url" 0.01 7 "$work/baseline.sqlite" > "$work/set.json"
read -r inc1_s _ inc1_load < <(timed "${dcs[@]}" fleet scan --json)
cp "$work/stdout" "$work/inc1.json"
log "d) reading just the states changed: every page of modifiedSince the first change"
first_change="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["since"])' < "$work/set.json")"
read -r only_s _ only_load < <(timed "${dcs[@]}" firmware states list --modified-since "$first_change" --limit 1000 --all --json)
only_n="$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["items"] if isinstance(d, dict) else d))' < "$work/stdout")"
log "d) the Python script's refresh: the pages of modifiedSince the first change into its table"
read -r py_inc_s _ py_inc_load < <(timed python3 "$BASELINE" refresh "$url" "$first_change" "$work/baseline.sqlite")
cp "$work/stdout" "$work/py-inc.json"
sim_hwm_kib="$(awk '/^VmHWM/ {print $2}' "/proc/$sim/status")"
end_load="$(loadavg)"

python3 - "$work" "$per_client" "$seed_s" "$settle_s" "$full_s" "$full_rss" "$base_s" "$base_rss" "$cli_modules_s" "$cli_overview_s" "$inc0_s" "$inc1_s" "$only_s" "$only_n" "$py_inc_s" "$sim_hwm_kib" "$load_seed" "$full_load" "$base_load" "$inc0_load" "$inc1_load" "$only_load" "$py_inc_load" "$end_load" <<'PY'
import json, os, sys
(work, per_client, seed_s, settle_s, full_s, full_rss, base_s, base_rss, cli_mod_s, cli_ov_s, inc0_s, inc1_s, only_s,
 only_n, py_inc_s, sim_hwm, *loads) = sys.argv[1:]
load_seed, load_full, load_base, load_inc0, load_inc1, load_only, load_py_inc, load_end = (l.replace(" ", "/") for l in loads)
seed_txt = f"{seed_s} s (then {settle_s} s until the devices settle)"
load = lambda n: json.load(open(os.path.join(work, n)))
full, base, ours, inc0, inc1, put, py_inc = (load(n) for n in ("full.json", "baseline.json", "ours.json", "inc0.json", "inc1.json", "set.json", "py-inc.json"))
full_s, base_s, inc0_s, inc1_s, only_s, py_inc_s = map(float, (full_s, base_s, inc0_s, inc1_s, only_s, py_inc_s))
only_n = int(only_n)

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
    ("seed the simulator until it listens", f"{per_client} devices per client", seed_txt, "", ""),
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
    (f"refresh after {put['set']:,} targets set ({put['set'] / put['of']:.1%})",
     f"its refresh: {py_inc_s:.2f} s wall ({py_inc['readS']:.2f} s reading, {py_inc['writeS']:.2f} s writing)",
     f"{inc1['elapsedMs'] / 1000:.2f} s ({inc1_s:.2f} s wall): {inc1['states']:,} read, {inc1['changed']:,} changed",
     f"{py_inc_s / inc1_s:.1f}x as fast (wall)", ""),
]
print()
print(f"{'':58} | {'what users would write':60} | {'dcs fleet':70} | ratio")
for what, baseline, mine, ratio, note in rows:
    print(f"{what:58} | {baseline:60} | {mine:70} | {ratio} {note}")

# The issue's table, this size's column (load averages: 1, 5 and 15 minutes, as each step began).
full_in = full["elapsedMs"] / 1000
table = [
    ("full scan, `dcs fleet scan --full`", f"{full_in:.2f} s ({n / full_in:,.0f}/s; {full_s:.2f} s wall)", load_full),
    ("the Python urllib + sqlite3 script", f"{base['scanS']:.2f} s ({n / base['scanS']:,.0f}/s; {base_s:.2f} s wall)", load_base),
    ("dcs vs Python", f"{base['scanS'] / full_in:.2f}x as fast", ""),
    ("peak RSS `dcs` / Python", f"{int(full_rss) / 1024:.0f} / {int(base_rss) / 1024:.0f} MiB", ""),
    ("incremental refresh, nothing changed",
     f"{inc0['elapsedMs'] / 1000:.2f} s, {inc0['states']:,} read ({inc0['states'] / n:.2%} of the fleet)", load_inc0),
    (f"refresh after {put['set']:,} targets set ({put['set'] / put['of']:.1%})",
     f"{inc1['elapsedMs'] / 1000:.2f} s ({inc1_s:.2f} s wall), {inc1['states']:,} read; reading just those: "
     f"{only_s:.2f} s wall for {only_n:,} ({inc1_s / only_s:.2f}x)", f"{load_inc1} / {load_only}"),
    ("the Python script's refresh (the same pages into its table)",
     f"{py_inc_s:.2f} s wall: {py_inc['readS']:.2f} s reading {py_inc['states']:,}, {py_inc['writeS']:.2f} s writing them "
     f"({py_inc['writeS'] / py_inc['readS']:.1f}x its reading); dcs {py_inc_s / inc1_s:.2f}x as fast", load_py_inc),
    ("seeding `dcs sim` until it listens + settles", f"{float(seed_s):.0f} + {float(settle_s):.0f} s", load_seed),
    ("peak RSS of the simulator (VmHWM)", f"{int(sim_hwm) / 1024:,.0f} MiB", load_end),
]
print()
print(f"| {n:,} states ({per_client} devices per client) | figure | load average |")
print("|---|---|---|")
for what, figure, l in table:
    print(f"| {what} | {figure} | {l} |")
print(json.dumps({"states": n, "seed": seed_s, "settle": settle_s, "full": full, "baselineScanS": base["scanS"],
                  "baselineWallS": base_s, "fullWallS": full_s, "fullRssKiB": int(full_rss), "baselineRssKiB": int(base_rss),
                  "counterMs": base["counterMs"], "groupbyMs": base["groupbyMs"], "modulesMs": ours["modulesMs"],
                  "overviewMs": ours["overviewMs"], "inc0": inc0, "inc1": inc1, "set": put, "onlyChangedS": only_s,
                  "onlyChanged": only_n, "pythonRefresh": py_inc, "pythonRefreshWallS": py_inc_s, "simHwmKiB": int(sim_hwm), "loads": loads}))
PY
