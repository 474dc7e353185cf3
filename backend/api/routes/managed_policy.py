"""The managed policy, read-only: what an organisation fixed in a file no one here can change (issue 34)."""

from __future__ import annotations

from fastapi import APIRouter

from backend.api.deps import Services, Viewer
from backend.app.managed_policy import ManagedPolicyView

router = APIRouter(prefix="/api/policy", tags=["settings"])


@router.get("/managed")
async def managed_policy(services: Services, _: Viewer) -> ManagedPolicyView:
    """The managed policy in force (`active: false` when there is none): its deny and ask rules,
    locked, with the file they come from; its switches ("always allow", auto-approve, `--approve
    all`, unsandboxed runs turned off); the MCP servers its allow-list keeps from starting. No route
    changes it: an attempt to loosen it anywhere is a 403 naming the setting."""
    return services.policies.managed_view()
