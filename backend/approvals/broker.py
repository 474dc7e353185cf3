"""ApprovalBroker: persisted approval requests and the futures that wait on them.

The store is the truth; futures are only how a waiting tool call learns of an answer quickly
(an answer another process writes to the store reaches them through the `ApprovalWatch`).
That is why approvals survive a restart: after one, waiting again on a stored approval picks up
either the answer already given or a fresh future.

See docs/architecture.md (the life of an approval).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from backend.domain.errors import ApprovalClosed, ApprovalNotFound, NotFound
from backend.domain.models import (
    OVERSEER,
    Approval,
    ApprovalKind,
    DecidedBy,
    Decider,
    Decision,
    StandingScope,
    utcnow,
)
from backend.domain.publisher import EventPublisher as Publisher
from backend.domain.tool_pins import ToolChange
from backend.domain.stakes import CarriedResult, Stake
from backend.domain.tools import ToolAnnotations
from backend.approvals.watch import ApprovalWatch
from backend.store.base import Store




class ApprovalBroker:
    """Creates approvals, waits for their answers (bounded) and applies answers exactly once."""

    def __init__(
        self, store: Store, bus: Publisher, *, timeout: float = 600, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self._store = store
        self._clock = clock
        self._bus = bus
        self.timeout = timeout
        self._waiters: dict[str, asyncio.Future[None]] = {}
        self.watch = ApprovalWatch(store, self._waiters)
        self._lock = asyncio.Lock()

    async def open(
        self,
        *,
        session_id: str,
        tool_call_id: str,
        tool_name: str,
        arguments: dict[str, Any],
        annotations: ToolAnnotations | None = None,
        reason: str = "",
        suggested_rules: list[str] | None = None,
        always_scope: StandingScope | None = None,
        kind: ApprovalKind = "tool",
        timeout: float | None = None,
        tool_change: ToolChange | None = None,
        stakes: list[Stake] | None = None,
        carried_results: list[CarriedResult] | None = None,
        argument_rules: list[str] | None = None,
    ) -> Approval:
        """Persist a new pending approval and announce it; `timeout` overrides the broker's.
        `tool_change`: the tool changed since it was pinned (issue 34), for the card's diff.
        `stakes`, `carried_results`, `argument_rules`: what is at stake (backend/approvals/stakes_card.py)."""
        now = self._clock()
        approval = Approval(
            id=uuid.uuid4().hex,
            session_id=session_id,
            kind=kind,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            arguments=arguments,
            annotations=annotations or ToolAnnotations(),
            reason=reason,
            suggested_rules=suggested_rules or [],
            always_scope=always_scope,
            tool_change=tool_change,
            stakes=stakes or [],
            carried_results=carried_results or [],
            argument_rules=argument_rules or [],
            created_at=now,
            expires_at=now + timedelta(seconds=self.timeout if timeout is None else timeout),
        )
        await self._store.save_approval(approval)
        await self._bus.publish(session_id, "approval.requested", approval.model_dump(mode="json"))
        return approval

    async def latest_for_call(self, session_id: str, tool_call_id: str) -> Approval | None:
        """The newest approval of a tool call, whatever its status (used after a restart)."""
        found = [a for a in await self._store.list_approvals(session_id=session_id) if a.tool_call_id == tool_call_id]
        return found[-1] if found else None

    async def wait(self, approval_id: str) -> Approval:
        """Wait for the answer, bounded by the approval's expiry; expiry denies."""
        while True:
            approval = await self._store.get_approval(approval_id)
            if approval.status != "pending":
                return approval
            remaining = (approval.expires_at - self._clock()).total_seconds()
            if remaining <= 0:
                return await self._close(approval, "expired", self._timeout_decision(approval), "timeout")
            waiter = self._waiters.setdefault(approval_id, asyncio.get_running_loop().create_future())
            try:
                with self.watch.watching(approval_id):  # hears answers given in another process
                    await asyncio.wait_for(asyncio.shield(waiter), timeout=remaining)
            except TimeoutError:
                pass
            finally:
                if waiter.done():
                    self._waiters.pop(approval_id, None)

    def _timeout_decision(self, approval: Approval) -> Decision:
        waited = (approval.expires_at - approval.created_at).total_seconds()
        return Decision(kind="deny", message=f"No answer within {waited:.0f} s: the approval timed out and was denied.")

    async def answer(
        self, approval_id: str, decision: Decision, *, by: DecidedBy = "user", decider: Decider = OVERSEER
    ) -> Approval:
        """Apply an answer once. Unknown ids and closed approvals are refused.

        People answer through `backend.app.approvals.ApprovalService`, which checks their role and
        rules first; the core calls this directly only for its own decisions (rules, timeouts).
        """
        try:
            approval = await self._store.get_approval(approval_id)
        except NotFound as exc:
            raise ApprovalNotFound(f"no approval {approval_id!r}") from exc
        if approval.status == "pending" and approval.expires_at <= self._clock():
            await self._close(approval, "expired", self._timeout_decision(approval), "timeout")
            raise ApprovalClosed(f"approval {approval_id} expired at {approval.expires_at.isoformat()}")
        return await self._close(approval, _status_of(decision), decision, by, decider)

    async def settle(self, approval_id: str, decision: Decision, *, by: DecidedBy) -> Approval:
        """Close a pending approval with the verdict the rules now give its call by themselves.

        For a call resumed after a restart: its expiry may have passed while nobody could
        answer, but the question no longer needs an answer, so the rules' verdict is what it
        ends with (an expired approval under a call that then runs would tell a lie).
        """
        approval = await self._store.get_approval(approval_id)
        status = "allowed" if decision.allows else "denied"
        return await self._close(approval, status, decision, by)

    async def cancel(self, approval_id: str, message: str, *, decider: Decider = OVERSEER) -> None:
        """Withdraw a pending approval (its session stopped or deleted); no tool runs for it.

        `decider`: who withdrew it (the person who deleted the session), else Overseer itself."""
        try:
            approval = await self._store.get_approval(approval_id)
            await self._close(approval, "cancelled", Decision(kind="deny", message=message), "stop", decider)
        except (ApprovalClosed, NotFound):
            pass

    async def _close(
        self, approval: Approval, status: str, decision: Decision, by: DecidedBy, decider: Decider = OVERSEER
    ) -> Approval:
        async with self._lock:
            current = await self._store.get_approval(approval.id)
            if current.status != "pending":
                raise ApprovalClosed(f"approval {approval.id} is already {current.status}")
            closed = current.model_copy(
                update={
                    "status": status,
                    "decision": decision,
                    "decided_by": by,
                    "decider": decider,
                    "decided_at": self._clock(),
                }
            )
            if not await self._store.close_approval(closed):  # another process answered first
                raise ApprovalClosed(f"approval {approval.id} was answered meanwhile")
        await self._bus.publish(
            closed.session_id,
            "approval.resolved",
            {
                "id": closed.id,
                "status": status,
                "decision": decision.model_dump(mode="json"),
                "decided_by": by,
                "decider": decider.model_dump(mode="json"),
            },
        )
        waiter = self._waiters.pop(closed.id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        return closed

    async def pending(self, *, session_id: str | None = None) -> list[Approval]:
        return await self._store.list_approvals(status="pending", session_id=session_id)


def _status_of(decision: Decision) -> str:
    """An approval's status once `decision` closes it (`cancel` only answers elicitations)."""
    if decision.kind == "cancel":
        return "cancelled"
    return "allowed" if decision.allows else "denied"
