"""A host's watch notices at once that its database lock is gone, and claims it again.

The lock goes with the watch's connection; here the server terminates that connection (found by
its application_name), as an operator's pg_terminate_backend or a dropping proxy would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import psycopg
import pytest

from backend.cluster.host_watch import APPLICATION_NAME, HostIdInUse, HostWatch
from backend.testing.postgres import fresh_database

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def database() -> Iterator[str]:
    with fresh_database("host_watch") as url:
        with psycopg.connect(url, autocommit=True) as conn:  # the table the watch reads, as DBOS makes it
            conn.execute("CREATE SCHEMA dbos")
            conn.execute(
                "CREATE TABLE dbos.workflow_status (status text, queue_name text, application_version text, executor_id text)"
            )
        yield url


def cut_watch_connection(url: str, host_id: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            # This test's database only: tests running side by side name their hosts alike.
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = %s AND datname = current_database()",
            (f"{APPLICATION_NAME}:{host_id}",),
        ).fetchall()
    return len(rows)


async def no_recovery(host: str) -> list[str]:
    raise AssertionError(f"no host died, yet {host} was recovered")


async def test_a_cut_watch_connection_is_noticed_before_the_next_look_and_the_lock_is_held_again(database: str) -> None:
    lost, regained = asyncio.Event(), asyncio.Event()

    async def on_lost() -> None:
        assert not watch.holds_lock  # told after the flag a gate would read has turned
        lost.set()

    async def on_regained() -> None:
        assert watch.holds_lock
        regained.set()

    # Looks every 30 s: noticing within a few seconds is the wait on the socket, not a look.
    watch = HostWatch(url=database, host_id="host-a", queue_name="q", app_version="v", interval=30)
    await watch.claim()
    watch.start(no_recovery, on_lost=on_lost, on_regained=on_regained)
    try:
        assert watch.holds_lock
        assert cut_watch_connection(database, "host-a") == 1
        await asyncio.wait_for(lost.wait(), timeout=5)
        await asyncio.wait_for(regained.wait(), timeout=10)
        same_id = HostWatch(url=database, host_id="host-a", queue_name="q", app_version="v")
        with pytest.raises(HostIdInUse):  # held for real, on the new connection
            await same_id.claim(timeout=0.2)
    finally:
        await watch.aclose()
    assert not watch.holds_lock


async def test_a_host_that_lost_its_lock_holds_it_again_only_once_the_survivor_recovering_it_lets_go(database: str) -> None:
    fenced, survivor_ready = asyncio.Event(), asyncio.Event()
    regained = asyncio.Event()

    async def on_lost() -> None:
        fenced.set()
        await survivor_ready.wait()  # the survivor takes the lock before this host tries again

    async def on_regained() -> None:
        regained.set()

    watch = HostWatch(url=database, host_id="host-a", queue_name="q", app_version="v", interval=30)
    await watch.claim()
    watch.start(no_recovery, on_lost=on_lost, on_regained=on_regained)
    survivor = await psycopg.AsyncConnection.connect(database, autocommit=True)
    try:
        cut_watch_connection(database, "host-a")
        await asyncio.wait_for(fenced.wait(), timeout=5)
        # What a survivor's recovery does: hold the cut host's lock while handing its runs back.
        survivor_watch = HostWatch(url=database, host_id="survivor", queue_name="q", app_version="v")
        survivor_watch._conn = survivor
        assert await survivor_watch._try_lock("host-a")
        survivor_ready.set()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.shield(regained.wait()), timeout=1.5)
        assert not watch.holds_lock
        await survivor.execute("SELECT pg_advisory_unlock_all()")
        await asyncio.wait_for(regained.wait(), timeout=10)
        assert watch.holds_lock
    finally:
        await survivor.close()
        await watch.aclose()
