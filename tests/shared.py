"""What tests/e2e and tests/crash share: an X display for the desktop app, and a token of the
simulator's (or any service's) for requests made as another tool would."""

import contextlib
import json
import os
import subprocess
import urllib.request

# The audience tokens are asked for (the reference's application id).
AUDIENCE = "4dc82561-f65f-523g-dek9-6c79ec314f02"


@contextlib.contextmanager
def x_display():
    """The caller's display, or a private Xvfb (found with -displayfd, so two runs never pick the
    same number). Sets DISPLAY for the block (and what it starts); answers it."""
    if os.environ.get("DISPLAY"):
        yield os.environ["DISPLAY"]
        return
    r, w = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-screen", "0", "1920x1200x24", "-nolisten", "tcp"],
        pass_fds=(w,),
        stderr=subprocess.DEVNULL,
    )
    os.close(w)
    with os.fdopen(r) as f:
        number = f.readline().strip()
    os.environ["DISPLAY"] = f":{number}"
    try:
        yield os.environ["DISPLAY"]
    finally:
        xvfb.terminate()
        xvfb.wait(10)
        del os.environ["DISPLAY"]


def service_token(base_url: str, key: dict) -> str:
    """An access token for the API key `key` (clientId, clientSecret), from the service's token
    endpoint."""
    body = json.dumps(
        {
            "grant_type": "client_credentials",
            "audience": AUDIENCE,
            "client_id": key["clientId"],
            "client_secret": key["clientSecret"],
        }
    ).encode()
    req = urllib.request.Request(
        base_url.rstrip("/") + "/api/v3/idp/oidc/token", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.load(res)["access_token"]
