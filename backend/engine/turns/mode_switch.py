"""The gate at the end of a mode with a `next_mode`: plan ends, a person approves the plan.

When a person's session in such a mode finishes with an answer, an approval (kind
"mode_switch") asks whether to switch to the next mode and carry the answer out. The person may
edit the plan (or the mode) and allow, deny with feedback (the agent revises in the same mode),
or just deny. The approval is persisted like any other, so the question survives a restart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from backend.domain.models import Approval, Session
from backend.modes.model import Mode
from backend.approvals.broker import ApprovalBroker

GATE_TOOL = "switch_mode"
GATE_TIMEOUT = 7 * 24 * 3600.0
"""A plan may wait for its reader until tomorrow; an expired gate only means "not now"."""


@dataclass(frozen=True)
class SwitchOutcome:
    """What to do after the gate: run again with `message` in `mode`, or stop here."""

    action: Literal["run", "end"]
    mode: str
    message: str = ""


def offers_switch(session: Session, mode: Mode, answer: str) -> bool:
    """Only a person's own sessions: a workflow, a schedule or a parent agent has no one to ask."""
    return session.origin == "user" and bool(mode.next_mode) and mode.next_mode != mode.name and bool(answer.strip())


def switch_call_id(answer_idx: int) -> str:
    """The gate's key: the index of the message holding the plan it asks about."""
    return f"mode-switch:{answer_idx}"


async def open_switch(broker: ApprovalBroker, session: Session, mode: Mode, answer: str, answer_idx: int) -> Approval:
    assert mode.next_mode
    return await broker.open(
        session_id=session.id,
        kind="mode_switch",
        tool_call_id=switch_call_id(answer_idx),
        tool_name=GATE_TOOL,
        arguments={"mode": mode.next_mode, "plan": answer},
        reason=f"The {mode.name} mode is done. Switch to {mode.next_mode} mode and carry out this plan?",
        timeout=GATE_TIMEOUT,
    )


async def pending_switch(broker: ApprovalBroker, session_id: str) -> Approval | None:
    found = [a for a in await broker.pending(session_id=session_id) if a.kind == "mode_switch"]
    return found[-1] if found else None


def switch_outcome(approval: Approval, current_mode: str) -> SwitchOutcome:
    """Read an answered gate. Edited arguments win over the proposed ones."""
    decision = approval.decision
    if decision is None or approval.status != "allowed":
        feedback = (decision.message or "").strip() if decision is not None and approval.decided_by == "user" else ""
        if not feedback:
            return SwitchOutcome(action="end", mode=current_mode)
        return SwitchOutcome(
            action="run",
            mode=current_mode,
            message=f"The person did not approve the plan. They said: {feedback}\n\nRevise the plan accordingly.",
        )
    arguments = {**approval.arguments, **(decision.updated_arguments or {})}
    mode = str(arguments.get("mode") or approval.arguments["mode"])
    plan = str(arguments.get("plan") or "").strip()
    edited = decision.updated_arguments is not None and plan != str(approval.arguments.get("plan", "")).strip()
    said = "approved this plan, with their edits," if edited else "approved this plan"
    return SwitchOutcome(
        action="run",
        mode=mode,
        message=f"The person {said} and switched the session to {mode} mode. Carry it out now.\n\n{plan}",
    )
