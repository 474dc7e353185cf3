"""How jobs read in tool results: one line each, times in the job's own time zone."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def local_time(iso: str | None, zone_name: str) -> str:
    """`2026-05-04 09:00 CEST` for a stored UTC time, read in the job's zone."""
    if not iso:
        return "none"
    try:
        zone = ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    when = datetime.fromisoformat(iso).astimezone(zone)
    return when.strftime("%Y-%m-%d %H:%M %Z")


def describe_job(job: dict[str, Any]) -> str:
    """`<id> "<name>" [status]: <schedule> (<zone>); next run ...; last run ...; target`."""
    zone = str(job.get("timezone") or "UTC")
    parts = [
        f'{job.get("id")} "{job.get("name")}" [{job.get("status")}]: {job.get("schedule")} ({zone})',
        f"next run {local_time(job.get('next_run_at'), zone)}",
    ]
    if job.get("last_run_at") or job.get("last_status"):
        last = f"last run {local_time(job.get('last_run_at'), zone)} {job.get('last_status') or ''}".rstrip()
        if job.get("last_result"):
            last += f": {job['last_result']}"
        parts.append(last)
    target = job.get("session_id")
    parts.append(f"sends to session {target}" if target else f"starts a new {job.get('mode', 'agent')} session")
    return "; ".join(parts) + "."


def describe_jobs(jobs: list[dict[str, Any]]) -> str:
    """The list as lines, or a sentence saying there are none."""
    if not jobs:
        return "No scheduled jobs."
    header = "1 scheduled job:" if len(jobs) == 1 else f"{len(jobs)} scheduled jobs:"
    return "\n".join([header, *(f"- {describe_job(job)}" for job in jobs)])
