"""Postgres LISTEN/NOTIFY between the hosts of one database: what one host tells the others.

Channels (payloads stay small; what they point at is read from the tables):

- `overseer_events`: "<session id> <seq>", sent by the store inside the transaction that writes
  the event, so it is heard exactly when the event is committed and in commit order;
- `overseer_approvals`: an approval's id, sent in the transaction that closes it, so a host
  whose run waits on it looks at once instead of at its next poll;
- `overseer_control`: "<verb> <session id>" (e.g. "stop ..."), sent after the fact by a host
  asked to act on a run that another host executes.

Each host listens on one dedicated connection (`PostgresListener`). Notices sent while it was
disconnected are lost, so after every (re)connection it calls `on_connect`, which catches up
from the tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from psycopg import AsyncConnection, sql

log = logging.getLogger(__name__)

EVENTS_CHANNEL = "overseer_events"
APPROVALS_CHANNEL = "overseer_approvals"
CONTROL_CHANNEL = "overseer_control"
RECONNECT_DELAYS = (0.1, 0.5, 1.0, 2.0, 5.0)
"""Seconds between attempts to listen again after the connection broke (the last one repeats)."""

Handler = Callable[[str], None]


def event_notice(session_id: str, seq: int) -> str:
    return f"{session_id} {seq}"


def parse_event_notice(payload: str) -> tuple[str, int] | None:
    """(session id, seq) of an `overseer_events` payload; None for one this version cannot read."""
    session_id, _, seq = payload.rpartition(" ")
    return (session_id, int(seq)) if session_id and seq.isdigit() else None


async def notify(conn: AsyncConnection[Any], channel: str, payload: str) -> None:
    """Send a notice on `conn` (inside its transaction, if one is open: heard at its commit)."""
    await conn.execute("SELECT pg_notify(%s, %s)", (channel, payload))


class PostgresListener:
    """One connection LISTENing on `handlers`' channels; each notice's payload goes to its handler.

    Handlers run on the event loop and must not block: they queue work for a task of their own.
    """

    def __init__(
        self,
        url: str,
        handlers: dict[str, Handler],
        *,
        on_connect: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.url = url
        self.handlers = handlers
        self.on_connect = on_connect
        self.listening = asyncio.Event()
        """Set while the connection listens; cleared while it reconnects."""
        self._task: asyncio.Task[None] | None = None
        self._conn: AsyncConnection[Any] | None = None

    async def start(self) -> None:
        """Listen, returning once the first connection listens (its error raised, if it fails)."""
        conn = await self._connect()
        self._task = asyncio.create_task(self._run(conn), name="postgres-listener")

    async def _connect(self) -> AsyncConnection[Any]:
        conn = await AsyncConnection.connect(self.url, autocommit=True, connect_timeout=10)
        try:
            for channel in self.handlers:
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        except BaseException:
            await conn.close()
            raise
        self._conn = conn
        self.listening.set()
        if self.on_connect is not None:
            await self.on_connect()
        return conn

    async def _run(self, conn: AsyncConnection[Any]) -> None:
        attempt = 0
        while True:
            try:
                async for notice in conn.notifies():
                    attempt = 0
                    self._dispatch(notice.channel, notice.payload)
            except Exception:
                log.warning("lost the connection listening for other hosts' notices; listening again", exc_info=True)
            self.listening.clear()
            with contextlib.suppress(Exception):
                await conn.close()
            while True:  # until listening again: cancelled by `aclose`
                await asyncio.sleep(RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)])
                attempt += 1
                try:
                    conn = await self._connect()
                    break
                except Exception:
                    log.warning("could not listen for other hosts' notices (attempt %d)", attempt, exc_info=True)

    def _dispatch(self, channel: str, payload: str) -> None:
        handler = self.handlers.get(channel)
        if handler is None:
            return
        try:
            handler(payload)
        except Exception:  # one bad notice must not end the listening
            log.exception("handling a notice on %s failed: %r", channel, payload)

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        self.listening.clear()
