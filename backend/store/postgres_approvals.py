"""Approvals and the audit log in Postgres, mixed into PostgresStore.

Every approval write also bumps the one-row `approval_version` in its own transaction, which is
what `data_version` reads: the approval watch of another host sees the number change no earlier
than the answer itself is visible.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from psycopg import AsyncConnection

from backend.domain.models import Approval, ApprovalStatus, AuditEntry, Event, ToolCallRecord
from backend.store.base import NotFound, Written
from backend.store.postgres_notify import APPROVALS_CHANNEL
from backend.store.queries import POSTGRES, AuditQuery, audit_where

_BUMP = "UPDATE approval_version SET version = version + 1"


class PostgresApprovalStore:
    """Approval rows, their compare-and-set close, and the audit log; expects PostgresStore's helpers."""

    if TYPE_CHECKING:
        _UPSERT_CALL: str

        def _transaction(self) -> AbstractAsyncContextManager[AsyncConnection[Any]]: ...
        async def _fetch_all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]: ...
        def _call_params(self, record: ToolCallRecord) -> tuple[Any, ...]: ...
        async def _unit(
            self,
            statements: list[tuple[str, tuple[Any, ...]]] | None = None,
            *,
            message: Any = None,
            event: Event | None = None,
        ) -> Written: ...

    async def save_approval(self, approval: Approval) -> None:
        async with self._transaction() as conn:
            await conn.execute(
                "INSERT INTO approvals (id, session_id, tool_call_id, status, created_at, data) "
                "VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET status = excluded.status, data = excluded.data",
                (
                    approval.id,
                    approval.session_id,
                    approval.tool_call_id,
                    approval.status,
                    approval.created_at,
                    approval.model_dump_json(),
                ),
            )
            await conn.execute(_BUMP)

    async def close_approval(self, approval: Approval) -> bool:
        """Write an answered approval only while it is still pending; True when this write closed it.

        A compare-and-set: under READ COMMITTED a second UPDATE waits for the first's row lock, then
        re-checks `status = 'pending'` against the committed row and matches nothing.
        """
        async with self._transaction() as conn:
            cursor = await conn.execute(
                "UPDATE approvals SET status = %s, data = %s WHERE id = %s AND status = 'pending'",
                (approval.status, approval.model_dump_json(), approval.id),
            )
            if cursor.rowcount != 1:
                return False
            # A host whose run waits on it hears so at this commit (backend/store/postgres_notify.py).
            await conn.execute(
                "WITH bumped AS (UPDATE approval_version SET version = version + 1 RETURNING 1) "
                "SELECT pg_notify(%s, %s) FROM bumped",
                (APPROVALS_CHANNEL, approval.id),
            )
            return True

    async def get_approval(self, approval_id: str) -> Approval:
        rows = await self._fetch_all("SELECT data FROM approvals WHERE id = %s", (approval_id,))
        if not rows:
            raise NotFound(f"no approval {approval_id!r}")
        return Approval.model_validate_json(rows[0][0])

    async def approval_statuses(self, approval_ids: Iterable[str]) -> dict[str, ApprovalStatus]:
        """The current status of each listed approval that exists, in one read."""
        wanted = list(approval_ids)
        if not wanted:
            return {}
        rows = await self._fetch_all("SELECT id, status FROM approvals WHERE id = ANY(%s)", (wanted,))
        return {r[0]: r[1] for r in rows}

    async def data_version(self) -> int:
        """Changes whenever any process commits an approval write (this one's included: a hint)."""
        rows = await self._fetch_all("SELECT version FROM approval_version")
        return int(rows[0][0])

    async def list_approvals(
        self, *, status: ApprovalStatus | None = None, session_id: str | None = None
    ) -> list[Approval]:
        clauses: list[str] = []
        params: list[str] = []
        if status is not None:
            clauses.append("status = %s")
            params.append(status)
        if session_id is not None:
            clauses.append("session_id = %s")
            params.append(session_id)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = await self._fetch_all(f"SELECT data FROM approvals {where} ORDER BY created_at, ord", tuple(params))
        return [Approval.model_validate_json(r[0]) for r in rows]

    async def add_audit(self, entry: AuditEntry) -> AuditEntry:
        return entry.model_copy(update={"id": (await self.record_decision(entry)).row_id})

    async def record_decision(
        self, entry: AuditEntry, record: ToolCallRecord | None = None, *, event: Event | None = None
    ) -> Written:
        writes: list[tuple[str, tuple[Any, ...]]] = [
            (
                "INSERT INTO audit (session_id, created_at, data) VALUES (%s, %s, %s) RETURNING id",
                (entry.session_id, entry.created_at, entry.model_dump_json()),
            )
        ]
        if record is not None:
            writes.append((self._UPSERT_CALL, self._call_params(record)))
        return await self._unit(writes, event=event)

    async def list_audit(
        self, *, limit: int = 100, offset: int = 0, session_id: str | None = None, query: AuditQuery | None = None
    ) -> list[AuditEntry]:
        query = query or AuditQuery()
        if session_id is not None:
            query = replace(query, session_id=session_id)
        where, params = audit_where(query, POSTGRES)
        rows = await self._fetch_all(
            f"SELECT id, data FROM audit {where} ORDER BY id DESC LIMIT %s OFFSET %s", (*params, limit, offset)
        )
        return [AuditEntry.model_validate_json(r[1]).model_copy(update={"id": r[0]}) for r in rows]
