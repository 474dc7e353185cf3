"""The gate in two steps for the CLI's tool calls: `can_use_tool` decides, the proxy executes.

Claude Code asks about each call (its PreToolUse hook, then `can_use_tool`); the gate decides
there (rules, approvals, audit), and the in-process proxy server runs only what it allowed, on
the shared pool. A call is decided only once the assistant message holding it is stored, as the
LiteLLM engine stores it. A call the gate never ran to its end (refused or cut by the CLI, or
allowed and never started) is settled here too, so every call ends recorded.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny
from claude_agent_sdk.types import PermissionResult, ToolPermissionContext

from backend.domain.models import ToolCallRequest
from backend.domain.tools import ToolResult
from backend.approvals.gate import GateCall, GateDecision, GateSession, ToolGate

log = logging.getLogger(__name__)

STORED_TIMEOUT = 10.0
"""How long a permission request waits for the end of the assistant message it belongs to."""
NEVER_STARTED = "The tool call was allowed, but Claude Code never started it."


class GatedCalls:
    """One run's tool calls through the gate: the CLI's callbacks, and what became of each call."""

    def __init__(
        self, *, gate: ToolGate, gate_session: GateSession, flush: Callable[[], Awaitable[None]]
    ) -> None:
        """`flush`: stores the assistant message being gathered, whole or not."""
        self.gate = gate
        self.gate_session = gate_session
        self.flush = flush
        self.requests: dict[str, ToolCallRequest] = {}
        """Every call the CLI's assistant messages held, by tool-use id."""
        self.stored: dict[str, asyncio.Event] = {}
        """Set once the assistant message holding the call (by tool-use id) is in the store."""
        self.allowed: dict[str, GateDecision] = {}
        self.finished: set[str] = set()

    # the assistant message, stored before any of its tool calls is decided

    def seen(self, call: ToolCallRequest) -> None:
        """A call of the assistant message being gathered."""
        self.requests[call.id] = call

    def message_stored(self, calls: list[ToolCallRequest]) -> None:
        """The message holding these calls is in the store: deciding them may go on."""
        for call in calls:
            self._stored(call.id).set()

    def _stored(self, call_id: str) -> asyncio.Event:
        return self.stored.setdefault(call_id, asyncio.Event())

    async def _await_message_of(self, call_id: str) -> None:
        """Wait (bounded) until the whole message holding this call is stored.

        The CLI may ask about a call while the model still streams the rest of its message; the
        message is stored whole, as the LiteLLM engine stores it, before any call is decided.
        """
        try:
            async with asyncio.timeout(STORED_TIMEOUT):
                await self._stored(call_id).wait()
        except TimeoutError:
            log.warning("the CLI asked about %s before its message ended; storing what there is", call_id)
            await self.flush()

    # the CLI's callbacks

    async def pre_tool_use(self, hook_input: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """The CLI's PreToolUse hook: the call's message goes to our store and events first.

        It never decides (an allow here would skip `can_use_tool`, and with it the gate).
        """
        if tool_use_id:
            await self._await_message_of(tool_use_id)
        return {}

    async def can_use_tool(
        self, name: str, arguments: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        """The CLI's permission callback: the gate's decision, the first of its two steps."""
        call_id = context.tool_use_id or f"sdk-{uuid.uuid4().hex}"
        await self._await_message_of(call_id)
        decision = await self.gate.decide(self.gate_session, GateCall(id=call_id, name=name, arguments=arguments))
        if decision.result is not None:
            self.finished.add(call_id)
            return PermissionResultDeny(message=decision.result.text)
        self.allowed[call_id] = decision
        return PermissionResultAllow(updated_input=decision.arguments)

    async def execute(self, name: str, tool_use_id: str | None, arguments: dict[str, Any]) -> ToolResult:
        """The proxy's call: runs only what `can_use_tool` allowed (the gate refuses the rest)."""
        call_id = tool_use_id or self._match(name, arguments) or f"undecided-{uuid.uuid4().hex}"
        try:
            return await self.gate.execute(self.gate_session, GateCall(id=call_id, name=name, arguments=arguments))
        finally:
            self.finished.add(call_id)

    def _match(self, name: str, arguments: dict[str, Any]) -> str | None:
        """For a CLI that does not say which tool use a call is: the one allowed call it can be."""
        found = [
            i
            for i, d in self.allowed.items()
            if i not in self.finished and d.record.name == name and d.arguments == arguments
        ]
        return found[0] if len(found) == 1 else None

    # calls the gate never ran to their end

    async def settle_reported(self, call_id: str, result: ToolResult) -> None:
        """A result the CLI reports for a call: recorded unless the gate already ended the call."""
        if call_id in self.finished:
            return
        # A call the gate never ran to its end: the CLI refused or cut it by itself.
        self.finished.add(call_id)
        call = self.requests.get(call_id)
        await self.gate.settle_unrun(
            self.gate_session,
            GateCall(id=call_id, name=call.name if call else "unknown", arguments=call.arguments if call else {}),
            result,
        )

    async def settle_never_started(self) -> None:
        """Record every allowed call the CLI never started as failed (its process has ended)."""
        for call_id, decision in list(self.allowed.items()):
            if call_id not in self.finished:
                self.finished.add(call_id)
                await self.gate.settle_unrun(
                    self.gate_session,
                    GateCall(id=call_id, name=decision.record.name, arguments=decision.arguments),
                    ToolResult.error(NEVER_STARTED),
                )
