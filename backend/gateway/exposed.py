"""`--expose-tools`: the host's MCP tools, re-exported to the client through the gate.

A client's call is a tool call like a model's: it passes the same PolicyEngine, an `ask` waits
in the ApprovalBroker for an answer on the dashboard (or `answer_approval`), the decision is
audited before the tool runs, and the tool runs on the shared pool. Calls are recorded in one
session per caller and client (origin "mcp"), so they show on the dashboard with their
approvals, and a transcript of call and result stays valid.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable
from typing import Any, Protocol

import anyio
import mcp_types as wire

from backend.auth import Principal
from backend.domain.models import Message, ToolCallRequest
from backend.domain.tools import ToolInfo, ToolResult, split_tool_name
from backend.app.host import Host
from backend.approvals.gate import GateCall, GateSession

log = logging.getLogger(__name__)

class Reporter(Protocol):
    """Sends the calling client a progress notification (the MCP `progressToken` it gave)."""

    def __call__(self, progress: float, message: str, total: float | None = None) -> Awaitable[None]: ...

READY_TIMEOUT = 30.0
"""How long `tools/list` waits for the pool's servers to start (they start in the background)."""
PROGRESS_DRAIN = 5.0
"""Seconds a finished call waits for its last progress reports to reach the client."""


def tool_listing(info: ToolInfo) -> wire.Tool:
    """A pool tool as the client sees it: its full name, schema and hints."""
    hints = info.annotations.model_dump(exclude_none=True)
    return wire.Tool(
        name=info.name,
        title=hints.pop("title", None),
        description=f"[Overseer, gated by its approval policy] {info.description}",
        input_schema=info.input_schema,
        annotations=wire.ToolAnnotations(
            read_only_hint=hints.get("readOnlyHint"),
            destructive_hint=hints.get("destructiveHint"),
            idempotent_hint=hints.get("idempotentHint"),
            open_world_hint=hints.get("openWorldHint"),
        ),
    )


def call_result(result: ToolResult) -> wire.CallToolResult:
    """The gate's result for the client: its text (capped by the host) and images.

    Not the tool's own structured content: that would bypass the host's output cap, and some
    clients show a model only the structured part.
    """
    content: list[wire.ContentBlock] = [wire.TextContent(type="text", text=result.text)]
    for image in result.images:
        content.append(wire.ImageContent(type="image", data=image["data"], mime_type=image["mime_type"]))
    return wire.CallToolResult(content=content, is_error=result.is_error)


class ExposedTools:
    """Lists the pool's tools and runs a client's calls through the host's gate."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self._sessions: dict[tuple[str, str], GateSession] = {}
        self._lock = asyncio.Lock()

    async def listing(self) -> list[wire.Tool]:
        await self._settled()
        return [tool_listing(t) for t in self.host.pool.tools()]

    async def knows(self, name: str) -> bool:
        """Whether `name` is a pool tool; a call may come before the pool's servers are up."""
        if self.host.pool.tool(name) is not None:
            return True
        if split_tool_name(name) is None:
            return False
        await self._settled()
        return self.host.pool.tool(name) is not None

    async def _settled(self) -> None:
        try:
            await self.host.pool.wait_ready(timeout=READY_TIMEOUT)
        except TimeoutError:  # offer what is up; a slow server's tools come in a later listing
            log.warning(
                "MCP servers still starting after %.0f s; exposing the tools that are ready", READY_TIMEOUT
            )

    async def call(
        self, name: str, arguments: dict[str, Any], *, caller: Principal, client: str, report: Reporter
    ) -> wire.CallToolResult:
        """Record the call in the caller's session, then hand it to the gate (the only road to a tool).

        While it waits for an approval, `report` tells the client which one, so a person can
        find it on the dashboard (or answer it with `answer_approval`); once it runs, the tool's
        own progress reports are passed on.
        """
        session = await self._session_for(caller, client)
        call_id = f"mcpgw_{uuid.uuid4().hex[:24]}"
        asked = await self.host.store.add_message(
            Message(
                session_id=session.session_id,
                role="assistant",
                tool_calls=[ToolCallRequest(id=call_id, name=name, arguments=arguments)],
            )
        )
        await self.host.bus.publish(session.session_id, "message", asked.model_dump(mode="json"))
        events = self.host.bus.subscribe(session.session_id)
        last = -1.0

        async def tell(progress: float, message: str, total: float | None = None) -> None:
            nonlocal last
            if progress <= last:  # the spec asks each notification's progress to grow
                return
            last = progress
            await _best_effort(report(progress, message, total))

        try:
            async with anyio.create_task_group() as tg:

                async def tell_waiting() -> None:
                    async for event in events:
                        data = event.data
                        if event.type == "approval.requested" and data.get("tool_call_id") == call_id:
                            note = (
                                f"waiting for approval of {name} (approval {data.get('id')}): "
                                "answer it on the Overseer dashboard or with answer_approval"
                            )
                            await tell(0, note)
                        elif event.type == "tool.progress" and data.get("id") == call_id:
                            total = data.get("total")
                            await tell(
                                float(data.get("progress") or 0),
                                data.get("message") or f"{name} is working",
                                float(total) if isinstance(total, (int, float)) else None,
                            )

                tg.start_soon(tell_waiting)
                result = await self.host.gate.run(
                    session, GateCall(id=call_id, name=name, arguments=arguments)
                )
                # The tool's last reports may still be in the feed (the result is recorded without
                # the loop turning): pass them on before the result, then stop following. A client
                # that stopped reading does not hold the result up for long.
                self.host.bus.unsubscribe(events)
                tg.cancel_scope.deadline = anyio.current_time() + PROGRESS_DRAIN
        finally:
            self.host.bus.unsubscribe(events)
        return call_result(result)

    async def _session_for(self, caller: Principal, client: str) -> GateSession:
        key = (f"{caller.kind}:{caller.name}", client)
        async with self._lock:
            found = self._sessions.get(key)
            if found is None:
                mode = self.host.modes.get("agent")
                created = await self.host.sessions.create(
                    title=f"Tools called from {client} ({caller.name})", origin="mcp"
                )
                found = GateSession(
                    session_id=created.session.id,
                    workspace=self.host.settings.resolved_workspace,
                    mode=mode.name,
                    mode_policies=dict(mode.policies),
                    fence=self.host.runner.fence_for(None),  # main's session: the others' folders stay closed
                )
                self._sessions[key] = found
            return found


async def _best_effort(note: Awaitable[None]) -> None:
    try:
        await note
    except Exception as exc:  # noqa: BLE001 - progress is best effort
        log.debug("progress not delivered: %s", exc)
