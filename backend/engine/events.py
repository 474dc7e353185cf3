"""The event bus: persist, number, fan out, replay.

Persisted events get the session's next gapless `seq` from the store. Token deltas are
ephemeral: they carry the seq of the last persisted event plus a `part`, and are kept only in a
bounded ring so a reconnecting client can still catch the tail of a streaming answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from backend.domain.models import Event
from backend.store.base import Store

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class Subscription:
    """A live feed of events for one session, or all sessions when `session_id` is None.

    A subscriber that falls more than `maxsize` events behind is cut off (`overflowed`) rather
    than slowing every session down; it resumes from its last seq with `EventBus.replay`.
    """

    session_id: str | None
    maxsize: int
    queue: asyncio.Queue[Event | None] = field(init=False)
    overflowed: bool = False

    def __post_init__(self) -> None:
        self.queue = asyncio.Queue(self.maxsize)

    def offer(self, event: Event) -> None:
        if self.overflowed:
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.overflowed = True
            log.warning("event subscriber for %s fell behind and was cut off", self.session_id or "all sessions")

    async def get(self, timeout: float | None = None) -> Event:
        """Next event, waiting at most `timeout` seconds (TimeoutError after that)."""
        async with asyncio.timeout(timeout):
            event = await self.queue.get()
        if event is None:
            raise EOFError("subscription closed")
        return event

    def close(self) -> None:
        try:
            self.queue.put_nowait(None)
        except asyncio.QueueFull:
            self.overflowed = True

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while True:
            event = await self.queue.get()
            if event is None:
                return
            yield event


class EventBus:
    """Per-session event numbering, persistence and fan-out."""

    def __init__(self, store: Store, *, delta_buffer: int = 2000) -> None:
        self._store = store
        self._lock = asyncio.Lock()
        self._subscribers: list[Subscription] = []
        self._last_seq: dict[str, int] = {}
        self._part: dict[str, int] = {}
        self._deltas: deque[Event] = deque(maxlen=delta_buffer)

    async def publish(
        self,
        session_id: str,
        type_: str,
        data: dict[str, Any] | None = None,
        *,
        persist: Callable[[Event], Awaitable[Event]] | None = None,
    ) -> Event:
        """Persist an event, then deliver it; delivery order equals seq order.

        `persist` writes the event together with other rows in one transaction (a store method
        that takes the event and returns it numbered); by default it is written alone.
        """
        async with self._lock:
            draft = Event(session_id=session_id, seq=0, type=type_, data=data or {})
            event = await (persist or self._store.append_event)(draft)
            self._last_seq[session_id] = event.seq
            self._part[session_id] = 0
            self._fan_out(event)
        return event

    async def publish_delta(self, session_id: str, type_: str, data: dict[str, Any]) -> Event:
        """An ephemeral event (token delta): buffered in memory, never persisted."""
        async with self._lock:
            if session_id not in self._last_seq:
                self._last_seq[session_id] = await self._store.last_seq(session_id)
            part = self._part.get(session_id, 0) + 1
            self._part[session_id] = part
            event = Event(
                session_id=session_id, seq=self._last_seq[session_id], part=part, type=type_, data=data, ephemeral=True
            )
            self._deltas.append(event)
            self._fan_out(event)
        return event

    def _fan_out(self, event: Event) -> None:
        for sub in self._subscribers:
            if sub.session_id is None or sub.session_id == event.session_id:
                sub.offer(event)

    def subscribe(self, session_id: str | None = None, *, maxsize: int = 10_000) -> Subscription:
        """Start receiving events published from now on."""
        sub = Subscription(session_id=session_id, maxsize=maxsize)
        self._subscribers.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subscribers:
            self._subscribers.remove(sub)
        sub.close()

    async def replay(self, session_id: str, since: int = 0) -> list[Event]:
        """What a client that saw up to `since` missed: persisted events, then buffered deltas."""
        events = await self._store.list_events(session_id, since=since)
        last = events[-1].seq if events else since
        tail = [e for e in self._deltas if e.session_id == session_id and e.seq >= last and e.seq >= since]
        return events + tail

    async def subscribe_from(self, session_id: str, since: int) -> tuple[list[Event], Subscription]:
        """Replay and subscribe atomically, so nothing falls between the two (no gap, no double)."""
        async with self._lock:
            missed = await self.replay(session_id, since)
            sub = self.subscribe(session_id)
        return missed, sub
