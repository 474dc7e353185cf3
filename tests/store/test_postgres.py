"""What only the Postgres store has: migrations under concurrency, its catalog, its errors."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from backend.domain.models import AuditEntry, Event, Message, Session, ToolCallRecord
from backend.store.postgres import PostgresStore, SchemaTooNew
from backend.store.postgres_schema import SCHEMA_VERSION


async def test_hosts_starting_together_on_an_empty_database_migrate_it_once(empty_postgres_database):
    stores = [PostgresStore(empty_postgres_database, max_connections=2) for _ in range(4)]
    await asyncio.gather(*(s.open() for s in stores))
    try:
        assert [await s.schema_version() for s in stores] == [SCHEMA_VERSION] * 4
        await stores[0].append_event(Event(session_id="s1", seq=0, type="notice"))
        assert [e.seq for e in await stores[3].list_events("s1")] == [1]
    finally:
        await asyncio.gather(*(s.close() for s in stores))


async def test_a_store_closed_and_opened_again_works(postgres_store):
    await postgres_store.close()
    await postgres_store.open()
    assert (await postgres_store.append_event(Event(session_id="s1", seq=0, type="notice"))).seq == 1


async def test_an_unreachable_server_fails_the_open_at_once_saying_why():
    store = PostgresStore("postgresql://postgres@127.0.0.1:1/none", max_connections=1)
    with pytest.raises(psycopg.OperationalError, match="refused"):
        await store.open()
    with pytest.raises(RuntimeError, match="not open"):
        store.pool


async def test_a_newer_postgres_schema_refuses_to_open(postgres_store):
    await postgres_store._execute("UPDATE overseer_schema SET version = %s", (SCHEMA_VERSION + 1,))
    with pytest.raises(SchemaTooNew, match="schema"):
        await PostgresStore(postgres_store.url, max_connections=1).open()


async def test_reopening_a_migrated_database_changes_nothing(postgres_store):
    await postgres_store.create_session(Session(id="kept", workspace="/w"))
    async with PostgresStore(postgres_store.url, max_connections=1) as again:
        assert await again.schema_version() == SCHEMA_VERSION
        assert (await again.get_session("kept")).id == "kept"


async def test_children_schedules_and_approvals_have_their_indexes(postgres_store):
    rows = await postgres_store._fetch_all("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")
    assert {"sessions_parent", "schedules_next_run", "approvals_status", "workflow_runs_workflow"} <= {r[0] for r in rows}


async def test_a_failed_finish_on_postgres_writes_neither_the_record_nor_the_message(postgres_store):
    store = postgres_store
    record = ToolCallRecord(id="c1", session_id="s1", name="t", status="running")
    await store.save_tool_call(record)
    await store.add_message(Message(session_id="s1", role="user", content="hi"))
    record.status = "done"
    clash = Message(session_id="s1", role="tool", content="ok", tool_call_id="c1")
    # The last write of the unit (its event) fails, after the record and the message were written.
    await store._execute(
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no'; END $$"
    )
    await store._execute("CREATE TRIGGER refuse BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse()")
    with pytest.raises(psycopg.errors.RaiseException):
        await store.finish_tool_call(record, clash, event=Event(session_id="s1", seq=0, type="tool.result"))
    await store._execute("DROP TRIGGER refuse ON events")
    assert [r.status for r in await store.list_tool_calls("s1")] == ["running"]
    assert [m.content for m in await store.list_messages("s1")] == ["hi"]
    assert await store.list_events("s1") == []
    assert (await store.add_message(clash)).idx == 1


async def test_audit_ids_are_the_databases_and_newest_come_first(postgres_store):
    def entry(session_id: str) -> AuditEntry:
        return AuditEntry(session_id=session_id, tool_call_id="c", tool_name="t", decision="allow", decided_by="rule")

    ids = [(await postgres_store.add_audit(entry(s))).id for s in ("s1", "s2", "s1")]
    assert ids[0] is not None and ids == sorted(ids)
    assert [e.id for e in await postgres_store.list_audit(session_id="s1")] == [ids[2], ids[0]]
