"""Run an agent to its end and hand back its answer: the REST invoke API, the gateway, sub-agents."""

from __future__ import annotations

from dataclasses import dataclass

from backend.domain.models import Message
from backend.engine.host import Host


@dataclass(kw_only=True)
class InvokeResult:
    """What a caller of an agent gets back."""

    session_id: str
    response: str
    status: str
    cost_usd: float
    input_tokens: int
    output_tokens: int


async def invoke_agent(
    host: Host,
    *,
    prompt: str,
    mode: str = "agent",
    model: str | None = None,
    parent_session_id: str | None = None,
    fork: bool = False,
    workspace: str | None = None,
    timeout: float | None = None,
) -> InvokeResult:
    """Create a session (optionally a fork of its parent's history), run it, return its last answer."""
    if fork and not parent_session_id:
        raise ValueError("fork needs parent_session_id")
    parent = await host.store.get_session(parent_session_id) if parent_session_id else None
    session = await host.runner.create(
        title=prompt.strip().splitlines()[0][:80] if prompt.strip() else "invoke",
        mode=mode,
        model=model or (parent.model if parent else None),
        workspace=workspace or (parent.workspace if parent else None),
        parent_id=parent_session_id,
    )
    if fork and parent is not None:
        # The child starts from a copy of the parent's finished turns; a half-done tool round
        # (a call without its result) would be an invalid transcript, so it is left out.
        history = await host.store.list_messages(parent.id)
        answered = {m.tool_call_id for m in history if m.role == "tool"}
        for message in history:
            if message.role == "assistant" and any(c.id not in answered for c in message.tool_calls):
                break
            await host.store.add_message(message.model_copy(update={"session_id": session.id}))
    await host.runner.send(session.id, prompt)
    done = await host.runner.wait(session.id, timeout=timeout)
    return InvokeResult(
        session_id=done.id,
        response=_last_answer(await host.store.list_messages(done.id)) if done.status == "completed" else (done.error or ""),
        status=done.status,
        cost_usd=done.usage.cost_usd,
        input_tokens=done.usage.input_tokens,
        output_tokens=done.usage.output_tokens,
    )


def _last_answer(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message.role == "assistant" and message.content:
            return message.content
    return ""
