"""Checkpoints (issue 32): the workspace as it was before a step that may change it, kept in a
shadow repository beside the data dir (backend/checkpoints/), and its row in the store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from backend.domain.errors import Conflict
from backend.domain.models import Decider, utcnow

CheckpointKind = Literal["step", "rewind"]
"""`step`: taken before a tool call; `rewind`: taken before a rewind, so the rewind can be undone."""


class Checkpoint(BaseModel):
    """The workspace before one step of a session: the shadow repository's commit of it."""

    session_id: str
    step: int = Field(ge=1)
    """1-based per session, as the dashboard numbers the steps that changed (or may change) the workspace."""
    tool_call_id: str | None
    """None for a rewind's own checkpoint."""
    tool_name: str | None
    kind: CheckpointKind = "step"
    workspace: str
    """The workspace's real path."""
    commit: str
    """The shadow repository's commit: the state BEFORE the step."""
    created_at: datetime = Field(default_factory=utcnow)
    skipped: list[str] = Field(default_factory=list)
    """What the snapshot left out, each as "path: reason" (over the size limit, ignored)."""
    by: Decider | None = None
    """For a rewind: who asked."""


@dataclass(slots=True)
class RetainedCheckpoint:
    """What retention weighs of one checkpoint's row, read without parsing the row's JSON (it
    runs every few dozen steps over every row of a workspace; not frozen: a frozen dataclass
    takes three times as long to make)."""

    session_id: str
    step: int
    commit: str
    old: bool
    """Taken before the time retention asked about."""
    active: bool
    """Its session is running or waiting (it may rewind to any of its checkpoints)."""


class WorkspaceBusy(Conflict):
    """Another holder (this host or another) kept the workspace's checkpoint lock past the wait."""
