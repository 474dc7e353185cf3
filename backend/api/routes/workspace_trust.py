"""Workspace trust for the dashboard: what the host's workspaces hold that is not trusted, and
trusting exactly what an admin was shown (backend/app/workspace_trust.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from backend.api.deps import Admin, Services
from backend.app.workspace_trust import TrustedEntry, TrustItem, host_folders, host_trust
from backend.domain.errors import BadRequest
from backend.paths import existing_directory

router = APIRouter(prefix="/api/workspace-trust", tags=["settings"])


class TrustRequest(BaseModel):
    """Trust the file or folder at `path` if its content still has the hash the admin was shown."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=4096)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


# Plain `def` routes: they read and hash files, so FastAPI runs them in its thread pool.
@router.get("")
def untrusted(
    services: Services,
    _: Admin,
    workspace: Annotated[str | None, Query(description="another absolute workspace path to look at")] = None,
) -> list[TrustItem]:
    """What is left out now because it is new or changed: the config file of the folder the host
    started in, and the skills folders of its workspaces; each with the hash to trust it by."""
    extra = None
    if workspace is not None:
        extra = existing_directory(workspace)
        if extra is None or not extra.is_absolute():
            raise BadRequest(f"workspace {workspace} is not an absolute path to a directory")
    return host_trust(services).untrusted(host_folders(services, extra))


@router.post("")
def trust(body: TrustRequest, services: Services, _: Admin) -> TrustedEntry:
    """Recorded only if the content's hash is still `sha256` (409 otherwise): an admin trusts
    exactly what they read. A config file counts from the host's next start, skills at once."""
    return host_trust(services).trust(Path(body.path), body.sha256)
