"""Checkpoints' rows (issue 32), written once for both databases; mixed into SqlStore.

A row says which commit of a workspace's shadow repository holds the workspace as it was before
one step of a session. The commits themselves live beside the data dir (backend/checkpoints/).
Steps are numbered per session from 1; the key (session_id, step) refuses a number taken twice,
so a writer numbers a step under the workspace's lock (`workspace_lock`) and reads the next
number there (`next_checkpoint_step`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from datetime import datetime

from backend.domain.checkpoints import Checkpoint, RetainedCheckpoint
from backend.domain.models import ACTIVE_STATUSES, AuditEntry, Event, ToolCallRecord
from backend.store.base import NotFound, Written
from backend.store.sql_seam import SqlSeam


DELETE_BATCH = 200
"""Rows deleted by one statement (two parameters each: well inside either database's limit)."""


class SqlCheckpoints(SqlSeam):
    """Add, list, find and delete checkpoints' rows."""

    def add_checkpoint(self, checkpoint: Checkpoint, *, event: Event | None = None) -> Awaitable[Written]:
        """Store a checkpoint's row and, in the same transaction, its event (numbered)."""
        return self._unit([self._checkpoint_write(checkpoint)], event=event)

    def record_start(
        self, entry: AuditEntry, record: ToolCallRecord, checkpoint: Checkpoint, *, event: Event, second: Event
    ) -> Awaitable[Written]:
        """A step's start in one transaction: the allow's audit row, the call's running state, the
        checkpoint taken before it, and their two events (one transaction a step, not two)."""
        writes = [self._audit_write(entry), self._call_write(record), self._checkpoint_write(checkpoint)]
        return self._unit(writes, event=event, second=second)

    async def next_checkpoint_step(self, session_id: str) -> int:
        """The number the session's next checkpoint takes: 1 for its first. Never one it gave
        before: when retention deleted every row of a session (a finished one, later resumed),
        its checkpoints' events, which stay with the transcript, say how far it had counted."""
        rows = await self._fetch_all(self.sql.next_checkpoint_step, (session_id,))
        step = int(rows[0][0])
        if step > 1:
            return step
        m = self.sql.dialect.mark
        events = await self._fetch_all(
            f"SELECT data FROM events WHERE session_id = {m} AND type IN ({m}, {m})",
            (session_id, "checkpoint.created", "checkpoint.rewound"),
        )
        counted = [_step_of(Event.model_validate_json(row[0])) for row in events]
        return max((n for n in counted if n is not None), default=0) + 1

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        """The session's checkpoints by step."""
        rows = await self._fetch_all(self.sql.list_checkpoints, (session_id,))
        return [Checkpoint.model_validate_json(r[0]) for r in rows]

    async def get_checkpoint(self, session_id: str, step: int) -> Checkpoint:
        rows = await self._fetch_all(self.sql.get_checkpoint, (session_id, step))
        if not rows:
            raise NotFound(f"session {session_id!r} has no checkpoint of step {step}")
        return Checkpoint.model_validate_json(rows[0][0])

    async def workspace_checkpoints(self, workspace: str) -> list[Checkpoint]:
        """Every session's checkpoints of one workspace, oldest first."""
        rows = await self._fetch_all(self.sql.workspace_checkpoints, (workspace,))
        return [Checkpoint.model_validate_json(r[0]) for r in rows]

    async def retained_checkpoints(self, workspace: str, *, before: datetime) -> list[RetainedCheckpoint]:
        """What retention weighs of a workspace's checkpoints, oldest first."""
        d = self.sql.dialect
        rows = await self._fetch_all(
            self.sql.retained_checkpoints, (d.time(before), *sorted(ACTIVE_STATUSES), workspace)
        )
        return [RetainedCheckpoint(r[0], int(r[1]), r[2], bool(r[3]), bool(r[4])) for r in rows]

    async def checkpoint_workspaces(self) -> list[str]:
        """The workspaces that have checkpoints."""
        return sorted(r[0] for r in await self._fetch_all(self.sql.checkpoint_workspaces))

    async def delete_checkpoints(self, checkpoints: Iterable[Checkpoint | RetainedCheckpoint]) -> int:
        """Delete these rows (retention), in one transaction; how many there were."""
        keys = [(cp.session_id, cp.step) for cp in checkpoints]
        m = self.sql.dialect.mark
        statements = []
        for start in range(0, len(keys), DELETE_BATCH):  # a statement per batch, not per row
            batch = keys[start : start + DELETE_BATCH]
            values = ", ".join([f"({m}, {m})"] * len(batch))
            sql = f"DELETE FROM checkpoints WHERE (session_id, step) IN (VALUES {values})"
            statements.append((sql, tuple(value for key in batch for value in key)))
        return sum(await self._execute_all(statements)) if statements else 0


def _step_of(event: Event) -> int | None:
    number = event.data.get("step" if event.type == "checkpoint.created" else "checkpoint_step")
    return number if isinstance(number, int) else None
