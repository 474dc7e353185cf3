"""Approvals and the audit log, written once for both databases; mixed into SqlStore.

Closing an approval and `data_version` are each store's own: they are how another process
(another host) learns of an answer, which SQLite and Postgres do differently.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from dataclasses import replace

from backend.domain.models import Approval, ApprovalStatus, AuditEntry, Event, ToolCallRecord
from backend.store.base import NotFound, Written
from backend.domain.audit import AuditQuery
from backend.store.queries import audit_where, one_of, where
from backend.store.sql_seam import SqlSeam, Statement


class SqlApprovals(SqlSeam):
    """Approval rows and the audit log."""

    async def save_approval(self, approval: Approval) -> None:
        params = (
            approval.id,
            approval.session_id,
            approval.tool_call_id,
            approval.status,
            self.sql.dialect.time(approval.created_at),
            approval.model_dump_json(),
        )
        await self._execute_all([(self.sql.upsert_approval, params), *self.approval_written])

    async def get_approval(self, approval_id: str) -> Approval:
        rows = await self._fetch_all(self.sql.get_approval, (approval_id,))
        if not rows:
            raise NotFound(f"no approval {approval_id!r}")
        return Approval.model_validate_json(rows[0][0])

    async def approval_statuses(self, approval_ids: Iterable[str]) -> dict[str, ApprovalStatus]:
        """The current status of each listed approval that exists, in one read."""
        wanted = list(approval_ids)
        if not wanted:
            return {}
        clause, params = one_of("id", wanted, self.sql.dialect)
        rows = await self._fetch_all(f"SELECT id, status FROM approvals WHERE {clause}", tuple(params))
        return {r[0]: r[1] for r in rows}

    async def list_approvals(
        self, *, status: ApprovalStatus | None = None, session_id: str | None = None
    ) -> list[Approval]:
        d = self.sql.dialect
        clauses: list[str] = []
        params: list[str] = []
        for column, value in (("status", status), ("session_id", session_id)):
            if value is not None:
                clauses.append(f"{column} = {d.mark}")
                params.append(value)
        rows = await self._fetch_all(
            f"SELECT data FROM approvals {where(clauses)} ORDER BY created_at, {d.order}", tuple(params)
        )
        return [Approval.model_validate_json(r[0]) for r in rows]

    async def add_audit(self, entry: AuditEntry) -> AuditEntry:
        return entry.model_copy(update={"id": (await self.record_decision(entry)).row_id})

    def record_decision(
        self, entry: AuditEntry, record: ToolCallRecord | None = None, *, event: Event | None = None
    ) -> Awaitable[Written]:
        writes: list[Statement] = [self._audit_write(entry)]
        if record is not None:
            writes.append(self._call_write(record))
        return self._unit(writes, event=event)

    async def list_audit(
        self, *, limit: int = 100, offset: int = 0, session_id: str | None = None, query: AuditQuery | None = None
    ) -> list[AuditEntry]:
        d = self.sql.dialect
        query = query or AuditQuery()
        if session_id is not None:
            query = replace(query, session_id=session_id)
        clause, params = audit_where(query, d)
        rows = await self._fetch_all(
            f"SELECT id, data FROM audit {clause} ORDER BY id DESC LIMIT {d.mark} OFFSET {d.mark}",
            (*params, limit, offset),
        )
        return [AuditEntry.model_validate_json(r[1]).model_copy(update={"id": r[0]}) for r in rows]
