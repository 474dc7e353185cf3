"""One sqlite3 connection owned by one worker thread.

Each call runs a whole unit of work (one statement, or a transaction of several) in a single
hop to the thread. A per-statement async wrapper would pay a hop for every BEGIN, statement and
COMMIT, and that cost dominates a tool call's bookkeeping.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class SqliteThread:
    """Runs callables against the connection on its own thread, one at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None

    async def open(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="overseer-sqlite")
        self._conn = await self.run(self._connect)

    def _connect(self) -> sqlite3.Connection:
        # Autocommit: transactions are explicit, so a unit of work decides its own bounds.
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=5000")
        return conn

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("store is not open")
        return self._conn

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._executor is None:
            raise RuntimeError("store is not open")
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn(conn)` inside BEGIN IMMEDIATE ... COMMIT, rolled back if it raises."""

        def unit() -> T:
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

        return await self.run(unit)

    async def execute(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        return await self.run(self.conn.execute, sql, params)

    async def fetch_all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return await self.run(lambda: self.conn.execute(sql, params).fetchall())

    async def close(self) -> None:
        if self._executor is None:
            return
        if self._conn is not None:
            await self.run(self._conn.close)
            self._conn = None
        self._executor.shutdown(wait=True)
        self._executor = None
