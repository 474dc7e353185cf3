"""Scheduled agent runs (cron jobs): the stored job and the API's request bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.domain.models import utcnow

ScheduleKind = Literal["cron", "every", "once"]
"""A cron expression, a fixed interval (`every 10m`), or one ISO 8601 time."""

ScheduleStatus = Literal["active", "paused", "done"]
"""`done` is where a one-shot job ends after its run; it never fires again."""

RunStatus = Literal["running", "completed", "stopped", "error", "skipped", "missed"]
"""How the job's latest firing went: the run's session status once it ends, or why nothing ran."""

SKIPPED_STILL_ACTIVE = "skipped: previous run still active"


class Schedule(BaseModel):
    """One cron job: when it fires, what it asks, where the answer goes, and how it last went."""

    id: str
    name: str
    schedule: str
    """The schedule as written (normalised): `*/5 * * * *`, `every 10m`, or an ISO time."""
    kind: ScheduleKind
    timezone: str
    """IANA name the schedule's wall-clock times are read in, e.g. `Europe/Berlin`."""
    prompt: str
    mode: str = "agent"
    session_id: str | None = None
    """Send each run's prompt into this session instead of starting a new session."""
    workspace: str | None = None
    """Where new sessions run; None means the host's default workspace."""
    agent: str | None = None
    """The named agent its new sessions belong to (issue 19); None: the `cron` route's, else main."""
    status: ScheduleStatus = "active"
    next_run_at: datetime | None = None
    """UTC; None while paused or done."""
    anchor_at: datetime = Field(default_factory=utcnow)
    """The phase of an `every` job: runs fall at anchor + k * interval."""
    last_run_at: datetime | None = None
    last_session_id: str | None = None
    last_status: RunStatus | None = None
    last_result: str | None = None
    """An excerpt of the last run's final answer, its error, or why it did not run."""
    run_count: int = 0
    created_by_session: str | None = None
    """The session whose agent created the job through the cron tool, if any."""
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class ScheduleCreate(BaseModel):
    """Body of `POST /api/schedules`."""

    model_config = ConfigDict(extra="forbid")

    schedule: str = Field(min_length=1, max_length=200)
    prompt: str = Field(min_length=1, max_length=200_000)
    name: str | None = Field(default=None, max_length=200)
    mode: str = Field(default="agent", min_length=1, max_length=100)
    timezone: str | None = Field(default=None, max_length=100)
    """IANA time zone; default: the host's local zone (UTC when it has no IANA name)."""
    session_id: str | None = Field(default=None, max_length=200)
    workspace: str | None = Field(default=None, max_length=4096)
    agent: str | None = Field(default=None, min_length=1, max_length=100)
    """Default: the agent of `created_by_session`, if given (an agent's job stays its own)."""
    created_by_session: str | None = Field(default=None, max_length=200)


class ScheduleUpdate(BaseModel):
    """Body of `PATCH /api/schedules/{id}`: only the fields given change."""

    model_config = ConfigDict(extra="forbid")

    schedule: str | None = Field(default=None, min_length=1, max_length=200)
    prompt: str | None = Field(default=None, min_length=1, max_length=200_000)
    name: str | None = Field(default=None, min_length=1, max_length=200)
    mode: str | None = Field(default=None, min_length=1, max_length=100)
    timezone: str | None = Field(default=None, max_length=100)
    session_id: str | None = Field(default=None, max_length=200)
    workspace: str | None = Field(default=None, max_length=4096)
    agent: str | None = Field(default=None, min_length=1, max_length=100)
