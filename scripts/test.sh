#!/usr/bin/env bash
# Sets up what is missing and runs every test: supply-chain checks (scripts/audit.sh), the
# runner's packaging (scripts/check-packaging.sh), a short fuzzing run (scripts/fuzz.sh), UI unit
# tests, the simulator's contract test (schemathesis against its OpenAPI document), Rust unit and
# integration tests (the keychain ones against a real gnome-keyring), the end-to-end test of the
# real app under Xvfb through tauri-driver, and the installer test (the .deb installed, started
# and removed).
# Usage: scripts/test.sh     (CI runs it through .ci/run)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
started=$(date +%s)

ensure_packages "${APP_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
ensure_rust
ensure_rust_style_tools
ensure_ui_deps
ensure_tauri_driver
ensure_e2e_python
ensure_contract_python

# CI keeps the cargo target folder outside the fresh clone, so runs on one machine reuse it.
if [ "${CI:-}" = true ] && [ -z "${CARGO_TARGET_DIR:-}" ]; then
  export CARGO_TARGET_DIR=/var/tmp/dcs-console-target
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# Advisories, licenses, duplicate versions and sources of the Rust crates; npm audit of the UI.
bash "$ROOT/scripts/audit.sh"

# Style: one layout (rustfmt.toml) for the workspace and the fuzz targets.
log "Rust: cargo fmt --check"
(cd "$ROOT" && cargo fmt --all --check) || die "the Rust code is not as rustfmt lays it out: run cargo fmt --all"
(cd "$ROOT/fuzz" && cargo fmt --check) || die "the fuzz targets are not as rustfmt lays them out: run cargo fmt in fuzz/"

log "Python: pyflakes (tests, benchmarks, scripts)"
(cd "$ROOT" && "$VENV/bin/python" -m pyflakes bench scripts tests) || die "pyflakes found the mistakes above in the Python files"

log "shell: nothing piped into grep -q"
# grep -q exits at its first match; a writer with more to say is then killed by SIGPIPE and, under
# pipefail (every script here), the line fails at random: read the output whole, then match it
# (grep -q ... <<<"$(cmd)"). The installer test failed on CI this way.
if grep -nE '(^|[^|])\|[[:space:]]*grep([[:space:]]+-[[:alnum:]]+)*[[:space:]]+(-[[:alnum:]]*q|--quiet|--silent)' \
  -r --include='*.sh' "$ROOT/scripts" "$ROOT/tests" "$ROOT/bench" "$ROOT/.ci/run"; then
  die "a command is piped into grep -q above: capture its output first, then grep -q <<<\"\$output\""
fi

# The runner's packaging, nothing built: its systemd unit (systemd-analyze), its Containerfile,
# and what the .deb installs beside the app (the installer test checks the built .deb).
bash "$ROOT/scripts/check-packaging.sh"

log "UI: type check, lint and unit tests"
(cd "$ROOT/ui" && npm run --silent typecheck && npm run --silent lint && npm test --silent)
build_ui

# Lints: every crate, test and the app (it embeds ui/dist, built above), warnings refused.
log "Rust: cargo clippy -D warnings"
(cd "$ROOT" && cargo clippy --workspace --all-targets "${APP_FEATURES[@]}" -q -- -D warnings)

# One cargo build with one feature set serves every test step below and the app itself.
log "building every crate, test and the app"
(cd "$ROOT" && cargo test --workspace "${APP_FEATURES[@]}" --no-run -q)
build_app

log "checking that ui/src/bindings.ts is what the Rust commands generate"
fresh="$(mktemp)"
"$CARGO_TARGET_DIR/debug/dcs-console" --export-bindings "$fresh"
if ! diff -u "$ROOT/ui/src/bindings.ts" "$fresh"; then
  die "ui/src/bindings.ts is stale: run target/debug/dcs-console --export-bindings ui/src/bindings.ts and commit it"
fi
rm -f "$fresh"

# The installable package, bundled from the debug build above and installed by the installer test
# in the session below (scripts/bundle.sh builds the release one that is shipped).
DCS_DEB="$(build_deb --debug)"
export DCS_DEB

# Coverage-guided fuzzing, 20 s per target, of a quick build (scripts/fuzz.sh runs the optimised
# AddressSanitizer build for hours when asked).
bash "$ROOT/scripts/fuzz.sh" --quick 20

log "contract: the simulator against its OpenAPI document (schemathesis)"
bash "$ROOT/tests/contract/run.sh"

# The rest runs in a private D-Bus session with an unlocked gnome-keyring, which its bus starts
# (again should it die), and its own XDG folders (lib.sh, private_session).
log "Rust tests and end-to-end tests (D-Bus session, gnome-keyring, Xvfb)"
private_session bash "$ROOT/scripts/test-session.sh"

log "all tests passed in $(( $(date +%s) - started )) s"
