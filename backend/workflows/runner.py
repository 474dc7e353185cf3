"""WorkflowRunner: runs a workflow's steps as sessions, with a person's approval between steps.

A run is a small state machine kept in the store: each transition reads the run, does one thing
(start a step's session, wait for it, ask at a gate) and writes the result. That is what makes a
run resumable: after a restart, `recover()` drives every run left active from where the store
says it is. The gates between steps are `backend.workflows.gates`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any

from backend.domain.errors import BadRequest, NotFound
from backend.domain.models import ACTIVE_STATUSES, EventType, Session, utcnow
from backend.domain.session_options import SessionOptions
from backend.engine.events import EventBus
from backend.paths import existing_directory
from backend.engine.runner import SessionRunner
from backend.approvals.broker import ApprovalBroker
from backend.store.base import Store
from backend.workflows.files import Modes, WorkflowError, WorkflowLibrary, check_mode, render_prompt
from backend.workflows.gates import GATE_TIMEOUT, WorkflowGates
from backend.domain.workflows import StepRun, StepRunStatus, Workflow, WorkflowRun, WorkflowRunStatus

log = logging.getLogger(__name__)

WAIT_SLICE = 3600.0
"""A step's session is waited for in bounded slices; a long run is simply waited for again."""
STOP_TIMEOUT = 10.0


class WorkflowRunner:
    """Starts, drives, stops and recovers workflow runs."""

    def __init__(
        self,
        *,
        store: Store,
        bus: EventBus,
        runner: SessionRunner,
        broker: ApprovalBroker,
        library: WorkflowLibrary,
        modes: Modes | None = None,
        gate_timeout: float = GATE_TIMEOUT,
    ) -> None:
        """`modes`: the host's mode registry, to check the steps' modes."""
        self.store = store
        self.bus = bus
        self.runner = runner
        self.library = library
        self.modes = modes
        self.gates = WorkflowGates(
            broker=broker, update=self._update, publish=self._event, timeout=gate_timeout
        )
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    # definitions

    def definitions(self) -> list[Workflow]:
        """Every usable definition (built-ins and the person's), by name."""
        return self.library.list(modes=self.modes)

    def definition(self, name: str) -> Workflow:
        """One definition: UnknownWorkflow (a NotFound) or WorkflowError (a BadRequest)."""
        return self.library.get(name, modes=self.modes)

    # runs

    async def start(
        self, name: str, input: str, *, workspace: str | None = None, chooses_workspace: bool = False  # noqa: A002
    ) -> WorkflowRun:
        """Start a run: its first step's session is created before this returns.

        `workspace` lies under an allowed root (WorkspaceRefused else); with `chooses_workspace`
        (the caller is no admin) it is one of the allowed workspaces exactly."""
        workflow = self.definition(name)
        if workspace is not None and existing_directory(workspace) is None:
            raise BadRequest(f"workspace {workspace} is not a directory")
        if workspace is not None and self.runner.workspaces is not None:
            workspace = str(self.runner.workspaces.check(workspace, chooser=chooses_workspace))
        run = WorkflowRun(
            id=uuid.uuid4().hex,
            workflow=workflow.name,
            description=workflow.description,
            input=input,
            workspace=workspace,
            steps=[
                StepRun(index=i, mode=step.mode, template=step.prompt, approve=step.approve)
                for i, step in enumerate(workflow.steps)
            ],
        )
        await self.store.save_workflow_run(run)
        try:
            await self._advance(run.id)
        except Exception as exc:
            await self._fail_internally(run.id, exc)
            raise
        self._drive(run.id)
        return await self.store.get_workflow_run(run.id)

    async def runs(self, *, workflow: str | None = None, limit: int = 100) -> list[WorkflowRun]:
        """Runs newest first, optionally of one workflow."""
        return await self.store.list_workflow_runs(workflow=workflow, limit=limit)

    async def run(self, run_id: str) -> WorkflowRun:
        """One run, as stored (NotFound for no such run)."""
        return await self.store.get_workflow_run(run_id)

    async def stop(self, run_id: str) -> WorkflowRun:
        """Stop a run: its step's session is stopped, its pending gate withdrawn; it ends `stopped`."""
        run = await self.store.get_workflow_run(run_id)
        if not run.active:
            return run
        task = self._tasks.get(run_id)
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=STOP_TIMEOUT)
        for session in await self.store.list_sessions(statuses=ACTIVE_STATUSES, limit=10_000):
            if session.workflow_run_id == run_id:
                await self.runner.stop(session.id)
        await self.gates.withdraw(await self.store.get_workflow_run(run_id))
        return await self._finish(run_id, "stopped", "Stopped by a person.", step_status="stopped")

    async def wait(self, run_id: str, timeout: float | None = None) -> WorkflowRun:
        """Wait (bounded) until the run is no longer being driven; returns it as stored."""
        task = self._tasks.get(run_id)
        if task is not None and not task.done():
            # asyncio.wait, not wait_for: a run that was stopped (its task cancelled) is a result.
            await asyncio.wait({task}, timeout=timeout)
            if not task.done():
                raise TimeoutError(f"workflow run {run_id} is still going after {timeout} s")
        return await self.store.get_workflow_run(run_id)

    async def recover(self) -> list[str]:
        """Drive again every run a previous process left running or waiting at a gate.

        Call it after the session runner's recovery, so a step's session is found running.
        """
        recovered = []
        for run in await self.store.list_workflow_runs(statuses=["running", "waiting_approval"], limit=10_000):
            task = self._tasks.get(run.id)
            if task is not None and not task.done():
                continue
            self._drive(run.id, recovered=True)
            recovered.append(run.id)
        return recovered

    async def aclose(self) -> None:
        """Stop driving; runs stay as stored, to be recovered at the next start."""
        tasks = [t for t in self._tasks.values() if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=STOP_TIMEOUT)

    # driving

    def _drive(self, run_id: str, *, recovered: bool = False) -> None:
        task = asyncio.create_task(self._loop(run_id, recovered), name=f"workflow-{run_id}")
        self._tasks[run_id] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._tasks.get(run_id) is done:
                del self._tasks[run_id]

        task.add_done_callback(forget)

    async def _loop(self, run_id: str, adopt: bool) -> None:
        try:
            while await self._advance(run_id, adopt=adopt):
                adopt = False
        except NotFound as exc:  # a person deleted a step's session (and the gate on it) mid-run
            await self._finish(run_id, "failed", f"A step's session or gate was deleted: {exc}", step_status="error")
        except Exception as exc:
            await self._fail_internally(run_id, exc)

    async def _fail_internally(self, run_id: str, exc: Exception) -> None:
        log.error("workflow run %s failed", run_id, exc_info=exc)
        detail = f"Internal error: {type(exc).__name__}: {exc}"
        await self._finish(run_id, "failed", detail, step_status="error")

    async def _advance(self, run_id: str, *, adopt: bool = False) -> bool:
        """One transition of the run; False once there is nothing more to do for now."""
        run = await self.store.get_workflow_run(run_id)
        if not run.active:
            return False
        step = run.steps[run.current]
        if step.status == "pending":
            return await self._begin_step(run, adopt=adopt)
        if step.status == "running" and step.session_id is not None:
            return await self._end_step(run, step)
        # A step in a final state while the run is active: the write that ended the run was lost.
        await self._finish(run_id, "failed", f"Step {step.index + 1} ended {step.status}.")
        return False

    async def _begin_step(self, run: WorkflowRun, *, adopt: bool) -> bool:
        i = run.current
        step = run.steps[i]
        previous = run.steps[i - 1] if i > 0 else None
        prompt = render_prompt(step.template, input=run.input, previous=previous.output if previous else None)
        edited = False
        if previous is not None and previous.approve:
            answer = await self.gates.ask(run, prompt)
            if not answer.allowed:
                await self._finish(run.id, answer.outcome, answer.reason, step_status=answer.outcome)
                return False
            prompt, edited = answer.prompt, answer.edited
        try:
            check_mode(step.mode, self.modes, where=f"step {i + 1} of workflow {run.workflow!r}")
        except WorkflowError as exc:
            await self._finish(run.id, "failed", str(exc), step_status="error")
            return False
        # Shielded: a stop arriving mid-start must not leave a session nobody records.
        return await asyncio.shield(self._start_session(run, step, prompt, edited, adopt=adopt))

    async def _start_session(
        self, run: WorkflowRun, step: StepRun, prompt: str, edited: bool, *, adopt: bool
    ) -> bool:
        """Create the step's session (or adopt one a dead process created) and record it as running."""
        i = step.index
        session_id = await self._orphan_session(run) if adopt else None
        if session_id is None:
            try:
                session = await self.runner.create(
                    prompt=prompt,
                    options=SessionOptions(
                        title=f"{run.workflow} · step {i + 1}/{len(run.steps)} ({step.mode})",
                        mode=step.mode,
                        workspace=run.workspace,
                        origin="workflow",
                        workflow_run_id=run.id,
                    ),
                )
            except (ValueError, NotFound) as exc:
                detail = f"Step {i + 1} could not start: {exc}"
                await self._finish(run.id, "failed", detail, step_status="error")
                return False
            session_id = session.id
        started = session_id
        updated = await self._update(
            run.id,
            lambda r: r.with_step(
                i,
                status="running",
                session_id=started,
                prompt=prompt,
                prompt_edited=edited,
                started_at=utcnow(),
            ).model_copy(update={"status": "running"}),
        )
        if not updated.active:
            # Stopped while the session was being created.
            await self.runner.stop(session_id)
            return False
        await self._event(session_id, "workflow.step", updated, i, status="running", prompt_edited=edited)
        return True

    async def _orphan_session(self, run: WorkflowRun) -> str | None:
        """A session of this run no step records: created just before the previous process died."""
        known = {s.session_id for s in run.steps if s.session_id}
        for session in await self.store.list_sessions(limit=10_000):
            if session.workflow_run_id == run.id and session.id not in known:
                return session.id
        return None

    async def _end_step(self, run: WorkflowRun, step: StepRun) -> bool:
        assert step.session_id is not None
        session = await self._wait_session(step.session_id)
        if session is None:
            return False
        i, n = step.index, len(run.steps)
        if session.status == "completed":
            output = await self._final_answer(session.id)
            last = i == n - 1
            updated = await self._update(
                run.id,
                lambda r: r.with_step(i, status="completed", output=output, finished_at=utcnow()).model_copy(
                    update={"current": i if last else i + 1}
                ),
            )
            await self._event(session.id, "workflow.step", updated, i, status="completed")
            if last:
                await self._finish(run.id, "completed", None)
                return False
            return updated.active
        if session.status == "stopped":
            await self._event(session.id, "workflow.step", run, i, status="stopped")
            await self._finish(run.id, "stopped", f"Step {i + 1}'s session was stopped.", step_status="stopped")
            return False
        error = session.error or f"the session ended {session.status}"
        await self._event(session.id, "workflow.step", run, i, status="error", error=error)
        detail = f"Step {i + 1} ({step.mode}) failed: {error}"
        await self._finish(run.id, "failed", detail, step_status="error", error=error)
        return False

    async def _wait_session(self, session_id: str) -> Session | None:
        """The session once it has ended; None when nobody runs it (left for the next recovery)."""
        while True:
            try:
                session = await self.runner.wait(session_id, timeout=WAIT_SLICE)
            except TimeoutError:
                continue
            except asyncio.CancelledError:
                # The session was stopped (its task cancelled), which is a result; our own
                # cancellation is not.
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                session = await self.store.get_session(session_id)
            if session.status in ACTIVE_STATUSES:
                if self.runner.is_running(session_id):
                    continue
                log.warning("workflow step session %s is active but not running; left for recovery", session_id)
                return None
            return session

    async def _final_answer(self, session_id: str) -> str:
        for message in reversed(await self.store.list_messages(session_id)):
            if message.role == "assistant" and message.content.strip():
                return message.content
        return ""

    # the run's row

    def _lock(self, run_id: str) -> asyncio.Lock:
        return self._locks.setdefault(run_id, asyncio.Lock())

    async def _update(self, run_id: str, change: Callable[[WorkflowRun], WorkflowRun]) -> WorkflowRun:
        """Read, change and write an active run under its lock; an ended run is never changed."""
        async with self._lock(run_id):
            run = await self.store.get_workflow_run(run_id)
            if not run.active:
                return run
            changed = change(run).model_copy(update={"updated_at": utcnow()})
            await self.store.save_workflow_run(changed)
            return changed

    async def _finish(
        self,
        run_id: str,
        status: WorkflowRunStatus,
        detail: str | None,
        *,
        step_status: StepRunStatus | None = None,
        error: str | None = None,
    ) -> WorkflowRun:
        """End an active run (once), marking its current step unless that step already ended."""
        ended: list[WorkflowRun] = []

        def finish(run: WorkflowRun) -> WorkflowRun:
            step = run.steps[run.current]
            if step_status is not None and step.status in ("pending", "running"):
                run = run.with_step(run.current, status=step_status, error=error, finished_at=utcnow())
            run = run.model_copy(update={"status": status, "detail": detail, "finished_at": utcnow()})
            ended.append(run)
            return run

        run = await self._update(run_id, finish)
        if ended:
            # An ended run is never written again, so its lock is no longer needed.
            self._locks.pop(run_id, None)
            where = [s.session_id for s in run.steps if s.session_id]
            if where:
                await self._event(
                    where[-1], "workflow.finished", run, run.current, status=status, detail=detail
                )
        return run

    async def _event(self, session_id: str, type_: EventType, run: WorkflowRun, index: int, **data: Any) -> None:
        step = run.steps[index]
        await self.bus.publish(
            session_id,
            type_,
            {
                "run_id": run.id,
                "workflow": run.workflow,
                "step": index + 1,
                "of": len(run.steps),
                "mode": step.mode,
                **data,
            },
        )
