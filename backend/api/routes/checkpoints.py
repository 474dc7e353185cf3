"""A session's checkpoints (issue 32): what each step changed in the workspace, and rewinding it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from backend.api.deps import MAX_STORED_INT, Approver, Services, Viewer
from backend.app.checkpoints import CheckpointFile, CheckpointStatus, RewindResult, StepChanges

router = APIRouter(prefix="/api/sessions", tags=["checkpoints"])

Step = Annotated[
    int, Path(ge=1, le=MAX_STORED_INT, description="1-based, as the dashboard numbers the session's steps")
]


class RewindBody(BaseModel):
    """What to rewind: to before which step, which files, and whether to fork the conversation there."""

    model_config = ConfigDict(extra="forbid")

    step: int | None = Field(
        None, ge=1, le=MAX_STORED_INT, description="restore to before this step (default: before the last)"
    )
    files: list[str] | None = Field(
        None, min_length=1, max_length=1000, description="workspace-relative paths to restore (default: all)"
    )
    fork: bool = Field(False, description="also start a new session whose transcript ends before the step")


@router.get("/{session_id}/checkpoints")
async def list_checkpoints(session_id: str, services: Services, _: Viewer) -> list[StepChanges]:
    """The session's steps that changed (or may have changed) the workspace, oldest first, each
    with the files it changed and their diffs (the last step's against the workspace now)."""
    return await services.checkpoints.list(session_id)


@router.get("/{session_id}/checkpoints/status")
async def checkpoint_status(session_id: str, services: Services, _: Viewer) -> CheckpointStatus:
    """Whether the session's steps get checkpoints: when they do not, what a step changed is not
    recorded, and the dashboard says so."""
    return await services.checkpoints.status(session_id)


@router.get("/{session_id}/checkpoints/{step}/diff")
async def checkpoint_diff(session_id: str, step: Step, services: Services, _: Viewer) -> list[CheckpointFile]:
    """What differs between the workspace before `step` and the workspace now: what rewinding
    to before it would change."""
    return await services.checkpoints.diff(session_id, step)


@router.post("/{session_id}/rewind")
async def rewind(session_id: str, body: RewindBody, services: Services, principal: Approver) -> RewindResult:
    """Restore the workspace (or `files` of it) to before `step` (its owner or an admin); 409
    while the session is running a step. The rewind is checkpointed first, so rewinding to
    before `checkpoint_step` undoes it; it is written to the audit log with who asked."""
    return await services.checkpoints.rewind(
        session_id, step=body.step, files=body.files, fork=body.fork, by=principal, via="rest"
    )
