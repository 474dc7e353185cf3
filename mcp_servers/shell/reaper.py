"""Commands die with their server: a watcher process SIGKILLs their process groups once it is gone.

Each command runs in a process group of its own, so that a timeout can kill all of it, which
also puts it out of reach of whoever stops the server: after a crash, a `kill -9`, or the host
killing a hung server's group, its commands ran on and had their effects. Nothing in the kernel
ties a group's life to another process (PR_SET_PDEATHSIG reaches one process, the group's
leader, not what it started), so one watcher per server does it. The watcher holds one end of a
socket whose other end only the server holds; every command announces its group on it between
fork and exec (before it can run anything); and when the socket ends, however the server ended,
the watcher kills every announced group that still exists. Without a server to watch the
watcher exits, so it never outlives the server by more than that.

The watcher is this file run as a script (`python -I -S reaper.py`): stdlib only, quick to start.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Callable

PRUNE_EVERY = 1.0
"""Seconds between the watcher's checks for groups that have ended, so that a finished group's
number, once reused by someone else's group, is not killed when the server dies (the window
left is one such interval)."""


class GroupReaper:
    """The server's side: starts the watcher on first use and announces command groups to it."""

    def __init__(self) -> None:
        self._sock: socket.socket | None = None
        self._watcher: subprocess.Popen[bytes] | None = None

    def preexec(self) -> Callable[[], None] | None:
        """A `preexec_fn` for a command started with `start_new_session=True`, announcing its group.

        None when the watcher cannot be started: the command still runs, without the guarantee.
        """
        sock = self._socket()
        if sock is None:
            return None

        def announce() -> None:
            # In the child, after setsid (so its pid is its group) and before exec. MSG_NOSIGNAL:
            # a dead watcher must not SIGPIPE the command; MSG_DONTWAIT: nor block it.
            with contextlib.suppress(OSError):
                sock.send(b"%d\n" % os.getpid(), socket.MSG_NOSIGNAL | socket.MSG_DONTWAIT)

        return announce

    def _socket(self) -> socket.socket | None:
        if self._watcher is not None and self._watcher.poll() is None:
            return self._sock
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        ours, theirs = socket.socketpair()
        try:
            self._watcher = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__)],
                stdin=theirs,
                # Never the server's stdout: the host reads it to EOF to learn the server is gone.
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # Out of the server's group, so killing that group leaves the watcher to do its job.
                start_new_session=True,
            )
        except OSError as exc:
            ours.close()
            print(f"shell: cannot start the command watcher: {exc}", file=sys.stderr, flush=True)
            return None
        finally:
            theirs.close()
        self._sock = ours
        return ours


REAPER = GroupReaper()
"""The one watcher of this server process."""


def watch(fd: int) -> None:
    """Read group ids from `fd` until it ends, then SIGKILL every one of those groups still alive."""
    groups: set[int] = set()
    pending = b""
    while True:
        readable, _, _ = select.select([fd], [], [], PRUNE_EVERY)
        if readable:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            groups.update(int(line) for line in lines if line.isdigit())
        groups = {group for group in groups if _signal_group(group, 0)}
    for group in groups:
        _signal_group(group, signal.SIGKILL)


def _signal_group(group: int, sig: int) -> bool:
    """Send `sig` to a process group (0 only checks it); False when there is no such group of ours."""
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


if __name__ == "__main__":
    watch(sys.stdin.fileno())
