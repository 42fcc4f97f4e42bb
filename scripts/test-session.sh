#!/usr/bin/env bash
# Runs inside `dbus-run-session` (see test.sh), whose bus starts an unlocked gnome-keyring: the
# Rust tests, the end-to-end tests and the installer test.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# The session's XDG folders and its keyring come from test.sh (lib.sh, private_session): the bus
# starts the keyring when a test first asks for it. Here the keyring is asked once, so that a bus
# without it fails now.
[ -n "${XDG_RUNTIME_DIR:-}" ] && [ -d "${XDG_DATA_HOME:-}/keyrings" ] || die "run by scripts/test.sh, which makes the session's folders"
printf 'probe' | secret-tool store --label='dcs test session' dcs-test-session probe \
  || die "the test session's keyring did not answer (scripts/test-keyring.sh, started by the bus)"
# And should it die, the next call finds it again, unlocked, with what it held: this session's
# daemon (by its keyring folder; another session's may run beside it) is killed, then read.
for pid in $(pgrep -x gnome-keyring-d || true); do
  if grep -qzxF "XDG_DATA_HOME=$XDG_DATA_HOME" "/proc/$pid/environ" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  fi
done
[ "$(timeout 20 secret-tool lookup dcs-test-session probe)" = probe ] \
  || die "the test session's keyring, started again by the bus, did not answer what it held"

(cd "$ROOT" && cargo test --workspace "${APP_FEATURES[@]}")
# A second pass: the client's and the CLI's tests against the simulator's other plausible
# service (docs/simulator-assumptions.md, "The alt variant"), so no test passes only because of
# a choice the reference variant made where the reference is silent.
# The executables of the build above are run again (another `cargo test -p` would build another
# feature set).
executables="$(test_executables crates/api crates/cli)"
[ "$(wc -l <<<"$executables")" -ge 5 ] || die "the client's and the CLI's test executables were not found: $executables"
while read -r dir exe; do
  log "alt variant: $(basename "$dir") $(basename "$exe")"
  (cd "$dir" && DCS_SIM_VARIANT=alt "$exe" -q)
done <<<"$executables"

# Crash safety: dcs, the app and the simulator killed with SIGKILL at random points, 50 per loop
# (tests/crash; the app's loop opens its own Xvfb display). The loops wait on the simulator's
# latency more than they compute, so three run side by side.
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -n 3 "$ROOT/tests/crash"

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
# Two side by side (each test's app, simulator and driver its own), with every wait's ceiling
# raised for it (tests/e2e/conftest.py, PATIENCE); then the tests that compare durations (marked
# `alone`), one at a time, so that the other test's load does not skew what they measure.
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -n 2 -m "not alone" "$ROOT/tests/e2e"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -m alone "$ROOT/tests/e2e"
# The firmware, downlinks and bindings screens again, against the alt variant of the simulator.
DCS_SIM_VARIANT=alt "$VENV/bin/python" -m pytest -q -p no:cacheprovider -n 2 \
  "$ROOT/tests/e2e/test_firmware.py" "$ROOT/tests/e2e/test_firmware_files.py" \
  "$ROOT/tests/e2e/test_downlinks.py" "$ROOT/tests/e2e/test_bindings.py"

# The .deb test.sh built: installed, its app started from /usr/bin and checked, then removed.
bash "$ROOT/tests/install/run.sh" "${DCS_DEB:?test.sh builds the .deb}"
