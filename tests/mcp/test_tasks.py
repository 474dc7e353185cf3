"""Tools that must run as tasks (backend/mcp/tasks.py), against a real handshake-era process.

tests/mcp/fixtures/tasks_server.py lists `research` with `execution.taskSupport: "required"`
(as the reference server everything lists `simulate-research-query`): a plain call is refused.
Its tasks report "working" with a step message for three polls, then "completed", and it keeps
its tasks and the count of `tools/call`s it answered in a state file. No sleeps: waits are bounded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from backend.domain.tools import ToolResult
from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.mcp.tasks import call_as_task, kept_while, task_support

BOUND = 30  # seconds; a bound on waits, never a timing assertion
TASKS_SERVER = Path(__file__).parent / "fixtures" / "tasks_server.py"


async def ready_pool(tmp_path: Path) -> McpPool:
    config = McpServerConfig(
        command=sys.executable, args=[str(TASKS_SERVER), str(tmp_path / "state.json")], start_timeout=BOUND
    )
    pool = McpPool({"tasks": config}, log_dir=tmp_path / "logs")
    await pool.start()
    with anyio.fail_after(BOUND):
        await pool.wait_ready()
    return pool


def server_calls(tmp_path: Path) -> int:
    return json.loads((tmp_path / "state.json").read_text())["calls"]


async def test_a_tool_that_requires_a_task_is_called_as_one_and_returns_the_tasks_result(tmp_path: Path):
    pool = await ready_pool(tmp_path)
    try:
        with anyio.fail_after(BOUND):
            result = await pool.call(
                "mcp__tasks__research", {"query": "tides"}, workspace=tmp_path, session_id="s1"
            )
    finally:
        await pool.aclose()
    assert not result.is_error, result.text
    assert result.text == "findings on tides"
    assert server_calls(tmp_path) == 1  # one task-augmented call, not a refused plain one first


async def test_a_running_tasks_status_is_reported_as_the_calls_progress(tmp_path: Path):
    reports: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, message))

    pool = await ready_pool(tmp_path)
    try:
        with anyio.fail_after(BOUND):
            await pool.call(
                "mcp__tasks__research",
                {"query": "q"},
                workspace=tmp_path,
                session_id="s1",
                on_progress=on_progress,
            )
    finally:
        await pool.aclose()
    assert reports == [
        (0, "task working: step 1 of 3"),
        (1, "task working: step 2 of 3"),
        (2, "task working: step 3 of 3"),
        (3, "task completed"),
    ]


async def test_a_tool_whose_task_support_is_optional_stays_a_plain_call(tmp_path: Path):
    pool = await ready_pool(tmp_path)
    try:
        with anyio.fail_after(BOUND):
            result = await pool.call("mcp__tasks__echo", {"text": "hi"}, workspace=tmp_path, session_id="s1")
    finally:
        await pool.aclose()
    assert result.text == "echo: hi"


async def test_the_listing_says_which_tools_must_run_as_tasks(tmp_path: Path):
    args = [str(TASKS_SERVER), str(tmp_path / "state.json")]
    params = StdioServerParameters(command=sys.executable, args=args)
    with anyio.fail_after(BOUND):
        async with Client(stdio_client(params)) as client:
            listed = (await client.list_tools()).tools
            result = await call_as_task(client, "research", {"query": "x"}, meta=None)
    assert {tool.name: task_support(tool) for tool in listed} == {"research": "required", "echo": "optional"}
    assert result.content[0].text == "findings on x"


async def test_after_a_restart_a_stored_task_id_fetches_the_result_without_calling_the_tool_again(
    tmp_path: Path,
):
    task_ids: list[str] = []
    first = await ready_pool(tmp_path)
    try:
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:

                async def started(task_id: str) -> None:
                    task_ids.append(task_id)  # what the host keeps with the call
                    tg.cancel_scope.cancel()  # and then it dies, before the task ends

                with kept_while(lambda: True):  # the host is going down: the task is left running
                    await pool_call(first, {"query": "tides"}, tmp_path, on_task=started)
    finally:
        await first.aclose()
    assert len(task_ids) == 1
    assert json.loads((tmp_path / "state.json").read_text())["cancelled"] == []

    second = await ready_pool(tmp_path)  # the host restarted: a new pool, a new server process
    try:
        with anyio.fail_after(BOUND):
            result = await pool_call(second, {"query": "tides"}, tmp_path, resume_task=task_ids[0])
    finally:
        await second.aclose()
    assert not result.is_error, result.text
    assert result.text == "findings on tides"
    assert server_calls(tmp_path) == 1


async def test_a_task_the_server_no_longer_knows_is_an_error_and_never_a_new_call(tmp_path: Path):
    pool = await ready_pool(tmp_path)
    try:
        with anyio.fail_after(BOUND):
            result = await pool_call(pool, {"query": "tides"}, tmp_path, resume_task="forgotten")
    finally:
        await pool.aclose()
    assert result.is_error
    assert not (tmp_path / "state.json").exists() or server_calls(tmp_path) == 0


async def pool_call(pool: McpPool, arguments: dict[str, str], tmp_path: Path, **kwargs: Any) -> ToolResult:
    return await pool.call("mcp__tasks__research", arguments, workspace=tmp_path, session_id="s1", **kwargs)
