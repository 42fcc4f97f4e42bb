#!/usr/bin/env bash
# Supply-chain checks of the test command: `cargo deny check` (RustSec advisories, licenses,
# duplicate versions, sources; deny.toml) and `npm audit --omit=dev` of the UI's runtime
# packages. A finding fails. Without network to GitHub, the advisories are checked against the
# RustSec database snapshot in audit/ (CC0, its date in the file name), with a warning saying
# how old it is; where the registry has no audit endpoint, npm audit is skipped with a warning.
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
  # No network to GitHub (this machine, CI): check against the snapshot kept in audit/ instead,
  # and say how old it is. Newer advisories are then not seen; the warning says so.
  why="$(grep -m1 -o 'fatal: .*' <<<"$out" || echo 'no network')"
  snap="$(ls "$ROOT"/audit/rustsec-advisory-db-*.tar.xz | sort | tail -1)"
  day="$(basename "$snap" .tar.xz)"; day="${day#rustsec-advisory-db-}"
  tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
  # cargo deny's folder for the default database URL (the same for every 0.x release since 0.14).
  db="$tmp/dbs/advisory-db-3157b0e258782691"
  mkdir -p "$db" && tar -xJf "$snap" -C "$db"
  # It reads the database's date from git, so the snapshot becomes one commit of that day.
  (cd "$db" && git init -q && git add -A &&
    GIT_AUTHOR_DATE="${day}T00:00:00Z" GIT_COMMITTER_DATE="${day}T00:00:00Z" \
      git -c user.name=snapshot -c user.email=snapshot@localhost commit -qm "advisory-db $day")
  sed "s|^\[advisories\]|[advisories]\ndb-path = \"$tmp/dbs\"|" deny.toml >"$tmp/deny.toml"
  out="$(cargo deny --offline --config "$tmp/deny.toml" --log-level error check advisories 2>&1)" && status=0 || status=$?
  if [ "$status" -ne 0 ]; then
    printf '%s\n' "$out" >&2
    die "cargo deny found advisories in the snapshot of $day (accepted ones go in deny.toml's [advisories] ignore, with their reason)"
  fi
  printf '\033[1;33mwarning:\033[0m advisories checked against the snapshot of %s in audit/ only: the live RustSec database could not be fetched (%s), so advisories published since are not seen\n' \
    "$day" "$why" >&2
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
