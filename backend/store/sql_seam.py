"""The seam between the store methods written once (`sql_store`, `sql_approvals`, `sql_schedules`,
`sql_workflows`) and one database: the few things SQLite's and Postgres's stores each do their own way."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable
from typing import Any, ClassVar

from backend.domain.checkpoints import Checkpoint
from backend.domain.models import AuditEntry, Event, Message, ToolCallRecord
from backend.store.base import Written
from backend.store.statements import Statements

Statement = tuple[str, tuple[Any, ...]]


class SqlSeam(ABC):
    """What a store provides for the shared methods to run their SQL on its database."""

    sql: ClassVar[Statements]
    """The fixed statements, in the store's dialect (`sql.dialect`)."""

    approval_written: ClassVar[tuple[Statement, ...]] = ()
    """Run in the transaction of every approval write: what tells another process it changed
    (`data_version`). SQLite needs nothing (its `PRAGMA data_version` sees every commit)."""

    @abstractmethod
    async def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """One statement in a transaction of its own; the number of rows it touched."""

    @abstractmethod
    async def _execute_all(self, statements: list[Statement]) -> list[int]:
        """Statements in one transaction; the number of rows each touched."""

    @abstractmethod
    async def _fetch_all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """The rows of a query."""

    @abstractmethod
    def _unit(
        self,
        statements: list[Statement] | None = None,
        *,
        message: Message | None = None,
        event: Event | None = None,
        second: Event | None = None,
    ) -> Awaitable[Written]:
        """Statements plus an optional message and event, in one transaction.

        The message's idx and the event's seq are the session's next numbers, read inside the
        transaction, so they stay gapless and distinct whichever process writes; `second`, an
        event of the same session, takes the seq after `event`'s. The id the first statement
        made (the audit row's) comes back as `row_id`.
        """

    def _audit_write(self, entry: AuditEntry) -> Statement:
        """The insert of an audit row."""
        return self.sql.insert_audit, (entry.session_id, self.sql.dialect.time(entry.created_at), entry.model_dump_json())

    def _checkpoint_write(self, checkpoint: Checkpoint) -> Statement:
        """The insert of a checkpoint's row."""
        cp = checkpoint
        return self.sql.insert_checkpoint, (cp.session_id, cp.step, cp.workspace, self.sql.dialect.time(cp.created_at), cp.model_dump_json())

    def _call_write(self, record: ToolCallRecord) -> Statement:
        """The upsert of a tool call's row."""
        when = self.sql.dialect.time(record.created_at)
        row = (record.session_id, record.id, record.status, when, record.model_dump_json())
        return self.sql.upsert_call, row
