"""Why a run that answered still fell short: its last step was denied by a person, or timed out.

A denied call comes back to the model as an error result and the model usually answers around
it ("I could not run that"), so the run ends "completed". A person looking at the session list
must still see that the work stopped at their denial, and be offered to try that step again:
that is `Session.stop_reason`, worked out here from what the store holds, for both engines.
"""

from __future__ import annotations

from backend.domain.models import Approval, Message, StopReason, ToolCallRecord
from backend.store.base import Store


def last_step(history: list[Message]) -> list[str]:
    """Ids of the tool calls of the last assistant message that asked for any (the run's last step)."""
    for message in reversed(history):
        if message.role == "user":
            return []  # the person spoke after it: the last run made no tool call
        if message.role == "assistant" and message.tool_calls:
            return [c.id for c in message.tool_calls]
    return []


def refusal_of(record: ToolCallRecord, approval: Approval | None) -> StopReason | None:
    """"denied" for a call a person denied, "timed_out" for one whose approval expired; None for
    any other call (one that ran, or one a rule or hook refused without asking anybody)."""
    if record.status != "denied" or approval is None:
        return None
    if approval.status == "expired" or approval.decided_by == "timeout":
        return "timed_out"
    if approval.status == "denied" and approval.decided_by == "user":
        return "denied"
    return None


async def denied_stop_reason(store: Store, session_id: str) -> StopReason | None:
    """The reason a session's last step fell short, if a person (or their silence) refused it.

    Only the last step counts: a model that went on to another approach that ran is not stopped."""
    ids = last_step(await store.list_messages(session_id))
    if not ids:
        return None
    records = {r.id: r for r in await store.list_tool_calls(session_id) if r.id in ids}
    approvals: dict[str, Approval] = {}
    for approval in await store.list_approvals(session_id=session_id):
        if approval.tool_call_id in records:
            approvals[approval.tool_call_id] = approval  # the newest, as listed oldest first
    reasons = [refusal_of(records[i], approvals.get(i)) for i in ids if i in records]
    if "denied" in reasons:
        return "denied"
    return "timed_out" if "timed_out" in reasons else None
