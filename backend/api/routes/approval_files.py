"""The file a pending write or edit would change, for the approval card's diff."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter
from pydantic import BaseModel

from backend.api.deps import Approver, Services

router = APIRouter(prefix="/api/approvals", tags=["approvals"])


class FileOnDiskOut(BaseModel):
    path: str
    exists: bool
    content: str | None
    note: str | None


@router.get("/{approval_id}/file")
async def get_file_on_disk(approval_id: str, services: Services, _: Approver) -> FileOnDiskOut:
    """The target file as it is now: 400 for a call that writes no file or one outside the
    workspace, 409 once the request is answered. For those who answer approvals."""
    return FileOnDiskOut(**asdict(await services.approvals.file_on_disk(approval_id)))
