"""The cron server: create, list, pause, resume and delete scheduled agent runs.

A thin client of the host: jobs live in the host's store behind `/api/schedules`, and the
host's scheduler fires them. This server only forwards requests and words the answers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from mcp_servers._shared.host_client import HostClient
from mcp_servers._shared.workspace import SESSION_META_KEY, WORKSPACE_META_KEY
from mcp_servers.cron.render import describe_job, describe_jobs

DESCRIPTION = "Overseer cron tool server: schedule agent runs on the Overseer host"

INSTRUCTIONS = (
    "Schedules agent runs on the Overseer host. A schedule is a 5-field cron expression "
    "('0 9 * * 1-5'), an interval ('every 10m', 'every 2h', 'every 1d'; at least 1 minute), or an "
    "ISO 8601 time for one run ('2026-05-01T09:00'). Times are read in the job's time zone (an "
    "IANA name; default: the host's). Each run starts a new session unless session_id is given."
)

# Every tool talks to the local Overseer host only: a closed world.
READS = ToolAnnotations(
    title="List scheduled runs", readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
CREATES = ToolAnnotations(
    title="Schedule an agent run", readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
DELETES = ToolAnnotations(
    title="Delete a scheduled run", readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
)
PAUSES = ToolAnnotations(
    title="Pause a scheduled run", readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
RESUMES = ToolAnnotations(
    title="Resume a scheduled run", readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False
)

_JOB_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
JobId = Annotated[str, Field(min_length=1, description="the job's id, as cron_list or cron_create gave it")]


def create_server(
    root: Path, *, trust_meta: bool, host_url: str | None = None, token: str | None = None
) -> MCPServer:
    """Build the server; `token=None` reads $OVERSEER_TOKEN. `root` is unused (jobs live on the host).

    With `trust_meta` (the host launched us) the calling session, from `_meta`, is recorded as
    the job's creator, its workspace becomes the job's, and `session_id="current"` means it.
    """
    del root
    host = HostClient(host_url, token, server="cron")
    server = MCPServer("cron", instructions=INSTRUCTIONS)

    def meta_of(ctx: Context) -> dict[str, Any]:
        meta = ctx.request_context.meta if trust_meta else None
        return dict(meta) if meta else {}

    @server.tool(name="cron_create", annotations=CREATES)
    async def cron_create(
        schedule: Annotated[str, Field(description="'0 9 * * 1-5', 'every 10m', or '2026-05-01T09:00' for one run")],
        prompt: Annotated[str, Field(min_length=1, description="what the agent is asked at each run, self-contained")],
        ctx: Context,
        mode: Annotated[str | None, Field(description="the run's mode, e.g. agent, ask, plan; default agent")] = None,
        session_id: Annotated[
            str | None,
            Field(description="send each run's prompt into this session instead of a new one; 'current' = this one"),
        ] = None,
        name: Annotated[str | None, Field(description="a short name; default: the prompt's first line")] = None,
        timezone: Annotated[
            str | None, Field(description="IANA time zone, e.g. Europe/Berlin; default: the host's local zone")
        ] = None,
    ) -> CallToolResult:
        """Schedule an agent run: recurring (cron or interval) or once at a given time.

        Each run is a session on the host (marked as coming from cron); its tool calls need
        approval like any other. Returns the job with its id and next run time.
        """
        meta = meta_of(ctx)
        if session_id == "current":
            session_id = _string(meta.get(SESSION_META_KEY))
            if session_id is None:
                raise ToolError("session_id 'current' only works inside Overseer; give a session id")
        body: dict[str, Any] = {"schedule": schedule, "prompt": prompt}
        for key, value in (("mode", mode), ("session_id", session_id), ("name", name), ("timezone", timezone)):
            if value:
                body[key] = value
        if _string(meta.get(SESSION_META_KEY)):
            body["created_by_session"] = meta[SESSION_META_KEY]
        if _string(meta.get(WORKSPACE_META_KEY)):
            body["workspace"] = meta[WORKSPACE_META_KEY]
        job = await host.request("POST", "/api/schedules", json=body)
        return _result(f"Scheduled job {describe_job(job)}", {"schedule": job})

    @server.tool(name="cron_list", annotations=READS)
    async def cron_list() -> CallToolResult:
        """List every scheduled job: its id, schedule, status, next run and how its last run went."""
        jobs = await host.request("GET", "/api/schedules")
        return _result(describe_jobs(jobs), {"schedules": jobs})

    @server.tool(name="cron_delete", annotations=DELETES)
    async def cron_delete(id: JobId) -> CallToolResult:
        """Delete a job for good; a run already in progress finishes as an ordinary session."""
        await host.request("DELETE", f"/api/schedules/{_path(id)}")
        return _result(f"Deleted job {id}.", {"deleted": id})

    @server.tool(name="cron_pause", annotations=PAUSES)
    async def cron_pause(id: JobId) -> CallToolResult:
        """Pause a job: it does not fire until resumed (pausing a paused job changes nothing)."""
        job = await host.request("POST", f"/api/schedules/{_path(id)}/pause")
        return _result(f"Paused job {describe_job(job)}", {"schedule": job})

    @server.tool(name="cron_resume", annotations=RESUMES)
    async def cron_resume(id: JobId) -> CallToolResult:
        """Resume a paused job from its next time after now; times missed while paused do not run."""
        job = await host.request("POST", f"/api/schedules/{_path(id)}/resume")
        return _result(f"Resumed job {describe_job(job)}", {"schedule": job})

    return server


def _result(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def _string(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _path(job_id: str) -> str:
    # An id is one plain path segment: nothing in it may steer the request to another route.
    if not _JOB_ID.fullmatch(job_id):
        raise ToolError(f"{job_id!r} is not a job id; cron_list shows the ids")
    return job_id
