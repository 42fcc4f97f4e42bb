#!/usr/bin/env bash
# Benchmark (not a test) of the client against what a user would otherwise use, in one run on
# the same files and pages, against a release build of the simulator on this machine:
#   hash:    SHA-256 of the file       vs  openssl dgst -sha256 and sha256sum (best of 3 each,
#            taken in turn, the file in the page cache)
#   upload:  a 1 GiB firmware file     vs  sha256sum f && curl -F file=@f -F checksum=...
#            (curl without `Expect: 100-continue`, its fastest form); the client's one read
#            (checksum after the file, hashed while sent) and its two reads (hash pass, then
#            the checksum first: what a service that wants it first gets)
#   scan:    100,000+ firmware states   vs  a sequential curl loop following the next links
# with the peak RSS of each (GNU time), the client's RSS growth over its own baseline, and the
# load average each part ran under (other work on the machine slows every side alike).
# Aims: hash >= 0.8x openssl's rate, upload (one read) <= 0.5x the pair's time, scan at 0.9x
# or better of the loop, growth < 64 MiB.
# Usage: [BENCH_DRIVER=path] bench/client.sh [size-in-MiB, default 1024]
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"

size_mib="${1:-1024}"
ensure_packages curl time openssl
ensure_rust
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
log "building dcs and the client's benchmark driver (release)"
(cd "$ROOT" && cargo build --release -q -p dcs-cli && cargo build --release -q -p dcs-api --example transfer)
DCS="$CARGO_TARGET_DIR/release/dcs"
# BENCH_DRIVER: another build of the driver (an earlier commit's, for before-and-after figures).
DRIVER="${BENCH_DRIVER:-$CARGO_TARGET_DIR/release/examples/transfer}"

work="$(mktemp -d /var/tmp/dcs-bench.XXXXXX)"
log "starting the simulator with about 120,000 firmware states for the demo reseller"
start_bench_sim "$DCS" "$work" 120 1 --devices-per-client 45000 --speed 0.001
bench_credentials "$DCS" 1
export DCS_CLIENT_SECRET="$secret"

log "writing a ${size_mib} MiB file"
head -c "$((size_mib * 1024 * 1024))" /dev/urandom > "$work/firmware.bin"

# Runs a command under GNU time; prints "seconds max_rss_kib" of it and its children.
timed() { /usr/bin/time -f '%e %M' -o "$work/time" "$@" > "$work/stdout"; cat "$work/time"; }

# Runs a command under GNU time; prints "wall_seconds cpu_seconds" (user + system) of it.
wall_cpu() { /usr/bin/time -f '%e %U %S' -o "$work/time" "$@" > "$work/stdout"; awk '{print $1, $2 + $3}' "$work/time"; }
log "hash: openssl dgst -sha256, sha256sum and the client, best of 3 each, taken in turn"
cat "$work/firmware.bin" > /dev/null
hash_load="$(cut -d' ' -f1-3 /proc/loadavg)"
: > "$work/hash-times"
for _ in 1 2 3; do
  echo "openssl $(wall_cpu openssl dgst -sha256 -r "$work/firmware.bin")" >> "$work/hash-times"
  ossl_sum="$(cut -d' ' -f1 "$work/stdout")"
  echo "sha256sum $(wall_cpu sha256sum "$work/firmware.bin")" >> "$work/hash-times"
  coreutils_sum="$(cut -d' ' -f1 "$work/stdout")"
  echo "client $(wall_cpu "$DRIVER" hash "$work/firmware.bin")" >> "$work/hash-times"
  our_sum="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["sha256"])' < "$work/stdout")"
done
[ "$ossl_sum" = "$coreutils_sum" ] && [ "$ossl_sum" = "$our_sum" ] || die "the hashes disagree: $ossl_sum $coreutils_sum $our_sum"
# "wall cpu" of each, the best of its three runs.
best() { awk -v w="$1" '$1 == w { if (!n || $2 < bw) bw = $2; if (!n || $3 < bc) bc = $3; n++ } END { print bw, bc }' "$work/hash-times"; }
read -r ossl_s ossl_cpu < <(best openssl)
read -r sum_s sum_cpu < <(best sha256sum)
read -r our_hash_s our_hash_cpu < <(best client)

up_load="$(cut -d' ' -f1-3 /proc/loadavg)"
log "upload: sha256sum && curl"
pkg="$("$DRIVER" "$url" "$id" new-package)"
read -r curl_up_s curl_up_rss < <(timed bash -c "sum=\$(sha256sum '$work/firmware.bin' | cut -d' ' -f1) && curl -sf -o /dev/null -H 'Expect:' -H 'Authorization: Bearer $token' -F 'file=@$work/firmware.bin' -F checksum=\$sum '$url/firmware/packages/$pkg/firmware-file'")
log "upload: the client, one read"
pkg="$("$DRIVER" "$url" "$id" new-package)"
read -r our_up_s our_up_rss < <(timed "$DRIVER" "$url" "$id" upload "$pkg" "$work/firmware.bin")
our_up_growth="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["rss_growth_kib"])' < "$work/stdout")"
log "upload: the client, two reads (checksum first)"
pkg="$("$DRIVER" "$url" "$id" new-package)"
read -r two_up_s two_up_rss < <(timed "$DRIVER" "$url" "$id" upload-two-pass "$pkg" "$work/firmware.bin")
up_load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

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
  "$our_states" "$curl_scan_s" "$curl_scan_rss" "$our_scan_s" "$our_scan_rss" "$our_scan_growth" \
  "$ossl_s" "$sum_s" "$our_hash_s" "$two_up_s" "$two_up_rss" "$hash_load" "$up_load" "$up_load_end" \
  "$ossl_cpu" "$sum_cpu" "$our_hash_cpu" <<'PY'
import sys
a = sys.argv[1:]
size, cu, cur, ou, our, oug, n, cs, csr, os_, osr, osg = a[:12]
ossl, ssum, oh, tu, tur, hload, uload, uload_end, ossl_c, ssum_c, oh_c = a[12:]
mib = lambda k: f"{int(k) / 1024:.1f} MiB"
rate = lambda s: float(size) / float(s)
print()
print(f"hash under load average {hload}; upload under {uload} (at its end {uload_end})")
print(f"{'':32} {'what users would use':>22} {'the client':>12} {'ratio':>8}")
print(f"{'hash (MiB/s), openssl dgst':32} {rate(ossl):>22.0f} {rate(oh):>12.0f} {rate(oh) / rate(ossl):>7.2f}x  (rate vs openssl, aim >= 0.80x)")
print(f"{'hash (MiB/s), sha256sum':32} {rate(ssum):>22.0f} {rate(oh):>12.0f} {rate(oh) / rate(ssum):>7.2f}x  (rate vs sha256sum)")
print(f"{'hash (MiB per CPU second), openssl':32} {rate(ossl_c):>22.0f} {rate(oh_c):>12.0f} {rate(oh_c) / rate(ossl_c):>7.2f}x  (user + system time: what load does not change)")
print(f"{'upload ' + size + ' MiB (s), one read':32} {float(cu):>22.2f} {float(ou):>12.2f} {float(ou) / float(cu):>7.2f}x  (time vs the pair, aim <= 0.50x)")
print(f"{'upload ' + size + ' MiB (s), two reads':32} {float(cu):>22.2f} {float(tu):>12.2f} {float(tu) / float(cu):>7.2f}x  (a service wanting the checksum first)")
print(f"{'upload peak RSS (one / two reads)':32} {mib(cur):>22} {mib(our):>12} {mib(tur):>12}")
print(f"{'upload RSS growth (client)':32} {'':>22} {mib(oug):>12}  (aim < 64 MiB)")
print(f"{'scan ' + n + ' states (s)':32} {float(cs):>22.2f} {float(os_):>12.2f} {float(cs) / float(os_):>7.2f}x  (speed vs loop, aim >= 0.90x)")
print(f"{'scan peak RSS':32} {mib(csr):>22} {mib(osr):>12}")
print(f"{'scan RSS growth (client)':32} {'':>22} {mib(osg):>12}  (aim < 64 MiB)")
PY
