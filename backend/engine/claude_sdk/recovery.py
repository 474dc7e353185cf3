"""After a restart: settle the tool calls the last run left open, and say what became of them.

They are settled exactly as the LiteLLM engine settles them: an approval still pending is asked
again (one answered meanwhile stands), a call that was running is reported as interrupted, never
re-run. The resumed CLI session's own copy of those calls ended with the process, so it is told.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.engine.claude_sdk.calls import GatedCalls
from backend.engine.loop import unanswered_calls
from backend.permissions.gate import INTERRUPTED, GateCall
from backend.store.base import Store

RESTART_NOTE = (
    "The host restarted during your last turn. The tool calls it left open were settled "
    "without you; here is what became of them:"
)


@dataclass(kw_only=True)
class OpenRound:
    """What settling the open round found."""

    note: str = ""
    """What became of the calls, for the resumed CLI session; empty when none was open."""
    last_text: str = ""
    """The last assistant text before the restart, the run's answer if nothing is left to send."""


async def settle_open_round(store: Store, session_id: str, calls: GatedCalls) -> OpenRound:
    """Settle the calls a previous process left open in the session, marking them finished."""
    history = await store.list_messages(session_id)
    open_calls = unanswered_calls(history)
    if not open_calls:
        return OpenRound()
    last_text = next((m.content for m in reversed(history) if m.role == "assistant" and m.content), "")
    records = {r.id: r for r in await store.list_tool_calls(session_id)}
    lines = []
    for call in open_calls:
        record = records.get(call.id)
        if record is not None and record.status == "running":
            await calls.gate.record_interrupted(record)
            text = INTERRUPTED
        else:  # an approval still pending is asked again; one answered meanwhile stands
            gate_call = GateCall(id=call.id, name=call.name, arguments=call.arguments)
            text = (await calls.gate.run(calls.gate_session, gate_call)).text
        calls.finished.add(call.id)
        lines.append(f"- {call.name} {call.arguments} (call {call.id}): {text}")
    return OpenRound(note="\n".join([RESTART_NOTE, *lines]), last_text=last_text)
