"""Which hosts of a shared Postgres are alive, and recovering the runs of one that died, once.

A host holds a session-level advisory lock keyed by its host id, on a connection of its own, for
as long as it lives. A process that dies, even by kill -9, loses that connection, and Postgres
releases the lock at once. So a survivor that can take a host's lock knows that host is gone, and
holding it while it hands the dead host's runs back to the queue makes it the only one that does:
a second survivor cannot take it, and the dead host, restarting, waits for it (`claim`).

DBOS keeps no heartbeat of its executors, hence this lock. What runs a host left is read from
DBOS's own table (`dbos.workflow_status`): its pending workflows on our queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from psycopg import AsyncConnection

from backend.store.postgres_schema import LOCK_CLASS

log = logging.getLogger(__name__)

HOST_LOCK_CLASS = LOCK_CLASS + 0x100
"""pg_advisory_lock(int4, int4): this class, then hashtext(host id)."""
CLAIM_TIMEOUT = 30.0
"""How long a starting host waits for its id's lock: a survivor may hold it while recovering its runs."""

PENDING_EXECUTORS = """
SELECT DISTINCT executor_id FROM dbos.workflow_status
WHERE status = 'PENDING' AND queue_name = %s AND application_version = %s AND executor_id <> %s
"""


class HostIdInUse(RuntimeError):
    """Another live process holds this host id."""


RecoverHost = Callable[[str], Awaitable[list[str]]]
"""Hand a dead host's runs back to the queue; the sessions whose runs it handed back."""


@dataclass(kw_only=True)
class HostWatch:
    """Holds this host's liveness lock and, every `interval` seconds, recovers the runs of dead hosts."""

    url: str
    host_id: str
    queue_name: str
    app_version: str
    interval: float = 1.0
    _conn: AsyncConnection[Any] | None = None
    _task: asyncio.Task[None] | None = None
    recovered: dict[str, list[str]] = field(default_factory=dict)
    """Dead host id: the sessions this host recovered from it (the last time it died)."""

    async def claim(self, *, timeout: float = CLAIM_TIMEOUT) -> None:
        """Take this host's lock; HostIdInUse when another live process keeps it past `timeout`."""
        self._conn = await AsyncConnection.connect(self.url, autocommit=True, connect_timeout=10)
        deadline = time.monotonic() + timeout
        delay = 0.05
        while not await self._try_lock(self.host_id):
            if time.monotonic() > deadline:
                await self._conn.close()
                self._conn = None
                raise HostIdInUse(
                    f"host id {self.host_id!r} is in use by a running Overseer on this database; "
                    "give each host its own OVERSEER_HOST_ID"
                )
            await asyncio.sleep(delay)  # a survivor recovering this host's runs lets go within moments
            delay = min(delay * 2, 1.0)

    def start(self, recover: RecoverHost) -> None:
        """Look for dead hosts in the background until `aclose`."""
        self._task = asyncio.create_task(self._watch(recover), name="host-watch")

    async def aclose(self) -> None:
        """Stop watching and let go of this host's lock (closing its connection)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def _watch(self, recover: RecoverHost) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.recover_dead(recover)
            except Exception:
                # The connection, and with it this host's lock, may be gone: other hosts may now
                # recover our runs, so take it back before looking again.
                log.exception("looking for dead hosts failed; claiming host id %s again", self.host_id)
                with contextlib.suppress(Exception):
                    await self._reconnect()

    async def recover_dead(self, recover: RecoverHost) -> list[str]:
        """Recover the runs of every host that left pending runs and no longer holds its lock."""
        assert self._conn is not None, "claim() first"
        cursor = await self._conn.execute(PENDING_EXECUTORS, (self.queue_name, self.app_version, self.host_id))
        dead: list[str] = []
        for (host,) in await cursor.fetchall():
            if not await self._try_lock(host):
                continue  # alive, or another survivor is recovering it right now
            try:
                self.recovered[host] = await recover(host)
                dead.append(host)
                log.warning("host %s is gone: %d runs handed back to the queue", host, len(self.recovered[host]))
            finally:
                await self._conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (HOST_LOCK_CLASS, host))
        return dead

    async def _try_lock(self, host: str) -> bool:
        assert self._conn is not None
        cursor = await self._conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (HOST_LOCK_CLASS, host))
        row = await cursor.fetchone()
        return bool(row and row[0])

    async def _reconnect(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()
        await self.claim()
