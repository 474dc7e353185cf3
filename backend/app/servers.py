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
