"""Tools served as tasks on a 2026-07-28 connection (backend/mcp/task_extension.py): the tasks
extension, SEP-2663 (`io.modelcontextprotocol/tasks`).

The server is tests/mcp/fixtures/tasks_extension_server.py, a real SDK server of that era run as
a stdio process: it answers `research` with a task handle to a client that declared the
extension, and refuses it (-32021) to one that did not. It keeps its tasks, the `tools/call`s it
answered and the tasks it was asked to cancel in a state file. No sleeps: waits are bounded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY

from backend.domain.tools import ToolResult
from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.mcp.elicitation import Elicitation
from backend.mcp.tasks import kept_while

BOUND = 30  # seconds; a bound on waits, never a timing assertion
SERVER = Path(__file__).parent / "fixtures" / "tasks_extension_server.py"
RESEARCH = "mcp__tasks__research"


async def ready_pool(tmp_path: Path, call_timeout: float = BOUND) -> McpPool:
    config = McpServerConfig(
        command=sys.executable,
        args=[str(SERVER), str(tmp_path / "state.json")],
        start_timeout=BOUND,
        call_timeout=call_timeout,
    )
    pool = McpPool({"tasks": config}, log_dir=tmp_path / "logs")
    await pool.start()
    with anyio.fail_after(BOUND):
        await pool.wait_ready()
    return pool


def state(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / "state.json").read_text())


async def research(pool: McpPool, tmp_path: Path, query: str, **kwargs: Any) -> ToolResult:
    with anyio.fail_after(BOUND):
        return await pool.call(RESEARCH, {"query": query}, workspace=tmp_path, session_id="s1", **kwargs)


async def test_a_server_that_needs_the_extension_refuses_a_client_that_does_not_declare_it(tmp_path: Path):
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), str(tmp_path / "state.json")])
    with anyio.fail_after(BOUND):
        async with Client(stdio_client(params), cache=None) as client:
            assert client.protocol_version == "2026-07-28"
            try:
                await client.call_tool("research", {"query": "tides"})
            except MCPError as exc:
                refused = exc
    assert refused.code == MISSING_REQUIRED_CLIENT_CAPABILITY


async def test_a_tool_the_server_runs_as_a_task_returns_the_tasks_result_with_its_status_as_progress(tmp_path: Path):
    reports: list[tuple[float, str | None]] = []
    started: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, message))

    async def on_task(task_id: str) -> None:
        started.append(task_id)

    pool = await ready_pool(tmp_path)
    try:
        result = await research(pool, tmp_path, "tides", on_progress=on_progress, on_task=on_task)
        plain = await pool.call("mcp__tasks__echo", {"text": "hi"}, workspace=tmp_path, session_id="s1")
    finally:
        await pool.aclose()
    assert not result.is_error, result.text
    assert result.text == "findings on tides"
    assert plain.text == "echo: hi"  # a result that is no task is read as ever
    assert list(state(tmp_path)["tasks"]) == started  # the id the host keeps with the call
    assert reports == [
        (0, "task working: step 1 of 3"),
        (1, "task working: step 2 of 3"),
        (2, "task working: step 3 of 3"),
        (3, "task completed"),
    ]


async def test_after_a_restart_the_task_is_collected_through_the_extension_not_called_again(tmp_path: Path):
    started: list[str] = []
    first = await ready_pool(tmp_path)
    try:
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:

                async def on_task(task_id: str) -> None:
                    started.append(task_id)
                    tg.cancel_scope.cancel()  # the host dies before the task ends

                with kept_while(lambda: True):
                    await research(first, tmp_path, "tides", on_task=on_task)
    finally:
        await first.aclose()
    assert len(started) == 1 and state(tmp_path)["cancelled"] == []

    second = await ready_pool(tmp_path)
    try:
        result = await research(second, tmp_path, "tides", resume_task=started[0])
    finally:
        await second.aclose()
    assert result.text == "findings on tides"
    assert state(tmp_path)["calls"] == 1


async def test_a_call_that_times_out_cancels_its_extension_task(tmp_path: Path):
    started: list[str] = []

    async def on_task(task_id: str) -> None:
        started.append(task_id)

    pool = await ready_pool(tmp_path, call_timeout=0.5)
    try:
        result = await research(pool, tmp_path, "endless", on_task=on_task)
    finally:
        await pool.aclose()
    assert result.is_error and "timed out after 0.5 s" in result.text
    assert len(started) == 1 and state(tmp_path)["cancelled"] == started


async def test_a_task_that_needs_input_has_its_question_asked_in_the_calls_session_and_answered(tmp_path: Path):
    asked: list[Elicitation] = []

    async def person(question: Elicitation) -> mcp_types.ElicitResult:
        asked.append(question)
        return mcp_types.ElicitResult(action="accept", content={"sea": "Baltic"})

    pool = await ready_pool(tmp_path)
    pool.elicitations.handler = person
    try:
        result = await research(pool, tmp_path, "ask", call_id="c1")
    finally:
        await pool.aclose()
    assert result.text == "findings on the Baltic"
    assert [(q.call.session_id, q.call.call_id, q.message) for q in asked] == [("s1", "c1", "Which sea?")]
    assert state(tmp_path)["cancelled"] == []


async def test_a_declined_question_of_a_task_is_passed_on_and_the_task_ends_as_its_server_decides(
    tmp_path: Path,
):
    asked: list[Elicitation] = []

    async def person(question: Elicitation) -> mcp_types.ElicitResult:
        asked.append(question)
        return mcp_types.ElicitResult(action="decline")

    pool = await ready_pool(tmp_path)
    pool.elicitations.handler = person
    try:
        result = await research(pool, tmp_path, "ask")
    finally:
        await pool.aclose()
    assert result.is_error and result.text.startswith("no sea was chosen")
    assert len(asked) == 1  # asked once, not again at every poll


async def test_a_failed_task_is_the_calls_failure_with_the_servers_error(tmp_path: Path):
    pool = await ready_pool(tmp_path)
    try:
        result = await research(pool, tmp_path, "broken")
    finally:
        await pool.aclose()
    assert result.is_error and "the archive is unreachable" in result.text
