"""Cron jobs in the store (SQLite and Postgres): round trips, due queries, the next due time, deletes, migration."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from backend.domain.models import Session
from backend.domain.schedules import Schedule
from backend.store import NotFound, SqliteStore
from backend.store.schema import MIGRATIONS, SCHEMA_VERSION

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def job(job_id: str, *, next_in: timedelta | None, status: str = "active", created: int = 0) -> Schedule:
    return Schedule(
        id=job_id,
        name=job_id,
        schedule="every 1h",
        kind="every",
        timezone="UTC",
        prompt="p",
        status=status,  # type: ignore[arg-type]
        next_run_at=None if next_in is None else T0 + next_in,
        created_at=T0 + timedelta(seconds=created),
    )


async def test_a_schedule_round_trips_and_saving_again_replaces_it(store):
    saved = await store.save_schedule(job("a", next_in=timedelta(hours=1)))
    assert await store.get_schedule("a") == saved
    changed = saved.model_copy(update={"name": "renamed", "last_status": "completed", "run_count": 3})
    await store.save_schedule(changed)
    assert await store.get_schedule("a") == changed
    assert [s.id for s in await store.list_schedules()] == ["a"]


async def test_schedules_are_listed_oldest_first(store):
    for job_id, created in (("late", 20), ("early", 0), ("middle", 10)):
        await store.save_schedule(job(job_id, next_in=None, created=created))
    assert [s.id for s in await store.list_schedules()] == ["early", "middle", "late"]


async def test_only_active_jobs_at_or_past_their_time_are_due_most_overdue_first(store):
    await store.save_schedule(job("future", next_in=timedelta(minutes=5)))
    await store.save_schedule(job("now", next_in=timedelta(0)))
    await store.save_schedule(job("overdue", next_in=-timedelta(hours=2)))
    await store.save_schedule(job("paused", next_in=-timedelta(hours=3), status="paused"))
    await store.save_schedule(job("done", next_in=-timedelta(hours=3), status="done"))
    assert [s.id for s in await store.due_schedules(T0)] == ["overdue", "now"]


async def test_the_next_schedule_time_is_the_earliest_active_one(store):
    assert await store.next_schedule_time() is None
    await store.save_schedule(job("paused", next_in=timedelta(minutes=1), status="paused"))
    await store.save_schedule(job("b", next_in=timedelta(minutes=30)))
    await store.save_schedule(job("a", next_in=timedelta(minutes=10, microseconds=500)))
    assert await store.next_schedule_time() == T0 + timedelta(minutes=10, microseconds=500)


async def test_deleting_removes_the_job_and_a_missing_one_is_not_found(store):
    await store.save_schedule(job("a", next_in=timedelta(hours=1)))
    await store.delete_schedule("a")
    assert await store.list_schedules() == []
    with pytest.raises(NotFound):
        await store.get_schedule("a")
    with pytest.raises(NotFound):
        await store.delete_schedule("a")


async def test_schedules_survive_closing_and_reopening_the_database(store_factory):
    async with store_factory() as first:
        await first.save_schedule(job("kept", next_in=timedelta(hours=1)))
    async with store_factory() as second:
        assert (await second.get_schedule("kept")).next_run_at == T0 + timedelta(hours=1)
        assert [s.id for s in await second.due_schedules(T0 + timedelta(hours=1))] == ["kept"]


async def test_the_sqlite_schedules_table_has_an_index_on_the_next_run(sqlite_store):
    rows = await sqlite_store.db.fetch_all("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'schedules'")
    assert "schedules_next_run" in {r[0] for r in rows}


async def test_a_database_from_before_schedules_is_migrated_and_keeps_its_sessions(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(f"BEGIN;\n{MIGRATIONS[0]}\nPRAGMA user_version = 1;\nCOMMIT;")
    conn.execute(
        "INSERT INTO sessions (id, status, parent_id, created_at, data) VALUES (?, ?, ?, ?, ?)",
        ("old", "completed", None, T0.isoformat(), Session(id="old", workspace="/w", status="completed").model_dump_json()),
    )
    conn.commit()
    conn.close()
    async with SqliteStore(path) as store:
        assert await store.schema_version() == SCHEMA_VERSION
        assert (await store.get_session("old")).status == "completed"
        await store.save_schedule(job("new", next_in=timedelta(0)))
        assert [s.id for s in await store.due_schedules(T0)] == ["new"]


async def test_only_one_claim_of_a_due_job_wins(store):
    due = await store.save_schedule(job("a", next_in=timedelta(0)))
    advanced = due.model_copy(update={"next_run_at": T0 + timedelta(hours=1)})
    assert await store.claim_schedule(due, advanced) is True
    # A second process read the same due row: its claim finds the job already moved on.
    assert await store.claim_schedule(due, advanced) is False
    assert (await store.get_schedule("a")).next_run_at == T0 + timedelta(hours=1)
    assert await store.due_schedules(T0) == []


async def test_a_key_is_claimed_once_across_processes(store_factory):
    async with store_factory() as first, store_factory() as second:
        results = await asyncio.gather(*(s.claim_once("heartbeat:2026-12-04T09:30:00+00:00") for s in (first, second) * 3))
        other = await second.claim_once("heartbeat:2026-12-04T10:00:00+00:00")
    assert sorted(results) == [False] * 5 + [True]
    assert other is True
