"""Workflow runs in Postgres: the `workflow_runs` table, mixed into PostgresStore."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from backend.domain.workflows import WorkflowRun
from backend.store.base import NotFound


class PostgresWorkflowStore:
    """Workflow run rows; expects PostgresStore's `_execute` and `_fetch_all`."""

    if TYPE_CHECKING:

        async def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> int: ...
        async def _fetch_all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]: ...

    async def save_workflow_run(self, run: WorkflowRun) -> WorkflowRun:
        """Insert or replace a run."""
        await self._execute(
            "INSERT INTO workflow_runs (id, workflow, status, created_at, data) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, data = excluded.data",
            (run.id, run.workflow, run.status, run.created_at, run.model_dump_json()),
        )
        return run

    async def get_workflow_run(self, run_id: str) -> WorkflowRun:
        rows = await self._fetch_all("SELECT data FROM workflow_runs WHERE id = %s", (run_id,))
        if not rows:
            raise NotFound(f"workflow run {run_id!r} does not exist")
        return WorkflowRun.model_validate_json(rows[0][0])

    async def list_workflow_runs(
        self, *, workflow: str | None = None, statuses: Iterable[str] | None = None, limit: int = 100
    ) -> list[WorkflowRun]:
        """Runs newest first, optionally of one workflow and in some statuses."""
        where: list[str] = []
        params: list[Any] = []
        if workflow is not None:
            where.append("workflow = %s")
            params.append(workflow)
        if statuses is not None:
            where.append("status = ANY(%s)")
            params.append(list(statuses))
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        rows = await self._fetch_all(
            f"SELECT data FROM workflow_runs {clause}ORDER BY created_at DESC, ord DESC LIMIT %s",
            (*params, limit),
        )
        return [WorkflowRun.model_validate_json(r[0]) for r in rows]
