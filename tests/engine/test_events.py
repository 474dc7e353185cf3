"""The event bus: numbering, fan-out, replay after a reconnect, and its closed set of types."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import get_args

import pytest

from backend.domain.models import EVENT_TYPES, Event, EventType
from backend.engine.events import EventBus, UnknownEventType
from backend.store import SqliteStore
from backend.store.ready import then

BACKEND = Path(__file__).resolve().parents[2] / "backend"


@pytest.fixture
async def bus(tmp_path):
    async with SqliteStore(tmp_path / "o.db") as store:
        yield EventBus(store, delta_buffer=100)


async def test_subscriber_receives_events_in_seq_order_for_its_session_only(bus):
    sub = bus.subscribe("a")
    await bus.publish("b", "notice")
    for i in range(3):
        await bus.publish("a", "notice", {"i": i})
    got = [await sub.get(timeout=1) for _ in range(3)]
    assert [e.seq for e in got] == [1, 2, 3]
    assert {e.session_id for e in got} == {"a"}


async def test_a_publish_cancelled_after_its_write_still_delivers_what_it_wrote(bus):
    # Issue 13, item 13: a stop landing between the commit and the fan-out left the event stored
    # but never delivered, and the bus's numbering behind the store's.
    sub = bus.subscribe("a")
    written, release = asyncio.Event(), asyncio.Event()

    async def persist(draft: Event) -> Event:
        stored = await bus._store.append_event(draft)
        written.set()
        await release.wait()  # the write has committed; a cancel lands here
        return stored

    publishing = asyncio.create_task(bus.publish("a", "notice", {"i": 1}, persist=persist))
    async with asyncio.timeout(5):
        await written.wait()
    publishing.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):  # the stop still stops the publisher
        async with asyncio.timeout(5):
            await publishing
    delivered = await sub.get(timeout=5)
    assert (delivered.seq, delivered.data) == (1, {"i": 1})
    after = await bus.publish("a", "notice", {"i": 2})
    assert after.seq == 2
    assert (await sub.get(timeout=5)).seq == 2


async def test_a_pair_written_in_one_transaction_is_delivered_in_turn_even_when_its_caller_is_stopped(bus):
    sub = bus.subscribe("a")
    await bus.publish("a", "notice", {"i": 0})
    store = bus._store

    def together(first: Event, second: Event):
        return then(store._unit(event=first, second=second), lambda w: (w.event, w.second))

    first, second = await bus.publish_pair("a", ("tool.started", {"i": 1}), ("checkpoint.created", {"i": 2}), persist=together)
    assert [(e.seq, e.type) for e in (first, second)] == [(2, "tool.started"), (3, "checkpoint.created")]
    assert [(await sub.get(timeout=1)).seq for _ in range(3)] == [1, 2, 3]

    written, release = asyncio.Event(), asyncio.Event()

    async def slow(first: Event, second: Event) -> tuple[Event, Event]:
        stored = await together(first, second)
        written.set()
        await release.wait()  # committed; a stop lands here
        return stored

    publishing = asyncio.create_task(bus.publish_pair("a", ("notice", {}), ("notice", {}), persist=slow))
    async with asyncio.timeout(5):
        await written.wait()
    publishing.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(5):
            await publishing
    assert [(await sub.get(timeout=5)).seq for _ in range(2)] == [4, 5]
    with pytest.raises(UnknownEventType):
        await bus.publish_pair("a", ("notice", {}), ("no.such.type", {}), persist=together)  # type: ignore[arg-type]
    assert (await bus.publish("a", "notice")).seq == 6


async def test_reconnecting_client_gets_exactly_what_it_missed(bus):
    for i in range(5):
        await bus.publish("a", "notice", {"i": i})
    missed, sub = await bus.subscribe_from("a", since=3)
    await bus.publish("a", "notice", {"i": 5})
    assert [e.seq for e in missed] == [4, 5]
    assert (await sub.get(timeout=1)).seq == 6


async def test_token_deltas_are_not_persisted_but_replayed_from_memory(bus, tmp_path):
    await bus.publish("a", "message")
    await bus.publish_delta("a", "token", {"text": "he"})
    await bus.publish_delta("a", "token", {"text": "llo"})
    replay = await bus.replay("a", since=1)
    assert [(e.seq, e.part, e.data.get("text")) for e in replay] == [(1, 1, "he"), (1, 2, "llo")]
    assert [e.type for e in await bus._store.list_events("a")] == ["message"]


async def test_slow_subscriber_is_cut_off_instead_of_blocking_publishers(bus):
    sub = bus.subscribe("a", maxsize=2)
    for _ in range(5):
        await bus.publish("a", "notice")
    assert sub.overflowed
    assert [e.seq for e in sub.drain()] == [1, 2]
    assert [e.seq for e in await bus.replay("a", since=0)] == [1, 2, 3, 4, 5]


async def test_an_event_type_outside_the_closed_set_is_refused_and_nothing_is_written_or_delivered(bus):
    sub = bus.subscribe("a")
    with pytest.raises(UnknownEventType, match="'tool.finished'"):
        await bus.publish("a", "tool.finished", {"id": "c1"})  # type: ignore[arg-type]
    with pytest.raises(UnknownEventType, match="'tokens'"):
        await bus.publish_delta("a", "tokens", {"text": "he"})  # type: ignore[arg-type]
    assert await bus.replay("a") == []
    assert sub.drain() == []
    assert (await bus.publish("a", "notice")).seq == 1  # nothing was numbered for the refused ones


def test_an_event_of_an_unknown_type_cannot_even_be_built():
    with pytest.raises(ValueError, match="type"):
        Event(session_id="a", seq=1, type="tool.finished")  # type: ignore[arg-type]


def _published_types() -> dict[str, list[str]]:
    """Every literal event type the backend passes to publish / publish_delta / a workflow's _event."""
    found: dict[str, list[str]] = {}
    for path in sorted(BACKEND.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            kind = node.args[1]
            if name in ("publish", "publish_delta", "_event") and isinstance(kind, ast.Constant):
                found.setdefault(kind.value, []).append(f"{path.relative_to(BACKEND.parent)}:{node.lineno}")
    return found


def test_the_closed_set_is_exactly_what_the_backend_publishes():
    assert frozenset(get_args(EventType)) == EVENT_TYPES
    published = _published_types()
    assert set(published) - EVENT_TYPES == set(), {t: published[t] for t in set(published) - EVENT_TYPES}
    assert EVENT_TYPES - set(published) == set(), "types in EventType that nothing publishes: remove them"


async def test_a_slow_write_of_one_session_does_not_hold_up_another_sessions_events(bus):
    # On a shared Postgres each write is a round trip: one lock for the whole bus queued every
    # session's events behind the slowest write of any.
    sub = bus.subscribe(None)
    writing, release = asyncio.Event(), asyncio.Event()

    async def slow(draft: Event) -> Event:
        writing.set()
        await release.wait()
        return await bus._store.append_event(draft)

    held = asyncio.create_task(bus.publish("a", "notice", {"slow": True}, persist=slow))
    async with asyncio.timeout(5):
        await writing.wait()
        other = await bus.publish("b", "notice")
    assert (other.session_id, other.seq) == ("b", 1)
    assert (await sub.get(timeout=5)).session_id == "b"
    release.set()
    async with asyncio.timeout(5):
        await held
    assert (await sub.get(timeout=5)).data == {"slow": True}


async def test_events_of_one_session_keep_seq_order_when_published_concurrently(bus):
    sub = bus.subscribe("a")
    await asyncio.gather(*(bus.publish("a", "notice", {"i": i}) for i in range(20)))
    got = [await sub.get(timeout=1) for _ in range(20)]
    assert [e.seq for e in got] == list(range(1, 21))
    assert bus._lock._held == {}  # nothing kept once nobody holds a session's lock


async def test_a_publish_whose_write_is_done_at_once_never_lets_the_loop_turn(bus):
    # The embedded store commits on the loop's own thread and hands back a done future: the
    # publish then has no point where a stop could land, and costs no extra turns of the loop.
    turned = []
    asyncio.get_running_loop().call_soon(turned.append, True)
    sub = bus.subscribe("a")
    event = await bus.publish("a", "notice", {"i": 1})
    assert turned == []
    assert sub.drain() == [event]
    assert event.seq == 1


async def test_a_whole_publish_that_waits_for_its_turn_is_written_even_if_its_caller_is_stopped(bus):
    sub = bus.subscribe("a")
    writing, release = asyncio.Event(), asyncio.Event()

    async def slow(draft: Event) -> Event:
        writing.set()
        await release.wait()
        return await bus._store.append_event(draft)

    first = asyncio.create_task(bus.publish("a", "notice", {"i": 1}, persist=slow))
    async with asyncio.timeout(5):
        await writing.wait()
    queued = [asyncio.Event(), asyncio.Event()]

    async def queue(at: int, type_: EventType, data: dict[str, int], **how: bool) -> Event:
        # The waiter wakes after this task's step, which runs the publish up to its wait for the turn.
        queued[at].set()
        return await bus.publish("a", type_, data, **how)

    whole = asyncio.create_task(queue(0, "tool.result", {"i": 2}, whole=True))
    plain = asyncio.create_task(queue(1, "notice", {"i": 3}))
    async with asyncio.timeout(5):
        for event in queued:
            await event.wait()
    whole.cancel()
    plain.cancel()
    release.set()
    async with asyncio.timeout(5):
        await first
        with pytest.raises(asyncio.CancelledError):
            await whole
        with pytest.raises(asyncio.CancelledError):
            await plain
        got = [await sub.get(timeout=5) for _ in range(2)]
    assert [(e.seq, e.data) for e in got] == [(1, {"i": 1}), (2, {"i": 2})]  # the plain one was never written
    assert [e.data for e in await bus.replay("a")] == [{"i": 1}, {"i": 2}]


async def test_a_subscription_to_some_types_gets_only_those_and_keeps_its_place(bus):
    approvals = bus.subscribe(None, types=["approval.requested"])
    everything = bus.subscribe(None)
    for type_ in ("notice", "approval.requested", "tool.started", "approval.requested"):
        await bus.publish("a", type_)
    assert [(e.type, e.seq) for e in approvals.drain()] == [("approval.requested", 2), ("approval.requested", 4)]
    assert len(everything.drain()) == 4
    with pytest.raises(UnknownEventType):
        bus.subscribe(None, types=["approval.asked"])
