"""A host that lost its database lock takes no run from the queue until it holds the lock again.

While a host's lock is lost (backend.cluster.host_watch), other hosts may recover its runs, so it
must neither go on with the runs it had nor start new ones. DBOS has no switch to stop one
process from dequeuing (a queue's limits live in the database, shared by every host), so the
fence wraps this process's dequeue: while fenced it claims nothing.

A claim made just before the fence closed may still reach the event loop as a workflow to run.
Each claim is stamped with the fence's epoch; when the lock is held again, the host hands its own
pending workflows back to the queue and opens a new epoch, so a workflow stamped with an older
one was handed back and must not run here (`may_start`).

See docs/architecture.md (the life of an approval).
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from typing import Any


class DequeueFence:
    """Whether this process may run the workflows it dequeues, and which of them are stale."""

    def __init__(self) -> None:
        self.fenced = False
        self.epoch = 0
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0
        self._claimed_in: dict[str, list[int]] = defaultdict(list)

    def install(self, sys_db: Any) -> None:
        """Wrap this process's DBOS dequeue (its system database's `start_queued_workflows`)."""
        claim = sys_db.start_queued_workflows

        def fenced_claim(*args: Any, **kwargs: Any) -> tuple[list[str], Any]:
            with self._lock:
                if self.fenced:
                    return [], None
                self._in_flight += 1
                epoch = self.epoch
            try:
                claimed, reason = claim(*args, **kwargs)
                with self._lock:
                    for workflow_id in claimed:
                        self._claimed_in[workflow_id].append(epoch)
                return claimed, reason
            finally:
                with self._lock:
                    self._in_flight -= 1
                    self._idle.notify_all()

        sys_db.start_queued_workflows = fenced_claim

    def close(self) -> None:
        """Claim nothing from now on, and let no claimed workflow start."""
        with self._lock:
            self.fenced = True

    async def drain(self) -> None:
        """Wait for a claim that was under way as the fence closed: its workflows are then pending."""
        def wait() -> None:
            with self._lock:
                self._idle.wait_for(lambda: self._in_flight == 0, timeout=30)

        await asyncio.to_thread(wait)

    def reopen(self) -> None:
        """Claim again, in a new epoch: what was claimed before it has been handed back."""
        with self._lock:
            self.epoch += 1
            self.fenced = False

    def may_start(self, workflow_id: str) -> bool:
        """Whether a dequeued workflow may run here now (on the event loop, as it starts)."""
        with self._lock:
            stamps = self._claimed_in.get(workflow_id)
            epoch = stamps.pop(0) if stamps else self.epoch  # not claimed through us: DBOS's own start
            if stamps == []:
                del self._claimed_in[workflow_id]
            return not self.fenced and epoch == self.epoch
