"""MCP servers that failed, told to the people they affect instead of left out in silence.

A server that cannot start (a missing command, a token it needs, a crash loop) leaves its tools
out of every turn. The person learns of it once per process on stderr, with the end of the
server's log, and each of this process's running sessions gets one `server.failed` event per
failed server, published before its turn goes on without those tools.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from backend.domain.models import ACTIVE_STATUSES
from backend.engine.events import EventBus
from backend.mcp.pool import McpPool, ServerStatus
from backend.store.base import Store

log = logging.getLogger(__name__)

_LIST_LIMIT = 10_000


class ServerFailures:
    """Reports each MCP server in "error" once: in the log (stderr) and as a `server.failed` event."""

    def __init__(self, *, pool: McpPool, bus: EventBus, store: Store, is_running: Callable[[str], bool]) -> None:
        """`is_running(session_id)`: whether this process runs that session (a shared store also
        holds other processes' sessions, whose pools are their own)."""
        self._pool = pool
        self._bus = bus
        self._store = store
        self._is_running = is_running
        self._logged: set[str] = set()
        self._told: set[tuple[str, str]] = set()
        self._lock = asyncio.Lock()

    def failed(self) -> list[ServerStatus]:
        """The servers that are in "error" now (a start failure, or one crash too many)."""
        return [status for status in self._pool.statuses() if status.state == "error"]

    async def report(self) -> None:
        """Tell stderr and this process's running sessions about failures they have not heard of."""
        failed = self.failed()
        if not failed:
            return
        async with self._lock:
            for status in failed:
                if status.name not in self._logged:
                    self._logged.add(status.name)
                    log.warning(
                        "%s\n  Its tools are left out until it is fixed or disabled; "
                        "`overseer servers` shows every server's state.",
                        status.error,
                    )
            # Forget sessions that ended, so the record stays as small as what runs.
            self._told = {told for told in self._told if self._is_running(told[0])}
            active = await self._store.list_sessions(statuses=ACTIVE_STATUSES, limit=_LIST_LIMIT)
            for session in active:
                if not self._is_running(session.id):
                    continue
                for status in failed:
                    if (session.id, status.name) in self._told:
                        continue
                    self._told.add((session.id, status.name))
                    await self._bus.publish(
                        session.id, "server.failed", {"server": status.name, "error": status.error}
                    )


class ServerWatch:
    """One live dashboard's view of server changes: the names changed since it last looked."""

    def __init__(self) -> None:
        self._pending: set[str] = set()
        self._wake = asyncio.Event()
        self.stop_watching: Callable[[], None] = lambda: None

    def note(self, name: str) -> None:
        """A server changed (called in the event loop, never blocks)."""
        self._pending.add(name)
        self._wake.set()

    async def changes(self) -> set[str]:
        """Wait for changes and return the names; a burst of them comes back as one set."""
        await self._wake.wait()
        self._wake.clear()
        names, self._pending = self._pending, set()
        return names


class ServerFeed:
    """Host-wide news of MCP servers for live dashboards: the pool's own changes (states, tools,
    servers added or removed) and changes that only touch the configuration (a disabled server
    edited, policies changed)."""

    def __init__(self, pool: McpPool) -> None:
        self._pool = pool
        self._watches: set[ServerWatch] = set()

    def watch(self) -> ServerWatch:
        """Start watching; pair with `unwatch`."""
        watch = ServerWatch()
        watch.stop_watching = self._pool.watch(watch.note)
        self._watches.add(watch)
        return watch

    def unwatch(self, watch: ServerWatch) -> None:
        watch.stop_watching()
        self._watches.discard(watch)

    def changed(self, *names: str) -> None:
        """Tell every watcher that these servers changed (all of them when none is named)."""
        names = names or tuple(status.name for status in self._pool.statuses())
        for watch in list(self._watches):
            for name in names:
                watch.note(name)
