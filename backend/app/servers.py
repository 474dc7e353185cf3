"""MCP servers that failed, told to the people they affect instead of left out in silence, once.

A server that cannot start (a missing command, a token it needs, a crash loop) leaves its tools
out of every turn. Each failure episode (from the server's going into "error" until it is seen out
of it again) is told once: on stderr, with the end of the server's log, and as one `server.failed`
event to the sessions of this process that are running when it is first reported to a turn,
published before that turn goes on without those tools. Sessions started later in the same episode
are not told again (it used to be a notice in every new session): the Servers page and the
dashboard's banner say which servers are failing for as long as they are.

Episodes are seen where failures are reported (each turn's start, the host's start): a server
that recovers and fails again between two looks is one episode.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from backend.domain.models import ACTIVE_STATUSES
from backend.engine.events import EventBus
from backend.mcp.pool import McpPool, ServerStatus
from backend.store.base import Store

log = logging.getLogger(__name__)

_LIST_LIMIT = 10_000


@dataclass(kw_only=True)
class _Episode:
    """One server's failure, from its going into "error" until it is seen out of it."""

    told: bool = False
    """Whether running sessions have been told (a report with none running leaves it for the next)."""


class ServerFailures:
    """Reports each failure episode of an MCP server once: in the log (stderr) and as a
    `server.failed` event to the sessions running when it is first reported."""

    def __init__(self, *, pool: McpPool, bus: EventBus, store: Store, is_running: Callable[[str], bool]) -> None:
        """`is_running(session_id)`: whether this process runs that session (a shared store also
        holds other processes' sessions, whose pools are their own)."""
        self._pool = pool
        self._bus = bus
        self._store = store
        self._is_running = is_running
        self._episodes: dict[str, _Episode] = {}
        self._lock = asyncio.Lock()

    def failed(self) -> list[ServerStatus]:
        """The servers that are in "error" now (a start failure, or one crash too many)."""
        return [status for status in self._pool.statuses() if status.state == "error"]

    async def report(self) -> None:
        """Tell stderr, and the sessions running now, of failures not told yet."""
        failed = self.failed()
        async with self._lock:
            failing = {status.name for status in failed}
            for name in [name for name in self._episodes if name not in failing]:
                del self._episodes[name]  # out of "error": a later failure is news again
            for status in failed:
                if status.name not in self._episodes:
                    self._episodes[status.name] = _Episode()
                    log.warning(
                        "%s\n  Its tools are left out until it is fixed or disabled; "
                        "`overseer servers` shows every server's state.",
                        status.error,
                    )
            untold = [status for status in failed if not self._episodes[status.name].told]
            if not untold:
                return
            active = await self._store.list_sessions(statuses=ACTIVE_STATUSES, limit=_LIST_LIMIT)
            running = [session for session in active if self._is_running(session.id)]
            if not running:
                return  # told to the first sessions that go on without it
            for status in untold:
                self._episodes[status.name].told = True
                for session in running:
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
