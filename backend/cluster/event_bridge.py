"""The event bridge: events another host stored reach this host's subscribers, live and gapless.

Every persisted event is in the store before anyone hears of it, and on Postgres its write
notifies `overseer_events` with "<session id> <seq>" at its commit (backend/store/postgres.py).
The bridge hears those notices and hands each to the bus (`EventBus.deliver_stored`), which
reads what its subscribers of that session have not had yet from the store and delivers it
without writing anything: a host's own events are skipped without a read, and a subscriber
never gets one event twice or out of order (its per-session `seen`).

Token and thinking deltas are not persisted and do not cross hosts: a dashboard on another host
sees an answer when its message is stored, not as it streams.

Notices are handled in batches, on a task of the bridge's own, so the listening connection never
waits on a store read: what was heard meanwhile is read session by session, side by side.
After a reconnection (notices may have been lost meanwhile) every session this host delivered is
caught up from the store.

See docs/architecture.md (the life of an approval).
"""

from __future__ import annotations

import asyncio
import logging

from backend.engine.events import EventBus
from backend.store.base import Store
from backend.store.postgres_notify import parse_event_notice

log = logging.getLogger(__name__)

READS_AT_ONCE = 4
"""Store reads the bridge makes side by side: a few, so the host's own runs keep the rest of its pool."""


class EventBridge:
    """Feeds the notices of `overseer_events` to the bus; `heard` is the listener's handler."""

    def __init__(self, bus: EventBus, store: Store) -> None:
        self.bus = bus
        self.store = store
        self._notices: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.delivered_notices = 0
        """Notices handled so far (tests wait on it, bounded, rather than guess)."""
        self._reading = asyncio.Semaphore(READS_AT_ONCE)

    def start(self) -> None:
        self.bus.shared = True
        self._task = asyncio.create_task(self._run(), name="event-bridge")

    def heard(self, payload: str) -> None:
        notice = parse_event_notice(payload)
        if notice is not None:
            self._notices.put_nowait(notice)

    async def caught_up(self) -> None:
        """After a reconnection: bring every session this host has delivered up to the store."""
        for session_id in self.bus.known_sessions():
            self._notices.put_nowait((session_id, await self.store.last_seq(session_id)))

    async def _run(self) -> None:
        while True:
            # Whatever else is queued goes in the same batch: the sessions side by side (the bus
            # orders each session's delivery itself), each session's notices in the order heard.
            # Each notice is handed on as heard, not folded into the last: for a session new here
            # the first notice says where delivery starts.
            notice = await self._notices.get()
            batch: dict[str, list[int]] = {notice[0]: [notice[1]]}
            heard = 1
            while not self._notices.empty():
                session_id, seq = self._notices.get_nowait()
                batch.setdefault(session_id, []).append(seq)
                heard += 1
            await asyncio.gather(*(self._deliver(session_id, seqs) for session_id, seqs in batch.items()))
            self.delivered_notices += heard

    async def _deliver(self, session_id: str, seqs: list[int]) -> None:
        """One session's notices, in order: once its events are read, the rest are skipped unread."""
        async with self._reading:
            for seq in seqs:
                try:
                    await self.bus.deliver_stored(session_id, seq)
                except Exception:  # the next notice of the session delivers this one's event too
                    log.warning("could not deliver events of session %s from the store", session_id, exc_info=True)

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
