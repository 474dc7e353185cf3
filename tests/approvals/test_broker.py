"""ApprovalBroker: persisted requests, bounded waits, one answer each."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from backend.domain.models import Decision, utcnow
from backend.engine.events import EventBus
from backend.approvals.broker import ApprovalBroker
from backend.domain.errors import ApprovalClosed, ApprovalNotFound
from backend.store import SqliteStore


@pytest.fixture
async def parts(tmp_path):
    async with SqliteStore(tmp_path / "o.db") as store:
        bus = EventBus(store)
        yield store, bus, ApprovalBroker(store, bus, timeout=600)


async def open_one(broker: ApprovalBroker):
    return await broker.open(session_id="s1", tool_call_id="c1", tool_name="mcp__shell__exec", arguments={"command": "ls"})


async def test_answer_wakes_the_waiter_with_the_decision(parts):
    _, _, broker = parts
    approval = await open_one(broker)
    waiter = asyncio.create_task(broker.wait(approval.id))
    await broker.answer(approval.id, Decision(kind="deny", message="use staging"))
    done = await asyncio.wait_for(waiter, 2)
    assert done.status == "denied"
    assert done.decision.message == "use staging"


async def test_timeout_denies_and_records_expiry(parts):
    store, _, broker = parts
    broker.timeout = 0.05
    approval = await open_one(broker)
    done = await asyncio.wait_for(broker.wait(approval.id), 5)
    assert done.status == "expired"
    assert done.decided_by == "timeout"
    assert not done.decision.allows
    assert (await store.get_approval(approval.id)).status == "expired"


async def test_unknown_id_is_refused(parts):
    _, _, broker = parts
    with pytest.raises(ApprovalNotFound):
        await broker.answer("nope", Decision(kind="allow_once"))


async def test_second_answer_is_refused_and_the_first_stands(parts):
    store, _, broker = parts
    approval = await open_one(broker)
    await broker.answer(approval.id, Decision(kind="allow_once"))
    with pytest.raises(ApprovalClosed):
        await broker.answer(approval.id, Decision(kind="deny"))
    assert (await store.get_approval(approval.id)).status == "allowed"


async def test_concurrent_answers_apply_exactly_once(parts):
    _, _, broker = parts
    approval = await open_one(broker)
    results = await asyncio.gather(
        *(broker.answer(approval.id, Decision(kind="allow_once")) for _ in range(5)), return_exceptions=True
    )
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, ApprovalClosed) for r in results if isinstance(r, Exception))


async def test_answer_after_expiry_is_refused(parts):
    store, bus, _ = parts
    now = [utcnow()]
    broker = ApprovalBroker(store, bus, timeout=60, clock=lambda: now[0])
    approval = await open_one(broker)
    now[0] += timedelta(seconds=61)
    with pytest.raises(ApprovalClosed, match="expired"):
        await broker.answer(approval.id, Decision(kind="allow_once"))


async def test_a_new_broker_on_the_same_store_can_answer_an_old_pending_approval(parts):
    store, bus, broker = parts
    approval = await open_one(broker)
    fresh = ApprovalBroker(store, bus)
    assert [a.id for a in await fresh.pending()] == [approval.id]
    waiter = asyncio.create_task(fresh.wait(approval.id))
    await fresh.answer(approval.id, Decision(kind="allow_once"))
    assert (await asyncio.wait_for(waiter, 2)).status == "allowed"


async def test_requests_and_answers_are_events(parts):
    _, bus, broker = parts
    sub = bus.subscribe("s1")
    approval = await open_one(broker)
    await broker.answer(approval.id, Decision(kind="allow_once"))
    types = [(await sub.get(timeout=1)).type for _ in range(2)]
    assert types == ["approval.requested", "approval.resolved"]


async def test_settling_by_the_rules_closes_an_approval_even_past_its_expiry(parts):
    store, bus, _ = parts
    now = [utcnow()]
    broker = ApprovalBroker(store, bus, timeout=60, clock=lambda: now[0])
    approval = await open_one(broker)
    now[0] += timedelta(seconds=61)
    settled = await broker.settle(approval.id, Decision(kind="allow_once", message="policy"), by="policy")
    assert (settled.status, settled.decided_by) == ("allowed", "policy")
    with pytest.raises(ApprovalClosed):
        await broker.settle(approval.id, Decision(kind="deny"), by="rule")
