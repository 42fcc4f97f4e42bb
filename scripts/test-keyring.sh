#!/bin/sh
# The Secret Service of a private test session (scripts/lib.sh, private_session: the test
# command, the crash loops and the app's benchmarks): gnome-keyring with its login keyring
# unlocked, in the foreground, as D-Bus starts it when a client first asks for
# org.freedesktop.secrets, and again whenever the daemon it started has died. It keeps its
# keyring under the session's XDG_DATA_HOME (the bus's environment), so a daemon started again
# finds what the one before stored, unlocked with the same password.
printf 'dcs-test-keyring' | exec gnome-keyring-daemon --foreground --unlock --components=secrets
