"""Policies, permission rules and the audit log (the servers are in servers.py)."""

from __future__ import annotations

from fastapi import APIRouter, Query

from backend.api.deps import MAX_STORED_INT, Admin, HostDep, Viewer
from backend.api.schemas import AuditPage, PoliciesBody
from backend.config import PermissionsConfig

router = APIRouter(prefix="/api", tags=["settings"])


@router.get("/policies")
async def get_policies(host: HostDep, _: Viewer) -> PoliciesBody:
    return PoliciesBody(policies=host.policies.policies)


@router.put("/policies")
async def put_policies(body: PoliciesBody, host: HostDep, _: Admin) -> PoliciesBody:
    policies = PoliciesBody(policies=host.policies.set_policies(body.policies))
    host.servers.feed.changed()  # every tool's effective policy may have changed
    return policies


@router.get("/permissions")
async def get_permissions(host: HostDep, _: Viewer) -> PermissionsConfig:
    return host.policies.permissions


@router.put("/permissions")
async def put_permissions(body: PermissionsConfig, host: HostDep, _: Admin) -> PermissionsConfig:
    """Replace the rule lists; a rule that does not parse is a 422 naming it, and nothing changes."""
    return host.policies.set_permissions(body)


@router.get("/audit")
async def audit(
    host: HostDep,
    _: Viewer,
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_STORED_INT),
    session_id: str | None = None,
) -> AuditPage:
    items = await host.store.list_audit(limit=limit, offset=offset, session_id=session_id)
    return AuditPage(items=[i.model_dump(mode="json") for i in items], limit=limit, offset=offset)
