"""ApprovalWatch: hears the answers another process writes to the store.

Two processes may share one store (`overseer serve` and `overseer mcp` on one data dir). An
answer given in one of them resolves only that process's futures; a call waiting in the other
would learn of it only when its approval expired. So while calls wait here, the watch asks the
store each tick whether another connection committed (one cheap read) and, when one did, reads
the statuses of the waited approvals in one query and wakes the waiters of those that closed.
The broker's `wait` re-reads the store after every wake, so a wake is only a hint. Nothing runs
while nothing waits.

See docs/architecture.md (the life of an approval).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from backend.store.base import Store

log = logging.getLogger(__name__)


class ApprovalWatch:
    """Wakes the broker's waiters (`waiters`, approval id to future) when another process answers.

    `interval` bounds how late an answer from elsewhere is heard; answers given in this process
    wake their waiters directly and never wait for a tick.
    """

    def __init__(
        self, store: Store, waiters: dict[str, asyncio.Future[None]], *, interval: float = 0.1
    ) -> None:
        self._store = store
        self._waiters = waiters
        self.interval = interval
        self.active = asyncio.Event()  # set while the watch runs, that is while some call waits
        self._watched: Counter[str] = Counter()
        self._task: asyncio.Task[None] | None = None
        self._poked = asyncio.Event()

    @contextmanager
    def watching(self, approval_id: str) -> Iterator[None]:
        """Watch one approval for the length of one wait; waits on the same id may overlap."""
        self._watched[approval_id] += 1
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="approval-watch")
            self.active.set()
        try:
            yield
        finally:
            self._watched[approval_id] -= 1
            if self._watched[approval_id] <= 0:
                del self._watched[approval_id]
            if not self._watched:
                self._stop()

    def poke(self) -> None:
        """Look now rather than at the next tick: another host said an approval closed (Postgres
        NOTIFY, backend/app/cluster_links.py). The tick stays, for a notice that never comes."""
        self._poked.set()

    def closed(self, approval_id: str) -> None:
        """Another host said this approval closed: wake its waiter at once (it reads the answer
        from the store, so the notice needs no look of ours first), and look at the rest."""
        if approval_id in self._watched:
            self._wake(approval_id)
        self.poke()

    def _stop(self) -> asyncio.Task[None] | None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        self.active.clear()
        return task

    async def close(self) -> None:
        """Stop watching now; waits still end by their own answer or expiry."""
        task = self._stop()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        seen_version: int | None = None
        checked: set[str] = set()
        failing = False
        while self._watched:
            self._poked.clear()  # before the read: a poke from now on is seen by the next look
            try:
                version = await self._store.data_version()
                # Read after the version: an answer committed before it is in these statuses, and
                # one committed after it changes the version the next tick sees.
                ids = set(self._watched)
                if version != seen_version or not ids <= checked:
                    statuses = await self._store.approval_statuses(ids)
                    seen_version, checked = version, ids
                    for approval_id, status in statuses.items():
                        if status != "pending":
                            self._wake(approval_id)
                failing = False
            except Exception:
                if not failing:  # one warning per outage; waits still end at their expiry
                    log.warning("the approval watch could not read the store; retrying", exc_info=True)
                failing = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._poked.wait(), self.interval)

    def _wake(self, approval_id: str) -> None:
        waiter = self._waiters.pop(approval_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
