"""`invoke_agent` runs started as MCP tasks (issue 35, item 6): which session a task follows,
whose it is, and how it ended once it did.

The task is a handle on an agent session, which is durable already; the row adds only what the
session cannot say: the caller the task belongs to (no one else may read or cancel it), how long
it is kept, and, once the run ended, its final status and result, kept as they were first seen
(a later follow-up of the same session must not change a finished task).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from backend.domain.models import utcnow

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TaskEnd = Literal["completed", "failed", "cancelled"]


class GatewayTask(BaseModel):
    """One task-augmented `invoke_agent` call and the session it runs."""

    id: str
    """Random and unguessable; the caller's only handle on it."""
    session_id: str
    owner: str
    """Who started it (`kind:name` of the principal): the only caller who may see it."""
    ttl_ms: int
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    cancel_requested: bool = False
    """tasks/cancel was called: the task reads `cancelled` from then on, whatever the run does."""
    ended: TaskEnd | None = None
    result: dict[str, Any] | None = None
    """The CallToolResult (wire JSON) a plain call would have returned, once the run ended."""

    def expired(self, now: datetime | None = None) -> bool:
        """Ended and past its time to live: gone for every caller. A run still going keeps its task
        (an approval may wait overnight), as the spec allows: a server *may* drop a task after it."""
        due = self.created_at + timedelta(milliseconds=self.ttl_ms)
        return self.ended is not None and (now or utcnow()) >= due
