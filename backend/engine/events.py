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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from backend.domain.models import EVENT_TYPES, Event, EventType
from backend.store.base import Store
from backend.store.ready import is_done

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(kw_only=True)
class Subscription:
    """A live feed of events for one session, or all sessions when `session_id` is None.

    A subscriber that falls more than `maxsize` events behind is cut off (`overflowed`, and its
    feed ends) rather than slowing every session down; it resumes from its last seq with replay.
    """

    session_id: str | None
    maxsize: int
    types: frozenset[str] | None = None
    """Only these event types reach the feed (None: all): a follower of one kind of event is
    not woken for every tool call of every session."""
    overflowed: bool = False
    closed: bool = False
    seen: dict[str, int] = field(default_factory=dict)
    """Per session, the last persisted seq this subscriber was given (replayed or live): an event
    reaching it twice (a replay and the live feed, or a host's own event heard back from another
    host's notice) is given once."""
    _events: deque[Event] = field(init=False, default_factory=deque)
    _wake: asyncio.Event = field(init=False, default_factory=asyncio.Event)

    def offer(self, event: Event) -> None:
        if self.closed:
            return
        if not event.ephemeral:
            if event.seq <= self.seen.get(event.session_id, 0):
                return
            self.seen[event.session_id] = event.seq
        if self.types is not None and event.type not in self.types:
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


class _SessionLocks:
    """One lock per session, kept only while someone holds or waits for it.

    Order matters within a session (seq order is delivery order), never across sessions: one
    lock for the whole bus would queue every session's publish behind any other's store write,
    which on a shared Postgres is a network round trip.
    """

    def __init__(self) -> None:
        self._held: dict[str, _Held] = {}

    def free(self, session_id: str) -> bool:
        """Nobody holds or waits for the session's lock: taking it now does not wait."""
        return session_id not in self._held

    def __call__(self, session_id: str) -> _Held:
        held = self._held.get(session_id)
        if held is None:
            held = self._held[session_id] = _Held(self._held, session_id)
        return held

    @contextlib.asynccontextmanager
    async def all_of(self, session_ids: list[str]) -> AsyncIterator[None]:
        """Several sessions' locks, taken in one order (sorted) so two callers cannot deadlock."""
        async with contextlib.AsyncExitStack() as stack:
            for session_id in sorted(set(session_ids)):
                await stack.enter_async_context(self(session_id))
            yield


class _Held:
    """A session's lock and how many hold or wait for it; it leaves the table with the last one."""

    __slots__ = ("_table", "_session_id", "_lock", "_users")

    def __init__(self, table: dict[str, _Held], session_id: str) -> None:
        self._table = table
        self._session_id = session_id
        self._lock = asyncio.Lock()
        self._users = 0

    async def __aenter__(self) -> None:
        self._users += 1
        try:
            await self._lock.acquire()
        except BaseException:
            self._left()
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._lock.release()
        self._left()

    def _left(self) -> None:
        self._users -= 1
        if not self._users:
            del self._table[self._session_id]


class EventBus:
    """Per-session event numbering, persistence and fan-out; only the types of `EventType`."""

    def __init__(self, store: Store, *, delta_buffer: int = 2000) -> None:
        self._store = store
        self._lock = _SessionLocks()
        self._subscribers: list[Subscription] = []
        self._last_seq: dict[str, int] = {}
        self._part: dict[str, int] = {}
        self._deltas: deque[Event] = deque(maxlen=delta_buffer)
        self.shared = False
        """True when other hosts write this store's events too (Postgres, with the event bridge):
        then a publish that finds a gap before its seq delivers the stored events of the gap first."""

    async def publish(
        self,
        session_id: str,
        type_: EventType,
        data: dict[str, Any] | None = None,
        *,
        persist: Callable[[Event], Awaitable[Event]] | None = None,
        whole: bool = False,
    ) -> Event:
        """Persist an event, then deliver it; delivery order equals seq order.

        `persist` writes the event together with other rows in one transaction (a store method
        that takes the event and returns it numbered); by default it is written alone.
        A write, once begun, is never torn by a cancellation; with `whole`, neither is the wait
        for the session's turn before it (a tool's result must be recorded even if a stop lands).
        An unknown type raises UnknownEventType and nothing is written.
        """
        check_event_type(type_)
        if whole and not self._lock.free(session_id):
            return await asyncio.shield(self.publish(session_id, type_, data, persist=persist))
        # A free turn is taken without waiting; with a store that writes at once (SQLite's usual
        # case) the whole publish then runs without yielding, so nothing can cut it short.
        async with self._lock(session_id):
            draft = Event(session_id=session_id, seq=0, type=type_, data=data or {})
            written = (persist or self._store.append_event)(draft)
            event = await written if is_done(written) else await self._whole_write(written, lambda e: (e,))
            await self._deliver_in_order((event,))
        return event

    async def publish_pair(
        self,
        session_id: str,
        first: tuple[EventType, dict[str, Any]],
        second: tuple[EventType, dict[str, Any]],
        *,
        persist: Callable[[Event, Event], Awaitable[tuple[Event, Event]]],
    ) -> tuple[Event, Event]:
        """Two events of one session persisted in one transaction (`persist` numbers them seq and
        seq + 1, with the rows it writes), then delivered in that order, as `publish` does one."""
        check_event_type(first[0])
        check_event_type(second[0])
        async with self._lock(session_id):
            drafts = [Event(session_id=session_id, seq=0, type=t, data=data) for t, data in (first, second)]
            written = persist(*drafts)
            events = await written if is_done(written) else await self._whole_write(written, lambda pair: pair)
            await self._deliver_in_order(events)
        return events

    async def _whole_write(self, written: Awaitable[T], stored: Callable[[T], Sequence[Event]]) -> T:
        """Wait for a write under way. A stop that lands meanwhile (the write may commit
        regardless) lets it finish and delivers what it stored before the cancellation goes on,
        so no stored event is left undelivered (or the numbering torn)."""
        writing = asyncio.ensure_future(written)
        try:
            return await asyncio.shield(writing)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                for event in stored(await writing):
                    self._delivered(event)
            raise

    async def _deliver_in_order(self, events: Sequence[Event]) -> None:
        """Deliver events just stored (consecutive seqs of one session)."""
        first, last = events[0], events[-1]
        known = self._last_seq.get(first.session_id, 0 if first.seq == 1 else None)
        if not self.shared or known == first.seq - 1:
            for event in events:
                self._delivered(event)
        elif known is not None:
            # Another host wrote events of this session that its notices have not brought
            # yet: they are committed, so deliver them from the store, then these.
            await self._deliver_stored(first.session_id, last.seq)
        # else: a session this host has not heard of yet. Its notices come in commit order,
        # these events' own last, and the first to arrive delivers from there (event_bridge.py).

    def _delivered(self, event: Event) -> Event:
        if event.seq > self._last_seq.get(event.session_id, 0):
            self._last_seq[event.session_id] = event.seq
            self._part[event.session_id] = 0
        self._fan_out(event)
        return event

    async def deliver_stored(self, session_id: str, seq: int) -> None:
        """Deliver what another host stored for a session, up to at least `seq`, read from the store.

        Called for each event another host notified (backend/cluster/event_bridge.py): events
        this host published itself, or delivered already, are skipped without a read; each
        subscriber gets each event once, in seq order, with no gap from where it started.
        """
        async with self._lock(session_id):
            await self._deliver_stored(session_id, seq)

    async def _deliver_stored(self, session_id: str, seq: int) -> None:
        subscribers = [s for s in self._subscribers if s.session_id in (None, session_id)]
        known = self._last_seq.get(session_id)
        if not subscribers:
            # Nobody here to deliver to; a later subscriber replays from the store.
            self._last_seq[session_id] = max(known or 0, seq)
            return
        # Where the furthest-behind subscriber is; one that has seen nothing of this session
        # starts where this host's feed of it is, or, for a session new here, at this event.
        start = min(s.seen.get(session_id, known if known is not None else seq - 1) for s in subscribers)
        if start >= seq:
            return
        for event in await self._store.list_events(session_id, since=start):
            self._delivered(event)

    def known_sessions(self) -> list[str]:
        """The sessions whose events this bus has delivered or heard of."""
        return list(self._last_seq)

    async def publish_delta(self, session_id: str, type_: EventType, data: dict[str, Any]) -> Event:
        """An ephemeral event (token delta): buffered in memory, never persisted."""
        check_event_type(type_)
        async with self._lock(session_id):
            seq = self._last_seq.get(session_id)
            if seq is None:
                seq = await self._store.last_seq(session_id)
                if not self.shared:  # shared: what was delivered here is known only once delivered
                    self._last_seq[session_id] = seq
            part = self._part.get(session_id, 0) + 1
            self._part[session_id] = part
            event = Event(session_id=session_id, seq=seq, part=part, type=type_, data=data, ephemeral=True)
            self._deltas.append(event)
            self._fan_out(event)
        return event

    def _fan_out(self, event: Event) -> None:
        for sub in self._subscribers:
            if sub.session_id is None or sub.session_id == event.session_id:
                sub.offer(event)

    def subscribe(
        self, session_id: str | None = None, *, maxsize: int = 10_000, types: Iterable[EventType] | None = None
    ) -> Subscription:
        """Start receiving events published from now on (of `types` only, if given)."""
        for type_ in types or ():
            check_event_type(type_)
        sub = Subscription(session_id=session_id, maxsize=maxsize, types=None if types is None else frozenset(types))
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
        async with self._lock(session_id):
            missed = await self.replay(session_id, since)
            sub = self.subscribe(session_id)
            sub.seen[session_id] = max([since, *(e.seq for e in missed if not e.ephemeral)])
        return missed, sub

    async def subscribe_all_from(self, since: dict[str, int]) -> tuple[list[Event], Subscription]:
        """Subscribe to every session, replaying what each listed session missed since its seq."""
        # Sessions not listed are delivered from now on, so only the listed ones need holding.
        async with self._lock.all_of(list(since)):
            missed: list[Event] = []
            seen: dict[str, int] = {}
            for session_id, seq in since.items():
                replayed = await self.replay(session_id, seq)
                missed.extend(replayed)
                seen[session_id] = max([seq, *(e.seq for e in replayed if not e.ephemeral)])
            sub = self.subscribe(None)
            sub.seen.update(seen)
        return missed, sub
