"""The end-to-end harness itself: a session whose web process crashes (WebKitGTK's, killed here)
is reported as such, and its app is ended so the data folder is free for a rerun (conftest.py
reruns a test once for such a crash, and for nothing else)."""

import os
import signal
import subprocess

import pytest

from conftest import WebProcessCrashed, app_env, app_pids, app_session, session_crashed, wait_until_ended
from test_profiles import wait_css


def test_a_crashed_web_process_is_reported_and_its_app_ended(display, tmp_path):
    env = app_env(tmp_path)
    with open(tmp_path / "tauri-driver.log", "w") as log:
        with pytest.raises(WebProcessCrashed, match="page crash or hang"):
            with app_session(env, log) as d:
                # Generous: two tests run side by side, and the other may be an upload or a scan.
                wait_css(d, "[data-testid=home]", 90)
                assert not session_crashed(d)
                [app] = app_pids(env)
                web = subprocess.run(["pgrep", "-P", str(app), "-f", "WebKitWebProcess"], capture_output=True, text=True)
                assert web.stdout.split(), "the app's web process"
                for pid in web.stdout.split():
                    os.kill(int(pid), signal.SIGKILL)
                # The test's own next command fails, with whatever words (here "Could not parse
                # script result"); the session's end finds the crash.
                with pytest.raises(Exception):
                    d.execute_script("return 1")
        # app_session ended the app: the folder is free at once.
        assert not app_pids(env)
        wait_until_ended(env, timeout=1)
