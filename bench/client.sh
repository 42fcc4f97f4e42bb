#!/usr/bin/env bash
# Benchmark (not a test) of the client against what a user would otherwise use, in one run on
# the same files and pages, against a release build of the simulator on this machine:
#   upload:  a 1 GiB firmware file     vs  sha256sum f && curl -F file=@f -F checksum=...
#            (curl without `Expect: 100-continue`, its fastest form)
#   scan:    100,000+ firmware states   vs  a sequential curl loop following the next links
# with the peak RSS of each (GNU time) and the client's RSS growth over its own baseline.
# Aims: upload within 1.1x of the pair, scan at 0.9x or better of the loop, growth < 64 MiB.
# Usage: bench/client.sh [size-in-MiB, default 1024]
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

size_mib="${1:-1024}"
ensure_packages curl time
ensure_rust
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
log "building dcs and the client's benchmark driver (release)"
(cd "$ROOT" && cargo build --release -q -p dcs-cli && cargo build --release -q -p dcs-api --example transfer)
DCS="$CARGO_TARGET_DIR/release/dcs"
DRIVER="$CARGO_TARGET_DIR/release/examples/transfer"

work="$(mktemp -d /var/tmp/dcs-bench.XXXXXX)"
log "starting the simulator with about 120,000 firmware states for the demo reseller"
start_bench_sim "$DCS" "$work" 120 1 --devices-per-client 45000 --speed 0.001
bench_credentials "$DCS" 1
export DCS_CLIENT_SECRET="$secret"

log "writing a ${size_mib} MiB file"
head -c "$((size_mib * 1024 * 1024))" /dev/urandom > "$work/firmware.bin"

# Runs a command under GNU time; prints "seconds max_rss_kib" of it and its children.
timed() { /usr/bin/time -f '%e %M' -o "$work/time" "$@" > "$work/stdout"; cat "$work/time"; }

log "upload: sha256sum && curl"
pkg="$("$DRIVER" "$url" "$id" new-package)"
read -r curl_up_s curl_up_rss < <(timed bash -c "sum=\$(sha256sum '$work/firmware.bin' | cut -d' ' -f1) && curl -sf -o /dev/null -H 'Expect:' -H 'Authorization: Bearer $token' -F 'file=@$work/firmware.bin' -F checksum=\$sum '$url/firmware/packages/$pkg/firmware-file'")
log "upload: the client"
pkg="$("$DRIVER" "$url" "$id" new-package)"
read -r our_up_s our_up_rss < <(timed "$DRIVER" "$url" "$id" upload "$pkg" "$work/firmware.bin")
our_up_growth="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["rss_growth_kib"])' < "$work/stdout")"

log "scan: sequential curl loop"
cat > "$work/loop.sh" <<LOOP
next="$url/firmware/states?limit=1000"; n=0
while [ -n "\$next" ]; do
  curl -sf -H 'Authorization: Bearer $token' "\$next" -o "$work/page.json"
  n=\$((n + \$(grep -o '"deviceId"' "$work/page.json" | wc -l)))
  next=\$(grep -o '"next":"[^"]*"' "$work/page.json" | cut -d'"' -f4 || true)
done
echo \$n
LOOP
read -r curl_scan_s curl_scan_rss < <(timed bash "$work/loop.sh")
curl_states="$(cat "$work/stdout")"
log "scan: the client"
read -r our_scan_s our_scan_rss < <(timed "$DRIVER" "$url" "$id" scan 1000)
our_states="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["states"])' < "$work/stdout")"
our_scan_growth="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["rss_growth_kib"])' < "$work/stdout")"
[ "$curl_states" = "$our_states" ] || die "the scans disagree: curl loop $curl_states states, client $our_states"

python3 - "$size_mib" "$curl_up_s" "$curl_up_rss" "$our_up_s" "$our_up_rss" "$our_up_growth" \
  "$our_states" "$curl_scan_s" "$curl_scan_rss" "$our_scan_s" "$our_scan_rss" "$our_scan_growth" <<'PY'
import sys
a = sys.argv[1:]
size, cu, cur, ou, our, oug, n, cs, csr, os_, osr, osg = a
mib = lambda k: f"{int(k) / 1024:.1f} MiB"
print()
print(f"{'':32} {'what users would use':>22} {'the client':>12} {'ratio':>8}")
print(f"{'upload ' + size + ' MiB (s)':32} {float(cu):>22.2f} {float(ou):>12.2f} {float(ou) / float(cu):>7.2f}x  (aim <= 1.10x)")
print(f"{'upload peak RSS':32} {mib(cur):>22} {mib(our):>12}")
print(f"{'upload RSS growth (client)':32} {'':>22} {mib(oug):>12}  (aim < 64 MiB)")
print(f"{'scan ' + n + ' states (s)':32} {float(cs):>22.2f} {float(os_):>12.2f} {float(cs) / float(os_):>7.2f}x  (speed vs loop, aim >= 0.90x)")
print(f"{'scan peak RSS':32} {mib(csr):>22} {mib(osr):>12}")
print(f"{'scan RSS growth (client)':32} {'':>22} {mib(osg):>12}  (aim < 64 MiB)")
PY
