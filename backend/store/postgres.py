"""PostgreSQL implementation of the Store (psycopg 3, async, a connection pool).

Selected by `OVERSEER_DATABASE_URL=postgresql://...`; SQLite stays the embedded default. Any number
of processes may share the database, so, as in SQLite, nothing the database numbers is cached
here: a message's idx and an event's seq are read inside the write transaction, after taking a
per-session advisory lock that serialises the writers of that session across processes (READ
COMMITTED alone would let two transactions read the same MAX and one fail on the key).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from backend.domain.models import Event, Message, Session, ToolCallRecord
from backend.store.base import NotFound, SessionDecision, Written, apply_decision
from backend.store.postgres_approvals import PostgresApprovalStore
from backend.store.postgres_notify import EVENTS_CHANNEL, event_notice
from backend.store.postgres_schedules import PostgresScheduleStore
from backend.store.postgres_schema import (
    BOOTSTRAP,
    LOCK_CLASS,
    MIGRATION_LOCK,
    MIGRATIONS,
    SCHEMA_VERSION,
    SESSION_LOCK_CLASS,
)
from backend.store.postgres_workflows import PostgresWorkflowStore
from backend.store.queries import POSTGRES, session_where

Statement = tuple[str, tuple[Any, ...]]


class SchemaTooNew(RuntimeError):
    """The database was written by a newer Overseer."""


class PostgresStore(PostgresApprovalStore, PostgresScheduleStore, PostgresWorkflowStore):
    """The shared store: one PostgreSQL database for every host that names it."""

    def __init__(self, url: str, *, max_connections: int = 10) -> None:
        self.url = url
        self.max_connections = max_connections
        self._pool: AsyncConnectionPool | None = None

    @property
    def pool(self) -> AsyncConnectionPool:
        if self._pool is None:
            raise RuntimeError("store is not open")
        return self._pool

    async def open(self) -> None:
        # Autocommit: a unit of work opens its own transaction, so a lone read holds no snapshot.
        # UTC: timestamps we compare and return are the models' own (aware, UTC).
        settings: dict[str, Any] = {"autocommit": True, "options": "-c TimeZone=UTC"}
        # Migrate on a connection of its own first: an unreachable server or a bad URL fails the
        # start at once with the server's own words (a pool would retry them for seconds).
        async with await AsyncConnection.connect(self.url, connect_timeout=10, **settings) as conn:
            await self._migrate(conn)
        # A pool per opening: a closed psycopg pool cannot be opened again, and a store can.
        self._pool = AsyncConnectionPool(
            self.url, min_size=1, max_size=self.max_connections, open=False, kwargs=settings
        )
        try:
            await self._pool.open(wait=True, timeout=10)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def __aenter__(self) -> PostgresStore:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _migrate(self, conn: AsyncConnection[Any]) -> None:
        """Apply the missing steps once, however many hosts start at the same moment."""
        async with conn.transaction():
            # The lock first: CREATE TABLE IF NOT EXISTS itself races on the catalog.
            await conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, MIGRATION_LOCK))
            await conn.execute(BOOTSTRAP)
            version = await self._version(conn)
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(f"the database has schema {version}; this Overseer knows up to {SCHEMA_VERSION}")
            for step in range(version, SCHEMA_VERSION):
                await conn.execute(MIGRATIONS[step])  # type: ignore[arg-type]  # our own literal DDL
                await conn.execute("UPDATE overseer_schema SET version = %s", (step + 1,))

    @staticmethod
    async def _version(conn: AsyncConnection[Any]) -> int:
        cursor = await conn.execute("SELECT version FROM overseer_schema")
        row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def schema_version(self) -> int:
        async with self.pool.connection() as conn:
            return await self._version(conn)

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[AsyncConnection[Any]]:
        async with self.pool.connection() as conn, conn.transaction():
            yield conn

    async def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """One statement in its own transaction; the number of rows it touched."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(sql, params)  # type: ignore[arg-type]
            return cursor.rowcount

    async def _fetch_all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(sql, params)  # type: ignore[arg-type]
            return await cursor.fetchall()

    # sessions

    async def create_session(self, session: Session) -> Session:
        await self._execute(
            "INSERT INTO sessions (id, status, parent_id, created_at, data) VALUES (%s, %s, %s, %s, %s)",
            (session.id, session.status, session.parent_id, session.created_at, session.model_dump_json()),
        )
        return session

    async def get_session(self, session_id: str) -> Session:
        rows = await self._fetch_all("SELECT data FROM sessions WHERE id = %s", (session_id,))
        if not rows:
            raise NotFound(f"no session {session_id!r}")
        return Session.model_validate_json(rows[0][0])

    async def save_session(self, session: Session) -> Session:
        changed = await self._execute(
            "UPDATE sessions SET status = %s, data = %s WHERE id = %s",
            (session.status, session.model_dump_json(), session.id),
        )
        if changed == 0:
            raise NotFound(f"no session {session.id!r}")
        return session

    async def change_session(self, session_id: str, decide: SessionDecision) -> tuple[Session, Session | None]:
        async with self._transaction() as conn:
            # FOR UPDATE: another host's change of this row waits for this one's commit, then reads it.
            cursor = await conn.execute("SELECT data FROM sessions WHERE id = %s FOR UPDATE", (session_id,))
            row = await cursor.fetchone()
            if row is None:
                raise NotFound(f"no session {session_id!r}")
            before = Session.model_validate_json(row[0])
            after = apply_decision(before, decide)
            if after is not None:
                await conn.execute(
                    "UPDATE sessions SET status = %s, data = %s WHERE id = %s",
                    (after.status, after.model_dump_json(), session_id),
                )
        return before, after

    async def list_sessions(
        self,
        *,
        statuses: Iterable[str] | None = None,
        limit: int = 200,
        archived: bool | None = None,
        text: str | None = None,
    ) -> list[Session]:
        where, params = session_where(
            POSTGRES, statuses=None if statuses is None else list(statuses), archived=archived, text=text
        )
        rows = await self._fetch_all(
            f"SELECT data FROM sessions {where} ORDER BY created_at DESC, ord DESC LIMIT %s", (*params, limit)
        )
        return [Session.model_validate_json(r[0]) for r in rows]

    async def list_children(self, parent_id: str, *, statuses: Iterable[str] | None = None) -> list[Session]:
        where, params = "parent_id = %s", [parent_id]
        if statuses is not None:
            where += " AND status = ANY(%s)"
            params.append(list(statuses))  # type: ignore[arg-type]
        rows = await self._fetch_all(
            f"SELECT data FROM sessions WHERE {where} ORDER BY created_at, ord", tuple(params)
        )
        return [Session.model_validate_json(r[0]) for r in rows]

    async def delete_session(self, session_id: str) -> None:
        async with self._transaction() as conn:
            for table in ("messages", "tool_calls", "approvals", "events"):
                await conn.execute(f"DELETE FROM {table} WHERE session_id = %s", (session_id,))  # type: ignore[arg-type]
            cursor = await conn.execute("DELETE FROM sessions WHERE id = %s", (session_id,))
            if cursor.rowcount == 0:
                raise NotFound(f"no session {session_id!r}")

    # messages, tool calls and events: numbered inside the write

    async def _unit(
        self, statements: list[Statement] | None = None, *, message: Message | None = None, event: Event | None = None
    ) -> Written:
        """Write statements plus an optional message and event as one transaction.

        The first statement may return an id (`RETURNING`): it becomes `row_id`.
        """
        async with self._transaction() as conn:
            row_id: int | None = None
            for i, (sql, params) in enumerate(statements or []):
                cursor = await conn.execute(sql, params)  # type: ignore[arg-type]
                if i == 0 and cursor.description is not None:
                    row = await cursor.fetchone()
                    row_id = None if row is None else int(row[0])
            # Lock every session numbered here, in one order, so two units never wait on each other.
            # (Two sessions whose ids hash alike share a lock: they only queue, never collide.)
            for session_id in sorted({x.session_id for x in (message, event) if x is not None}):
                await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (SESSION_LOCK_CLASS, session_id))
            stored_message = stored_event = None
            if message is not None or event is not None:
                # Both numbers in one round trip, after the locks (a statement sees what committed
                # before it began, so the read may not share a statement with taking the lock).
                cursor = await conn.execute(
                    "SELECT (SELECT COALESCE(MAX(idx), -1) + 1 FROM messages WHERE session_id = %s),"
                    " (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE session_id = %s)",
                    (None if message is None else message.session_id, None if event is None else event.session_id),
                )
                (idx, seq) = await cursor.fetchone()  # type: ignore[misc]
            if message is not None:
                stored_message = message.model_copy(update={"idx": idx})
                await conn.execute(
                    "INSERT INTO messages (session_id, idx, data) VALUES (%s, %s, %s)",
                    (stored_message.session_id, idx, stored_message.model_dump_json()),
                )
            if event is not None:
                stored_event = event.model_copy(update={"seq": seq})
                # The other hosts hear of it at this commit (backend/store/postgres_notify.py).
                await conn.execute(
                    "WITH written AS (INSERT INTO events (session_id, seq, type, data) VALUES (%s, %s, %s, %s)"
                    " RETURNING 1) SELECT pg_notify(%s, %s) FROM written",
                    (
                        stored_event.session_id,
                        seq,
                        stored_event.type,
                        stored_event.model_dump_json(),
                        EVENTS_CHANNEL,
                        event_notice(stored_event.session_id, seq),
                    ),
                )
            return Written(message=stored_message, event=stored_event, row_id=row_id)

    async def add_message(self, message: Message) -> Message:
        written = await self._unit(message=message)
        assert written.message is not None
        return written.message

    async def list_messages(self, session_id: str) -> list[Message]:
        rows = await self._fetch_all("SELECT data FROM messages WHERE session_id = %s ORDER BY idx", (session_id,))
        return [Message.model_validate_json(r[0]) for r in rows]

    _UPSERT_CALL = (
        "INSERT INTO tool_calls (session_id, id, status, created_at, data) VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (session_id, id) DO UPDATE SET status = excluded.status, data = excluded.data"
    )

    def _call_params(self, record: ToolCallRecord) -> tuple[Any, ...]:
        return (record.session_id, record.id, record.status, record.created_at, record.model_dump_json())

    async def save_tool_call(self, record: ToolCallRecord) -> None:
        await self._execute(self._UPSERT_CALL, self._call_params(record))

    async def finish_tool_call(self, record: ToolCallRecord, result: Message, *, event: Event | None = None) -> Written:
        return await self._unit([(self._UPSERT_CALL, self._call_params(record))], message=result, event=event)

    async def list_tool_calls(self, session_id: str) -> list[ToolCallRecord]:
        rows = await self._fetch_all(
            "SELECT data FROM tool_calls WHERE session_id = %s ORDER BY created_at, ord", (session_id,)
        )
        return [ToolCallRecord.model_validate_json(r[0]) for r in rows]

    async def last_seq(self, session_id: str) -> int:
        rows = await self._fetch_all("SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = %s", (session_id,))
        return int(rows[0][0])

    async def append_event(self, event: Event) -> Event:
        written = await self._unit(event=event)
        assert written.event is not None
        return written.event

    async def list_events(self, session_id: str, *, since: int = 0, limit: int = 10_000) -> list[Event]:
        rows = await self._fetch_all(
            "SELECT data FROM events WHERE session_id = %s AND seq > %s ORDER BY seq LIMIT %s",
            (session_id, since, limit),
        )
        return [Event.model_validate_json(r[0]) for r in rows]
