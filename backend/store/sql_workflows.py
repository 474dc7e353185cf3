"""Workflow runs, written once for both databases; mixed into SqlStore."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from backend.domain.workflows import WorkflowRun
from backend.store.base import NotFound
from backend.store.queries import one_of, where
from backend.store.sql_seam import SqlSeam


class SqlWorkflows(SqlSeam):
    """Workflow run rows."""

    async def save_workflow_run(self, run: WorkflowRun) -> WorkflowRun:
        """Insert or replace a run."""
        created = self.sql.dialect.time(run.created_at)
        await self._execute(
            self.sql.upsert_workflow_run, (run.id, run.workflow, run.status, created, run.model_dump_json())
        )
        return run

    async def get_workflow_run(self, run_id: str) -> WorkflowRun:
        rows = await self._fetch_all(self.sql.get_workflow_run, (run_id,))
        if not rows:
            raise NotFound(f"workflow run {run_id!r} does not exist")
        return WorkflowRun.model_validate_json(rows[0][0])

    async def list_workflow_runs(
        self, *, workflow: str | None = None, statuses: Iterable[str] | None = None, limit: int = 100
    ) -> list[WorkflowRun]:
        """Runs newest first, optionally of one workflow and in some statuses."""
        d = self.sql.dialect
        clauses: list[str] = []
        params: list[Any] = []
        if workflow is not None:
            clauses.append(f"workflow = {d.mark}")
            params.append(workflow)
        if statuses is not None:
            clause, wanted = one_of("status", statuses, d)
            clauses.append(clause)
            params += wanted
        newest_first = f"ORDER BY created_at DESC, {d.order} DESC LIMIT {d.mark}"
        rows = await self._fetch_all(
            f"SELECT data FROM workflow_runs {where(clauses)} {newest_first}", (*params, limit)
        )
        return [WorkflowRun.model_validate_json(r[0]) for r in rows]
