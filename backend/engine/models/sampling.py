"""Running a server's `sampling/createMessage` on the session's model, once a person allowed it.

The pool places the request in the session whose tool call the server is running. Then:
1. limits: the settings or the session's mode may switch sampling off; a request that wants
   tools is refused (Overseer declares no `sampling.tools`); `max_tokens` is capped;
2. the person reviews the prompt as an approval of kind "sampling" (SamplingDesk), and may edit
   its texts or deny it;
3. the session's model answers the prompt as allowed, without tools, and its tokens and cost
   count for the session. A `sampling.completed` event shows the answer in the timeline.

Refusals reach the server as errors with the spec's code -1 and a reason it can show.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types

from backend.domain.models import Session, Usage
from backend.engine.models.client import ModelError, describe_error
from backend.mcp.elicitation import SamplingRequest, refused
from backend.modes.model import Mode, SamplingPolicy
from backend.approvals.sampling_desk import SamplingDesk, parts_of, prompt_of, refusal_of

log = logging.getLogger(__name__)

TEXT_SHOWN = 4000
"""Characters of the model's answer the timeline event keeps."""


class SamplingModel(Protocol):
    """The session's model, with the request's limits applied."""

    model: str

    async def complete(
        self, *, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_delta: Any, on_retry: Any
    ) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class SamplingLimits:
    policy: SamplingPolicy = "ask"
    max_tokens: int = 4096


class Publisher(Protocol):
    async def publish(self, session_id: str, type_: Any, data: dict[str, Any] | None = None) -> Any: ...


class Sampler:
    """Answers the sampling requests the pool places in sessions."""

    def __init__(
        self,
        *,
        desk: SamplingDesk,
        bus: Publisher,
        session_of: Callable[[str], Awaitable[Session]],
        mode_of: Callable[[Session], Mode],
        model_for: Callable[[Session, dict[str, Any]], SamplingModel],
        add_usage: Callable[[str, Usage], Awaitable[None]],
        limits: SamplingLimits,
    ) -> None:
        self._desk = desk
        self._bus = bus
        self._session_of = session_of
        self._mode_of = mode_of
        self._model_for = model_for
        self._add_usage = add_usage
        self.limits = limits

    async def sample(self, request: SamplingRequest) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        call, params = request.call, request.params
        session = await self._session_of(call.session_id)
        switched_off = self._switched_off(session)
        if switched_off:
            return refused(f"sampling is switched off {switched_off}, so MCP server {call.server!r} cannot use the model")
        if params.tools:
            return refused("Overseer does not offer tool use inside sampling; ask without tools")
        model = self._model_for(session, {}).model
        arguments = prompt_of(params, server=call.server, model=model, max_tokens=self.limits.max_tokens)
        approval = await self._desk.ask(call, arguments)
        reason = refusal_of(approval)
        if reason is not None:
            return refused(reason)
        decision = approval.decision
        allowed = decision.updated_arguments if decision is not None and decision.updated_arguments else arguments
        edited = allowed != arguments
        client = self._model_for(session, _model_options(allowed))
        try:
            turn = await client.complete(
                messages=model_messages(allowed, params), tools=[], on_delta=_ignore, on_retry=_ignore
            )
        except ModelError as exc:
            return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=f"the model could not answer: {describe_error(exc)}")
        await self._add_usage(call.session_id, turn.usage)
        await self._bus.publish(
            call.session_id,
            "sampling.completed",
            {
                "server": call.server,
                "tool": call.tool,
                "call_id": call.call_id,
                "approval_id": approval.id,
                "model": turn.model,
                "edited": edited,
                "text": turn.text[:TEXT_SHOWN],
                "usage": turn.usage.model_dump(),
            },
        )
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text=turn.text),
            model=turn.model,
            stop_reason="endTurn",
        )

    def _switched_off(self, session: Session) -> str | None:
        if self.limits.policy == "deny":
            return "in Overseer's settings"
        try:
            mode = self._mode_of(session)
        except Exception:  # a broken mode file limits nothing more than the settings do
            log.warning("mode %r of session %s could not be read for sampling", session.mode, session.id)
            return None
        return f"in mode {mode.name!r}" if mode.sampling == "deny" else None


def _model_options(allowed: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {"max_tokens": allowed["max_tokens"]}
    if allowed.get("temperature") is not None:
        options["temperature"] = allowed["temperature"]
    if allowed.get("stop_sequences"):
        options["stop"] = allowed["stop_sequences"]
    return options


def model_messages(allowed: dict[str, Any], params: mcp_types.CreateMessageRequestParams) -> list[dict[str, Any]]:
    """The chat messages the model reads: the allowed texts, with the request's own images.

    `allowed["messages"]` lists the request's parts in order (one entry per part), so the
    image and audio data are taken from the request by position.
    """
    originals = [part for message in params.messages for part in parts_of(message.content)]
    messages: list[dict[str, Any]] = []
    if allowed.get("system_prompt"):
        messages.append({"role": "system", "content": allowed["system_prompt"]})
    for entry, original in zip(allowed["messages"], originals, strict=True):
        part = _content_part(entry, original)
        if messages and messages[-1]["role"] == entry["role"] and isinstance(messages[-1]["content"], list):
            messages[-1]["content"].append(part)
        else:
            messages.append({"role": entry["role"], "content": [part]})
    return messages


def _content_part(entry: dict[str, Any], original: Any) -> dict[str, Any]:
    if entry["type"] == "image" and isinstance(original, mcp_types.ImageContent):
        return {"type": "image_url", "image_url": {"url": f"data:{original.mime_type};base64,{original.data}"}}
    if entry["type"] == "audio" and isinstance(original, mcp_types.AudioContent):
        # Chat APIs take audio input only on a few models; the model is told what it cannot hear.
        return {"type": "text", "text": f"[audio ({original.mime_type}) the server sent; not played to the model]"}
    return {"type": "text", "text": str(entry.get("text") or "")}


async def _ignore(_: str) -> None:
    return None
