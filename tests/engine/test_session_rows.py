"""The session row's writes (backend/engine/session_rows.py) on a shared Postgres: a host that
runs a session decides each write on the row as stored, so a person's edit made through another
host survives the run's next status write (issue 20)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.domain.session_options import SessionOptions
from backend.domain.models import Decision
from backend.engine.events import EventBus
from backend.engine.session_rows import SessionRows
from backend.store.postgres import PostgresStore
from backend.testing.harness import only_servers, scripted_host
from backend.testing.postgres import fresh_database
from backend.testing.script import Reply, ScriptedToolCall


@pytest.fixture
def database() -> Iterator[str]:
    with fresh_database("session_rows") as url:
        yield url


async def test_a_rename_through_another_host_survives_the_running_hosts_next_status_writes(
    tmp_path: Path, database: str
) -> None:
    shell = Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "echo hi"})])
    async with scripted_host(
        tmp_path, [shell, Reply(text="done")], database_url=database, host_id="host-a", mcp_servers=only_servers("shell")
    ) as a:
        session = await a.start("run a command", SessionOptions(title="before"))
        approval = await a.next_approval(timeout=60)  # host A has written "waiting_approval"
        async with PostgresStore(database, max_connections=2) as other_store:
            other_host = SessionRows(store=other_store, bus=EventBus(other_store))
            renamed = await other_host.edit(session.id, lambda s: {"title": "after"})
        assert renamed.title == "after" and renamed.status == "waiting_approval"

        # Host A now writes "running" (the approval closed), then "completed".
        await a.answer(approval, Decision(kind="allow_once"))
        done = await a.host.runner.wait(session.id, timeout=60)

        assert done.status == "completed"
        assert done.title == "after"
        assert (await a.host.store.get_session(session.id)).title == "after"
