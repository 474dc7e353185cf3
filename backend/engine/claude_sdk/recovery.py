"""After a restart: settle the tool calls the last run left open, and say what became of them.

They are settled exactly as the LiteLLM engine settles them (`backend.engine.settle`). The
resumed CLI session's own copy of those calls ended with the process, so it is told.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.engine.claude_sdk.calls import GatedCalls
from backend.engine.settle import settle_open_calls
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
    settled = await settle_open_calls(store=store, gate=calls.gate, session=calls.gate_session, history=history)
    if not settled:
        return OpenRound()
    last_text = next((m.content for m in reversed(history) if m.role == "assistant" and m.content), "")
    calls.finished.update(s.call.id for s in settled)
    lines = [f"- {s.call.name} {s.call.arguments} (call {s.call.id}): {s.text}" for s in settled]
    return OpenRound(note="\n".join([RESTART_NOTE, *lines]), last_text=last_text)
