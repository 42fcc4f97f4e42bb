#!/usr/bin/env bash
# Supply-chain checks of the test command: `cargo deny check` (RustSec advisories, licenses,
# duplicate versions, sources; deny.toml) and `npm audit --omit=dev` of the UI's runtime
# packages. A finding fails. Where a database cannot be reached (no network to GitHub for the
# advisory database, a registry without the audit endpoint), that one check is skipped with a
# warning saying so, and the others still run.
# Usage: scripts/audit.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ensure_cargo_deny

cd "$ROOT"
log "cargo deny: licenses, duplicate versions, sources"
cargo deny --log-level warn check bans licenses sources

log "cargo deny: RustSec advisories"
out="$(cargo deny --log-level error check advisories 2>&1)" && status=0 || status=$?
if grep -q "failed to fetch advisory database" <<<"$out"; then
  printf '\033[1;33mwarning:\033[0m advisories NOT checked: the RustSec database could not be fetched (%s)\n' \
    "$(grep -m1 -o 'fatal: .*' <<<"$out" || echo 'no network')" >&2
elif [ "$status" -ne 0 ]; then
  printf '%s\n' "$out" >&2
  die "cargo deny found advisories (accepted ones go in deny.toml's [advisories] ignore, with their reason)"
fi

log "npm audit of the UI's runtime packages"
out="$(cd ui && npm audit --omit=dev 2>&1)" && status=0 || status=$?
if grep -qE "audit endpoint returned an error|ENOTFOUND|ECONNREFUSED|ETIMEDOUT" <<<"$out"; then
  printf '\033[1;33mwarning:\033[0m npm audit NOT run: %s\n' "$(grep -m1 -E 'audit endpoint|ENOTFOUND|ECONN|ETIMEDOUT' <<<"$out")" >&2
elif [ "$status" -ne 0 ]; then
  printf '%s\n' "$out" >&2
  die "npm audit found vulnerable runtime packages"
fi
