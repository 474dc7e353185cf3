"""A session row changed in one transaction (`Store.change_session`), on SQLite and on Postgres:
the decision is made on the row as stored, so one writer never undoes another's change (issue 20)."""

from __future__ import annotations

import asyncio

import pytest

from backend.domain.models import Session
from backend.domain.errors import NotFound


def session(sid: str = "s1") -> Session:
    return Session(id=sid, workspace="/w", status="running", title="old")


async def test_a_change_decided_after_another_writers_change_keeps_it(store_factory):
    one, other = store_factory(), store_factory()  # two processes (hosts) on one database
    await one.open()
    await other.open()
    try:
        await one.create_session(session())
        stale = await one.get_session("s1")  # what a host running the session may still hold
        await other.change_session("s1", lambda s: {"title": "renamed"})
        before, after = await one.change_session("s1", lambda s: {"status": "completed"})
        assert stale.title == "old"
        assert before.title == "renamed"  # decided on the row as stored, not on the stale copy
        assert after is not None and after.updated_at > before.updated_at
        row = await other.get_session("s1")
        assert (row.title, row.status) == ("renamed", "completed")
    finally:
        await one.close()
        await other.close()


async def test_concurrent_changes_from_two_processes_all_land(store_factory):
    one, other = store_factory(), store_factory()
    await one.open()
    await other.open()
    try:
        await one.create_session(session())

        def add(rule: str):
            return lambda s: {"session_rules": [*s.session_rules, rule]}

        await asyncio.gather(
            *(one.change_session("s1", add(f"one-{i}")) for i in range(10)),
            *(other.change_session("s1", add(f"other-{i}")) for i in range(10)),
            other.change_session("s1", lambda s: {"title": "renamed"}),
        )
        row = await one.get_session("s1")
        assert sorted(row.session_rules) == sorted([f"one-{i}" for i in range(10)] + [f"other-{i}" for i in range(10)])
        assert row.title == "renamed"
    finally:
        await one.close()
        await other.close()


async def test_a_change_that_decides_nothing_writes_nothing(store):
    await store.create_session(session())
    stored = await store.get_session("s1")
    before, after = await store.change_session("s1", lambda s: None)
    assert after is None and before == stored
    assert (await store.get_session("s1")).updated_at == stored.updated_at


async def test_a_refused_change_writes_nothing_and_raises_what_the_decision_raised(store):
    await store.create_session(session())

    def refuse(s: Session) -> dict[str, object]:
        raise PermissionError("not now")

    with pytest.raises(PermissionError):
        await store.change_session("s1", refuse)
    # The store is still usable and the row as it was: the refused transaction was rolled back.
    await store.change_session("s1", lambda s: {"title": "later"})
    assert (await store.get_session("s1")).title == "later"


async def test_changing_a_missing_session_raises_not_found(store):
    with pytest.raises(NotFound):
        await store.change_session("nope", lambda s: {"title": "x"})
