"""An X display for tests that run the desktop app: the caller's, or a private Xvfb (found with
-displayfd, so two runs never pick the same number). Shared by tests/e2e and tests/crash."""

import contextlib
import os
import subprocess


@contextlib.contextmanager
def x_display():
    """Sets DISPLAY for the block (and what it starts); answers it."""
    if os.environ.get("DISPLAY"):
        yield os.environ["DISPLAY"]
        return
    r, w = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
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
