"""The Claude Agent SDK engine: Claude Code's own agent loop, governed like the LiteLLM one.

One run is one CLI process (`ClaudeSDKClient`) that resumes the session's SDK transcript.
Every tool call passes the same gate as in the other engine, in two steps: `can_use_tool`
decides (rules, approvals, audit), and the in-process proxy server executes what was allowed,
on the shared pool (`calls`). Stream events become token deltas; each assistant message is
stored with its tool calls before any of them is decided; the result gives tokens, cost and the
SDK session id. A stop interrupts the CLI. After a restart, the calls the last run left open are
settled first, and the SDK session is resumed with what became of them (`recovery`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    ClaudeSDKError,
    HookMatcher,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk.types import PermissionResult, ToolPermissionContext

from backend.domain.models import Session, ToolCallRequest, Usage
from backend.domain.tools import ToolResult
from backend.engine.claude_sdk.calls import GatedCalls
from backend.engine.claude_sdk.options import SdkTarget, SettingSource, build_options, disallowed_tools
from backend.engine.claude_sdk.proxy import proxy_servers
from backend.engine.claude_sdk.recovery import settle_open_round
from backend.engine.claude_sdk.transcript import (
    AssistantDraft,
    earlier_context,
    prompt_blocks,
    result_text,
    unsent_user_messages,
    user_turn,
)
from backend.engine.events import EventBus
from backend.engine.loop import LoopLimits, LoopResult
from backend.engine.models.tool_names import ToolNames
from backend.engine.turns.turn import Turn
from backend.approvals.gate import ToolGate
from backend.store.base import NotFound, Store

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 60.0
INTERRUPT_TIMEOUT = 5.0


class ClaudeSdkEngine:
    """Runs sessions through claude-agent-sdk; the gate decides and runs every tool call."""

    compacts_own_transcript = True
    """The CLI compacts its own transcript, so the runner does not consolidate for it."""

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
        self.on_usage = on_usage
        self.on_sdk_session = on_sdk_session
        self.sdk_session_id = session.sdk_session_id
        self.draft: AssistantDraft | None = None
        self.flush_lock = asyncio.Lock()
        self.calls = GatedCalls(gate=self.gate, gate_session=turn.gate_session, flush=self._flush)
        # Names the model's API would refuse go to the CLI as aliases; everything here keeps the real one.
        self.names = ToolNames.for_names(t.name for t in turn.tools)
        self.last_text = ""
        self.cost_so_far = 0.0
        self.stderr: deque[str] = deque(maxlen=20)

    # the run

    async def drive(self, limits: LoopLimits) -> LoopResult:
        opened = await settle_open_round(self.store, self.sid, self.calls)
        note, self.last_text = opened.note, opened.last_text
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
            mcp_servers=proxy_servers(tools, self.calls.execute, names=self.names),
            disallowed=[self.names.sent_name(n) for n in disallowed_tools(self.gate.policy, tools)],
            max_turns=limits.max_iterations,
            data_dir=engine.data_dir,
            setting_sources=engine.setting_sources,
            resume=resume,
            fork=fork,
            can_use_tool=self._can_use_tool,
            hooks={"PreToolUse": [HookMatcher(hooks=[self.calls.pre_tool_use])]},
            stderr=self.stderr.append,
        )

    async def _can_use_tool(
        self, name: str, arguments: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        """The CLI's permission callback, asked by the name the CLI knows: the gate gets the real one."""
        return await self.calls.can_use_tool(self.names.real_name(name), arguments, context)

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
        if not self.gate.shutting_down:  # else left as stored, for recovery
            await self.calls.settle_never_started()

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
            elif delta.get("type") == "thinking_delta" and delta.get("thinking"):
                await self.bus.publish_delta(self.sid, "thinking.delta", {"text": delta["thinking"]})
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
                elif isinstance(block, ThinkingBlock) and block.thinking:
                    self.draft.thinking.append(block.thinking)
                elif isinstance(block, ToolUseBlock):
                    call = ToolCallRequest(id=block.id, name=self.names.real_name(block.name), arguments=dict(block.input))
                    self.draft.tool_calls.append(call)
                    self.calls.seen(call)

    async def _on_user(self, message: UserMessage) -> None:
        if message.parent_tool_use_id is not None or isinstance(message.content, str):
            return
        await self._flush()
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                result = ToolResult(text=result_text(block.content), is_error=bool(block.is_error))
                await self.calls.settle_reported(block.tool_use_id, result)

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
            return limits.exhausted()
        if message.is_error or message.subtype != "success":
            detail = "; ".join(message.errors or []) or message.result or message.subtype
            return LoopResult(outcome="error", error=f"Claude Code: {detail}")
        return LoopResult(outcome="completed", text=self.last_text or (message.result or ""))

    # the assistant message, stored before any of its tool calls is decided

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
        self.calls.message_stored(draft.tool_calls)


async def _one(message: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    yield message

