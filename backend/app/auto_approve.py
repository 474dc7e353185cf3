"""The auto-approve switch at work: a session's asks allowed in the name of whoever turned it on.

Like `overseer run --approve all`, it answers approvals as they are asked, through the one door
for decisions (`ApprovalService.answer`), so every check made there holds for it too: the
decider's role, and whatever may never be allowed without a person looking. Each answer is an
allow once, recorded on the approval and its audit row with the person and the door `auto`.
A deny is never overridden: only an ask becomes an approval at all. Gates between modes,
workflow steps and servers' own requests (questions, sampling) are left to a person; only tool
calls are answered.

It covers what its scope says: "workspace_edits" only file writes and edits inside the session's
workspace (like Claude Code's accept-edits), "edits_and_commands" every tool call. A High-risk call
(backend/rules/risk.py, the card's banner) still asks unless the person chose to include them.

The managed policy may turn the switch off (`disable_auto_approve`): turning it on is refused with
a 403 naming the setting, and a switch left on from before answers nothing. A call the managed
policy's ask rules put to a person is never answered by it (the door refuses, see approvals.py).

It covers only turns started by the person who turned it on: when a user message of the current
turn has another author (another person, an API key, a channel, Overseer itself), the turn's
calls ask as usual, their approvals in the inbox, and a notice in the session says why.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from backend.app.approvals import ApprovalService
from backend.app.managed_policy import check_switch
from backend.auth import Principal
from backend.domain.errors import ApprovalError, DomainError
from backend.domain.models import Approval, AutoApprove, Decider, Decision, Message, Session
from backend.rules.managed import NO_MANAGED_POLICY, ManagedPolicy
from backend.rules.risk import high_risk
from backend.engine.events import EventBus, Subscription
from backend.approvals.broker import ApprovalBroker
from backend.store.base import NotFound, Store

log = logging.getLogger(__name__)


def auto_principal(session: Session) -> Principal | None:
    """Who answers for the session's switch: the person who turned it on (None while it is off).

    Their role as it was then; a decider with no role recorded answers as a viewer, whom the
    door refuses, so the switch fails closed.
    """
    if session.auto_approve is None:
        return None
    by = session.auto_approve.by
    role = by.role if by.role in ("admin", "approver", "viewer") else "viewer"
    return Principal(name=by.name, role=role, kind=by.kind)  # type: ignore[arg-type]  # checked above


def turn_authors(messages: list[Message]) -> list[Decider | None]:
    """The authors of the user messages of the session's current turn: those since the agent's
    last answer in words (an assistant message that called no tools)."""
    authors: list[Decider | None] = []
    for message in reversed(messages):
        if message.role == "assistant" and not message.tool_calls:
            break
        if message.role == "user":
            authors.append(message.author)
    return authors


FILE_EDITS = frozenset({"mcp__file__write_file", "mcp__file__edit_file"})
"""The calls "workspace_edits" covers (when their path is inside the workspace)."""


def inside(workspace: str, path: object) -> bool:
    """Whether `path` (relative to the workspace, or absolute) names a file inside `workspace`,
    symlinks followed."""
    if not isinstance(path, str) or not path or "\0" in path:
        return False
    root = Path(workspace).resolve()
    return (root / path).resolve().is_relative_to(root)


def outside_scope(switch: AutoApprove, approval: Approval, workspace: str) -> str | None:
    """Why the switch leaves this call to a person, or None when it covers it."""
    if switch.scope == "workspace_edits" and not (
        approval.tool_name in FILE_EDITS and inside(workspace, approval.arguments.get("path"))
    ):
        return "its scope is file edits in the workspace"
    if not switch.high_risk and (warning := high_risk(approval.arguments, approval.reason, approval.carried_results)) is not None:
        return f"High-risk calls still ask ({warning})"
    return None


def same_person(author: Decider | None, owner: Decider) -> bool:
    """Whether a message's author is the switch's owner (the same name and kind; any door)."""
    return author is not None and (author.name, author.kind) == (owner.name, owner.kind)


class AutoApprover:
    """Answers the tool approvals of sessions whose auto-approve switch is on, as they are asked."""

    def __init__(
        self,
        *,
        store: Store,
        bus: EventBus,
        approvals: ApprovalService,
        broker: ApprovalBroker,
        managed: ManagedPolicy = NO_MANAGED_POLICY,
    ) -> None:
        self._managed = managed
        self._store = store
        self._bus = bus
        self._approvals = approvals
        self._broker = broker
        self._task: asyncio.Task[None] | None = None
        self._sub: Subscription | None = None

    def check_allowed(self) -> None:
        """LockedByManagedPolicy (403) when the managed policy turns the switch off."""
        check_switch(self._managed, "disable_auto_approve", "auto-approve")

    async def start(self) -> None:
        self._task = asyncio.create_task(self._follow(), name="auto-approve")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if self._sub is not None:
            self._bus.unsubscribe(self._sub)
        if task is not None:
            task.cancel()
            await asyncio.wait({task})

    async def _follow(self) -> None:
        while True:
            # Subscribed before the sweep, so an approval asked in between is seen by one or both
            # (a second answer is refused as closed, and changes nothing).
            self._sub = sub = self._bus.subscribe(None, types=["approval.requested"])
            for approval in await self._broker.pending():  # asked before a restart, or while cut off
                await self.consider(approval)
            async for event in sub:
                if event.type == "approval.requested" and event.data.get("kind", "tool") == "tool":
                    await self.consider(Approval.model_validate(event.data))
            if not sub.overflowed:  # unsubscribed: the host is closing
                return
            log.warning("auto-approve fell behind the event feed; catching up from the pending approvals")

    async def consider(self, approval: Approval, *, asked_before: bool = False) -> bool:
        """Answer `approval` if its session's switch is on; True when this answer allowed it.

        Only what was asked while the switch was on, unless `asked_before`: the person, turning
        it on, said to allow what was already waiting too.
        """
        if approval.kind != "tool" or approval.status != "pending" or self._managed.disable_auto_approve:
            return False
        try:
            session = await self._store.get_session(approval.session_id)
        except NotFound:
            return False
        principal = auto_principal(session)
        if principal is None or session.auto_approve is None:
            return False
        if approval.created_at < session.auto_approve.since and not asked_before:
            return False
        owner = session.auto_approve.by
        if (why := outside_scope(session.auto_approve, approval, session.workspace)) is not None:
            log.info("auto-approve left approval %s to a person: %s", approval.id, why)
            return False
        others = [a for a in turn_authors(await self._store.list_messages(session.id)) if not same_person(a, owner)]
        if others:
            who = ", ".join(sorted({a.label if a else "Overseer itself" for a in others}))
            text = (
                f"Auto-approve (turned on by {owner.name}) covers only turns {owner.name}'s messages start; "
                f"this turn has a message from {who}, so this call waits for a person."
            )
            log.info("auto-approve left approval %s to a person: %s", approval.id, text)
            await self._bus.publish(session.id, "notice", {"command": "auto_approve", "text": text})
            return False
        decision = Decision(kind="allow_once", message=f"auto-approve, turned on by {principal.name}")
        try:
            await self._approvals.answer(approval.id, decision, by=principal, via="auto")
        except (ApprovalError, DomainError) as exc:
            # Answered meanwhile, or refused at the door: then it waits for a person, as asked.
            log.info("auto-approve left approval %s to a person: %s", approval.id, exc)
            return False
        return True

    async def approve_pending(self, session_id: str) -> int:
        """Answer the session's approvals already waiting (the person said so); how many it allowed."""
        allowed = 0
        for approval in await self._broker.pending(session_id=session_id):
            allowed += await self.consider(approval, asked_before=True)
        return allowed
