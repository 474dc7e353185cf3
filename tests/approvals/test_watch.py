"""An answer written by another process (another connection to the same SQLite file) reaches the
call waiting on it, without waiting for the approval to expire."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from backend.domain.models import Decision
from backend.engine.events import EventBus
from backend.approvals.broker import ApprovalBroker
from backend.store import SqliteStore

REPO = Path(__file__).resolve().parents[2]

# The second process: its own store, bus and broker on the same file, answering one approval.
ANSWER_FROM_ANOTHER_PROCESS = """
import asyncio, sys
from backend.domain.models import Decision
from backend.engine.events import EventBus
from backend.approvals.broker import ApprovalBroker
from backend.store import SqliteStore

async def main(path, approval_id):
    async with SqliteStore(path) as store:
        broker = ApprovalBroker(store, EventBus(store))
        await broker.answer(approval_id, Decision(kind="allow_once"))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def open_one(broker: ApprovalBroker):
    return await broker.open(session_id="s1", tool_call_id="c1", tool_name="mcp__shell__exec", arguments={"command": "ls"})


async def test_an_answer_from_another_process_wakes_the_waiting_call(tmp_path):
    async with SqliteStore(tmp_path / "o.db") as store:
        bus = EventBus(store)
        broker = ApprovalBroker(store, bus, timeout=600)
        approval = await open_one(broker)
        waiting = asyncio.create_task(broker.wait(approval.id))
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", ANSWER_FROM_ANOTHER_PROCESS, str(store.path), approval.id,
            cwd=REPO, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, stderr.decode()

        done = await asyncio.wait_for(waiting, 5)  # the approval itself would wait 600 s

        assert done.status == "allowed"
        # The other process numbered its `approval.resolved`; this one's events follow it.
        stopped = await bus.publish("s1", "session.status", {"status": "stopped"})
        assert [e.seq for e in await store.list_events("s1")] == list(range(1, stopped.seq + 1))
        assert [e.type for e in await store.list_events("s1")][-2:] == ["approval.resolved", "session.status"]


async def test_an_answer_through_another_connection_wakes_the_waiting_call(tmp_path):
    async with SqliteStore(tmp_path / "o.db") as here, SqliteStore(tmp_path / "o.db") as there:
        broker_here = ApprovalBroker(here, EventBus(here), timeout=600)
        broker_there = ApprovalBroker(there, EventBus(there), timeout=600)
        first, second = await open_one(broker_here), await open_one(broker_here)
        waiting = [asyncio.create_task(broker_here.wait(a.id)) for a in (first, second)]

        await broker_there.answer(second.id, Decision(kind="deny", message="not today"))
        denied = await asyncio.wait_for(waiting[1], 5)
        await broker_there.answer(first.id, Decision(kind="allow_once"))
        allowed = await asyncio.wait_for(waiting[0], 5)

        assert (denied.status, denied.decision.message) == ("denied", "not today")
        assert allowed.status == "allowed"


async def test_cancelling_a_call_another_process_answered_keeps_event_numbers_apart(tmp_path):
    async with SqliteStore(tmp_path / "o.db") as here, SqliteStore(tmp_path / "o.db") as there:
        bus_here = EventBus(here)
        broker_here = ApprovalBroker(here, bus_here, timeout=600)
        approval = await open_one(broker_here)
        await ApprovalBroker(there, EventBus(there)).answer(approval.id, Decision(kind="allow_once"))

        await broker_here.cancel(approval.id, "The session was stopped.")  # already answered: a no-op
        stopped = await bus_here.publish("s1", "session.status", {"status": "stopped"})

        assert [e.seq for e in await here.list_events("s1")] == list(range(1, stopped.seq + 1))


async def test_the_watch_runs_only_while_a_call_waits(tmp_path):
    async with SqliteStore(tmp_path / "o.db") as here, SqliteStore(tmp_path / "o.db") as there:
        broker = ApprovalBroker(here, EventBus(here), timeout=600)
        approval = await open_one(broker)
        assert not broker.watch.active.is_set()
        waiting = asyncio.create_task(broker.wait(approval.id))
        await asyncio.wait_for(broker.watch.active.wait(), 5)
        assert broker.watch.active.is_set()

        await ApprovalBroker(there, EventBus(there)).answer(approval.id, Decision(kind="allow_once"))
        await asyncio.wait_for(waiting, 5)

        assert not broker.watch.active.is_set()


async def test_a_cancelled_wait_stops_the_watch(tmp_path):
    async with SqliteStore(tmp_path / "o.db") as store:
        broker = ApprovalBroker(store, EventBus(store), timeout=600)
        approval = await open_one(broker)
        waiting = asyncio.create_task(broker.wait(approval.id))
        await asyncio.wait_for(broker.watch.active.wait(), 5)

        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)

        assert not broker.watch.active.is_set()


async def test_a_poke_makes_the_watch_look_at_once_instead_of_at_its_next_tick(tmp_path):
    # What a Postgres notice of a closed approval does (backend/app/cluster_links.py).
    async with SqliteStore(tmp_path / "o.db") as here, SqliteStore(tmp_path / "o.db") as there:
        broker_here = ApprovalBroker(here, EventBus(here), timeout=600)
        broker_here.watch.interval = 600  # no tick would come within the test's bound
        approval = await open_one(broker_here)
        waiting = asyncio.create_task(broker_here.wait(approval.id))
        await asyncio.wait_for(broker_here.watch.active.wait(), 5)
        await ApprovalBroker(there, EventBus(there)).answer(approval.id, Decision(kind="allow_once"))
        broker_here.watch.poke()
        allowed = await asyncio.wait_for(waiting, 5)
    assert allowed.status == "allowed"


async def test_a_notice_that_an_approval_closed_wakes_its_waiter_without_a_look_at_the_store(tmp_path):
    # The waiter reads the answer itself; the watch's two reads per look are not on its path.
    async with SqliteStore(tmp_path / "o.db") as here, SqliteStore(tmp_path / "o.db") as there:
        broker_here = ApprovalBroker(here, EventBus(here), timeout=600)
        broker_here.watch.interval = 600
        approval = await open_one(broker_here)
        waiting = asyncio.create_task(broker_here.wait(approval.id))
        await asyncio.wait_for(broker_here.watch.active.wait(), 5)
        await ApprovalBroker(there, EventBus(there)).answer(approval.id, Decision(kind="allow_once"))
        looks = 0
        statuses = here.approval_statuses

        async def counted(ids):
            nonlocal looks
            looks += 1
            return await statuses(ids)

        here.approval_statuses = counted  # type: ignore[method-assign]
        broker_here.watch.closed(approval.id)
        allowed = await asyncio.wait_for(waiting, 5)
    assert allowed.status == "allowed"
    assert looks == 0

