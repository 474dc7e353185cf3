"""How much a WebSocket client may have replayed: per message, per connection, and per client.

A `subscribe` with `since: 0` replays a session's whole history; 2,000 of them sent 103 MB, took
2.2 s of CPU and held `/api/health` for 3.9 s. So one `subscribe` replays at most `REPLAY_PAGE`
events (the client asks for the next page with the seqs it has, as after any reconnect), one
connection at most `CONNECTION_REPLAY_LIMIT` in all, and one client (an address, across its
connections) at most `REPLAYS_PER_WINDOW` replaying subscribes per `REPLAY_WINDOW` seconds.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

REPLAY_PAGE = 500
"""Events one `subscribe` replays; more waiting is said (`replay.more`) and the client pages."""

CONNECTION_REPLAY_LIMIT = 50_000
"""Events one connection may have replayed in all; beyond it the connection is closed."""

REPLAYS_PER_WINDOW = 60
"""Replaying subscribes one client may make per window (a dashboard makes one per reconnect)."""

REPLAY_WINDOW = 60.0
"""Seconds."""

TRACKED_CLIENTS = 10_000
"""Clients remembered at most; the one seen longest ago is forgotten first."""


class ReplaysThrottled(Exception):
    """Too many replays from one client: the message says how many and when to try again."""

    def __init__(self, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(
            f"too many replays: at most {REPLAYS_PER_WINDOW} every {REPLAY_WINDOW:g} s from one client; "
            f"resubscribe with since in {retry_after} s"
        )


class ReplayRate:
    """Counts each client's replaying subscribes in a sliding window, across its connections. Thread-safe."""

    def __init__(
        self,
        *,
        limit: int = REPLAYS_PER_WINDOW,
        window: float = REPLAY_WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limit = limit
        self._window = window
        self._clock = clock
        self._lock = threading.Lock()
        self._recent: dict[str, deque[float]] = {}

    def take(self, client: str) -> None:
        """Count one replay by `client`; ReplaysThrottled (nothing counted) when it has had its share."""
        with self._lock:
            now = self._clock()
            times = self._recent.pop(client, None) or deque()
            while times and times[0] <= now - self._window:
                times.popleft()
            self._recent[client] = times  # re-inserted: the dict's order is the order clients were seen
            if len(times) >= self._limit:
                raise ReplaysThrottled(max(1, math.ceil(times[0] + self._window - now)))
            times.append(now)
            while len(self._recent) > TRACKED_CLIENTS:
                self._recent.pop(next(iter(self._recent)))


class ConnectionReplays:
    """What one connection has had replayed; `allows` says whether it may have more."""

    def __init__(self, limit: int = CONNECTION_REPLAY_LIMIT) -> None:
        self.limit = limit
        self.replayed = 0

    def add(self, count: int) -> None:
        self.replayed += count

    @property
    def exhausted(self) -> bool:
        return self.replayed >= self.limit
