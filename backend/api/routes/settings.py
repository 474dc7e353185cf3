"""Policies, permission rules, the audit log and the disk checkpoints take (the servers are in servers.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, BeforeValidator

from backend.api.deps import MAX_STORED_INT, Admin, Services, Viewer
from backend.app.audit import ExportFormat
from backend.checkpoints.usage import CheckpointUsage
from backend.api.schemas import AuditPage, PoliciesBody
from backend.config import PermissionsConfig
from backend.domain.errors import Invalid
from backend.domain.models import DecidedBy, utcnow
from backend.domain.audit import AuditQuery

router = APIRouter(prefix="/api", tags=["settings"])


@router.get("/policies")
async def get_policies(services: Services, _: Viewer) -> PoliciesBody:
    return PoliciesBody(policies=services.policies.policies)


@router.put("/policies")
async def put_policies(body: PoliciesBody, services: Services, _: Admin) -> PoliciesBody:
    policies = PoliciesBody(policies=services.policies.set_policies(body.policies))
    services.servers.feed.changed()  # every tool's effective policy may have changed
    return policies


@router.get("/permissions")
async def get_permissions(services: Services, _: Viewer) -> PermissionsConfig:
    return services.policies.permissions


@router.put("/permissions")
async def put_permissions(body: PermissionsConfig, services: Services, _: Admin) -> PermissionsConfig:
    """Replace the rule lists; a rule that does not parse is a 422 naming it, and nothing changes."""
    return services.policies.set_permissions(body)


class RuleWarning(BaseModel):
    """A rule that names a server or tool that does not exist here (issue 35, item 12)."""

    level: Literal["warning", "error"]
    """`error`: a deny rule that covers nothing (the host refused to start with it, unless listed in
    `deny_unmatched_ok`; it may show here once a server renamed since has listed its tools)."""
    rule: str
    effect: Literal["allow", "ask", "deny"]
    source: str
    """`user` (overseer.yaml) or `agent:<id>`."""
    message: str


@router.get("/settings/rule-warnings")
async def rule_warnings(services: Services, _: Viewer) -> list[RuleWarning]:
    """The rules that cover no tool here, checked now against the configured servers and the tools
    each has listed (a server not listed yet is checked by its name alone); errors first."""
    return [RuleWarning.model_validate(f, from_attributes=True) for f in services.rule_references.findings()]


@router.get("/settings/checkpoints")
async def checkpoints_usage(services: Services, _: Admin) -> CheckpointUsage:
    """The disk checkpoints take (issue 32), in all and per workspace, with their retention. For
    an admin: it names the host's folders."""
    return await services.checkpoints_usage()


NO_NUL = r"^[^\x00]*$"
"""Text a person types to filter by: anything but NUL, which no store can compare."""


def _time_not_number(value: object) -> object:
    """pydantic reads a number as seconds since 1970 (`until=0.5` is 1970-01-01T00:00:00.5Z):
    a bound that is a number is a mistake, not a time; times are ISO 8601."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return value
        raise ValueError(f"{value!r} is a number, not a time: send ISO 8601 (2025-01-31T09:00:00Z)")
    return value


IsoTime = Annotated[datetime, BeforeValidator(_time_not_number)]


@router.get(
    "/audit",
    response_model=None,
    responses={
        200: {
            "description": "A page of decisions; with `format`, every matching one as a download",
            "content": {
                # The page, or (format=json) the export: an array of flat rows.
                "application/json": {
                    "schema": {"anyOf": [AuditPage.model_json_schema(), {"type": "array", "items": {"type": "object"}}]}
                },
                "text/csv": {"schema": {"type": "string"}},
            },
        }
    },
)
async def audit(
    services: Services,
    _: Viewer,
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_STORED_INT),
    session_id: str | None = Query(None, max_length=200, pattern=NO_NUL),
    tool: str | None = Query(
        None, max_length=300, pattern=NO_NUL, description="a tool's full name, or a server's prefix (mcp__shell)"
    ),
    decision: Literal["allow", "deny"] | None = None,
    decided_by: DecidedBy | None = None,
    who: str | None = Query(
        None, max_length=200, pattern=NO_NUL, description="who decided: a person, an API key, or overseer"
    ),
    since: IsoTime | None = Query(None, description="rows at or after this time (ISO 8601; UTC unless it says)"),
    until: IsoTime | None = Query(None, description="rows before this time"),
    format: ExportFormat | None = Query(None, description="csv or json: every matching row, as a download"),
) -> AuditPage | StreamingResponse:
    """Permission decisions, newest first, filtered; a page with session titles, or (`format`) an export."""
    if since is not None and until is not None and until <= since:
        raise Invalid("until must be later than since")
    query = AuditQuery(
        session_id=session_id, tool=tool, decision=decision, decided_by=decided_by, who=who, since=since, until=until
    )
    if format is not None:
        name = f"overseer-audit-{utcnow():%Y%m%d-%H%M%S}.{format}"
        return StreamingResponse(
            services.audit.export(query, format),
            media_type="text/csv; charset=utf-8" if format == "csv" else "application/json",
            headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"},
        )
    page = await services.audit.page(query, limit=limit, offset=offset)
    return AuditPage(
        items=[i.model_dump(mode="json") for i in page.entries], limit=limit, offset=offset, sessions=page.titles
    )
