"""The Claude Agent SDK engine: Claude Code's own agent loop, governed like the LiteLLM one.

One run is one CLI process (`ClaudeSDKClient`) that resumes the session's SDK transcript.
Every tool call passes the same gate as in the other engine, in two steps: `can_use_tool`
decides (rules, approvals, audit), and the in-process proxy server executes what was allowed,
on the shared pool. Stream events become token deltas; each assistant message is stored with
its tool calls before any of them is decided; the result gives tokens, cost and the SDK
session id. A stop interrupts the CLI. After a restart, the calls the last run left open are
settled first (an approval still pending is asked again, a call that was running is reported
as interrupted, never re-run), and the SDK session is resumed with what became of them.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    ClaudeSDKError,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk.types import PermissionResult, ToolPermissionContext

from backend.domain.models import Session, ToolCallRequest, Usage
from backend.domain.tools import ToolResult
from backend.engine.claude_sdk.options import SdkTarget, SettingSource, build_options, disallowed_tools
from backend.engine.claude_sdk.proxy import proxy_servers
from backend.engine.claude_sdk.transcript import (
    AssistantDraft,
    earlier_context,
    prompt_blocks,
    result_text,
    unsent_user_messages,
    user_turn,
)
from backend.engine.events import EventBus
from backend.engine.loop import LoopLimits, LoopResult, unanswered_calls
from backend.engine.turn import Turn
from backend.permissions.gate import INTERRUPTED, GateCall, GateDecision, ToolGate
from backend.store.base import NotFound, Store

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 60.0
INTERRUPT_TIMEOUT = 5.0
STORED_TIMEOUT = 10.0
"""How long a permission request waits for the end of the assistant message it belongs to."""
NEVER_STARTED = "The tool call was allowed, but Claude Code never started it."
RESTART_NOTE = (
    "The host restarted during your last turn. The tool calls it left open were settled "
    "without you; here is what became of them:"
)


class ClaudeSdkEngine:
    """Runs sessions through claude-agent-sdk; the gate decides and runs every tool call."""

    def __init__(
        self,
        *,
        store: Store,
        bus: EventBus,
        gate: ToolGate,
        data_dir: Path,
        target: Callable[[Session], SdkTarget],
        setting_sources: Sequence[SettingSource] = (),
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        """`target`: the model, base URL and key a session's CLI talks to."""
        self.store = store
        self.bus = bus
        self.gate = gate
        self.data_dir = data_dir
        self.target = target
        self.setting_sources = list(setting_sources)
        self.connect_timeout = connect_timeout

    async def run(
        self,
        *,
        session: Session,
        turn: Turn,
        limits: LoopLimits,
        on_usage: Callable[[Usage], Awaitable[None]],
        on_sdk_session: Callable[[str], Awaitable[object]],
    ) -> LoopResult:
        """Run the session until Claude Code answers the person's unsent messages."""
        return await _Run(self, session, turn, on_usage=on_usage, on_sdk_session=on_sdk_session).drive(limits)


class _Run:
    """The state of one run: the CLI client, the assistant message being gathered, the calls."""

    def __init__(
        self,
        engine: ClaudeSdkEngine,
        session: Session,
        turn: Turn,
        *,
        on_usage: Callable[[Usage], Awaitable[None]],
        on_sdk_session: Callable[[str], Awaitable[object]],
    ) -> None:
        self.engine = engine
        self.store = engine.store
        self.bus = engine.bus
        self.gate = engine.gate
        self.session = session
        self.sid = session.id
        self.turn = turn
        self.gate_session = turn.gate_session
        self.on_usage = on_usage
        self.on_sdk_session = on_sdk_session
        self.sdk_session_id = session.sdk_session_id
        self.draft: AssistantDraft | None = None
        self.flush_lock = asyncio.Lock()
        self.calls: dict[str, ToolCallRequest] = {}
        self.stored: dict[str, asyncio.Event] = {}
        """Set once the assistant message holding the call (by tool-use id) is in the store."""
        self.allowed: dict[str, GateDecision] = {}
        self.finished: set[str] = set()
        self.last_text = ""
        self.cost_so_far = 0.0
        self.stderr: deque[str] = deque(maxlen=20)

    # the run

    async def drive(self, limits: LoopLimits) -> LoopResult:
        note = await self._settle_open_round()
        history = await self.store.list_messages(self.sid)
        unsent = unsent_user_messages(history, memory_from=self.session.memory_from)
        resume, fork = await self._resume_point()
        preamble = note
        if resume is None:  # nothing to resume: what came before goes along as context
            before = unsent[0].idx if unsent else (history[-1].idx + 1 if history else 0)
            earlier = earlier_context(history, memory_from=self.session.memory_from, before=before)
            preamble = "\n\n".join(p for p in (earlier, note) if p)
        blocks = prompt_blocks(unsent, preamble=preamble)
        if not blocks:
            return LoopResult(outcome="completed", text=self.last_text)
        sent_upto = history[-1].idx if history else -1
        client = ClaudeSDKClient(self._options(limits, resume=resume, fork=fork))
        try:
            async with asyncio.timeout(self.engine.connect_timeout):
                await client.connect()
            while True:
                await client.query(_one(user_turn(blocks)))
                result = await self._receive(client, limits)
                if result.outcome != "completed":
                    return result
                # A message the person sent while this turn ran: the CLI answers it in this process.
                later = [
                    m for m in await self.store.list_messages(self.sid) if m.role == "user" and m.idx > sent_upto
                ]
                if not later:
                    return result
                sent_upto = later[-1].idx
                blocks = prompt_blocks(later)
        except asyncio.CancelledError:
            # A stop or a shutdown: the CLI ends its turn here. Merely closing it would not do:
            # it would take its lost permission request for an error and call the model again.
            await asyncio.shield(self._interrupt(client))
            raise
        except (ClaudeSDKError, TimeoutError) as exc:
            log.warning("claude-sdk run of %s failed: %s", self.sid, exc)
            detail = f" ({self.stderr[-1]})" if self.stderr else ""
            return LoopResult(outcome="error", error=f"Claude Code failed: {type(exc).__name__}: {exc}{detail}")
        finally:
            await asyncio.shield(self._close(client))

    def _options(self, limits: LoopLimits, *, resume: str | None, fork: bool) -> Any:
        engine = self.engine
        tools = self.turn.tools
        return build_options(
            target=engine.target(self.session),
            system_prompt=self.turn.system_prompt,
            workspace=Path(self.session.workspace),
            mcp_servers=proxy_servers(tools, self._execute),
            disallowed=disallowed_tools(self.gate.policy, tools),
            max_turns=limits.max_iterations,
            data_dir=engine.data_dir,
            setting_sources=engine.setting_sources,
            resume=resume,
            fork=fork,
            can_use_tool=self._can_use_tool,
            hooks={"PreToolUse": [HookMatcher(hooks=[self._pre_tool_use])]},
            stderr=self.stderr.append,
        )

    async def _resume_point(self) -> tuple[str | None, bool]:
        """The SDK session to resume, and whether to fork it (a child's copy of its parent's)."""
        resume = self.session.sdk_session_id
        if resume is None or self.session.parent_id is None:
            return resume, False
        try:
            parent = await self.store.get_session(self.session.parent_id)
        except NotFound:
            return resume, False
        return resume, parent.sdk_session_id == resume

    async def _receive(self, client: ClaudeSDKClient, limits: LoopLimits) -> LoopResult:
        async for message in client.receive_response():
            if isinstance(message, StreamEvent):
                await self._on_stream_event(message)
            elif isinstance(message, AssistantMessage):
                await self._on_assistant(message)
            elif isinstance(message, UserMessage):
                await self._on_user(message)
            elif isinstance(message, SystemMessage):
                await self._on_system(message)
            elif isinstance(message, ResultMessage):
                return await self._on_result(message, limits)
        await self._flush()
        detail = f": {self.stderr[-1]}" if self.stderr else ""
        return LoopResult(outcome="error", error=f"Claude Code ended without a result{detail}")

    async def _interrupt(self, client: ClaudeSDKClient) -> None:
        try:
            async with asyncio.timeout(INTERRUPT_TIMEOUT):
                await client.interrupt()
        except Exception as exc:  # a CLI already gone cannot be interrupted; closing it is enough
            log.debug("interrupting the CLI of %s: %s", self.sid, exc)

    async def _close(self, client: ClaudeSDKClient) -> None:
        try:
            await client.disconnect()
        except Exception:
            log.exception("closing the CLI of %s", self.sid)
        if self.gate.shutting_down:
            return  # left as stored, for recovery
        for call_id, decision in list(self.allowed.items()):
            if call_id not in self.finished:
                self.finished.add(call_id)
                await self.gate.settle_unrun(
                    self.gate_session,
                    GateCall(id=call_id, name=decision.record.name, arguments=decision.arguments),
                    ToolResult.error(NEVER_STARTED),
                )

    # what the CLI reports

    async def _on_system(self, message: SystemMessage) -> None:
        if message.subtype != "init":
            return
        sdk_id = message.data.get("session_id")
        if isinstance(sdk_id, str) and sdk_id != self.sdk_session_id:
            self.sdk_session_id = sdk_id
            await self.on_sdk_session(sdk_id)

    async def _on_stream_event(self, message: StreamEvent) -> None:
        if message.parent_tool_use_id is not None:
            return
        event = message.event
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta" and delta.get("text"):
                await self.bus.publish_delta(self.sid, "token", {"text": delta["text"]})
        elif kind == "message_stop":
            await self._flush()

    async def _on_assistant(self, message: AssistantMessage) -> None:
        if message.parent_tool_use_id is not None:
            return
        async with self.flush_lock:
            if self.draft is not None and self.draft.message_id != message.message_id:
                await self._store_draft()
            if self.draft is None:
                self.draft = AssistantDraft(message_id=message.message_id)
            for block in message.content:
                if isinstance(block, TextBlock) and block.text:
                    self.draft.texts.append(block.text)
                elif isinstance(block, ToolUseBlock):
                    call = ToolCallRequest(id=block.id, name=block.name, arguments=dict(block.input))
                    self.draft.tool_calls.append(call)
                    self.calls[block.id] = call

    async def _on_user(self, message: UserMessage) -> None:
        if message.parent_tool_use_id is not None or isinstance(message.content, str):
            return
        await self._flush()
        for block in message.content:
            if not isinstance(block, ToolResultBlock) or block.tool_use_id in self.finished:
                continue
            # A call the gate never ran to its end: the CLI refused or cut it by itself.
            self.finished.add(block.tool_use_id)
            call = self.calls.get(block.tool_use_id)
            await self.gate.settle_unrun(
                self.gate_session,
                GateCall(id=block.tool_use_id, name=call.name if call else "unknown", arguments=call.arguments if call else {}),
                ToolResult(text=result_text(block.content), is_error=bool(block.is_error)),
            )

    async def _on_result(self, message: ResultMessage, limits: LoopLimits) -> LoopResult:
        await self._flush()
        usage = message.usage or {}
        total = message.total_cost_usd or 0.0
        # The CLI's cost is the total of its process; each result adds what it cost since the last.
        cost, self.cost_so_far = max(total - self.cost_so_far, 0.0), max(total, self.cost_so_far)
        await self.on_usage(
            Usage(
                input_tokens=int(usage.get("input_tokens") or 0)
                + int(usage.get("cache_creation_input_tokens") or 0)
                + int(usage.get("cache_read_input_tokens") or 0),
                output_tokens=int(usage.get("output_tokens") or 0),
                cost_usd=cost,
            )
        )
        if message.session_id and message.session_id != self.sdk_session_id:
            self.sdk_session_id = message.session_id
            await self.on_sdk_session(message.session_id)
        if message.subtype == "error_max_turns":
            return LoopResult(
                outcome="error",
                error=f"Stopped after {limits.max_iterations} model calls (the iteration limit) without a final answer.",
            )
        if message.is_error or message.subtype != "success":
            detail = "; ".join(message.errors or []) or message.result or message.subtype
            return LoopResult(outcome="error", error=f"Claude Code: {detail}")
        return LoopResult(outcome="completed", text=self.last_text or (message.result or ""))

    # the assistant message, stored before any of its tool calls is decided

    def _stored(self, call_id: str) -> asyncio.Event:
        return self.stored.setdefault(call_id, asyncio.Event())

    async def _flush(self) -> None:
        async with self.flush_lock:
            await self._store_draft()

    async def _store_draft(self) -> None:
        draft, self.draft = self.draft, None
        if draft is None or draft.empty:
            return
        if draft.texts:
            self.last_text = "\n\n".join(draft.texts)
        stored = await self.store.add_message(draft.message(self.sid))
        await self.bus.publish(self.sid, "message", stored.model_dump(mode="json"))
        for call in draft.tool_calls:
            self._stored(call.id).set()

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
            await self._flush()

    # the gate, in two steps

    async def _pre_tool_use(self, hook_input: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """The CLI's PreToolUse hook: the call's message goes to our store and events first.

        It never decides (an allow here would skip `can_use_tool`, and with it the gate).
        """
        if tool_use_id:
            await self._await_message_of(tool_use_id)
        return {}

    async def _can_use_tool(self, name: str, arguments: dict[str, Any], context: ToolPermissionContext) -> PermissionResult:
        call_id = context.tool_use_id or f"sdk-{uuid.uuid4().hex}"
        await self._await_message_of(call_id)
        decision = await self.gate.decide(self.gate_session, GateCall(id=call_id, name=name, arguments=arguments))
        if decision.result is not None:
            self.finished.add(call_id)
            return PermissionResultDeny(message=decision.result.text)
        self.allowed[call_id] = decision
        return PermissionResultAllow(updated_input=decision.arguments)

    async def _execute(self, name: str, tool_use_id: str | None, arguments: dict[str, Any]) -> ToolResult:
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

    # after a restart

    async def _settle_open_round(self) -> str:
        """Settle the calls a previous process left open, exactly as the LiteLLM engine does.

        Returns what became of them, for the resumed CLI session (whose own copy of those calls
        ended with the process).
        """
        history = await self.store.list_messages(self.sid)
        calls = unanswered_calls(history)
        if not calls:
            return ""
        self.last_text = next((m.content for m in reversed(history) if m.role == "assistant" and m.content), "")
        records = {r.id: r for r in await self.store.list_tool_calls(self.sid)}
        lines = []
        for call in calls:
            record = records.get(call.id)
            if record is not None and record.status == "running":
                await self.gate.record_interrupted(record)
                text = INTERRUPTED
            else:  # an approval still pending is asked again; one answered meanwhile stands
                gate_call = GateCall(id=call.id, name=call.name, arguments=call.arguments)
                text = (await self.gate.run(self.gate_session, gate_call)).text
            self.finished.add(call.id)
            lines.append(f"- {call.name} {call.arguments} (call {call.id}): {text}")
        return "\n".join([RESTART_NOTE, *lines])


async def _one(message: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    yield message

