"""SQLite (WAL) implementation of the Store: its connection, write lock and transactions.

The methods' SQL is shared with Postgres (`sql_store` and its mixins); this module is the seam
they run on. Every write is one unit of work on the connection's own thread (see `sqlite_thread`).
Several processes may share the file (`overseer serve` and `overseer mcp` on one data dir), so
nothing the database numbers is cached here: a message's idx and an event's seq are read from
the database inside the write transaction, whose BEGIN IMMEDIATE serialises writers across processes.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

from backend.domain.checkpoints import WorkspaceBusy
from backend.domain.models import Approval, Event, Message, Session
from backend.paths import private_dir, private_file
from backend.store.base import NotFound, SchemaTooNew, SessionDecision, Written, apply_decision, check_schema
from backend.store.faults import storage_fault
from backend.store.ready import Done
from backend.store.schema import MIGRATIONS, SCHEMA_VERSION
from backend.store.sql_seam import Statement
from backend.store.sql_store import SqlStore
from backend.store.sqlite_thread import SqliteThread, Waits
from backend.store.statements import SQLITE_SQL, Statements

__all__ = ["SchemaTooNew", "SqliteStore"]

log = logging.getLogger(__name__)


class SqliteStore(SqlStore):
    """The embedded store: `<data dir>/overseer.db`."""

    sql: ClassVar[Statements] = SQLITE_SQL
    _workspace_locks: ClassVar[dict[tuple[str, str], asyncio.Lock]] = {}
    """`workspace_lock`'s locks, by (database file, key): every store of this process on one file
    shares them, as one host's parts do."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._real_path = str(self.path.resolve())  # the workspace locks' key: one per database file
        self.db = SqliteThread(self.path)
        # This process's writes, in order: a write finds it free to go inline (`_unit`).
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        private_dir(self.path.parent)
        if str(self.path) != ":memory:":
            try:
                private_file(self.path)  # SQLite gives its -wal and -shm files the database's mode
            except OSError as exc:
                # An immutable or read-only database still opens, to be read: each write is then
                # refused as StorageUnavailable ("the database is read-only"), not the whole host.
                if storage_fault(exc) is None and exc.errno not in (errno.EPERM, errno.EACCES):
                    raise
                if not self.path.is_file():
                    raise
                log.warning("%s is read-only (%s): it is opened to be read, and every write is refused", self.path, exc)
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
        check_schema(str(self.path), version, SCHEMA_VERSION)
        for step in range(version, SCHEMA_VERSION):
            script = f"BEGIN;\n{MIGRATIONS[step]}\nPRAGMA user_version = {step + 1};\nCOMMIT;"
            await self.db.run(self.db.conn.executescript, script)

    async def schema_version(self) -> int:
        rows = await self.db.fetch_all("PRAGMA user_version")
        return int(rows[0][0])

    # the seam of the shared methods

    async def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        async with self._lock:
            return (await self.db.execute(sql, params)).rowcount

    async def _execute_all(self, statements: list[Statement]) -> list[int]:
        def run(conn: sqlite3.Connection) -> list[int]:
            return [conn.execute(sql, params).rowcount for sql, params in statements]

        async with self._lock:
            return await self.db.transaction(run)

    async def _fetch_all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return await self.db.fetch_all(sql, params)

    def _unit(
        self,
        statements: list[Statement] | None = None,
        *,
        message: Message | None = None,
        event: Event | None = None,
        second: Event | None = None,
    ) -> Awaitable[Written]:
        """Write statements plus an optional message and event as one transaction, in one hop.

        When no write of this store is waiting and SQLite's lock is free, the write is done on
        the spot and a `Done` awaitable comes back (see `backend.store.ready`); otherwise it waits its
        turn, in order.
        """
        writes = statements or []
        sql = self.sql

        def work(conn: sqlite3.Connection) -> Written:
            row_ids = [conn.execute(text, params).lastrowid for text, params in writes]
            stored_message = stored_event = None
            if message is not None or event is not None:
                numbered = (None if x is None else x.session_id for x in (message, event))
                (idx, seq) = conn.execute(sql.next_numbers, tuple(numbered)).fetchone()
            if message is not None:
                stored_message = message.model_copy(update={"idx": idx})
                row = (stored_message.session_id, idx, stored_message.model_dump_json())
                row_ids.append(conn.execute(sql.insert_message, row).lastrowid)
            stored_second = None
            if event is not None:
                stored_event = event.model_copy(update={"seq": seq})
                if second is not None:
                    stored_second = second.model_copy(update={"seq": seq + 1})
                for stored in (stored_event, stored_second):
                    if stored is not None:
                        row = (stored.session_id, stored.seq, stored.type, stored.model_dump_json())
                        row_ids.append(conn.execute(sql.insert_event, row).lastrowid)
            return Written(
                message=stored_message, event=stored_event, row_id=row_ids[0] if row_ids else None, second=stored_second
            )

        single = writes[0] if message is None and event is None and len(writes) == 1 else None
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
        self, single: Statement | None, work: Callable[[sqlite3.Connection], Written]
    ) -> Written:
        async with self._lock:
            if single is not None:
                return Written(row_id=(await self.db.execute(*single)).lastrowid)
            return await self.db.transaction(work)

    # what SQLite does its own way

    async def change_session(self, session_id: str, decide: SessionDecision) -> tuple[Session, Session | None]:
        def change(conn: sqlite3.Connection) -> tuple[Session, Session | None]:
            row = conn.execute(self.sql.lock_session, (session_id,)).fetchone()
            if row is None:
                raise NotFound(f"no session {session_id!r}")
            before = Session.model_validate_json(row[0])
            after = apply_decision(before, decide)
            if after is not None:
                conn.execute(self.sql.update_session, (after.status, after.model_dump_json(), session_id))
            return before, after

        # BEGIN IMMEDIATE takes the write lock before the read: another process's write waits.
        async with self._lock:
            return await self.db.transaction(change)

    async def close_approval(self, approval: Approval) -> bool:
        """Write an answered approval only while it is still pending; True when this write closed it.

        A compare-and-set in the database, so two processes answering at once cannot both win.
        """
        closing = (approval.status, approval.model_dump_json(), approval.id)
        return await self._execute(self.sql.close_approval, closing) == 1

    @asynccontextmanager
    async def workspace_lock(self, key: str, *, timeout: float) -> AsyncIterator[None]:
        """A lock of this process: an embedded store serves one host (see `Store.workspace_lock`)."""
        lock = self._workspace_locks.setdefault((self._real_path, key), asyncio.Lock())
        if lock.locked():  # a free lock is taken at once: no timer to set for it (every step's case)
            try:
                async with asyncio.timeout(timeout):
                    await lock.acquire()
            except TimeoutError:
                raise WorkspaceBusy(f"the workspace's checkpoints stayed locked for {timeout:g} s") from None
        else:
            await lock.acquire()
        try:
            yield
        finally:
            lock.release()

    async def data_version(self) -> int:
        """Changes whenever another connection (another process) commits to the file; one cheap read.

        SQLite's `PRAGMA data_version` is per connection and ignores this connection's own commits.
        """
        rows = await self._fetch_all("PRAGMA data_version")
        return int(rows[0][0])
