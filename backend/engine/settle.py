"""After a restart (or a stop mid-round): settle the tool calls an earlier run left open.

Both engines settle them here, the same way: a call that was running is reported to the model
as interrupted and never re-run (one an MCP server ran as a task has its result collected
instead); one whose approval a stop withdrew stays stopped (a stop whose
run ended before it could say so: another host's, or a shutdown's); any other is passed to the
gate again as `resumed`, so an approval still pending is asked again under its old id, one
answered meanwhile stands, and one the rules now decide by themselves is closed with their verdict.

See docs/architecture.md (the life of an approval).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from backend.domain.models import OVERSEER, Message, ToolCallRecord, ToolCallRequest
from backend.approvals.gate import INTERRUPTED, GateCall, GateSession, ToolGate
from backend.store.base import Store


@dataclass(kw_only=True)
class Settled:
    """One open call and what became of it."""

    call: ToolCallRequest
    text: str


def unanswered_calls(history: list[Message]) -> list[ToolCallRequest]:
    """Tool calls of the last assistant message that have no result yet (a run cut short)."""
    answered = {m.tool_call_id for m in history if m.role == "tool"}
    for message in reversed(history):
        if message.role == "assistant":
            return [c for c in message.tool_calls if c.id not in answered]
    return []


async def settle_open_calls(
    *, store: Store, gate: ToolGate, session: GateSession, history: list[Message], concurrency: int = 8
) -> list[Settled]:
    """Settle the open calls of `history` (the session's transcript), in the calls' order."""
    calls = unanswered_calls(history)
    if not calls:
        return []
    records = {r.id: r for r in await store.list_tool_calls(session.session_id)}
    semaphore = asyncio.Semaphore(concurrency)

    async def settle(call: ToolCallRequest) -> Settled:
        record = records.get(call.id)
        if record is not None and record.status == "running" and record.task_id is not None:
            # It ran as an MCP task, which outlives this host: collect its result (issue 35, item 6).
            return Settled(call=call, text=(await gate.resume_task(session, record)).text)
        if record is not None and record.status == "running":
            await gate.record_interrupted(record)
            return Settled(call=call, text=INTERRUPTED)
        asked = await gate.broker.latest_for_call(session.session_id, call.id)
        if asked is not None and asked.status == "cancelled" and asked.decided_by == "stop":
            stopped = record or ToolCallRecord(
                id=call.id, session_id=session.session_id, name=call.name, arguments=call.arguments
            )
            await gate.record_stopped(stopped, asked.decider or OVERSEER)
            return Settled(call=call, text=stopped.result or "")
        async with semaphore:
            gate_call = GateCall(
                id=call.id,
                name=call.name,
                arguments=call.arguments,
                argument_error=call.argument_error,
                resumed=True,
            )
            return Settled(call=call, text=(await gate.run(session, gate_call)).text)

    return list(await asyncio.gather(*(settle(c) for c in calls)))
