"""Session lifecycle: create, send, stop, wait, and recover after a restart.

Runs are asyncio tasks; a stop cancels the task, and the gate's cancellation path makes sure no
tool call is left half-recorded. The session row's other writes (status while approvals wait,
usage, edits, ...) are in backend/engine/session_rows.py, which the runner extends.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from backend.agents import AGENTS_FOLDER, Agent, Agents
from backend.config import ToolSelectionConfig
from backend.domain.errors import BadRequest, Conflict
from backend.domain.models import (
    ACTIVE_STATUSES,
    OVERSEER,
    Approval,
    Attachment,
    Decider,
    EngineName,
    Message,
    Session,
)
from backend.domain.session_options import SessionOptions
from backend.domain.tools import ToolInfo
from backend.engine.events import EventBus
from backend.engine.base import Engine, LiteLlmEngine
from backend.engine.budget import BudgetGuard, BudgetReached
from backend.paths import existing_directory
from backend.engine.loop import LoopLimits, LoopResult
from backend.engine.turns.memory import consolidate
from backend.engine.turns.mode_switch import offers_switch, open_switch, pending_switch, switch_call_id, switch_outcome
from backend.engine.placement import LocalPlacement, Placement
from backend.engine.session_rows import SessionRows
from backend.engine.workspaces import WorkspaceRoots
from backend.engine.models.client import ModelClient
from backend.engine.turns.turn import Turn, prepare_turn
from backend.modes.registry import ModeRegistry
from backend.rules.agent_fence import AgentFence
from backend.approvals.gate import ToolGate
from backend.approvals.configured_hooks import HookPlace
from backend.approvals.session_hooks import stop_feedback, submitted_prompt
from backend.skills.catalog import SkillCatalog
from backend.store.base import NotFound, Store

if TYPE_CHECKING:
    from backend.engine.claude_sdk import ClaudeSdkEngine

log = logging.getLogger(__name__)


STOP_WAIT = 10.0
"""Seconds a stop waits for its run to end (and a message sent meanwhile, for the stop)."""


class SessionBusy(Conflict):
    """The session is still running."""


class SessionRunner(SessionRows):
    """Starts and supervises session runs; implements the gate's SessionSink."""

    def __init__(
        self,
        *,
        store: Store,
        bus: EventBus,
        gate: ToolGate,
        list_tools: Callable[[], Awaitable[list[ToolInfo]]],
        model_for: Callable[[Session], ModelClient],
        limits: LoopLimits,
        default_workspace: Path,
        default_model: str,
        modes: ModeRegistry,
        skills: SkillCatalog,
        data_dir: Path,
        memory_window: int = 100,
        claude_sdk: ClaudeSdkEngine | None = None,
        default_engine: EngineName = "litellm",
        secrets: Sequence[str] = (),
        tool_selection: ToolSelectionConfig | None = None,
        agents: Agents | None = None,
        budget: BudgetGuard | None = None,
        workspaces: WorkspaceRoots | None = None,
    ) -> None:
        """`memory_window`: messages a session keeps before older ones are consolidated (0: never).
        `claude_sdk` runs "claude-sdk" sessions; `default_engine` is for sessions that name none.
        `secrets` (the provider's API key, ...) never appear in a stored error or its event.
        `budget`: spending limits checked before each model call (None: none).
        `workspaces`: where sessions may work (backend/engine/workspaces.py; None: anywhere)."""
        super().__init__(store=store, bus=bus, budget=budget, secrets=secrets)
        self.tool_selection = tool_selection or ToolSelectionConfig()
        self.workspaces = workspaces
        self.agents = agents
        """The named agents (issue 19); None: one agent, main, with the default workspace and model."""
        if budget is not None:
            model_for = budget.wrap(model_for)
        self.claude_sdk = claude_sdk
        self.default_engine: EngineName = default_engine
        self.modes = modes
        self.skills = skills
        self.data_dir = data_dir
        self.gate = gate
        self.list_tools = list_tools
        self.model_for = model_for
        self.limits = limits
        self.default_workspace = default_workspace
        self.default_model = default_model
        self.session_mode: Callable[[], str] = lambda: "agent"
        """The mode of a session that names none and whose agent names none (`plan` with defaultMode plan)."""
        self.memory_window = memory_window
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._start_context: dict[str, str] = {}
        """SessionStart hooks' context, kept for the session's first prompt."""
        self.litellm = LiteLlmEngine(store=store, bus=bus, gate=gate, model_for=model_for)
        self.placement: Placement = LocalPlacement(host=self)
        """Where runs execute: here at once (one host), or on any host of a shared Postgres (DBOS)."""

    # lifecycle

    async def create(self, *, options: SessionOptions | None = None, prompt: str | None = None) -> Session:
        """Persist a new session made with `options`; with a prompt it starts working at once.

        The runner takes the options as given (SessionService derives a child's from its parent's
        and copies a fork's history; `fork` is not read here).

        An unknown mode is refused (UnknownMode). Without a workspace, a mode's `default_folder`
        (relative to the default workspace) is used, and created. The session belongs to `agent`
        (main if None; UnknownAgent if no such agent): its workspace, model and mode are the defaults.
        """
        options = options or SessionOptions()
        workspace = options.workspace
        owner = self.agent(options.agent)
        mode = options.mode or (owner.mode if owner else None) or self.session_mode()
        default_workspace = owner.workspace if owner else self.default_workspace
        try:
            chosen = self.modes.get(mode)
        except NotFound as exc:  # a bad request, not a missing session
            raise BadRequest(str(exc)) from exc
        if workspace:
            found = existing_directory(workspace)
            if found is None:
                raise BadRequest(f"workspace {workspace} is not a directory")
            root = self.allowed_workspace(found, chooser=options.chooses_workspace)
        elif chosen.default_folder:
            root = self.allowed_workspace((default_workspace / Path(chosen.default_folder).expanduser()).resolve())
            root.mkdir(parents=True, exist_ok=True)
        else:
            root = self.allowed_workspace(default_workspace)
        if not root.is_dir():
            raise BadRequest(f"workspace {root} is not a directory")
        session = Session(
            id=uuid.uuid4().hex,
            title=options.title or (prompt or "New session").strip().splitlines()[0][:80],
            mode=mode,
            model=options.model or (owner.model if owner else None) or self.default_model,
            engine=options.engine or self.default_engine,
            sdk_session_id=options.sdk_session_id,
            workspace=str(root),
            agent_id=owner.id if owner else (options.agent or "main"),
            parent_id=options.parent_id,
            origin=options.origin or "user",
            schedule_id=options.schedule_id,
            workflow_run_id=options.workflow_run_id,
            instructions=options.instructions,
            created_by=options.created_by,
        )
        await self.store.create_session(session)
        await self.bus.publish(session.id, "session.created", session.model_dump(mode="json"))
        start_context = await self.gate.configured_hooks.session_start(self._hook_place(session))
        if start_context:  # SessionStart hooks: joins the first prompt (backend/approvals/session_hooks.py)
            self._start_context[session.id] = start_context
        if prompt:
            await self.send(session.id, prompt, author=options.created_by)
        return session

    def allowed_workspace(self, folder: Path, *, chooser: bool = False) -> Path:
        """`folder` resolved, if sessions may work there (WorkspaceRefused, saying why, else)."""
        return folder.resolve() if self.workspaces is None else self.workspaces.check(folder, chooser=chooser)

    def configured_workspaces(self) -> list[Path]:
        """The default workspace and every agent's, as they are now."""
        agents = self.agents.list() if self.agents is not None else []
        return [self.default_workspace, *(a.workspace for a in agents)]

    async def send(
        self,
        session_id: str,
        content: str,
        *,
        attachments: list[Attachment] | None = None,
        author: Decider | None = None,
    ) -> Message:
        """Persist a user message first, then make sure a run will read it.

        A message that arrives while a stop is under way waits (bounded) for the stopped run to
        record what it cut short: the model then reads the stopped calls' results, then this."""
        session = await self.store.get_session(session_id)
        content = await submitted_prompt(  # PromptBlocked when a UserPromptSubmit hook refuses it
            self.gate.configured_hooks,
            self._hook_place(session),
            content,
            context=self._start_context.get(session_id, ""),
        )
        self._start_context.pop(session_id, None)
        await self._after_stop(session_id)
        message = await self.store.add_message(
            Message(session_id=session_id, role="user", content=content, attachments=attachments or [], author=author)
        )
        await self.bus.publish(session_id, "message", message.model_dump(mode="json"))
        if not self.is_running(session_id):
            await self._start(session)
        return message

    async def propose(self, session_id: str, messages: list[Message]) -> list[Message]:
        """Persist messages a person put to the session (their words, a step to try again) in
        order, then make sure a run reads them; the caller checked that no run is going on."""
        session = await self.store.get_session(session_id)
        await self._after_stop(session_id)
        stored = []
        for message in messages:
            stored.append(await self.store.add_message(message))
            await self.bus.publish(session_id, "message", stored[-1].model_dump(mode="json"))
        if not self.is_running(session_id):
            await self._start(session)
        return stored

    async def _after_stop(self, session_id: str) -> None:
        """Wait (bounded) for a run being stopped to end; no wait for a run not being stopped."""
        task = self._tasks.get(session_id)
        if task is not None and not task.done() and task.cancelling():
            await asyncio.wait({task}, timeout=STOP_WAIT)

    def is_running(self, session_id: str) -> bool:
        task = self._tasks.get(session_id)
        return task is not None and not task.done()

    async def _start(self, session: Session) -> None:
        await self._update(session.id, status="running", error=None, stop_reason=None)
        await self.placement.place(session.id)

    async def mark_running(self, session_id: str) -> None:
        """A placed run goes on with a message that arrived as it ended: the row says so again."""
        await self._update(session_id, status="running", error=None)

    def run_here(self, session_id: str, *, context: contextvars.Context | None = None) -> asyncio.Task[None]:
        """The session's run in this process: the one going on, or a new one (the placement's call).

        `context`: the run task's context variables (default: the caller's)."""
        task = self._tasks.get(session_id)
        if task is None or task.done():
            task = asyncio.create_task(self._run(session_id), name=f"session-{session_id}", context=context)
            self._tasks[session_id] = task
        return task

    async def _run(self, session_id: str) -> None:
        result = LoopResult(outcome="completed")
        stop_continues = 0  # times Stop hooks sent the model back in this run (bounded)
        try:
            while True:
                # One left by a restart: still pending, or answered before this run looked.
                gate = await pending_switch(self.gate.broker, session_id) or await self._switch_answered_meanwhile(
                    session_id
                )
                if gate is not None:
                    await self.approval_waiting(session_id, +1)
                else:
                    result = await self._run_once(session_id)
                    history = await self.store.list_messages(session_id)
                    # A message sent while the last run was finishing gets its own run.
                    if result.outcome == "completed" and history and history[-1].role == "user":
                        continue
                    if result.outcome != "completed":
                        break
                    session = await self.store.get_session(session_id)
                    feedback = await stop_feedback(
                        self.gate.configured_hooks,
                        self._hook_place(session),
                        continued=stop_continues,
                        last_message=result.text,
                    )
                    if feedback is not None:  # a Stop hook blocked the stop: its reason is the next prompt
                        stop_continues += 1
                        message = await self.store.add_message(
                            Message(session_id=session_id, role="user", content=feedback)
                        )
                        await self.bus.publish(session_id, "message", message.model_dump(mode="json"))
                        continue
                    gate = await self._offer_next_mode(session_id, result.text, history[-1].idx if history else 0)
                    if gate is None:
                        break
                if not await self._settle_switch(session_id, gate):
                    break
            await self.record_outcome(session_id, result)
        except asyncio.CancelledError:
            if not self.gate.shutting_down:
                await asyncio.shield(self._update(session_id, status="stopped"))
            raise
        except Exception as exc:
            log.exception("session %s failed", session_id)
            await self.record_failure(session_id, exc)
        finally:
            self._waiting.pop(session_id, None)

    async def _switch_answered_meanwhile(self, session_id: str) -> Approval | None:
        """A mode-switch gate answered while no run was there to act on it (after a restart, before
        recovery reached it): the plan is still the last message, so the answer is still to be
        carried out. Acting on an answer appends a message, so an answer is never acted on twice."""
        history = await self.store.list_messages(session_id)
        if not history:
            return None
        gate = await self.gate.broker.latest_for_call(session_id, switch_call_id(history[-1].idx))
        # A cancelled gate was withdrawn by a stop: nothing about it is left to carry out.
        return gate if gate is not None and gate.kind == "mode_switch" and gate.status in ("allowed", "denied") else None

    async def _offer_next_mode(self, session_id: str, answer: str, answer_idx: int) -> Approval | None:
        session = await self.store.get_session(session_id)
        mode = self.modes.get(session.mode)
        if not offers_switch(session, mode, answer):
            return None
        # The session shows "waiting" before anyone can see the question, never after.
        await self.approval_waiting(session_id, +1)
        return await open_switch(self.gate.broker, session, mode, answer, answer_idx)

    async def _settle_switch(self, session_id: str, gate: Approval) -> bool:
        """Wait for the person's answer to a mode switch; True when the session should run again."""
        try:
            answered = await self.gate.broker.wait(gate.id)
        except asyncio.CancelledError:
            if not self.gate.shutting_down:
                await asyncio.shield(self.gate.broker.cancel(gate.id, "The session was stopped."))
            raise
        finally:
            self._waiting[session_id] = max(self._waiting.get(session_id, 0) - 1, 0)
        session = await self.store.get_session(session_id)
        outcome = switch_outcome(answered, session.mode)
        if outcome.action == "end":
            return False
        if outcome.mode != session.mode:
            try:
                self.modes.get(outcome.mode)
            except (KeyError, ValueError) as exc:
                await self.bus.publish(session_id, "error", {"message": f"Cannot switch modes: {exc}"})
                return False
            await self.set_mode(session_id, outcome.mode)
        message = await self.store.add_message(Message(session_id=session_id, role="user", content=outcome.message))
        await self.bus.publish(session_id, "message", message.model_dump(mode="json"))
        await self._update(session_id, status="running")
        return True

    async def set_mode(self, session_id: str, mode: str) -> Session:
        """Switch a session's mode; it counts from the session's next run."""
        self.modes.get(mode)
        session = await self._change(session_id, lambda s: {"mode": mode} if s.mode != mode else None)
        await self.bus.publish(session_id, "session.mode", {"mode": mode})
        return session

    def _engine(self, session: Session) -> Engine:
        if session.engine == "claude-sdk":
            assert self.claude_sdk is not None, "a claude-sdk session needs a runner with the SDK engine"
            return self.claude_sdk
        return self.litellm

    async def _run_once(self, session_id: str) -> LoopResult:
        session = await self.store.get_session(session_id)
        engine = self._engine(session)
        if session.engine == "claude-sdk" and self.budget is not None:
            # Its model calls happen inside Claude Code, where no call passes the guard: at least
            # a run does not start once a budget is spent.
            try:
                await self.budget.check(session_id)
            except BudgetReached as exc:
                return LoopResult(outcome="error", error=str(exc))
        if self.memory_window > 0 and not engine.compacts_own_transcript:
            # Before the run, so the model starts from a transcript the window bounds.
            session = await self._consolidate(session)
        return await engine.run(
            session=session,
            turn=await self._prepare_turn(session),
            limits=self.limits,
            on_usage=lambda usage: self.add_usage(session_id, usage),
            on_sdk_session=lambda sdk_id: self._update(session_id, sdk_session_id=sdk_id),
        )

    async def _consolidate(self, session: Session) -> Session:
        """Move messages past the memory window into the workspace memory (one model call)."""
        memory = await consolidate(
            model=self.model_for(session),
            history=await self.store.list_messages(session.id),
            memory_from=session.memory_from,
            window=self.memory_window,
            workspace=Path(session.workspace),
        )
        if memory.usage is not None:
            await self.add_usage(session.id, memory.usage)
        if not memory.consolidated:
            return session
        upto = memory.memory_from
        session = await self._change(session.id, lambda s: {"memory_from": upto} if upto > s.memory_from else None)
        await self.bus.publish(session.id, "memory.consolidated", {"upto": upto, "facts": memory.facts})
        return session

    def agent(self, agent_id: str | None) -> Agent | None:
        """The named agent (UnknownAgent if none is configured by that id); None without agents."""
        return self.agents.get(agent_id) if self.agents is not None else None

    async def _prepare_turn(self, session: Session) -> Turn:
        return await prepare_turn(
            session,
            modes=self.modes,
            skills=self.skills,
            data_dir=self.data_dir,
            all_tools=await self.list_tools(),
            tool_selection=self.tool_selection,
            remember_found=lambda names: self.add_found_tools(session.id, names),
            agent=self.agent(session.agent_id),
            fence=self.fence_for(session.agent_id),
        )

    def _hook_place(self, session: Session) -> HookPlace:
        """Where the session's hooks run: its workspace, in its agent's sandbox."""
        return HookPlace(
            session_id=session.id,
            workspace=Path(session.workspace),
            mode=session.mode,
            fence=self.fence_for(session.agent_id),
        )

    def fence_for(self, agent_id: str | None) -> AgentFence | None:
        """The other agents' folders, closed to this agent's calls; None with a single agent."""
        if self.agents is None:
            return None
        agent = self.agents.get(agent_id)
        workspaces = {a.id: a.workspace for a in self.agents.list()}
        return AgentFence.build(agent.id, workspaces, self.data_dir / AGENTS_FOLDER)

    async def stop(self, session_id: str, *, timeout: float = STOP_WAIT, by: Decider | None = None) -> Session:
        """Cancel a run and its sub-agents' runs; each ends `stopped` with every tool call recorded
        as stopped by `by` (Overseer itself when None)."""
        task = self._tasks.get(session_id)
        if task is not None and not task.done():
            self.gate.stoppers[session_id] = by or OVERSEER
            try:
                task.cancel()
                await asyncio.wait({task}, timeout=timeout)
            finally:
                self.gate.stoppers.pop(session_id, None)
        session = await self.store.get_session(session_id)
        if session.status in ACTIVE_STATUSES:
            session = await self._update(session_id, status="stopped")
        # A child works for its parent: once the parent is stopped, nobody waits for its answer.
        for child in await self.store.list_children(session_id, statuses=ACTIVE_STATUSES):
            await self.stop(child.id, timeout=timeout, by=by)
        return session

    async def wait(self, session_id: str, timeout: float | None = None) -> Session:
        """Wait (bounded) for the current run to end; returns the session as stored."""
        task = self._tasks.get(session_id)
        if task is not None and not task.done():
            await asyncio.wait_for(asyncio.shield(task), timeout=timeout)
        else:  # ended, or placed on another host (or not taken yet): its row says when it ends
            await self.placement.wait_elsewhere(session_id, timeout)
        return await self.store.get_session(session_id)

    async def recover(self) -> list[str]:
        """Continue sessions a previous process left running or waiting for approval."""
        recovered = []
        for session in await self.store.list_sessions(statuses=ACTIVE_STATUSES, limit=10_000):
            if self.is_running(session.id) or not await self.placement.may_recover(session.id):
                continue
            await self.bus.publish(session.id, "session.recovered", {"status": session.status})
            await self._start(session)
            recovered.append(session.id)
        return recovered

    async def aclose(self) -> None:
        """Stop supervising; sessions stay `running`/`waiting_approval` in the store for recovery."""
        # A shutdown is not a stop: sessions, approvals and tool calls stay as they are in the
        # store, to be found active and resumed at the next start.
        self.gate.shutting_down = True
        tasks = [t for t in [*self._tasks.values(), *self._background] if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=10)
