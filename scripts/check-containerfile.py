#!/usr/bin/env python3
"""Checks packaging/Containerfile without a container runtime: its two stages (a Rust build on
Debian 12, a Debian 12 slim runtime), that the build's `cargo build` names a package of this
workspace that has the `dcs` binary, the runtime's non-root user, entry point, flags,
environment, volume, port and health check; then runs the health check's own command in bash
against a local HTTP server (200 on /healthz: healthy; 503, or nothing listening: not), and
checks that the build context's ignore file keeps the build folders out.

Usage: scripts/check-containerfile.py [Containerfile]   (scripts/check-packaging.sh runs it)
"""

import http.server
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTAINERFILE = os.path.join(ROOT, "packaging", "Containerfile")

failures = []


def check(ok, what):
    """Records a failed check; prints a passed one."""
    if ok:
        print(f"  ok: {what}")
    else:
        failures.append(what)
        print(f"  FAILED: {what}")
    return ok


def instructions(text):
    """The Containerfile's instructions as (line, KEYWORD, arguments), continuation lines joined
    and comments left out (also those between continuation lines, as Docker and Buildah do)."""
    out, parts, start = [], [], None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if start is None:
            start = number
        if line.endswith("\\"):
            parts.append(line[:-1].strip())
            continue
        parts.append(line)
        joined = " ".join(parts)
        keyword, _, args = joined.partition(" ")
        out.append((start, keyword.upper(), args.strip()))
        parts, start = [], None
    if parts:
        failures.append(f"the Containerfile ends inside a continued line (line {start})")
    return out


def stages(instrs):
    """The stages: each a dict with its image, its name (AS ...) and its instructions."""
    result = []
    for line, keyword, args in instrs:
        if keyword == "FROM":
            words = args.split()
            words = [w for w in words if not w.startswith("--")]
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            result.append({"line": line, "image": words[0], "name": name, "instrs": []})
        elif result:
            result[-1]["instrs"].append((line, keyword, args))
        else:
            failures.append(f"line {line}: {keyword} before the first FROM")
    return result


def image_is(image, wanted):
    """Whether `image` is `wanted` (e.g. rust:1-bookworm), with or without Docker Hub's prefix."""
    return image in (wanted, f"docker.io/library/{wanted}", f"library/{wanted}")


def of(stage, keyword):
    return [args for _, k, args in stage["instrs"] if k == keyword]


def exec_form(args):
    """A JSON (exec) form's list, else None."""
    try:
        value = json.loads(args)
    except ValueError:
        return None
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def env_of(stage):
    """ENV's variables (the KEY=VALUE form, several per line, values as the shell would split them)."""
    env = {}
    for args in of(stage, "ENV"):
        for word in shlex.split(args):
            key, sep, value = word.partition("=")
            if sep:
                env[key] = value
    return env


def workspace_binaries():
    """{package name: set of binary names} of the workspace's members."""
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        members = tomllib.load(f)["workspace"]["members"]
    packages = {}
    for member in members:
        with open(os.path.join(ROOT, member, "Cargo.toml"), "rb") as f:
            manifest = tomllib.load(f)
        name = manifest["package"]["name"]
        bins = {b["name"] for b in manifest.get("bin", [])}
        if not bins and os.path.exists(os.path.join(ROOT, member, "src", "main.rs")):
            bins = {name}
        packages[name] = bins
    return packages


class Health(http.server.BaseHTTPRequestHandler):
    """Answers /healthz with the status the server was given (HTTP/1.0, as the runner's own
    server would answer an HTTP/1.0 request), everything else with 404."""

    def do_GET(self):
        status = self.server.status if self.path == "/healthz" else 404
        body = b"ok\n" if status == 200 else b"no\n"
        try:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the health check closes the connection once it has read the status line

    def log_message(self, *args):
        pass


def run_health_check(command, port):
    """Exit status of the health check's bash command aimed at 127.0.0.1:`port`."""
    aimed = command.replace("/dev/tcp/127.0.0.1/9464", f"/dev/tcp/127.0.0.1/{port}")
    try:
        return subprocess.run(["bash", "-c", aimed], capture_output=True, timeout=10).returncode
    except subprocess.TimeoutExpired:
        return "timed out"


def check_health_command(command):
    """The health check's command itself: healthy on 200, not on 503, not when nothing listens."""
    for status, healthy in ((200, True), (503, False)):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
        server.status = status
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            code = run_health_check(command, server.server_address[1])
        finally:
            server.shutdown()
            server.server_close()
        check((code == 0) == healthy, f"the health check's command, against a server answering {status} on /healthz, "
              f"says {'healthy' if healthy else 'unhealthy'} (exit status {code})")
    # A port nobody listens on: the one of the server just closed.
    code = run_health_check(command, server.server_address[1])
    check(code not in (0, "timed out"), f"the health check's command fails at once when nothing listens (exit status {code})")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else CONTAINERFILE
    print(f"checking {os.path.relpath(path, ROOT)}")
    with open(path) as f:
        found = stages(instructions(f.read()))

    if not check(len(found) == 2, f"two stages (found {len(found)})"):
        return
    build, run = found
    check(image_is(build["image"], "rust:1-bookworm") and build["name"],
          f"the first stage builds on rust:1-bookworm and is named ({build['image']} AS {build['name']})")
    check(image_is(run["image"], "debian:bookworm-slim"),
          f"the second stage runs on debian:bookworm-slim ({run['image']})")

    # The build: `cargo build --release -p PACKAGE --locked`, PACKAGE one with the dcs binary.
    packages = workspace_binaries()
    builds = [m for args in of(build, "RUN") for m in re.finditer(r"cargo build\b([^&;|]*)", args)]
    check(len(builds) == 1, f"one `cargo build` in the build stage (found {len(builds)})")
    if builds:
        flags = builds[0].group(1).split()
        package = flags[flags.index("-p") + 1] if "-p" in flags[:-1] else None
        check("--release" in flags and "--locked" in flags, f"the build is --release and --locked ({' '.join(flags)})")
        check(package in packages, f"`cargo build -p {package}` names a package of the workspace ({', '.join(sorted(packages))})")
        check("dcs" in packages.get(package, set()), f"package {package} has the binary dcs ({packages.get(package)})")
    build_runs = " ".join(of(build, "RUN"))
    check("target/release/dcs" in build_runs, "the build stage takes target/release/dcs, the release build's binary")

    # The runtime.
    copies = of(run, "COPY")
    check(any(c.startswith(f"--from={build['name']} ") and c.split()[-1] == "/usr/bin/dcs" for c in copies),
          f"the runtime copies dcs from stage {build['name']} to /usr/bin/dcs")
    users = of(run, "USER")
    user = users[-1].split(":")[0] if users else "root"
    check(users and user not in ("root", "0"), f"the runtime runs as a user other than root (USER {users[-1] if users else 'none'})")
    if user.isdigit():
        check(re.search(rf"--uid {user}\b", " ".join(of(run, "RUN"))) is not None, f"user {user} is created in the image")

    entrypoint = exec_form(of(run, "ENTRYPOINT")[-1]) if of(run, "ENTRYPOINT") else None
    check(entrypoint == ["dcs", "serve"], f'ENTRYPOINT ["dcs", "serve"] in exec form ({entrypoint})')
    cmd = exec_form(of(run, "CMD")[-1]) if of(run, "CMD") else None
    cmd = cmd or []

    def flag(name):
        return cmd[cmd.index(name) + 1] if name in cmd[:-1] else None

    listen = flag("--listen") or ""
    check(listen.startswith("0.0.0.0:"), f"CMD listens on every address of the container (--listen {listen})")
    check(flag("--log-format") == "json", f"CMD logs JSON lines (--log-format {flag('--log-format')})")
    check(flag("--secret-file") == "/run/secrets/dcs-client-secret",
          f"CMD reads the secret from /run/secrets/dcs-client-secret (--secret-file {flag('--secret-file')})")
    port = listen.rpartition(":")[2]

    env = env_of(run)
    check(env.get("DCS_DATA_DIR") == "/var/lib/dcs-runner", f"ENV DCS_DATA_DIR=/var/lib/dcs-runner ({env.get('DCS_DATA_DIR')})")
    check(env.get("DCS_CONFIG") == "/etc/dcs-runner/config.toml", f"ENV DCS_CONFIG=/etc/dcs-runner/config.toml ({env.get('DCS_CONFIG')})")
    volumes = [v for args in of(run, "VOLUME") for v in (exec_form(args) or args.split())]
    check(env.get("DCS_DATA_DIR") in volumes, f"the data folder is a VOLUME ({volumes})")
    exposed = [p.split("/")[0] for args in of(run, "EXPOSE") for p in args.split()]
    check(port in exposed, f"EXPOSE {port}, the port of --listen ({exposed})")

    health = of(run, "HEALTHCHECK")
    if check(len(health) == 1, "one HEALTHCHECK"):
        _, sep, test = health[0].partition(" CMD ")
        test = exec_form(test.strip()) if sep else None
        check(test is not None and test[:2] == ["bash", "-c"] and len(test) == 3,
              f"the HEALTHCHECK runs bash -c in exec form ({test})")
        if test and len(test) == 3:
            command = test[2]
            check(f"/dev/tcp/127.0.0.1/{port}" in command and "GET /healthz " in command,
                  f"the HEALTHCHECK asks /healthz on 127.0.0.1:{port}")
            check_health_command(command)

    # The build context: the repository root, without what is built or installed in it.
    ignore_path = os.path.join(ROOT, ".dockerignore")
    if check(os.path.exists(ignore_path), ".dockerignore at the repository root (podman and docker read it)"):
        with open(ignore_path) as f:
            patterns = {line.strip().strip("/") for line in f if line.strip() and not line.startswith("#")}
        for wanted in ("target", "ui/node_modules", "ui/dist", ".git", ".venv", "packaging/staging"):
            check(wanted in patterns or f"**/{wanted}" in patterns, f".dockerignore leaves out {wanted}")


if __name__ == "__main__":
    main()
    if failures:
        print(f"{len(failures)} check(s) of the Containerfile failed", file=sys.stderr)
        sys.exit(1)
