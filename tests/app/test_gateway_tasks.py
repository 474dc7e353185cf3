"""GatewayTaskService (backend/app/gateway_tasks.py): a task is its starter's alone, and one that
ended is forgotten once its time to live ran out, while one whose run goes on is kept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from backend.app.gateway_tasks import GatewayTaskService
from backend.auth import Principal
from backend.domain.errors import NotFound
from backend.domain.models import utcnow
from backend.store.sqlite import SqliteStore

ALICE = Principal(name="alice", role="approver", kind="api_key")
ALICE_AS_USER = Principal(name="alice", role="approver", kind="user")
BOB = Principal(name="bob", role="admin", kind="api_key")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    store = SqliteStore(tmp_path / "overseer.db")
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def test_a_task_is_found_by_its_starter_only(store):
    tasks = GatewayTaskService(store)
    task = await tasks.create(session_id="s1", owner=ALICE, ttl_ms=60_000)
    assert (await tasks.get(task.id, owner=ALICE)).session_id == "s1"
    for stranger in (BOB, ALICE_AS_USER):  # the same name through another door is someone else
        with pytest.raises(NotFound):
            await tasks.get(task.id, owner=stranger)
    assert [t.id for t in await tasks.list(owner=BOB, limit=10)] == []
    assert [t.id for t in await tasks.list(owner=ALICE, limit=10)] == [task.id]


async def test_task_ids_are_long_and_random(store):
    tasks = GatewayTaskService(store)
    ids = {(await tasks.create(session_id="s1", owner=ALICE, ttl_ms=60_000)).id for _ in range(20)}
    assert len(ids) == 20 and all(len(i) >= 32 for i in ids)


async def test_an_ended_task_past_its_ttl_is_gone_and_a_running_one_is_kept(store):
    tasks = GatewayTaskService(store)
    long_ago = utcnow() - timedelta(hours=2)
    running = await tasks.create(session_id="s1", owner=ALICE, ttl_ms=60_000)
    ended = await tasks.create(session_id="s2", owner=ALICE, ttl_ms=60_000)
    await store.save_gateway_task(running.model_copy(update={"created_at": long_ago}))
    await store.save_gateway_task(
        ended.model_copy(update={"created_at": long_ago, "ended": "completed", "result": {"content": []}})
    )
    assert (await tasks.get(running.id, owner=ALICE)).ended is None
    with pytest.raises(NotFound):
        await tasks.get(ended.id, owner=ALICE)
    assert await store.gateway_task(ended.id) is None  # deleted, not just hidden
    assert [t.id for t in await tasks.list(owner=ALICE, limit=10)] == [running.id]
