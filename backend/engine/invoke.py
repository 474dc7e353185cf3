"""Run an agent to its end and hand back its answer: the REST invoke API, the gateway, sub-agents."""

from __future__ import annotations

from dataclasses import dataclass

from backend.domain.models import EngineName, Message, Session, SessionOrigin
from backend.app.host import Host


class DepthLimitExceeded(ValueError):
    """A sub-agent would nest deeper than `max_agent_depth`."""


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
    engine: EngineName | None = None,
    parent_session_id: str | None = None,
    fork: bool = False,
    workspace: str | None = None,
    timeout: float | None = None,
    origin: SessionOrigin | None = None,
) -> InvokeResult:
    """Create a session (optionally a fork of its parent's history), run it, return its last answer.

    A child of `parent_session_id` is nested under it, works in its workspace with its model
    and engine unless told otherwise, and may not nest deeper than the host's `max_agent_depth`.
    A fork of a claude-sdk parent also forks the parent's SDK session.
    """
    if fork and not parent_session_id:
        raise ValueError("fork needs parent_session_id")
    parent = await host.store.get_session(parent_session_id) if parent_session_id else None
    if parent is not None:
        await _check_depth(host, parent)
    session = await host.runner.create(
        title=prompt.strip().splitlines()[0][:80] if prompt.strip() else "invoke",
        mode=mode,
        model=model or (parent.model if parent else None),
        engine=engine or (parent.engine if parent else None),
        workspace=workspace or (parent.workspace if parent else None),
        parent_id=parent_session_id,
        origin=origin or ("agent" if parent else "api"),
        sdk_session_id=parent.sdk_session_id if fork and parent and (engine or parent.engine) == "claude-sdk" else None,
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
        response=_last_answer(await host.store.list_messages(done.id)) if done.status == "completed" else (done.error or f"the session ended {done.status}"),
        status=done.status,
        cost_usd=done.usage.cost_usd,
        input_tokens=done.usage.input_tokens,
        output_tokens=done.usage.output_tokens,
    )


async def _check_depth(host: Host, parent: Session) -> None:
    depth = 0
    current: Session | None = parent
    seen: set[str] = set()
    while current is not None and current.parent_id and current.id not in seen:
        seen.add(current.id)
        depth += 1
        current = await host.store.get_session(current.parent_id)
    limit = host.settings.max_agent_depth
    if depth + 1 > limit:
        raise DepthLimitExceeded(
            f"sub-agent depth limit reached: session {parent.id} is already {depth} level(s) deep and "
            f"max_agent_depth is {limit}; do this work in the current session instead of invoking another agent"
        )


def _last_answer(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message.role == "assistant" and message.content:
            return message.content
    return ""
