"""The store, on SQLite and on Postgres (tests/store/conftest.py): round trips, gapless seq,
atomic tool-call finish; and what only the SQLite file has (WAL, file modes, its query plans)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import subprocess

import pytest

from backend.domain.models import Approval, AuditEntry, Event, Message, Session, ToolCallRecord, utcnow
from backend.store import NotFound, SqliteStore
from backend.store.ready import is_done
from backend.store.schema import SCHEMA_VERSION


def session(sid: str = "s1", status: str = "running") -> Session:
    return Session(id=sid, workspace="/w", status=status)  # type: ignore[arg-type]


async def test_database_is_in_wal_mode_with_the_current_schema_version(sqlite_store):
    [(mode,)] = await sqlite_store.db.fetch_all("PRAGMA journal_mode")
    assert mode == "wal"
    assert await sqlite_store.schema_version() == SCHEMA_VERSION


async def test_a_new_database_its_wal_and_its_folder_are_owner_only(tmp_path):
    # Transcripts and the audit log: 0644 let every user of the machine read them (issue 13, item 14).
    old_umask = os.umask(0o022)
    try:
        async with SqliteStore(tmp_path / "data" / "o.db") as s:
            await s.create_session(session())
            files = [p for p in (tmp_path / "data").iterdir()]
            assert {p.name for p in files} >= {"o.db", "o.db-wal"}
            assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o600 for p in files}
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700


async def test_a_newer_schema_refuses_to_open(tmp_path):
    async with SqliteStore(tmp_path / "o.db") as s:
        await s.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(RuntimeError, match="schema"):
        await SqliteStore(tmp_path / "o.db").open()


async def test_sessions_round_trip_and_filter_by_status(store):
    await store.create_session(session("a", "running"))
    await store.create_session(session("b", "completed"))
    assert [s.id for s in await store.list_sessions(statuses=["running"])] == ["a"]
    b = await store.get_session("b")
    b.title = "renamed"
    await store.save_session(b)
    assert (await store.get_session("b")).title == "renamed"
    await store.delete_session("a")
    with pytest.raises(NotFound):
        await store.get_session("a")


async def test_children_are_listed_by_parent_and_filter_by_status(store):
    await store.create_session(session("root", "completed"))
    await store.create_session(Session(id="a", workspace="/w", parent_id="root", status="running"))
    await store.create_session(Session(id="b", workspace="/w", parent_id="root", status="completed"))
    await store.create_session(Session(id="grandchild", workspace="/w", parent_id="a", status="running"))
    assert [s.id for s in await store.list_children("root")] == ["a", "b"]
    assert [s.id for s in await store.list_children("root", statuses=["running"])] == ["a"]
    assert [s.id for s in await store.list_children("a")] == ["grandchild"]
    assert await store.list_children("b") == []


async def test_children_are_found_through_an_index_on_sqlite(sqlite_store):
    plan = await sqlite_store.db.fetch_all("EXPLAIN QUERY PLAN SELECT id FROM sessions WHERE parent_id = ?", ("root",))
    assert any("sessions_parent" in str(row) for row in plan)


async def test_events_get_gapless_seq_under_concurrent_appends(store):
    await store.create_session(session())
    events = await asyncio.gather(
        *(store.append_event(Event(session_id="s1", seq=0, type="notice", data={"i": i})) for i in range(50))
    )
    assert sorted(e.seq for e in events) == list(range(1, 51))
    assert [e.seq for e in await store.list_events("s1", since=45)] == [46, 47, 48, 49, 50]


async def test_seq_continues_after_reopening(store_factory):
    async with store_factory() as s:
        for _ in range(3):
            await s.append_event(Event(session_id="s1", seq=0, type="notice"))
    async with store_factory() as s:
        assert (await s.append_event(Event(session_id="s1", seq=0, type="notice"))).seq == 4


async def test_two_stores_on_one_database_number_interleaved_writes_gaplessly(store_factory):
    # Two stores on one database stand for two processes (`overseer serve` and `overseer mcp`).
    async with store_factory() as here, store_factory() as there:
        for i in range(6):
            writer = (here, there)[i % 2]
            await writer.append_event(Event(session_id="s1", seq=0, type="notice", data={"i": i}))
            await writer.add_message(Message(session_id="s1", role="user", content=str(i)))
        assert [e.seq for e in await here.list_events("s1")] == list(range(1, 7))
        assert [m.idx for m in await there.list_messages("s1")] == list(range(6))
        assert await here.last_seq("s1") == await there.last_seq("s1") == 6


async def test_two_stores_on_one_database_number_concurrent_writes_gaplessly(store_factory):
    async with store_factory() as here, store_factory() as there:
        written = await asyncio.gather(
            *(
                writer.finish_tool_call(
                    ToolCallRecord(id=f"c{i}", session_id="s1", name="t", status="done"),
                    Message(session_id="s1", role="tool", content=str(i), tool_call_id=f"c{i}"),
                    event=Event(session_id="s1", seq=0, type="tool.result"),
                )
                for i in range(40)
                for writer in [(here, there)[i % 2]]
            )
        )
        assert sorted(w.event.seq for w in written) == list(range(1, 41))
        assert sorted(w.message.idx for w in written) == list(range(40))
        assert [e.seq for e in await there.list_events("s1")] == list(range(1, 41))


async def test_a_failed_finish_writes_neither_the_record_nor_the_message(sqlite_store):
    store = sqlite_store
    record = ToolCallRecord(id="c1", session_id="s1", name="t", status="running")
    await store.save_tool_call(record)
    await store.add_message(Message(session_id="s1", role="user", content="hi"))
    record.status = "done"
    clash = Message(session_id="s1", role="tool", content="ok", tool_call_id="c1")
    # The last write of the unit (its event) fails, after the record and the message were written.
    await store.db.execute("CREATE TRIGGER refuse BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'no'); END")
    with pytest.raises(sqlite3.IntegrityError):
        await store.finish_tool_call(record, clash, event=Event(session_id="s1", seq=0, type="tool.result"))
    await store.db.execute("DROP TRIGGER refuse")
    assert [r.status for r in await store.list_tool_calls("s1")] == ["running"]
    assert [m.content for m in await store.list_messages("s1")] == ["hi"]
    assert await store.list_events("s1") == []
    assert (await store.add_message(clash)).idx == 1


async def test_a_write_is_done_before_it_is_awaited_while_the_lock_is_free_and_waits_in_order_while_not(tmp_path):
    # What lets the event bus skip its guard (backend/store/ready.py); the waiting path is the old one.
    async with SqliteStore(tmp_path / "o.db") as store, SqliteStore(tmp_path / "o.db") as other:
        first = store.append_event(Event(session_id="s1", seq=0, type="notice", data={"i": 1}))
        assert is_done(first)  # nothing left to guard or wait for
        assert (await first).seq == 1
        # Another process holds SQLite's write lock: the writes wait for it, on the worker thread, in order.
        other.db._inline.execute("BEGIN IMMEDIATE")
        waiting = [store.append_event(Event(session_id="s1", seq=0, type="notice", data={"i": i})) for i in (2, 3)]
        assert not any(is_done(w) for w in waiting)
        running = [asyncio.ensure_future(w) for w in waiting]
        other.db._inline.execute("COMMIT")
        async with asyncio.timeout(10):
            events = await asyncio.gather(*running)
        assert [(e.seq, e.data["i"]) for e in events] == [(2, 2), (3, 3)]
        # A write that failed at once fails where it is awaited, as a coroutine's would.
        await store.db.execute("CREATE TRIGGER refuse BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'no'); END")
        refused = store.record_decision(
            AuditEntry(session_id="s1", tool_call_id="c1", tool_name="t", decision="allow", decided_by="policy"),
            event=Event(session_id="s1", seq=0, type="notice"),
        )
        with pytest.raises(sqlite3.IntegrityError):
            await refused
        assert await store.list_audit() == []


async def test_finishing_a_tool_call_writes_record_and_result_message_together(store):
    record = ToolCallRecord(id="c1", session_id="s1", name="mcp__x__y", status="running")
    await store.save_tool_call(record)
    record.status = "done"
    written = await store.finish_tool_call(
        record,
        Message(session_id="s1", role="tool", content="ok", tool_call_id="c1"),
        event=Event(session_id="s1", seq=0, type="tool.result"),
    )
    assert (written.message.idx, written.event.seq) == (0, 1)
    assert [e.type for e in await store.list_events("s1")] == ["tool.result"]
    assert [r.status for r in await store.list_tool_calls("s1")] == ["done"]
    assert [m.content for m in await store.list_messages("s1")] == ["ok"]


async def test_approvals_and_audit_are_listed_by_status_and_newest_audit_first(store):
    now = utcnow()
    for i, status in enumerate(["pending", "allowed"]):
        await store.save_approval(
            Approval(id=f"a{i}", session_id="s1", tool_call_id=f"c{i}", tool_name="t", status=status, expires_at=now)  # type: ignore[arg-type]
        )
    assert [a.id for a in await store.list_approvals(status="pending")] == ["a0"]
    for i in range(3):
        await store.add_audit(
            AuditEntry(session_id="s1", tool_call_id=f"c{i}", tool_name="t", decision="allow", decided_by="rule")
        )
    page = await store.list_audit(limit=2)
    assert [e.tool_call_id for e in page] == ["c2", "c1"]
    assert page[0].id is not None


# A full disk and a read-only database (issue 31, item 10): the write is refused with a reason a
# person can act on, the connection is left clean, and writes work again once the room is back.


async def test_a_write_on_a_full_disk_raises_storage_unavailable_and_writes_again_once_space_returns(tmp_path):
    from backend.domain.errors import StorageUnavailable
    from backend.testing.filesystems import fill, small_filesystem

    with small_filesystem(tmp_path / "data", megabytes=4) as data:
        async with SqliteStore(data / "o.db") as s:
            await s.create_session(session())
            filler = fill(data)
            big = Message(session_id="s1", role="user", content="x" * 1_000_000)  # the WAL must grow
            for attempt in range(2):  # on the loop's connection, then again (nothing left half-done)
                with pytest.raises(StorageUnavailable) as refused:
                    await s.add_message(big)
                assert refused.value.reason == "the disk is full", attempt
                assert "cannot rollback" not in repr(refused.value.__cause__)
            with pytest.raises(StorageUnavailable):
                await s.save_session(session().model_copy(update={"title": "x" * 1_000_000}))
            filler.unlink()
            stored = await s.add_message(big)
            assert [m.idx for m in await s.list_messages("s1")] == [stored.idx]
            assert (await s.get_session("s1")).title != "x" * 1_000_000


async def test_a_write_to_an_immutable_database_raises_storage_unavailable_saying_it_is_read_only(tmp_path):
    from backend.domain.errors import StorageUnavailable

    path = tmp_path / "o.db"
    async with SqliteStore(path) as s:
        await s.create_session(session())
    subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        async with SqliteStore(path) as s:
            assert (await s.get_session("s1")).id == "s1"  # reads still work
            for write in (
                lambda: s.create_session(session("s2")),
                lambda: s.add_message(Message(session_id="s1", role="user", content="hi")),
                lambda: s.append_event(Event(session_id="s1", seq=0, type="message")),
            ):
                with pytest.raises(StorageUnavailable) as refused:
                    await write()
                assert refused.value.reason == "the database is read-only"
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)
