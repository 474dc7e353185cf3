"""Runs on a shared Postgres are DBOS workflows: one host in this process (DBOS is one per process).

Several real hosts, kill -9 and placement across hosts: tests/cluster/test_dbos_runs_cluster.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from dbos import DBOS

from backend.domain.models import Decision
from backend.cluster.dbos_runs import QUEUE_NAME, DbosPlacement, application_version
from backend.cluster.host_watch import HostIdInUse, HostWatch
from backend.store.postgres_schema import SCHEMA_VERSION
from backend.testing.harness import only_servers, scripted_host
from backend.testing.postgres import fresh_database
from backend.testing.script import Reply, ScriptedToolCall


@pytest.fixture
def database() -> Iterator[str]:
    with fresh_database("dbos_runs") as url:
        yield url


def shell(command: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": command})])


async def workflows_of(session_id: str) -> list:
    return await DBOS.list_workflows_async(workflow_id_prefix=f"{session_id}.", load_input=False, load_output=False)


async def test_a_run_on_postgres_is_a_workflow_of_this_host_and_this_release(tmp_path: Path, database: str) -> None:
    async with scripted_host(
        tmp_path, [Reply(text="hello")], database_url=database, host_id="host-a", mcp_servers=only_servers()
    ) as h:
        assert isinstance(h.host.runner.placement, DbosPlacement)
        session = await h.start("hi")
        done = await h.host.runner.wait(session.id, timeout=60)
        assert done.status == "completed"
        [workflow] = await workflows_of(session.id)
        assert workflow.executor_id == "host-a"
        assert workflow.queue_name == QUEUE_NAME
        assert workflow.app_version == application_version()
        assert application_version().endswith(f"+schema{SCHEMA_VERSION}")


async def test_a_message_sent_while_a_run_is_placed_joins_that_run(tmp_path: Path, database: str) -> None:
    replies = [shell("echo one >> runs.txt"), Reply(text="first"), Reply(text="second")]
    async with scripted_host(
        tmp_path, replies, database_url=database, host_id="host-a", mcp_servers=only_servers("shell")
    ) as h:
        session = await h.start("first")
        approval = await h.next_approval(timeout=60)
        # The run waits for a person; a second message finds it placed and is not placed again.
        await h.host.runner.send(session.id, "second")
        await h.answer(approval, Decision(kind="allow_once"))
        done = await h.host.runner.wait(session.id, timeout=60)
        assert done.status == "completed"
        assert len(await workflows_of(session.id)) == 1
        history = await h.host.store.list_messages(session.id)
        assert history[-1].role == "assistant"  # both messages answered
        assert (h.workspace / "runs.txt").read_text() == "one\n"


async def test_a_stopped_run_ends_its_workflow_so_the_session_can_run_again(tmp_path: Path, database: str) -> None:
    replies = [shell("echo one >> runs.txt"), Reply(text="again")]
    async with scripted_host(
        tmp_path, replies, database_url=database, host_id="host-a", mcp_servers=only_servers("shell")
    ) as h:
        session = await h.start("first")
        await h.next_approval(timeout=60)
        stopped = await h.host.runner.stop(session.id)
        assert stopped.status == "stopped"
        await h.host.runner.send(session.id, "go on")
        done = await h.host.runner.wait(session.id, timeout=60)
        assert done.status == "completed"
        runs = await workflows_of(session.id)
        # The workflow records its outcome just after the run's last write: wait for it, bounded.
        for run in runs:
            handle = await DBOS.retrieve_workflow_async(run.workflow_id)
            await asyncio.wait_for(handle.get_result(polling_interval_sec=0.05), timeout=30)
        assert sorted(w.status for w in await workflows_of(session.id)) == ["SUCCESS", "SUCCESS"]


async def test_a_host_id_held_by_a_live_host_is_refused(database: str) -> None:
    live = HostWatch(url=database, host_id="host-a", queue_name=QUEUE_NAME, app_version="v")
    await live.claim()
    try:
        second = HostWatch(url=database, host_id="host-a", queue_name=QUEUE_NAME, app_version="v")
        with pytest.raises(HostIdInUse):
            await second.claim(timeout=0.2)
    finally:
        await live.aclose()


async def test_a_dead_hosts_runs_are_recovered_by_exactly_one_survivor(tmp_path: Path, database: str) -> None:
    # A run of "host-a" left pending: this host's own workflow, then made to look like host-a's.
    replies = [shell("echo one >> runs.txt"), Reply(text="done")]
    async with scripted_host(
        tmp_path, replies, database_url=database, host_id="host-b", mcp_servers=only_servers("shell")
    ) as h:
        assert h.host.runs.watch is not None
        await h.host.runs.watch.aclose()  # this host's own watcher would recover host-a's run for real
        version = application_version()
        dead_alive = HostWatch(url=database, host_id="host-a", queue_name=QUEUE_NAME, app_version=version)
        await dead_alive.claim()
        session = await h.start("first")
        await h.next_approval(timeout=60)
        [workflow] = await workflows_of(session.id)
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute(
                "UPDATE dbos.workflow_status SET executor_id = 'host-a' WHERE workflow_uuid = %s",
                (workflow.workflow_id,),
            )
        survivors = [
            HostWatch(url=database, host_id=f"survivor-{n}", queue_name=QUEUE_NAME, app_version=version)
            for n in (1, 2)
        ]
        calls: list[str] = []
        entered, gate = asyncio.Event(), asyncio.Event()

        async def recover(host: str) -> list[str]:
            calls.append(host)
            entered.set()
            await gate.wait()  # both survivors look while the first still recovers
            return [session.id]

        for survivor in survivors:
            await survivor.claim()
        try:
            # While host-a holds its lock, it is alive: nobody recovers it.
            assert [await s.recover_dead(recover) for s in survivors] == [[], []]
            await dead_alive.aclose()  # its connection closes, as a kill -9 closes it

            async def first_survivor() -> list[str]:
                # Postgres lets go of the lock once the closed connection's backend has exited.
                while not (dead := await survivors[0].recover_dead(recover)):
                    pass
                return dead

            first = asyncio.create_task(asyncio.wait_for(first_survivor(), timeout=10))
            await asyncio.wait_for(entered.wait(), timeout=10)
            assert await survivors[1].recover_dead(recover) == []
            gate.set()
            assert await first == ["host-a"]
            assert calls == ["host-a"]
        finally:
            for survivor in survivors:
                await survivor.aclose()
