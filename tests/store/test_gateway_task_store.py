"""Gateway tasks in the store (issue 35, item 6), on SQLite and Postgres: a task reads back as
written, a caller's list holds only theirs, newest first, a page at a time, and a saved change
or a deletion is what a later read sees."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from backend.domain.gateway_tasks import GatewayTask

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def task(task_id: str, *, owner: str = "api_key:ci", minutes: int = 0) -> GatewayTask:
    when = T0 + timedelta(minutes=minutes)
    return GatewayTask(
        id=task_id, session_id=f"s-{task_id}", owner=owner, ttl_ms=3_600_000, created_at=when, updated_at=when
    )


async def test_a_stored_task_reads_back_as_written(store):
    await store.add_gateway_task(task("t1"))
    assert await store.gateway_task("t1") == task("t1")
    assert await store.gateway_task("nope") is None


async def test_a_callers_tasks_list_newest_first_a_page_at_a_time_and_only_theirs(store):
    for i in range(3):
        await store.add_gateway_task(task(f"mine{i}", minutes=i))
    await store.add_gateway_task(task("theirs", owner="user:bob", minutes=5))
    first = await store.gateway_tasks("api_key:ci", limit=2)
    rest = await store.gateway_tasks("api_key:ci", limit=2, offset=2)
    assert [t.id for t in first] == ["mine2", "mine1"]
    assert [t.id for t in rest] == ["mine0"]
    assert [t.id for t in await store.gateway_tasks("user:bob", limit=10)] == ["theirs"]


async def test_a_saved_end_and_a_deletion_are_what_later_reads_see(store):
    await store.add_gateway_task(task("t1"))
    ended = task("t1").model_copy(
        update={"ended": "completed", "result": {"content": [{"type": "text", "text": "done"}]}}
    )
    await store.save_gateway_task(ended)
    assert await store.gateway_task("t1") == ended
    await store.delete_gateway_task("t1")
    assert await store.gateway_task("t1") is None
