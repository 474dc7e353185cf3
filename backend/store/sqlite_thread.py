"""One sqlite3 connection owned by one worker thread.

Each call runs a whole unit of work (one statement, or a transaction of several) in a single
hop to the thread. A per-statement async wrapper would pay a hop for every BEGIN, statement and
COMMIT, and that cost dominates a tool call's bookkeeping.

Reads, and writes first, use a second connection on the event loop's own thread, without waiting for
SQLite's write lock (busy_timeout 0): in WAL mode with synchronous=NORMAL a commit does not sync
to disk, so a small write costs tens of microseconds there, where the hop to the worker thread
and back costs more than the write itself (two thread wake-ups per write, on every tool call and
event). When the lock is held (another process writing, or this one's worker), the write goes
to the worker thread as before and waits there, never on the loop.

A write SQLite refuses for want of room or permission raises `StorageUnavailable` (see
`backend.store.faults`), and the transaction it was in is over: SQLite ends it by itself after a
full disk, so a ROLLBACK is sent only while one is still open (one sent after would fail with
"cannot rollback - no transaction is active" and hide why the write failed).

WAL checkpoints do not run inside writes (SQLite's default, which stalls the unlucky write for
milliseconds): a second connection on a second thread checkpoints in the background, which in
WAL mode does not block the writer.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from backend.store.faults import told

T = TypeVar("T")
log = logging.getLogger(__name__)


class SqliteThread:
    """Runs callables against the connection on its own thread, one at a time."""

    def __init__(self, path: Path, *, checkpoint_every: float = 1.0) -> None:
        self.path = path
        self.checkpoint_every = checkpoint_every
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._checkpointer: ThreadPoolExecutor | None = None
        self._checkpoint_conn: sqlite3.Connection | None = None
        self._checkpoint_task: asyncio.Task[None] | None = None
        self._inline: sqlite3.Connection | None = None

    async def open(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="overseer-sqlite")
        self._conn = await self.run(self._connect)
        self._checkpointer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="overseer-sqlite-ckpt")
        loop = asyncio.get_running_loop()
        self._checkpoint_conn = await loop.run_in_executor(self._checkpointer, self._connect)
        self._checkpoint_task = asyncio.create_task(self._checkpoint_loop(), name="sqlite-checkpoint")
        if str(self.path) != ":memory:":  # a second connection to :memory: would be another database
            self._inline = self._connect(busy_timeout_ms=0)

    def _connect(self, busy_timeout_ms: int = 5000) -> sqlite3.Connection:
        # Autocommit: transactions are explicit, so a unit of work decides its own bounds.
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        conn.execute("PRAGMA wal_autocheckpoint=0")
        return conn

    async def _checkpoint_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.checkpoint_every)
            conn = self._checkpoint_conn
            if conn is None or self._checkpointer is None:
                return
            try:
                await loop.run_in_executor(self._checkpointer, conn.execute, "PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error as exc:  # a full disk: the WAL keeps the writes; try again next time
                log.warning("WAL checkpoint of %s failed: %s", self.path, told(exc))

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("store is not open")
        return self._conn

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._executor is None:
            raise RuntimeError("store is not open")
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def transaction_now(self, fn: Callable[[sqlite3.Connection], T]) -> T | Waits:
        """`transaction(fn)` on the loop's thread if the write lock is free at once, else WAITS
        (nothing of `fn` ran): then `transaction` is the way, on the worker thread."""
        if self._inline is None:
            return WAITS
        try:
            return _unit(self._inline, fn)
        except sqlite3.OperationalError as exc:
            # Only a refused BEGIN comes here (fn's own errors roll back and propagate as
            # they are, and SQLite reports busy before anything of the unit ran).
            if not _is_busy(exc) or self._inline.in_transaction:
                raise
        return WAITS

    async def transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn(conn)` inside BEGIN IMMEDIATE ... COMMIT, rolled back if it raises."""
        done = self.transaction_now(fn)
        if not isinstance(done, Waits):
            return done
        return await self.run(lambda: _unit(self.conn, fn))

    def execute_now(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor | Waits:
        """`execute` on the loop's thread if the write lock is free at once, else WAITS."""
        if self._inline is None:
            return WAITS
        try:
            return self._inline.execute(sql, params)
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise told(exc)
        return WAITS

    async def execute(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """One statement in its own transaction (a write): inline when the write lock is free."""
        done = self.execute_now(sql, params)
        if not isinstance(done, Waits):
            return done
        return await self.run(_statement, self.conn, sql, params)

    async def fetch_all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Rows of a query, read on the loop's thread (a WAL reader does not wait for writers)
        unless SQLite reports the database busy, which only the worker may wait out.

        Such a read never yields to the loop: code that reads and then waits must not assume
        another task ran in between (a restarted mode-switch gate answered before its run looked
        was missed that way; the runner now looks for answered gates too)."""
        if self._inline is not None:
            try:
                return self._inline.execute(sql, params).fetchall()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise
        return await self.run(lambda: self.conn.execute(sql, params).fetchall())

    async def close(self) -> None:
        if self._checkpoint_task is not None:
            self._checkpoint_task.cancel()
            await asyncio.gather(self._checkpoint_task, return_exceptions=True)
            self._checkpoint_task = None
        if self._checkpointer is not None:
            if self._checkpoint_conn is not None:
                self._checkpointer.submit(self._checkpoint_conn.close).result()
                self._checkpoint_conn = None
            self._checkpointer.shutdown(wait=True)
            self._checkpointer = None
        if self._inline is not None:
            self._inline.close()
            self._inline = None
        if self._executor is None:
            return
        if self._conn is not None:
            # Fold the WAL back into the database so a closed store is one tidy file.
            # Read to the end: a PRAGMA's unread row keeps its statement open, and a write falling
            # back to this connection meanwhile could not commit ("SQL statements in progress").
            await self.run(lambda: self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
            await self.run(self._conn.close)
            self._conn = None
        self._executor.shutdown(wait=True)
        self._executor = None


class Waits:
    """What a `*_now` call gives when SQLite's write lock is taken: the write has to wait for it."""


WAITS = Waits()


def _unit(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if _is_busy(exc):
            raise  # the caller waits for the lock
        raise told(exc)  # a read-only database refuses the BEGIN itself
    try:
        result = fn(conn)
        conn.execute("COMMIT")
    except BaseException as exc:
        # SQLite has already rolled back after some failures (a full disk): only roll back what is open.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise told(exc)
    return result


def _statement(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
    """One statement in its own transaction, on the worker thread."""
    try:
        return conn.execute(sql, params)
    except sqlite3.Error as exc:
        raise told(exc)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED: another connection holds the lock this one asked for."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)  # extended codes keep the base in the low byte
    return "locked" in str(exc) or "busy" in str(exc)
