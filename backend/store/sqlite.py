"""SQLite (WAL) implementation of the Store.

Every write is one unit of work on the connection's own thread (see `sqlite_thread`). Several
processes may share the file (`overseer serve` and `overseer mcp` on one data dir), so nothing
the database numbers is cached here: a message's idx and an event's seq are read from the
database inside the write transaction, whose BEGIN IMMEDIATE serialises writers across processes.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from backend.domain.models import (
    Approval,
    ApprovalStatus,
    AuditEntry,
    Event,
    Message,
    Session,
    ToolCallRecord,
)
from backend.paths import private_dir, private_file
from backend.store.base import NotFound, SessionDecision, Written, apply_decision
from backend.store.queries import SQLITE, AuditQuery, audit_where, session_where
from backend.store.schema import MIGRATIONS, SCHEMA_VERSION
from backend.store.sqlite_schedules import SqliteScheduleStore
from backend.store.ready import Done, then
from backend.store.sqlite_thread import SqliteThread, Waits
from backend.store.sqlite_workflows import SqliteWorkflowStore


class SchemaTooNew(RuntimeError):
    """The database was written by a newer Overseer."""


class SqliteStore(SqliteScheduleStore, SqliteWorkflowStore):
    """The embedded store: `<data dir>/overseer.db`."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.db = SqliteThread(self.path)
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        private_dir(self.path.parent)
        if str(self.path) != ":memory:":
            private_file(self.path)  # SQLite gives its -wal and -shm files the database's mode
        await self.db.open()
        try:
            await self._migrate()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        await self.db.close()

    async def __aenter__(self) -> SqliteStore:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _migrate(self) -> None:
        version = await self.schema_version()
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(f"{self.path} has schema {version}; this Overseer knows up to {SCHEMA_VERSION}")
        for step in range(version, SCHEMA_VERSION):
            script = f"BEGIN;\n{MIGRATIONS[step]}\nPRAGMA user_version = {step + 1};\nCOMMIT;"
            await self.db.run(self.db.conn.executescript, script)

    async def schema_version(self) -> int:
        rows = await self.db.fetch_all("PRAGMA user_version")
        return int(rows[0][0])

    async def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        async with self._lock:
            await self.db.execute(sql, params)

    async def _fetch_all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return await self.db.fetch_all(sql, params)

    # sessions

    async def create_session(self, session: Session) -> Session:
        await self._write(
            "INSERT INTO sessions (id, status, parent_id, created_at, data) VALUES (?, ?, ?, ?, ?)",
            (session.id, session.status, session.parent_id, session.created_at.isoformat(), session.model_dump_json()),
        )
        return session

    async def get_session(self, session_id: str) -> Session:
        rows = await self._fetch_all("SELECT data FROM sessions WHERE id = ?", (session_id,))
        if not rows:
            raise NotFound(f"no session {session_id!r}")
        return Session.model_validate_json(rows[0][0])

    async def save_session(self, session: Session) -> Session:
        async with self._lock:
            cursor = await self.db.execute(
                "UPDATE sessions SET status = ?, data = ? WHERE id = ?",
                (session.status, session.model_dump_json(), session.id),
            )
        if cursor.rowcount == 0:
            raise NotFound(f"no session {session.id!r}")
        return session

    async def change_session(self, session_id: str, decide: SessionDecision) -> tuple[Session, Session | None]:
        def change(conn: sqlite3.Connection) -> tuple[Session, Session | None]:
            row = conn.execute("SELECT data FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise NotFound(f"no session {session_id!r}")
            before = Session.model_validate_json(row[0])
            after = apply_decision(before, decide)
            if after is not None:
                conn.execute(
                    "UPDATE sessions SET status = ?, data = ? WHERE id = ?",
                    (after.status, after.model_dump_json(), session_id),
                )
            return before, after

        # BEGIN IMMEDIATE takes the write lock before the read: another process's write waits.
        async with self._lock:
            return await self.db.transaction(change)

    async def list_sessions(
        self,
        *,
        statuses: Iterable[str] | None = None,
        limit: int = 200,
        archived: bool | None = None,
        text: str | None = None,
    ) -> list[Session]:
        where, params = session_where(
            SQLITE, statuses=None if statuses is None else list(statuses), archived=archived, text=text
        )
        rows = await self._fetch_all(
            f"SELECT data FROM sessions {where} ORDER BY created_at DESC LIMIT ?", (*params, limit)
        )
        return [Session.model_validate_json(r[0]) for r in rows]

    async def list_children(self, parent_id: str, *, statuses: Iterable[str] | None = None) -> list[Session]:
        where, params = "parent_id = ?", [parent_id]
        if statuses is not None:
            wanted = list(statuses)
            where += f" AND status IN ({','.join('?' * len(wanted))})"
            params += wanted
        rows = await self._fetch_all(
            f"SELECT data FROM sessions WHERE {where} ORDER BY created_at, rowid", tuple(params)
        )
        return [Session.model_validate_json(r[0]) for r in rows]

    async def delete_session(self, session_id: str) -> None:
        def delete(conn: sqlite3.Connection) -> sqlite3.Cursor:
            for table in ("messages", "tool_calls", "approvals", "events"):
                conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            return conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

        async with self._lock:
            cursor = await self.db.transaction(delete)
        if cursor.rowcount == 0:
            raise NotFound(f"no session {session_id!r}")

    # messages and tool calls

    def _unit(
        self,
        statements: list[tuple[str, tuple[Any, ...]]] = [],  # noqa: B006 - never mutated
        *,
        message: Message | None = None,
        event: Event | None = None,
    ) -> Awaitable[Written]:
        """Write statements plus an optional message and event as one transaction, in one hop.

        Message idx and event seq are the session's next numbers in the database, read inside the
        transaction, so they stay gapless and distinct whichever process writes.

        When no write of this store is waiting and SQLite's lock is free, the write is done on
        the spot and a `Done` awaitable comes back (see `backend.store.ready`); otherwise it waits its
        turn, in order.
        """

        def work(conn: sqlite3.Connection) -> Written:
            row_ids = [conn.execute(sql, params).lastrowid for sql, params in statements]
            stored_message = stored_event = None
            if message is not None:
                (idx,) = conn.execute(
                    "SELECT COALESCE(MAX(idx), -1) + 1 FROM messages WHERE session_id = ?",
                    (message.session_id,),
                ).fetchone()
                stored_message = message.model_copy(update={"idx": idx})
                row_ids.append(
                    conn.execute(
                        "INSERT INTO messages (session_id, idx, data) VALUES (?, ?, ?)",
                        (stored_message.session_id, idx, stored_message.model_dump_json()),
                    ).lastrowid
                )
            if event is not None:
                (seq,) = conn.execute(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE session_id = ?", (event.session_id,)
                ).fetchone()
                stored_event = event.model_copy(update={"seq": seq})
                row_ids.append(
                    conn.execute(
                        "INSERT INTO events (session_id, seq, type, data) VALUES (?, ?, ?, ?)",
                        (stored_event.session_id, seq, stored_event.type, stored_event.model_dump_json()),
                    ).lastrowid
                )
            return Written(message=stored_message, event=stored_event, row_id=row_ids[0] if row_ids else None)

        single = statements[0] if message is None and event is None and len(statements) == 1 else None
        if not self._lock.locked():
            try:
                if single is not None:
                    cursor = self.db.execute_now(*single)
                    if not isinstance(cursor, Waits):
                        return Done(Written(row_id=cursor.lastrowid))
                else:
                    written = self.db.transaction_now(work)
                    if not isinstance(written, Waits):
                        return Done(written)
            except Exception as exc:
                return Done(error=exc)
        return self._unit_in_turn(single, work)

    async def _unit_in_turn(
        self, single: tuple[str, tuple[Any, ...]] | None, work: Callable[[sqlite3.Connection], Written]
    ) -> Written:
        async with self._lock:
            if single is not None:
                return Written(row_id=(await self.db.execute(*single)).lastrowid)
            return await self.db.transaction(work)

    def add_message(self, message: Message) -> Awaitable[Message]:
        return then(self._unit(message=message), _stored_message)

    async def list_messages(self, session_id: str) -> list[Message]:
        rows = await self._fetch_all("SELECT data FROM messages WHERE session_id = ? ORDER BY idx", (session_id,))
        return [Message.model_validate_json(r[0]) for r in rows]

    _UPSERT_CALL = (
        "INSERT INTO tool_calls (session_id, id, status, created_at, data) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id, id) DO UPDATE SET status = excluded.status, data = excluded.data"
    )

    def _call_params(self, record: ToolCallRecord) -> tuple[Any, ...]:
        return (record.session_id, record.id, record.status, record.created_at.isoformat(), record.model_dump_json())

    async def save_tool_call(self, record: ToolCallRecord) -> None:
        await self._write(self._UPSERT_CALL, self._call_params(record))

    def finish_tool_call(
        self, record: ToolCallRecord, result: Message, *, event: Event | None = None
    ) -> Awaitable[Written]:
        return self._unit([(self._UPSERT_CALL, self._call_params(record))], message=result, event=event)

    async def list_tool_calls(self, session_id: str) -> list[ToolCallRecord]:
        rows = await self._fetch_all(
            "SELECT data FROM tool_calls WHERE session_id = ? ORDER BY created_at, rowid", (session_id,)
        )
        return [ToolCallRecord.model_validate_json(r[0]) for r in rows]

    # approvals and audit

    async def save_approval(self, approval: Approval) -> None:
        await self._write(
            "INSERT INTO approvals (id, session_id, tool_call_id, status, created_at, data) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, data = excluded.data",
            (
                approval.id,
                approval.session_id,
                approval.tool_call_id,
                approval.status,
                approval.created_at.isoformat(),
                approval.model_dump_json(),
            ),
        )

    async def close_approval(self, approval: Approval) -> bool:
        """Write an answered approval only while it is still pending; True when this write closed it.

        A compare-and-set in the database, so two processes answering at once cannot both win.
        """
        async with self._lock:
            cursor = await self.db.execute(
                "UPDATE approvals SET status = ?, data = ? WHERE id = ? AND status = 'pending'",
                (approval.status, approval.model_dump_json(), approval.id),
            )
        return cursor.rowcount == 1

    async def get_approval(self, approval_id: str) -> Approval:
        rows = await self._fetch_all("SELECT data FROM approvals WHERE id = ?", (approval_id,))
        if not rows:
            raise NotFound(f"no approval {approval_id!r}")
        return Approval.model_validate_json(rows[0][0])

    async def approval_statuses(self, approval_ids: Iterable[str]) -> dict[str, ApprovalStatus]:
        """The current status of each listed approval that exists, in one read."""
        wanted = list(approval_ids)
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = await self._fetch_all(f"SELECT id, status FROM approvals WHERE id IN ({marks})", tuple(wanted))
        return {r[0]: r[1] for r in rows}

    async def data_version(self) -> int:
        """Changes whenever another connection (another process) commits to the file; one cheap read.

        SQLite's `PRAGMA data_version` is per connection and ignores this connection's own commits.
        """
        rows = await self._fetch_all("PRAGMA data_version")
        return int(rows[0][0])

    async def list_approvals(
        self, *, status: ApprovalStatus | None = None, session_id: str | None = None
    ) -> list[Approval]:
        clauses: list[str] = []
        params: list[str] = []
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        if session_id is not None:
            clauses.append("session_id = ?")
            params.append(session_id)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = await self._fetch_all(f"SELECT data FROM approvals {where} ORDER BY created_at, rowid", tuple(params))
        return [Approval.model_validate_json(r[0]) for r in rows]

    async def add_audit(self, entry: AuditEntry) -> AuditEntry:
        return entry.model_copy(update={"id": (await self.record_decision(entry)).row_id})

    def record_decision(
        self, entry: AuditEntry, record: ToolCallRecord | None = None, *, event: Event | None = None
    ) -> Awaitable[Written]:
        writes: list[tuple[str, tuple[Any, ...]]] = [
            (
                "INSERT INTO audit (session_id, created_at, data) VALUES (?, ?, ?)",
                (entry.session_id, entry.created_at.isoformat(), entry.model_dump_json()),
            )
        ]
        if record is not None:
            writes.append((self._UPSERT_CALL, self._call_params(record)))
        return self._unit(writes, event=event)

    async def list_audit(
        self, *, limit: int = 100, offset: int = 0, session_id: str | None = None, query: AuditQuery | None = None
    ) -> list[AuditEntry]:
        query = query or AuditQuery()
        if session_id is not None:
            query = replace(query, session_id=session_id)
        where, params = audit_where(query, SQLITE)
        rows = await self._fetch_all(
            f"SELECT id, data FROM audit {where} ORDER BY id DESC LIMIT ? OFFSET ?", (*params, limit, offset)
        )
        return [AuditEntry.model_validate_json(r[1]).model_copy(update={"id": r[0]}) for r in rows]

    # events

    async def last_seq(self, session_id: str) -> int:
        rows = await self._fetch_all("SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ?", (session_id,))
        return int(rows[0][0])

    def append_event(self, event: Event) -> Awaitable[Event]:
        return then(self._unit(event=event), _stored_event)

    async def list_events(self, session_id: str, *, since: int = 0, limit: int = 10_000) -> list[Event]:
        rows = await self._fetch_all(
            "SELECT data FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?", (session_id, since, limit)
        )
        return [Event.model_validate_json(r[0]) for r in rows]


def _stored_message(written: Written) -> Message:
    assert written.message is not None
    return written.message


def _stored_event(written: Written) -> Event:
    assert written.event is not None
    return written.event
