#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser that takes input from outside, with cargo fuzz
# (libFuzzer, AddressSanitizer) on the stable toolchain: RUSTC_BOOTSTRAP=1 lets it use the
# nightly flags it needs. The targets (fuzz/fuzz_targets; each asserts round trips and bounds,
# not only "no panic"):
#   service_json     the service's JSON answers decoded into the model, refusals (problem+json
#                    or not) into the client's error, SenML messages shown
#   service_headers  Retry-After, Content-Disposition file names, access-token claims and how
#                    long a token is kept
#   text_parsers     device ids, durations, feedback timeouts, timestamps, the time filters as
#                    typed, sort expressions
#   sim_requests     the simulator's X-Sim-Fault and list queries: cursors (forged ones too),
#                    limit, sort, filters, time filters, for both variants
#   user_files       the profiles file (TOML), device lists (--device-list), SenML records
# The committed corpus (fuzz/corpus/<target>) is read, never written: what a run finds goes to
# $FUZZ_WORK/<target> (kept between runs, so long runs build on each other), and a crash to
# $FUZZ_WORK/<target>-crashes, which fails the run and prints how to reproduce it.
# Usage: scripts/fuzz.sh [--quick] [seconds per target, default 3600] [target...]
#   The test command runs scripts/fuzz.sh --quick 20: a debug build without AddressSanitizer
#   (overflow checks and debug assertions on; about 2.5 min to build cold on 2 cores, against
#   about 7.5 min for the optimised ASan build, which long runs use: scripts/fuzz.sh 14400).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ensure_rust
ensure_cargo_fuzz

build=(-O)
if [ "${1:-}" = --quick ]; then
  build=(--dev --sanitizer none); shift
fi
seconds="${1:-3600}"; shift || true
cd "$ROOT/fuzz"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  # Read whole first: in a process substitution a failing `cargo fuzz list` would go unnoticed and
  # leave no target, a run that fuzzes nothing and passes.
  listed="$(cargo fuzz list)" || die "fuzz: cargo fuzz list failed"
  mapfile -t targets <<<"$listed"
fi
[ ${#targets[@]} -gt 0 ] && [ -n "${targets[0]}" ] || die "fuzz: no fuzz target found in fuzz/fuzz_targets"
export RUSTC_BOOTSTRAP=1
# Its own target folder (instrumented builds share nothing with the workspace's).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/fuzz"
work="${FUZZ_WORK:-${CARGO_TARGET_DIR}/work}"

log "fuzz: building the targets (${build[*]})"
cargo fuzz build "${build[@]}"
for t in "${targets[@]}"; do
  mkdir -p "$work/$t" "$work/$t-crashes"
  log "fuzz: $t for $seconds s"
  if ! cargo fuzz run "${build[@]}" "$t" "$work/$t" "corpus/$t" -- \
      -max_total_time="$seconds" -artifact_prefix="$work/$t-crashes/" -print_final_stats=1 2>"$work/$t.log"; then
    tail -n 40 "$work/$t.log" >&2
    die "fuzz: $t crashed; the input is in $work/$t-crashes (reproduce: cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run ${build[*]} $t <file>)"
  fi
  # A target that ran no input fuzzed nothing: fail, and say how many ran for each.
  runs="$(sed -n 's/^stat::number_of_executed_units: *\([0-9][0-9]*\).*/\1/p' "$work/$t.log" | tail -n 1)"
  [ -n "$runs" ] && [ "$runs" -gt 0 ] || { tail -n 20 "$work/$t.log" >&2; die "fuzz: $t ran no input (no executions in its log)"; }
  log "fuzz: $t ran $runs inputs in $seconds s"
done
