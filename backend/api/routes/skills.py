"""Skills: list and read them (as a workspace sees them), save and delete the person's own.

Saved skills go to the data dir's `skills/`, where they override built-ins of the same name.
A workspace's own skills (`.overseer/skills/`) are files in that workspace, edited there, and
listed only while a person trusts the folder as it is (/api/workspace-trust, `overseer trust`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Response, status
from pydantic import BaseModel, ConfigDict, Field

from backend.api.deps import Admin, Services, Viewer
from backend.app.services import AppServices
from backend.auth import Principal
from backend.domain.errors import BadRequest
from backend.paths import existing_directory
from backend.skills.model import MAX_SKILL_CHARS, Skill

router = APIRouter(prefix="/api/skills", tags=["skills"])

WorkspaceQuery = Annotated[
    str | None, Query(description="absolute workspace path whose skills count (default: the host's)")
]


class SkillContent(BaseModel):
    """The whole SKILL.md text: front matter (`description`, optional `always`, `requires`) and body."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(max_length=MAX_SKILL_CHARS)


def _workspace(services: AppServices, workspace: str | None, by: Principal) -> Path:
    """The folder whose skills count: one `by` could start a session in (403 for any other)."""
    if workspace is None:
        return services.settings.resolved_workspace
    if not workspace.startswith("~") and not Path(workspace).is_absolute():
        raise BadRequest(f"workspace must be an absolute path, got {workspace!r}")
    path = existing_directory(workspace)
    if path is None:
        raise BadRequest(f"workspace {workspace} does not exist or is not a directory")
    return services.sessions.allowed_workspace(path, by=by)


# Plain `def` routes: they read files, so FastAPI runs them in its thread pool.
@router.get("")
def list_skills(services: Services, principal: Viewer, workspace: WorkspaceQuery = None) -> list[Skill]:
    """Every skill the workspace sees, one per name, sorted; unavailable ones say why."""
    return services.skills.list(_workspace(services, workspace, principal))


@router.get("/{name}")
def get_skill(name: str, services: Services, principal: Viewer, workspace: WorkspaceQuery = None) -> Skill:
    return services.skills.get(name, _workspace(services, workspace, principal))


@router.put("/{name}")
def save_skill(name: str, body: SkillContent, services: Services, _: Admin) -> Skill:
    """Create or replace the person's skill `name`; an invalid SKILL.md is a 400 naming the fault.

    An admin's: a skill with `always` is in every system prompt.
    """
    return services.skills.save(name, body.content)


@router.delete("/{name}", status_code=status.HTTP_204_NO_CONTENT)
def delete_skill(name: str, services: Services, _: Admin) -> Response:
    """Delete the person's skill `name`; a built-in one is a 400, an unknown one a 404."""
    services.skills.delete(name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
