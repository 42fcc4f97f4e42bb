"""A stand-in for the desktop's notification daemon on the test's D-Bus session (the one
`dbus-run-session` gave the run): it owns `org.freedesktop.Notifications`, records every
`Notify` call, answers the spec's other methods, and clicks a notification on request (the
spec's `ActionInvoked` signal with the `default` action), as a user would."""

import itertools
import queue
import threading
import time

from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

from conftest import deadline

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


class NotificationDaemon:
    def __init__(self):
        self.conn = open_dbus_connection(bus="SESSION")
        # 4: DO_NOT_QUEUE. 1: the primary owner (else a daemon of the desktop has the name).
        reply = self.conn.send_and_get_reply(message_bus.RequestName(NAME, 4))
        assert reply.body[0] == 1, f"{NAME} is owned already: {reply.body}"
        self.notes: list[dict] = []
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.outbox: queue.Queue = queue.Queue()
        self.running = True
        self.thread = threading.Thread(target=self._serve, name="notifyd", daemon=True)
        self.thread.start()

    def _serve(self):
        while self.running:
            while not self.outbox.empty():
                self.conn.send(self.outbox.get())
            try:
                msg = self.conn.receive(timeout=0.2)
            except TimeoutError:
                continue
            if msg.header.message_type != MessageType.method_call:
                continue
            fields = msg.header.fields
            if fields.get(HeaderFields.interface) not in (NAME, None):
                self.conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownInterface"))
                continue
            member = fields.get(HeaderFields.member)
            if member == "Notify":
                app, replaces, icon, summary, body, actions, hints, timeout = msg.body
                nid = replaces or next(self.ids)
                with self.lock:
                    self.notes.append(
                        {"id": nid, "app": app, "summary": summary, "body": body, "actions": list(actions), "hints": dict(hints)}
                    )
                self.conn.send(new_method_return(msg, "u", (nid,)))
            elif member == "GetCapabilities":
                self.conn.send(new_method_return(msg, "as", (["actions", "body", "body-markup"],)))
            elif member == "GetServerInformation":
                self.conn.send(new_method_return(msg, "ssss", ("notifyd-stand-in", "dcs-tests", "1", "1.2")))
            elif member == "CloseNotification":
                self.conn.send(new_method_return(msg))
            else:
                self.conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod"))

    def seen(self) -> list[dict]:
        with self.lock:
            return list(self.notes)

    def wait_for(self, match, timeout: float) -> dict:
        """The first notification `match` accepts, waiting up to `timeout` seconds for it."""
        end = deadline(timeout)
        while time.monotonic() < end:
            for n in self.seen():
                if match(n):
                    return n
            time.sleep(0.2)
        raise AssertionError(f"no such notification within {timeout} s; seen: {self.seen()}")

    def click(self, nid: int) -> None:
        """The user clicks the notification's body: `ActionInvoked(id, "default")`."""
        self.outbox.put(new_signal(DBusAddress(PATH, interface=NAME), "ActionInvoked", "us", (nid, "default")))

    def close(self):
        self.running = False
        self.thread.join(timeout=5)
        try:
            self.conn.send_and_get_reply(message_bus.ReleaseName(NAME))
        finally:
            self.conn.close()
