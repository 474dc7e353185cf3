"""The gate's second half: running a call it allowed, and recording how every call ended.

`ToolGate` (backend/approvals/gate.py) decides; this base class holds what happens after: the
allow written with the running state before the tool starts, the checkpoint, the sandbox plan,
the hooks around the call, and one whole record of the end (tool message, `tool.result`, the
call's row) whatever the end was: a result, a refusal, an interruption or a stop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from functools import partial
from typing import Any, Literal

from backend.approvals.broker import ApprovalBroker
from backend.approvals.confinement import CommandPlan, Confinement, ConfinementError
from backend.approvals.configured_hooks import ConfiguredHooks
from backend.approvals.gate_types import ERROR_HINT, INTERRUPTED, GateBus, GateDecision, GateSession, StepCheckpoints, ToolRunner
from backend.approvals.hook_gate import place_of
from backend.approvals.result_taint import ResultTaint
from backend.approvals.tool_hooks import ToolHooks
from backend.approvals.untrusted import UntrustedContent, marked
from backend.domain.checkpoints import Checkpoint
from backend.domain.media import MediaFile
from backend.mcp.tasks import kept_while
from backend.domain.models import OVERSEER, Approval, AuditEntry, DecidedBy, Decider, Event, Message, ToolCallRecord, utcnow
from backend.domain.tools import ToolResult
from backend.rules.policy_engine import PolicyEngine, ToolCallView
from backend.rules.search_results import search_redactor
from backend.sandbox.launcher import SandboxUnavailable
from backend.store.base import Store, Written
from backend.store.media import MediaStore
from backend.store.ready import then

STOPPED = "The session was stopped."
"""What a stop writes on the approvals it withdraws."""


class GateRunning:
    """Runs allowed calls and records every call's end; `ToolGate` sets these in its __init__."""

    broker: ApprovalBroker
    store: Store
    bus: GateBus
    tools: ToolRunner
    hooks: ToolHooks
    media: MediaStore | None
    confinement: Confinement | None
    checkpoints: StepCheckpoints | None
    untrusted: UntrustedContent
    configured_hooks: ConfiguredHooks
    result_taint: ResultTaint
    stoppers: dict[str, Decider]
    shutting_down: bool

    policy: PolicyEngine  # a property of ToolGate: the rules in force at each call

    async def _execute(
        self,
        session: GateSession,
        record: ToolCallRecord,
        view: ToolCallView,
        allow: AuditEntry,
        unprotect: tuple[str, ...] = (),
        *,
        outside: bool = False,
    ) -> ToolResult:
        record.status = "running"
        record.started_at = utcnow()
        started = {"id": record.id, "name": record.name, "arguments": record.arguments, "decision": record.decision}

        async def start(checkpoint: Checkpoint | None, taken: dict[str, Any] | None) -> None:
            # The allow decision, the running state and the announcement land together, before
            # the tool starts: one transaction, not three; with the checkpoint of the workspace
            # taken just before, its row and `checkpoint.created` too.
            if checkpoint is None or taken is None:
                await self.bus.publish(
                    session.session_id,
                    "tool.started",
                    started,
                    persist=lambda event: then(self.store.record_decision(allow, record, event=event), event_of),
                )
                return
            await self.bus.publish_pair(
                session.session_id,
                ("tool.started", started),
                ("checkpoint.created", taken),
                persist=lambda first, second: then(
                    self.store.record_start(allow, record, checkpoint, event=first, second=second), events_of
                ),
            )

        if self.checkpoints is not None:  # the workspace as it was before this step, stored before it runs
            await self.checkpoints.before_step(
                session_id=session.session_id,
                workspace=session.workspace,
                call_id=record.id,
                tool_name=record.name,
                annotations=view.annotations,
                start=start,
            )
        else:
            await start(None, None)
        plan: CommandPlan | None = None
        try:
            if self.confinement is not None and self.confinement.applies(record.name):
                plan = self.confinement.plan(
                    workspace=session.workspace,
                    policy=self.policy,
                    fence=session.fence,
                    unprotect=unprotect,
                    proxy_socket=await self.confinement.network_for(session.session_id, session.sandbox),
                    outside=outside,
                )
            result = await self._call_tool(session, record, view, sandbox=plan.launch if plan is not None else None)
            if plan is not None and self.confinement is not None:
                result = self.confinement.after(plan, result, session_id=session.session_id)
        except (ConfinementError, SandboxUnavailable) as exc:  # nothing ran: the model is told why
            result = ToolResult.error(f"The command was not run: {exc}")
        except Exception as exc:  # a fault in the pool itself: the model still gets a result
            result = await self._tool_fault(session, view, exc, f"Tool {record.name} failed")
        return await self._after_tool(session, record, view, result)

    async def _call_tool(
        self,
        session: GateSession,
        record: ToolCallRecord,
        view: ToolCallView,
        *,
        sandbox: Mapping[str, Any] | None = None,
        resume_task: str | None = None,
    ) -> ToolResult:
        """The one call to the tool runner, for a new call and for a task collected after a restart."""
        hidden = partial(self.policy.hides, workspace=session.workspace)
        extra: dict[str, Any] = {}
        if sandbox is not None:
            extra["sandbox"] = sandbox
        if resume_task is not None:
            extra["resume_task"] = resume_task
        # A task of a call a stop cuts short is cancelled on its server; a shutdown leaves it to the next host.
        with kept_while(lambda: self.shutting_down):
            return await self.tools.call(
                record.name,
                view.arguments,
                workspace=session.workspace,
                session_id=session.session_id,
                call_id=record.id,
                redact=search_redactor(record.name, view.arguments, hidden),
                on_progress=partial(self._progress, session.session_id, record.id),
                on_task=partial(self._keep_task, record),
                **extra,
            )

    async def _tool_fault(self, session: GateSession, view: ToolCallView, exc: Exception, what: str) -> ToolResult:
        """A fault in the tool runner itself: a tool hook may replace it, else the model reads `what` and why."""
        replaced = await self.hooks.on_tool_error(session_id=session.session_id, call=view, error=exc)
        return replaced or ToolResult.error(f"{what}: {type(exc).__name__}: {exc}")

    async def _after_tool(
        self, session: GateSession, record: ToolCallRecord, view: ToolCallView, result: ToolResult
    ) -> ToolResult:
        """What every tool's result goes through once the tool returned, before the model reads it:
        the tool hooks, the PostToolUse hooks, the result-text detector, then the whole record."""
        result = await self.hooks.after_tool(session_id=session.session_id, call=view, result=result)
        result = await self.configured_hooks.post_tool_use(
            place_of(session), call_id=record.id, name=record.name, arguments=view.arguments, result=result
        )
        self.result_taint.remember(session.session_id, tool_name=record.name, tool_call_id=record.id, text=result.text)
        return await self._finish(record, result, "error" if result.is_error else "done")

    async def _keep_task(self, record: ToolCallRecord, task_id: str) -> None:
        """The server runs the call as a task: its id goes on the call's row, for a restart."""
        record.task_id = task_id
        await self.store.save_tool_call(record)

    async def resume_task(self, session: GateSession, record: ToolCallRecord) -> ToolResult:
        """A call the previous process left running as an MCP task: its result is fetched from
        the server (the allow was recorded before it first ran), never a second call, and goes
        through the same hooks and recording a result always does. A task the server no longer
        knows ends the call as an error, as an interruption would. A stop while it is collected
        ends it as stopped (the server is asked to cancel the task); a shutdown leaves it running."""
        assert record.task_id is not None
        info = self.tools.tool(record.name)
        view = ToolCallView(
            name=record.name,
            arguments=record.arguments,
            workspace=session.workspace,
            annotations=info.annotations if info is not None else None,
        )
        try:
            try:
                result = await self._call_tool(session, record, view, resume_task=record.task_id)
            except Exception as exc:  # a fault in the pool itself: the model still gets a result
                collected = f"{INTERRUPTED} Its task could not be collected"
                result = await self._tool_fault(session, view, exc, collected)
            return await self._after_tool(session, record, view, result)
        except asyncio.CancelledError:
            if not self.shutting_down:
                await asyncio.shield(self._stopped(record, None))
            raise

    async def _progress(
        self, session_id: str, call_id: str, progress: float, total: float | None, message: str | None
    ) -> None:
        """A running tool's progress report, as an ephemeral `tool.progress` for its tool card."""
        data = {"id": call_id, "progress": progress, "total": total, "message": message}
        await self.bus.publish_delta(session_id, "tool.progress", data)

    async def _finish(self, record: ToolCallRecord, result: ToolResult, status: str) -> ToolResult:
        if result.outside_text is not None:  # issue 34: the model reads it as data, the transcript is tagged
            result = marked(result)
            record.untrusted = result.outside_text
        if result.is_error and not result.text.endswith(ERROR_HINT):
            result = result.model_copy(update={"text": result.text + ERROR_HINT})
        media: list[MediaFile] = []
        if self.media is not None and (result.images or result.audio or result.user_media):
            media = await asyncio.to_thread(self.media.keep, record.session_id, result)
        record.status = status  # type: ignore[assignment]
        # The card's text: the message (the model's) holds none of what was for the person alone.
        record.result = result.card_text()
        record.is_error = result.is_error
        record.media = media
        record.finished_at = utcnow()
        message = Message(
            session_id=record.session_id,
            role="tool",
            content=result.text,
            tool_call_id=record.id,
            name=record.name,
            is_error=result.is_error,
            media=media,
        )
        # Whole: a stop arriving meanwhile must not leave the call half-recorded.
        await self.bus.publish(
            record.session_id,
            "tool.result",
            {
                "id": record.id,
                "name": record.name,
                # A call refused before it started has had no `tool.started`: its card learns
                # what was asked, and what refused it, from this event.
                "arguments": record.arguments,
                "decision": record.decision,
                "status": status,
                "is_error": result.is_error,
                "text": record.result,
                "spilled_to": result.spilled_to,
                "media": [m.model_dump() for m in media],
                "structured": result.structured,
                **({"untrusted": True, "source": record.untrusted} if record.untrusted else {}),
            },
            persist=lambda event: then(self.store.finish_tool_call(record, message, event=event), event_of),
            whole=True,
        )
        if record.untrusted:
            await self.untrusted.noted(record, record.untrusted)
        return result

    async def _refuse(self, record: ToolCallRecord, result: ToolResult, status: str) -> GateDecision:
        return GateDecision(record=record, result=await self._finish(record, result, status))

    async def record_interrupted(self, record: ToolCallRecord) -> None:
        """A call the previous process left running: reported to the model, never re-run."""
        await self._finish(record, ToolResult.error(INTERRUPTED), "interrupted")

    async def _stopped(self, record: ToolCallRecord, approval: Approval | None) -> None:
        by = self.stoppers.get(record.session_id, OVERSEER)
        if approval is None:
            approval = await self.broker.latest_for_call(record.session_id, record.id)
        if approval is not None and approval.status == "pending":
            await self.broker.cancel(approval.id, STOPPED, decider=by)
        if record.finished_at is None:
            await self.record_stopped(record, by, ran=record.status == "running")

    async def record_stopped(self, record: ToolCallRecord, by: Decider, *, ran: bool = False) -> None:
        """A call a stop cut short, told to the model as such: it is never asked or run again."""
        when = "before this tool call finished" if ran else "before it ran"
        await self._finish(record, ToolResult.error(f"Stopped by {by.name} {when}."), "stopped")

    async def _audit(
        self,
        record: ToolCallRecord,
        decision: Literal["allow", "deny"],
        by: DecidedBy,
        detail: str,
        latency_ms: float = 0.0,
        decider: Decider = OVERSEER,
    ) -> None:
        await self.store.add_audit(AuditEntry.of(record, decision, by, detail, latency_ms, decider))


def event_of(written: Written) -> Event:
    assert written.event is not None
    return written.event


def events_of(written: Written) -> tuple[Event, Event]:
    assert written.event is not None and written.second is not None
    return written.event, written.second
