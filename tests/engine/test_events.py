"""The event bus: numbering, fan-out, replay after a reconnect."""

from __future__ import annotations

import pytest

from backend.engine.events import EventBus
from backend.store import SqliteStore


@pytest.fixture
async def bus(tmp_path):
    async with SqliteStore(tmp_path / "o.db") as store:
        yield EventBus(store, delta_buffer=100)


async def test_subscriber_receives_events_in_seq_order_for_its_session_only(bus):
    sub = bus.subscribe("a")
    await bus.publish("b", "x")
    for i in range(3):
        await bus.publish("a", "x", {"i": i})
    got = [await sub.get(timeout=1) for _ in range(3)]
    assert [e.seq for e in got] == [1, 2, 3]
    assert {e.session_id for e in got} == {"a"}


async def test_reconnecting_client_gets_exactly_what_it_missed(bus):
    for i in range(5):
        await bus.publish("a", "x", {"i": i})
    missed, sub = await bus.subscribe_from("a", since=3)
    await bus.publish("a", "x", {"i": 5})
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
        await bus.publish("a", "x")
    assert sub.overflowed
    assert [e.seq for e in sub.drain()] == [1, 2]
    assert [e.seq for e in await bus.replay("a", since=0)] == [1, 2, 3, 4, 5]
