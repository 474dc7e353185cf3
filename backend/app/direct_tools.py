"""DirectTools: a client's direct tool calls through the gate (the gateway's `--expose-tools`).

An MCP client may call the host's tools itself, with no agent in between. Such a call is a tool
call like a model's: it passes the same PolicyEngine, an `ask` waits in the ApprovalBroker for an
answer (on the dashboard, or the gateway's `answer_approval`), the decision is audited before the
tool runs, and the tool runs on the shared pool. Calls are recorded in one session per caller and
client (origin "mcp"), so they show on the dashboard with their approvals, and a transcript of
call and result stays valid. What the client is told while a call waits or runs comes back as
progress notes; turning them (and the result) into MCP messages is the gateway's.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable
from typing import Any, Protocol

import anyio

from backend.app.sessions import SessionService
from backend.approvals.gate import GateCall, GateSession, ToolGate
from backend.auth import Principal
from backend.config import Settings
from backend.domain.models import Event, Message, ToolCallRequest
from backend.domain.session_options import SessionOptions
from backend.domain.tools import ToolInfo, ToolResult, split_tool_name
from backend.engine.events import EventBus
from backend.engine.runner import SessionRunner
from backend.mcp.pool import McpPool
from backend.modes.registry import ModeRegistry
from backend.store.base import Store

log = logging.getLogger(__name__)

READY_TIMEOUT = 30.0
"""How long a listing waits for the pool's servers to start (they start in the background)."""
PROGRESS_DRAIN = 5.0
"""Seconds a finished call waits for its last progress notes to be delivered."""
MODE = "agent"
"""The mode whose policies a direct call is judged by, as a main-agent session's would be."""


class ProgressNote(Protocol):
    """Tells the calling client how its call goes: `progress` (0 while it waits for an approval),
    what is happening, and the total when the tool gave one."""

    def __call__(self, progress: float, message: str, total: float | None = None) -> Awaitable[None]: ...


class DirectTools:
    """A client's direct tool calls through the gate, each recorded in its caller's session."""

    def __init__(
        self,
        *,
        settings: Settings,
        pool: McpPool,
        store: Store,
        bus: EventBus,
        gate: ToolGate,
        runner: SessionRunner,
        modes: ModeRegistry,
        sessions: SessionService,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._store = store
        self._bus = bus
        self._gate = gate
        self._runner = runner
        self._modes = modes
        self._sessions = sessions
        self._gate_sessions: dict[tuple[str, str], GateSession] = {}
        self._lock = asyncio.Lock()

    async def tools(self) -> list[ToolInfo]:
        """The pool's tools, once its servers are up (or READY_TIMEOUT has passed: then those that are)."""
        await self._settled()
        return self._pool.tools()

    async def knows(self, name: str) -> bool:
        """Whether `name` is a pool tool; a call may come before the pool's servers are up."""
        if self._pool.tool(name) is not None:
            return True
        if split_tool_name(name) is None:
            return False
        await self._settled()
        return self._pool.tool(name) is not None

    async def _settled(self) -> None:
        try:
            await self._pool.wait_ready(timeout=READY_TIMEOUT)
        except TimeoutError:  # offer what is up; a slow server's tools come in a later listing
            log.warning(
                "MCP servers still starting after %.0f s; exposing the tools that are ready", READY_TIMEOUT
            )

    async def call(
        self, name: str, arguments: dict[str, Any], *, caller: Principal, client: str, progress: ProgressNote
    ) -> ToolResult:
        """Record the call in the caller's session, then hand it to the gate (the only road to a tool).

        While it waits for an approval, `progress` says which one, so a person can find it on the
        dashboard; once it runs, the tool's own progress reports are passed on. Progress is best
        effort: a note that cannot be delivered does not fail the call.
        """
        session = await self._session_for(caller, client)
        call_id = f"mcpgw_{uuid.uuid4().hex[:24]}"
        asked = await self._store.add_message(
            Message(
                session_id=session.session_id,
                role="assistant",
                tool_calls=[ToolCallRequest(id=call_id, name=name, arguments=arguments)],
            )
        )
        await self._bus.publish(session.session_id, "message", asked.model_dump(mode="json"))
        events = self._bus.subscribe(session.session_id)

        async def tell(event: Event) -> None:
            note = progress_note(event, call_id=call_id, name=name)
            if note is None:
                return
            try:
                await progress(*note)
            except Exception as exc:  # noqa: BLE001 - progress is best effort
                log.debug("progress not delivered: %s", exc)

        try:
            async with anyio.create_task_group() as tg:

                async def follow() -> None:
                    async for event in events:
                        await tell(event)

                tg.start_soon(follow)
                result = await self._gate.run(session, GateCall(id=call_id, name=name, arguments=arguments))
                # The tool's last reports may still be in the feed (the result is recorded without
                # a loop turning): pass them on before the result, then stop following. A client
                # that stopped reading does not hold the result up for long.
                self._bus.unsubscribe(events)
                tg.cancel_scope.deadline = anyio.current_time() + PROGRESS_DRAIN
        finally:
            self._bus.unsubscribe(events)
        return result

    async def _session_for(self, caller: Principal, client: str) -> GateSession:
        key = (f"{caller.kind}:{caller.name}", client)
        async with self._lock:
            found = self._gate_sessions.get(key)
            if found is None:
                mode = self._modes.get(MODE)
                created = await self._sessions.create(
                    options=SessionOptions(title=f"Tools called from {client} ({caller.name})", origin="mcp")
                )
                found = GateSession(
                    session_id=created.session.id,
                    workspace=self._settings.resolved_workspace,
                    mode=mode.name,
                    mode_policies=dict(mode.policies),
                    fence=self._runner.fence_for(None),  # main's session: the others' folders stay closed
                )
                self._gate_sessions[key] = found
            return found


def progress_note(event: Event, *, call_id: str, name: str) -> tuple[float, str, float | None] | None:
    """What an event of the caller's session tells the client about call `call_id`, if anything."""
    data = event.data
    if event.type == "approval.requested" and data.get("tool_call_id") == call_id:
        waiting = (
            f"waiting for approval of {name} (approval {data.get('id')}): "
            "answer it on the Overseer dashboard or with answer_approval"
        )
        return 0.0, waiting, None
    if event.type == "tool.progress" and data.get("id") == call_id:
        total = data.get("total")
        return (
            float(data.get("progress") or 0),
            data.get("message") or f"{name} is working",
            float(total) if isinstance(total, (int, float)) else None,
        )
    return None
