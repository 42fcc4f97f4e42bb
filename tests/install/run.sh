#!/usr/bin/env bash
# The installer test: installs the .deb on this machine (dpkg -i, then apt-get -f install for
# any missing dependency), checks what it put where (binary, desktop entry, icons, control
# fields; dcs and the runner's systemd unit, which stays disabled), starts the installed app
# from /usr/bin under Xvfb through WebDriver and checks its first screen against its simulator
# (screenshot in tests/install/artifacts), prints the idle figures of the installed app
# (bench/app_idle.py), then removes the package and checks it is gone. Needs root (or sudo) and
# a D-Bus session; scripts/test.sh runs it.
# Usage: tests/install/run.sh [path/to/package.deb]   (default: the newest one built)
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib.sh"

deb="${1:-$(ls -t "${CARGO_TARGET_DIR:-$ROOT/target}"/release/bundle/deb/*.deb 2>/dev/null | head -n 1)}"
[ -f "$deb" ] || die "no .deb to install: run scripts/bundle.sh first"
pkg="$(dpkg-deb -f "$deb" Package)"
bin="/usr/bin/dcs-console"
# The headless runner beside the app (docs/runner.md): dcs and its systemd unit (a template).
dcs="/usr/bin/dcs"
unit="/lib/systemd/system/dcs-runner@.service"
fail() { die "installer test: $*"; }

log "installer test: $deb"
echo "  package $pkg $(dpkg-deb -f "$deb" Version), $(du -k "$deb" | cut -f1) KiB, installed size $(dpkg-deb -f "$deb" Installed-Size) KiB"
# Each field is read whole before it is matched: piped into grep -q, dpkg-deb can be killed by
# SIGPIPE when grep exits at its first match, and pipefail fails the line (CI did, on Description).
depends="$(dpkg-deb -f "$deb" Depends)"
grep -q 'libwebkit2gtk-4.1-0' <<<"$depends" || fail "Depends lacks WebKitGTK: $depends"
# The tray icon loads the indicator library when the app starts (tray.rs).
grep -q 'libayatana-appindicator3-1' <<<"$depends" || fail "Depends lacks the tray indicator: $depends"
# Each package named once: the bundler adds the indicator itself for the tray, and
# tauri.conf.json's depends named it again.
twice="$(tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/[ (].*//' | sort | uniq -d)"
[ -z "$twice" ] || fail "Depends names $twice more than once: $depends"
# Its files packed with xz (scripts/lib.sh build_deb), not the bundler's gzip: 9.0 against 13.1 MiB.
members="$(ar t "$deb")"
grep -qx 'data.tar.xz' <<<"$members" || fail "the package's files are not packed with xz: $(tr '\n' ' ' <<<"$members")"
description="$(dpkg-deb -f "$deb" Description)"
grep -q 'Device Connectivity' <<<"$description" || fail "the Description does not name the console: $description"

if package_installed "$pkg"; then
  fail "$pkg is already installed on this machine; remove it first (apt-get remove $pkg)"
fi
removed=0
remove() {
  [ "$removed" = 1 ] && return 0
  removed=1
  as_root env DEBIAN_FRONTEND=noninteractive apt-get remove -y -q "$pkg" >/dev/null
}
trap remove EXIT

as_root dpkg -i "$deb" || as_root env DEBIAN_FRONTEND=noninteractive apt-get -f install -y -q
package_installed "$pkg" || fail "$pkg did not install"

files="$(dpkg -L "$pkg")"
for f in "$bin" "$dcs" "$unit" /usr/share/applications/ /usr/share/icons/hicolor/32x32/apps/ /usr/share/icons/hicolor/128x128/apps/ \
  /usr/share/icons/hicolor/256x256/apps/ /usr/share/icons/hicolor/512x512/apps/; do
  # A folder: something in it; a file: that very path (/usr/bin/dcs is not /usr/bin/dcs-console).
  case "$f" in */) match=(grep -q "^${f}") ;; *) match=(grep -qxF -- "$f") ;; esac
  "${match[@]}" <<<"$files" || fail "the package does not install $f; it holds:
$files"
done
desktop="$(grep '^/usr/share/applications/.*\.desktop$' <<<"$files" | head -n 1)"
grep -q '^Exec=dcs-console' "$desktop" || fail "$desktop does not start dcs-console: $(cat "$desktop")"
grep -q '^Name=Device Connectivity Console' "$desktop" || fail "$desktop has another name: $(cat "$desktop")"
# dcs-console:// links open in the app (the running one, by the app's own hand-over).
grep -q '^Exec=dcs-console %u$' "$desktop" || fail "$desktop does not pass a link to dcs-console: $(cat "$desktop")"
grep -q '^MimeType=.*x-scheme-handler/dcs-console' "$desktop" || fail "$desktop does not claim dcs-console:// links: $(cat "$desktop")"
if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$desktop"; fi
echo "  installed: $bin ($(du -k "$bin" | cut -f1) KiB), $desktop, icons: $(grep -c '^/usr/share/icons/.*\.png$' <<<"$files") sizes"

# dcs runs, is the package's version, and has the runner with the flags the unit and the
# Containerfile give it.
version="$("$dcs" --version)" || fail "$dcs --version failed: $version"
[ "$version" = "dcs $(dpkg-deb -f "$deb" Version)" ] || fail "$dcs --version says $version, the package is $(dpkg-deb -f "$deb" Version)"
serve_help="$("$dcs" serve --help)" || fail "$dcs serve --help failed: $serve_help"
for flag in --profile --log-format --listen --secret-file; do
  grep -q -- "$flag" <<<"$serve_help" || fail "dcs serve has no $flag, which the unit or the Containerfile passes:
$serve_help"
done
# The unit as installed, with the installed dcs: systemd-analyze verify complains of nothing (it
# exits 0 on unknown settings, so its output is judged too).
if ! verify="$(systemd-analyze verify --man=no "${unit%@.service}@install-test.service" 2>&1)" \
  || grep -q 'dcs-runner@' <<<"$verify"; then
  fail "systemd-analyze verify of $unit:
$verify"
fi
# Installed, not enabled nor started: no maintainer script of the package names the unit, no
# link to it is in /etc/systemd, and systemctl (which reads the unit files, with or without a
# running systemd) calls it disabled.
for script in /var/lib/dpkg/info/"$pkg".{preinst,postinst,prerm,postrm}; do
  if [ -e "$script" ] && grep -q 'dcs-runner' "$script"; then fail "$script acts on the runner's unit: $(cat "$script")"; fi
done
links="$(find /etc/systemd -name 'dcs-runner@*' 2>/dev/null || true)"
[ -z "$links" ] || fail "installing the package enabled the runner: $links"
state="$(systemctl is-enabled dcs-runner@.service 2>&1 || true)"
[ "$state" = disabled ] || fail "systemctl is-enabled dcs-runner@.service says $state, not disabled"
echo "  installed: $dcs ($version, $(du -k "$dcs" | cut -f1) KiB), $unit (verified, disabled)"

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if [ -z "${DISPLAY:-}" ]; then
  Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp > "$ROOT/tests/install/.display" 2>/dev/null &
  xvfb=$!
  for _ in $(seq 50); do [ -s "$ROOT/tests/install/.display" ] && break; sleep 0.1; done
  export DISPLAY=":$(cat "$ROOT/tests/install/.display")"
  rm -f "$ROOT/tests/install/.display"
  trap 'remove; kill $xvfb 2>/dev/null || true' EXIT
fi
export DCS_APP_BINARY="$bin" DCS_E2E_ARTIFACTS="$ROOT/tests/install/artifacts"
mkdir -p "$DCS_E2E_ARTIFACTS"
log "installer test: the installed app's first screen"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider \
  "$ROOT/tests/e2e/test_first_screen.py::test_module_names_on_screen_are_exactly_the_simulators"
log "installer test: the installed app's first screen and idle memory (figures, not checks)"
"$VENV/bin/python" "$ROOT/bench/app_idle.py"

remove
for f in "$bin" "$dcs" "$unit"; do
  [ ! -e "$f" ] || fail "$f is still there after removing $pkg"
done
package_installed "$pkg" && fail "$pkg is still installed"
log "installer test: installed, started, checked and removed $pkg"
