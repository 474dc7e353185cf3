"""Workflows: the definitions, and runs of them (start, read, list, stop).

A run's gates are ordinary approvals (kind "workflow_step"): they are answered through
`/api/approvals`, where an edited `prompt` in the arguments changes the next step's prompt.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, status

from backend.api.deps import Approver, Services, Viewer
from backend.domain.workflows import Workflow, WorkflowRun, WorkflowRunCreate

router = APIRouter(tags=["workflows"])


# Plain functions: reading the definition files runs in the thread pool.


@router.get("/api/workflows")
def list_workflows(services: Services, _: Viewer) -> list[Workflow]:
    """Every usable definition: built-ins, and the person's own (which replace built-ins of the same name)."""
    return services.workflows.definitions()


@router.get("/api/workflows/{name}")
def get_workflow(name: str, services: Services, _: Viewer) -> Workflow:
    """One definition; 404 if none has that name, 400 naming the file if it is broken."""
    return services.workflows.definition(name)


@router.post("/api/workflows/{name}/runs", status_code=status.HTTP_201_CREATED)
async def start_run(name: str, body: WorkflowRunCreate, services: Services, principal: Approver) -> WorkflowRun:
    """Start a run; its first step's session exists when this answers (a non-admin's `workspace`
    is one of the allowed workspaces, GET /api/workspaces)."""
    return await services.workflows.start(
        name, body.input, workspace=body.workspace, chooses_workspace=not principal.can("admin")
    )


@router.get("/api/workflow-runs")
async def list_runs(
    services: Services,
    _: Viewer,
    workflow: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[WorkflowRun]:
    """Runs newest first, optionally of one workflow."""
    return await services.workflows.runs(workflow=workflow, limit=limit)


@router.get("/api/workflow-runs/{run_id}")
async def get_run(run_id: str, services: Services, _: Viewer) -> WorkflowRun:
    return await services.workflows.run(run_id)


@router.post("/api/workflow-runs/{run_id}/stop")
async def stop_run(run_id: str, services: Services, _: Approver) -> WorkflowRun:
    """Stop a run: its running step's session is stopped and a pending gate withdrawn."""
    return await services.workflows.stop(run_id)
