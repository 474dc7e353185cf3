"""run_agent_loop: model, tools, model, ... until the model answers with text.

The loop reads the transcript from the store every iteration, so a session recovered after a
restart continues from exactly what was persisted. Tool calls go through the gate, concurrently
and bounded; a call the previous process left mid-run is reported to the model as interrupted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from backend.domain.models import Message, StopReason, ToolCallRequest, Usage
from backend.domain.tools import ToolInfo
from backend.engine.turns.context import user_content
from backend.engine.events import EventBus
from backend.engine.models.client import ModelClient, ModelError
from backend.engine.settle import settle_open_calls
from backend.engine.models.thinking import SIGNED, open_turn_from
from backend.engine.models.tool_media import ReadMedia, ToolImageStyle, images_message, images_to_send, tool_message
from backend.engine.turns.tool_selection import SEARCH_TOOLS, ToolSelection
from backend.approvals.gate import GateCall, GateSession, ToolGate
from backend.store.base import Store

Outcome = Literal["completed", "error", "stopped"]
"""How a run ends, as the session's status: answered, failed, or stopped short (`stop_reason` says why)."""


@dataclass(kw_only=True)
class LoopLimits:
    """Bounds of one run."""

    max_iterations: int = 40
    tool_concurrency: int = 8

    def exhausted(self) -> LoopResult:
        """How a run ends that used up `max_iterations` model calls, in either engine."""
        return LoopResult(
            outcome="error",
            error=f"Stopped after {self.max_iterations} model calls (the iteration limit) without a final answer.",
        )


@dataclass(kw_only=True)
class LoopResult:
    """How a run ended and what the model said last."""

    outcome: Outcome
    text: str = ""
    error: str | None = None
    stop_reason: StopReason | None = None


def tool_schemas(tools: list[ToolInfo]) -> list[dict[str, Any]]:
    """Tools in the OpenAI function shape LiteLLM translates for every provider."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description[:1024], "parameters": t.input_schema},
        }
        for t in tools
    ]


def to_wire(
    system_prompt: str,
    history: list[Message],
    *,
    read_media: ReadMedia | None = None,
    tool_images: ToolImageStyle = "user_message",
) -> list[dict[str, Any]]:
    """The transcript in OpenAI chat shape, each tool result right after the call that asked for it.

    Results are stored in completion order and user messages may arrive while tools run, so the
    stored order is not always a valid request order. Images of tool results are read with
    `read_media` and placed as `tool_images` says (see `backend.engine.models.tool_media`). Reads files:
    call it from a worker thread when the history holds media. Reasoning is left out, but for the
    signed blocks of the turn still open (see `backend.engine.models.thinking`).
    """
    results = {m.tool_call_id: m for m in history if m.role == "tool" and m.tool_call_id}
    open_from = open_turn_from(history)
    sent = images_to_send(history, read_media)
    wire: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
    for message in history:
        if message.role == "tool":
            continue
        if message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.thinking_blocks and message.idx >= open_from:
                entry[SIGNED] = [block.wire() for block in message.thinking_blocks]
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in message.tool_calls
                ]
            wire.append(entry)
            answered = [r for r in (results.get(c.id) for c in message.tool_calls) if r is not None]
            wire += [tool_message(r, sent, tool_images) for r in answered]
            if tool_images == "user_message" and (images := images_message(answered, sent)):
                wire.append(images)
        elif message.role == "user":
            wire.append({"role": "user", "content": user_content(message)})
        else:
            wire.append({"role": message.role, "content": message.content})
    return wire


async def run_agent_loop(
    *,
    session: GateSession,
    system_prompt: str,
    tools: list[ToolInfo],
    model: ModelClient,
    gate: ToolGate,
    store: Store,
    bus: EventBus,
    limits: LoopLimits,
    on_usage: Callable[[Usage], Awaitable[None]],
    history_from: int = 0,
    read_media: ReadMedia | None = None,
    tool_images: ToolImageStyle = "user_message",
    selection: ToolSelection | None = None,
) -> LoopResult:
    """Drive one session until the model answers with text, a limit, or an error.

    The model is sent only messages with idx >= `history_from`: older ones live on in the
    workspace memory (see `backend.engine.turns.memory`). Tool results' images are read with
    `read_media` and sent as `tool_images` says. With a `selection`, each model call is shown
    the tools it picks (see `backend.engine.turns.tool_selection`), and the gate refuses all others.
    """
    sid = session.session_id
    schemas = tool_schemas(tools)
    semaphore = asyncio.Semaphore(limits.tool_concurrency)

    async def run_call(call: ToolCallRequest) -> None:
        if selection is not None and call.name == SEARCH_TOOLS and not call.argument_error:
            # Runs in the host and only changes what is offered: no server, nothing to allow.
            result = await selection.search(call.arguments)
            await gate.settle_unrun(session, GateCall(id=call.id, name=call.name, arguments=call.arguments), result)
            return
        refusal = call.argument_error
        if refusal is None and selection is not None and session.offered is not None:
            # Offered by the mode but not shown this step: the gate refuses it, saying how to reach it.
            refusal = selection.not_shown(call.name, session.offered)
        async with semaphore:
            await gate.run(
                session,
                GateCall(id=call.id, name=call.name, arguments=call.arguments, argument_error=refusal),
            )

    async def run_calls(calls: list[ToolCallRequest]) -> None:
        await asyncio.gather(*(run_call(c) for c in calls))

    await settle_open_calls(
        store=store,
        gate=gate,
        session=session,
        history=await store.list_messages(sid),
        concurrency=limits.tool_concurrency,
    )
    for _iteration in range(limits.max_iterations):
        history = await store.list_messages(sid)

        async def on_delta(text: str) -> None:
            await bus.publish_delta(sid, "token", {"text": text})

        async def on_thinking(text: str) -> None:
            await bus.publish_delta(sid, "thinking.delta", {"text": text})

        async def on_retry(note: str) -> None:
            await bus.publish(sid, "model.retry", {"message": note})

        visible = [m for m in history if m.idx >= history_from]
        wire = partial(to_wire, system_prompt, visible, read_media=read_media, tool_images=tool_images)
        # Images are files: read them off the event loop.
        messages = await asyncio.to_thread(wire) if any(m.media for m in visible) else wire()
        if selection is not None:
            shown = selection.offer(visible, await store.list_tool_calls(sid))
            # What the model is shown is all the gate lets through (`search_tools` never reaches it).
            session.offered = frozenset(t.name for t in shown if t.name != SEARCH_TOOLS)
            schemas = tool_schemas(shown)
        try:
            turn = await model.complete(
                messages=messages,
                tools=schemas,
                on_delta=on_delta,
                on_retry=on_retry,
                on_thinking=on_thinking,
            )
        except ModelError as exc:
            return LoopResult(outcome="error", error=str(exc))
        await on_usage(turn.usage)
        assistant = await store.add_message(
            Message(
                session_id=sid,
                role="assistant",
                content=turn.text,
                tool_calls=turn.tool_calls,
                thinking=turn.thinking,
                thinking_blocks=turn.thinking_blocks,
            )
        )
        await bus.publish(sid, "message", assistant.model_dump(mode="json"))
        if not turn.tool_calls:
            return LoopResult(outcome="completed", text=turn.text)
        await run_calls(turn.tool_calls)
    return limits.exhausted()

