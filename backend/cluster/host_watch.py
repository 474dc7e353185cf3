"""Which hosts of a shared Postgres are alive, and recovering the runs of one that died, once.

A host holds a session-level advisory lock keyed by its host id, on a connection of its own, for
as long as it lives. A process that dies, even by kill -9, loses that connection, and Postgres
releases the lock at once. So a survivor that can take a host's lock knows that host is gone, and
holding it while it hands the dead host's runs back to the queue makes it the only one that does:
a second survivor cannot take it, and the dead host, restarting, waits for it (`claim`).

DBOS keeps no heartbeat of its executors, hence this lock. What runs a host left is read from
DBOS's own table (`dbos.workflow_status`): its pending workflows on our queue.

A live host can lose its lock too: its watch connection is cut (the server terminated it, a
proxy or a network dropped it). Other hosts may then recover its runs while it still executes
them, so the watch waits on that connection's socket between its looks: a break is seen at once
(`on_lost`, and `holds_lock` turns False), the host fences itself, and the watch claims the lock
again, then says so (`on_regained`). A silent network partition is seen by TCP keepalives
(about `KEEPALIVE_SECONDS`); the server keeps the lock until its own side notices, later still.

See docs/architecture.md (the life of an approval).
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

KEEPALIVE_SECONDS = 10
"""A silent network partition is noticed by the watch's keepalives within about this long."""
APPLICATION_NAME = "overseer-host-watch"
"""The watch connection's `application_name` (then `:` and the host id), e.g. in pg_stat_activity."""

PENDING_EXECUTORS = """
SELECT DISTINCT executor_id, application_version = %s FROM dbos.workflow_status
WHERE status = 'PENDING' AND queue_name = %s
"""
OLD_RELEASE_RUNS = """
SELECT workflow_uuid FROM dbos.workflow_status
WHERE status = 'PENDING' AND queue_name = %s AND application_version <> %s AND executor_id = %s
"""


class HostIdInUse(RuntimeError):
    """Another live process holds this host id."""


RecoverHost = Callable[[str], Awaitable[list[str]]]
"""Hand a dead host's runs back to the queue; the sessions whose runs it handed back."""
ReplaceRuns = Callable[[list[str]], Awaitable[list[str]]]
"""Place again, in this release, the sessions of these workflows of another release whose host
is gone; the sessions placed again."""
LockChange = Callable[[], Awaitable[None]]
"""Told that this host lost its lock (fence now), or holds it again (take work again)."""


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
    holds_lock: bool = False
    """Whether this host holds its lock as far as the watch knows: False from the moment its
    connection is found broken until the lock is claimed again (a flag, no round trip)."""
    recovered: dict[str, list[str]] = field(default_factory=dict)
    """Dead host id: the sessions this host recovered from it (the last time it died)."""

    async def claim(self, *, timeout: float = CLAIM_TIMEOUT) -> None:
        """Take this host's lock; HostIdInUse when another live process keeps it past `timeout`."""
        self._conn = await self._connect()
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
        self.holds_lock = True

    async def _connect(self) -> AsyncConnection[Any]:
        idle = KEEPALIVE_SECONDS // 2
        return await AsyncConnection.connect(
            self.url,
            autocommit=True,
            connect_timeout=10,
            application_name=f"{APPLICATION_NAME}:{self.host_id}"[:63],
            keepalives=1,
            keepalives_idle=idle,
            keepalives_interval=max(1, idle // 2),
            keepalives_count=2,
        )

    def start(self, recover: RecoverHost, *, replace: ReplaceRuns | None = None,
              on_lost: LockChange | None = None, on_regained: LockChange | None = None) -> None:
        """Look for dead hosts in the background until `aclose`; tell of this host's lock lost and regained."""
        self._task = asyncio.create_task(self._watch(recover, replace, on_lost, on_regained), name="host-watch")

    async def aclose(self) -> None:
        """Stop watching and let go of this host's lock (closing its connection)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        conn, self._conn = self._conn, None
        self.holds_lock = False
        if conn is not None:
            await conn.close()

    async def _watch(
        self, recover: RecoverHost, replace: ReplaceRuns | None, on_lost: LockChange | None, on_regained: LockChange | None
    ) -> None:
        while True:
            try:
                await self._idle(self.interval)
                await self.recover_dead(recover, replace)
            except Exception:
                if self._conn is not None and not self._conn.broken and not self._conn.closed:
                    log.exception("looking for dead hosts failed")
                    continue
                # This host's lock went with its connection: other hosts may recover our runs now.
                self.holds_lock = False
                log.error("host %s lost its database lock: fencing its runs until it holds it again", self.host_id)
                if on_lost is not None:
                    await on_lost()
                await self._reclaim()
                log.warning("host %s holds its database lock again", self.host_id)
                if on_regained is not None:
                    await on_regained()

    async def _idle(self, seconds: float) -> None:
        """Wait on the connection's socket (not a sleep): a connection cut meanwhile raises at once."""
        assert self._conn is not None
        async for _ in self._conn.notifies(timeout=seconds):
            pass  # nobody LISTENs here; the read is what notices a break

    async def recover_dead(self, recover: RecoverHost, replace: ReplaceRuns | None = None) -> list[str]:
        """Recover the runs of every host that left pending runs and no longer holds its lock.

        With `replace`, runs of another release are placed again too: this host's own (it was
        upgraded, or rolled back) and a gone host's, never a live host's (a rolling upgrade)."""
        assert self._conn is not None, "claim() first"
        cursor = await self._conn.execute(PENDING_EXECUTORS, (self.app_version, self.queue_name))
        dead: list[str] = []
        for host, this_release in await cursor.fetchall():
            if host == self.host_id:
                if not this_release and replace is not None:
                    await self._replace_old(host, replace)  # this host holds its own lock: nobody runs them
                continue
            if not this_release and replace is None:
                continue
            if not await self._try_lock(host):
                continue  # alive, or another survivor is recovering it right now
            try:
                if this_release:
                    self.recovered[host] = await recover(host)
                    dead.append(host)
                    log.warning("host %s is gone: %d runs handed back to the queue", host, len(self.recovered[host]))
                elif replace is not None:
                    await self._replace_old(host, replace)
            finally:
                await self._conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (HOST_LOCK_CLASS, host))
        return dead

    async def _replace_old(self, host: str, replace: ReplaceRuns) -> None:
        """Runs of another release left by `host`, whose lock this host holds: read again under it."""
        assert self._conn is not None
        cursor = await self._conn.execute(OLD_RELEASE_RUNS, (self.queue_name, self.app_version, host))
        workflows = [workflow for (workflow,) in await cursor.fetchall()]
        if workflows:
            sessions = await replace(workflows)
            log.warning("%d runs of another release left by host %s placed again in %s", len(sessions), host,
                        self.app_version)

    async def _try_lock(self, host: str) -> bool:
        assert self._conn is not None
        cursor = await self._conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (HOST_LOCK_CLASS, host))
        row = await cursor.fetchone()
        return bool(row and row[0])

    async def _reclaim(self) -> None:
        """Claim this host's lock again, however long the database stays out of reach."""
        delay = self.interval
        while True:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    await self._conn.close()
                self._conn = None
            try:
                await self.claim()
                return
            except Exception:
                log.exception("host %s cannot claim its database lock yet", self.host_id)
            await asyncio.sleep(delay)  # the database may be away for a while: do not hammer it
            delay = min(delay * 2, 10.0)
