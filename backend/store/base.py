"""The persistence interface, implemented by SQLite (`sqlite.py`) and Postgres (`postgres.py`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from backend.domain.checkpoints import Checkpoint, RetainedCheckpoint
from backend.domain.errors import NotFound
from backend.domain.models import (
    Approval,
    ApprovalStatus,
    AuditEntry,
    Event,
    Message,
    Session,
    ToolCallRecord,
    utcnow,
)
from backend.domain.schedules import Schedule
from backend.domain.gateway_tasks import GatewayTask
from backend.domain.tool_pins import ToolPin
from backend.domain.workflows import WorkflowRun
from backend.domain.audit import AuditQuery

# NotFound lives in backend.domain.errors; re-exported.
__all__ = ["NotFound", "SchemaTooNew", "SessionDecision", "Store", "Written", "apply_decision", "check_schema"]


class SchemaTooNew(RuntimeError):
    """The database was written by a newer Overseer."""


def check_schema(where: str, found: int, known: int) -> None:
    """Refuse a database whose schema is newer than this Overseer's: rather than write rows that
    version may not read, or migrate steps already taken, the store does not open."""
    if found > known:
        raise SchemaTooNew(f"{where} has schema {found}; this Overseer knows up to {known}")


@dataclass(kw_only=True)
class Written:
    """What one write stored: the message and event with their idx and seq, the first row id."""

    message: Message | None = None
    event: Event | None = None
    row_id: int | None = None
    second: Event | None = None
    """The event written right after `event`, in the same session and transaction (seq + 1)."""


SessionDecision = Callable[[Session], dict[str, object] | None]
"""The changes to make to a session row in view of that row as stored; None or {}: none. It may
raise to refuse the change. Synchronous and a function of the row alone: a store may call it
inside its write transaction, on its database thread."""


def apply_decision(current: Session, decide: SessionDecision) -> Session | None:
    """The row after `decide`'s changes, with a new updated_at; None when it changes nothing."""
    changes = decide(current)
    if not changes:
        return None
    return current.model_copy(update={**changes, "updated_at": utcnow()})


class Store(Protocol):
    """Everything a restart must not lose.

    The writes an event goes with are plain functions returning an awaitable: a store that
    finished the write before returning gives a `Done` awaitable (`backend.store.ready`), which the
    event bus then need not guard against a stop tearing it.
    """

    async def open(self) -> None: ...
    async def close(self) -> None: ...

    async def create_session(self, session: Session) -> Session: ...
    async def get_session(self, session_id: str) -> Session: ...
    async def save_session(self, session: Session) -> Session: ...
    async def change_session(self, session_id: str, decide: SessionDecision) -> tuple[Session, Session | None]:
        """Read the session's row, `decide` on it and write the result, in one transaction.

        Every process sharing the database waits for it (a row lock; SQLite's write lock), so the
        decision is made on the row as stored, and no other writer's change lands in between to be
        overwritten (a rename on one host while another runs the session). Returns the row before
        and after (None: `decide` changed nothing, nothing was written); NotFound if there is no
        such session; what `decide` raises propagates, and nothing is written.
        """
        ...
    async def list_sessions(
        self,
        *,
        statuses: Iterable[str] | None = None,
        limit: int = 200,
        archived: bool | None = None,
        text: str | None = None,
    ) -> list[Session]:
        """Newest first; `archived` keeps only archived (True) or unarchived (False) ones, `text`
        those whose title or user/assistant messages contain it (case-insensitively, literally)."""
        ...
    async def list_children(self, parent_id: str, *, statuses: Iterable[str] | None = None) -> list[Session]:
        """The sessions nested directly under `parent_id` (all of them, oldest first), by an indexed query."""
        ...
    async def delete_session(self, session_id: str) -> None: ...

    def add_message(self, message: Message) -> Awaitable[Message]: ...
    async def list_messages(self, session_id: str) -> list[Message]: ...

    async def save_tool_call(self, record: ToolCallRecord) -> None: ...
    def finish_tool_call(
        self, record: ToolCallRecord, result: Message, *, event: Event | None = None
    ) -> Awaitable[Written]:
        """Record a tool call's end, its result message (and its event) in one transaction."""
        ...
    async def list_tool_calls(self, session_id: str) -> list[ToolCallRecord]: ...

    async def save_approval(self, approval: Approval) -> None: ...
    async def close_approval(self, approval: Approval) -> bool:
        """Write an answered approval only while it is still pending; True when this write closed it."""
        ...
    async def get_approval(self, approval_id: str) -> Approval: ...
    async def list_approvals(
        self, *, status: ApprovalStatus | None = None, session_id: str | None = None
    ) -> list[Approval]: ...
    async def approval_statuses(self, approval_ids: Iterable[str]) -> dict[str, ApprovalStatus]:
        """The current status of each listed approval that exists, in one read."""
        ...
    async def data_version(self) -> int:
        """A number that changes whenever another connection (another process) commits.

        Cheap enough to ask every tenth of a second while something waits on another process.
        """
        ...

    async def add_audit(self, entry: AuditEntry) -> AuditEntry: ...
    def record_decision(
        self, entry: AuditEntry, record: ToolCallRecord | None = None, *, event: Event | None = None
    ) -> Awaitable[Written]:
        """Write an audit row and, in the same transaction, the tool call's new state (and event)."""
        ...
    def record_start(
        self, entry: AuditEntry, record: ToolCallRecord, checkpoint: Checkpoint, *, event: Event, second: Event
    ) -> Awaitable[Written]:
        """A step's start in one transaction: the allow's audit row, the call's running state, the
        checkpoint taken before it, and their two events (`event`, then `second`)."""
        ...
    async def list_audit(
        self, *, limit: int = 100, offset: int = 0, session_id: str | None = None, query: AuditQuery | None = None
    ) -> list[AuditEntry]:
        """Newest first, filtered by `query` (and `session_id`, kept for older callers)."""
        ...

    def append_event(self, event: Event) -> Awaitable[Event]:
        """Give the event the session's next seq and persist it."""
        ...
    async def last_seq(self, session_id: str) -> int: ...
    async def list_events(self, session_id: str, *, since: int = 0, limit: int = 10_000) -> list[Event]: ...

    async def save_schedule(self, schedule: Schedule) -> Schedule: ...
    async def claim_schedule(self, due: Schedule, advanced: Schedule) -> bool:
        """Save `advanced` only if the stored job is still due as `due` was (compare-and-set)."""
        ...
    async def claim_once(self, key: str) -> bool:
        """True for the first caller of `key` in any process of this database, False ever after."""
        ...
    async def get_schedule(self, schedule_id: str) -> Schedule: ...
    async def list_schedules(self) -> list[Schedule]: ...
    async def due_schedules(self, now: datetime) -> list[Schedule]:
        """Active jobs whose next run is at or before `now`, most overdue first."""
        ...
    async def next_schedule_time(self) -> datetime | None: ...
    async def delete_schedule(self, schedule_id: str) -> None: ...

    async def save_workflow_run(self, run: WorkflowRun) -> WorkflowRun: ...
    async def get_workflow_run(self, run_id: str) -> WorkflowRun: ...
    async def list_workflow_runs(
        self, *, workflow: str | None = None, statuses: Iterable[str] | None = None, limit: int = 100
    ) -> list[WorkflowRun]:
        """Runs newest first, optionally of one workflow and in some statuses."""
        ...

    def add_checkpoint(self, checkpoint: Checkpoint, *, event: Event | None = None) -> Awaitable[Written]:
        """Store a checkpoint's row (and its event, numbered) in one transaction; a step number the
        session has already taken is refused by the key."""
        ...
    async def next_checkpoint_step(self, session_id: str) -> int:
        """The number the session's next checkpoint takes (1 for its first); read it under the
        workspace's lock (`workspace_lock`), so no other writer takes it meanwhile."""
        ...
    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        """The session's checkpoints by step."""
        ...
    async def get_checkpoint(self, session_id: str, step: int) -> Checkpoint:
        """NotFound when the session has no checkpoint of that step."""
        ...
    async def workspace_checkpoints(self, workspace: str) -> list[Checkpoint]:
        """Every session's checkpoints of one workspace, oldest first (retention)."""
        ...
    async def retained_checkpoints(self, workspace: str, *, before: datetime) -> list[RetainedCheckpoint]:
        """What retention weighs of a workspace's checkpoints (taken `before` that time? their
        session active?), oldest first, without reading the rows' JSON."""
        ...
    async def checkpoint_workspaces(self) -> list[str]:
        """The workspaces that have checkpoints."""
        ...
    async def delete_checkpoints(self, checkpoints: Iterable[Checkpoint | RetainedCheckpoint]) -> int:
        """Delete these rows in one transaction (retention); how many there were."""
        ...
    async def pin_tool(self, pin: ToolPin) -> ToolPin:
        """Store `pin` unless its (server, tool) has one already; the pin in force either way."""
        ...
    async def tool_pins(self, server: str) -> list[ToolPin]:
        """The server's pinned tools, by name."""
        ...
    async def repin_tool(self, pin: ToolPin, *, replacing: str) -> bool:
        """Replace the tool's pin of fingerprint `replacing` with `pin`; False when it is another."""
        ...
    async def add_gateway_task(self, task: GatewayTask) -> GatewayTask:
        """Store a new task-augmented `invoke_agent` call (issue 35, item 6)."""
        ...
    async def gateway_task(self, task_id: str) -> GatewayTask | None:
        """The gateway task of this id, if there is one."""
        ...
    async def gateway_tasks(self, owner: str, *, limit: int, offset: int = 0) -> list[GatewayTask]:
        """`owner`'s gateway tasks, newest first, a page of them."""
        ...
    async def save_gateway_task(self, task: GatewayTask) -> GatewayTask:
        """Write a gateway task's changed JSON (cancel requested, how it ended)."""
        ...
    async def delete_gateway_task(self, task_id: str) -> None:
        """Forget a gateway task whose time to live ran out."""
        ...
    def workspace_lock(self, key: str, *, timeout: float) -> AbstractAsyncContextManager[None]:
        """Hold the lock named `key` (a workspace's hash) against every holder sharing this database.

        Postgres: an advisory lock, so two hosts never write one shadow repository at once, and a
        host that dies (even by kill -9) lets go of it with its connection. SQLite (one host): a
        lock of this process. Waits at most `timeout` seconds, then raises WorkspaceBusy.
        """
        ...
