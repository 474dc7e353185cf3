"""The persistence interface. SQLite implements it today; Postgres is meant to be a small change."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from backend.domain.models import (
    Approval,
    ApprovalStatus,
    AuditEntry,
    Event,
    Message,
    Session,
    ToolCallRecord,
)


class NotFound(LookupError):
    """No row with that id."""


@dataclass(kw_only=True)
class Written:
    """What one write stored: the message and event with their idx and seq, the first row id."""

    message: Message | None = None
    event: Event | None = None
    row_id: int | None = None


class Store(Protocol):
    """Everything a restart must not lose."""

    async def open(self) -> None: ...
    async def close(self) -> None: ...

    async def create_session(self, session: Session) -> Session: ...
    async def get_session(self, session_id: str) -> Session: ...
    async def save_session(self, session: Session) -> Session: ...
    async def list_sessions(self, *, statuses: Iterable[str] | None = None, limit: int = 200) -> list[Session]: ...
    async def delete_session(self, session_id: str) -> None: ...

    async def add_message(self, message: Message) -> Message: ...
    async def list_messages(self, session_id: str) -> list[Message]: ...

    async def save_tool_call(self, record: ToolCallRecord) -> None: ...
    async def finish_tool_call(self, record: ToolCallRecord, result: Message, *, event: Event | None = None) -> Written:
        """Record a tool call's end, its result message (and its event) in one transaction."""
        ...
    async def list_tool_calls(self, session_id: str) -> list[ToolCallRecord]: ...

    async def save_approval(self, approval: Approval) -> None: ...
    async def get_approval(self, approval_id: str) -> Approval: ...
    async def list_approvals(
        self, *, status: ApprovalStatus | None = None, session_id: str | None = None
    ) -> list[Approval]: ...

    async def add_audit(self, entry: AuditEntry) -> AuditEntry: ...
    async def record_decision(
        self, entry: AuditEntry, record: ToolCallRecord | None = None, *, event: Event | None = None
    ) -> Written:
        """Write an audit row and, in the same transaction, the tool call's new state (and event)."""
        ...
    async def list_audit(self, *, limit: int = 100, offset: int = 0, session_id: str | None = None) -> list[AuditEntry]: ...

    async def append_event(self, event: Event) -> Event:
        """Give the event the session's next seq and persist it."""
        ...
    async def last_seq(self, session_id: str) -> int: ...
    async def list_events(self, session_id: str, *, since: int = 0, limit: int = 10_000) -> list[Event]: ...
