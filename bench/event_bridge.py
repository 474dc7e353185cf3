"""Events across hosts: how long an event stored by one host takes to reach a subscriber of another.

Two buses on two stores of one fresh Postgres database, each with its event bridge listening, as
two `overseer serve` hosts have them. Host A publishes events of one session one after another;
the latency is from A's publish returning (the event committed) to B's subscriber holding it.
Also: the same for a subscriber on A itself (no bridge), for comparison. Prints JSON.

    .venv/bin/python bench/event_bridge.py [--events 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import percentiles  # noqa: E402
from backend.domain.models import Session  # noqa: E402
from backend.cluster.event_bridge import EventBridge  # noqa: E402
from backend.engine.events import EventBus  # noqa: E402
from backend.store.postgres import PostgresStore  # noqa: E402
from backend.store.postgres_notify import EVENTS_CHANNEL, PostgresListener  # noqa: E402
from backend.testing.postgres import fresh_database  # noqa: E402


async def measure(url: str, count: int) -> dict[str, object]:
    async with PostgresStore(url, max_connections=2) as store_a, PostgresStore(url, max_connections=2) as store_b:
        bus_a, bus_b = EventBus(store_a), EventBus(store_b)
        bridges = [EventBridge(bus, store) for bus, store in ((bus_a, store_a), (bus_b, store_b))]
        listeners = [PostgresListener(url, {EVENTS_CHANNEL: b.heard}, on_connect=b.caught_up) for b in bridges]
        for bridge, listener in zip(bridges, listeners, strict=True):
            bridge.start()
            await listener.start()
        try:
            session = await store_a.create_session(Session(id=uuid.uuid4().hex, title="bench", workspace="/tmp"))
            local, remote = bus_a.subscribe(session.id), bus_b.subscribe(session.id)
            here_ms, there_ms = [], []
            started = time.perf_counter()
            for n in range(count):
                await bus_a.publish(session.id, "usage", {"n": n})
                sent = time.perf_counter()
                await local.get(timeout=10)
                here_ms.append((time.perf_counter() - sent) * 1000)
                event = await remote.get(timeout=10)
                there_ms.append((time.perf_counter() - sent) * 1000)
                assert event.seq == n + 1
            elapsed = time.perf_counter() - started
        finally:
            for bridge, listener in zip(bridges, listeners, strict=True):
                await listener.aclose()
                await bridge.aclose()
    return {
        "events": count,
        "same_host": percentiles(here_ms),
        "other_host": percentiles(there_ms),
        "events_per_s_publish_and_cross": round(count / elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=500)
    args = parser.parse_args()
    with fresh_database("bench_event_bridge") as url:
        print(json.dumps(asyncio.run(measure(url, args.events)), indent=2))


if __name__ == "__main__":
    main()
