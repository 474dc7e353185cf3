"""PostgreSQL implementation of the Store (psycopg 3, async, a connection pool).

Selected by `OVERSEER_DATABASE_URL=postgresql://...`; SQLite stays the embedded default. The
methods' SQL is shared with SQLite (`sql_store` and its mixins); this module is the seam they run
on, and what only Postgres has: advisory locks, row locks and the notices other hosts hear.

Any number of processes may share the database, so, as in SQLite, nothing the database numbers
is cached here: a message's idx and an event's seq are read inside the write transaction, after
taking a per-session advisory lock that serialises the writers of that session across processes
(READ COMMITTED alone would let two transactions read the same MAX and one fail on the key).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, ClassVar

from psycopg import AsyncConnection
from psycopg.errors import LockNotAvailable
from psycopg_pool import AsyncConnectionPool

from backend.domain.checkpoints import WorkspaceBusy
from backend.domain.models import Approval, Event, Message, Session
from backend.store.base import NotFound, SchemaTooNew, SessionDecision, Written, apply_decision, check_schema
from backend.store.postgres_notify import APPROVALS_CHANNEL, EVENTS_CHANNEL, event_notice
from backend.store.postgres_schema import (
    BOOTSTRAP,
    LOCK_CLASS,
    MIGRATION_LOCK,
    MIGRATIONS,
    SCHEMA_VERSION,
    SESSION_LOCK_CLASS,
    WORKSPACE_LOCK_CLASS,
)
from backend.store.sql_seam import Statement
from backend.store.sql_store import SqlStore
from backend.store.statements import POSTGRES_SQL, Statements

__all__ = ["PostgresStore", "SchemaTooNew"]

_BUMP = "UPDATE approval_version SET version = version + 1"
"""Every approval write bumps the one-row `approval_version` in its own transaction: what
`data_version` reads, so another host's approval watch sees the number change no earlier than
the answer itself is visible."""

# The other hosts hear of these writes at their commit (backend/store/postgres_notify.py).
_INSERT_EVENT_AND_NOTIFY = (
    f"WITH written AS ({POSTGRES_SQL.insert_event} RETURNING 1) SELECT pg_notify(%s, %s) FROM written"
)
_BUMP_AND_NOTIFY = f"WITH bumped AS ({_BUMP} RETURNING 1) SELECT pg_notify(%s, %s) FROM bumped"


class PostgresStore(SqlStore):
    """The shared store: one PostgreSQL database for every host that names it."""

    sql: ClassVar[Statements] = POSTGRES_SQL
    approval_written: ClassVar[tuple[Statement, ...]] = ((_BUMP, ()),)

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
            check_schema("the database", version, SCHEMA_VERSION)
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

    # the seam of the shared methods

    async def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """One statement in its own transaction; the number of rows it touched."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(sql, params)  # type: ignore[arg-type]
            return cursor.rowcount

    async def _execute_all(self, statements: list[Statement]) -> list[int]:
        async with self._transaction() as conn:
            cursors = [await conn.execute(sql, params) for sql, params in statements]  # type: ignore[arg-type]
            return [cursor.rowcount for cursor in cursors]

    async def _fetch_all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(sql, params)  # type: ignore[arg-type]
            return await cursor.fetchall()

    async def _unit(
        self,
        statements: list[Statement] | None = None,
        *,
        message: Message | None = None,
        event: Event | None = None,
        second: Event | None = None,
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
                await conn.execute(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (SESSION_LOCK_CLASS, session_id)
                )
            stored_message = stored_event = None
            if message is not None or event is not None:
                # Both numbers in one round trip, after the locks (a statement sees what committed
                # before it began, so the read may not share a statement with taking the lock).
                numbered = (None if x is None else x.session_id for x in (message, event))
                cursor = await conn.execute(self.sql.next_numbers, tuple(numbered))  # type: ignore[arg-type]
                (idx, seq) = await cursor.fetchone()  # type: ignore[misc]
            if message is not None:
                stored_message = message.model_copy(update={"idx": idx})
                await conn.execute(
                    self.sql.insert_message,  # type: ignore[arg-type]
                    (stored_message.session_id, idx, stored_message.model_dump_json()),
                )
            stored_second = None
            if event is not None:
                stored_event = event.model_copy(update={"seq": seq})
                await self._insert_event(conn, stored_event)
                if second is not None:
                    stored_second = second.model_copy(update={"seq": seq + 1})
                    await self._insert_event(conn, stored_second)
            return Written(message=stored_message, event=stored_event, row_id=row_id, second=stored_second)

    @staticmethod
    async def _insert_event(conn: Any, event: Event) -> None:
        row = (event.session_id, event.seq, event.type, event.model_dump_json())
        notice = (EVENTS_CHANNEL, event_notice(event.session_id, event.seq))
        await conn.execute(_INSERT_EVENT_AND_NOTIFY, (*row, *notice))

    # what Postgres does its own way

    async def change_session(self, session_id: str, decide: SessionDecision) -> tuple[Session, Session | None]:
        async with self._transaction() as conn:
            # FOR UPDATE (`lock_session`): another host's change of this row waits for this one's
            # commit, then reads it.
            cursor = await conn.execute(self.sql.lock_session, (session_id,))  # type: ignore[arg-type]
            row = await cursor.fetchone()
            if row is None:
                raise NotFound(f"no session {session_id!r}")
            before = Session.model_validate_json(row[0])
            after = apply_decision(before, decide)
            if after is not None:
                await conn.execute(
                    self.sql.update_session,  # type: ignore[arg-type]
                    (after.status, after.model_dump_json(), session_id),
                )
        return before, after

    async def close_approval(self, approval: Approval) -> bool:
        """Write an answered approval only while it is still pending; True when this write closed it.

        A compare-and-set: under READ COMMITTED a second UPDATE waits for the first's row lock, then
        re-checks `status = 'pending'` against the committed row and matches nothing.
        """
        async with self._transaction() as conn:
            cursor = await conn.execute(
                self.sql.close_approval,  # type: ignore[arg-type]
                (approval.status, approval.model_dump_json(), approval.id),
            )
            if cursor.rowcount != 1:
                return False
            # A host whose run waits on it hears so at this commit.
            await conn.execute(_BUMP_AND_NOTIFY, (APPROVALS_CHANNEL, approval.id))
            return True

    @asynccontextmanager
    async def workspace_lock(self, key: str, *, timeout: float) -> AsyncIterator[None]:
        """A transaction-scoped advisory lock on a connection held for the while (`Store.workspace_lock`).

        Every host of the database waits on it; a host that dies lets go with its connection, and
        `lock_timeout` bounds the wait on the server, so no connection is left waiting behind us.
        """
        async with self._transaction() as conn:
            await conn.execute(f"SET LOCAL lock_timeout = '{max(1, round(timeout * 1000))}ms'")  # type: ignore[arg-type]
            try:
                await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (WORKSPACE_LOCK_CLASS, key))
            except LockNotAvailable:
                raise WorkspaceBusy(f"the workspace's checkpoints stayed locked for {timeout:g} s") from None
            yield

    async def data_version(self) -> int:
        """Changes whenever any process commits an approval write (this one's included: a hint)."""
        rows = await self._fetch_all("SELECT version FROM approval_version")
        return int(rows[0][0])
