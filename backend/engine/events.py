"""The event bus: persist, number, fan out, replay.

Persisted events get the session's next gapless `seq` from the store. Token deltas are
ephemeral: they carry the seq of the last persisted event plus a `part`, and are kept only in a
bounded ring so a reconnecting client can still catch the tail of a streaming answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from backend.domain.models import EVENT_TYPES, Event, EventType
from backend.store.base import Store

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class Subscription:
    """A live feed of events for one session, or all sessions when `session_id` is None.

    A subscriber that falls more than `maxsize` events behind is cut off (`overflowed`, and its
    feed ends) rather than slowing every session down; it resumes from its last seq with replay.
    """

    session_id: str | None
    maxsize: int
    overflowed: bool = False
    closed: bool = False
    _events: deque[Event] = field(init=False, default_factory=deque)
    _wake: asyncio.Event = field(init=False, default_factory=asyncio.Event)

    def offer(self, event: Event) -> None:
        if self.closed:
            return
        if len(self._events) >= self.maxsize:
            self.overflowed = True
            self.close()
            log.warning("event subscriber for %s fell behind and was cut off", self.session_id or "all sessions")
            return
        self._events.append(event)
        self._wake.set()

    async def get(self, timeout: float | None = None) -> Event:
        """Next event, waiting at most `timeout` seconds (TimeoutError); EOFError once closed."""
        async with asyncio.timeout(timeout):
            while not self._events:
                if self.closed:
                    raise EOFError("subscription closed")
                self._wake.clear()
                await self._wake.wait()
        return self._events.popleft()

    def drain(self) -> list[Event]:
        """Everything already received, without waiting."""
        events = list(self._events)
        self._events.clear()
        return events

    def close(self) -> None:
        self.closed = True
        self._wake.set()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while True:
            try:
                yield await self.get()
            except EOFError:
                return


class UnknownEventType(ValueError):
    """An event type outside `EventType`: a bug in the publisher, never a client's fault."""


def check_event_type(type_: str) -> None:
    """Refuse a type that is not in the closed set, before anything is written or delivered."""
    if type_ not in EVENT_TYPES:
        raise UnknownEventType(
            f"unknown event type {type_!r}: add it to EventType in backend/domain/models.py "
            "(and teach the dashboard about it) before publishing it"
        )


class EventBus:
    """Per-session event numbering, persistence and fan-out; only the types of `EventType`."""

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
        type_: EventType,
        data: dict[str, Any] | None = None,
        *,
        persist: Callable[[Event], Awaitable[Event]] | None = None,
    ) -> Event:
        """Persist an event, then deliver it; delivery order equals seq order.

        `persist` writes the event together with other rows in one transaction (a store method
        that takes the event and returns it numbered); by default it is written alone.
        An unknown type raises UnknownEventType and nothing is written.
        """
        check_event_type(type_)
        async with self._lock:
            draft = Event(session_id=session_id, seq=0, type=type_, data=data or {})
            writing = asyncio.ensure_future((persist or self._store.append_event)(draft))
            try:
                event = await asyncio.shield(writing)
            except asyncio.CancelledError:
                # A stop landed while the write was under way, and it may commit regardless:
                # let it finish and deliver what it stored before the cancellation goes on,
                # so no stored event is left undelivered (or the numbering torn).
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    self._delivered(await writing)
                raise
            self._delivered(event)
        return event

    def _delivered(self, event: Event) -> Event:
        self._last_seq[event.session_id] = event.seq
        self._part[event.session_id] = 0
        self._fan_out(event)
        return event

    async def publish_delta(self, session_id: str, type_: EventType, data: dict[str, Any]) -> Event:
        """An ephemeral event (token delta): buffered in memory, never persisted."""
        check_event_type(type_)
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

    async def subscribe_all_from(self, since: dict[str, int]) -> tuple[list[Event], Subscription]:
        """Subscribe to every session, replaying what each listed session missed since its seq."""
        async with self._lock:
            missed: list[Event] = []
            for session_id, seq in since.items():
                missed.extend(await self.replay(session_id, seq))
            sub = self.subscribe(None)
        return missed, sub
