"""Two hosts' buses on one Postgres: a subscriber of one gets the other's events, once, in order."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack

import pytest

from backend.cluster.event_bridge import EventBridge
from backend.engine.events import EventBus, Subscription
from backend.store.postgres import PostgresStore
from backend.store.postgres_notify import EVENTS_CHANNEL, PostgresListener
from backend.testing.postgres import fresh_database
from backend.domain.models import Session


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with fresh_database("event_bridge") as url:
        yield url


class Host:
    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.bus = EventBus(store)
        self.bridge = EventBridge(self.bus, store)
        self.listener = PostgresListener(store.url, {EVENTS_CHANNEL: self.bridge.heard}, on_connect=self.bridge.caught_up)


@pytest.fixture
async def hosts(database: str) -> AsyncIterator[tuple[Host, Host]]:
    async with AsyncExitStack() as stack:
        pair = []
        for _ in range(2):
            store = await stack.enter_async_context(PostgresStore(database, max_connections=2))
            host = Host(store)
            host.bridge.start()
            await host.listener.start()
            stack.push_async_callback(host.bridge.aclose)
            stack.push_async_callback(host.listener.aclose)
            pair.append(host)
        yield pair[0], pair[1]


async def received(sub: Subscription, count: int) -> list[tuple[int, str]]:
    return [(e.seq, e.data["n"]) for e in [await sub.get(timeout=10) for _ in range(count)]]


async def test_a_subscriber_on_one_host_gets_the_events_another_host_stores(hosts):
    a, b = hosts
    session = await a.store.create_session(Session(id=uuid.uuid4().hex, title="t", workspace="/tmp"))
    sub = b.bus.subscribe(None)
    for n in ("1", "2", "3"):
        await a.bus.publish(session.id, "usage", {"n": n})
    assert await received(sub, 3) == [(1, "1"), (2, "2"), (3, "3")]


async def test_events_of_one_session_written_on_both_hosts_arrive_gapless_and_once(hosts):
    a, b = hosts
    session = await a.store.create_session(Session(id=uuid.uuid4().hex, title="t", workspace="/tmp"))
    on_a, on_b = a.bus.subscribe(session.id), b.bus.subscribe(session.id)
    writers = [a, b, b, a, b, a, a, b]
    for n, host in enumerate(writers, 1):
        await host.bus.publish(session.id, "usage", {"n": str(n)})
    expected = [(n, str(n)) for n in range(1, len(writers) + 1)]
    assert await received(on_a, len(writers)) == expected
    assert await received(on_b, len(writers)) == expected
    assert on_a.drain() == [] and on_b.drain() == []


async def test_a_replaying_subscriber_is_not_given_an_event_twice(hosts):
    a, b = hosts
    session = await a.store.create_session(Session(id=uuid.uuid4().hex, title="t", workspace="/tmp"))
    await a.bus.publish(session.id, "usage", {"n": "1"})
    missed, sub = await b.bus.subscribe_from(session.id, 0)
    await a.bus.publish(session.id, "usage", {"n": "2"})
    assert [e.seq for e in missed] == [1]
    assert await received(sub, 1) == [(2, "2")]
    await a.bus.publish(session.id, "usage", {"n": "3"})  # the notice of 1, if late, gave nothing more
    assert await received(sub, 1) == [(3, "3")]



async def test_a_slow_read_of_one_session_does_not_hold_up_another_sessions_events(tmp_path):
    # Under load a host hears notices of many sessions at once; handled one after another,
    # every session's events waited behind the slowest read of any.
    from backend.store import SqliteStore

    async with SqliteStore(tmp_path / "o.db") as store:
        writer, reader = EventBus(store), EventBus(store)
        bridge = EventBridge(reader, store)
        sub = reader.subscribe(None)
        slow = (await writer.publish("slow", "usage", {"n": "1"})).seq
        fast = (await writer.publish("fast", "usage", {"n": "2"})).seq
        reading, release = asyncio.Event(), asyncio.Event()
        list_events = store.list_events

        async def held(session_id, **kwargs):
            if session_id == "slow":
                reading.set()
                await release.wait()
            return await list_events(session_id, **kwargs)

        store.list_events = held  # type: ignore[method-assign]
        bridge.heard(f"slow {slow}")
        bridge.heard(f"fast {fast}")
        bridge.start()
        try:
            async with asyncio.timeout(10):
                await reading.wait()
            first = await sub.get(timeout=10)
            release.set()
            second = await sub.get(timeout=10)
        finally:
            await bridge.aclose()
    assert (first.session_id, second.session_id) == ("fast", "slow")


async def test_every_event_of_a_session_new_here_is_delivered_when_its_notices_arrive_together(tmp_path):
    # A batch once kept only a session's last notice; for a session this host had not heard
    # of, delivery then started at that event and the ones before it never reached the page.
    from backend.store import SqliteStore

    async with SqliteStore(tmp_path / "o.db") as store:
        writer, reader = EventBus(store), EventBus(store)
        bridge = EventBridge(reader, store)
        sub = reader.subscribe(None)
        seqs = [(await writer.publish("new", "usage", {"n": str(n)})).seq for n in range(4)]
        for seq in seqs:
            bridge.heard(f"new {seq}")
        bridge.start()
        try:
            got = [await sub.get(timeout=10) for _ in seqs]
        finally:
            await bridge.aclose()
    assert [e.seq for e in got] == seqs
    assert sub.drain() == []
