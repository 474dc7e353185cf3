"""How long and how many: uvicorn's limits for `overseer serve`, and the header timeout it lacks.

Uvicorn closes an idle keep-alive connection after `timeout_keep_alive`, but only once a
response has been sent: a connection that sends nothing, or sends its request line and headers a
byte at a time, is never timed out (50 slow-header connections stayed open 90 s). So the h11
protocol here starts a deadline when a connection opens, and again when the first byte of each
later request arrives; a request whose headers are not complete by then is closed. The deadline
is not moved by more bytes arriving, so trickling them does not help. One address may also
hold at most `CONNECTIONS_PER_CLIENT` HTTP connections at once; more are closed as they open.

    HEADER_TIMEOUT          10 s    the request line and headers must have arrived by then
    KEEP_ALIVE_TIMEOUT       5 s    an idle connection between requests is closed after it
    MAX_HEADER_BYTES        16 KiB  request line plus headers (h11's incomplete-event cap)
    CONNECTIONS_PER_CLIENT  100     open HTTP connections from one address
    MAX_CONCURRENCY         1000    connections and requests in all; beyond, 503

A WebSocket leaves the per-address count when it is upgraded (it counts toward MAX_CONCURRENCY).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0
KEEP_ALIVE_TIMEOUT = 5
MAX_HEADER_BYTES = 16 * 1024
CONNECTIONS_PER_CLIENT = 100
MAX_CONCURRENCY = 1000


def guarded_h11(
    *, header_timeout: float = HEADER_TIMEOUT, connections_per_client: int = CONNECTIONS_PER_CLIENT
) -> type[H11Protocol]:
    """An h11 protocol class with a header deadline and a per-address connection cap (its own count)."""
    open_by_client: Counter[str] = Counter()

    class GuardedH11(H11Protocol):
        """uvicorn's h11 protocol, closing connections slow to send headers or too many from one address."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._header_deadline: asyncio.TimerHandle | None = None
            self._counted: str | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else "unknown"
            if open_by_client[address] >= connections_per_client:
                self.logger.warning("closed a connection: %s already holds %d", address, connections_per_client)
                transport.close()
                return
            open_by_client[address] += 1
            self._counted = address
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._awaiting_headers():
                if self._header_deadline is None:  # the first byte of a later request: its own deadline
                    self._arm()
            else:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._uncount()
            super().connection_lost(exc)

        def handle_websocket_upgrade(self, event: h11.Request) -> None:
            self._disarm()
            self._uncount()  # from here on the WebSocket protocol owns the connection
            super().handle_websocket_upgrade(event)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._disarm()  # idle now: the keep-alive timeout applies until the next byte

        def _awaiting_headers(self) -> bool:
            return self.conn.their_state is h11.IDLE and not self.transport.is_closing()

        def _arm(self) -> None:
            self._disarm()
            self._header_deadline = self.loop.call_later(header_timeout, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_deadline is not None:
                self._header_deadline.cancel()
                self._header_deadline = None

        def _uncount(self) -> None:
            if self._counted is not None:
                open_by_client[self._counted] -= 1
                if open_by_client[self._counted] <= 0:
                    del open_by_client[self._counted]
                self._counted = None

        def _headers_too_slow(self) -> None:
            self._header_deadline = None
            if self._awaiting_headers():
                self.transport.close()

    return GuardedH11


def server_config(app: Any, *, host: str, port: int, **overrides: Any) -> uvicorn.Config:
    """The uvicorn config `overseer serve` runs with: the limits above, info logging, no access log."""
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "info",
        "access_log": False,
        "http": guarded_h11(),
        "timeout_keep_alive": KEEP_ALIVE_TIMEOUT,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "limit_concurrency": MAX_CONCURRENCY,
    }
    return uvicorn.Config(app, **(options | overrides))
