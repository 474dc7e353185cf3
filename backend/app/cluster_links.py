"""What one host of a shared Postgres hears from the others, and tells them.

Started by the Host when its store is Postgres (on SQLite there is one host and none of this
runs). One dedicated connection listens (backend/store/postgres_notify.py) for:

- `overseer_events`: another host stored an event; the event bridge delivers it to this host's
  WebSocket subscribers from the store (backend/cluster/event_bridge.py);
- `overseer_approvals`: an approval closed; its waiter here wakes at once (and reads the answer
  from the store), so an answer given on any host wakes the run waiting here;
- `overseer_control`: "stop <session id>": a person stopped, on another host, a session whose
  run executes here; it is stopped here as if asked here.

See docs/architecture.md (the life of an approval).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from backend.cluster.event_bridge import EventBridge
from backend.engine.events import EventBus
from backend.engine.runner import SessionRunner
from backend.approvals.broker import ApprovalBroker
from backend.store.postgres import PostgresStore
from backend.store.postgres_notify import (
    APPROVALS_CHANNEL,
    CONTROL_CHANNEL,
    EVENTS_CHANNEL,
    PostgresListener,
    notify,
)

log = logging.getLogger(__name__)

STOP = "stop"


class ClusterLinks:
    """This host's listener, its event bridge, and the notices it sends to the other hosts."""

    def __init__(self, *, store: PostgresStore, bus: EventBus, broker: ApprovalBroker, runner: SessionRunner) -> None:
        self.store = store
        self.broker = broker
        self.runner = runner
        self.bridge = EventBridge(bus, store)
        self.listener = PostgresListener(
            store.url,
            {
                EVENTS_CHANNEL: self.bridge.heard,
                APPROVALS_CHANNEL: self._approval_closed,
                CONTROL_CHANNEL: self._control,
            },
            on_connect=self.bridge.caught_up,
        )
        self._stopping: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        self.bridge.start()
        await self.listener.start()

    async def aclose(self) -> None:
        await self.listener.aclose()
        await self.bridge.aclose()
        for task in list(self._stopping):
            task.cancel()
        await asyncio.gather(*self._stopping, return_exceptions=True)

    async def stop_elsewhere(self, session_ids: list[str]) -> None:
        """Tell every host to stop these sessions' runs (each stops those it executes)."""
        async with self.store.pool.connection() as conn:
            for session_id in session_ids:
                await notify(conn, CONTROL_CHANNEL, f"{STOP} {session_id}")

    def _approval_closed(self, approval_id: str) -> None:
        self.broker.watch.closed(approval_id)

    def _control(self, payload: str) -> None:
        verb, _, session_id = payload.partition(" ")
        if verb != STOP or not session_id:
            log.warning("ignored a control notice this version does not know: %r", payload)
            return
        if not self.runner.is_running(session_id):
            return  # not executing here (the host that was asked marks it stopped in the store)
        task = asyncio.create_task(self._stop(session_id), name=f"stop-{session_id}")
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def _stop(self, session_id: str) -> None:
        try:
            await self.runner.stop(session_id)
        except Exception:
            log.exception("stopping session %s as another host asked failed", session_id)
