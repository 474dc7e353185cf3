"""A call that gives up on its task cancels it (backend/mcp/tasks.py): `tasks/cancel` on a timeout
or a stop, never on a host going down, and never instead of the call's own outcome.

The server is tests/mcp/fixtures/tasks_server.py, a real handshake-era process: a query of
"endless" makes a task that never completes, and each `tasks/cancel` it answers is noted in its
state file. The cancel is awaited (bounded) before the call ends, so the file says it once the
call has ended: no sleeps.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from backend.mcp import McpPool, tasks
from backend.mcp.config import McpServerConfig
from backend.mcp.tasks import cancel_task, kept_while

BOUND = 30  # seconds; a bound on waits, never a timing assertion
TASKS_SERVER = Path(__file__).parent / "fixtures" / "tasks_server.py"
RESEARCH = "mcp__tasks__research"


async def ready_pool(tmp_path: Path, call_timeout: float = BOUND) -> McpPool:
    config = McpServerConfig(
        command=sys.executable,
        args=[str(TASKS_SERVER), str(tmp_path / "state.json")],
        start_timeout=BOUND,
        call_timeout=call_timeout,
    )
    pool = McpPool({"tasks": config}, log_dir=tmp_path / "logs")
    await pool.start()
    with anyio.fail_after(BOUND):
        await pool.wait_ready()
    return pool


def state(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "state.json").read_text())


async def test_a_call_that_times_out_cancels_its_task_and_still_reports_the_timeout(tmp_path: Path):
    started: list[str] = []

    async def on_task(task_id: str) -> None:
        started.append(task_id)

    pool = await ready_pool(tmp_path, call_timeout=0.5)
    try:
        with anyio.fail_after(BOUND):
            result = await pool.call(
                RESEARCH, {"query": "endless"}, workspace=tmp_path, session_id="s1", on_task=on_task
            )
    finally:
        await pool.aclose()
    assert result.is_error and "timed out after 0.5 s" in result.text
    assert state(tmp_path)["cancelled"] == started and len(started) == 1


async def test_a_call_cancelled_by_its_caller_cancels_its_task(tmp_path: Path):
    started: list[str] = []
    pool = await ready_pool(tmp_path)
    try:
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:

                async def on_task(task_id: str) -> None:
                    started.append(task_id)
                    tg.cancel_scope.cancel()  # the session is stopped while the task runs

                await pool.call(RESEARCH, {"query": "endless"}, workspace=tmp_path, session_id="s1", on_task=on_task)
    finally:
        await pool.aclose()
    assert len(started) == 1
    assert state(tmp_path)["cancelled"] == started


async def test_a_call_cancelled_while_the_host_goes_down_leaves_its_task_running(tmp_path: Path):
    started: list[str] = []
    pool = await ready_pool(tmp_path)
    try:
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:

                async def on_task(task_id: str) -> None:
                    started.append(task_id)
                    tg.cancel_scope.cancel()

                with kept_while(lambda: True):
                    await pool.call(
                        RESEARCH, {"query": "endless"}, workspace=tmp_path, session_id="s1", on_task=on_task
                    )
    finally:
        await pool.aclose()
    assert len(started) == 1
    assert state(tmp_path)["cancelled"] == []


async def test_a_resumed_task_whose_collection_times_out_is_cancelled(tmp_path: Path):
    pool = await ready_pool(tmp_path)
    try:
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                started: list[str] = []

                async def on_task(task_id: str) -> None:
                    started.append(task_id)
                    tg.cancel_scope.cancel()

                with kept_while(lambda: True):
                    await pool.call(
                        RESEARCH, {"query": "endless"}, workspace=tmp_path, session_id="s1", on_task=on_task
                    )
            result = await pool.call(
                RESEARCH, {"query": "endless"}, workspace=tmp_path, session_id="s1", timeout=0.5,
                resume_task=started[0],
            )
    finally:
        await pool.aclose()
    assert result.is_error and "timed out" in result.text
    assert state(tmp_path)["cancelled"] == started


async def test_a_cancel_the_server_never_answers_holds_the_timeout_up_only_for_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(tasks, "CANCEL_BOUND_S", 0.2)
    pool = await ready_pool(tmp_path, call_timeout=0.5)
    try:
        with anyio.fail_after(BOUND):
            result = await pool.call(RESEARCH, {"query": "stubborn"}, workspace=tmp_path, session_id="s1")
    finally:
        await pool.aclose()
    assert result.is_error and "timed out after 0.5 s" in result.text  # the call's own outcome
    assert state(tmp_path)["cancelled"] == []


async def test_a_cancel_the_server_refuses_is_not_an_error_of_the_caller(tmp_path: Path):
    args = [str(TASKS_SERVER), str(tmp_path / "state.json")]
    with anyio.fail_after(BOUND):
        async with Client(stdio_client(StdioServerParameters(command=sys.executable, args=args))) as client:
            acknowledged = await cancel_task(client, "no-such-task")
    assert acknowledged is False
