"""Workflow runs in SQLite: the `workflow_runs` table, mixed into SqliteStore."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from backend.store.base import NotFound
from backend.store.sqlite_thread import SqliteThread
from backend.domain.workflows import WorkflowRun


class SqliteWorkflowStore:
    """Workflow run rows; expects SqliteStore's `db`, `_write` and `_lock`."""

    db: SqliteThread
    _lock: asyncio.Lock

    if TYPE_CHECKING:

        async def _write(self, sql: str, params: tuple[Any, ...]) -> None: ...

    async def save_workflow_run(self, run: WorkflowRun) -> WorkflowRun:
        """Insert or replace a run."""
        await self._write(
            "INSERT INTO workflow_runs (id, workflow, status, created_at, data) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, data = excluded.data",
            (run.id, run.workflow, run.status, run.created_at.isoformat(), run.model_dump_json()),
        )
        return run

    async def get_workflow_run(self, run_id: str) -> WorkflowRun:
        rows = await self.db.fetch_all("SELECT data FROM workflow_runs WHERE id = ?", (run_id,))
        if not rows:
            raise NotFound(f"workflow run {run_id!r} does not exist")
        return WorkflowRun.model_validate_json(rows[0][0])

    async def list_workflow_runs(
        self, *, workflow: str | None = None, statuses: Iterable[str] | None = None, limit: int = 100
    ) -> list[WorkflowRun]:
        """Runs newest first, optionally of one workflow and in some statuses."""
        where, params = [], []
        if workflow is not None:
            where.append("workflow = ?")
            params.append(workflow)
        if statuses is not None:
            wanted = list(statuses)
            where.append(f"status IN ({','.join('?' * len(wanted))})")
            params.extend(wanted)
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        rows = await self.db.fetch_all(
            f"SELECT data FROM workflow_runs {clause}ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (*params, limit),
        )
        return [WorkflowRun.model_validate_json(r[0]) for r in rows]
