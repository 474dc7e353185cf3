"""Try a refused step again: a person's "Retry" on a tool call they denied or let time out.

What a person expects of Retry is the same call asked again, not a new conversation with the
model about it. So on the LiteLLM engine the call is proposed again as it was: the person's
request ("try this step again") and the call, under a new id, are appended to the transcript and
the session runs; the run settles the open call through the gate like any other (it asks again,
unless a rule given since decides it), and the model goes on from its result. The Claude Agent
SDK engine keeps its own transcript, which cannot be given a call the model did not make: there
the person's request goes to the model as a message, and the model makes the call again.
"""

from __future__ import annotations

import uuid

from backend.domain.errors import Conflict, NotFound
from backend.domain.models import ACTIVE_STATUSES, Message, Session, StopReason, ToolCallRecord, ToolCallRequest
from backend.domain.tools import split_tool_name
from backend.engine.outcome import refusal_of
from backend.engine.runner import SessionRunner
from backend.store.base import Store


class NotRetryable(Conflict):
    """The call was not refused by a person or a timeout, or the session is still running."""


async def refused_calls(store: Store, session_id: str) -> dict[str, StopReason]:
    """The session's calls a person denied or let time out, by id: the ones Retry may ask again."""
    await store.get_session(session_id)  # NotFound for no such session
    latest = {a.tool_call_id: a for a in await store.list_approvals(session_id=session_id)}
    found = {r.id: refusal_of(r, latest.get(r.id)) for r in await store.list_tool_calls(session_id)}
    return {call_id: reason for call_id, reason in found.items() if reason is not None}


def retry_text(record: ToolCallRecord, reason: str, title: str | None = None) -> str:
    """The person's request as the model reads it and the person sees it in the transcript: the
    tool by its title ("Run a command"), or its name on its server (`exec`) when it has none, the
    way the dashboard names tools, never the internal `mcp__shell__exec`."""
    how = "timed out waiting for approval" if reason == "timed_out" else "was denied"
    label = (title or "").strip() or (split_tool_name(record.name) or ("", record.name))[1]
    return f"Try that step again: the “{label}” call that {how}. It will ask for approval again."


async def retry_step(*, store: Store, runner: SessionRunner, session_id: str, call_id: str) -> Session:
    """Propose a denied or timed-out call of an ended session again; returns the running session.

    NotFound for no such session or call; NotRetryable (409) while the session runs, or for a call
    no person refused (one that ran, or one a rule refused: it would only be refused again)."""
    session = await store.get_session(session_id)
    if session.status in ACTIVE_STATUSES or runner.is_running(session_id):
        raise NotRetryable("the session is still running: wait for it to end (or stop it), then retry")
    record = next((r for r in await store.list_tool_calls(session_id) if r.id == call_id), None)
    if record is None:
        raise NotFound(f"no tool call {call_id!r} in session {session_id!r}")
    reason = (await refused_calls(store, session_id)).get(call_id)
    if reason is None:
        raise NotRetryable("only a call a person denied, or whose approval timed out, can be retried")
    info = runner.gate.tools.tool(record.name)
    text = retry_text(record, reason, info.annotations.title if info else None)
    if session.engine == "claude-sdk":
        await runner.send(session_id, text)
    else:
        again = ToolCallRequest(id=f"call_retry_{uuid.uuid4().hex[:24]}", name=record.name, arguments=record.arguments)
        await runner.propose(
            session_id,
            [
                Message(session_id=session_id, role="user", content=text),
                Message(session_id=session_id, role="assistant", tool_calls=[again]),
            ],
        )
    return await store.get_session(session_id)
