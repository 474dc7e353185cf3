"""Checkpoints in the store (issue 32), on SQLite and Postgres: their rows, their numbering, their
event written with them, retention's deletes, and the per-workspace lock that keeps two holders
(two hosts, on Postgres) from writing one shadow repository at once."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from psycopg.errors import UniqueViolation

from backend.domain.checkpoints import Checkpoint, RetainedCheckpoint, WorkspaceBusy
from backend.domain.models import AuditEntry, Decider, Event, Session, ToolCallRecord
from backend.store import NotFound

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def checkpoint(session_id: str, step: int, *, workspace: str = "/w", minutes: int = 0) -> Checkpoint:
    return Checkpoint(
        session_id=session_id,
        step=step,
        tool_call_id=f"call-{step}",
        tool_name="mcp__file__write_file",
        kind="step",
        workspace=workspace,
        commit=f"{step:040x}",
        created_at=T0 + timedelta(minutes=minutes),
        skipped=["big.bin: over 5 MB"],
    )


async def test_a_sessions_checkpoints_round_trip_by_step_and_are_numbered_from_one(store):
    await store.create_session(Session(id="s", workspace="/w"))
    assert await store.next_checkpoint_step("s") == 1
    rewind = checkpoint("s", 2).model_copy(
        update={"kind": "rewind", "tool_call_id": None, "tool_name": None, "by": Decider(name="ann", kind="user")}
    )
    await store.add_checkpoint(rewind)
    await store.add_checkpoint(checkpoint("s", 1))
    assert await store.next_checkpoint_step("s") == 3
    assert await store.list_checkpoints("s") == [checkpoint("s", 1), rewind]
    assert await store.get_checkpoint("s", 2) == rewind
    assert await store.list_checkpoints("other") == []


async def test_numbering_goes_on_from_the_sessions_events_when_retention_deleted_all_its_rows(store):
    for step in (1, 2):
        draft = Event(session_id="s", seq=0, type="checkpoint.created", data={"step": step})
        await store.add_checkpoint(checkpoint("s", step), event=draft)
    rewound = Event(session_id="s", seq=0, type="checkpoint.rewound", data={"step": 1, "checkpoint_step": 3})
    await store.add_checkpoint(checkpoint("s", 3), event=rewound)
    failed = Event(session_id="s", seq=0, type="checkpoint.created", data={"step": None, "commit": None})
    await store.append_event(failed)  # a step that ran without a checkpoint took no number
    await store.delete_checkpoints(await store.list_checkpoints("s"))

    assert await store.list_checkpoints("s") == []
    assert await store.next_checkpoint_step("s") == 4
    assert await store.next_checkpoint_step("new") == 1


async def test_a_missing_checkpoint_is_not_found_and_a_step_taken_twice_is_refused(store):
    await store.add_checkpoint(checkpoint("s", 1))
    with pytest.raises(NotFound):
        await store.get_checkpoint("s", 2)
    with pytest.raises((sqlite3.IntegrityError, UniqueViolation)):
        await store.add_checkpoint(checkpoint("s", 1).model_copy(update={"commit": "f" * 40}))
    assert (await store.get_checkpoint("s", 1)).commit == f"{1:040x}"


async def test_a_checkpoints_event_is_written_in_its_transaction_and_numbered(store):
    await store.append_event(Event(session_id="s", seq=0, type="session.status", data={}))
    draft = Event(session_id="s", seq=0, type="checkpoint.created", data={"step": 1})
    written = await store.add_checkpoint(checkpoint("s", 1), event=draft)
    assert written.event is not None and written.event.seq == 2
    assert [e.type for e in await store.list_events("s")] == ["session.status", "checkpoint.created"]


async def test_retention_reads_a_workspaces_checkpoints_oldest_first_and_deletes_them(store):
    await store.add_checkpoint(checkpoint("b", 1, minutes=2))
    await store.add_checkpoint(checkpoint("a", 1, minutes=1))
    await store.add_checkpoint(checkpoint("a", 2, minutes=3))
    await store.add_checkpoint(checkpoint("c", 1, workspace="/elsewhere"))
    oldest = await store.workspace_checkpoints("/w")
    assert [(c.session_id, c.step) for c in oldest] == [("a", 1), ("b", 1), ("a", 2)]
    assert await store.checkpoint_workspaces() == ["/elsewhere", "/w"]
    assert await store.delete_checkpoints(oldest[:2]) == 2
    assert [(c.session_id, c.step) for c in await store.workspace_checkpoints("/w")] == [("a", 2)]


async def test_retention_reads_each_checkpoints_commit_age_and_whether_its_session_is_active(store):
    await store.create_session(Session(id="running", workspace="/w", status="running"))
    await store.create_session(Session(id="waiting", workspace="/w", status="waiting_approval"))
    await store.create_session(Session(id="done", workspace="/w", status="completed"))
    for minutes, (session_id, step) in enumerate([("done", 1), ("running", 1), ("gone", 1), ("waiting", 1), ("done", 2)]):
        await store.add_checkpoint(checkpoint(session_id, step, minutes=minutes))
    await store.add_checkpoint(checkpoint("running", 2, workspace="/elsewhere"))
    rows = await store.retained_checkpoints("/w", before=T0 + timedelta(minutes=2))
    assert rows == [
        RetainedCheckpoint("done", 1, f"{1:040x}", old=True, active=False),
        RetainedCheckpoint("running", 1, f"{1:040x}", old=True, active=True),
        RetainedCheckpoint("gone", 1, f"{1:040x}", old=False, active=False),  # its session was deleted
        RetainedCheckpoint("waiting", 1, f"{1:040x}", old=False, active=True),
        RetainedCheckpoint("done", 2, f"{2:040x}", old=False, active=False),
    ]
    assert await store.delete_checkpoints(rows[:1]) == 1
    assert [(c.session_id, c.step) for c in await store.workspace_checkpoints("/w")][0] == ("running", 1)


async def test_retention_deletes_hundreds_of_rows_in_batches_and_exactly_those(store):
    for step in range(1, 451):
        await store.add_checkpoint(checkpoint("a", step))
    await store.add_checkpoint(checkpoint("b", 1))
    doomed = [cp for cp in await store.workspace_checkpoints("/w") if cp.session_id == "a" and cp.step != 300]
    assert await store.delete_checkpoints(doomed) == 449  # three statements of up to 200 rows
    assert [(c.session_id, c.step) for c in await store.workspace_checkpoints("/w")] == [("a", 300), ("b", 1)]
    assert await store.delete_checkpoints([]) == 0


async def test_deleting_a_session_deletes_its_checkpoints(store):
    await store.create_session(Session(id="s", workspace="/w"))
    await store.add_checkpoint(checkpoint("s", 1))
    await store.delete_session("s")
    assert await store.list_checkpoints("s") == []


async def test_the_workspace_lock_excludes_a_second_holder_until_the_first_lets_go(store_factory):
    # Two stores on one database stand for two hosts (two processes on Postgres).
    first, second = store_factory(), store_factory()
    await first.open()
    await second.open()
    try:
        async with first.workspace_lock("abc", timeout=5):
            with pytest.raises(WorkspaceBusy):
                async with second.workspace_lock("abc", timeout=0.2):
                    pass
            async with second.workspace_lock("another workspace", timeout=5):
                pass  # another workspace's lock is free meanwhile
            waiting = asyncio.ensure_future(_hold(second, "abc"))
            done, _ = await asyncio.wait({waiting}, timeout=0.3)
            assert not done, "the second holder got the lock while the first held it"
        await asyncio.wait_for(waiting, timeout=10)  # let go: the second gets it
    finally:
        await first.close()
        await second.close()


async def _hold(store, key: str) -> None:
    async with store.workspace_lock(key, timeout=10):
        pass


async def test_a_host_that_dies_holding_a_workspace_lock_lets_go_of_it(empty_postgres_database):
    # kill -9 of a host ends its connections: the server then drops their advisory locks.
    from psycopg import OperationalError

    from backend.store.postgres import PostgresStore
    from backend.store.postgres_schema import WORKSPACE_LOCK_CLASS

    dying = PostgresStore(empty_postgres_database, max_connections=2)
    other = PostgresStore(empty_postgres_database, max_connections=2)
    await dying.open()
    await other.open()
    held = dying.workspace_lock("abc", timeout=5)
    try:
        await held.__aenter__()
        with pytest.raises(WorkspaceBusy):
            async with other.workspace_lock("abc", timeout=0.2):
                pass
        [(pid,)] = await other._fetch_all(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s", (WORKSPACE_LOCK_CLASS,)
        )
        await other._fetch_all("SELECT pg_terminate_backend(%s)", (pid,))
        async with other.workspace_lock("abc", timeout=5):
            pass  # the dead holder's lock is gone
        with pytest.raises(OperationalError):  # and the dead holder finds its connection cut
            await held.__aexit__(None, None, None)
    finally:
        await dying.close()
        await other.close()


async def test_a_steps_start_its_checkpoint_and_both_events_are_one_transaction_numbered_in_turn(store):
    await store.create_session(Session(id="s", workspace="/w"))
    await store.append_event(Event(session_id="s", seq=0, type="session.status", data={"status": "running"}))
    record = ToolCallRecord(id="call-1", session_id="s", name="mcp__file__write_file", arguments={"path": "a"}, status="running")
    allow = AuditEntry.of(record, "allow", "policy", "always_allow")
    started = Event(session_id="s", seq=0, type="tool.started", data={"id": "call-1"})
    created = Event(session_id="s", seq=0, type="checkpoint.created", data={"step": 1, "id": "call-1"})

    written = await store.record_start(allow, record, checkpoint("s", 1), event=started, second=created)

    assert written.event is not None and written.second is not None
    assert (written.event.seq, written.second.seq) == (2, 3)
    assert [(e.seq, e.type) for e in await store.list_events("s")] == [
        (1, "session.status"), (2, "tool.started"), (3, "checkpoint.created")
    ]
    assert await store.list_checkpoints("s") == [checkpoint("s", 1)]
    assert [(c.id, c.status) for c in await store.list_tool_calls("s")] == [("call-1", "running")]
    assert [(a.tool_call_id, a.decision) for a in await store.list_audit(session_id="s")] == [("call-1", "allow")]

    # A number taken twice refuses the whole start: no row, no event, no running state of it.
    again = ToolCallRecord(id="call-2", session_id="s", name="mcp__file__write_file", arguments={}, status="running")
    with pytest.raises((sqlite3.IntegrityError, UniqueViolation)):
        await store.record_start(
            AuditEntry.of(again, "allow", "policy", "always_allow"), again, checkpoint("s", 1),
            event=started, second=created,
        )
    assert len(await store.list_events("s")) == 3
    assert [c.id for c in await store.list_tool_calls("s")] == ["call-1"]
