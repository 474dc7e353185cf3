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

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.mcp.tasks import call_as_task, task_support

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
