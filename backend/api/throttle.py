"""Login throttling: a password guesser gets a few tries a minute, not thousands.

Failures are counted per client address and per username in a sliding window; past the limit,
logins from that address (or for that name) are refused with 429 before any password is checked,
until the oldest failure leaves the window. A success clears the address's count.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

MAX_FAILURES = 5
WINDOW_SECONDS = 60.0


class LoginThrottled(Exception):
    """Too many failed logins; `retry_after` is in seconds."""

    def __init__(self, retry_after: float) -> None:
        self.retry_after = max(1, int(retry_after + 0.999))
        super().__init__(f"too many failed logins; try again in {self.retry_after} s")


class LoginThrottle:
    def __init__(
        self,
        *,
        max_failures: int = MAX_FAILURES,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def check(self, client: str, username: str) -> None:
        """Raise LoginThrottled when either the address or the name is over the limit."""
        with self._lock:
            now = self._clock()
            waits = [self._wait(key, now) for key in _keys(client, username)]
        if max(waits) > 0:
            raise LoginThrottled(max(waits))

    def failed(self, client: str, username: str) -> None:
        with self._lock:
            now = self._clock()
            for key in _keys(client, username):
                self._failures.setdefault(key, deque()).append(now)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(f"ip:{client}", None)

    def _wait(self, key: str, now: float) -> float:
        times = self._failures.get(key)
        if not times:
            return 0.0
        while times and now - times[0] >= self.window:
            times.popleft()
        if not times:
            del self._failures[key]
            return 0.0
        return self.window - (now - times[0]) if len(times) >= self.max_failures else 0.0


def _keys(client: str, username: str) -> tuple[str, str]:
    return f"ip:{client}", f"user:{username}"
