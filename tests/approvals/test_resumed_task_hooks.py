"""A task collected after a restart (ToolGate.resume_task, backend/approvals/gate_running.py) ends
as any call's result does: through the tool hooks, the PostToolUse hooks and the result-text
detector before the model reads it; a stop while it is collected ends it as stopped and cancels
the task on its server.

Real store, bus, broker, gate, configured hooks (a real command) and pool; the server is
tests/mcp/fixtures/tasks_server.py, which keeps its tasks in a file, as a server whose tasks
outlive a connection does. No sleeps: every wait is bounded.
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
from backend.approvals.tool_hooks import ToolHooks
from backend.domain.hook_config import HooksConfig
from backend.domain.models import Message, ToolCallRequest
from backend.domain.tools import ToolResult
from backend.engine.events import EventBus
from backend.engine.settle import settle_open_calls
from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.rules.grammar import RuleSet
from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine, ToolCallView
from backend.store.sqlite import SqliteStore

BOUND = 30  # seconds; a bound on waits, never a timing assertion
TASKS_SERVER = Path(__file__).parents[1] / "mcp" / "fixtures" / "tasks_server.py"
RESEARCH = "mcp__tasks__research"
TOKEN = "Zq8xK2pL9vR4mW7tB3nY"  # random-looking: the result-text detector remembers it

CONTEXT_HOOK = """import json, sys
event = json.load(sys.stdin)
output = event["tool_response"]["output"]
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                         "additionalContext": "checked by the hook: " + output}}))
"""


class QuietSessions:
    async def approval_waiting(self, session_id: str, delta: Any) -> None:
        pass

    async def add_session_rules(self, session_id: str, rules: Any) -> None:
        pass


class Stamp(ToolHooks):
    """A tool hook that marks every result it sees."""

    async def after_tool(self, *, session_id: str, call: ToolCallView, result: ToolResult) -> ToolResult:
        return result.model_copy(update={"text": result.text + " [stamped]"})


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
async def host(tmp_path: Path, *, hooks: HooksConfig | None = None) -> AsyncIterator[tuple[ToolGate, TaskSignal]]:
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
            hooks=Stamp(),
            hook_config=hooks,
        )
        yield gate, tools
    finally:
        await pool.aclose()
        await store.close()


async def leave_running(tmp_path: Path, session: GateSession, query: str) -> list[Message]:
    """A host that goes down while the call runs as a task; the transcript it leaves."""
    async with host(tmp_path) as (gate, tools):
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                tg.start_soon(gate.run, session, GateCall(id="c1", name=RESEARCH, arguments={"query": query}))
                await tools.kept.wait()
                gate.shutting_down = True
                tg.cancel_scope.cancel()
    call = ToolCallRequest(id="c1", name=RESEARCH, arguments={"query": query})
    return [Message(session_id=session.session_id, role="assistant", tool_calls=[call])]


def server_state(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / "state.json").read_text())


async def test_a_resumed_tasks_result_reaches_the_model_through_the_post_tool_use_hooks(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "context_hook.py"
    script.write_text(CONTEXT_HOOK)
    hooks = HooksConfig.model_validate(
        {"PostToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": f"{sys.executable} {script}"}]}]}
    )
    session = GateSession(session_id="s1", workspace=workspace)
    history = await leave_running(tmp_path, session, TOKEN)
    assert server_state(tmp_path)["cancelled"] == []  # a shutdown leaves the task to the next host

    async with host(tmp_path, hooks=hooks) as (gate, _):
        with anyio.fail_after(BOUND):
            [settled] = await settle_open_calls(store=gate.store, gate=gate, session=session, history=history)
        [record] = await gate.store.list_tool_calls("s1")
        [message] = [m for m in await gate.store.list_messages("s1") if m.role == "tool"]
    # The tool hook, then the PostToolUse hook (which saw the tool hook's result), as for any call.
    found = f"findings on {TOKEN} [stamped]"
    expected = f"{found}\n\n[PostToolUse hook context: checked by the hook: {found}]"
    assert settled.text == expected
    assert message.content == expected  # what the model reads next
    assert record.status == "done"
    # The result-text detector knows it: a later call carrying this text is recognised.
    assert gate.result_taint.find("s1", {"body": f"the token is {TOKEN}"})


async def test_a_stop_while_a_resumed_task_is_collected_stops_the_call_and_cancels_the_task(tmp_path: Path):
    session = GateSession(session_id="s1", workspace=tmp_path)
    history = await leave_running(tmp_path, session, "endless")
    async with host(tmp_path) as (gate, _):
        feed = gate.bus.subscribe("s1")
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: settle_open_calls(store=gate.store, gate=gate, session=session, history=history))
                while (await feed.get()).type != "tool.progress":  # the collection is under way
                    pass
                tg.cancel_scope.cancel()  # the person stops the session
        [record] = await gate.store.list_tool_calls("s1")
    assert record.status == "stopped"
    assert server_state(tmp_path)["cancelled"] == [record.task_id]
