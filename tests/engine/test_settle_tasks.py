"""Settling after a restart (backend/engine/settle.py) a call an MCP server ran as a task.

The gate keeps the task's id on the call's row as soon as the server created it; the next host
settles the still-running call by collecting the task's result, not by calling the tool again
nor by calling it interrupted. Real store, bus, broker, gate and pool; the server is
tests/mcp/fixtures/tasks_server.py, which keeps its tasks (and a count of its `tools/call`s) in a
file, as a server whose tasks outlive a connection does. No sleeps: every wait is bounded.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from backend.approvals.broker import ApprovalBroker
from backend.approvals.gate import GateCall, GateSession, ToolGate
from backend.domain.models import Message, ToolCallRequest
from backend.engine.events import EventBus
from backend.engine.settle import settle_open_calls
from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.rules.grammar import RuleSet
from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine
from backend.store.sqlite import SqliteStore

BOUND = 30  # seconds; a bound on waits, never a timing assertion
TASKS_SERVER = Path(__file__).parents[1] / "mcp" / "fixtures" / "tasks_server.py"
RESEARCH = "mcp__tasks__research"
ARGUMENTS = {"query": "tides"}


class QuietSessions:
    async def approval_waiting(self, session_id: str, delta: Any) -> None:
        pass

    async def add_session_rules(self, session_id: str, rules: Any) -> None:
        pass


class TaskSignal:
    """The pool, saying when a call's task id has been handed to the gate (and kept)."""

    def __init__(self, pool: McpPool) -> None:
        self.pool = pool
        self.kept = anyio.Event()

    def tool(self, name: str) -> Any:
        return self.pool.tool(name)

    def tools(self) -> Any:
        return self.pool.tools()

    async def call(self, name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        keep = kwargs.pop("on_task", None)

        async def on_task(task_id: str) -> None:
            if keep is not None:
                await keep(task_id)
            self.kept.set()

        return await self.pool.call(name, arguments, on_task=on_task, **kwargs)


@asynccontextmanager
async def host(tmp_path: Path) -> AsyncIterator[tuple[ToolGate, TaskSignal]]:
    """One life of a host: a pool running the tasks server, and a gate over the shared store."""
    config = McpServerConfig(
        command=sys.executable, args=[str(TASKS_SERVER), str(tmp_path / "state.json")], start_timeout=BOUND
    )
    pool = McpPool({"tasks": config}, log_dir=tmp_path / "logs")
    store = SqliteStore(tmp_path / "overseer.db")
    await store.open()
    await pool.start()
    try:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
        bus = EventBus(store)
        tools = TaskSignal(pool)
        gate = ToolGate(
            policy=PolicyEngine(RuleSet.from_config({"allow": [RESEARCH]}, source="user"), DEFAULT_POLICIES),
            broker=ApprovalBroker(store, bus, timeout=600),
            store=store,
            bus=bus,
            tools=tools,
            sessions=QuietSessions(),
        )
        yield gate, tools
    finally:
        await pool.aclose()
        await store.close()


async def test_a_call_running_as_a_task_at_a_restart_has_its_result_collected_not_run_again(tmp_path: Path):
    session = GateSession(session_id="s1", workspace=tmp_path)
    async with host(tmp_path) as (gate, tools):
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                tg.start_soon(gate.run, session, GateCall(id="c1", name=RESEARCH, arguments=ARGUMENTS))
                await tools.kept.wait()
                gate.shutting_down = True  # the host goes down with the task still running
                tg.cancel_scope.cancel()
        [left] = await gate.store.list_tool_calls("s1")
    assert left.status == "running" and left.task_id is not None

    history = [
        Message(
            session_id="s1", role="assistant", tool_calls=[ToolCallRequest(id="c1", name=RESEARCH, arguments=ARGUMENTS)]
        )
    ]
    async with host(tmp_path) as (gate, _):
        feed = gate.bus.subscribe("s1")
        with anyio.fail_after(BOUND):
            [settled] = await settle_open_calls(store=gate.store, gate=gate, session=session, history=history)
        [record] = await gate.store.list_tool_calls("s1")
        shown = [event.data for event in feed.drain() if event.type == "tool.progress"]
    assert settled.text == "findings on tides"
    assert record.status == "done" and record.result == "findings on tides"
    assert json.loads((tmp_path / "state.json").read_text())["calls"] == 1
    # The tool card follows the collected task's status, as it follows any running tool's progress.
    assert shown and all(data["id"] == "c1" for data in shown)
    assert any(data["message"].startswith("task working: step ") for data in shown)
    assert shown[-1]["message"] == "task completed"
