"""The gate between two workflow steps: a person's approval before the next step starts.

A gate is an ordinary persisted approval (kind "workflow_step") on the finished step's session,
keyed by `gate_key`, so it survives a restart and the dashboard's inbox shows it; the person
allows, denies, or edits the next step's prompt and allows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from backend.domain.models import Approval, EventType
from backend.approvals.broker import ApprovalBroker
from backend.domain.workflows import WorkflowRun

GATE_TIMEOUT = 7 * 24 * 3600.0
"""How long a gate waits for a person: a week, since they may answer tomorrow. Expiry denies."""

RunUpdate = Callable[[str, Callable[[WorkflowRun], WorkflowRun]], Awaitable[WorkflowRun]]
"""Reads, changes and writes an active run (the runner's, which holds the run's lock)."""


class RunEvents(Protocol):
    """Publishes a workflow event about step `index` of `run` on a session's stream."""

    async def __call__(
        self, session_id: str, type_: EventType, run: WorkflowRun, index: int, **data: Any
    ) -> None: ...


def gate_key(run_id: str, next_index: int) -> str:
    """The approval's `tool_call_id` for the gate before step `next_index` (0-based)."""
    return f"workflow:{run_id}:{next_index}"


@dataclass(kw_only=True)
class GateAnswer:
    """A person's answer at a gate, and the prompt the next step starts with if it is allowed."""

    approval: Approval
    prompt: str
    """The rendered prompt, or the person's edit of it."""
    edited: bool = False

    @classmethod
    def read(cls, approval: Approval, prompt: str) -> GateAnswer:
        """Read an answered approval; an edit counts only when it is a non-blank, different prompt."""
        if approval.status == "allowed":
            updated = approval.decision.updated_arguments if approval.decision else None
            asked = (updated or {}).get("prompt")
            if isinstance(asked, str) and asked.strip() and asked != prompt:
                return cls(approval=approval, prompt=asked, edited=True)
        return cls(approval=approval, prompt=prompt)

    @property
    def allowed(self) -> bool:
        """Whether the next step may start."""
        return self.approval.status == "allowed"

    @property
    def outcome(self) -> Literal["stopped", "denied"]:
        """How the run, and the step that never started, end when the gate was not allowed."""
        return "stopped" if self.approval.status == "cancelled" else "denied"

    @property
    def reason(self) -> str:
        """Why the gate was not allowed: the person's message, else its status."""
        decision = self.approval.decision
        return (decision.message if decision else None) or f"The gate was {self.approval.status}."


class WorkflowGates:
    """Asks at, and withdraws, the gates before workflow steps."""

    def __init__(
        self,
        *,
        broker: ApprovalBroker,
        update: RunUpdate,
        publish: RunEvents,
        timeout: float = GATE_TIMEOUT,
    ) -> None:
        """`update` and `publish`: the runner's, so a run's row has one writer and its events one shape."""
        self.broker = broker
        self.update = update
        self.publish = publish
        self.timeout = timeout

    async def ask(self, run: WorkflowRun, prompt: str) -> GateAnswer:
        """Ask whether the run's current step may start with `prompt`, and wait for the answer.

        After a restart, the approval already asked is waited for again, never a second one.
        """
        i = run.current
        previous = run.steps[i - 1]
        assert previous.session_id is not None
        approval_id = run.steps[i].approval_id
        if approval_id is None:
            approval_id = await self._open(run, prompt)
        answer = GateAnswer.read(await self.broker.wait(approval_id), prompt)
        await self.publish(
            previous.session_id,
            "workflow.gate",
            run,
            i,
            approval_id=answer.approval.id,
            status=answer.approval.status,
            edited=answer.edited,
        )
        return answer

    async def withdraw(self, run: WorkflowRun) -> None:
        """Cancel the gate pending before the run's current step, if there is one."""
        if run.current == 0 or run.steps[run.current].status != "pending":
            return
        previous = run.steps[run.current - 1].session_id or ""
        approval = await self.broker.latest_for_call(previous, gate_key(run.id, run.current))
        if approval is not None and approval.status == "pending":
            await self.broker.cancel(approval.id, "The workflow run was stopped.")

    async def _open(self, run: WorkflowRun, prompt: str) -> str:
        """Open the gate before the run's current step and record it on the run; its approval id."""
        i = run.current
        step, previous = run.steps[i], run.steps[i - 1]
        assert previous.session_id is not None
        n = len(run.steps)
        key = gate_key(run.id, i)
        # Written before the approval is visible, so nobody sees a gate on a "running" run.
        await self.update(run.id, lambda r: r.model_copy(update={"status": "waiting_approval"}))
        # Opened by a process that died before it could record the approval's id.
        approval = await self.broker.latest_for_call(previous.session_id, key)
        if approval is None:
            approval = await self.broker.open(
                session_id=previous.session_id,
                tool_call_id=key,
                tool_name="workflow_step",
                arguments={
                    "workflow": run.workflow,
                    "step": i + 1,
                    "of": n,
                    "mode": step.mode,
                    "prompt": prompt,
                },
                reason=(
                    f"Step {i} of {n} ({previous.mode}) is done. "
                    f"Start step {i + 1} ({step.mode}) with this prompt?"
                ),
                kind="workflow_step",
                timeout=self.timeout,
            )
        approval_id = approval.id
        await self.update(run.id, lambda r: r.with_step(i, approval_id=approval_id))
        await self.publish(
            previous.session_id, "workflow.gate", run, i, approval_id=approval_id, status="pending"
        )
        return approval_id
