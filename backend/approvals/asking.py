"""Asking the person on a server's behalf: an approval opened in the calling session, waited for.

Elicitations and sampling requests arrive from a server in the middle of one of its tool calls;
the session shows "waiting" while the question is open, and a call that ends first withdraws it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from backend.domain.models import Approval, ApprovalKind
from backend.approvals.broker import ApprovalBroker


class WaitingSink(Protocol):
    """The session's owner, told while one of its sessions waits for a person."""

    async def approval_waiting(self, session_id: str, delta: int) -> None: ...

    @property
    def closing(self) -> bool:
        """True once the process is shutting down: then no approval is ended (see Host.begin_shutdown)."""
        ...


async def ask_and_wait(
    broker: ApprovalBroker,
    sessions: WaitingSink,
    *,
    session_id: str,
    kind: ApprovalKind,
    tool_call_id: str,
    tool_name: str,
    arguments: dict[str, Any],
    reason: str,
) -> Approval:
    """Open the approval, wait for it (bounded by its expiry), and return it closed."""
    await sessions.approval_waiting(session_id, +1)
    approval: Approval | None = None
    try:
        approval = await broker.open(
            session_id=session_id,
            kind=kind,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            arguments=arguments,
            reason=reason,
        )
        return await broker.wait(approval.id)
    except asyncio.CancelledError:
        # The call ended (timed out, stopped) while the person was still being asked. A shutdown
        # ends nothing: the next start withdraws the question, saying Overseer restarted.
        if approval is not None and not sessions.closing:
            await asyncio.shield(broker.cancel(approval.id, "The tool call ended before an answer."))
        raise
    finally:
        await asyncio.shield(sessions.approval_waiting(session_id, -1))
