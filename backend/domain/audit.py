"""Which audit rows a person asks for: the audit log's filters as one value."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from backend.domain.models import DecidedBy


@dataclass(kw_only=True, frozen=True)
class AuditQuery:
    """Which audit rows to list; every field left None matches all."""

    session_id: str | None = None
    tool: str | None = None
    """A tool's full name (`mcp__shell__exec`), or a server's prefix (`mcp__shell`) for all its tools."""
    decision: Literal["allow", "deny"] | None = None
    decided_by: DecidedBy | None = None
    who: str | None = None
    """The decider's name: a person, an API key, or `overseer` for rules, policies and timeouts."""
    since: datetime | None = None
    until: datetime | None = None
    """Rows created at or after `since` and before `until`."""
