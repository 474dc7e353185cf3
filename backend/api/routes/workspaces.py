"""Workspaces: the folders a person may choose for a new session (issue 31)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from backend.api.deps import Services, Viewer

router = APIRouter(prefix="/api/workspaces", tags=["workspaces"])


class WorkspaceChoice(BaseModel):
    """One allowed workspace: its resolved path, and whether it is the host's default one."""

    path: str
    default: bool


@router.get("")
async def list_workspaces(services: Services, _: Viewer) -> list[WorkspaceChoice]:
    """The default workspace, the agents' and the configured `workspace_roots` (each usable): the
    choices of anyone who is not an admin (an admin may name any folder under them)."""
    default = str(services.sessions.runner.default_workspace.resolve())
    return [WorkspaceChoice(path=str(p), default=str(p) == default) for p in services.sessions.workspaces()]
