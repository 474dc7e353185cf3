"""`invoke_agent` as an MCP task (issue 35, item 6): start an agent run, answer at once, and let
the caller collect the result later, from another connection or after the host restarted.

A task is a handle on the agent session the call started; the session is durable and the task's
row (`GatewayTaskService`) adds whose it is and, once the run ended, how and with what result,
kept as first seen. So the task's status is read off the session whenever it is asked for:

- the session running: `working`;
- an approval of the session (or a sub-agent's) waiting: `input_required`; it is answered as any
  approval is (the dashboard, `answer_approval`, the approvals API), its status message says which;
- the session ended: `completed`, `failed` (it ended in error) or `cancelled` (stopped, by
  `tasks/cancel` or the dashboard's stop). Its result is the CallToolResult a plain call returns.

The wire shapes of the two protocol eras live elsewhere (`task_methods.py` for 2025-11-25,
`task_extension.py` for the 2026-07-28 extension); this module knows tasks, not messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import mcp_types as wire

from backend.app.gateway_tasks import GatewayTaskService
from backend.app.services import AppServices
from backend.auth import Principal
from backend.domain.errors import NotFound
from backend.domain.gateway_tasks import GatewayTask, TaskEnd, TaskStatus
from backend.domain.models import Approval, Session
from backend.gateway.elicitation import ASKED_KINDS, Asker
from backend.gateway.invocation import RUN_TIMEOUT, Watch, final_result, start_invocation

DEFAULT_TTL_MS = 24 * 3600 * 1000
"""Kept a day unless the caller asks for another time to live."""
MAX_TTL_MS = 7 * 24 * 3600 * 1000
"""At most a week: a longer ask is cut to this (the task says the ttl it got)."""
MIN_TTL_MS = 60 * 1000
POLL_INTERVAL_MS = 2000
"""An agent run takes seconds to hours; polling faster than this tells nobody anything."""
STOP_TIMEOUT = 10.0
ENDED_STATUSES = frozenset({"completed", "stopped", "error"})
"""Session statuses that end a run (`idle` is a session not started yet: working)."""


def granted_ttl(asked: int | None) -> int:
    """The time to live a task gets for the one its caller asked (milliseconds)."""
    if asked is None:
        return DEFAULT_TTL_MS
    return max(MIN_TTL_MS, min(asked, MAX_TTL_MS))


def iso(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


@dataclass(kw_only=True)
class TaskState:
    """A task as its caller sees it now."""

    task: GatewayTask
    status: TaskStatus
    message: str | None = None
    result: wire.CallToolResult | None = None
    """Once the task ended: what a plain call would have returned."""
    waiting: list[Approval] | None = None
    """While `input_required`: the approvals it waits for."""
    changed: datetime | None = None
    """When the run last changed (the session's `updated_at`), while it goes on."""

    @property
    def ended(self) -> bool:
        return self.result is not None

    def fields(self) -> dict[str, Any]:
        """The 2025-11-25 `Task` fields (wire names)."""
        task = wire.Task(
            task_id=self.task.id,
            status=self.status,
            status_message=self.message,
            created_at=iso(self.task.created_at),
            last_updated_at=iso(max(self.task.updated_at, self.changed or self.task.updated_at)),
            ttl=self.task.ttl_ms,
            poll_interval=POLL_INTERVAL_MS,
        )
        return task.model_dump(by_alias=True, mode="json", exclude_none=True)


class GatewayTasks:
    """Starts `invoke_agent` runs as tasks and tells their callers how they stand."""

    def __init__(self, services: AppServices, store: GatewayTaskService) -> None:
        self.services = services
        self.store = store

    async def start(self, *, caller: Principal, arguments: dict[str, Any], ttl_ms: int | None) -> TaskState:
        """Start the run `arguments` describe (invoke_agent's own) and the task following it.

        The task is stored before this returns, so a `tasks/get` right after finds it. A refusal
        (no such session, still running, an unknown mode) raises as a plain call's would.
        """
        session = await start_invocation(self.services, caller=caller, **arguments)
        task = await self.store.create(session_id=session.id, owner=caller, ttl_ms=granted_ttl(ttl_ms))
        return TaskState(task=task, status="working", message="the agent is working")

    async def find(self, task_id: str, *, caller: Principal) -> GatewayTask:
        """The caller's task (NotFound for anyone else's, an unknown id, or an expired one)."""
        return await self.store.get(task_id, owner=caller)

    async def list(self, *, caller: Principal, limit: int, offset: int) -> list[TaskState]:
        """The caller's tasks, newest first, as they stand."""
        return [await self.state(t) for t in await self.store.list(owner=caller, limit=limit, offset=offset)]

    async def state(self, task: GatewayTask) -> TaskState:
        """How the task stands: read off its session, and kept for good once the run ended."""
        if task.ended is not None:
            return self._frozen(task)
        try:
            session = await self.services.sessions.get(task.session_id)
        except NotFound:
            gone = wire.CallToolResult(
                content=[wire.TextContent(text=f"session {task.session_id} was deleted")], is_error=True
            )
            return await self._end(task, "failed", gone)
        if session.status in ENDED_STATUSES:
            return await self._end(task, self._end_of(task, session), await final_result(self.services, session))
        waiting = await self._waiting(task.session_id)
        if waiting:
            return TaskState(
                task=task,
                status="input_required",
                message=_waiting_message(waiting),
                waiting=waiting,
                changed=session.updated_at,
            )
        return TaskState(task=task, status="working", message="the agent is working", changed=session.updated_at)

    async def outcome(self, task: GatewayTask, *, asker: Asker | None = None) -> TaskState:
        """Wait (bounded only by a run's own cap) for the task to end; how it ended.

        `asker`: meanwhile, put each approval the run waits for to the waiting client (the
        first answer counts, the client's or anyone else's; one answered elsewhere is withdrawn).
        """
        state = await self.state(task)
        while not state.ended:
            if asker is None:
                await self.services.sessions.wait(task.session_id, timeout=RUN_TIMEOUT)
            else:
                await self._follow(task.session_id, asker)
            state = await self.state(await self.store.reload(task))
        return state

    async def _follow(self, root_id: str, asker: Asker) -> None:
        sub = self.services.events.subscribe(None)  # before the first look: no approval is missed
        try:
            watch = Watch(self.services, root_id, report=_unheard, heard=False)
            await watch.load_family()
            await watch.follow(sub, asked=set(), push=asker)
        finally:
            self.services.events.unsubscribe(sub)

    async def cancel(self, task: GatewayTask, *, by: Principal) -> TaskState:
        """Stop the task's session as the dashboard's stop does; the task reads `cancelled` from
        now on. A task that already ended cannot be cancelled (ValueError)."""
        state = await self.state(task)
        if state.ended:
            raise ValueError(f"task {task.id} already ended {state.status}")
        marked = await self.store.save(task.model_copy(update={"cancel_requested": True}))
        session = await self.services.sessions.stop(task.session_id, timeout=STOP_TIMEOUT, by=by.decider("mcp"))
        return await self._end(marked, "cancelled", await final_result(self.services, session))

    @staticmethod
    def _end_of(task: GatewayTask, session: Session) -> TaskEnd:
        if task.cancel_requested or session.status == "stopped":
            return "cancelled"
        return "completed" if session.status == "completed" else "failed"

    async def _end(self, task: GatewayTask, end: TaskEnd, result: wire.CallToolResult) -> TaskState:
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        saved = await self.store.save(task.model_copy(update={"ended": end, "result": dumped}))
        return self._frozen(saved)

    @staticmethod
    def _frozen(task: GatewayTask) -> TaskState:
        assert task.ended is not None and task.result is not None
        result = wire.CallToolResult.model_validate(task.result, by_name=False)
        text = next((c.text for c in result.content if isinstance(c, wire.TextContent)), None)
        message = None if task.ended == "completed" else text
        return TaskState(task=task, status=task.ended, message=message, result=result)

    async def _waiting(self, root_id: str) -> list[Approval]:
        family = {root_id} | await self.services.sessions.family(root_id)
        return [
            a for a in await self.services.approvals.pending() if a.session_id in family and a.kind in ASKED_KINDS
        ]


async def _unheard(step: float, message: str) -> None:
    """No progress for a task's waits: `tasks/result` carries no progress token."""


def _waiting_message(waiting: list[Approval]) -> str:
    asked = ", ".join(f"{a.tool_name} (approval {a.id})" for a in waiting)
    return (
        f"waiting for approval of {asked}: answer it with answer_approval, on the Overseer dashboard, or (a client that elicits) while waiting on tasks/result"
    )
